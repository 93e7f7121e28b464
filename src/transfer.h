/* dlmap core — moving tensor data between memories for export and import: which backend allocates and
 * copies (CPU for host-readable memory on both sides, the GPU backend otherwise), GPU zero-copy views of
 * pinned and managed memory, and the stream protocol around them. */
#ifndef DLMAP_SRC_TRANSFER_H_
#define DLMAP_SRC_TRANSFER_H_

#include "src/backends/gpu.h"

/* A planned copy from a tensor on `source` into a fresh compact buffer on `target`. */
typedef struct dlmap__transfer {
  const dlmap__gpu *gpu;     /* the runtime that copies; NULL: a host copy */
  const dlmap__gpu *dst_gpu; /* the runtime that allocates the destination; NULL: the caller's allocator */
  dlmap__gpu_end src, dst;   /* kinds and devices (data is filled per copy) */
  int32_t device;            /* the device whose stream runs the copy */
  void *stream;              /* that stream (NULL: its null stream) */
  void *dst_stream;          /* the consumer's stream on the destination's device (NULL: its null stream) */
  const dlmap__gpu *source_gpu; /* source memory's runtime, when a host copy must first wait for it */
  DLDevice from, to;            /* the source and target devices, for messages */
} dlmap__transfer;

/* Plans a copy of memory of device type `source` (device source_id, last written on source_stream) into a
 * new buffer of `target` (device target_id, whose consumer uses target_stream: a runtime handle, NULL for none).
 * Host-readable memory on both sides is copied on the host; anything else by the runtime of the GPU side: on
 * source_stream from GPU memory, and from host memory on target_stream unless that is the legacy default stream or
 * none, then on the per-thread default stream where the spec gives the platform one. Errors: platform_unavailable,
 * device_id_out_of_range, not_implemented (between two GPU platforms). */
int32_t dlmap__transfer_plan(const dlmap_device_info *source, int32_t source_id, void *source_stream,
                             const dlmap_device_info *target, int32_t target_id, void *target_stream,
                             dlmap__transfer *out, dlmap_error *err);

/* Whether the destination lives in GPU-runtime memory (device, pinned or managed), i.e. not in a block of
 * the caller's allocator. */
static inline bool dlmap__transfer_gpu_destination(const dlmap__transfer *t) { return t->dst_gpu != NULL; }

/* Device buffers of this transfer (the destination, a strided copy's compact buffer) come from the framework's
 * allocator (NULL: the runtime's). */
void dlmap__transfer_use(dlmap__transfer *t, const dlmap_device_allocator *framework);

/* bytes of destination memory (dst_gpu's kind and device), on the copy's stream where the copy runs on the
 * destination's device, else on none: from the framework's allocator, the runtime's stream-ordered pool or its
 * synchronous allocator (dlmap__gpu_allocate). The caller owns it: given back by dlmap__transfer_release where the copy
 * failed (on the copy's stream), else by dlmap__gpu_release on the stream its holder uses it on
 * (dlmap__release_stream). Errors: backend_call_failed, out_of_memory. */
int32_t dlmap__transfer_allocate(const dlmap__transfer *t, size_t bytes, dlmap__gpu_buffer *out, dlmap_error *err);
void dlmap__transfer_release(const dlmap__transfer *t, const dlmap__gpu_buffer *buffer);

/* The stream a copy's holder uses it on, where its release is ordered, for a consumer stream of `meaning` (the
 * protocol's `stream` where that is a handle): the handle; the legacy default stream for a per-thread one (another
 * thread may release it); the platform's default handles as the spec gives them; DLMAP__GPU_NO_STREAM for host_sync
 * and no_sync, where the consumer orders its own work on streams dlmap is never told about. */
void *dlmap__release_stream(dlmap_platform platform, dlmap_stream_meaning meaning, int64_t stream);

/* Copies the tensor of `layout` at src (its first element) into compact dst. On error nothing it enqueued is still
 * running (it waited), so dst may be freed and the source given back. Errors: backend_call_failed, out_of_memory. */
int32_t dlmap__transfer_copy(const dlmap__transfer *t, void *dst, const void *src, const dlmap__copy_layout *layout,
                             dlmap_error *err);

/* After the copy, the stream protocol for its consumer: host_sync (or wait_on_host) waits on the host for
 * the copy, no_sync does nothing, any other meaning makes the consumer's stream (of the destination's device)
 * wait for it. On error the copy is no longer running (it waited). Errors: backend_call_failed, stream_sync_failed. */
int32_t dlmap__transfer_finish(const dlmap__transfer *t, bool wait_on_host, dlmap_stream_meaning meaning, int64_t stream,
                               dlmap_error *err);

/* A view of memory on a GPU platform, for a consumer on `stream` (its meaning for the consumer's device
 * type, a stream of consumer_device): makes the consumer wait for producer_stream of device_id per the protocol. host_sync waits on the
 * host only where the platform is available (otherwise no GPU work can be pending); the other meanings
 * need the runtime. Memory of other platforms needs nothing. With enqueue false only the checks run (so a
 * caller can fail before it acts, and act last). Errors: platform_unavailable, device_id_out_of_range,
 * stream_sync_failed. */
int32_t dlmap__view_sync(const dlmap_device_info *memory, int32_t device_id, void *producer_stream,
                         int32_t consumer_device, dlmap_stream_meaning meaning, int64_t stream, bool enqueue,
                         dlmap_error *err);

/* Whether memory of `source` (pinned or managed, the first element at pointer, byte_offset bytes past the tensor's data
 * pointer) can be handed to device target_id of `target` (GPU device memory of the same platform) without a copy: the
 * runtime is available, knows the device and confirms the memory kind, and gives pinned memory a device address.
 * *device_pointer receives the address the device uses for the data pointer. Never fails: false means copy instead. */
bool dlmap__gpu_zero_copy(const dlmap_device_info *source, const dlmap_device_info *target, int32_t target_id,
                          const void *pointer, uint64_t byte_offset, void **device_pointer);

#endif /* DLMAP_SRC_TRANSFER_H_ */
