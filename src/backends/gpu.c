/* dlmap GPU backend — CUDA and HIP through one implementation: the spec's runtime table (generated
 * runtime_*.inc rows: vendor symbols, enum values, stream handles, pointer-attribute layouts) says which
 * entry points to dlsym and which values to pass, so no vendor header is included and nothing is linked:
 * one build runs with or without a GPU, a driver or a toolkit. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dlmap_config.h"
#include "src/backends/gpu.h"
#include "src/backends/gpu_kernels.h"
#include "src/host_copy.h"
#include "src/memory.h"

/* ---- the spec's rows ------------------------------------------------------------------------------- */

/* The ops of the spec's symbol table, each with the C signature it is called with (codegen/spec.py
 * RUNTIME_SIGNATURES, generated as runtime_symbols.inc's DLMAP_RUNTIME_OP rows). Each returns the runtime's error
 * enum (0: success) unless its return type says otherwise. */
enum {
#define DLMAP_RUNTIME_OP(OP, ...) GPU_OP_##OP,
#include "src/generated/runtime_symbols.inc"
  GPU_OP_COUNT
};

/* Values of the runtime (spec: memcpy_kinds, flags, statuses, pointer_attributes offsets), named as the generator lists
 * them (runtime_values.inc's DLMAP_RUNTIME_VALUE_NAME rows). */
enum {
#define DLMAP_RUNTIME_VALUE_NAME(NAME, ...) GPU_VALUE_##NAME,
#include "src/generated/runtime_values.inc"
  GPU_VALUE_COUNT
};

typedef struct symbol_row {
  dlmap_platform platform;
  int op;
  const char *symbol;
} symbol_row;

static const symbol_row kSymbols[] = {
#define DLMAP_RUNTIME_SYMBOL(PLATFORM, OP, symbol_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .op = GPU_OP_##OP, .symbol = symbol_},
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
  {.platform = DLMAP_PLATFORM_##PLATFORM, .name = GPU_VALUE_##NAME, .value = value_},
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

/* The runtime's default pools of the memory kinds other than device memory (spec: runtime.stream_allocator.pools), and
 * each kind's pool: the location and allocation types it is asked for by, and whether it is mapped for every device. */
typedef struct stream_pools_row {
  dlmap_platform platform;
  const char *get_default, *malloc_from_pool, *set_access;
  int from_version;    /* the oldest runtime_version that has the three */
  int device_location; /* a device's location type, in set_access's descriptors */
  int read_write;      /* the access flags that map a pool for a device */
} stream_pools_row;

static const stream_pools_row kStreamPools[] = {
#define DLMAP_RUNTIME_STREAM_POOLS(PLATFORM, get_default_, malloc_from_pool_, set_access_, from_version_,            \
                                   device_location_, read_write_, ...)                                               \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .get_default = get_default_, .malloc_from_pool = malloc_from_pool_,         \
   .set_access = set_access_, .from_version = from_version_, .device_location = device_location_,                   \
   .read_write = read_write_},
#include "src/generated/runtime_contexts.inc"
#undef DLMAP_RUNTIME_STREAM_POOLS
    {DLMAP_PLATFORM_COUNT, NULL, NULL, NULL, 0, 0, 0}};

typedef struct stream_pool_row {
  dlmap_platform platform;
  dlmap_memory_kind memory;
  int location, allocation;
  bool grant_devices;
} stream_pool_row;

static const stream_pool_row kStreamPoolKinds[] = {
#define DLMAP_RUNTIME_STREAM_POOL(PLATFORM, MEMORY, location_, allocation_, grant_devices_, ...)                  \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .memory = DLMAP_MEMORY_##MEMORY, .location = location_,                   \
   .allocation = allocation_, .grant_devices = grant_devices_},
#include "src/generated/runtime_contexts.inc"
#undef DLMAP_RUNTIME_STREAM_POOL
    {DLMAP_PLATFORM_COUNT, DLMAP_MEMORY_KIND_COUNT, 0, 0, false}};

/* A memory location and an access descriptor as the runtime lays them out (spec: the signatures' comments). */
typedef struct pool_location {
  int type, id;
} pool_location;
typedef struct pool_access {
  pool_location location;
  int flags;
} pool_access;

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

/* Bytes given to pointer_attributes (codegen/spec.py POINTER_ATTRIBUTES_BYTES bounds every offset). */
#define GPU_ATTRIBUTES_BYTES 256

/* ---- the loaded runtime ---------------------------------------------------------------------------- */

typedef struct gpu_ops {
#define DLMAP_RUNTIME_OP(OP, op, R, ARGS, ...) R(*op) ARGS;
#include "src/generated/runtime_symbols.inc"
} gpu_ops;

/* The driver's entry points beside the runtime's (codegen/spec.py RUNTIME_CONTEXT_SIGNATURES and
 * RUNTIME_ADDRESS_RANGE_SIGNATURE). */
typedef struct driver_ops {
#define DLMAP_DRIVER_OP(OP, op, R, ARGS, ...) R(*op) ARGS;
#include "src/generated/runtime_contexts.inc"
} driver_ops;

/* The stream-ordered allocator's entry points (codegen/spec.py STREAM_ALLOCATOR_SIGNATURES). */
typedef struct stream_allocator_ops {
#define DLMAP_STREAM_ALLOCATOR_OP(OP, op, R, ARGS, ...) R(*op) ARGS;
#include "src/generated/runtime_contexts.inc"
} stream_allocator_ops;

/* The default pools' entry points (codegen/spec.py STREAM_POOL_SIGNATURES). */
typedef struct stream_pool_ops {
#define DLMAP_STREAM_POOL_OP(OP, op, R, ARGS, ...) R(*op) ARGS;
#include "src/generated/runtime_contexts.inc"
} stream_pool_ops;

struct dlmap__gpu {
  dlmap_platform platform;
  const char *name;
  void *library; /* the runtime's dlopen handle (the kernels' module API where the spec names no other library) */
  gpu_ops call;
  const char *symbol[GPU_OP_COUNT];
  int64_t value[GPU_VALUE_COUNT];
  bool has_value[GPU_VALUE_COUNT];
  bool has_stream[DLMAP_STREAM_INVALID + 1];
  int64_t stream[DLMAP_STREAM_INVALID + 1];
  int devices, devices_status; /* device_count's answer when the runtime was loaded */
  bool has_layout;      /* a pointer-attributes layout applies to this runtime version */
  int64_t layout;       /* its from_version */
  /* The driver's per-thread context (spec: runtime.context; NULL where the spec names none) and the allocation holding
   * an address (spec: runtime.address_range; NULL where it names none or the library lacks it). */
  driver_ops driver;
  const char *context_set_symbol, *context_retain_symbol; /* for messages */
  int runtime_version;  /* runtime_version's answer; -1 where it failed */
  /* The stream-ordered pair where this runtime has it (NULL: device memory comes from malloc and goes back to free),
   * and which allocator serves device copies and why (dlmap_platform_allocator). */
  stream_allocator_ops pool;
  const char *pool_malloc_symbol; /* for messages */
  int pool_not_supported; /* malloc_async's status on a device without a pool */
  /* The default pools of other memory kinds where this runtime has them (NULL ops: none): each kind's row, and its
   * pool once asked for at its first allocation (pool_state, read with acquire: 0 not yet, 1 kind_pool serves, -1 the
   * kind's synchronous allocator does; written once under g_pool_lock). */
  stream_pool_ops pools;
  const stream_pools_row *pools_row;
  const stream_pool_row *kind_row[DLMAP_MEMORY_KIND_COUNT];
  int pool_state[DLMAP_MEMORY_KIND_COUNT];
  void *kind_pool[DLMAP_MEMORY_KIND_COUNT];
  char allocator[400];
};

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
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER; /* a kind's default pool, asked for once */

static void set_op(gpu_ops *call, int op, void *address) {
  switch (op) {
#define DLMAP_RUNTIME_OP(OP, op, ...)            \
  case GPU_OP_##OP:                              \
    memcpy(&call->op, &address, sizeof address); \
    break;
#include "src/generated/runtime_symbols.inc"
    default:
      break;
  }
}

static void write3(char *buf, size_t cap, const char *a, const char *b, const char *c) {
  dlmap__writer w;
  dlmap__writer_init(&w, buf, cap);
  dlmap__put_str(&w, a);
  if (b != NULL) dlmap__put_str(&w, b);
  if (c != NULL) dlmap__put_str(&w, c);
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
      write3(reason, cap, "the runtime lacks ", row->symbol, NULL);
      return false;
    }
    set_op(&gpu->call, row->op, address);
  }
  for (int op = 0; op < GPU_OP_COUNT; op++) {
    if (gpu->symbol[op] == NULL) {
      write3(reason, cap, "the spec's runtime table misses an entry point", NULL, NULL);
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
      write3(reason, cap, "cannot load the driver's context entry points: ", why != NULL ? why : row->library, NULL);
      return false;
    }
    void *get = dlsym(handle, row->get_current), *set = dlsym(handle, row->set_current);
    void *retain = dlsym(handle, row->retain_primary);
    if (get == NULL || set == NULL || retain == NULL) {
      write3(reason, cap, "the driver lacks ",
             get == NULL ? row->get_current : set == NULL ? row->set_current : row->retain_primary, NULL);
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
  const stream_pools_row *row = kStreamPools;
  while (row->platform != DLMAP_PLATFORM_COUNT && row->platform != platform) row++;
  if (row->platform == DLMAP_PLATFORM_COUNT) return;
  void *ops[] = {dlsym(gpu->library, row->get_default), dlsym(gpu->library, row->malloc_from_pool),
                 dlsym(gpu->library, row->set_access)};
  const char *names[] = {row->get_default, row->malloc_from_pool, row->set_access};
  const char *lacking = NULL;
  for (int i = 0; i < 3; i++) lacking = lacking == NULL && ops[i] == NULL ? names[i] : lacking;
  dlmap__put_str(w, "; ");
  for (const stream_pool_row *kind = kStreamPoolKinds; kind->platform != DLMAP_PLATFORM_COUNT; kind++) {
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
    dlmap__put_str(&w, gpu->symbol[GPU_OP_MALLOC]);
    dlmap__put_str(&w, "/");
    dlmap__put_str(&w, gpu->symbol[GPU_OP_FREE]);
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
    if (attempt->lacks[0] == '\0') write3(attempt->lacks, sizeof attempt->lacks, missing, NULL, NULL);
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
    write3(reason, cap, missing, NULL, NULL);
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
      write3(attempt->why, sizeof attempt->why, "cannot load the runtime: ", error != NULL ? error : list->names[i],
             NULL);
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
  write3(reason, cap,
         attempt.lacks[0] != '\0' ? attempt.lacks
         : attempt.why[0] != '\0' ? attempt.why
                                   : "cannot load the runtime: no library to try",
         NULL, NULL);
  return false;
}

const dlmap__gpu *dlmap__gpu_load(dlmap_platform platform, bool *built, char *reason, size_t cap) {
  const dlmap_platform_info *info = dlmap__platform_info(platform);
  /* Every platform whose spec entry describes a runtime is built: nothing of the vendor's is needed to build. */
  const bool has_support = info != NULL && info->backend == DLMAP_BACKEND_GPU && info->device_count_symbol != NULL;
  if (built != NULL) *built = has_support;
  if (!has_support) {
    write3(reason, cap,
           info == NULL                          ? "not a platform of this build's spec"
           : info->backend != DLMAP_BACKEND_GPU ? "no dlmap backend serves this platform"
                                                 : "the spec describes no runtime for this platform",
           NULL, NULL);
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
      write3(reason, cap, slot->not_found, NULL, NULL);
    } else if (none_found) {
      slot->searched_in_vain = true;
      write3(slot->not_found, sizeof slot->not_found, reason, NULL, NULL);
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

int dlmap__gpu_device_count(const dlmap__gpu *gpu, int *count) {
  *count = gpu->devices;
  return gpu->devices_status;
}

const char *dlmap__gpu_error_text(const dlmap__gpu *gpu, int status) {
  const char *text = gpu->call.error_string(status);
  return text != NULL ? text : "unknown error";
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
    dlmap__put_str(&w, gpu->symbol[GPU_OP_DEVICE_COUNT]);
    dlmap__put_str(&w, " returned ");
    dlmap__put_int(&w, gpu->devices_status);
    dlmap__put_str(&w, ")");
    dlmap__writer_finish(&w);
    return;
  }
  if (gpu->devices <= 0) {
    write3(out->reason, sizeof out->reason, "the runtime reports no devices", NULL, NULL);
    return;
  }
  out->available = true;
  out->device_count = gpu->devices;
}

/* ---- errors ---------------------------------------------------------------------------------------- */

/* The reason of this thread's last backend_call_failed from a runtime or driver call, for callers that report the
 * failure in their own terms (runtime_copy_failed). */
static _Thread_local char t_last_failure[200];

const char *dlmap__gpu_last_failure(void) { return t_last_failure; }

/* backend_call_failed: "{platform} runtime call {call} failed: {vendor text} (error N)". Clears the
 * runtime's last error so the framework's next check does not see dlmap's failure. Only after a failed runtime call:
 * the runtime keeps one last error per thread and each failure overwrites it, so the one read here is dlmap's own
 * (an earlier, unread one of the framework's was already gone); sticky errors stay whatever is read. */
static int32_t named_call_failed(const dlmap__gpu *gpu, const char *symbol, int status, dlmap_error *err) {
  char *reason = t_last_failure;
  dlmap__writer w;
  dlmap__writer_init(&w, reason, sizeof t_last_failure);
  dlmap__put_str(&w, dlmap__gpu_error_text(gpu, status));
  dlmap__put_str(&w, " (error ");
  dlmap__put_int(&w, status);
  dlmap__put_str(&w, ")");
  dlmap__writer_finish(&w);
  gpu->call.get_last_error();
  return dlmap_raise_backend_call_failed(err, gpu->name, symbol, reason);
}

static int32_t call_failed(const dlmap__gpu *gpu, int op, int status, dlmap_error *err) {
  return named_call_failed(gpu, gpu->symbol[op], status, err);
}

/* backend_call_failed for one of the driver's context entry points: the runtime's text does not describe the
 * driver's error enum, so only the number is given; the runtime's last error is not involved. */
static int32_t driver_failed(const dlmap__gpu *gpu, const char *symbol, int status, dlmap_error *err) {
  char *reason = t_last_failure;
  dlmap__writer w;
  dlmap__writer_init(&w, reason, sizeof t_last_failure);
  dlmap__put_str(&w, "driver error ");
  dlmap__put_int(&w, status);
  dlmap__writer_finish(&w);
  return dlmap_raise_backend_call_failed(err, gpu->name, symbol, reason);
}

int32_t dlmap__gpu_acquire(const dlmap_device_info *device, const dlmap__gpu **out, dlmap_error *err) {
  dlmap_platform_status status;
  dlmap__gpu_probe(device->platform, &status);
  const dlmap__gpu *gpu = status.available ? dlmap__gpu_loaded(device->platform) : NULL;
  if (gpu == NULL) {
    return dlmap_raise_platform_unavailable(err, device->name, device->value,
                                            dlmap__platform_info(device->platform)->name,
                                            status.available ? "the runtime is not loaded" : status.reason);
  }
  *out = gpu;
  return DLMAP_OK;
}

int32_t dlmap__gpu_check_device(const dlmap__gpu *gpu, int32_t device_id, dlmap_error *err) {
  int count;
  dlmap__gpu_device_count(gpu, &count);
  if (device_id >= 0 && device_id < count) return DLMAP_OK;
  return dlmap_raise_device_id_out_of_range(err, device_id, gpu->name, count);
}

/* ---- the current device ---------------------------------------------------------------------------- */

/* The calling thread's device state while dlmap works on it, to give back. Where the spec names the driver's context
 * entry points, set_device is never called: it would set the runtime's per-thread device (which a thread without a
 * context would keep after dlmap unset the context) and restoring it would initialise a context on the old device
 * (CUDA 12: hundreds of MB on a GPU the caller may never use). Devices are switched by making their primary context
 * current through the driver instead, and the thread gets back exactly the context it had: none, a primary one, or a
 * non-primary one. Without those entry points (HIP), set_device switches and set_device(saved) restores. */
typedef struct device_scope {
  int saved;          /* the thread's device on entry */
  int current;        /* the device current now */
  bool driver;        /* switching through the driver's contexts */
  void *context;      /* driver: the thread's context on entry (NULL: none) */
} device_scope;

/* Makes `device` (when ≥ 0) current within the scope. */
static int32_t switch_device(const dlmap__gpu *gpu, device_scope *scope, int32_t device, dlmap_error *err) {
  if (device < 0 || device == scope->current) return DLMAP_OK;
  if (scope->driver) {
    void *primary = NULL;
    int status = gpu->driver.retain_primary(&primary, device);
    if (status != 0) return driver_failed(gpu, gpu->context_retain_symbol, status, err);
    status = gpu->driver.set_current(primary);
    if (status != 0) return driver_failed(gpu, gpu->context_set_symbol, status, err);
  } else {
    const int status = gpu->call.set_device(device);
    if (status != 0) return call_failed(gpu, GPU_OP_SET_DEVICE, status, err);
  }
  scope->current = device;
  return DLMAP_OK;
}

/* Remembers the thread's device state, then makes `device` (when ≥ 0) current. On error nothing is changed. */
static int32_t enter_device(const dlmap__gpu *gpu, int32_t device, device_scope *scope, dlmap_error *err) {
  scope->context = NULL;
  /* A failed query leaves the runtime's way (set_device), as before the driver's entry points were used. */
  scope->driver = gpu->driver.get_current != NULL && gpu->driver.get_current(&scope->context) == 0;
  const int status = gpu->call.get_device(&scope->saved);
  if (status != 0) return call_failed(gpu, GPU_OP_GET_DEVICE, status, err);
  scope->current = scope->saved;
  return switch_device(gpu, scope, device, err);
}

/* Gives the thread its device state back: its own context (a thread that had none gets none, even where dlmap's
 * runtime calls made one current without a switch), or its device. */
static void leave_device(const dlmap__gpu *gpu, const device_scope *scope) {
  if (scope->driver) {
    if (scope->context == NULL || scope->current != scope->saved) gpu->driver.set_current(scope->context);
  } else if (scope->current != scope->saved) {
    gpu->call.set_device(scope->saved);
  }
}

/* ---- pointers and memory --------------------------------------------------------------------------- */

static int read_int(const unsigned char *bytes, int64_t offset) {
  int value;
  memcpy(&value, bytes + offset, sizeof value);
  return value;
}

/* dlmap__gpu_locate with the thread's current device. */
static int32_t locate_here(const dlmap__gpu *gpu, const void *pointer, dlmap__gpu_pointer *out, dlmap_error *err) {
  unsigned char attributes[GPU_ATTRIBUTES_BYTES];
  memset(attributes, 0, sizeof attributes);
  out->kind = DLMAP_MEMORY_HOST;
  out->device = -1;
  out->device_pointer = NULL;
  const int status = gpu->call.pointer_attributes(attributes, pointer);
  if (status != 0) {
    /* InvalidValue is the runtime's "not my memory" (HIP 5 and CUDA before 11 answer so for plain host memory).
     * Anything else (a sticky 700 or 719, 3 after fork, 4 at shutdown) says nothing about the pointer: calling
     * it host memory would let a host copy read device memory. */
    if (gpu->has_value[GPU_VALUE_STATUS_INVALID_VALUE] && status == gpu->value[GPU_VALUE_STATUS_INVALID_VALUE]) {
      gpu->call.get_last_error();
      return DLMAP_OK;
    }
    return call_failed(gpu, GPU_OP_POINTER_ATTRIBUTES, status, err);
  }
  if (!gpu->has_layout) {
    return dlmap_raise_backend_call_failed(err, gpu->name, gpu->symbol[GPU_OP_POINTER_ATTRIBUTES],
                                           "the spec lists no pointer-attributes layout for this " "runtime version");
  }
  const int type = read_int(attributes, 0);
  out->kind = DLMAP_MEMORY_KIND_COUNT;
  for (const memory_type_row *row = kMemoryTypes; row->platform != DLMAP_PLATFORM_COUNT; row++) {
    if (row->platform == gpu->platform && row->from_version == gpu->layout && row->value == type) out->kind = row->kind;
  }
  if (gpu->has_value[GPU_VALUE_MANAGED_OFFSET] && read_int(attributes, gpu->value[GPU_VALUE_MANAGED_OFFSET]) != 0) {
    out->kind = DLMAP_MEMORY_MANAGED;
  }
  out->device = read_int(attributes, gpu->value[GPU_VALUE_DEVICE_OFFSET]);
  memcpy(&out->device_pointer, attributes + gpu->value[GPU_VALUE_DEVICE_POINTER_OFFSET], sizeof out->device_pointer);
  return DLMAP_OK;
}

int32_t dlmap__gpu_locate(const dlmap__gpu *gpu, const void *pointer, int32_t device, dlmap__gpu_pointer *out,
                          dlmap_error *err) {
  if (device < 0) return locate_here(gpu, pointer, out, err);
  device_scope scope;
  int32_t result = enter_device(gpu, device, &scope, err);
  if (result != DLMAP_OK) return result;
  result = locate_here(gpu, pointer, out, err);
  leave_device(gpu, &scope);
  return result;
}

/* The smallest page a host maps: the unit in which memory is host or device memory. */
#define GPU_HOST_PAGE_BYTES 4096

/* Whether the runtime's allocation holding lo also holds hi (*known false where the runtime names none for lo). */
static bool same_allocation(const dlmap__gpu *gpu, const void *lo, const void *hi, bool *known) {
  void *base = NULL;
  size_t bytes = 0;
  *known = gpu->driver.address_range != NULL && gpu->driver.address_range(&base, &bytes, lo) == 0 && base != NULL;
  return *known && (uintptr_t)hi >= (uintptr_t)base && (uintptr_t)hi - (uintptr_t)base < bytes;
}

/* dlmap__gpu_locate_span inside its device scope. */
static int32_t locate_span_here(const dlmap__gpu *gpu, const void *lo, const void *hi, dlmap__gpu_span *out,
                                dlmap_error *err) {
  int32_t result = locate_here(gpu, lo, &out->lo, err);
  out->hi = out->lo;
  out->one_allocation = true;
  if (result != DLMAP_OK || lo == hi) return result;
  /* Memory the runtime allocated: its own word on the allocation's end, where it has one. */
  if (out->lo.kind != DLMAP_MEMORY_HOST) {
    bool known;
    out->one_allocation = same_allocation(gpu, lo, hi, &known);
    if (known) return DLMAP_OK;
  }
  /* Plain host memory that ends in the page where it starts cannot reach device memory: a page is mapped whole, and
   * no page smaller than GPU_HOST_PAGE_BYTES exists. */
  if (out->lo.kind == DLMAP_MEMORY_HOST && (uintptr_t)lo / GPU_HOST_PAGE_BYTES == (uintptr_t)hi / GPU_HOST_PAGE_BYTES) {
    return DLMAP_OK;
  }
  /* Else both ends by the pointer query: the same memory kind, and for device-placed memory the same device. */
  result = locate_here(gpu, hi, &out->hi, err);
  const bool placed = out->lo.kind == DLMAP_MEMORY_DEVICE || out->lo.kind == DLMAP_MEMORY_MANAGED;
  out->one_allocation = out->hi.kind == out->lo.kind && (!placed || out->hi.device == out->lo.device);
  return result;
}

int32_t dlmap__gpu_locate_span(const dlmap__gpu *gpu, const void *lo, const void *hi, int32_t device,
                               dlmap__gpu_span *out, dlmap_error *err) {
  device_scope scope;
  int32_t result = enter_device(gpu, device, &scope, err);
  if (result != DLMAP_OK) return result;
  result = locate_span_here(gpu, lo, hi, out, err);
  leave_device(gpu, &scope);
  return result;
}

/* Maps a host pool for every device (the host allocator's memory is portable): set_access, a few devices a call. */
static int grant_devices(const dlmap__gpu *gpu, void *pool) {
  pool_access access[8];
  int status = 0;
  for (int first = 0; status == 0 && first < gpu->devices; first += 8) {
    const int count = gpu->devices - first < 8 ? gpu->devices - first : 8;
    for (int i = 0; i < count; i++) access[i] = (pool_access){{gpu->pools_row->device_location, first + i},
                                                              gpu->pools_row->read_write};
    status = gpu->pools.set_access(pool, access, (size_t)count);
  }
  return status;
}

/* The default pool serving `kind` (NULL: none; the kind's synchronous allocator serves it). Asked for once per
 * process, at the kind's first allocation rather than at load (a host pool is mapped for every device then): a pool
 * the runtime refuses, or cannot map, leaves the kind to its synchronous allocator for good. */
static void *kind_pool(const dlmap__gpu *gpu, dlmap_memory_kind kind) {
  const stream_pool_row *row = gpu->kind_row[kind];
  if (row == NULL) return NULL;
  int state = __atomic_load_n(&gpu->pool_state[kind], __ATOMIC_ACQUIRE);
  if (state == 0) {
    dlmap__gpu *slot = (dlmap__gpu *)gpu; /* g_slots' own object, written once here under g_pool_lock */
    pthread_mutex_lock(&g_pool_lock);
    state = slot->pool_state[kind];
    if (state == 0) {
      const pool_location where = {row->location, 0};
      void *pool = NULL;
      int status = gpu->pools.get_default(&pool, &where, row->allocation);
      if (status == 0 && row->grant_devices) status = grant_devices(gpu, pool);
      if (status != 0) gpu->call.get_last_error();
      slot->kind_pool[kind] = pool;
      state = status == 0 && pool != NULL ? 1 : -1;
      __atomic_store_n(&slot->pool_state[kind], state, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_pool_lock);
  }
  return state == 1 ? gpu->kind_pool[kind] : NULL;
}

/* Memory of want->kind from a stream-ordered pool on `stream`: 0, or the pool's status; *call names the entry point.
 * *fallback says the synchronous allocator serves it instead: no pool for the kind, or a device without one
 * (not_supported). */
static int pool_allocate(const dlmap__gpu *gpu, const dlmap__gpu_buffer *want, void *stream, void **pointer,
                         const char **call, bool *fallback) {
  *fallback = true;
  if (stream == DLMAP__GPU_NO_STREAM || gpu->pool.malloc_async == NULL) return 0;
  int status;
  if (want->kind == DLMAP_MEMORY_DEVICE) {
    *call = gpu->pool_malloc_symbol;
    status = gpu->pool.malloc_async(pointer, want->bytes, stream);
  } else {
    void *pool = kind_pool(gpu, want->kind);
    if (pool == NULL) return 0;
    *call = gpu->pools_row->malloc_from_pool;
    status = gpu->pools.malloc_from_pool(pointer, want->bytes, pool, stream);
  }
  *fallback = status == gpu->pool_not_supported;
  if (*fallback) gpu->call.get_last_error();
  return status;
}

bool dlmap__gpu_pooled(const dlmap__gpu *gpu, dlmap_memory_kind kind) {
  if (gpu->pool.malloc_async == NULL) return false;
  return kind == DLMAP_MEMORY_DEVICE || (kind < DLMAP_MEMORY_KIND_COUNT && kind_pool(gpu, kind) != NULL);
}

int32_t dlmap__gpu_allocate(const dlmap__gpu *gpu, const dlmap__gpu_buffer *want, void *stream,
                            const dlmap_device_allocator *framework, dlmap__gpu_buffer *out, dlmap_error *err) {
  *out = *want;
  if (out->bytes == 0) out->bytes = 1;
  out->memory = NULL;
  out->source = DLMAP__GPU_SYNCHRONOUS;
  /* On the memory's device: default-stream handles and the runtime's pools are the current device's, for the
   * framework's allocator as for the runtime's. */
  device_scope scope;
  int32_t result = enter_device(gpu, want->device, &scope, err);
  if (result != DLMAP_OK) return result;
  if (want->kind == DLMAP_MEMORY_DEVICE && framework != NULL) {
    out->source = DLMAP__GPU_FRAMEWORK;
    out->framework = *framework;
    out->memory = framework->allocate(framework->ctx, out->bytes, want->device_type, want->device, stream);
    leave_device(gpu, &scope);
    return out->memory != NULL ? DLMAP_OK : dlmap_raise_out_of_memory(err, out->bytes, "a device copy");
  }
  const char *call = NULL;
  bool fallback;
  int status = pool_allocate(gpu, out, stream, &out->memory, &call, &fallback);
  if (!fallback && status == 0) out->source = DLMAP__GPU_POOL;
  if (!fallback) {
    /* pooled, or the pool's own failure (out of memory) is the answer */
  } else if (want->kind == DLMAP_MEMORY_HOST_PINNED) {
    call = gpu->symbol[GPU_OP_MALLOC_HOST];
    status = gpu->call.malloc_host(&out->memory, out->bytes, (unsigned)gpu->value[GPU_VALUE_FLAG_MALLOC_HOST]);
  } else if (want->kind == DLMAP_MEMORY_MANAGED) {
    call = gpu->symbol[GPU_OP_MALLOC_MANAGED];
    status = gpu->call.malloc_managed(&out->memory, out->bytes, (unsigned)gpu->value[GPU_VALUE_FLAG_MALLOC_MANAGED]);
  } else {
    call = gpu->symbol[GPU_OP_MALLOC];
    status = gpu->call.malloc(&out->memory, out->bytes);
  }
  result = status != 0 ? named_call_failed(gpu, call, status, err) : DLMAP_OK;
  leave_device(gpu, &scope);
  return result;
}

void dlmap__gpu_release(const dlmap__gpu *gpu, const dlmap__gpu_buffer *buffer, void *stream) {
  if (gpu == NULL || buffer->memory == NULL) return;
  /* On the memory's device: a deleter may run on a thread without a context, where the free would create one, and a
   * default-stream handle names the current device's stream. */
  device_scope scope;
  /* A failed runtime call in enter_device cleared its own last error (call_failed); a failed driver call set none, so
   * nothing here may clear the runtime's last error: it may be the framework's, not yet read. */
  const bool entered = enter_device(gpu, buffer->device, &scope, NULL) == DLMAP_OK;
  if (buffer->source == DLMAP__GPU_FRAMEWORK) {
    const dlmap_device_allocator *framework = &buffer->framework;
    framework->release(framework->ctx, buffer->memory, buffer->bytes, buffer->device_type, buffer->device, stream);
    if (entered) leave_device(gpu, &scope);
    return;
  }
  int status = -1;
  if (buffer->source == DLMAP__GPU_POOL && stream != DLMAP__GPU_NO_STREAM) {
    /* Freed once the stream reaches this point: after all work its holder queued there, without a wait. */
    status = gpu->pool.free_async(buffer->memory, stream);
    if (status != 0) gpu->call.get_last_error(); /* e.g. the stream is gone: the synchronous free is still right */
  }
  if (status != 0) {
    /* pool memory of every kind goes back by the runtime's free; the host allocator's by the host free */
    const bool host_free = buffer->kind == DLMAP_MEMORY_HOST_PINNED && buffer->source != DLMAP__GPU_POOL;
    status = host_free ? gpu->call.free_host(buffer->memory) : gpu->call.free(buffer->memory);
    if (status != 0) gpu->call.get_last_error();
  }
  if (entered) leave_device(gpu, &scope);
}

const char *dlmap__gpu_allocator(const dlmap__gpu *gpu) { return gpu->allocator; }

int32_t dlmap__gpu_default_stream(dlmap_platform platform, dlmap_stream_meaning meaning, void **handle) {
  for (const stream_row *row = kStreams; row->platform != DLMAP_PLATFORM_COUNT; row++) {
    if (row->platform == platform && row->meaning == meaning) {
      *handle = (void *)(intptr_t)row->handle;
      return 1;
    }
  }
  return 0;
}

/* ---- copies ---------------------------------------------------------------------------------------- */

static bool host_memory(dlmap_memory_kind kind) { return kind == DLMAP_MEMORY_HOST || kind == DLMAP_MEMORY_HOST_PINNED; }

/* The memcpy kind for a copy between two ends: explicit directions for host and device memory, the
 * runtime's inferred kind (unified addressing) for managed memory, unknown memory and other devices. */
static int memcpy_kind(const dlmap__gpu *gpu, const dlmap__gpu_end *dst, const dlmap__gpu_end *src) {
  const bool dst_device = dst->kind == DLMAP_MEMORY_DEVICE, src_device = src->kind == DLMAP_MEMORY_DEVICE;
  int64_t kind = gpu->value[GPU_VALUE_MEMCPY_DEFAULT];
  if (host_memory(src->kind) && dst_device) kind = gpu->value[GPU_VALUE_MEMCPY_HOST_TO_DEVICE];
  if (src_device && host_memory(dst->kind)) kind = gpu->value[GPU_VALUE_MEMCPY_DEVICE_TO_HOST];
  if (src_device && dst_device && src->device == dst->device) kind = gpu->value[GPU_VALUE_MEMCPY_DEVICE_TO_DEVICE];
  return (int)kind;
}

/* 2-D copies issued for one tensor at most where one end is host memory; beyond, the staged path's one pass over the
 * host is cheaper. Between GPU memories: any number up to GPU_MAX_2D_COPIES_ON_DEVICE, as long as each copies at least
 * GPU_MIN_2D_ROWS rows (many copies of a few rows each cost more in calls than the round trip through the host). */
#define GPU_MAX_2D_COPIES 64
#define GPU_MAX_2D_COPIES_ON_DEVICE INT64_C(1048576)
#define GPU_MIN_2D_ROWS 32
/* The largest pitch the runtimes accept for 2-D copies (cudaDevAttrMaxPitch on current GPUs). */
#define GPU_MAX_PITCH INT64_C(2147483647)

/* Through host memory: read the source's whole extent onto the host (or in place when the host can read
 * it), compact it there, and write it to dst. Waits for the stream: temporary buffers end here. */
static int32_t staged_copy(const dlmap__gpu *gpu, const dlmap__gpu_end *dst, const dlmap__gpu_end *src,
                           const dlmap__copy_layout *layout, void *stream, dlmap_error *err) {
  const int64_t lo = layout->lo_bytes;
  const size_t extent = (size_t)(layout->hi_bytes - lo), compact = (size_t)layout->bytes;
  int status = gpu->call.stream_synchronize(stream); /* the source is complete, and host reads see it */
  if (status != 0) return call_failed(gpu, GPU_OP_STREAM_SYNCHRONIZE, status, err);
  const bool src_host = dlmap_memory_kind_host_accessible(src->kind) && src->kind != DLMAP_MEMORY_KIND_COUNT;
  const bool dst_host = dlmap_memory_kind_host_accessible(dst->kind) && dst->kind != DLMAP_MEMORY_KIND_COUNT;
  char *staged = NULL, *packed = NULL;
  const char *first = (const char *)src->data;
  int32_t result = DLMAP_OK;
  size_t wanted = extent;
  if (!src_host) {
    staged = (char *)malloc(extent);
    if (staged == NULL) goto out_of_memory;
    const dlmap__gpu_end host = {staged, DLMAP_MEMORY_HOST, src->device, DLMAP_DEVICE_CPU, NULL};
    status = gpu->call.memcpy_async(staged, first + lo, extent, memcpy_kind(gpu, &host, src), stream);
    if (status == 0) status = gpu->call.stream_synchronize(stream);
    if (status != 0) {
      result = call_failed(gpu, GPU_OP_MEMCPY_ASYNC, status, err);
      goto done;
    }
    first = staged - lo;
  }
  if (dst_host) {
    dlmap__copy_to_compact(dst->data, first, layout);
    goto done;
  }
  wanted = compact;
  packed = (char *)malloc(compact);
  if (packed == NULL) goto out_of_memory;
  dlmap__copy_to_compact(packed, first, layout);
  {
    const dlmap__gpu_end host = {packed, DLMAP_MEMORY_HOST, dst->device, DLMAP_DEVICE_CPU, NULL};
    status = gpu->call.memcpy_async(dst->data, packed, compact, memcpy_kind(gpu, dst, &host), stream);
    if (status == 0) status = gpu->call.stream_synchronize(stream);
    if (status != 0) result = call_failed(gpu, GPU_OP_MEMCPY_ASYNC, status, err);
  }
  goto done;
out_of_memory: {
  result = dlmap_raise_out_of_memory(err, wanted, "staging a strided GPU copy");
}
done:
  free(staged);
  free(packed);
  return result;
}

/* The byte value every one of the element's bytes holds, or -1 when they differ. */
static int repeated_byte(const void *element, size_t bytes) {
  const unsigned char *b = (const unsigned char *)element;
  for (size_t i = 1; i < bytes; i++) {
    if (b[i] != b[0]) return -1;
  }
  return b[0];
}

/* Memory a kernel on `device` reads and writes directly: device memory of that device, or managed memory. */
static bool kernel_reachable(const dlmap__gpu_end *end, int32_t device) {
  return end->kind == DLMAP_MEMORY_MANAGED || (end->kind == DLMAP_MEMORY_DEVICE && end->device == device);
}

/* What identifies the current device's kernel images: the driver's current context where the spec names the context
 * entry points, else the device. False when there is none (no context for the module API to load into). */
static bool kernel_key(const dlmap__gpu *gpu, void **key) {
  *key = NULL;
  if (gpu->driver.get_current != NULL) return gpu->driver.get_current(key) == 0 && *key != NULL;
  int device;
  if (gpu->call.get_device(&device) != 0) {
    gpu->call.get_last_error();
    return false;
  }
  *key = (void *)(intptr_t)(device + 1);
  return true;
}

/* Launches a planned copy on the current device; false (nothing enqueued) when no kernel can run: the platform's
 * kernel status then says why. */
static bool launch_kernel(const dlmap__gpu *gpu, const dlmap__kernel_plan *plan, void *stream) {
  void *key;
  char why[200];
  if (!kernel_key(gpu, &key)) return false;
  if (dlmap__kernels_launch(gpu->platform, gpu->library, key, plan, stream, why, sizeof why) == 0) return true;
  /* dlmap's failure, not the framework's: a module API inside the runtime left it as the runtime's last error. */
  if (dlmap__kernels_in_runtime(gpu->platform)) gpu->call.get_last_error();
  return false;
}

bool dlmap__gpu_kernels_load(dlmap_platform platform, int32_t device_id) {
  dlmap_platform_status status;
  dlmap__gpu_probe(platform, &status);
  const dlmap__gpu *gpu = status.available ? dlmap__gpu_loaded(platform) : NULL;
  device_scope scope;
  if (gpu == NULL || device_id < 0 || device_id >= gpu->devices || enter_device(gpu, device_id, &scope, NULL) != DLMAP_OK) {
    return false;
  }
  /* A thread that never used the device has no context yet: its primary one, as the runtime would make current
   * (leave_device gives the thread none back). */
  void *key, *primary = NULL;
  if (!kernel_key(gpu, &key) && gpu->driver.retain_primary != NULL &&
      gpu->driver.retain_primary(&primary, device_id) == 0) {
    gpu->driver.set_current(primary);
  }
  const bool usable = kernel_key(gpu, &key) && dlmap__kernels_prepare(platform, gpu->library, key);
  leave_device(gpu, &scope);
  return usable;
}

/* The copy through the strided-copy kernels, where both ends are memory of the current device (one launch), or the
 * source is and the destination host memory (a launch into a compact device buffer, then one device-to-host copy:
 * the transfer then runs at the link's speed whatever the layout; this waits for the stream, as the staged path
 * does). *taken false: the layout is compact, no kernel applies or none can run (the platform's kernel status says
 * why); nothing was done. */
static int32_t kernel_copy(const dlmap__gpu *gpu, const dlmap__gpu_end *dst, const dlmap__gpu_end *src,
                           const dlmap__copy_layout *layout, int32_t device, void *stream, bool *taken,
                           dlmap_error *err) {
  *taken = false;
  const bool to_device = kernel_reachable(dst, device);
  if (!kernel_reachable(src, device) || !(to_device || host_memory(dst->kind))) return DLMAP_OK;
  /* A device buffer is aligned for any unit: plan with dst's own address only where the kernel writes there. */
  dlmap__kernel_plan plan;
  if (!dlmap__kernel_plan_copy(src->data, to_device ? dst->data : NULL, layout, &plan)) {
    return DLMAP_OK;
  }
  if (to_device) {
    *taken = launch_kernel(gpu, &plan, stream);
    return DLMAP_OK;
  }
  const size_t bytes = (size_t)layout->bytes;
  const dlmap__gpu_buffer want = {NULL, bytes, DLMAP_MEMORY_DEVICE, device, src->device_type, DLMAP__GPU_SYNCHRONOUS,
                                  {NULL, NULL, NULL}};
  dlmap__gpu_buffer compact;
  if (dlmap__gpu_allocate(gpu, &want, stream, src->framework, &compact, NULL) != DLMAP_OK) {
    return DLMAP_OK; /* no room for the buffer: the other paths need none */
  }
  plan.params.dst = compact.memory;
  int32_t result = DLMAP_OK;
  if (launch_kernel(gpu, &plan, stream)) {
    *taken = true;
    const dlmap__gpu_end from = {compact.memory, DLMAP_MEMORY_DEVICE, device, src->device_type, NULL};
    int op = GPU_OP_MEMCPY_ASYNC;
    int status = gpu->call.memcpy_async(dst->data, compact.memory, bytes, memcpy_kind(gpu, dst, &from), stream);
    if (status == 0 && compact.source == DLMAP__GPU_SYNCHRONOUS) {
      op = GPU_OP_STREAM_SYNCHRONIZE; /* the synchronous free below must not take the buffer from the copy */
      status = gpu->call.stream_synchronize(stream);
    }
    if (status != 0) result = call_failed(gpu, op, status, err);
  }
  /* A pooled or framework buffer goes back on the copy's stream, after the copy reads it, without a wait; the host
   * waits for the stream anyway before it reads the copy (dlmap__transfer_finish: a host destination). */
  dlmap__gpu_release(gpu, &compact, stream);
  return result;
}

/* The span the rows of each 2-D copy run along (dims from `row` on, the contiguous run `width` bytes): one whose
 * source and compact-destination pitches the runtime accepts; of those, the longest, so the fewest copies cover the
 * rest (a transpose: rows down the longer side). -1 when none fits. *slices: the copies issued, the other spans'
 * product (saturating past GPU_MAX_2D_COPIES_ON_DEVICE). */
static int32_t pick_rows(const dlmap__copy_layout *layout, int32_t row, int64_t width, int64_t *slices) {
  const dlmap__copy_dim *dims = layout->dims;
  int32_t pick = -1;
  for (int32_t i = row; i < layout->ndim; i++) {
    const bool fits = dims[i].src_step >= width && dims[i].src_step <= GPU_MAX_PITCH && dims[i].dst_step <= GPU_MAX_PITCH;
    if (fits && (pick < 0 || dims[i].extent > dims[pick].extent)) pick = i;
  }
  *slices = 1;
  for (int32_t i = row; i < layout->ndim && pick >= 0; i++) {
    if (i == pick) continue;
    *slices = dims[i].extent > GPU_MAX_2D_COPIES_ON_DEVICE / *slices ? GPU_MAX_2D_COPIES_ON_DEVICE + 1
                                                                      : *slices * dims[i].extent;
  }
  return pick;
}

/* A layout that is not one run: 2-D copies of a contiguous run (the innermost span when its step is one element, else
 * single elements) repeated over the remaining spans as rows, or through the host. */
static int32_t copy_rows(const dlmap__gpu *gpu, const dlmap__gpu_end *dst, const dlmap__gpu_end *src,
                         const dlmap__copy_layout *layout, void *stream, dlmap_error *err) {
  const dlmap__copy_dim *dims = layout->dims;
  const int64_t eb = (int64_t)layout->element_bytes;
  const int32_t row = dims[0].src_step == eb ? 1 : 0, k = layout->ndim;
  const int64_t width = row == 1 ? dims[0].extent * eb : eb;
  int64_t slices;
  const int32_t pick = pick_rows(layout, row, width, &slices);
  /* Through the host, a strided end in host memory is read or written there in one pass: beyond a few copies that is
   * cheaper. Between GPU memories the host is two transfers and a wait: 2-D copies stay unless each is too short. */
  const bool device_only = !host_memory(dst->kind) && !host_memory(src->kind);
  const bool on_device = pick >= 0 && (slices <= GPU_MAX_2D_COPIES ||
                                       (device_only && dims[pick].extent >= GPU_MIN_2D_ROWS &&
                                        slices <= GPU_MAX_2D_COPIES_ON_DEVICE));
  if (!on_device) return staged_copy(gpu, dst, src, layout, stream, err);
  const int kind = memcpy_kind(gpu, dst, src);
  /* One 2-D copy per index of the other spans, in odometer order. */
  int64_t index[DLMAP_MAX_NDIM] = {0}, offset = 0, out = 0;
  for (int64_t c = 0; c < slices; c++) {
    const int status = gpu->call.memcpy_2d_async((char *)dst->data + out, (size_t)dims[pick].dst_step,
                                                 (const char *)src->data + offset, (size_t)dims[pick].src_step,
                                                 (size_t)width, (size_t)dims[pick].extent, kind, stream);
    if (status != 0) return call_failed(gpu, GPU_OP_MEMCPY_2D_ASYNC, status, err);
    for (int32_t d = row; d < k; d++) {
      if (d == pick) continue;
      offset += dims[d].src_step;
      out += dims[d].dst_step;
      if (++index[d] < dims[d].extent) break;
      offset -= dims[d].extent * dims[d].src_step;
      out -= dims[d].extent * dims[d].dst_step;
      index[d] = 0;
    }
  }
  return DLMAP_OK;
}

/* The copy on the current device (the stream's). */
static int32_t copy_on_device(const dlmap__gpu *gpu, const dlmap__gpu_end *dst, const dlmap__gpu_end *src,
                              const dlmap__copy_layout *layout, int32_t device, void *stream, dlmap_error *err) {
  if (layout->count == 0) return DLMAP_OK;
  bool taken;
  const int32_t result = kernel_copy(gpu, dst, src, layout, device, stream, &taken, err);
  if (taken || result != DLMAP_OK) return result;
  /* One host element over the whole destination (every dimension fused into one of step 0, as in dlmap.empty's zero
   * source) whose bytes are all alike: the runtime's memset writes it, with no host buffer and no upload. */
  const int fill = layout->ndim == 1 && layout->dims[0].src_step == 0 && src->kind == DLMAP_MEMORY_HOST
                       ? repeated_byte(src->data, (size_t)layout->element_bytes)
                       : -1;
  if (fill >= 0) {
    const int status = gpu->call.memset_async(dst->data, fill, (size_t)layout->bytes, stream);
    return status != 0 ? call_failed(gpu, GPU_OP_MEMSET_ASYNC, status, err) : DLMAP_OK;
  }
  if (dlmap__copy_layout_compact(layout)) {
    const int status = gpu->call.memcpy_async(dst->data, src->data, (size_t)layout->bytes, memcpy_kind(gpu, dst, src),
                                              stream);
    return status != 0 ? call_failed(gpu, GPU_OP_MEMCPY_ASYNC, status, err) : DLMAP_OK;
  }
  return copy_rows(gpu, dst, src, layout, stream, err);
}

int32_t dlmap__gpu_copy(const dlmap__gpu *gpu, const dlmap__gpu_end *dst, const dlmap__gpu_end *src,
                        const dlmap__copy_layout *layout, int32_t device, void *stream, dlmap_error *err) {
  device_scope scope;
  int32_t result = enter_device(gpu, -1, &scope, err);
  if (result != DLMAP_OK) return result;
  /* The runtime's word on where GPU memory lives, not the producer's claim: a kDLCUDA view of pinned memory
   * is host memory to the copy engine, and a wrong direction is undefined behaviour in the runtimes. Asked on the
   * device the memory is claimed to belong to: HIP answers only there for device memory. */
  dlmap__gpu_end ends[2] = {*dst, *src};
  for (int i = 0; i < 2 && result == DLMAP_OK; i++) {
    dlmap__gpu_pointer where;
    if (ends[i].kind == DLMAP_MEMORY_HOST) continue;
    result = switch_device(gpu, &scope, ends[i].device, err);
    if (result == DLMAP_OK) result = locate_here(gpu, ends[i].data, &where, err);
    if (result != DLMAP_OK) break;
    if (where.kind != DLMAP_MEMORY_KIND_COUNT) ends[i].kind = where.kind;
    if (where.kind == DLMAP_MEMORY_DEVICE || where.kind == DLMAP_MEMORY_MANAGED) ends[i].device = where.device;
  }
  if (result == DLMAP_OK) result = switch_device(gpu, &scope, device, err);
  if (result == DLMAP_OK) result = copy_on_device(gpu, &ends[0], &ends[1], layout, scope.current, stream, err);
  leave_device(gpu, &scope);
  return result;
}

int32_t dlmap__gpu_synchronize(const dlmap__gpu *gpu, int32_t device, void *stream, dlmap_error *err) {
  device_scope scope;
  int32_t result = enter_device(gpu, device, &scope, err);
  if (result != DLMAP_OK) return result;
  const int status = gpu->call.stream_synchronize(stream);
  if (status != 0) result = call_failed(gpu, GPU_OP_STREAM_SYNCHRONIZE, status, err);
  leave_device(gpu, &scope);
  return result;
}

/* ---- the stream protocol --------------------------------------------------------------------------- */

static int32_t sync_failed(const dlmap__gpu *gpu, int64_t stream, int op, int status, dlmap_error *err) {
  char reason[240];
  dlmap__writer w;
  dlmap__writer_init(&w, reason, sizeof reason);
  dlmap__put_str(&w, gpu->symbol[op]);
  dlmap__put_str(&w, ": ");
  dlmap__put_str(&w, dlmap__gpu_error_text(gpu, status));
  dlmap__put_str(&w, " (error ");
  dlmap__put_int(&w, status);
  dlmap__put_str(&w, ")");
  dlmap__writer_finish(&w);
  gpu->call.get_last_error();
  return dlmap_raise_stream_sync_failed(err, stream, gpu->name, reason);
}

int32_t dlmap__gpu_stream_wait(const dlmap__gpu *gpu, int32_t device, void *producer, int32_t consumer_device,
                               dlmap_stream_meaning meaning, int64_t stream, dlmap_error *err) {
  if (meaning == DLMAP_STREAM_NO_SYNC) return DLMAP_OK;
  if (meaning == DLMAP_STREAM_HOST_SYNC) return dlmap__gpu_synchronize(gpu, device, producer, err);
  void *consumer;
  if (meaning == DLMAP_STREAM_HANDLE) {
    consumer = (void *)(intptr_t)stream;
  } else if ((unsigned)meaning <= (unsigned)DLMAP_STREAM_INVALID && gpu->has_stream[meaning]) {
    consumer = (void *)(intptr_t)gpu->stream[meaning];
  } else {
    return dlmap_raise_stream_sync_failed(err, stream, gpu->name,
                                          "the spec gives this runtime no handle for that stream");
  }
  if (consumer_device < 0) consumer_device = device;
  if (consumer == producer && consumer_device == device) return DLMAP_OK; /* one stream: its own order is the order */
  device_scope scope;
  int32_t result = enter_device(gpu, device, &scope, err);
  if (result != DLMAP_OK) return result;
  void *event = NULL;
  int status = gpu->call.event_create(&event, (unsigned)gpu->value[GPU_VALUE_FLAG_EVENT_DISABLE_TIMING]);
  if (status != 0) {
    result = sync_failed(gpu, stream, GPU_OP_EVENT_CREATE, status, err);
  } else {
    status = gpu->call.event_record(event, producer);
    if (status != 0) {
      result = sync_failed(gpu, stream, GPU_OP_EVENT_RECORD, status, err);
    } else {
      /* A default-stream handle (legacy, per-thread, HIP's null stream) means that stream of the current device:
       * the consumer's device must be current for the wait, not the producer's. */
      result = switch_device(gpu, &scope, consumer_device, err);
      if (result == DLMAP_OK) {
        status = gpu->call.stream_wait_event(consumer, event, 0);
        if (status != 0) result = sync_failed(gpu, stream, GPU_OP_STREAM_WAIT_EVENT, status, err);
      }
    }
    /* The wait holds the recorded work, not the event: destroying it now is safe and does not block. */
    gpu->call.event_destroy(event);
  }
  leave_device(gpu, &scope);
  return result;
}
