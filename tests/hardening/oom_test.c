/* dlmap hardening — allocation-failure injection: for every export (views and copies) and every import that
 * copies, fail the Nth allocation for N = 1, 2, … until the call succeeds, through a caller's dlmap_allocator and
 * through the default allocator (aligned_alloc wrapped at link time). Every failure must return the catalogue's
 * out_of_memory (a MemoryError) with nothing leaked, out untouched, the export owner not released (the caller keeps
 * it) and the import producer's deleter run exactly once; every success must release everything exactly once.
 * Also proves that error paths allocate nothing: dlmap's code calls no malloc-family function on any of them. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlmap/dlmap.h"

#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);          \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

/* ---- link-time wraps (-Wl,--wrap=...): every malloc-family call from statically linked code (dlmap included) -- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
int __real_posix_memalign(void **out, size_t alignment, size_t size);

static int g_watch;              /* counting window: around dlmap calls only */
static long g_alloc_calls;       /* malloc-family calls inside the window */
static long g_default_fail_at;   /* 1-based call inside the window that fails (0: none) */
static long g_default_live;      /* blocks from the wrapped aligned_alloc not yet freed */
static int g_error_paths;        /* error paths checked for allocating nothing */

static int should_fail(void) { return g_watch && ++g_alloc_calls == g_default_fail_at; }

void *__wrap_malloc(size_t size) { return should_fail() ? NULL : __real_malloc(size); }
void *__wrap_calloc(size_t n, size_t size) { return should_fail() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t size) { return should_fail() ? NULL : __real_realloc(p, size); }
int __wrap_posix_memalign(void **out, size_t alignment, size_t size) {
  return should_fail() ? 12 /* ENOMEM */ : __real_posix_memalign(out, alignment, size);
}
void *__wrap_aligned_alloc(size_t alignment, size_t size) {
  if (should_fail()) return NULL;
  void *p = __real_aligned_alloc(alignment, size);
  if (p != NULL && g_watch) g_default_live++;
  return p;
}

/* ---- a caller's allocator that fails its Nth allocation ------------------------------------------------------ */

typedef struct injector {
  dlmap_allocator api;
  long attempts, live, fail_at;
} injector;

static void *injector_allocate(void *ctx, size_t size, size_t alignment) {
  injector *in = (injector *)ctx;
  CHECK(alignment != 0 && (alignment & (alignment - 1)) == 0 && size % alignment == 0);
  if (++in->attempts == in->fail_at) return NULL;
  void *p = __real_aligned_alloc(alignment, size);
  if (p != NULL) in->live++;
  return p;
}

static void injector_release(void *ctx, void *pointer) {
  injector *in = (injector *)ctx;
  CHECK(pointer != NULL && in->live > 0);
  in->live--;
  free(pointer);
}

static void injector_init(injector *in, long fail_at) {
  memset(in, 0, sizeof *in);
  in->api.allocate = injector_allocate;
  in->api.release = injector_release;
  in->api.ctx = in;
  in->fail_at = fail_at;
}

/* ---- owners and producers ---------------------------------------------------------------------------------- */

typedef struct owner {
  int releases;
} owner;

static void owner_release(void *p) { ((owner *)p)->releases++; }

static void check_oom(const dlmap_error *err, int32_t status) {
  CHECK(status == DLMAP_ERR_OUT_OF_MEMORY);
  CHECK(err->code == DLMAP_ERR_OUT_OF_MEMORY && err->kind == DLMAP_KIND_MEMORY_ERROR);
  CHECK(strcmp(err->id, "out_of_memory") == 0 && strcmp(dlmap_error_kind_name(err->kind), "MemoryError") == 0);
  CHECK(strstr(err->message, "Out of memory") != NULL);
}

static float g_data[4096] __attribute__((aligned(64)));
static const int64_t kShape23[] = {3, 4}, kStridesT[] = {1, 3}, kStridesNeg[] = {-4, -1}, kShape1[] = {16};
static const int64_t kShape0[] = {0, 5};

typedef struct export_case {
  const char *name;
  int32_t device_type;
  DLDataType dtype;
  int32_t ndim;
  const int64_t *shape, *strides;
  uint64_t byte_offset;
  bool read_only;
  bool has_max_version;
  bool copy_always;
  bool to_cpu;
  bool expect_copy;
} export_case;

#define F32 {DLMAP_DTYPE_FLOAT, 32, 1}
#define I4 {DLMAP_DTYPE_INT, 4, 1}

static const export_case kExportCases[] = {
    {"view, legacy", DLMAP_DEVICE_CPU, F32, 2, kShape23, NULL, 0, false, false, false, false, false},
    {"view, versioned, read-only", DLMAP_DEVICE_CPU, F32, 2, kShape23, kStridesT, 0, true, true, false, false, false},
    {"scalar view", DLMAP_DEVICE_CPU, F32, 0, NULL, NULL, 0, false, true, false, false, false},
    {"copy, compact", DLMAP_DEVICE_CPU, F32, 2, kShape23, NULL, 0, false, true, true, false, true},
    {"copy, transposed", DLMAP_DEVICE_CPU, F32, 2, kShape23, kStridesT, 0, false, true, true, false, true},
    {"copy, negative strides (legacy)", DLMAP_DEVICE_CPU, F32, 2, kShape23, kStridesNeg, 4 * 11, false, false, true,
     false, true},
    {"copy, int4 sub-byte", DLMAP_DEVICE_CPU, I4, 1, kShape1, NULL, 0, false, true, true, false, true},
    {"copy, no elements", DLMAP_DEVICE_CPU, F32, 2, kShape0, NULL, 0, false, true, true, false, true},
    {"pinned to host, view", DLMAP_DEVICE_CUDAHOST, F32, 2, kShape23, NULL, 0, false, true, false, true, false},
    {"pinned to host, copy", DLMAP_DEVICE_CUDAHOST, F32, 2, kShape23, NULL, 0, false, true, true, true, true},
};

static dlmap_array make_array(const export_case *c, owner *o) {
  dlmap_array a = dlmap_array_default();
  a.data = g_data;
  a.device_type = c->device_type;
  a.dtype = c->dtype;
  a.ndim = c->ndim;
  a.shape = c->shape;
  a.strides = c->strides;
  a.byte_offset = c->byte_offset;
  a.read_only = c->read_only;
  a.owner = o;
  a.release = owner_release;
  return a;
}

static dlmap_export_request make_export_request(const export_case *c, const dlmap_allocator *allocator) {
  dlmap_export_request r = dlmap_export_request_default();
  r.has_max_version = c->has_max_version;
  r.max_version = dlmap_version_current();
  r.copy = c->copy_always ? DLMAP_COPY_ALWAYS : DLMAP_COPY_IF_NEEDED;
  r.has_dl_device = c->to_cpu;
  r.dl_device_type = DLMAP_DEVICE_CPU;
  r.allocator = allocator;
  return r;
}

static void release_exported(dlmap_exported *e) {
  if (e->structure == DLMAP_STRUCT_VERSIONED) {
    e->versioned->deleter(e->versioned);
  } else {
    e->legacy->deleter(e->legacy);
  }
}

/* Fails allocation N = 1, 2, … of one export until it succeeds; returns how many failures were injected. */
static long export_until_success(const export_case *c, bool use_default) {
  for (long n = 1;; n++) {
    CHECK(n < 64);
    owner o = {0};
    injector in;
    injector_init(&in, use_default ? 0 : n);
    const dlmap_array array = make_array(c, &o);
    const dlmap_export_request request = make_export_request(c, use_default ? NULL : &in.api);
    dlmap_exported out, before;
    memset(&out, 0x5a, sizeof out);
    memcpy(&before, &out, sizeof out);
    dlmap_error err;
    g_default_fail_at = use_default ? n : 0;
    g_alloc_calls = g_default_live = 0;
    g_watch = 1;
    const int32_t status = dlmap_export(&array, &request, &out, &err);
    g_watch = 0;
    const long calls = use_default ? g_alloc_calls : in.attempts;
    if (status == DLMAP_OK) {
      /* It made n - 1 allocations (all below the failing index): with one per export, n is 2 here. */
      CHECK(calls == n - 1 && out.copied == c->expect_copy);
      CHECK(o.releases == 0);
      release_exported(&out);
      CHECK(o.releases == 1 && in.live == 0);
      return n - 1;
    }
    check_oom(&err, status);
    CHECK(calls == n);                              /* it gave up at the failed allocation */
    CHECK(o.releases == 0);                         /* on error the caller keeps its reference */
    CHECK(in.live == 0 && g_default_live == 0);     /* nothing leaked */
    CHECK(memcmp(&out, &before, sizeof out) == 0);  /* out untouched */
  }
}

/* ---- imports that copy ----------------------------------------------------------------------------------------- */

typedef struct import_case {
  const char *name;
  export_case producer;   /* exported (no copy) by dlmap with a healthy allocator */
  bool legacy_producer;   /* a hand-made DLManagedTensor instead */
  dlmap_import_request request;
  bool expect_copy;
} import_case;

static const import_case kImportCases[] = {
    {"copy=True, versioned", {"", DLMAP_DEVICE_CPU, F32, 2, kShape23, NULL, 0, false, true, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .copy = DLMAP_COPY_ALWAYS}, true},
    {"copy=True, legacy (dlmap export)", {"", DLMAP_DEVICE_CPU, F32, 2, kShape23, kStridesT, 0, false, false, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .copy = DLMAP_COPY_ALWAYS}, true},
    {"copy=True, legacy (hand-made)", {"", DLMAP_DEVICE_CPU, F32, 2, kShape23, kStridesNeg, 44, false, false, false, false, false},
     true, {.struct_size = sizeof(dlmap_import_request), .copy = DLMAP_COPY_ALWAYS}, true},
    {"read-only, writable", {"", DLMAP_DEVICE_CPU, F32, 2, kShape23, NULL, 0, true, true, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .writable = true}, true},
    {"row-major policy on a transpose", {"", DLMAP_DEVICE_CPU, F32, 2, kShape23, kStridesT, 0, false, true, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .layout = DLMAP_LAYOUT_ROW_MAJOR}, true},
    {"alignment 4096 on an offset tensor", {"", DLMAP_DEVICE_CPU, F32, 2, kShape23, NULL, 4, false, true, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .alignment = 4096}, true},
    {"pinned to host, copy", {"", DLMAP_DEVICE_CUDAHOST, F32, 2, kShape23, NULL, 0, false, true, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .has_device = true, .device_type = DLMAP_DEVICE_CPU, .copy = DLMAP_COPY_ALWAYS}, true},
    {"int4, copy", {"", DLMAP_DEVICE_CPU, I4, 1, kShape1, NULL, 0, false, true, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .copy = DLMAP_COPY_ALWAYS}, true},
    {"scalar, copy", {"", DLMAP_DEVICE_CPU, F32, 0, NULL, NULL, 0, false, true, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .copy = DLMAP_COPY_ALWAYS}, true},
    {"view (no allocation)", {"", DLMAP_DEVICE_CPU, F32, 2, kShape23, NULL, 0, false, true, false, false, false},
     false, {.struct_size = sizeof(dlmap_import_request), .copy = DLMAP_COPY_IF_NEEDED}, false},
};

typedef struct hand_made {
  DLManagedTensor managed;
  int64_t shape[2], strides[2];
  int deleter_calls;
} hand_made;

static void hand_made_deleter(DLManagedTensor *self) { ((hand_made *)self->manager_ctx)->deleter_calls++; }

static long import_until_success(const import_case *c, bool use_default) {
  for (long n = 1;; n++) {
    CHECK(n < 64);
    owner o = {0};
    injector producer_alloc, in;
    injector_init(&producer_alloc, 0);
    injector_init(&in, use_default ? 0 : n);
    dlmap_exported exported;
    hand_made hm;
    memset(&hm, 0, sizeof hm);
    dlmap_error err;
    if (c->legacy_producer) {
      hm.managed.dl_tensor.data = g_data;
      hm.managed.dl_tensor.device.device_type = kDLCPU;
      hm.managed.dl_tensor.dtype = c->producer.dtype;
      hm.managed.dl_tensor.ndim = c->producer.ndim;
      memcpy(hm.shape, c->producer.shape, sizeof hm.shape);
      memcpy(hm.strides, c->producer.strides, sizeof hm.strides);
      hm.managed.dl_tensor.shape = hm.shape;
      hm.managed.dl_tensor.strides = hm.strides;
      hm.managed.dl_tensor.byte_offset = c->producer.byte_offset;
      hm.managed.manager_ctx = &hm;
      hm.managed.deleter = hand_made_deleter;
    } else {
      const dlmap_array array = make_array(&c->producer, &o);
      const dlmap_export_request request = make_export_request(&c->producer, &producer_alloc.api);
      CHECK(dlmap_export(&array, &request, &exported, &err) == DLMAP_OK);
    }
    dlmap_import_request request = c->request;
    request.allocator = use_default ? NULL : &in.api;
    dlmap_imported out;
    g_default_fail_at = use_default ? n : 0;
    g_alloc_calls = g_default_live = 0;
    g_watch = 1;
    int32_t status;
    if (c->legacy_producer) {
      status = dlmap_import_legacy(&hm.managed, &request, &out, &err);
    } else if (exported.structure == DLMAP_STRUCT_VERSIONED) {
      status = dlmap_import_versioned(exported.versioned, &request, &out, &err);
    } else {
      status = dlmap_import_legacy(exported.legacy, &request, &out, &err);
    }
    g_watch = 0;
    const long calls = use_default ? g_alloc_calls : in.attempts;
    const int producer_released = c->legacy_producer ? hm.deleter_calls : o.releases;
    if (status == DLMAP_OK) {
      CHECK(out.copied == c->expect_copy);
      CHECK(calls == n - 1 && calls == (c->expect_copy ? 1 : 0)); /* one allocation per copy, none per view */
      CHECK(producer_released == (c->expect_copy ? 1 : 0)); /* a copy releases the producer at once */
      if (c->expect_copy && c->request.alignment > 0) CHECK((uintptr_t)out.tensor.data % c->request.alignment == 0);
      dlmap_imported_release(&out);
      CHECK((c->legacy_producer ? hm.deleter_calls : o.releases) == 1);
      CHECK(in.live == 0 && producer_alloc.live == 0);
      return n - 1;
    }
    if (status != DLMAP_ERR_OUT_OF_MEMORY) fprintf(stderr, "%s: %s\n", c->name, err.message);
    check_oom(&err, status);
    CHECK(calls == n);
    CHECK(producer_released == 1);              /* dlmap owned the tensor: its deleter ran exactly once */
    CHECK(in.live == 0 && g_default_live == 0); /* the failed copy leaked nothing */
    CHECK(producer_alloc.live == 0);            /* and the producer's block went with its deleter */
  }
}

/* ---- error paths allocate nothing ----------------------------------------------------------------------------- */

static void export_error_allocates_nothing(const char *what, dlmap_array array, dlmap_export_request request,
                                           int32_t expected) {
  injector in;
  injector_init(&in, 0);
  request.allocator = &in.api;
  dlmap_exported out;
  dlmap_error err;
  g_alloc_calls = 0;
  g_default_fail_at = 0;
  g_watch = 1;
  const int32_t status = dlmap_export(&array, &request, &out, &err);
  g_watch = 0;
  if (status != expected) fprintf(stderr, "%s: got %d (%s), expected %d\n", what, status, err.message, expected);
  CHECK(status == expected);
  CHECK(g_alloc_calls == 0 && in.attempts == 0);
  g_error_paths++;
}

static void import_error_allocates_nothing(const char *what, export_case producer, uint64_t flags_or_version_hack,
                                           dlmap_import_request request, int32_t expected) {
  owner o = {0};
  injector producer_alloc, in;
  injector_init(&producer_alloc, 0);
  injector_init(&in, 0);
  const dlmap_array array = make_array(&producer, &o);
  const dlmap_export_request er = make_export_request(&producer, &producer_alloc.api);
  dlmap_exported exported;
  dlmap_error err;
  CHECK(dlmap_export(&array, &er, &exported, &err) == DLMAP_OK && exported.structure == DLMAP_STRUCT_VERSIONED);
  if (flags_or_version_hack == 1) exported.versioned->version.major = 7; /* a major dlmap does not speak */
  if (flags_or_version_hack == 2) exported.versioned->dl_tensor.dtype.bits = 7;
  request.allocator = &in.api;
  dlmap_imported out;
  g_alloc_calls = 0;
  g_default_fail_at = 0;
  g_watch = 1;
  const int32_t status = dlmap_import_versioned(exported.versioned, &request, &out, &err);
  g_watch = 0;
  if (status != expected) fprintf(stderr, "%s: got %d (%s), expected %d\n", what, status, err.message, expected);
  CHECK(status == expected);
  CHECK(g_alloc_calls == 0 && in.attempts == 0);
  CHECK(o.releases == 1 && producer_alloc.live == 0); /* released exactly once on the error path */
  g_error_paths++;
}

int main(void) {
  long failures = 0, scenarios = 0;
  for (size_t i = 0; i < sizeof kExportCases / sizeof kExportCases[0]; i++) {
    for (int use_default = 0; use_default < 2; use_default++) {
      const long f = export_until_success(&kExportCases[i], use_default);
      CHECK(f == 1); /* every export makes exactly one allocation, and its failure was handled */
      printf("export %-34s %-18s %ld injected failure(s), then success\n", kExportCases[i].name,
             use_default ? "(default alloc)" : "(caller alloc)", f);
      failures += f;
      scenarios++;
    }
  }
  for (size_t i = 0; i < sizeof kImportCases / sizeof kImportCases[0]; i++) {
    for (int use_default = 0; use_default < 2; use_default++) {
      const long f = import_until_success(&kImportCases[i], use_default);
      CHECK(f == (kImportCases[i].expect_copy ? 1 : 0));
      printf("import %-34s %-18s %ld injected failure(s), then success\n", kImportCases[i].name,
             use_default ? "(default alloc)" : "(caller alloc)", f);
      failures += f;
      scenarios++;
    }
  }

  /* Error paths: no allocator call, no malloc-family call from dlmap's code. */
  owner o = {0};
  const export_case base = {"", DLMAP_DEVICE_CPU, F32, 2, kShape23, NULL, 0, false, true, false, false, false};
  dlmap_array a = make_array(&base, &o);
  dlmap_export_request r = make_export_request(&base, NULL);
  dlmap_array bad = a;
  bad.dtype.bits = 7;
  export_error_allocates_nothing("dtype bits", bad, r, DLMAP_ERR_DTYPE_BITS_INVALID);
  bad = a;
  bad.device_type = 99;
  export_error_allocates_nothing("unknown device", bad, r, DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
  bad = a;
  bad.ndim = -1;
  export_error_allocates_nothing("ndim", bad, r, DLMAP_ERR_NDIM_NEGATIVE);
  bad = a;
  bad.data = NULL;
  export_error_allocates_nothing("data NULL", bad, r, DLMAP_ERR_DATA_NULL);
  dlmap_export_request br = r;
  br.max_version.major = 0;
  br.max_version.minor = 1;
  export_error_allocates_nothing("max_version", a, br, DLMAP_ERR_MAX_VERSION_TOO_OLD);
  br = r;
  br.has_stream = true;
  br.stream = 7;
  export_error_allocates_nothing("stream", a, br, DLMAP_ERR_STREAM_INVALID);
  br = r;
  br.has_dl_device = true;
  br.dl_device_type = DLMAP_DEVICE_CPU;
  br.dl_device_id = -1;
  export_error_allocates_nothing("device id", a, br, DLMAP_ERR_DEVICE_ID_OUT_OF_RANGE);
  bad = a;
  bad.read_only = true;
  br = r;
  br.has_max_version = false;
  export_error_allocates_nothing("read-only legacy", bad, br, DLMAP_ERR_READ_ONLY_NEEDS_VERSIONED);
  CHECK(o.releases == 0);

  const dlmap_import_request never_copy = {.struct_size = sizeof(dlmap_import_request), .copy = DLMAP_COPY_NEVER};
  import_error_allocates_nothing("unknown major", base, 1, never_copy, DLMAP_ERR_VERSION_MAJOR_UNSUPPORTED);
  import_error_allocates_nothing("dtype", base, 2, never_copy, DLMAP_ERR_DTYPE_BITS_INVALID);
  export_case transposed = base;
  transposed.strides = kStridesT;
  dlmap_import_request rm = never_copy;
  rm.layout = DLMAP_LAYOUT_ROW_MAJOR;
  import_error_allocates_nothing("row-major, copy=False", transposed, 0, rm, DLMAP_ERR_STRIDES_NOT_ROW_MAJOR);
  export_case offset = base;
  offset.byte_offset = 4;
  dlmap_import_request al = never_copy;
  al.alignment = 64;
  import_error_allocates_nothing("alignment, copy=False", offset, 0, al, DLMAP_ERR_UNALIGNED_DATA);
  export_case read_only = base;
  read_only.read_only = true;
  dlmap_import_request wr = never_copy;
  wr.writable = true;
  import_error_allocates_nothing("writable, copy=False", read_only, 0, wr, DLMAP_ERR_READ_ONLY_NOT_WRITABLE);
  dlmap_import_request dev = never_copy;
  dev.has_device = true;
  dev.device_type = 99;
  import_error_allocates_nothing("unknown target", base, 0, dev, DLMAP_ERR_IMPORT_UNSUPPORTED_TARGET_DEVICE);

  printf("oom: %ld scenarios, %ld injected allocation failures, each a MemoryError with nothing leaked; "
         "%d error paths with no allocation\n", scenarios, failures, g_error_paths);
  return 0;
}
