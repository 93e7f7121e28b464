/* dlmap core — moving tensor data between memories for export and import: plans which backend allocates
 * and copies (the CPU for host-readable memory on both sides, the GPU backend otherwise), hands pinned and
 * managed memory to its GPU without a copy, and applies the DLPack stream protocol around views and copies. */
#include <string.h>

#include "src/host_copy.h"
#include "src/memory.h"
#include "src/transfer.h"

static bool gpu_platform(const dlmap_device_info *device) {
  return dlmap_platform_find(device->platform)->backend == DLMAP_BACKEND_GPU;
}

static bool host_platform(const dlmap_device_info *device) {
  return dlmap_platform_find(device->platform)->backend == DLMAP_BACKEND_CPU;
}

/* The platform's runtime when it is available here, else NULL (no error: nothing of it can be pending). */
static const dlmap__gpu *available(dlmap_platform platform) {
  dlmap_platform_status status;
  dlmap_platform_probe(platform, &status);
  return status.available ? dlmap__gpu_loaded(platform) : NULL;
}

/* The stream a copy from host memory into `platform`'s device memory runs on: the consumer's, unless that is the legacy
 * default stream or none (-1, host sync), since the legacy stream synchronises implicitly with every blocking stream
 * of the device and may not be used while a stream of the process is being captured into a graph; then the spec's
 * per-thread default stream, where the platform has one (else the consumer's, or the null stream: all there is). */
static void *host_to_device_stream(dlmap_platform platform, void *consumer) {
  void *legacy = NULL, *per_thread = NULL;
  const bool has_legacy = dlmap__gpu_default_stream(platform, DLMAP_STREAM_LEGACY_DEFAULT, &legacy) != 0;
  if (consumer != NULL && !(has_legacy && consumer == legacy)) return consumer;
  return dlmap__gpu_default_stream(platform, DLMAP_STREAM_PER_THREAD_DEFAULT, &per_thread) ? per_thread : consumer;
}

/* The runtime of a device type's platform, started, with device_id one of its devices. */
static int32_t runtime_for(const dlmap_device_info *device, int32_t device_id, const dlmap__gpu **out,
                           dlmap_error *err) {
  int32_t status = dlmap__gpu_acquire(device, out, err);
  if (status == DLMAP_OK) status = dlmap__gpu_check_device(*out, device_id, err);
  return status;
}

int32_t dlmap__transfer_plan(const dlmap_device_info *source, int32_t source_id, void *source_stream,
                             const dlmap_device_info *target, int32_t target_id, void *target_stream,
                             dlmap__transfer *out, dlmap_error *err) {
  memset(out, 0, sizeof *out);
  out->from = dlmap__device(source->value, source_id);
  out->to = dlmap__device(target->value, target_id);
  const bool source_readable = dlmap_memory_kind_host_accessible(source->memory);
  out->src.kind = host_platform(source) ? DLMAP_MEMORY_HOST : source->memory;
  out->src.device = source_id;
  out->src.device_type = source->value;
  out->dst.kind = host_platform(target) ? DLMAP_MEMORY_HOST : target->memory;
  out->dst.device = target_id;
  out->dst.device_type = target->value;
  int32_t status;
  const dlmap__gpu *source_gpu = NULL;
  if (!source_readable && !gpu_platform(source)) {
    /* Device memory of a platform no dlmap backend serves (a profile may still import views of it): nothing here
     * can read it, so a copy is platform_unavailable, with the platform's reason. */
    return dlmap__gpu_acquire(source, &source_gpu, err);
  }
  if (gpu_platform(source)) {
    if (source_readable) {
      source_gpu = available(source->platform); /* pinned or managed: GPU writes may still be pending */
    } else {
      status = dlmap__gpu_acquire(source, &source_gpu, err);
      if (status != DLMAP_OK) return status;
    }
    if (source_gpu != NULL) {
      status = dlmap__gpu_check_device(source_gpu, source_id, err);
      if (status != DLMAP_OK) return status;
    }
  }
  if (!host_platform(target)) { /* device, pinned or managed memory comes from the target's runtime */
    status = runtime_for(target, target_id, &out->dst_gpu, err);
    if (status != DLMAP_OK) return status;
  }
  out->device = source_id;
  out->stream = source_stream;
  out->dst_stream = target_stream;
  /* Host-accessible memory at both ends is copied by the host, after the source's stream; except into pool memory
   * for a consumer who names streams: that memory is usable only by work ordered after its allocation on the
   * consumer's stream, so the runtime copies there, as from the host into a GPU. */
  const bool into_pool = target->stream != DLMAP_STREAM_CONVENTION_NONE && out->dst_gpu != NULL &&
                         dlmap__gpu_pooled(out->dst_gpu, out->dst.kind);
  if (source_readable && dlmap_memory_kind_host_accessible(out->dst.kind) && !into_pool) {
    out->source_gpu = source_gpu;
    return DLMAP_OK;
  }
  if (source_gpu != NULL && out->dst_gpu != NULL && source_gpu != out->dst_gpu) {
    return dlmap_raise_not_implemented(err, "Copying between two GPU platforms");
  }
  out->gpu = source_gpu != NULL ? source_gpu : out->dst_gpu;
  if (source_gpu == NULL) { /* host memory into a GPU: on a stream of the target device */
    out->device = target_id;
    out->stream = host_to_device_stream(target->platform, target_stream);
  }
  return DLMAP_OK;
}

/* The stream the destination's memory is taken on, a stream of its device: the copy's, where the copy runs on that
 * device; the consumer's, where it runs on another device's stream (dlmap__transfer_allocate then orders the copy
 * after the allocation); none for a host copy into pinned or managed memory (the synchronous allocator serves). */
static void *allocation_stream(const dlmap__transfer *t) {
  if (t->gpu != t->dst_gpu) return DLMAP__GPU_NO_STREAM;
  return t->device == t->dst.device ? t->stream : t->dst_stream;
}

void dlmap__transfer_use(dlmap__transfer *t, const dlmap_device_allocator *framework) {
  t->src.framework = t->dst.framework = framework;
}

int32_t dlmap__transfer_allocate(const dlmap__transfer *t, size_t bytes, dlmap__gpu_buffer *out, dlmap_error *err) {
  const dlmap__gpu_buffer want = {NULL, bytes, t->dst.kind, t->dst.device, t->dst.device_type, DLMAP__GPU_SYNCHRONOUS,
                                  {NULL, NULL, NULL}};
  int32_t status = dlmap__gpu_allocate(t->dst_gpu, &want, allocation_stream(t), t->dst.framework, out, err);
  if (status != DLMAP_OK || out->source == DLMAP__GPU_SYNCHRONOUS || t->device == t->dst.device) return status;
  /* Taken on the destination's stream, written by the copy on the source device's: the copy waits for it there (an
   * event, no host wait). */
  status = dlmap__gpu_stream_wait(t->gpu, t->dst.device, t->dst_stream, t->device, DLMAP_STREAM_HANDLE,
                                  (int64_t)(intptr_t)t->stream, err);
  if (status != DLMAP_OK) dlmap__transfer_release(t, out);
  return status;
}

void dlmap__transfer_release(const dlmap__transfer *t, const dlmap__gpu_buffer *buffer) {
  dlmap__gpu_release(t->dst_gpu, buffer, allocation_stream(t));
}

void *dlmap__release_stream(dlmap_platform platform, dlmap_stream_meaning meaning, int64_t stream) {
  void *handle = DLMAP__GPU_NO_STREAM;
  if (meaning == DLMAP_STREAM_HANDLE) return (void *)(intptr_t)stream;
  /* A per-thread default stream is the exporting thread's, not the deleter's: the legacy default stream, with which
   * every blocking stream (per-thread ones among them) synchronises, orders the free after it from any thread. */
  if (meaning == DLMAP_STREAM_PER_THREAD_DEFAULT) meaning = DLMAP_STREAM_LEGACY_DEFAULT;
  if (meaning == DLMAP_STREAM_LEGACY_DEFAULT || meaning == DLMAP_STREAM_DEFAULT) {
    if (!dlmap__gpu_default_stream(platform, meaning, &handle)) handle = DLMAP__GPU_NO_STREAM;
  }
  return handle;
}

/* After a failed copy or finish of a runtime's transfer (t->gpu set: both callers returned earlier without one): waits
 * on the host until nothing this transfer enqueued is still running, so the caller may free the destination and give
 * the source back (a copy in flight would read or write freed memory). A failure of the wait itself leaves nothing
 * better to do: the stream is broken and its work will not run on. */
static void settle(const dlmap__transfer *t) { dlmap__gpu_synchronize(t->gpu, t->device, t->stream, NULL); }

int32_t dlmap__transfer_copy(const dlmap__transfer *t, void *dst, const void *src, const dlmap__copy_layout *layout,
                             dlmap_error *err) {
  if (t->gpu == NULL) {
    if (t->source_gpu != NULL) {
      const int32_t status = dlmap__gpu_synchronize(t->source_gpu, t->device, t->stream, err);
      if (status != DLMAP_OK) return status;
    }
    dlmap__copy_to_compact(dst, src, layout);
    return DLMAP_OK;
  }
  dlmap__gpu_end to = t->dst, from = t->src;
  to.data = dst;
  from.data = (void *)(uintptr_t)src;
  const int32_t status = dlmap__gpu_copy(t->gpu, &to, &from, layout, t->device, t->stream, err);
  if (status != DLMAP_OK) settle(t); /* some of several copies may have been enqueued */
  return status;
}

int32_t dlmap__transfer_finish(const dlmap__transfer *t, bool wait_on_host, dlmap_stream_meaning meaning, int64_t stream,
                               dlmap_error *err) {
  if (t->gpu == NULL) return DLMAP_OK; /* a host copy is complete */
  int32_t status;
  if (wait_on_host || meaning == DLMAP_STREAM_HOST_SYNC || t->dst.kind == DLMAP_MEMORY_HOST ||
      t->dst.kind == DLMAP_MEMORY_HOST_PINNED) {
    status = dlmap__gpu_synchronize(t->gpu, t->device, t->stream, err);
  } else {
    /* The consumer uses the copy on the destination's device: its default-stream handles are that device's. */
    status = dlmap__gpu_stream_wait(t->gpu, t->device, t->stream, t->dst.device, meaning, stream, err);
  }
  if (status != DLMAP_OK) settle(t);
  return status;
}

int32_t dlmap__view_sync(const dlmap_device_info *memory, int32_t device_id, void *producer_stream,
                         int32_t consumer_device, dlmap_stream_meaning meaning, int64_t stream, bool enqueue,
                         dlmap_error *err) {
  if (!gpu_platform(memory) || meaning == DLMAP_STREAM_NO_SYNC) return DLMAP_OK;
  const dlmap__gpu *gpu;
  int32_t status;
  if (meaning == DLMAP_STREAM_HOST_SYNC) {
    gpu = available(memory->platform);
    if (gpu == NULL) return DLMAP_OK;
    status = dlmap__gpu_check_device(gpu, device_id, err);
  } else {
    status = runtime_for(memory, device_id, &gpu, err);
  }
  if (status != DLMAP_OK || !enqueue) return status;
  return dlmap__gpu_stream_wait(gpu, device_id, producer_stream, consumer_device, meaning, stream, err);
}

bool dlmap__gpu_zero_copy(const dlmap_device_info *source, const dlmap_device_info *target, int32_t target_id,
                          const void *pointer, uint64_t byte_offset, void **device_pointer) {
  if (source->platform != target->platform || !gpu_platform(source) || target->memory != DLMAP_MEMORY_DEVICE ||
      (source->memory != DLMAP_MEMORY_HOST_PINNED && source->memory != DLMAP_MEMORY_MANAGED) || pointer == NULL) {
    return false;
  }
  const dlmap__gpu *gpu = available(source->platform);
  dlmap__gpu_pointer where;
  if (gpu == NULL || dlmap__gpu_check_device(gpu, target_id, NULL) != DLMAP_OK ||
      dlmap__gpu_locate(gpu, pointer, target_id, &where, NULL) != DLMAP_OK) {
    return false;
  }
  /* The device's address of the data pointer: the first element's, less byte_offset (one mapping per allocation). */
  if (where.kind == DLMAP_MEMORY_MANAGED) {
    *device_pointer = (void *)((uintptr_t)pointer - (uintptr_t)byte_offset);
    return true;
  }
  if (where.kind == DLMAP_MEMORY_HOST_PINNED && where.device_pointer != NULL) {
    *device_pointer = (void *)((uintptr_t)where.device_pointer - (uintptr_t)byte_offset);
    return true;
  }
  /* Pinned memory without a device address is memory the device "cannot access directly" (CUDA's header on a NULL
   * devicePointer): its host address is no device address. Otherwise the producer's claim does not hold: plain host
   * memory the GPU cannot read. Either way: copy, or copy=False's error. */
  return false;
}
