/* dlmap core — export (to_dlpack / __dlpack__) as named steps: negotiate the version, validate the array, choose
 * the target, read the stream, place (view or copy), stamp the flags, allocate one heap block holding the managed
 * tensor, shape, strides (and the copied data), copy or view, and hand it out; its deleter runs exactly once.
 * dlmap_export itself is in src/export_plan_cache.c: it first asks this thread's remembered plan, whose export then
 * makes no call into this file, and runs these steps (dlmap__export_unplanned) only where the plan does not serve. */
#include <stddef.h>
#include <string.h>

#include "src/device_claim.h"
#include "src/exchange.h"
#include "src/export.h"
#include "src/memory.h"
#include "src/placement.h"
#include "src/transfer.h"

/* What a block's release does on a GPU (issue 64), kept after its dims:
 * - a copy in GPU memory (device, pinned, managed) that the block owns: its buffer (where it came from and goes back
 *   to), released on the consumer's stream (dlmap__release_stream);
 * - a view of GPU memory whose consumer named a stream: the array's producer stream is made to wait for the work the
 *   consumer queued there before the release, so that the producer's next write or stream-ordered free of the memory
 *   (dlmap's own copies are freed on their holder's stream) cannot overtake it. Several consumers on several streams
 *   each add their wait. */
typedef struct dlmap__export_gpu_record {
  const dlmap__gpu *gpu;
  void *release_stream;     /* the consumer's stream (a runtime handle) */
  int32_t consumer_device;  /* the device whose stream release_stream is */
  dlmap__gpu_buffer buffer; /* a copy's; memory NULL for a view */
  int32_t device;           /* a view: the array's device, and its producer stream */
  void *producer_stream;
} gpu_record;

/* Out of line: a host block's release saves no registers for it. */
__attribute__((noinline)) static void release_gpu(const gpu_record *r) {
  if (r->gpu == NULL) return;
  if (r->buffer.memory != NULL) {
    dlmap__gpu_release(r->gpu, &r->buffer, r->release_stream);
  } else { /* the producer's stream waits for the consumer's (an event; a failure leaves nothing better to do) */
    (void)dlmap__gpu_stream_wait(r->gpu, r->consumer_device, r->release_stream, r->device, DLMAP_STREAM_HANDLE,
                                 (int64_t)(intptr_t)r->producer_stream, NULL);
  }
}

static void release_block(dlmap__export_block *block) {
  if (block->gpu != NULL) release_gpu(block->gpu);
  if (block->release != NULL) block->release(block->owner);
  block->free_block(block->allocator_ctx, block);
}

/* The block keeps the allocator that made it (resolved: never the NULL default). */
static void keep_allocator(dlmap__export_block *block, const dlmap_allocator *allocator) {
  block->free_block = allocator->release;
  block->allocator_ctx = allocator->ctx;
}

static void legacy_deleter(DLManagedTensor *self) { release_block((dlmap__export_block *)(void *)self); }

static void versioned_deleter(struct DLManagedTensorVersioned *self) {
  release_block((dlmap__export_block *)(void *)self);
}

const dlmap__managed_fields dlmap__managed_fields_of[3] = {
    [DLMAP_STRUCT_LEGACY] = {offsetof(dlmap__export_block, tensor.legacy.dl_tensor),
                             offsetof(dlmap__export_block, tensor.legacy.manager_ctx),
                             offsetof(dlmap_exported, legacy)},
    [DLMAP_STRUCT_VERSIONED] = {offsetof(dlmap__export_block, tensor.versioned.dl_tensor),
                                offsetof(dlmap__export_block, tensor.versioned.manager_ctx),
                                offsetof(dlmap_exported, versioned)},
};

/* 1. max_version → struct (the profile's ranges) and the version every value must be expressible in: a versioned
 * tensor is stamped min(max_version, current), or the profile's fixed export.stamp (which the generator keeps at or
 * below every versioned range's start); a legacy one speaks the newest legacy version up to max_version. */
static int32_t negotiate(const dlmap_array *array, const dlmap_export_request *request, dlmap__export_steps *plan,
                         dlmap_error *err) {
  plan->structure = DLMAP_STRUCT_LEGACY; /* the lookup sets it; -O2 cannot tell (maybe-uninitialized) */
  const int32_t status =
      dlmap_profile_struct_lookup(request->has_max_version, request->max_version, &plan->structure, err);
  if (status != DLMAP_OK) return status;
  /* export.max_version.absent_read_only: max_version=None for a read-only array */
  if (!request->has_max_version && array->read_only) {
    plan->structure = dlmap_profile_current()->absent_read_only_struct;
  }
  const dlmap_version newest =
      plan->structure == DLMAP_STRUCT_LEGACY ? dlmap__legacy_newest() : dlmap_version_current();
  plan->version = request->has_max_version && dlmap_version_compare(request->max_version, newest) < 0
                      ? request->max_version
                      : newest;
  if (plan->structure == DLMAP_STRUCT_VERSIONED && dlmap_profile_current()->stamp_fixed) {
    plan->version = dlmap_profile_current()->stamp;
  }
  return DLMAP_OK;
}

/* 2. The array itself: one device, of a type the profile exports from, a valid dtype and storage. */
static int32_t validate(const dlmap_array *array, dlmap__export_steps *plan, dlmap_error *err) {
  if (array->num_shards > 1) {
    return dlmap_raise_to_dlpack_multi_device(err, array->num_shards);
  }
  int32_t status = dlmap_device_type_lookup(array->device_type, &plan->source, err);
  if (status != DLMAP_OK) return status;
  if (!dlmap__export_accepts_source(array->device_type)) {
    return dlmap_raise_source_not_exchangeable(err, dlmap__device(array->device_type, array->device_id));
  }
  status = dlmap_dtype_validate(array->dtype, err);
  /* where the platform's runtime is loaded, the array's device id is below its device count (src/device_claim.h) */
  if (status == DLMAP_OK) status = dlmap__device_id_check(plan->source, array->device_id, err);
  if (status != DLMAP_OK) return status;
  const dlmap_backend backend = dlmap_platform_find(plan->source->platform)->backend;
  plan->source_on_gpu = backend == DLMAP_BACKEND_GPU;
  /* export.byte_offset fold, where data is an address: a device type a dlmap backend serves (else maybe a handle) */
  plan->fold_byte_offset = backend != DLMAP_BACKEND_NONE && dlmap_profile_current()->byte_offset_folded;
  return dlmap__check_storage(array->ndim, array->shape, array->strides, array->dtype, array->subbyte_padded,
                              array->data, &plan->extent, err);
}

/* 3. The target device: dl_device, or the array's own; the profile says which device types dl_device may name
 * (and whether device type 0, being falsy, means no dl_device, and whether host memory is device 0 only). */
static int32_t choose_target(const dlmap_array *array, const dlmap_export_request *request, dlmap__export_steps *plan,
                             dlmap_error *err) {
  plan->target = plan->source;
  plan->target_id = array->device_id;
  if (!request->has_dl_device || (request->dl_device_type == 0 && dlmap_profile_current()->dl_device_falsy_is_none)) {
    return DLMAP_OK;
  }
  const dlmap_device_info *target = dlmap_device_type_find(request->dl_device_type);
  if (target == NULL || !dlmap__export_accepts_target(request->dl_device_type, array->device_type)) {
    return dlmap_raise_export_unsupported_device_type(err, request->dl_device_type);
  }
  const bool own = request->dl_device_type == array->device_type && request->dl_device_id == array->device_id;
  if (dlmap_profile_current()->host_id_zero && dlmap__on_host(target) && request->dl_device_id != 0 && !own) {
    return dlmap_raise_export_host_id_not_zero(err, request->dl_device_type, request->dl_device_id);
  }
  if (request->dl_device_id < 0) {
    dlmap_platform_status platform_status; /* the count the message states is the runtime's, not a guess */
    dlmap_platform_probe(target->platform, &platform_status);
    return dlmap_raise_device_id_out_of_range(err, request->dl_device_id, dlmap_platform_find(target->platform)->name,
                                              platform_status.device_count);
  }
  plan->target = target;
  plan->target_id = request->dl_device_id;
  return dlmap__device_id_check(target, request->dl_device_id, err); /* where its runtime is loaded */
}

/* 4. The stream, read by the target device type's convention. The profile's stream policy decides what a value the
 * convention forbids is: an error (validate), or a host wait (pass_through: always correct, never an error); or
 * refuses every stream but None whatever the convention (none_only). export.stream_no_sync: a value some convention
 * reads as no_sync (-1) means no synchronisation on every device type, whatever its own convention allows. */
static int32_t read_stream(const dlmap_export_request *request, dlmap__export_steps *plan, dlmap_error *err) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  if (request->has_stream && profile->stream == DLMAP_STREAM_POLICY_NONE_ONLY) {
    return dlmap_raise_stream_not_none(err, request->stream);
  }
  const bool pass_through = profile->stream == DLMAP_STREAM_POLICY_PASS_THROUGH;
  const bool no_sync = request->has_stream && profile->stream_no_sync && dlmap__stream_value_no_sync(request->stream);
  const int32_t status = dlmap_stream_classify(plan->target->value, request->has_stream, request->stream, &plan->stream,
                                               pass_through || no_sync ? NULL : err);
  if (status == DLMAP_OK) return DLMAP_OK;
  if (no_sync) {
    plan->stream = DLMAP_STREAM_NO_SYNC;
    return DLMAP_OK;
  }
  if (!pass_through) return status;
  plan->stream = DLMAP_STREAM_HOST_SYNC;
  return DLMAP_OK;
}

/* The consumer's stream as the runtime's handle (NULL where it names none: -1, a host wait). */
static void *consumer_stream(const dlmap_export_request *request, const dlmap__export_steps *plan) {
  void *consumer = NULL;
  if (plan->stream == DLMAP_STREAM_HANDLE) {
    consumer = (void *)(intptr_t)request->stream;
  } else if (plan->stream == DLMAP_STREAM_LEGACY_DEFAULT || plan->stream == DLMAP_STREAM_PER_THREAD_DEFAULT ||
             plan->stream == DLMAP_STREAM_DEFAULT) {
    dlmap__gpu_default_stream(plan->target->platform, plan->stream, &consumer);
  }
  return consumer;
}

/* The device whose stream a view's consumer uses: the target GPU for a GPU view, else the array's own. */
static int32_t consumer_device(const dlmap_array *array, const dlmap__export_steps *plan) {
  return plan->placement.kind == DLMAP__PLACE_GPU_VIEW ? plan->target_id : array->device_id;
}

/* 5. View or copy (placement.h): the host is one device whatever its id; host-accessible memory (pinned, managed)
 * is exported to the host without a copy, and to a GPU of its platform where the runtime confirms it. A copy is
 * planned (the CPU backend copies between host-accessible memories, the GPU backend the rest); a view of GPU memory
 * checks now that the consumer's stream can be made to wait (done last, in view()). */
static int32_t place(const dlmap_array *array, const dlmap_export_request *request, dlmap__export_steps *plan,
                     dlmap_error *err) {
  plan->placement = dlmap__place(plan->source, array->device_id, array->data, 0, plan->target, plan->target_id,
                                 request->copy == DLMAP_COPY_ALWAYS);
  plan->copy = plan->placement.kind == DLMAP__PLACE_COPY;
  memset(&plan->transfer, 0, sizeof plan->transfer);
  if (plan->copy && request->copy == DLMAP_COPY_NEVER) {
    return dlmap_raise_export_copy_to_device_forbidden(err, dlmap__device(plan->target->value, plan->target_id),
                                                       dlmap__device(array->device_type, array->device_id));
  }
  if (plan->copy) {
    const int32_t status = dlmap__transfer_plan(plan->source, array->device_id, array->producer_stream, plan->target,
                                                plan->target_id, consumer_stream(request, plan), &plan->transfer, err);
    if (status != DLMAP_OK) return status;
    dlmap__transfer_use(&plan->transfer, request->device_allocator);
    return dlmap__check_copyable(&plan->extent, array->ndim, array->shape, array->strides, err);
  }
  if (request->defer_stream_sync || !plan->source_on_gpu) return DLMAP_OK;
  return dlmap__view_sync(plan->source, array->device_id, array->producer_stream, consumer_device(array, plan),
                          plan->stream, request->stream, false, err);
}

/* 6. Flags, and whether the negotiated version can say everything the tensor needs (the profile may let a legacy
 * tensor carry any value the spec knows, drop READ_ONLY, which a legacy tensor cannot carry, and leave IS_COPIED
 * unset on a copy). */
static int32_t stamp(const dlmap_array *array, dlmap__export_steps *plan, dlmap_error *err) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  const bool legacy = plan->structure == DLMAP_STRUCT_LEGACY;
  plan->flags = 0;
  if (array->read_only && !plan->copy && !(legacy && profile->legacy_drops_read_only)) {
    plan->flags |= DLMAP_FLAG_READ_ONLY;
  }
  if (plan->copy && profile->flag_is_copied) plan->flags |= DLMAP_FLAG_IS_COPIED; /* export.flag_is_copied */
  if (array->subbyte_padded) plan->flags |= DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED;
  if (legacy && (plan->flags & DLMAP_FLAG_READ_ONLY)) return dlmap_raise_read_only_needs_versioned(err);
  if (legacy && profile->gating != DLMAP_GATING_STRICT) return DLMAP_OK;
  /* IS_COPIED is informational: a legacy consumer simply owns the copy without being told. */
  const uint64_t must_express = legacy ? (plan->flags & ~DLMAP_FLAG_IS_COPIED) : plan->flags;
  return dlmap__check_in_version(plan->target, array->dtype, must_express, plan->version, err); /* dtype: 2. */
}

/* Whether the block's release has GPU work (gpu_record): a copy into GPU memory; a view of GPU memory whose consumer
 * named a stream the release can be ordered on (a deferred wait leaves that to the caller, as the wait itself). */
static bool gpu_recorded(const dlmap_export_request *request, const dlmap__export_steps *plan) {
  if (plan->copy) return dlmap__transfer_gpu_destination(&plan->transfer);
  return plan->source_on_gpu && !request->defer_stream_sync &&
         dlmap__release_stream(plan->target->platform, plan->stream, request->stream) != DLMAP__GPU_NO_STREAM;
}

/* 7. One block: header, shape and strides, then at an aligned offset a host copy, or its GPU record (which the copy
 * or view step fills). The caller owns the block (release_block); it owns nothing yet. */
static int32_t allocate(const dlmap_array *array, const dlmap_export_request *request, const dlmap__export_steps *plan,
                        dlmap__export_block **out, size_t *header, dlmap_error *err) {
  const uint64_t data_bytes = plan->extent.compact_bytes;
  const bool host_copy = plan->copy && !dlmap__transfer_gpu_destination(&plan->transfer);
  *header = dlmap__export_header_size(array->ndim); /* decide() bounded ndim (dlmap__check_shape) */
  if (plan->copy && data_bytes > SIZE_MAX - *header) {
    return dlmap_raise_out_of_memory(err, UINT64_MAX, "an export");
  }
  const size_t tail = plan->copy && host_copy   ? (size_t)data_bytes
                      : gpu_recorded(request, plan) ? sizeof(gpu_record)
                                                    : 0;
  const size_t total = *header + tail;
  dlmap__export_block *block = (dlmap__export_block *)dlmap__allocate(request->allocator, total, DLMAP_DATA_ALIGNMENT);
  if (block == NULL) {
    return dlmap_raise_out_of_memory(err, total, "an export");
  }
  memset(block, 0, sizeof *block);
  keep_allocator(block, dlmap__allocator_or_default(request->allocator));
  *out = block;
  return DLMAP_OK;
}

/* The tensor's shape, strides (compact for a copy; never NULL for ndim > 0, DLPack 1.2) and device. A 0-d tensor's
 * shape and strides are NULL, or under export.scalar_dims empty both point to the block's zero-length dims. */
static DLTensor *describe(const dlmap_array *array, const dlmap__export_steps *plan, dlmap__export_block *block) {
  DLTensor *tensor = (DLTensor *)(void *)((char *)block + dlmap__managed_fields_of[plan->structure].tensor);
  const int32_t ndim = array->ndim;
  int64_t *shape = block->dims, *strides = block->dims + ndim;
  if (ndim > 0) {
    memcpy(shape, array->shape, (size_t)ndim * sizeof(int64_t));
    if (array->strides != NULL && !plan->copy) {
      memcpy(strides, array->strides, (size_t)ndim * sizeof(int64_t));
    } else {
      dlmap__compact_strides(ndim, shape, strides);
    }
  }
  const bool dims = ndim > 0 || dlmap_profile_current()->scalar_dims_empty;
  tensor->ndim = ndim;
  tensor->shape = dims ? shape : NULL;
  tensor->strides = dims ? strides : NULL;
  tensor->dtype = array->dtype;
  tensor->device.device_type = (DLDeviceType)plan->target->value;
  tensor->device.device_id = dlmap__on_host(plan->target) ? 0 : plan->target_id;
  return tensor;
}

/* 8a. The copy, into the block or GPU-runtime memory the block then owns; the consumer's stream waits for it (a
 * host destination: the host does). Out of line: its copy layout (1.5 KiB on the stack) would otherwise widen the
 * frame of every export, views included, and cost them a register (bench/: one instruction per view export). */
__attribute__((noinline)) static int32_t copy(const dlmap_array *array, const dlmap_export_request *request,
                                              const dlmap__export_steps *plan, dlmap__export_block *block,
                                              size_t header, DLTensor *tensor, dlmap_error *err) {
  /* data may be NULL only without elements, and NULL + byte_offset is undefined */
  const char *first = plan->extent.count > 0 ? (const char *)array->data + array->byte_offset : NULL;
  dlmap__copy_layout layout; /* made here, where a copy was planned: views never need it */
  dlmap__copy_layout_make(array->ndim, array->shape, array->strides, &plan->extent, &layout);
  dlmap__copy_result copied;
  const int32_t status = dlmap__copy_compact(&plan->transfer, first, &layout, plan->stream, request->stream,
                                             (char *)block + header, &copied, err);
  if (status != DLMAP_OK) return status;
  if (copied.gpu_copy.memory != NULL) { /* allocate() left room for its record after the header */
    gpu_record *record = (gpu_record *)(void *)((char *)block + header);
    memset(record, 0, sizeof *record);
    record->gpu = plan->transfer.dst_gpu;
    record->buffer = copied.gpu_copy;
    record->release_stream = dlmap__release_stream(plan->target->platform, plan->stream, request->stream);
    block->gpu = record;
  }
  tensor->data = copied.data;
  tensor->byte_offset = 0;
  return DLMAP_OK;
}

/* 8b. The view: the producer's memory. byte_offset is kept, not folded into data: on handle-based devices (OpenCL,
 * Metal) data is an opaque handle that must not be offset. The profile's export.byte_offset fold moves it into data
 * where data is an address (a device type a dlmap backend serves). The consumer's stream is made to wait last. */
static int32_t view(const dlmap_array *array, const dlmap_export_request *request, const dlmap__export_steps *plan,
                    DLTensor *tensor, dlmap_error *err) {
  tensor->data = plan->placement.kind == DLMAP__PLACE_GPU_VIEW ? plan->placement.gpu_view_data : array->data;
  tensor->byte_offset = array->byte_offset;
  if (plan->fold_byte_offset) {
    if (tensor->data != NULL) tensor->data = (char *)tensor->data + tensor->byte_offset; /* NULL: no elements */
    tensor->byte_offset = 0;
  }
  if (request->defer_stream_sync || !plan->source_on_gpu) return DLMAP_OK;
  return dlmap__view_sync(plan->source, array->device_id, array->producer_stream, consumer_device(array, plan),
                          plan->stream, request->stream, true, err);
}

/* 8c. A GPU view's release order (gpu_record, where gpu_recorded): allocate() left room for it after the header. */
static void record_view(const dlmap_array *array, const dlmap_export_request *request, const dlmap__export_steps *plan,
                        dlmap__export_block *block, size_t header) {
  gpu_record *record = (gpu_record *)(void *)((char *)block + header);
  memset(record, 0, sizeof *record);
  record->gpu = dlmap__gpu_loaded(plan->source->platform); /* loaded: view() made the consumer's stream wait */
  record->release_stream = dlmap__release_stream(plan->target->platform, plan->stream, request->stream);
  record->consumer_device = consumer_device(array, plan);
  record->device = array->device_id;
  record->producer_stream = array->producer_stream;
  block->gpu = record;
}

/* 9. Hand the block out: from here its deleter, run by the consumer, owns it and the array's owner. The managed
 * tensor is the block's first member, whichever struct: its manager_ctx and out's one pointer are the block. Inlined
 * into the export (a call of its own cost it about 10 instructions) and into a plan's image writer. */
static inline __attribute__((always_inline)) void hand_out(const dlmap_array *array, const dlmap__export_steps *plan,
                                                           dlmap__export_block *block, dlmap_exported *out) {
  const dlmap__managed_fields *fields = &dlmap__managed_fields_of[plan->structure];
  void *const self = block;
  block->owner = array->owner;
  block->release = array->release;
  memcpy((char *)block + fields->manager_ctx, &self, sizeof self);
  memset(out, 0, sizeof *out);
  memcpy((char *)out + fields->result, &self, sizeof self);
  if (plan->structure == DLMAP_STRUCT_LEGACY) { /* what one struct alone has: its deleter's type, version, flags */
    block->tensor.legacy.deleter = legacy_deleter;
  } else {
    block->tensor.versioned.deleter = versioned_deleter;
    block->tensor.versioned.version.major = plan->version.major;
    block->tensor.versioned.version.minor = plan->version.minor;
    block->tensor.versioned.flags = plan->flags;
  }
  out->structure = plan->structure;
  out->version = plan->version;
  out->copied = plan->copy;
  out->stream = plan->stream;
}

/* Steps 1-6, in order; the first error stops them. */
int32_t dlmap__export_decide(const dlmap_array *array, const dlmap_export_request *request, dlmap__export_steps *plan,
                             dlmap_error *err) {
  int32_t status = negotiate(array, request, plan, err);
  if (status == DLMAP_OK) status = validate(array, plan, err);
  if (status == DLMAP_OK) status = choose_target(array, request, plan, err);
  if (status == DLMAP_OK) status = read_stream(request, plan, err);
  if (status == DLMAP_OK) status = place(array, request, plan, err);
  if (status == DLMAP_OK) status = stamp(array, plan, err);
  return status;
}


void dlmap__export_write_view(const dlmap_array *array, const dlmap_export_request *request,
                              const dlmap__export_steps *steps, dlmap__export_block *block, dlmap_exported *out) {
  keep_allocator(block, dlmap__allocator_or_default(request->allocator));
  DLTensor *tensor = describe(array, steps, block);
  (void)view(array, request, steps, tensor, NULL); /* no stream to wait on: nothing to fail */
  hand_out(array, steps, block, out);
}

int32_t dlmap__export_unplanned(const dlmap_array *array, const dlmap_export_request *request,
                                dlmap__export_steps *plan, dlmap__export_block **made, dlmap_exported *out,
                                dlmap_error *err) {
  int32_t status = dlmap__export_decide(array, request, plan, err);
  dlmap__export_block *block = NULL;
  size_t header = 0;
  if (status == DLMAP_OK) status = allocate(array, request, plan, &block, &header, err);
  if (status != DLMAP_OK) return status;
  /* The block owns what the copy step allocates; on error release_block frees both (the array's owner is not yet
   * the block's: hand_out gives it). */
  DLTensor *tensor = describe(array, plan, block);
  status =
      plan->copy ? copy(array, request, plan, block, header, tensor, err) : view(array, request, plan, tensor, err);
  if (status != DLMAP_OK) {
    release_block(block);
    return status;
  }
  if (!plan->copy && gpu_recorded(request, plan)) record_view(array, request, plan, block, header);
  hand_out(array, plan, block, out);
  *made = block;
  return DLMAP_OK;
}
