/* dlmap core — export (to_dlpack / __dlpack__): negotiate the version, place the data on the requested
 * device, copy when needed and allowed, validate the stream, set the flags, and hand out one heap block
 * holding the managed tensor, shape, strides (and the copied data) whose deleter runs exactly once. */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "src/layout.h"
#include "src/memory.h"
#include "src/placement.h"
#include "src/transfer.h"

/* One allocation per export. The managed tensor comes first, so the deleter's argument is the block. */
typedef struct export_block {
  union {
    DLManagedTensor legacy;
    struct DLManagedTensorVersioned versioned;
  } tensor;
  dlmap_allocator allocator; /* a copy: the caller's allocator struct need not outlive the export */
  void *owner;
  void (*release)(void *owner);
  void *gpu_copy;          /* a copy in GPU-runtime memory (device, pinned, managed), else NULL */
  const dlmap__gpu *gpu;   /* the runtime that allocated it, and which memory it is */
  dlmap_memory_kind gpu_memory;
  int32_t gpu_device;      /* the device it was allocated on (freed with that device current) */
  int64_t dims[]; /* shape[ndim] then strides[ndim]; a host copy follows at an aligned offset */
} export_block;

static void release_block(export_block *block) {
  if (block->gpu_copy != NULL) dlmap__gpu_release(block->gpu, block->gpu_memory, block->gpu_device, block->gpu_copy);
  if (block->release != NULL) block->release(block->owner);
  dlmap__release(&block->allocator, block);
}

static void legacy_deleter(DLManagedTensor *self) { release_block((export_block *)(void *)self); }

static void versioned_deleter(struct DLManagedTensorVersioned *self) { release_block((export_block *)(void *)self); }

/* The newest listed version below `until` (the version a legacy export speaks). */
static dlmap_version newest_before(dlmap_version until) {
  dlmap_version best = {0, 0};
  const dlmap_version_info *listed;
  for (size_t i = 0; (listed = dlmap_version_at(i)) != NULL; i++) {
    if (dlmap_version_compare(listed->version, until) < 0) best = listed->version;
  }
  return best;
}

/* newest_before(DLPack's legacy limit): a constant of the spec, found on first use (any thread may find it; all
 * store the same value), so that an export does not walk the version list (about 270 instructions, bench/). */
static dlmap_version newest_legacy_version(void) {
  static _Atomic uint64_t cached; /* (major << 32 | minor) + 1; 0 until found */
  uint64_t packed = atomic_load_explicit(&cached, memory_order_relaxed);
  if (packed == 0) {
    const dlmap_version v =
        newest_before(dlmap__version(DLMAP_ABI_LEGACY_UNTIL_MAJOR, DLMAP_ABI_LEGACY_UNTIL_MINOR));
    packed = ((uint64_t)v.major << 32 | v.minor) + 1;
    atomic_store_explicit(&cached, packed, memory_order_relaxed);
  }
  packed -= 1;
  return dlmap__version((uint32_t)(packed >> 32), (uint32_t)packed);
}

/* max_version → struct (the profile's ranges) and the version every value must be expressible in: a versioned
 * tensor is stamped min(max_version, current); a legacy one speaks the newest legacy version up to max_version. */
static int32_t negotiate(const dlmap_export_request *request, dlmap_struct_kind *structure, dlmap_version *version,
                         dlmap_error *err) {
  const int32_t status = dlmap_profile_struct_lookup(request->has_max_version, request->max_version, structure, err);
  if (status != DLMAP_OK) return status;
  const dlmap_version newest = *structure == DLMAP_STRUCT_LEGACY ? newest_legacy_version() : dlmap_version_current();
  *version = request->has_max_version && dlmap_version_compare(request->max_version, newest) < 0 ? request->max_version
                                                                                                : newest;
  return DLMAP_OK;
}

int32_t dlmap_export(const dlmap_array *array, const dlmap_export_request *request, dlmap_exported *out,
                     dlmap_error *err) {
  if (array == NULL) return dlmap__invalid_argument(err, "array", "must not be NULL");
  if (request == NULL) return dlmap__invalid_argument(err, "request", "must not be NULL");
  if (out == NULL) return dlmap__invalid_argument(err, "out", "must not be NULL");
  /* The caller's structs as this header lays them out: fields its struct_size does not have read as zero. */
  dlmap_array array_fields;
  dlmap_export_request request_fields;
  int32_t status = DLMAP__STRUCT_READ(array, &array_fields, dlmap_array, "array", err);
  if (status == DLMAP_OK) status = DLMAP__STRUCT_READ(request, &request_fields, dlmap_export_request, "request", err);
  array = &array_fields;
  request = &request_fields;
  if (status == DLMAP_OK) status = dlmap__check_copy_mode(request->copy, err);
  if (status != DLMAP_OK) return status;

  /* 1. The version: which struct, and which DLPack version every value must be expressible in. */
  dlmap_struct_kind structure = DLMAP_STRUCT_LEGACY; /* negotiate() sets it; -O2 cannot tell (maybe-uninitialized) */
  dlmap_version version;
  status = negotiate(request, &structure, &version, err);
  if (status != DLMAP_OK) return status;

  /* 2. The array itself: one device, of a type the profile exports from. */
  if (array->num_shards > 1) {
    return DLMAP_RAISE(err, DLMAP_ERR_TO_DLPACK_MULTI_DEVICE, dlmap_arg_int(DLMAP_ARG_NUM_DEVICES, array->num_shards));
  }
  const dlmap_device_info *source;
  status = dlmap_device_type_lookup(array->device_type, &source, err);
  if (status != DLMAP_OK) return status;
  if (!dlmap__export_accepts_source(array->device_type)) {
    char device[96];
    dlmap__describe_device(device, sizeof device, array->device_type, array->device_id);
    return DLMAP_RAISE(err, DLMAP_ERR_SOURCE_NOT_EXCHANGEABLE, dlmap_arg_str(DLMAP_ARG_DEVICE, device));
  }
  status = dlmap_dtype_validate(array->dtype, err);
  if (status != DLMAP_OK) return status;
  dlmap__extent extent;
  status = dlmap__check_shape(array->ndim, array->shape, array->strides, array->dtype, &extent, err);
  if (status != DLMAP_OK) return status;
  /* Padded sub-byte data (IS_SUBBYTE_TYPE_PADDED) stores each element in a byte of its own: its size, copies and
   * strided copies are those of 8-bit elements, not of packed ones. */
  const bool padded = array->subbyte_padded && extent.element_bits < 8;
  const uint64_t element_bits = padded ? 8 : extent.element_bits;
  const uint64_t data_bytes = padded ? extent.count : extent.compact_bytes;
  if (array->data == NULL && extent.count > 0) {
    return DLMAP_RAISE(err, DLMAP_ERR_DATA_NULL, dlmap_arg_uint(DLMAP_ARG_NBYTES, data_bytes));
  }
  if (array->subbyte_padded && extent.element_bits >= 8) {
    char name[64];
    dlmap_dtype_format(array->dtype, name, sizeof name);
    return DLMAP_RAISE(err, DLMAP_ERR_SUBBYTE_PADDING_INVALID, dlmap_arg_str(DLMAP_ARG_DTYPE, name));
  }

  /* 3. The target device: dl_device, or the array's own; the profile says which device types dl_device may name
   * (and whether device type 0, being falsy, means no dl_device). */
  const dlmap_profile_info *profile = dlmap_profile_current();
  const dlmap_device_info *target = source;
  int32_t target_id = array->device_id;
  if (request->has_dl_device && !(request->dl_device_type == 0 && profile->dl_device_falsy_is_none)) {
    target = dlmap_device_type_find(request->dl_device_type);
    if (target == NULL || !dlmap__export_accepts_target(request->dl_device_type, array->device_type)) {
      return DLMAP_RAISE(err, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE,
                         dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, request->dl_device_type));
    }
    target_id = request->dl_device_id;
    if (target_id < 0) {
      dlmap_platform_status platform_status; /* the count the message states is the runtime's, not a guess */
      dlmap_platform_probe(target->platform, &platform_status);
      return DLMAP_RAISE(err, DLMAP_ERR_DEVICE_ID_OUT_OF_RANGE, dlmap_arg_int(DLMAP_ARG_DEVICE_ID, target_id),
                         dlmap_arg_str(DLMAP_ARG_PLATFORM, dlmap_platform_find(target->platform)->name),
                         dlmap_arg_int(DLMAP_ARG_DEVICE_COUNT, platform_status.device_count));
    }
  }

  /* 4. The stream, read by the target device type's convention; a profile that passes streams through turns a
   * value the convention forbids into a host wait (always correct, never an error). */
  dlmap_stream_meaning stream;
  status = dlmap_stream_classify(target->value, request->has_stream, request->stream, &stream, err);
  if (status != DLMAP_OK && profile->stream == DLMAP_STREAM_POLICY_PASS_THROUGH) {
    status = DLMAP_RAISE(err, DLMAP_OK);
    stream = DLMAP_STREAM_HOST_SYNC;
  }
  if (status != DLMAP_OK) return status;

  /* Only a view of GPU-runtime memory has a stream to synchronise (dlmap__view_sync is a no-op otherwise). */
  const bool source_on_gpu = dlmap_platform_find(source->platform)->backend == DLMAP_BACKEND_GPU;

  /* 5. View or copy (placement.h): the host is one device whatever its id; host-accessible memory (pinned, managed)
   * is exported to the host without a copy, and to a GPU of its platform where the runtime confirms it. */
  const dlmap__placement placement =
      dlmap__place(source, array->device_id, array->data, target, target_id, request->copy == DLMAP_COPY_ALWAYS);
  const bool gpu_view = placement.kind == DLMAP__PLACE_GPU_VIEW;
  const bool need_copy = placement.kind == DLMAP__PLACE_COPY;
  if (need_copy && request->copy == DLMAP_COPY_NEVER) {
    char device[96], source_device[96];
    dlmap__describe_device(device, sizeof device, target->value, target_id);
    dlmap__describe_device(source_device, sizeof source_device, array->device_type, array->device_id);
    return DLMAP_RAISE(err, DLMAP_ERR_EXPORT_COPY_TO_DEVICE_FORBIDDEN, dlmap_arg_str(DLMAP_ARG_DEVICE, device),
                       dlmap_arg_str(DLMAP_ARG_SOURCE_DEVICE, source_device));
  }
  /* The CPU backend copies between host-accessible memories; anything else needs the GPU backend, as
   * does making the consumer's stream wait for a view of GPU memory (checked here, done last). */
  dlmap__transfer transfer;
  memset(&transfer, 0, sizeof transfer);
  if (need_copy) {
    /* The consumer's stream as the runtime's handle (NULL where it names none: -1, a host wait). */
    void *consumer = NULL;
    if (stream == DLMAP_STREAM_HANDLE) {
      consumer = (void *)(intptr_t)request->stream;
    } else if (stream == DLMAP_STREAM_LEGACY_DEFAULT || stream == DLMAP_STREAM_PER_THREAD_DEFAULT ||
               stream == DLMAP_STREAM_DEFAULT) {
      dlmap__gpu_default_stream(target->platform, stream, &consumer);
    }
    status = dlmap__transfer_plan(source, array->device_id, array->producer_stream, target, target_id, consumer,
                                  &transfer, err);
    if (status != DLMAP_OK) return status;
    if (element_bits % 8 != 0 && !dlmap__is_row_major(array->ndim, array->shape, array->strides)) {
      return DLMAP_RAISE(err, DLMAP_ERR_NOT_IMPLEMENTED,
                         dlmap_arg_str(DLMAP_ARG_WHAT, "Copying strided sub-byte data"));
    }
  } else if (!request->defer_stream_sync && source_on_gpu) {
    status = dlmap__view_sync(source, array->device_id, array->producer_stream, gpu_view ? target_id : array->device_id,
                              stream, request->stream, false, err);
    if (status != DLMAP_OK) return status;
  }
  const bool gpu_copy = need_copy && dlmap__transfer_gpu_destination(&transfer);

  /* 6. Flags, and whether the negotiated version can say everything the tensor needs (the profile may let a legacy
   * tensor carry any value the spec knows, and drop READ_ONLY, which a legacy tensor cannot carry). */
  const bool legacy = structure == DLMAP_STRUCT_LEGACY;
  uint64_t flags = 0;
  if (array->read_only && !need_copy && !(legacy && profile->legacy_drops_read_only)) flags |= DLMAP_FLAG_READ_ONLY;
  if (need_copy) flags |= DLMAP_FLAG_IS_COPIED;
  if (array->subbyte_padded) flags |= DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED;
  if (legacy && (flags & DLMAP_FLAG_READ_ONLY)) return DLMAP_RAISE(err, DLMAP_ERR_READ_ONLY_NEEDS_VERSIONED);
  if (!legacy || profile->gating == DLMAP_GATING_STRICT) {
    /* IS_COPIED is informational: a legacy consumer simply owns the copy without being told. */
    const uint64_t must_express = legacy ? (flags & ~DLMAP_FLAG_IS_COPIED) : flags;
    status = dlmap__check_in_version(target, array->dtype, must_express, version, err); /* dtype validated in 2. */
    if (status != DLMAP_OK) return status;
  }

  /* 7. One block: header, shape and strides, then the copy at an aligned offset. */
  const int32_t ndim = array->ndim;
  size_t header, total;
  if (!dlmap__align_size(sizeof(export_block) + 2 * (size_t)ndim * sizeof(int64_t), &header) ||
      (need_copy && data_bytes > SIZE_MAX - header)) {
    return DLMAP_RAISE(err, DLMAP_ERR_OUT_OF_MEMORY, dlmap_arg_uint(DLMAP_ARG_NBYTES, UINT64_MAX),
                       dlmap_arg_str(DLMAP_ARG_WHAT, "an export"));
  }
  total = header + (need_copy && !gpu_copy ? (size_t)data_bytes : 0);
  export_block *block = (export_block *)dlmap__allocate(request->allocator, total, DLMAP_DATA_ALIGNMENT);
  if (block == NULL) {
    return DLMAP_RAISE(err, DLMAP_ERR_OUT_OF_MEMORY, dlmap_arg_uint(DLMAP_ARG_NBYTES, total),
                       dlmap_arg_str(DLMAP_ARG_WHAT, "an export"));
  }
  memset(block, 0, sizeof *block);
  block->allocator = *dlmap__allocator_or_default(request->allocator);
  block->owner = array->owner;
  block->release = array->release;

  DLTensor *tensor = structure == DLMAP_STRUCT_LEGACY ? &block->tensor.legacy.dl_tensor
                                                      : &block->tensor.versioned.dl_tensor;
  int64_t *shape = block->dims, *strides = block->dims + ndim;
  if (ndim > 0) {
    memcpy(shape, array->shape, (size_t)ndim * sizeof(int64_t));
    if (array->strides != NULL && !need_copy) {
      memcpy(strides, array->strides, (size_t)ndim * sizeof(int64_t));
    } else {
      dlmap__compact_strides(ndim, shape, strides); /* strides are never NULL for ndim > 0 (DLPack 1.2) */
    }
  }
  tensor->ndim = ndim;
  tensor->shape = ndim > 0 ? shape : NULL;
  tensor->strides = ndim > 0 ? strides : NULL;
  tensor->dtype = array->dtype;
  tensor->device.device_type = (DLDeviceType)target->value;
  tensor->device.device_id = dlmap__on_host(target) ? 0 : target_id;
  if (need_copy) {
    char *copy = (char *)block + header;
    if (gpu_copy) {
      block->gpu = transfer.dst_gpu;
      block->gpu_memory = transfer.dst.kind;
      block->gpu_device = transfer.dst.device;
      status = dlmap__transfer_allocate(&transfer, (size_t)data_bytes, &block->gpu_copy, err);
      if (status != DLMAP_OK) {
        dlmap__release(&block->allocator, block);
        return status;
      }
      copy = (char *)block->gpu_copy;
    }
    if (extent.count > 0) { /* data may be NULL only without elements, and NULL + byte_offset is undefined */
      const char *first = (const char *)array->data + array->byte_offset;
      const int64_t packed = (int64_t)data_bytes; /* packed sub-byte data is compact here: its bytes */
      status = element_bits % 8 == 0
                   ? dlmap__transfer_copy(&transfer, copy, first, ndim, array->shape, array->strides,
                                          (size_t)(element_bits / 8), err)
                   : dlmap__transfer_copy(&transfer, copy, first, 1, &packed, NULL, 1, err);
      /* The consumer's stream waits for the copy (a host destination: the host does). */
      if (status == DLMAP_OK) status = dlmap__transfer_finish(&transfer, false, stream, request->stream, err);
      if (status != DLMAP_OK) {
        if (block->gpu_copy != NULL) dlmap__transfer_release(&transfer, block->gpu_copy);
        dlmap__release(&block->allocator, block);
        return status;
      }
    }
    tensor->data = copy;
    tensor->byte_offset = 0;
  } else {
    /* byte_offset is kept, not folded into data: on handle-based devices (OpenCL, Metal) data is an
     * opaque handle that must not be offset. */
    tensor->data = gpu_view ? placement.gpu_view_data : array->data;
    tensor->byte_offset = array->byte_offset;
    if (!request->defer_stream_sync && source_on_gpu) {
      status = dlmap__view_sync(source, array->device_id, array->producer_stream,
                                gpu_view ? target_id : array->device_id, stream, request->stream, true, err);
      if (status != DLMAP_OK) {
        dlmap__release(&block->allocator, block);
        return status;
      }
    }
  }

  memset(out, 0, sizeof *out);
  if (structure == DLMAP_STRUCT_LEGACY) {
    block->tensor.legacy.manager_ctx = block;
    block->tensor.legacy.deleter = legacy_deleter;
    out->legacy = &block->tensor.legacy;
  } else {
    block->tensor.versioned.version.major = version.major;
    block->tensor.versioned.version.minor = version.minor;
    block->tensor.versioned.manager_ctx = block;
    block->tensor.versioned.deleter = versioned_deleter;
    block->tensor.versioned.flags = flags;
    out->versioned = &block->tensor.versioned;
  }
  out->structure = structure;
  out->version = version;
  out->copied = need_copy;
  out->stream = stream;
  return DLMAP_OK;
}
