/* dlmap hardening — thread stress test (run under ThreadSanitizer by tools/hardening.sh, and plainly in //...):
 * producer threads export tensors, consumer threads import them (views and copies, both ABI flavours) or drop
 * them, releaser threads read and release what was imported, all handing tensors across threads through queues,
 * while other threads run name lookups, error formatting, dlmap_platform_probe and __dlpack_device__. Checks that
 * every owner is released exactly once, every element arrives intact, and nothing leaks (LSan/valgrind). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlmap/dlmap.h"

/* libamdhip64 (the ROCm runtime the probe loads with dlopen) keeps ~400 bytes from hipGetDeviceCount when no AMD
 * GPU is present: the vendor's allocation, not dlmap's (tests/platforms_test.cc suppresses it the same way). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libamdhip64.so\n"; }

#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);          \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

enum { PRODUCERS = 4, CONSUMERS = 4, RELEASERS = 2, BYSTANDERS = 3, QUEUE_CAP = 64 };

/* ---- a bounded blocking queue of pointers --------------------------------------------------------------- */

typedef struct queue {
  pthread_mutex_t mu;
  pthread_cond_t not_empty, not_full;
  void *items[QUEUE_CAP];
  size_t head, count;
  int open_writers;
} queue;

static void queue_init(queue *q, int writers) {
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->not_empty, NULL);
  pthread_cond_init(&q->not_full, NULL);
  q->head = q->count = 0;
  q->open_writers = writers;
}

static void queue_push(queue *q, void *item) {
  pthread_mutex_lock(&q->mu);
  while (q->count == QUEUE_CAP) pthread_cond_wait(&q->not_full, &q->mu);
  q->items[(q->head + q->count++) % QUEUE_CAP] = item;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->mu);
}

/* NULL once every writer has closed and the queue is drained. */
static void *queue_pop(queue *q) {
  pthread_mutex_lock(&q->mu);
  while (q->count == 0 && q->open_writers > 0) pthread_cond_wait(&q->not_empty, &q->mu);
  void *item = NULL;
  if (q->count > 0) {
    item = q->items[q->head];
    q->head = (q->head + 1) % QUEUE_CAP;
    q->count--;
    pthread_cond_signal(&q->not_full);
  }
  pthread_mutex_unlock(&q->mu);
  return item;
}

static void queue_close_writer(queue *q) {
  pthread_mutex_lock(&q->mu);
  q->open_writers--;
  pthread_cond_broadcast(&q->not_empty);
  pthread_mutex_unlock(&q->mu);
}

static void queue_destroy(queue *q) {
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->not_empty);
  pthread_cond_destroy(&q->not_full);
}

/* ---- the framework side: an array whose owner holds the data ------------------------------------------------ */

typedef struct owner {
  atomic_int releases;
  float *data;   /* freed by the release: any later read is a use after free */
  uint32_t seed; /* element i holds seed + i */
} owner;

static owner *g_owners;
static atomic_long g_owner_releases;
static atomic_long g_allocations, g_frees;

static void owner_release(void *p) {
  owner *o = (owner *)p;
  CHECK(atomic_fetch_add(&o->releases, 1) == 0);
  free(o->data);
  o->data = NULL;
  atomic_fetch_add(&g_owner_releases, 1);
}

/* A thread-safe allocator that counts, to prove nothing dlmap allocates outlives the run. */
static void *counting_allocate(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  void *p = aligned_alloc(alignment, size);
  if (p != NULL) atomic_fetch_add(&g_allocations, 1);
  return p;
}

static void counting_release(void *ctx, void *pointer) {
  (void)ctx;
  atomic_fetch_add(&g_frees, 1);
  free(pointer);
}

static const dlmap_allocator kCounting = {counting_allocate, counting_release, NULL};

static uint32_t next_random(uint32_t *state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

/* What travels through the first queue: an exported tensor and what it should hold. */
typedef struct parcel {
  dlmap_exported exported;
  uint32_t seed;
  int64_t rows, cols;
  bool transposed; /* exported as the transpose view of a row-major rows × cols buffer */
} parcel;

/* What travels through the second queue: an imported tensor. */
typedef struct imported_parcel {
  dlmap_imported imported;
  uint32_t seed;
  int64_t rows, cols;
  bool transposed;
} imported_parcel;

static long g_per_producer = 5000; /* tensors per producer thread; argv[1] or DLMAP_STRESS_TENSORS override */
static queue g_exported, g_imported;
static atomic_int g_stop_bystanders;

static void *producer_main(void *arg) {
  const long index = (long)(intptr_t)arg;
  uint32_t rng = (uint32_t)(index * 7919 + 1);
  for (long i = 0; i < g_per_producer; i++) {
    owner *o = &g_owners[index * g_per_producer + i];
    const int64_t rows = 1 + next_random(&rng) % 5, cols = 1 + next_random(&rng) % 7;
    o->seed = next_random(&rng) % 100000;
    o->data = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    for (int64_t e = 0; e < rows * cols; e++) o->data[e] = (float)(o->seed + (uint32_t)e);
    const bool transposed = next_random(&rng) % 3 == 0;
    const int64_t shape[2] = {transposed ? cols : rows, transposed ? rows : cols};
    const int64_t strides[2] = {transposed ? 1 : cols, transposed ? cols : 1};
    dlmap_array array = dlmap_array_default();
    array.data = o->data;
    array.device_type = next_random(&rng) % 4 == 0 ? DLMAP_DEVICE_CUDAHOST : DLMAP_DEVICE_CPU;
    array.dtype.code = DLMAP_DTYPE_FLOAT;
    array.dtype.bits = 32;
    array.dtype.lanes = 1;
    array.ndim = 2;
    array.shape = shape;
    array.strides = strides;
    array.owner = o;
    array.release = owner_release;
    dlmap_export_request request = dlmap_export_request_default();
    const uint32_t r = next_random(&rng);
    request.has_max_version = (r & 1) != 0;
    request.max_version.major = 1;
    request.max_version.minor = r % 4;
    request.copy = (r >> 2) % 3 == 1 ? DLMAP_COPY_ALWAYS : DLMAP_COPY_IF_NEEDED;
    request.allocator = (r >> 4) & 1 ? &kCounting : NULL;
    /* Pinned memory exported to the host (a copy into pinned memory would need the CUDA runtime). */
    if (array.device_type == DLMAP_DEVICE_CUDAHOST && (((r >> 5) & 1) || request.copy == DLMAP_COPY_ALWAYS)) {
      request.has_dl_device = true;
      request.dl_device_type = DLMAP_DEVICE_CPU;
    }
    parcel *p = (parcel *)malloc(sizeof *p);
    dlmap_error err;
    const int32_t status = dlmap_export(&array, &request, &p->exported, &err);
    if (status != DLMAP_OK) {
      fprintf(stderr, "export failed: %s\n", err.message);
      abort();
    }
    p->seed = o->seed;
    p->rows = rows;
    p->cols = cols;
    p->transposed = transposed;
    queue_push(&g_exported, p); /* from here on another thread owns it */
  }
  queue_close_writer(&g_exported);
  return NULL;
}

/* Reads every element through the tensor's strides and checks it against the producer's values. */
static void check_elements(const DLTensor *t, uint32_t seed, int64_t rows, int64_t cols, bool transposed) {
  CHECK(t->ndim == 2 && t->dtype.code == DLMAP_DTYPE_FLOAT && t->dtype.bits == 32);
  CHECK(t->shape[0] == (transposed ? cols : rows) && t->shape[1] == (transposed ? rows : cols));
  const char *base = (const char *)t->data + t->byte_offset;
  for (int64_t i = 0; i < t->shape[0]; i++) {
    for (int64_t j = 0; j < t->shape[1]; j++) {
      float v;
      memcpy(&v, base + (i * t->strides[0] + j * t->strides[1]) * (int64_t)sizeof(float), sizeof v);
      const int64_t r = transposed ? j : i, c = transposed ? i : j; /* position in the row-major source */
      CHECK(v == (float)(seed + (uint32_t)(r * cols + c)));
    }
  }
}

static void *consumer_main(void *arg) {
  uint32_t rng = (uint32_t)(intptr_t)arg * 104729u + 17u;
  parcel *p;
  while ((p = (parcel *)queue_pop(&g_exported)) != NULL) {
    const uint32_t r = next_random(&rng);
    if (r % 8 == 0) { /* the consumer drops it unimported: the deleter on this thread */
      if (p->exported.structure == DLMAP_STRUCT_VERSIONED) {
        p->exported.versioned->deleter(p->exported.versioned);
      } else {
        p->exported.legacy->deleter(p->exported.legacy);
      }
      free(p);
      continue;
    }
    dlmap_import_request request = dlmap_import_request_default();
    request.copy = (r >> 3) % 3 == 0 ? DLMAP_COPY_ALWAYS : DLMAP_COPY_IF_NEEDED;
    request.layout = (r >> 5) % 3 == 0 ? DLMAP_LAYOUT_ROW_MAJOR : DLMAP_LAYOUT_ANY;
    request.writable = (r >> 7) & 1;
    request.allocator = (r >> 8) & 1 ? &kCounting : NULL;
    if ((r >> 9) % 4 == 0) {
      request.has_device = true;
      request.device_type = DLMAP_DEVICE_CPU;
    }
    imported_parcel *ip = (imported_parcel *)malloc(sizeof *ip);
    dlmap_error err;
    int32_t status;
    if (p->exported.structure == DLMAP_STRUCT_VERSIONED) {
      status = dlmap_import_versioned(p->exported.versioned, &request, &ip->imported, &err);
    } else {
      status = dlmap_import_legacy(p->exported.legacy, &request, &ip->imported, &err);
    }
    if (status != DLMAP_OK) {
      fprintf(stderr, "import failed: %s\n", err.message);
      abort();
    }
    ip->seed = p->seed;
    ip->rows = p->rows;
    ip->cols = p->cols;
    ip->transposed = p->transposed;
    free(p);
    queue_push(&g_imported, ip);
  }
  queue_close_writer(&g_imported);
  return NULL;
}

static void *releaser_main(void *arg) {
  (void)arg;
  imported_parcel *ip;
  while ((ip = (imported_parcel *)queue_pop(&g_imported)) != NULL) {
    check_elements(&ip->imported.tensor, ip->seed, ip->rows, ip->cols, ip->transposed);
    dlmap_imported_release(&ip->imported); /* the producer's deleter, or the copy's release, on this thread */
    free(ip);
  }
  return NULL;
}

/* Read-only API in parallel with everything else: lookups, formatting, probes, __dlpack_device__. */
static void *bystander_main(void *arg) {
  uint32_t rng = (uint32_t)(intptr_t)arg * 31u + 5u;
  static const char *const kNames[] = {"kDLCUDA", "cuda", "gpu", "kDLCPU", "cpu", "kDLROCMHost", "nonsense", "kDLGPU"};
  static const char *const kDtypes[] = {"float32", "bf16", "int4", "bool", "complex64", "nope"};
  static const char *const kVersions[] = {"cuda 12.4", "rocm 6.1", "oneapi", "metal", ""};
  long rounds = 0;
  while (!atomic_load(&g_stop_bystanders) || rounds < 50) {
    rounds++;
    const uint32_t r = next_random(&rng);
    const char *name = kNames[r % 8];
    int32_t type;
    if (dlmap_device_type_parse(name, strlen(name), &type)) CHECK(dlmap_device_type_find(type) != NULL);
    dlmap_platform platform;
    (void)dlmap_platform_parse(name, strlen(name), &platform);
    DLDataType dtype;
    const char *dname = kDtypes[(r >> 3) % 6];
    (void)dlmap_dtype_parse(dname, strlen(dname), &dtype);
    dlmap_error err;
    (void)dlmap_platform_lookup_by_version(kVersions[(r >> 6) % 5], &platform, &err);
    const dlmap_error_info *info = dlmap_error_at((r >> 9) % DLMAP_ERROR_COUNT);
    const int64_t dims[3] = {2, -1, 3};
    const dlmap_arg args[] = {dlmap_arg_str(DLMAP_ARG_REASON, "stress"), dlmap_arg_int(DLMAP_ARG_NDIM, (int64_t)r),
                              dlmap_arg_ints(DLMAP_ARG_SHAPE, dims, 3)};
    dlmap_error_set(&err, info->code, args, 3);
    CHECK(err.code == info->code && strlen(err.message) < DLMAP_MESSAGE_CAPACITY);
    char small[8];
    dlmap_error_format(small, sizeof small, info->code, args, 3);
    CHECK(strlen(small) < sizeof small);
    if (rounds % 16 == 0) {
      dlmap_platform_status status;
      dlmap_platform_probe((dlmap_platform)((r >> 12) % (DLMAP_PLATFORM_COUNT + 1)), &status);
      CHECK(status.available || status.reason[0] != '\0');
    }
    dlmap_device_query query = dlmap_device_query_default();
    query.platform = (r >> 16) & 1 ? "cpu" : "gpu";
    query.platform_version = kVersions[(r >> 17) % 5];
    query.num_shards = 1;
    query.has_local_hardware_id = true;
    int32_t device_type, device_id;
    (void)dlmap_dlpack_device(&query, &device_type, &device_id, &err);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) g_per_producer = atol(argv[1]);
  const char *env = getenv("DLMAP_STRESS_TENSORS");
  if (env != NULL && atol(env) > 0) g_per_producer = atol(env);
  const long total = PRODUCERS * g_per_producer;
  g_owners = (owner *)calloc((size_t)total, sizeof *g_owners);
  queue_init(&g_exported, PRODUCERS);
  queue_init(&g_imported, CONSUMERS);

  /* Load the vendor runtimes once on the main thread first: libamdhip64's constructor keeps ~400 bytes per loading
   * thread, which a worker thread's exit would leave unreachable (a vendor leak valgrind reports as definite). The
   * bystanders then probe in parallel with everything else. */
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) {
    dlmap_platform_status status;
    dlmap_platform_probe((dlmap_platform)p, &status);
  }

  pthread_t producers[PRODUCERS], consumers[CONSUMERS], releasers[RELEASERS], bystanders[BYSTANDERS];
  for (long i = 0; i < BYSTANDERS; i++) pthread_create(&bystanders[i], NULL, bystander_main, (void *)(intptr_t)i);
  for (long i = 0; i < RELEASERS; i++) pthread_create(&releasers[i], NULL, releaser_main, (void *)(intptr_t)i);
  for (long i = 0; i < CONSUMERS; i++) pthread_create(&consumers[i], NULL, consumer_main, (void *)(intptr_t)i);
  for (long i = 0; i < PRODUCERS; i++) pthread_create(&producers[i], NULL, producer_main, (void *)(intptr_t)i);
  for (int i = 0; i < PRODUCERS; i++) pthread_join(producers[i], NULL);
  for (int i = 0; i < CONSUMERS; i++) pthread_join(consumers[i], NULL);
  for (int i = 0; i < RELEASERS; i++) pthread_join(releasers[i], NULL);
  atomic_store(&g_stop_bystanders, 1);
  for (int i = 0; i < BYSTANDERS; i++) pthread_join(bystanders[i], NULL);

  /* Every owner released exactly once, every block dlmap allocated through the allocator released. */
  for (long i = 0; i < total; i++) CHECK(atomic_load(&g_owners[i].releases) == 1 && g_owners[i].data == NULL);
  CHECK(atomic_load(&g_owner_releases) == total);
  CHECK(atomic_load(&g_allocations) == atomic_load(&g_frees));
  printf("stress: %ld tensors exported, imported or dropped, and released across %d threads; owner releases %ld; "
         "%ld allocator blocks, all released\n",
         total, PRODUCERS + CONSUMERS + RELEASERS + BYSTANDERS, (long)atomic_load(&g_owner_releases),
         (long)atomic_load(&g_allocations));
  queue_destroy(&g_exported);
  queue_destroy(&g_imported);
  free(g_owners);
  return 0;
}
