/* dlmap core — the stream protocol and pointer queries on the public API: dlmap_stream_wait_batch (one
 * event and one wait per producer stream for many exports), dlmap_stream_handle (a consumer's stream argument as
 * the runtime's handle, for import copies) and dlmap_memory_locate (where a GPU runtime says a pointer lives). All
 * go through the GPU backend. */
#include <string.h>

#include "src/transfer.h"

/* Producer streams remembered per batch call; past this many distinct ones, later arrays are synchronised
 * without deduplication (correct, one wait each). */
#define BATCH_DISTINCT 64

typedef struct batch_key {
  dlmap_platform platform;
  int32_t device_id;
  void *producer_stream;
  dlmap_stream_meaning meaning;
} batch_key;

int32_t dlmap_stream_wait_batch(const dlmap_array *arrays, size_t count, bool has_stream, int64_t stream,
                                size_t *waits, dlmap_error *err) {
  if (waits != NULL) *waits = 0;
  if (arrays == NULL && count > 0) {
    return dlmap__invalid_argument(err, "arrays", "must not be NULL when count > 0");
  }
  /* The first element's struct_size says the stride of the whole array of structs (sizeof in the caller's header);
   * each element is read by its own struct_size, fields it does not have as zero. */
  const size_t stride = count > 0 ? dlmap__struct_stride(arrays[0].struct_size, _Alignof(dlmap_array)) : 0;
  batch_key seen[BATCH_DISTINCT];
  size_t distinct = 0, enqueued = 0;
  for (size_t i = 0; i < count; i++) {
    dlmap_array fields;
    if (DLMAP__STRUCT_READ((const char *)arrays + i * stride, &fields, dlmap_array, DLMAP_ARRAY_STRUCT_SIZE, "arrays",
                           err) != DLMAP_OK) {
      return DLMAP_ERR_INVALID_ARGUMENT;
    }
    const dlmap_array *a = &fields;
    dlmap_stream_meaning meaning;
    int32_t status = dlmap_stream_classify(a->device_type, has_stream, stream, &meaning, err);
    if (status != DLMAP_OK) return status;
    const dlmap_device_info *device = dlmap_device_type_find(a->device_type);
    if (dlmap_platform_find(device->platform)->backend != DLMAP_BACKEND_GPU || meaning == DLMAP_STREAM_NO_SYNC) {
      continue;
    }
    const batch_key key = {device->platform, a->device_id, a->producer_stream, meaning};
    bool done = false;
    for (size_t j = 0; j < distinct && !done; j++) {
      done = seen[j].platform == key.platform && seen[j].device_id == key.device_id &&
             seen[j].producer_stream == key.producer_stream && seen[j].meaning == key.meaning;
    }
    if (done) continue;
    status = dlmap__view_sync(device, a->device_id, a->producer_stream, a->device_id, meaning, stream, true, err);
    if (status != DLMAP_OK) return status;
    if (distinct < BATCH_DISTINCT) seen[distinct++] = key;
    if (meaning != DLMAP_STREAM_HOST_SYNC) enqueued++;
  }
  if (waits != NULL) *waits = enqueued;
  return DLMAP_OK;
}

int32_t dlmap_stream_handle(int32_t device_type, bool has_stream, int64_t stream, void **handle, dlmap_error *err) {
  dlmap_stream_meaning meaning;
  const int32_t status = dlmap_stream_classify(device_type, has_stream, stream, &meaning, err);
  if (status != DLMAP_OK) return status;
  *handle = NULL;
  if (meaning == DLMAP_STREAM_HANDLE) {
    *handle = (void *)(intptr_t)stream;
  } else if (meaning == DLMAP_STREAM_LEGACY_DEFAULT || meaning == DLMAP_STREAM_PER_THREAD_DEFAULT ||
             meaning == DLMAP_STREAM_DEFAULT) {
    /* The spec guarantees a handle for every default meaning a GPU platform's device types can receive; other
     * platforms have no runtime, so the default stream (NULL) is all there is. */
    dlmap__gpu_default_stream(dlmap_device_type_find(device_type)->platform, meaning, handle);
  }
  return DLMAP_OK;
}

int32_t dlmap_memory_locate(int32_t device_type, const void *pointer, dlmap_memory_kind *kind, int32_t *device_id,
                            dlmap_error *err) {
  const dlmap_device_info *device;
  int32_t status = dlmap_device_type_lookup(device_type, &device, err);
  if (status != DLMAP_OK) return status;
  if (dlmap_platform_find(device->platform)->backend != DLMAP_BACKEND_GPU) {
    return dlmap_raise_platform_unavailable(err, device->name, device->value,
                                            dlmap_platform_find(device->platform)->name,
                                            "only a GPU runtime can say where a pointer lives");
  }
  const dlmap__gpu *gpu;
  status = dlmap__gpu_acquire(device, &gpu, err);
  if (status != DLMAP_OK) return status;
  dlmap__gpu_pointer where;
  status = dlmap__gpu_locate(gpu, pointer, -1, &where, err);
  if (status != DLMAP_OK) return status;
  if (kind != NULL) *kind = where.kind;
  if (device_id != NULL) *device_id = where.device;
  return DLMAP_OK;
}
