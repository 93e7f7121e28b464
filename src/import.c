/* dlmap core — import (from_dlpack): check the version, validate every field a producer can get wrong,
 * map the device, then hand out a zero-copy view or a copy, owning the producer's tensor on every path
 * (its deleter runs exactly once, on release or before an error returns). */
#include <stddef.h>
#include <string.h>

#include "src/layout.h"
#include "src/memory.h"
#include "src/placement.h"
#include "src/transfer.h"

/* The producer's tensor, whichever struct it came in. */
typedef struct producer {
  void *managed;
  bool versioned;
  DLTensor *tensor;
  uint64_t flags;
  dlmap_version version;
} producer;

static void call_deleter(void *managed, bool versioned) {
  if (managed == NULL) return;
  if (versioned) {
    struct DLManagedTensorVersioned *t = (struct DLManagedTensorVersioned *)managed;
    if (t->deleter != NULL) t->deleter(t);
  } else {
    DLManagedTensor *t = (DLManagedTensor *)managed;
    if (t->deleter != NULL) t->deleter(t);
  }
}

/* Every error path: release the producer's tensor, then report. */
static int32_t fail(const producer *p, int32_t status) {
  call_deleter(p->managed, p->versioned);
  return status;
}

static int32_t unsupported_device(const producer *p, dlmap_error *err, int32_t device_type, const char *name) {
  char array[96];
  dlmap__writer w;
  dlmap__writer_init(&w, array, sizeof array);
  dlmap__put_str(&w, name != NULL ? name : "unknown");
  dlmap__put_str(&w, " tensor of ndim ");
  dlmap__put_int(&w, p->tensor->ndim);
  dlmap__writer_finish(&w);
  return fail(p,
              DLMAP_RAISE(err, DLMAP_ERR_IMPORT_UNSUPPORTED_DEVICE_TYPE,
                          dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, device_type), dlmap_arg_str(DLMAP_ARG_ARRAY, array)));
}

/* Whether the tensor's strides fit a layout policy (NULL strides are row-major). */
static bool layout_fits(dlmap_layout_policy layout, const DLTensor *t) {
  if (layout == DLMAP_LAYOUT_ROW_MAJOR) return dlmap__is_row_major(t->ndim, t->shape, t->strides);
  if (layout == DLMAP_LAYOUT_COMPACT_PERMUTATION) return dlmap__is_compact_permutation(t->ndim, t->shape, t->strides);
  return true;
}

static int32_t layout_error(const producer *p, dlmap_error *err, dlmap_layout_policy layout) {
  const DLTensor *t = p->tensor;
  const int32_t shown = t->ndim < 16 ? t->ndim : 16;
  return fail(
      p, DLMAP_RAISE(
             err, layout == DLMAP_LAYOUT_ROW_MAJOR ? DLMAP_ERR_STRIDES_NOT_ROW_MAJOR : DLMAP_ERR_STRIDES_NOT_COMPACT,
             dlmap_arg_ints(DLMAP_ARG_SHAPE, t->shape, shown), dlmap_arg_ints(DLMAP_ARG_STRIDES, t->strides, shown)));
}

static int32_t import_tensor(const producer *p, const dlmap_import_request *request, dlmap_imported *out,
                             dlmap_error *err) {
  static const dlmap_import_request kDefaults = {.struct_size = DLMAP_IMPORT_REQUEST_STRUCT_SIZE};
  if (request == NULL) request = &kDefaults;
  if (out == NULL) {
    return fail(p, dlmap__invalid_argument(err, "out", "must not be NULL"));
  }
  /* The caller's request as this header lays it out: fields its struct_size does not have read as zero. */
  dlmap_import_request request_fields;
  int32_t status = DLMAP__STRUCT_READ(request, &request_fields, dlmap_import_request, "request", err);
  request = &request_fields;
  if (status == DLMAP_OK) status = dlmap__check_copy_mode(request->copy, err);
  if (status != DLMAP_OK) return fail(p, status);
  if (request->layout != DLMAP_LAYOUT_ANY && request->layout != DLMAP_LAYOUT_COMPACT_PERMUTATION &&
      request->layout != DLMAP_LAYOUT_ROW_MAJOR) {
    return fail(
        p, dlmap__invalid_argument(
               err, "layout", "must be DLMAP_LAYOUT_ANY, DLMAP_LAYOUT_COMPACT_PERMUTATION or DLMAP_LAYOUT_ROW_MAJOR"));
  }
  if ((request->alignment & (request->alignment - 1)) != 0) {
    return fail(p, dlmap__invalid_argument(err, "alignment", "must be 0 or a power of two"));
  }
  if (request->num_shards > 1) {
    return fail(p, DLMAP_RAISE(err, DLMAP_ERR_FROM_DLPACK_MULTI_DEVICE,
                               dlmap_arg_int(DLMAP_ARG_NUM_DEVICES, request->num_shards)));
  }
  const DLTensor *t = p->tensor;
  const dlmap_profile_info *profile = dlmap_profile_current();

  /* 1. Values: device type, dtype and flags known (and of the widths and lanes the profile imports), and
   * (versioned) expressible in the tensor's version; only then whether the profile imports from the device (a 1.1
   * tensor claiming kDLTrn is malformed before it is unservable). A __dlpack_device__ report replaces the tensor's device type only where
   * the spec's memory kinds allow it: host memory reported as pinned host memory (PyTorch's pinned
   * tensors). Any other disagreement could make a device address read on the host, or the reverse. */
  int32_t device_type = (int32_t)t->device.device_type;
  if (request->has_reported_device && request->reported_device_type != device_type) {
    const dlmap_device_info *own = dlmap_device_type_find(device_type);
    const dlmap_device_info *reported = dlmap_device_type_find(request->reported_device_type);
    if (own == NULL || reported == NULL || own->memory != DLMAP_MEMORY_HOST ||
        reported->memory != DLMAP_MEMORY_HOST_PINNED) {
      char source[96];
      dlmap__describe_device(source, sizeof source, device_type, t->device.device_id);
      return fail(p, DLMAP_RAISE(err, DLMAP_ERR_DEVICE_REPORT_MISMATCH,
                                 dlmap_arg_str(DLMAP_ARG_DEVICE_TYPE_NAME,
                                               dlmap_device_type_name(request->reported_device_type)),
                                 dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, request->reported_device_type),
                                 dlmap_arg_str(DLMAP_ARG_SOURCE_DEVICE, source)));
    }
    device_type = request->reported_device_type;
  }
  const dlmap_device_info *device = dlmap_device_type_find(device_type);
  if (device == NULL) return unsupported_device(p, err, device_type, NULL);
  if (profile->whole_bytes && t->dtype.bits % 8 != 0) {
    return fail(p,
                DLMAP_RAISE(err, DLMAP_ERR_DTYPE_BITS_NOT_WHOLE_BYTES, dlmap_arg_uint(DLMAP_ARG_BITS, t->dtype.bits)));
  }
  if (profile->scalar && t->dtype.lanes != 1) {
    return fail(p, DLMAP_RAISE(err, DLMAP_ERR_DTYPE_LANES_NOT_ONE, dlmap_arg_uint(DLMAP_ARG_LANES, t->dtype.lanes)));
  }
  status = dlmap_dtype_validate(t->dtype, err);
  if (status != DLMAP_OK) return fail(p, status);
  if (p->versioned) {
    status = dlmap__check_in_version(device, t->dtype, p->flags, p->version, err);
    if (status != DLMAP_OK) return fail(p, status);
  }
  if (!dlmap__import_accepts(device_type)) {
    return unsupported_device(p, err, device_type, device->name);
  }

  /* 2. Shape, strides, data and offset. Padded sub-byte elements take one byte each in memory, so
   * extents, bounds and copies count them as bytes. */
  const bool padded = (p->flags & DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0;
  const uint64_t dtype_bits = (uint64_t)t->dtype.bits * t->dtype.lanes;
  DLDataType storage = t->dtype;
  if (padded && dtype_bits < 8) {
    storage.bits = 8;
    storage.lanes = 1;
  }
  dlmap__extent extent;
  status = dlmap__check_shape(t->ndim, t->shape, t->strides, storage, &extent, err);
  if (status != DLMAP_OK) return fail(p, status);
  if (padded && dtype_bits >= 8) {
    char name[64];
    dlmap_dtype_format(t->dtype, name, sizeof name);
    return fail(p, DLMAP_RAISE(err, DLMAP_ERR_SUBBYTE_PADDING_INVALID, dlmap_arg_str(DLMAP_ARG_DTYPE, name)));
  }
  if (t->data == NULL && extent.count > 0) {
    return fail(p, DLMAP_RAISE(err, DLMAP_ERR_DATA_NULL, dlmap_arg_uint(DLMAP_ARG_NBYTES, extent.compact_bytes)));
  }
  const uintptr_t base = (uintptr_t)t->data;
  uintptr_t first = base;
  if (dlmap__direct_address(device) && extent.count > 0) {
    /* data + byte_offset + every byte the strides reach must stay inside the address space. */
    uintptr_t last;
    if (t->byte_offset > UINTPTR_MAX - base || (first = base + (uintptr_t)t->byte_offset) < (uintptr_t)-extent.lo_bytes ||
        (uint64_t)extent.hi_bytes > UINTPTR_MAX - first || __builtin_add_overflow(first, (uintptr_t)extent.hi_bytes, &last)) {
      return fail(
          p, DLMAP_RAISE(err, DLMAP_ERR_BYTE_OFFSET_OVERFLOW, dlmap_arg_uint(DLMAP_ARG_BYTE_OFFSET, t->byte_offset),
                         dlmap_arg_ptr(DLMAP_ARG_POINTER, t->data)));
    }
  }

  /* 3. Where the result must live, and whether a view can serve. */
  const dlmap_device_info *target = device;
  int32_t target_id = t->device.device_id;
  if (request->has_device) {
    target = dlmap_device_type_find(request->device_type);
    if (target == NULL || !dlmap__import_accepts(request->device_type)) {
      return fail(p, DLMAP_RAISE(err, DLMAP_ERR_IMPORT_UNSUPPORTED_TARGET_DEVICE,
                                 dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, request->device_type)));
    }
    target_id = request->device_id;
  }
  const dlmap__placement placement =
      dlmap__place(device, t->device.device_id, t->data, target, target_id, request->copy == DLMAP_COPY_ALWAYS);
  const bool moves = placement.moves;
  /* The strides a view may have: the caller's layout and the profile's; a profile may refuse the others even with
   * a copy (JAX: only a permutation of a compact layout; a tensor without elements has no layout to refuse). */
  const bool profile_layout_ok = layout_fits(profile->view_layout, t);
  if (!profile_layout_ok && profile->other_layouts_refused) return layout_error(p, err, profile->view_layout);
  const bool layout_ok = profile_layout_ok && layout_fits(request->layout, t);
  const uint64_t alignment = request->alignment > profile->alignment ? request->alignment : profile->alignment;
  const bool aligned = alignment <= 1 || !dlmap__direct_address(device) || extent.count == 0 || first % alignment == 0;
  const bool read_only = (p->flags & DLMAP_FLAG_READ_ONLY) != 0;
  const bool need_copy =
      placement.kind == DLMAP__PLACE_COPY || !layout_ok || !aligned || (read_only && request->writable);

  if (need_copy && request->copy == DLMAP_COPY_NEVER) {
    if (moves) {
      char wanted[96], source[96];
      dlmap__describe_device(wanted, sizeof wanted, target->value, target_id);
      dlmap__describe_device(source, sizeof source, device->value, t->device.device_id);
      return fail(p,
                  DLMAP_RAISE(err, DLMAP_ERR_IMPORT_COPY_TO_DEVICE_FORBIDDEN, dlmap_arg_str(DLMAP_ARG_DEVICE, wanted),
                              dlmap_arg_str(DLMAP_ARG_SOURCE_DEVICE, source)));
    }
    if (!layout_ok) {
      return layout_error(p, err, profile_layout_ok ? request->layout : profile->view_layout);
    }
    if (!aligned) {
      return fail(p, DLMAP_RAISE(err, DLMAP_ERR_UNALIGNED_DATA, dlmap_arg_ptr(DLMAP_ARG_POINTER, (const void *)first),
                                 dlmap_arg_uint(DLMAP_ARG_ALIGNMENT, alignment)));
    }
    return fail(p, DLMAP_RAISE(err, DLMAP_ERR_READ_ONLY_NOT_WRITABLE));
  }

  memset(out, 0, offsetof(dlmap_imported, strides_)); /* strides_ is written only when used */
  out->version = p->version;
  out->tensor = *t;
  out->subbyte_padded = padded;
  if (!need_copy) {
    /* A view: the producer's memory, owned until release. */
    if (t->ndim > 0 && t->strides == NULL) {
      dlmap__compact_strides(t->ndim, t->shape, out->strides_);
      out->tensor.strides = out->strides_;
    }
    if (placement.kind == DLMAP__PLACE_HOST_VIEW) {
      out->tensor.device.device_type = (DLDeviceType)target->value;
      out->tensor.device.device_id = 0;
    } else if (placement.kind == DLMAP__PLACE_GPU_VIEW) {
      out->tensor.data = placement.gpu_view_data;
      out->tensor.device.device_type = (DLDeviceType)target->value;
      out->tensor.device.device_id = target_id;
    } else if (request->has_reported_device) {
      out->tensor.device.device_type = (DLDeviceType)device_type; /* the report wins (pinned host memory) */
    }
    out->read_only = read_only;
    out->managed_ = p->managed;
    out->versioned_ = p->versioned;
    return DLMAP_OK;
  }

  /* A copy: into GPU memory when the target is device memory or the tensor moves to a GPU platform's
   * memory, else into host memory (reported as kDLCPU). The CPU backend copies host-readable memory, the
   * GPU backend the rest, on the consumer's stream, and the copy is complete before the producer's tensor
   * is released (its memory may be reused as soon as the deleter runs). */
  const bool gpu_destination = !dlmap_memory_kind_host_accessible(target->memory) || (moves && !dlmap__on_host(target));
  const dlmap_device_info *destination = gpu_destination ? target : dlmap_device_type_find(DLMAP_DEVICE_CPU);
  const int32_t destination_id = gpu_destination ? target_id : 0;
  dlmap__transfer transfer;
  status = dlmap__transfer_plan(device, t->device.device_id, request->consumer_stream, destination, destination_id,
                                request->consumer_stream, &transfer, err);
  if (status != DLMAP_OK) return fail(p, status);
  if (extent.element_bits % 8 != 0 && !dlmap__is_row_major(t->ndim, t->shape, t->strides)) {
    return fail(
        p, DLMAP_RAISE(err, DLMAP_ERR_NOT_IMPLEMENTED, dlmap_arg_str(DLMAP_ARG_WHAT, "Copying strided sub-byte data")));
  }
  /* One allocation: shape and strides (the producer's are released below), then the aligned data. */
  const size_t copy_alignment = alignment > DLMAP_DATA_ALIGNMENT ? (size_t)alignment : DLMAP_DATA_ALIGNMENT;
  const size_t dims_bytes = 2 * (size_t)t->ndim * sizeof(int64_t);
  const size_t header = (dims_bytes + copy_alignment - 1) / copy_alignment * copy_alignment;
  if (extent.compact_bytes > SIZE_MAX - header) {
    return fail(p, DLMAP_RAISE(err, DLMAP_ERR_OUT_OF_MEMORY, dlmap_arg_uint(DLMAP_ARG_NBYTES, extent.compact_bytes),
                               dlmap_arg_str(DLMAP_ARG_WHAT, "an imported copy")));
  }
  const uint64_t host_bytes = gpu_destination ? 0 : extent.compact_bytes;
  char *block = (char *)dlmap__allocate(request->allocator, header + (size_t)host_bytes, copy_alignment);
  if (block == NULL) {
    return fail(p, DLMAP_RAISE(err, DLMAP_ERR_OUT_OF_MEMORY, dlmap_arg_uint(DLMAP_ARG_NBYTES, header + host_bytes),
                               dlmap_arg_str(DLMAP_ARG_WHAT, "an imported copy")));
  }
  char *data = block + header;
  void *gpu_copy = NULL;
  if (gpu_destination) {
    status = dlmap__transfer_allocate(&transfer, (size_t)extent.compact_bytes, &gpu_copy, err);
    if (status != DLMAP_OK) {
      dlmap__release(request->allocator, block);
      return fail(p, status);
    }
    data = (char *)gpu_copy;
  }
  if (extent.count > 0) {
    const int64_t packed = (int64_t)extent.compact_bytes; /* sub-byte data is compact here: its bytes */
    status = extent.element_bits % 8 == 0
                 ? dlmap__transfer_copy(&transfer, data, (const void *)first, t->ndim, t->shape, t->strides,
                                        (size_t)(extent.element_bits / 8), err)
                 : dlmap__transfer_copy(&transfer, data, (const void *)first, 1, &packed, NULL, 1, err);
    if (status == DLMAP_OK) status = dlmap__transfer_finish(&transfer, true, DLMAP_STREAM_HOST_SYNC, 0, err);
    if (status != DLMAP_OK) {
      if (gpu_copy != NULL) dlmap__transfer_release(&transfer, gpu_copy);
      dlmap__release(request->allocator, block);
      return fail(p, status);
    }
  }
  int64_t *shape = (int64_t *)(void *)block, *strides = shape + t->ndim;
  if (t->ndim > 0) memcpy(shape, t->shape, (size_t)t->ndim * sizeof(int64_t));
  dlmap__compact_strides(t->ndim, shape, strides);
  out->tensor.shape = t->ndim > 0 ? shape : NULL;
  out->tensor.strides = t->ndim > 0 ? strides : NULL;
  out->tensor.data = data;
  out->tensor.byte_offset = 0;
  out->tensor.device.device_type = (DLDeviceType)destination->value; /* a host copy is plain host memory */
  out->tensor.device.device_id = destination_id;
  out->gpu_copy_ = gpu_copy;
  out->gpu_platform_ = (int32_t)destination->platform;
  out->gpu_memory_ = (int32_t)destination->memory;
  out->allocator_ = *dlmap__allocator_or_default(request->allocator);
  out->copy_ = block;
  out->copied = true;
  call_deleter(p->managed, p->versioned); /* the data was copied: the producer's tensor is done */
  return DLMAP_OK;
}

int32_t dlmap_import_versioned(struct DLManagedTensorVersioned *tensor, const dlmap_import_request *request,
                               dlmap_imported *out, dlmap_error *err) {
  if (tensor == NULL) {
    return dlmap__invalid_argument(err, "tensor", "must not be NULL");
  }
  producer p = {tensor, true, NULL, 0, {tensor->version.major, tensor->version.minor}};
  /* The major version first, and nothing else read before it (the ABI's rule). */
  if (dlmap_version_struct(p.version) != DLMAP_STRUCT_VERSIONED) {
    return fail(&p,
                DLMAP_RAISE(err, DLMAP_ERR_VERSION_MAJOR_UNSUPPORTED, dlmap_arg_version(DLMAP_ARG_VERSION, p.version),
                            dlmap_arg_version(DLMAP_ARG_SUPPORTED_VERSION, dlmap_version_current())));
  }
  p.tensor = &tensor->dl_tensor;
  p.flags = tensor->flags;
  return import_tensor(&p, request, out, err);
}

int32_t dlmap_import_legacy(DLManagedTensor *tensor, const dlmap_import_request *request, dlmap_imported *out,
                            dlmap_error *err) {
  if (tensor == NULL) {
    return dlmap__invalid_argument(err, "tensor", "must not be NULL");
  }
  producer p = {tensor, false, &tensor->dl_tensor, 0, {0, 0}};
  return import_tensor(&p, request, out, err);
}

void dlmap_imported_release(dlmap_imported *imported) {
  if (imported == NULL) return;
  call_deleter(imported->managed_, imported->versioned_);
  if (imported->gpu_copy_ != NULL) {
    dlmap__gpu_release(dlmap__gpu_loaded((dlmap_platform)imported->gpu_platform_),
                       (dlmap_memory_kind)imported->gpu_memory_, imported->tensor.device.device_id, imported->gpu_copy_);
  }
  if (imported->copy_ != NULL) dlmap__release(&imported->allocator_, imported->copy_);
  memset(imported, 0, offsetof(dlmap_imported, strides_));
}
