/* dlmap core — the steps export and import share, written once: the spec facts both apply (the version a legacy
 * export speaks, which __dlpack_device__ reports replace a tensor's device), the storage a tensor's shape, dtype
 * and flags describe, and the copy into a fresh compact buffer. */
#ifndef DLMAP_SRC_EXCHANGE_H_
#define DLMAP_SRC_EXCHANGE_H_

#include "src/layout.h"
#include "src/transfer.h"

/* The newest listed version below the legacy range's end (a generation-time fact: spec/versions.yaml). */
dlmap_version dlmap__legacy_newest(void);

/* Whether a __dlpack_device__ report of memory kind `reported` may replace a tensor's own device of memory kind
 * `own`: the spec's memory kind says it refines the other (host_pinned refines host). */
bool dlmap__report_refines(dlmap_memory_kind reported, dlmap_memory_kind own);

/* Validates ndim, shape and strides and computes the extent of the tensor's storage: padded sub-byte elements
 * (IS_SUBBYTE_TYPE_PADDED) take one byte each, so their extent, bounds and copies are those of 8-bit elements.
 * Errors: those of dlmap__check_shape, subbyte_padding_invalid (padded set on a dtype of 8 bits or more),
 * data_null (NULL data with elements). */
int32_t dlmap__check_storage(int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype, bool padded,
                             const void *data, dlmap__extent *out, dlmap_error *err);

/* Whether a copy can read this layout: packed sub-byte data is copied as bytes, so only row-major data.
 * Errors: not_implemented. */
int32_t dlmap__check_copyable(const dlmap__extent *extent, int32_t ndim, const int64_t *shape, const int64_t *strides,
                              dlmap_error *err);

/* Where dlmap__copy_compact left the copy: data, the buffer used; gpu_copy, a new GPU buffer (memory: the same) that
 * the caller owns and gives back with dlmap__gpu_release, or one whose memory is NULL where the copy is in
 * host_buffer. */
typedef struct dlmap__copy_result {
  void *data;
  dlmap__gpu_buffer gpu_copy;
} dlmap__copy_result;

/* The copy of a tensor of `layout` whose first element is at `first` into a fresh compact buffer, then the stream
 * protocol for its consumer (dlmap__transfer_finish: `meaning` of `stream`; host_sync waits on the host). The buffer is
 * host_buffer (caller-owned, layout->bytes long) or, where the transfer's destination is GPU-runtime memory, a new
 * runtime allocation (out->gpu_copy). On error nothing this call allocated is left and nothing it enqueued is running.
 * Errors: those of dlmap__transfer_allocate, _copy, _finish, a failed runtime call among them as runtime_copy_failed
 * (the step, the tensor and the runtime's own text). */
int32_t dlmap__copy_compact(const dlmap__transfer *t, const void *first, const dlmap__copy_layout *layout,
                            dlmap_stream_meaning meaning, int64_t stream, void *host_buffer, dlmap__copy_result *out,
                            dlmap_error *err);

#endif /* DLMAP_SRC_EXCHANGE_H_ */
