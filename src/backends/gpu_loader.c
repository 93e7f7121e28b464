/* dlmap GPU backend — the runtime loader: finds and opens the vendor runtime the spec names (one the process has
 * loaded first, a framework's), resolves its entry points from the generated runtime_*.inc rows, checks its version
 * against the rows that depend on it (pointer layout, stream-ordered allocator, default pools) and records what it
 * answered at load (device count, the allocator serving device copies). No vendor header is included and nothing is
 * linked: one build runs with or without a GPU, a driver or a toolkit. The device operations are gpu.c's. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

/* <>, not "": a build without sandboxing (the hardening run's --config=asan-gcov) puts every header of an external
 * repository on disk, and Bazel's -iquote for @dlmap_config (whose DLPack header every target uses) would find
 * the host's dlmap_config.h before the one this library's config names (//tests/gpu:no_toolkit_dlmap's). */
#include <dlmap_config.h>
#include "src/backends/gpu_runtime.h"

/* ---- the spec's rows ------------------------------------------------------------------------------- */

typedef struct symbol_row {
  dlmap_platform platform;
  int op;
  const char *symbol;
} symbol_row;

static const symbol_row kSymbols[] = {
#define DLMAP_RUNTIME_SYMBOL(PLATFORM, OP, symbol_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .op = DLMAP__GPU_OP_##OP, .symbol = symbol_},
#include "src/generated/runtime_symbols.inc"
#undef DLMAP_RUNTIME_SYMBOL
    {DLMAP_PLATFORM_COUNT, 0, NULL} /* sentinel: a spec may describe no runtime */
};

typedef struct value_row {
  dlmap_platform platform;
  int name;
  int64_t value;
} value_row;

static const value_row kValues[] = {
#define DLMAP_RUNTIME_VALUE(PLATFORM, NAME, value_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .name = DLMAP__GPU_VALUE_##NAME, .value = value_},
#include "src/generated/runtime_values.inc"
#undef DLMAP_RUNTIME_VALUE
    {DLMAP_PLATFORM_COUNT, 0, 0}};

typedef struct stream_row {
  dlmap_platform platform;
  dlmap_stream_meaning meaning;
  int64_t handle;
} stream_row;

static const stream_row kStreams[] = {
#define DLMAP_RUNTIME_STREAM(PLATFORM, MEANING, handle_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .meaning = DLMAP_STREAM_##MEANING, .handle = handle_},
#include "src/generated/runtime_streams.inc"
#undef DLMAP_RUNTIME_STREAM
    {DLMAP_PLATFORM_COUNT, DLMAP_STREAM_INVALID, 0}};

typedef struct memory_type_row {
  dlmap_platform platform;
  int64_t from_version;
  dlmap_memory_kind kind;
  int value;
} memory_type_row;

static const memory_type_row kMemoryTypes[] = {
#define DLMAP_RUNTIME_MEMORY_TYPE(PLATFORM, from_version_, MEMORY, value_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .from_version = from_version_, .kind = DLMAP_MEMORY_##MEMORY, .value = value_},
#include "src/generated/runtime_memory_types.inc"
#undef DLMAP_RUNTIME_MEMORY_TYPE
    {DLMAP_PLATFORM_COUNT, 0, DLMAP_MEMORY_KIND_COUNT, 0}};

/* The driver's context entry points (spec: runtime.context), for the platforms whose runtime names them. */
typedef struct context_row {
  dlmap_platform platform;
  const char *library, *get_current, *set_current, *retain_primary;
} context_row;

static const context_row kContexts[] = {
#define DLMAP_RUNTIME_CONTEXT(PLATFORM, library_, get_current_, set_current_, retain_primary_, ...) \
  {                                                                                                \
      .platform = DLMAP_PLATFORM_##PLATFORM,                                                       \
      .library = library_,                                                                         \
      .get_current = get_current_,                                                                 \
      .set_current = set_current_,                                                                 \
      .retain_primary = retain_primary_,                                                           \
  },
#include "src/generated/runtime_contexts.inc"
#undef DLMAP_RUNTIME_CONTEXT
    {DLMAP_PLATFORM_COUNT, NULL, NULL, NULL, NULL}};

/* The entry point naming the allocation that holds an address (spec: runtime.address_range), where the spec names one. */
typedef struct address_range_row {
  dlmap_platform platform;
  const char *library, *symbol; /* library NULL: the runtime's own */
} address_range_row;

static const address_range_row kAddressRanges[] = {
#define DLMAP_RUNTIME_ADDRESS_RANGE(PLATFORM, library_, symbol_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .library = library_, .symbol = symbol_},
#include "src/generated/runtime_contexts.inc"
#undef DLMAP_RUNTIME_ADDRESS_RANGE
    {DLMAP_PLATFORM_COUNT, NULL, NULL}};

/* The runtime's stream-ordered allocator (spec: runtime.stream_allocator), where the spec names one. */
typedef struct stream_allocator_row {
  dlmap_platform platform;
  const char *malloc_async, *free_async;
  int from_version;  /* the oldest runtime_version that has them */
  int not_supported; /* malloc_async's status on a device without a pool */
} stream_allocator_row;

static const stream_allocator_row kStreamAllocators[] = {
#define DLMAP_RUNTIME_STREAM_ALLOCATOR(PLATFORM, malloc_async_, free_async_, from_version_, not_supported_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .malloc_async = malloc_async_, .free_async = free_async_,                 \
   .from_version = from_version_, .not_supported = not_supported_},
#include "src/generated/runtime_contexts.inc"
#undef DLMAP_RUNTIME_STREAM_ALLOCATOR
    {DLMAP_PLATFORM_COUNT, NULL, NULL, 0, 0}};

static const dlmap__gpu_stream_pools_row kStreamPools[] = {
#define DLMAP_RUNTIME_STREAM_POOLS(PLATFORM, get_default_, malloc_from_pool_, set_access_, from_version_,            \
                                   device_location_, read_write_, ...)                                               \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .get_default = get_default_, .malloc_from_pool = malloc_from_pool_,         \
   .set_access = set_access_, .from_version = from_version_, .device_location = device_location_,                   \
   .read_write = read_write_},
#include "src/generated/runtime_contexts.inc"
#undef DLMAP_RUNTIME_STREAM_POOLS
    {DLMAP_PLATFORM_COUNT, NULL, NULL, NULL, 0, 0, 0}};

static const dlmap__gpu_stream_pool_row kStreamPoolKinds[] = {
#define DLMAP_RUNTIME_STREAM_POOL(PLATFORM, MEMORY, location_, allocation_, grant_devices_, ...)                  \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .memory = DLMAP_MEMORY_##MEMORY, .location = location_,                   \
   .allocation = allocation_, .grant_devices = grant_devices_},
#include "src/generated/runtime_contexts.inc"
#undef DLMAP_RUNTIME_STREAM_POOL
    {DLMAP_PLATFORM_COUNT, DLMAP_MEMORY_KIND_COUNT, 0, 0, false}};

/* Where the build's host detection put each platform's toolkit runtime (spec: runtime.toolkit names the macros of
 * dlmap_config.h): its directory, "" when it found none, and the path of the runtime in it. */
typedef struct toolkit_row {
  dlmap_platform platform;
  const char *libdir, *path;
} toolkit_row;

static const toolkit_row kToolkits[] = {
#define DLMAP_RUNTIME_TOOLKIT(PLATFORM, LIBDIR, SONAME, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .libdir = LIBDIR, .path = LIBDIR "/" SONAME},
#include "src/generated/runtime_contexts.inc"
#undef DLMAP_RUNTIME_TOOLKIT
    {DLMAP_PLATFORM_COUNT, NULL, NULL}};

static const char *const kOpNames[] = {
#define DLMAP_RUNTIME_OP(OP, op, ...) #op,
#include "src/generated/runtime_symbols.inc"
};

const char *dlmap__gpu_runtime_symbol_at(dlmap_platform platform, size_t index, const char **op) {
  for (const symbol_row *row = kSymbols; row->symbol != NULL; row++) {
    if (row->platform != platform) continue;
    if (index-- == 0) {
      if (op != NULL) *op = kOpNames[row->op];
      return row->symbol;
    }
  }
  return NULL;
}

dlmap_memory_kind dlmap__gpu_memory_kind(const dlmap__gpu *gpu, int type) {
  dlmap_memory_kind kind = DLMAP_MEMORY_KIND_COUNT;
  for (const memory_type_row *row = kMemoryTypes; row->platform != DLMAP_PLATFORM_COUNT; row++) {
    if (row->platform == gpu->platform && row->from_version == gpu->layout && row->value == type) kind = row->kind;
  }
  return kind;
}

int32_t dlmap__gpu_default_stream(dlmap_platform platform, dlmap_stream_meaning meaning, void **handle) {
  for (const stream_row *row = kStreams; row->platform != DLMAP_PLATFORM_COUNT; row++) {
    if (row->platform == platform && row->meaning == meaning) {
      *handle = (void *)(intptr_t)row->handle;
      return 1;
    }
  }
  return 0;
}

/* ---- the loaded runtime ---------------------------------------------------------------------------- */

/* A failed load is tried again by a later call (the failure may have been transient, such as an allocation inside
 * dlopen, or a framework may have loaded its runtime since); a loaded runtime is kept for the life of the process. */
typedef struct gpu_slot {
  int loaded; /* read with acquire, written with release once gpu is complete */
  /* A search of the file system found none of the libraries (under g_load_lock): later loads look only among the
   * libraries the process has loaded since (a framework's), and report this first search's reason. Each search costs
   * a few hundred failed opens (milliseconds), which a program exporting to a platform it lacks would pay per call. */
  bool searched_in_vain;
  char not_found[200];
  dlmap__gpu gpu;
} gpu_slot;

static gpu_slot g_slots[DLMAP_PLATFORM_COUNT];

int dlmap__gpu_runtimes_loaded; /* gpu.h: the slots loaded so far */
static pthread_mutex_t g_load_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_op(dlmap__gpu_ops *call, int op, void *address) {
  switch (op) {
#define DLMAP_RUNTIME_OP(OP, op, ...)            \
  case DLMAP__GPU_OP_##OP:                              \
    memcpy(&call->op, &address, sizeof address); \
    break;
#include "src/generated/runtime_symbols.inc"
    default:
      break;
  }
}

static void write2(char *buf, size_t cap, const char *a, const char *b) {
  dlmap__writer w;
  dlmap__writer_init(&w, buf, cap);
  dlmap__put_str(&w, a);
  if (b != NULL) dlmap__put_str(&w, b);
  dlmap__writer_finish(&w);
}

/* The runtime library of the toolkit this build found at configure time (an absolute path), or "" when it found
 * none: one more candidate after the spec's library names, for machines whose ld.so.cache does not list it. The
 * backend itself needs no toolkit: it loads the runtime with dlopen over the spec's symbol table. */
static const char *toolkit_runtime(dlmap_platform platform) {
  for (const toolkit_row *row = kToolkits; row->libdir != NULL; row++) {
    if (row->platform == platform) return row->libdir[0] != '\0' ? row->path : "";
  }
  return "";
}

/* Resolves every symbol of the spec's table in handle; false with the reason when one is missing. */
static bool resolve_symbols(dlmap_platform platform, void *handle, dlmap__gpu *gpu, char *reason, size_t cap) {
  for (const symbol_row *row = kSymbols; row->symbol != NULL; row++) {
    if (row->platform != platform) continue;
    gpu->symbol[row->op] = row->symbol;
    void *address = dlsym(handle, row->symbol);
    if (address == NULL) {
      write2(reason, cap, "the runtime lacks ", row->symbol);
      return false;
    }
    set_op(&gpu->call, row->op, address);
  }
  for (int op = 0; op < DLMAP__GPU_OP_COUNT; op++) {
    if (gpu->symbol[op] == NULL) {
      write2(reason, cap, "the spec's runtime table misses an entry point", NULL);
      return false;
    }
  }
  return true;
}

/* The driver's context entry points, once the runtime started (so the driver library is loaded); true when the
 * spec names none. The library stays loaded, like the runtime. */
static bool resolve_context(dlmap_platform platform, dlmap__gpu *gpu, char *reason, size_t cap) {
  for (const context_row *row = kContexts; row->library != NULL; row++) {
    if (row->platform != platform) continue;
    void *handle = dlopen(row->library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle == NULL) handle = dlopen(row->library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      const char *why = dlerror();
      write2(reason, cap, "cannot load the driver's context entry points: ", why != NULL ? why : row->library);
      return false;
    }
    void *get = dlsym(handle, row->get_current), *set = dlsym(handle, row->set_current);
    void *retain = dlsym(handle, row->retain_primary);
    if (get == NULL || set == NULL || retain == NULL) {
      write2(reason, cap, "the driver lacks ",
             get == NULL ? row->get_current : set == NULL ? row->set_current : row->retain_primary);
      dlclose(handle);
      return false;
    }
    memcpy(&gpu->driver.get_current, &get, sizeof get);
    memcpy(&gpu->driver.set_current, &set, sizeof set);
    memcpy(&gpu->driver.retain_primary, &retain, sizeof retain);
    gpu->context_set_symbol = row->set_current;
    gpu->context_retain_symbol = row->retain_primary;
  }
  return true;
}

/* The address-range entry point, once the runtime started; optional: without it an import's extent is judged by the
 * pointer query at both ends (dlmap__gpu_locate_span). The library stays loaded, like the runtime. */
static void resolve_address_range(dlmap_platform platform, dlmap__gpu *gpu) {
  for (const address_range_row *row = kAddressRanges; row->symbol != NULL; row++) {
    if (row->platform != platform) continue;
    void *handle = gpu->library;
    if (row->library != NULL) {
      handle = dlopen(row->library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (handle == NULL) handle = dlopen(row->library, RTLD_NOW | RTLD_LOCAL);
    }
    void *address = handle != NULL ? dlsym(handle, row->symbol) : NULL;
    if (address != NULL) memcpy(&gpu->driver.address_range, &address, sizeof address);
  }
}

/* The default pools of other memory kinds, where the spec names them, the runtime is at least their release and has
 * the three symbols (the pools' memory goes back by free_async, so only with the stream-ordered pair); the allocator
 * text gains which kinds they serve, or why none. A kind's pool itself is asked for at its first allocation. */
static void resolve_stream_pools(dlmap_platform platform, dlmap__gpu *gpu, dlmap__writer *w) {
  const dlmap__gpu_stream_pools_row *row = kStreamPools;
  while (row->platform != DLMAP_PLATFORM_COUNT && row->platform != platform) row++;
  if (row->platform == DLMAP_PLATFORM_COUNT) return;
  void *ops[] = {dlsym(gpu->library, row->get_default), dlsym(gpu->library, row->malloc_from_pool),
                 dlsym(gpu->library, row->set_access)};
  const char *names[] = {row->get_default, row->malloc_from_pool, row->set_access};
  const char *lacking = NULL;
  for (int i = 0; i < 3; i++) lacking = lacking == NULL && ops[i] == NULL ? names[i] : lacking;
  dlmap__put_str(w, "; ");
  for (const dlmap__gpu_stream_pool_row *kind = kStreamPoolKinds; kind->platform != DLMAP_PLATFORM_COUNT; kind++) {
    if (kind->platform != platform) continue;
    if (gpu->runtime_version >= row->from_version && lacking == NULL) gpu->kind_row[kind->memory] = kind;
    dlmap__put_str(w, dlmap_memory_kind_name(kind->memory));
    dlmap__put_str(w, " ");
  }
  if (gpu->runtime_version < row->from_version || lacking != NULL) {
    dlmap__put_str(w, "memory: their synchronous allocators (");
    dlmap__put_str(w, gpu->runtime_version < row->from_version ? "runtime older than " : "the runtime lacks ");
    if (lacking != NULL) dlmap__put_str(w, lacking);
    if (lacking == NULL) dlmap__put_int(w, row->from_version);
    dlmap__put_str(w, ")");
    return;
  }
  memcpy(&gpu->pools.get_default, &ops[0], sizeof ops[0]);
  memcpy(&gpu->pools.malloc_from_pool, &ops[1], sizeof ops[1]);
  memcpy(&gpu->pools.set_access, &ops[2], sizeof ops[2]);
  gpu->pools_row = row;
  dlmap__put_str(w, "memory: stream-ordered from the default pools, ");
  dlmap__put_str(w, row->get_default);
  dlmap__put_str(w, "/");
  dlmap__put_str(w, row->malloc_from_pool);
  dlmap__put_str(w, " (since ");
  dlmap__put_int(w, row->from_version);
  dlmap__put_str(w, "; a pool the device lacks: the synchronous allocator)");
}

/* The stream-ordered allocator, once the runtime started and its version is known: used where the spec names one, the
 * runtime is at least its release and has both symbols; gpu->allocator says which serves device copies and why. */
static void resolve_stream_allocator(dlmap_platform platform, dlmap__gpu *gpu) {
  const stream_allocator_row *row = kStreamAllocators;
  while (row->platform != DLMAP_PLATFORM_COUNT && row->platform != platform) row++;
  const bool named = row->platform != DLMAP_PLATFORM_COUNT;
  const bool new_enough = named && gpu->runtime_version >= row->from_version;
  void *alloc = named ? dlsym(gpu->library, row->malloc_async) : NULL;
  void *release = named ? dlsym(gpu->library, row->free_async) : NULL;
  dlmap__writer w;
  dlmap__writer_init(&w, gpu->allocator, sizeof gpu->allocator);
  if (new_enough && alloc != NULL && release != NULL) {
    memcpy(&gpu->pool.malloc_async, &alloc, sizeof alloc);
    memcpy(&gpu->pool.free_async, &release, sizeof release);
    gpu->pool_malloc_symbol = row->malloc_async;
    gpu->pool_not_supported = row->not_supported;
    dlmap__put_str(&w, "stream-ordered: ");
    dlmap__put_str(&w, row->malloc_async);
    dlmap__put_str(&w, "/");
    dlmap__put_str(&w, row->free_async);
    dlmap__put_str(&w, " (runtime ");
    dlmap__put_int(&w, gpu->runtime_version);
    dlmap__put_str(&w, "; since ");
    dlmap__put_int(&w, row->from_version);
    dlmap__put_str(&w, ")");
  } else {
    dlmap__put_str(&w, "synchronous: ");
    dlmap__put_str(&w, gpu->symbol[DLMAP__GPU_OP_MALLOC]);
    dlmap__put_str(&w, "/");
    dlmap__put_str(&w, gpu->symbol[DLMAP__GPU_OP_FREE]);
    if (!named) {
      dlmap__put_str(&w, " (the spec names no stream-ordered allocator for ");
      dlmap__put_str(&w, gpu->name);
    } else if (!new_enough) {
      dlmap__put_str(&w, " (runtime ");
      dlmap__put_int(&w, gpu->runtime_version);
      dlmap__put_str(&w, " is older than ");
      dlmap__put_int(&w, row->from_version);
      dlmap__put_str(&w, ", which brought ");
      dlmap__put_str(&w, row->malloc_async);
    } else {
      dlmap__put_str(&w, " (the runtime lacks ");
      dlmap__put_str(&w, alloc == NULL ? row->malloc_async : row->free_async);
    }
    dlmap__put_str(&w, ")");
  }
  if (gpu->pool.free_async != NULL) resolve_stream_pools(platform, gpu, &w);
  dlmap__writer_finish(&w);
}

/* The spec's values, stream handles and the pointer layout of the runtime's version. */
static void read_tables(dlmap_platform platform, dlmap__gpu *gpu) {
  for (const value_row *row = kValues; row->platform != DLMAP_PLATFORM_COUNT; row++) {
    if (row->platform != platform) continue;
    gpu->value[row->name] = row->value;
    gpu->has_value[row->name] = true;
  }
  for (const stream_row *row = kStreams; row->platform != DLMAP_PLATFORM_COUNT; row++) {
    if (row->platform != platform) continue;
    gpu->stream[row->meaning] = row->handle;
    gpu->has_stream[row->meaning] = true;
  }
  /* The newest layout whose from_version the runtime's version reaches (rows are oldest first). */
  int version = 0;
  gpu->runtime_version = -1;
  if (gpu->call.runtime_version(&version) == 0) {
    gpu->runtime_version = version;
    for (const memory_type_row *row = kMemoryTypes; row->platform != DLMAP_PLATFORM_COUNT; row++) {
      if (row->platform == platform && row->from_version <= version) {
        gpu->has_layout = true;
        gpu->layout = row->from_version;
      }
    }
  } else {
    gpu->call.get_last_error();
  }
}

/* Whether the process has loaded a library by this file name (dl_iterate_phdr: no file-system search, unlike
 * dlopen(RTLD_NOLOAD), which opens every directory's candidate to compare it). */
typedef struct loaded_query {
  const char *soname;
  bool found;
} loaded_query;

static int match_loaded(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  loaded_query *query = (loaded_query *)data;
  const char *slash = info->dlpi_name != NULL ? strrchr(info->dlpi_name, '/') : NULL;
  query->found = info->dlpi_name != NULL && strcmp(slash != NULL ? slash + 1 : info->dlpi_name, query->soname) == 0;
  return query->found; /* nonzero ends the walk */
}

static bool loaded_in_process(const char *soname) {
  loaded_query query = {soname, false};
  dl_iterate_phdr(match_loaded, &query);
  return query.found;
}

/* Candidate libraries in the order they are tried: the spec's names already loaded by the process (the
 * framework's own runtime: one runtime instance, and one its driver supports), then each name with dlopen (which
 * depends on ld.so.cache), then the toolkit path found at configure time. */
#define GPU_MAX_CANDIDATES 64

typedef struct candidates {
  const char *names[GPU_MAX_CANDIDATES];
  int modes[GPU_MAX_CANDIDATES], count;
} candidates;

/* The candidates of a load: with search, every name (loaded ones first) and the toolkit path; without (a search already
 * found none), only the names the process has loaded since. */
static void list_candidates(dlmap_platform platform, const dlmap_platform_info *info, bool search, candidates *out) {
  const char *absolute = search ? toolkit_runtime(platform) : "";
  int n = 0;
  for (int pass = 0; pass < (search ? 2 : 1); pass++) {
    for (const char *const *lib = info->libraries; *lib != NULL && n < GPU_MAX_CANDIDATES - 1; lib++) {
      if (!search && !loaded_in_process(*lib)) continue;
      out->names[n] = *lib;
      out->modes[n++] = RTLD_NOW | RTLD_LOCAL | (pass == 0 ? RTLD_NOLOAD : 0);
    }
  }
  const size_t length = strlen(absolute);
  if (length > 1 && absolute[0] == '/' && absolute[length - 1] != '/') {
    out->names[n] = absolute;
    out->modes[n++] = RTLD_NOW | RTLD_LOCAL;
  }
  out->count = n;
}

/* What a load learned from the candidates it tried: the handles (a library under two names is tried once), the first
 * that loaded but could not start (kept as the fallback), the first dlopen failure and the first library that lacked
 * a symbol. */
typedef struct load_attempt {
  void *tried[GPU_MAX_CANDIDATES];
  int tried_count;
  bool have_fallback;
  dlmap__gpu fallback;
  char why[200], lacks[160];
} load_attempt;

/* One opened library: 1 when it started (gpu is complete), -1 when the driver's context entry points failed (reason
 * written), 0 to go on with the next candidate. */
static int try_library(dlmap_platform platform, void *handle, dlmap__gpu *gpu, load_attempt *attempt, char *reason,
                       size_t cap) {
  memset(gpu, 0, sizeof *gpu);
  gpu->platform = platform;
  gpu->name = dlmap__platform_info(platform)->name;
  gpu->library = handle;
  char missing[160];
  if (!resolve_symbols(platform, handle, gpu, missing, sizeof missing)) {
    /* Nothing of it ran, so it can be closed again (a runtime that ran cannot: it registers exit handlers). */
    dlclose(handle);
    if (attempt->lacks[0] == '\0') write2(attempt->lacks, sizeof attempt->lacks, missing, NULL);
    return 0;
  }
  /* Runtimes enumerate devices once, when they start, so the count and its status are asked once: later
   * probes cost nothing and do not create the per-thread state HIP leaks on every thread that calls it. */
  gpu->devices = 0; /* runtimes do not always write the count on error */
  gpu->devices_status = gpu->call.device_count(&gpu->devices);
  if (gpu->devices_status != 0) {
    gpu->call.get_last_error();
    gpu->devices = 0;
  }
  if (gpu->devices_status != 0 || gpu->devices <= 0) {
    if (!attempt->have_fallback) {
      read_tables(platform, gpu);
      attempt->fallback = *gpu;
      attempt->have_fallback = true;
    }
    return 0; /* it stays loaded: it ran */
  }
  if (!resolve_context(platform, gpu, missing, sizeof missing)) {
    write2(reason, cap, missing, NULL);
    return -1;
  }
  resolve_address_range(platform, gpu);
  read_tables(platform, gpu);
  resolve_stream_allocator(platform, gpu);
  return 1;
}

/* Opens a candidate: the handle, or NULL when it does not load or is a library already tried. */
static void *open_candidate(const candidates *list, int i, load_attempt *attempt) {
  void *handle = dlopen(list->names[i], list->modes[i]);
  if (handle == NULL) {
    const char *error = dlerror();
    if (attempt->why[0] == '\0' && !(list->modes[i] & RTLD_NOLOAD)) {
      write2(attempt->why, sizeof attempt->why, "cannot load the runtime: ", error != NULL ? error : list->names[i]);
    }
    return NULL;
  }
  for (int j = 0; j < attempt->tried_count; j++) {
    if (attempt->tried[j] == handle) { /* another name of a library already tried: drop the extra reference */
      dlclose(handle);
      return NULL;
    }
  }
  attempt->tried[attempt->tried_count++] = handle;
  return handle;
}

/* Fills gpu (under g_load_lock) from the first candidate that loads, has every symbol and starts: its device count
 * succeeds with at least one device. A runtime that loads but cannot start (a CUDA 13 runtime on an older driver
 * returns 35; no device: 100) gives way to the next candidate, so a framework's older libcudart still serves; when
 * none starts, the first that loaded is kept, not started, and the probe reports its vendor's reason. False (with
 * the reason) when no candidate loads. */
static bool load_runtime(dlmap_platform platform, dlmap__gpu *gpu, char *reason, size_t cap, bool search,
                         bool *none_found) {
  candidates list;
  list_candidates(platform, dlmap__platform_info(platform), search, &list);
  load_attempt attempt;
  attempt.tried_count = 0;
  attempt.have_fallback = false;
  attempt.why[0] = attempt.lacks[0] = '\0';
  for (int i = 0; i < list.count; i++) {
    void *handle = open_candidate(&list, i, &attempt);
    if (handle == NULL) continue;
    const int started = try_library(platform, handle, gpu, &attempt, reason, cap);
    if (started != 0) return started > 0;
  }
  if (attempt.have_fallback) {
    *gpu = attempt.fallback;
    return true;
  }
  *none_found = attempt.tried_count == 0;
  /* A library that loaded but lacks an entry point says more than one that is not installed. */
  write2(reason, cap,
         attempt.lacks[0] != '\0' ? attempt.lacks
         : attempt.why[0] != '\0' ? attempt.why
                                   : "cannot load the runtime: no library to try",
         NULL);
  return false;
}

const dlmap__gpu *dlmap__gpu_load(dlmap_platform platform, bool *built, char *reason, size_t cap) {
  const dlmap_platform_info *info = dlmap__platform_info(platform);
  /* Every platform whose spec entry describes a runtime is built: nothing of the vendor's is needed to build. */
  const bool has_support = info != NULL && info->backend == DLMAP_BACKEND_GPU && info->device_count_symbol != NULL;
  if (built != NULL) *built = has_support;
  if (!has_support) {
    write2(reason, cap,
           info == NULL                          ? "not a platform of this build's spec"
           : info->backend != DLMAP_BACKEND_GPU ? "no dlmap backend serves this platform"
                                                 : "the spec describes no runtime for this platform",
           NULL);
    return NULL;
  }
  gpu_slot *slot = &g_slots[platform];
  if (!__atomic_load_n(&slot->loaded, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&g_load_lock);
    bool none_found = false;
    if (__atomic_load_n(&slot->loaded, __ATOMIC_RELAXED)) {
      /* another thread loaded it meanwhile */
    } else if (load_runtime(platform, &slot->gpu, reason, cap, !slot->searched_in_vain, &none_found)) {
      __atomic_store_n(&slot->loaded, 1, __ATOMIC_RELEASE);
      __atomic_add_fetch(&dlmap__gpu_runtimes_loaded, 1, __ATOMIC_RELEASE);
    } else if (none_found && slot->searched_in_vain) {
      write2(reason, cap, slot->not_found, NULL);
    } else if (none_found) {
      slot->searched_in_vain = true;
      write2(slot->not_found, sizeof slot->not_found, reason, NULL);
    }
    pthread_mutex_unlock(&g_load_lock);
    if (!__atomic_load_n(&slot->loaded, __ATOMIC_ACQUIRE)) return NULL;
  }
  if (cap > 0) reason[0] = '\0';
  return &slot->gpu;
}

const dlmap__gpu *dlmap__gpu_loaded(dlmap_platform platform) {
  if ((unsigned)platform >= (unsigned)DLMAP_PLATFORM_COUNT) return NULL;
  return __atomic_load_n(&g_slots[platform].loaded, __ATOMIC_ACQUIRE) ? &g_slots[platform].gpu : NULL;
}

/* ---- what the load found ------------------------------------------------------------------------- */

int dlmap__gpu_device_count(const dlmap__gpu *gpu, int *count) {
  *count = gpu->devices;
  return gpu->devices_status;
}

bool dlmap__gpu_started(const dlmap__gpu *gpu) { return gpu->devices_status == 0 && gpu->devices > 0; }

void dlmap__gpu_probe(dlmap_platform platform, dlmap_platform_status *out) {
  memset(out, 0, sizeof *out);
  /* The runtime is loaded once (library, every symbol of the spec's table, the device count). */
  const dlmap__gpu *gpu = dlmap__gpu_load(platform, &out->built, out->reason, sizeof out->reason);
  if (gpu == NULL) return;
  if (gpu->devices_status != 0) {
    dlmap__writer w;
    dlmap__writer_init(&w, out->reason, sizeof out->reason);
    dlmap__put_str(&w, dlmap__gpu_error_text(gpu, gpu->devices_status));
    dlmap__put_str(&w, " (");
    dlmap__put_str(&w, gpu->symbol[DLMAP__GPU_OP_DEVICE_COUNT]);
    dlmap__put_str(&w, " returned ");
    dlmap__put_int(&w, gpu->devices_status);
    dlmap__put_str(&w, ")");
    dlmap__writer_finish(&w);
    return;
  }
  if (gpu->devices <= 0) {
    write2(out->reason, sizeof out->reason, "the runtime reports no devices", NULL);
    return;
  }
  out->available = true;
  out->device_count = gpu->devices;
}

const char *dlmap__gpu_allocator(const dlmap__gpu *gpu) { return gpu->allocator; }
