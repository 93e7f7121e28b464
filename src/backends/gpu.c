/* dlmap GPU backend — the device operations, CUDA and HIP through one implementation over the runtime the loader
 * (gpu_loader.c) resolved from the spec's rows: the current device, pointer queries, allocation and release (the
 * framework's allocator, the stream-ordered pools, the synchronous allocators), copies (kernels, 2-D copies, staged
 * through the host) and the stream protocol's waits, with the runtime's failures turned into dlmap's errors. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "src/backends/gpu_kernels.h"
#include "src/backends/gpu_runtime.h"
#include "src/host_copy.h"

/* A memory location and an access descriptor as the runtime lays them out (spec: the signatures' comments). */
typedef struct pool_location {
  int type, id;
} pool_location;
typedef struct pool_access {
  pool_location location;
  int flags;
} pool_access;

/* Bytes given to pointer_attributes: the generated row (codegen/runtime_interface.py POINTER_ATTRIBUTES_BYTES, which
 * bounds every offset the runtime values give). */
#define DLMAP_POINTER_ATTRIBUTES_BYTES(bytes_, ...) typedef unsigned char gpu_attributes_buffer[bytes_];
#include "src/generated/runtime_values.inc"

static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER; /* a kind's default pool, asked for once */

/* ---- errors ---------------------------------------------------------------------------------------- */

const char *dlmap__gpu_error_text(const dlmap__gpu *gpu, int status) {
  const char *text = gpu->call.error_string(status);
  return text != NULL ? text : "unknown error";
}

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
    if (status != 0) return call_failed(gpu, DLMAP__GPU_OP_SET_DEVICE, status, err);
  }
  scope->current = device;
  return DLMAP_OK;
}

/* Remembers the thread's device state, then makes `device` (when ≥ 0) current. On error nothing is changed. */
static int32_t enter_device(const dlmap__gpu *gpu, int32_t device, device_scope *scope, dlmap_error *err) {
  scope->context = NULL;
  /* A failed query leaves the runtime's way (set_device), as before the driver's entry points were used. */
  scope->driver = gpu->driver.get_current != NULL && gpu->driver.get_current(&scope->context) == 0;
  scope->saved = scope->current = -1; /* unknown until get_device answers: leave_device then switches nothing back */
  const int status = gpu->call.get_device(&scope->saved);
  if (status != 0) return call_failed(gpu, DLMAP__GPU_OP_GET_DEVICE, status, err);
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
  gpu_attributes_buffer attributes;
  memset(attributes, 0, sizeof attributes);
  out->kind = DLMAP_MEMORY_HOST;
  out->device = -1;
  out->device_pointer = NULL;
  const int status = gpu->call.pointer_attributes(attributes, pointer);
  if (status != 0) {
    /* InvalidValue is the runtime's "not my memory" (HIP 5 and CUDA before 11 answer so for plain host memory).
     * Anything else (a sticky 700 or 719, 3 after fork, 4 at shutdown) says nothing about the pointer: calling
     * it host memory would let a host copy read device memory. */
    const int invalid = DLMAP__GPU_VALUE_STATUS_INVALID_VALUE;
    if (gpu->has_value[invalid] && status == gpu->value[invalid]) {
      gpu->call.get_last_error();
      return DLMAP_OK;
    }
    return call_failed(gpu, DLMAP__GPU_OP_POINTER_ATTRIBUTES, status, err);
  }
  if (!gpu->has_layout) {
    return dlmap_raise_backend_call_failed(err, gpu->name, gpu->symbol[DLMAP__GPU_OP_POINTER_ATTRIBUTES],
                                           "the spec lists no pointer-attributes layout for this " "runtime version");
  }
  const int type = read_int(attributes, 0);
  out->kind = dlmap__gpu_memory_kind(gpu, type);
  const int managed = DLMAP__GPU_VALUE_MANAGED_OFFSET;
  if (gpu->has_value[managed] && read_int(attributes, gpu->value[managed]) != 0) {
    out->kind = DLMAP_MEMORY_MANAGED;
  }
  out->device = read_int(attributes, gpu->value[DLMAP__GPU_VALUE_DEVICE_OFFSET]);
  memcpy(&out->device_pointer, attributes + gpu->value[DLMAP__GPU_VALUE_DEVICE_POINTER_OFFSET],
         sizeof out->device_pointer);
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
  const dlmap__gpu_stream_pool_row *row = gpu->kind_row[kind];
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
    call = gpu->symbol[DLMAP__GPU_OP_MALLOC_HOST];
    status = gpu->call.malloc_host(&out->memory, out->bytes, (unsigned)gpu->value[DLMAP__GPU_VALUE_FLAG_MALLOC_HOST]);
  } else if (want->kind == DLMAP_MEMORY_MANAGED) {
    call = gpu->symbol[DLMAP__GPU_OP_MALLOC_MANAGED];
    status = gpu->call.malloc_managed(&out->memory, out->bytes,
                                      (unsigned)gpu->value[DLMAP__GPU_VALUE_FLAG_MALLOC_MANAGED]);
  } else {
    call = gpu->symbol[DLMAP__GPU_OP_MALLOC];
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
  /* Where entering failed after the driver named the thread's context, the free still runs (here, else nowhere), and
   * the thread still gets its context back: a thread that had none must not keep the one the free's runtime call
   * made current (CUDA 12: hundreds of MB on a device the caller may never use). */
  const bool restore = entered || scope.driver;
  if (buffer->source == DLMAP__GPU_FRAMEWORK) {
    const dlmap_device_allocator *framework = &buffer->framework;
    framework->release(framework->ctx, buffer->memory, buffer->bytes, buffer->device_type, buffer->device, stream);
    if (restore) leave_device(gpu, &scope);
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
  if (restore) leave_device(gpu, &scope);
}

/* ---- copies ---------------------------------------------------------------------------------------- */

static bool host_memory(dlmap_memory_kind kind) { return kind == DLMAP_MEMORY_HOST || kind == DLMAP_MEMORY_HOST_PINNED; }

/* The memcpy kind for a copy between two ends: explicit directions for host and device memory, the
 * runtime's inferred kind (unified addressing) for managed memory, unknown memory and other devices. */
static int memcpy_kind(const dlmap__gpu *gpu, const dlmap__gpu_end *dst, const dlmap__gpu_end *src) {
  const bool dst_device = dst->kind == DLMAP_MEMORY_DEVICE, src_device = src->kind == DLMAP_MEMORY_DEVICE;
  int64_t kind = gpu->value[DLMAP__GPU_VALUE_MEMCPY_DEFAULT];
  if (host_memory(src->kind) && dst_device) kind = gpu->value[DLMAP__GPU_VALUE_MEMCPY_HOST_TO_DEVICE];
  if (src_device && host_memory(dst->kind)) kind = gpu->value[DLMAP__GPU_VALUE_MEMCPY_DEVICE_TO_HOST];
  if (src_device && dst_device && src->device == dst->device) {
    kind = gpu->value[DLMAP__GPU_VALUE_MEMCPY_DEVICE_TO_DEVICE];
  }
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
  if (status != 0) return call_failed(gpu, DLMAP__GPU_OP_STREAM_SYNCHRONIZE, status, err);
  /* false for DLMAP_MEMORY_KIND_COUNT (a kind the pointer query does not name): staged through the host */
  const bool src_host = dlmap_memory_kind_host_accessible(src->kind);
  const bool dst_host = dlmap_memory_kind_host_accessible(dst->kind);
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
      result = call_failed(gpu, DLMAP__GPU_OP_MEMCPY_ASYNC, status, err);
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
    if (status != 0) result = call_failed(gpu, DLMAP__GPU_OP_MEMCPY_ASYNC, status, err);
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
    int op = DLMAP__GPU_OP_MEMCPY_ASYNC;
    int status = gpu->call.memcpy_async(dst->data, compact.memory, bytes, memcpy_kind(gpu, dst, &from), stream);
    if (status == 0 && compact.source == DLMAP__GPU_SYNCHRONOUS) {
      op = DLMAP__GPU_OP_STREAM_SYNCHRONIZE; /* the synchronous free below must not take the buffer from the copy */
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
    if (status != 0) return call_failed(gpu, DLMAP__GPU_OP_MEMCPY_2D_ASYNC, status, err);
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
  /* layout->count > 0: dlmap__gpu_copy's one caller (dlmap__transfer_copy) runs only for a layout with elements
   * (dlmap__copy_compact, exchange.c). */
  bool taken;
  const int32_t result = kernel_copy(gpu, dst, src, layout, device, stream, &taken, err);
  if (taken) return result; /* kernel_copy fails only after a launch, with taken set */
  /* One host element over the whole destination (every dimension fused into one of step 0, as in dlmap.empty's zero
   * source) whose bytes are all alike: the runtime's memset writes it, with no host buffer and no upload. */
  const int fill = layout->ndim == 1 && layout->dims[0].src_step == 0 && src->kind == DLMAP_MEMORY_HOST
                       ? repeated_byte(src->data, (size_t)layout->element_bytes)
                       : -1;
  if (fill >= 0) {
    const int status = gpu->call.memset_async(dst->data, fill, (size_t)layout->bytes, stream);
    return status != 0 ? call_failed(gpu, DLMAP__GPU_OP_MEMSET_ASYNC, status, err) : DLMAP_OK;
  }
  if (dlmap__copy_layout_compact(layout)) {
    const int status = gpu->call.memcpy_async(dst->data, src->data, (size_t)layout->bytes, memcpy_kind(gpu, dst, src),
                                              stream);
    return status != 0 ? call_failed(gpu, DLMAP__GPU_OP_MEMCPY_ASYNC, status, err) : DLMAP_OK;
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
  for (int i = 0; i < 2; i++) { /* result is DLMAP_OK here: an error breaks out */
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
  if (status != 0) result = call_failed(gpu, DLMAP__GPU_OP_STREAM_SYNCHRONIZE, status, err);
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
  int status = gpu->call.event_create(&event, (unsigned)gpu->value[DLMAP__GPU_VALUE_FLAG_EVENT_DISABLE_TIMING]);
  if (status != 0) {
    result = sync_failed(gpu, stream, DLMAP__GPU_OP_EVENT_CREATE, status, err);
  } else {
    status = gpu->call.event_record(event, producer);
    if (status != 0) {
      result = sync_failed(gpu, stream, DLMAP__GPU_OP_EVENT_RECORD, status, err);
    } else {
      /* A default-stream handle (legacy, per-thread, HIP's null stream) means that stream of the current device:
       * the consumer's device must be current for the wait, not the producer's. */
      result = switch_device(gpu, &scope, consumer_device, err);
      if (result == DLMAP_OK) {
        status = gpu->call.stream_wait_event(consumer, event, 0);
        if (status != 0) result = sync_failed(gpu, stream, DLMAP__GPU_OP_STREAM_WAIT_EVENT, status, err);
      }
    }
    /* The wait holds the recorded work, not the event: destroying it now is safe and does not block. */
    gpu->call.event_destroy(event);
  }
  leave_device(gpu, &scope);
  return result;
}
