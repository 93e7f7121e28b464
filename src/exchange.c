/* dlmap core — the steps export and import share (exchange.h): spec facts both apply, the storage check and the
 * copy tail. */
#include "src/exchange.h"

static const dlmap_version kLegacyNewest = {
#define DLMAP_LEGACY_NEWEST(MAJOR, MINOR, ...) .major = MAJOR, .minor = MINOR
#include "src/generated/exchange.inc"
};

typedef struct refinement {
  bool listed; /* false ends the list (a spec may have no refinement, and C has no empty array) */
  dlmap_memory_kind memory, refined;
} refinement;

static const refinement kRefinements[] = {
#define DLMAP_MEMORY_REFINES(MEMORY, REFINED, ...) \
  {.listed = true, .memory = DLMAP_MEMORY_##MEMORY, .refined = DLMAP_MEMORY_##REFINED},
#include "src/generated/exchange.inc"
    {.listed = false},
};

dlmap_version dlmap__legacy_newest(void) { return kLegacyNewest; }

bool dlmap__report_refines(dlmap_memory_kind reported, dlmap_memory_kind own) {
  for (const refinement *r = kRefinements; r->listed; r++) {
    if (r->memory == reported && r->refined == own) return true;
  }
  return false;
}

int32_t dlmap__check_storage(int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype, bool padded,
                             const void *data, dlmap__extent *out, dlmap_error *err) {
  const uint64_t dtype_bits = (uint64_t)dtype.bits * dtype.lanes;
  DLDataType storage = dtype;
  if (padded && dtype_bits < 8) {
    storage.bits = 8;
    storage.lanes = 1;
  }
  const int32_t status = dlmap__check_shape(ndim, shape, strides, storage, out, err);
  if (status != DLMAP_OK) return status;
  if (padded && dtype_bits >= 8) {
    char name[64];
    dlmap_dtype_format(dtype, name, sizeof name);
    return dlmap_raise_subbyte_padding_invalid(err, name);
  }
  if (data == NULL && out->count > 0) {
    return dlmap_raise_data_null(err, out->compact_bytes);
  }
  return DLMAP_OK;
}

int32_t dlmap__check_copyable(const dlmap__extent *extent, int32_t ndim, const int64_t *shape, const int64_t *strides,
                              dlmap_error *err) {
  if (extent->element_bits % 8 == 0 || dlmap__is_row_major(ndim, shape, strides)) return DLMAP_OK;
  return dlmap_raise_not_implemented(err, "Copying strided sub-byte data");
}

/* A runtime call of a copy's that failed (backend_call_failed, naming only the call) becomes runtime_copy_failed: the
 * step, the tensor's device, shape and byte extent, the target and the runtime's own text. Other errors stand. */
static int32_t copy_failed(const dlmap__transfer *t, int32_t status, const char *step, const dlmap__copy_layout *layout,
                           dlmap_error *err) {
  if (status != DLMAP_ERR_BACKEND_CALL_FAILED || (t->gpu == NULL && t->dst_gpu == NULL)) return status;
  /* The runtime that failed: the destination's where it allocates, else the source's (the copying runtime's side). */
  const dlmap_device_info *gpu_side = dlmap_device_type_find(t->dst_gpu != NULL ? t->to.device_type : t->from.device_type);
  const dlmap_platform_info *platform = gpu_side != NULL ? dlmap_platform_find(gpu_side->platform) : NULL;
  /* A scalar's shape pointer may be NULL, which the message would print as "(null)": its shape is "[]". */
  static const int64_t kNoDims[1] = {0};
  const bool scalar = layout->tensor_ndim <= 0;
  return dlmap_raise_runtime_copy_failed(err, step, t->from, scalar ? kNoDims : layout->shape,
                                         scalar ? 0 : layout->tensor_ndim, layout->bytes, t->to,
                                         platform != NULL ? platform->name : "GPU", dlmap__gpu_last_failure());
}

int32_t dlmap__copy_compact(const dlmap__transfer *t, const void *first, const dlmap__copy_layout *layout,
                            dlmap_stream_meaning meaning, int64_t stream, void *host_buffer, dlmap__copy_result *out,
                            dlmap_error *err) {
  memset(&out->gpu_copy, 0, sizeof out->gpu_copy);
  out->data = host_buffer;
  int32_t status = DLMAP_OK;
  const char *step = "Allocating the copy's memory";
  if (dlmap__transfer_gpu_destination(t)) {
    status = dlmap__transfer_allocate(t, (size_t)layout->bytes, &out->gpu_copy, err);
    if (status != DLMAP_OK) return copy_failed(t, status, step, layout, err);
    out->data = out->gpu_copy.memory;
  }
  if (layout->count > 0) { /* first may be NULL only without elements */
    step = "Copying the data";
    status = dlmap__transfer_copy(t, out->data, first, layout, err);
    if (status == DLMAP_OK) {
      step = "Waiting for the copy";
      status = dlmap__transfer_finish(t, false, meaning, stream, err);
    }
  }
  if (status != DLMAP_OK && out->gpu_copy.memory != NULL) {
    dlmap__transfer_release(t, &out->gpu_copy);
    out->gpu_copy.memory = NULL;
  }
  return status != DLMAP_OK ? copy_failed(t, status, step, layout, err) : DLMAP_OK;
}
