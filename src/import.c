/* dlmap core — import (from_dlpack): check the version, validate every field a producer can get wrong,
 * map the device, then hand out a zero-copy view or a copy, owning the producer's tensor on every path
 * (its deleter runs exactly once, on release or before an error returns). */
#include <stddef.h>
#include <string.h>

#include "src/device_claim.h"
#include "src/exchange.h"
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

/* The producer's deleter, through the library's one legacy/versioned dispatch (src/managed_delete.c). */
static void call_deleter(void *managed, bool versioned) { dlmap_managed_tensor_delete(managed, versioned); }

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
              dlmap_raise_import_unsupported_device_type(err, device_type, array));
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
      p, (layout == DLMAP_LAYOUT_ROW_MAJOR ? dlmap_raise_strides_not_row_major(err, t->shape, shown, t->strides, shown) : dlmap_raise_strides_not_compact(err, t->shape, shown, t->strides, shown)));
}

static int32_t check_request(const producer *p, const dlmap_import_request *request, dlmap_error *err) {
  int32_t status = dlmap__check_copy_mode(request->copy, err);
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
    return fail(p, dlmap_raise_from_dlpack_multi_device(err, request->num_shards));
  }
  return DLMAP_OK;
}

/* What the steps decide, in the order they decide it. */
typedef struct import_plan {
  int32_t device_type; /* 1. validate: the tensor's, or the __dlpack_device__ report that replaces it */
  const dlmap_device_info *device;
  dlmap__extent extent; /* 2. storage (padded sub-byte elements are bytes) */
  bool padded;
  uintptr_t first;                 /* the first element's address (data + byte_offset on direct addresses) */
  const dlmap_device_info *target; /* 3. place */
  int32_t target_id;
  dlmap__placement placement;
  uint64_t alignment;
  bool read_only, copy;
} import_plan;

/* The device a __dlpack_device__ report names replaces the tensor's only where the spec's memory kinds say the
 * report refines it (host memory reported as pinned host memory: PyTorch's pinned tensors). Any other disagreement
 * could make a device address read on the host, or the reverse. */
static int32_t read_report(const producer *p, const dlmap_import_request *request, import_plan *plan,
                           dlmap_error *err) {
  const DLTensor *t = p->tensor;
  plan->device_type = (int32_t)t->device.device_type;
  if (!request->has_reported_device || request->reported_device_type == plan->device_type) return DLMAP_OK;
  const dlmap_device_info *own = dlmap_device_type_find(plan->device_type);
  const dlmap_device_info *reported = dlmap_device_type_find(request->reported_device_type);
  if (own == NULL || reported == NULL || !dlmap__report_refines(reported->memory, own->memory)) {
    return fail(p, dlmap_raise_device_report_mismatch(err, dlmap_device_type_name(request->reported_device_type),
                                                      request->reported_device_type,
                                                      dlmap__device(plan->device_type, t->device.device_id)));
  }
  plan->device_type = request->reported_device_type;
  return DLMAP_OK;
}

/* import.version_gating: strict, the device type, dtype and flags must be in the version the tensor is stamped with;
 * known, any the spec knows whatever the stamp (PyTorch imports fp8 stamped 1.0), so only unknown flag bits fail. */
static int32_t check_version(const producer *p, const import_plan *plan, const dlmap_profile_info *profile,
                             dlmap_error *err) {
  if (profile->import_gating == DLMAP_GATING_STRICT)
    return dlmap__check_in_version(plan->device, p->tensor->dtype, p->flags, p->version, err);
  const uint64_t unknown = p->flags & ~DLMAP_FLAGS_KNOWN;
  return unknown != 0 ? dlmap_raise_flags_unknown(err, p->flags, unknown) : DLMAP_OK;
}

/* import.strides.negative refuse: whether a negative stride walks through more than one element of a tensor that has
 * elements (a size-1 dimension's stride is never followed, and an empty tensor reaches no memory). */
static bool walks_backwards(const DLTensor *t) {
  if (t->strides == NULL) return false;
  bool backwards = false;
  for (int32_t i = 0; i < t->ndim; i++) {
    if (t->shape[i] == 0) return false;
    if (t->shape[i] > 1 && t->strides[i] < 0) backwards = true;
  }
  return backwards;
}

/* 1. Values: device type, dtype and flags known (and of the widths and lanes the profile imports), and (versioned)
 * expressible in the tensor's version; only then whether the profile imports from the device (a 1.1 tensor claiming
 * kDLTrn is malformed before it is unservable). */
static int32_t validate(const producer *p, const dlmap_import_request *request, import_plan *plan, dlmap_error *err) {
  const DLTensor *t = p->tensor;
  const dlmap_profile_info *profile = dlmap_profile_current();
  int32_t status = read_report(p, request, plan, err);
  if (status != DLMAP_OK) return status;
  plan->device = dlmap_device_type_find(plan->device_type);
  if (plan->device == NULL) return unsupported_device(p, err, plan->device_type, NULL);
  if (profile->whole_bytes && t->dtype.bits % 8 != 0) {
    return fail(p,
                dlmap_raise_dtype_bits_not_whole_bytes(err, t->dtype.bits));
  }
  if (profile->scalar && t->dtype.lanes != 1 && !dlmap_profile_import_lanes_listed(t->dtype.code)) {
    return fail(p, dlmap_raise_dtype_lanes_not_one(err, t->dtype.lanes, t->dtype.code));
  }
  /* import.dtypes: before the dtype is validated, so every type the profile does not import gets one error */
  if (!dlmap_profile_import_dtype_allowed(t->dtype)) return fail(p, dlmap_profile_import_dtype_refuse(t->dtype, err));
  status = dlmap_dtype_validate(t->dtype, err);
  if (status == DLMAP_OK && p->versioned) status = check_version(p, plan, profile, err);
  if (status != DLMAP_OK) return fail(p, status);
  if (!dlmap__import_accepts(plan->device_type))
    return unsupported_device(p, err, plan->device_type, plan->device->name);
  return DLMAP_OK;
}

/* The first element's address in *first (data + byte_offset where data is an address, else data), and whether data +
 * byte_offset + every byte the strides reach stay inside the address space. */
static bool first_element(const DLTensor *t, bool direct, const dlmap__extent *e, uintptr_t *first) {
  const uintptr_t base = (uintptr_t)t->data;
  *first = base;
  if (!direct || e->count == 0) return true;
  /* hi_bytes <= UINTPTR_MAX - first: first + hi_bytes, the last byte's address, does not wrap either */
  return !(t->byte_offset > UINTPTR_MAX - base ||
           (*first = base + (uintptr_t)t->byte_offset) < (uintptr_t)-e->lo_bytes ||
           (uint64_t)e->hi_bytes > UINTPTR_MAX - *first);
}

/* Whether the first element at `first` meets the alignment place() computed (always where data is not an address or
 * there are no elements). */
static bool first_aligned(const import_plan *plan, bool direct, uintptr_t first) {
  return plan->alignment <= 1 || !direct || plan->extent.count == 0 || first % plan->alignment == 0;
}

/* The tensor's device against its memory, where dlmap has loaded a GPU runtime (src/device_claim.h): the device id
 * below the device count, then the claims import.device_claims lists, over the bytes from the first element on (the
 * extent first_element checked). Handles (data that is not an address) are no
 * runtime's to describe. */
__attribute__((noinline)) static int32_t claim_loaded(const producer *p, const import_plan *plan, dlmap_error *err) {
  const DLTensor *t = p->tensor;
  const int32_t status = dlmap__device_claim_check_tensor(plan->device, t->device.device_id,
                                                          dlmap__direct_address(plan->device) ? t->data : NULL,
                                                          t->byte_offset, &plan->extent, err);
  return status != DLMAP_OK ? fail(p, status) : DLMAP_OK;
}

static inline int32_t claim(const producer *p, const import_plan *plan, dlmap_error *err) {
  return __builtin_expect(!dlmap__gpu_any_loaded(), 1) ? DLMAP_OK : claim_loaded(p, plan, err);
}

/* 2. Shape, strides, data and offset: data + byte_offset + every byte the strides reach must stay inside the
 * address space (where data is an address). */
static int32_t check_memory(const producer *p, import_plan *plan, dlmap_error *err) {
  const DLTensor *t = p->tensor;
  plan->padded = (p->flags & DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0;
  const int32_t status =
      dlmap__check_storage(t->ndim, t->shape, t->strides, t->dtype, plan->padded, t->data, &plan->extent, err);
  if (status != DLMAP_OK) return fail(p, status);
  if (dlmap_profile_current()->negative_strides_refused && walks_backwards(t)) {
    const int32_t shown = t->ndim < 16 ? t->ndim : 16; /* as layout_error shows them */
    return fail(p, dlmap_raise_strides_negative(err, t->shape, shown, t->strides, shown));
  }
  if (!first_element(t, dlmap__direct_address(plan->device), &plan->extent, &plan->first)) {
    return fail(p, dlmap_raise_byte_offset_overflow(err, t->byte_offset, t->data));
  }
  return claim(p, plan, err);
}

/* Why a view cannot serve when copy=False: the first reason, in the order the contract states them. */
static int32_t refuse_copy(const producer *p, const import_plan *plan, const dlmap_import_request *request,
                           bool profile_layout_ok, bool layout_ok, bool aligned, dlmap_error *err) {
  const DLTensor *t = p->tensor;
  if (plan->placement.moves) {
    const DLDevice wanted = dlmap__device(plan->target->value, plan->target_id);
    const DLDevice source = dlmap__device(plan->device->value, t->device.device_id);
    return fail(p, dlmap_raise_import_copy_to_device_forbidden(err, wanted, source));
  }
  if (!layout_ok) {
    return layout_error(p, err, profile_layout_ok ? request->layout : dlmap_profile_current()->view_layout);
  }
  if (!aligned) {
    return fail(p,
                dlmap_raise_unaligned_data(err, (const void *)plan->first, plan->alignment));
  }
  return fail(p, dlmap_raise_read_only_not_writable(err));
}

/* 3. Where the result must live, and whether a view can serve: the placement, the strides a view may have (the
 * caller's layout and the profile's; a profile may refuse the others even with a copy: JAX takes only a permutation
 * of a compact layout), the alignment, and writability. */
static int32_t place(const producer *p, const dlmap_import_request *request, import_plan *plan, dlmap_error *err) {
  const DLTensor *t = p->tensor;
  const dlmap_profile_info *profile = dlmap_profile_current();
  plan->target = plan->device;
  plan->target_id = t->device.device_id;
  if (request->has_device) {
    plan->target = dlmap_device_type_find(request->device_type);
    if (plan->target == NULL || !dlmap__import_accepts(request->device_type)) {
      return fail(p, dlmap_raise_import_unsupported_target_device(err, request->device_type));
    }
    plan->target_id = request->device_id;
  }
  plan->placement = dlmap__place(plan->device, t->device.device_id, (const void *)plan->first,
                                 plan->first - (uintptr_t)t->data, plan->target, plan->target_id,
                                 request->copy == DLMAP_COPY_ALWAYS);
  const bool profile_layout_ok = layout_fits(profile->view_layout, t);
  if (!profile_layout_ok && profile->other_layouts_refused) return layout_error(p, err, profile->view_layout);
  const bool layout_ok = profile_layout_ok && layout_fits(request->layout, t);
  plan->alignment = request->alignment > profile->alignment ? request->alignment : profile->alignment;
  const bool aligned = first_aligned(plan, dlmap__direct_address(plan->device), plan->first);
  /* A legacy tensor cannot say it is read-only; a profile with import.legacy_read_only treats it as read-only. */
  plan->read_only = (p->flags & DLMAP_FLAG_READ_ONLY) != 0 || (!p->versioned && profile->legacy_import_read_only);
  plan->copy =
      plan->placement.kind == DLMAP__PLACE_COPY || !layout_ok || !aligned || (plan->read_only && request->writable);
  if (!plan->copy || request->copy != DLMAP_COPY_NEVER) return DLMAP_OK;
  return refuse_copy(p, plan, request, profile_layout_ok, layout_ok, aligned, err);
}

/* 4a. A view: the producer's memory, owned by `out` until dlmap_imported_release. */
static void hand_out_view(const producer *p, const dlmap_import_request *request, const import_plan *plan,
                          dlmap_imported *out) {
  const DLTensor *t = p->tensor;
  if (t->ndim > 0 && t->strides == NULL) {
    dlmap__compact_strides(t->ndim, t->shape, out->strides_);
    out->tensor.strides = out->strides_;
  }
  if (plan->placement.kind == DLMAP__PLACE_HOST_VIEW) {
    out->tensor.device.device_type = (DLDeviceType)plan->target->value;
    out->tensor.device.device_id = 0;
  } else if (plan->placement.kind == DLMAP__PLACE_GPU_VIEW) {
    out->tensor.data = plan->placement.gpu_view_data;
    out->tensor.device.device_type = (DLDeviceType)plan->target->value;
    out->tensor.device.device_id = plan->target_id;
  } else if (request->has_reported_device) {
    out->tensor.device.device_type = (DLDeviceType)plan->device_type; /* the report won in read_report */
  }
  out->read_only = plan->read_only;
  out->managed_ = p->managed;
  out->versioned_ = p->versioned;
}

/* 4b. A copy: into GPU memory when the target is device memory or the tensor moves to a GPU platform's memory, else
 * into host memory (reported as kDLCPU). The CPU backend copies host-readable memory, the GPU backend the rest, on
 * the consumer's stream, and the copy is complete before the producer's tensor is released (its memory may be
 * reused as soon as the deleter runs). One allocation holds shape, strides and a host copy; `out` owns it and any
 * GPU copy; the producer's tensor is released here. */
static int32_t copy_out(const producer *p, const dlmap_import_request *request, const import_plan *plan,
                        dlmap_imported *out, dlmap_error *err) {
  const DLTensor *t = p->tensor;
  const dlmap_device_info *target = plan->target;
  const bool gpu_destination =
      !dlmap_memory_kind_host_accessible(target->memory) || (plan->placement.moves && !dlmap__on_host(target));
  const dlmap_device_info *destination = gpu_destination ? target : dlmap_device_type_find(DLMAP_DEVICE_CPU);
  const int32_t destination_id = gpu_destination ? plan->target_id : 0;
  dlmap__transfer transfer;
  int32_t status = dlmap__transfer_plan(plan->device, t->device.device_id, request->consumer_stream, destination, destination_id,
                                        request->consumer_stream, &transfer, err);
  dlmap__transfer_use(&transfer, request->device_allocator);
  if (status == DLMAP_OK) status = dlmap__check_copyable(&plan->extent, t->ndim, t->shape, t->strides, err);
  if (status != DLMAP_OK) return fail(p, status);
  const uint64_t bytes = plan->extent.compact_bytes;
  const size_t copy_alignment = plan->alignment > DLMAP_DATA_ALIGNMENT ? (size_t)plan->alignment : DLMAP_DATA_ALIGNMENT;
  const size_t header = (2 * (size_t)t->ndim * sizeof(int64_t) + copy_alignment - 1) / copy_alignment * copy_alignment;
  if (bytes > SIZE_MAX - header) {
    return fail(p, dlmap_raise_out_of_memory(err, bytes, "an imported copy"));
  }
  const uint64_t host_bytes = gpu_destination ? 0 : bytes;
  char *block = (char *)dlmap__allocate(request->allocator, header + (size_t)host_bytes, copy_alignment);
  if (block == NULL) {
    return fail(p, dlmap_raise_out_of_memory(err, header + host_bytes, "an imported copy"));
  }
  dlmap__copy_layout layout; /* made here, where a copy was planned: views never need it */
  dlmap__copy_layout_make(t->ndim, t->shape, t->strides, &plan->extent, &layout);
  dlmap__copy_result copied; /* waited for on the host: the producer's tensor is released below */
  status = dlmap__copy_compact(&transfer, (const void *)plan->first, &layout, DLMAP_STREAM_HOST_SYNC, 0, block + header,
                               &copied, err);
  if (status != DLMAP_OK) {
    dlmap__release(request->allocator, block);
    return fail(p, status);
  }
  int64_t *shape = (int64_t *)(void *)block, *strides = shape + t->ndim;
  if (t->ndim > 0) memcpy(shape, t->shape, (size_t)t->ndim * sizeof(int64_t));
  dlmap__compact_strides(t->ndim, shape, strides);
  out->tensor.shape = t->ndim > 0 ? shape : NULL;
  out->tensor.strides = t->ndim > 0 ? strides : NULL;
  out->tensor.data = copied.data;
  out->tensor.byte_offset = 0;
  out->tensor.device.device_type = (DLDeviceType)destination->value; /* a host copy is plain host memory */
  out->tensor.device.device_id = destination_id;
  out->gpu_copy_ = copied.gpu_copy.memory;
  out->gpu_platform_ = (int32_t)destination->platform;
  out->gpu_memory_ = (int32_t)destination->memory;
  out->gpu_source_ = (int32_t)copied.gpu_copy.source;
  out->gpu_bytes_ = copied.gpu_copy.bytes;
  out->gpu_allocator_ = copied.gpu_copy.framework;
  /* its holder, the caller, uses it on the stream it named (NULL: the null stream), where it is released */
  out->gpu_release_stream_ = request->consumer_stream;
  out->allocator_ = *dlmap__allocator_or_default(request->allocator);
  out->copy_ = block;
  out->copied = true;
  call_deleter(p->managed, p->versioned); /* the data was copied: the producer's tensor is done */
  return DLMAP_OK;
}

static const dlmap_import_request kDefaultRequest = {.struct_size = DLMAP_IMPORT_REQUEST_STRUCT_SIZE};

/* The caller's request as this header lays it out (NULL: the defaults) in *fields, then validate, check memory and
 * place. A step that fails has released the producer's tensor (fail()). */
static int32_t decide(const producer *p, const dlmap_import_request *request, dlmap_import_request *fields,
                      import_plan *plan, dlmap_error *err) {
  if (request == NULL) request = &kDefaultRequest;
  int32_t status =
      DLMAP__STRUCT_READ(request, fields, dlmap_import_request, DLMAP_IMPORT_REQUEST_STRUCT_SIZE, "request", err);
  if (status != DLMAP_OK) return fail(p, status);
  status = check_request(p, fields, err);
  if (status == DLMAP_OK) status = validate(p, fields, plan, err);
  if (status == DLMAP_OK) status = check_memory(p, plan, err);
  if (status == DLMAP_OK) status = place(p, fields, plan, err);
  return status;
}

/* What every result starts from: the producer's tensor and version, the rest zero. */
DLMAP_STATIC_ASSERT(offsetof(dlmap_imported, tensor) == 0, "start_out zeroes what follows the tensor");
static void start_out(const producer *p, const import_plan *plan, dlmap_imported *out) {
  out->tensor = *p->tensor; /* tensor is the first field; the rest up to strides_ (written only when used) zero */
  memset((char *)out + sizeof out->tensor, 0, offsetof(dlmap_imported, strides_) - sizeof out->tensor);
  out->version = p->version;
  out->subbyte_padded = plan->padded;
}

/* Hands out what the steps decided: a view, which `out` owns, or a copy (the producer's tensor is then released). */
static int32_t deliver(const producer *p, const dlmap_import_request *request, const import_plan *plan,
                       dlmap_imported *out, dlmap_error *err) {
  start_out(p, plan, out);
  if (!plan->copy) {
    hand_out_view(p, request, plan, out);
    return DLMAP_OK;
  }
  return copy_out(p, request, plan, out, err);
}

static void remember(const producer *p, const dlmap_import_request *request, const import_plan *steps,
                     const dlmap_imported *out, const dlmap_import_request *caller_request);

static int32_t import_tensor(const producer *p, const dlmap_import_request *request, dlmap_imported *out,
                             dlmap_error *err) {
  if (out == NULL) return fail(p, dlmap__invalid_argument(err, "out", "must not be NULL"));
  dlmap_import_request request_fields;
  import_plan plan;
  int32_t status = decide(p, request, &request_fields, &plan, err);
  if (status == DLMAP_OK) status = deliver(p, &request_fields, &plan, out, err);
  /* remembered only for a caller built with this header: its request is then compared whole, byte for byte */
  const dlmap_import_request *caller = request != NULL ? request : &kDefaultRequest;
  if (status == DLMAP_OK && caller->struct_size == DLMAP_IMPORT_REQUEST_STRUCT_SIZE) {
    remember(p, &request_fields, &plan, out, caller);
  }
  return status;
}

/* The flag bits an import reads: import.unknown_flags ignore drops the bits the spec does not know, as if the producer
 * had not set them. */
static uint64_t flags_read(void) {
  return dlmap_profile_current()->unknown_flags_ignored ? DLMAP_FLAGS_KNOWN : ~(uint64_t)0;
}

/* A versioned producer: the major version first, and nothing else read before it (the ABI's rule); an unknown major
 * is released with version_major_unsupported. */
static int32_t read_versioned(struct DLManagedTensorVersioned *tensor, producer *p, dlmap_error *err) {
  *p = (producer){tensor, true, NULL, 0, {tensor->version.major, tensor->version.minor}};
  if (dlmap_version_struct(p->version) != DLMAP_STRUCT_VERSIONED) {
    return fail(p, dlmap_raise_version_major_unsupported(err, p->version, dlmap_version_current()));
  }
  p->tensor = &tensor->dl_tensor;
  p->flags = tensor->flags & flags_read();
  return DLMAP_OK;
}

/* ---- prepared imports (dlmap_import_plan_create): the steps run once on a description of the tensors a consumer
 * expects; a planned import of a tensor that matches it field for field only rechecks its addresses. ---- */

struct dlmap_import_plan {
  dlmap_import_request request; /* allocator and device_allocator point at these copies (or are NULL) */
  dlmap_allocator allocator;
  dlmap_device_allocator device_allocator;
  import_plan steps;            /* what validate, check_memory and place decided (steps.first is per tensor) */
  bool fast;                    /* a view on the tensor's own device: planned imports copy the image */
  dlmap_imported image;         /* a fast plan's result for the description: start_out and hand_out_view wrote it */
  bool direct;                  /* the tensor's data is an address (dlmap__direct_address) */
  bool versioned;
  dlmap_version version;
  uint64_t flags;               /* as the import reads them (unknown bits dropped where the profile ignores them) */
  uint64_t flags_read;          /* the bits read_versioned keeps of a tensor's flags */
  DLDevice device;
  DLDataType dtype;
  int32_t ndim;
  bool has_strides;
  int64_t dims[];               /* shape[ndim] then strides[ndim] */
};

static size_t plan_size(int32_t ndim) { return sizeof(dlmap_import_plan) + 2 * (size_t)ndim * sizeof(int64_t); }

/* Fills the plan at q (plan_size bytes) from a producer's tensor, the caller's request as read, and the steps they
 * passed; a fast plan's image is the view they give, written here or copied from `made`, the view an import just
 * handed out with them (its addresses are replaced per call all the same). */
static void plan_fill(dlmap_import_plan *q, const producer *p, const dlmap_import_request *request,
                      const import_plan *steps, const dlmap_imported *made) {
  const DLTensor *layout = p->tensor;
  const size_t ndim = (size_t)layout->ndim;
  q->request = *request;
  q->allocator = *dlmap__allocator_or_default(request->allocator);
  q->request.allocator = request->allocator != NULL ? &q->allocator : NULL;
  if (request->device_allocator != NULL) q->device_allocator = *request->device_allocator;
  q->request.device_allocator = request->device_allocator != NULL ? &q->device_allocator : NULL;
  q->steps = *steps;
  q->fast = !steps->copy && steps->placement.kind == DLMAP__PLACE_VIEW;
  q->direct = dlmap__direct_address(steps->device);
  q->versioned = p->versioned;
  q->version = p->version;
  q->flags = p->flags;
  q->flags_read = flags_read();
  q->device = layout->device;
  q->dtype = layout->dtype;
  q->ndim = layout->ndim;
  q->has_strides = layout->strides != NULL;
  if (ndim > 0) memcpy(q->dims, layout->shape, ndim * sizeof(int64_t));
  if (ndim > 0 && q->has_strides) memcpy(q->dims + ndim, layout->strides, ndim * sizeof(int64_t));
  if (!q->fast) return;
  if (made == NULL) {
    start_out(p, &q->steps, &q->image);
    hand_out_view(p, &q->request, &q->steps, &q->image);
    return;
  }
  memcpy(&q->image, made, offsetof(dlmap_imported, strides_));
  if (ndim > 0 && !q->has_strides) memcpy(q->image.strides_, made->strides_, ndim * sizeof(int64_t));
}

int32_t dlmap_import_plan_create(const DLTensor *layout, bool versioned, dlmap_version version, uint64_t flags,
                                 const dlmap_import_request *request, dlmap_import_plan **plan, dlmap_error *err) {
  if (layout == NULL) return dlmap__invalid_argument(err, "layout", "must not be NULL");
  if (plan == NULL) return dlmap__invalid_argument(err, "plan", "must not be NULL");
  /* The description as a producer's tensor of either struct without a deleter, so that fail() releases nothing. */
  struct DLManagedTensorVersioned as_versioned;
  DLManagedTensor as_legacy;
  memset(&as_versioned, 0, sizeof as_versioned);
  memset(&as_legacy, 0, sizeof as_legacy);
  as_versioned.version.major = version.major;
  as_versioned.version.minor = version.minor;
  as_versioned.flags = flags;
  as_versioned.dl_tensor = *layout;
  as_legacy.dl_tensor = *layout;
  producer p = {&as_legacy, false, &as_legacy.dl_tensor, 0, {0, 0}};
  int32_t status = versioned ? read_versioned(&as_versioned, &p, err) : DLMAP_OK;
  dlmap_import_request request_fields;
  import_plan steps;
  if (status == DLMAP_OK) status = decide(&p, request, &request_fields, &steps, err);
  if (status != DLMAP_OK) return status;
  const size_t size = plan_size(layout->ndim); /* check_memory bounded ndim by DLMAP_MAX_NDIM */
  dlmap_import_plan *q = (dlmap_import_plan *)dlmap__allocate(request_fields.allocator, size, DLMAP_DATA_ALIGNMENT);
  if (q == NULL) return dlmap_raise_out_of_memory(err, size, "an import plan");
  plan_fill(q, &p, &request_fields, &steps, NULL);
  *plan = q;
  return DLMAP_OK;
}

/* Whether a producer's tensor (t, with the flags the import reads) is the plan's description with other addresses,
 * and those pass the checks check_memory and place() make of addresses. A call of its own (inlined, it made the entry
 * points save four registers on every call); the hand-out below is inlined. */
_Static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4, "DLDevice and DLDataType have no padding to compare");
_Static_assert(sizeof(DLPackVersion) == sizeof(dlmap_version) && offsetof(DLPackVersion, minor) ==
                   offsetof(dlmap_version, minor), "a tensor's version and a plan's compare as bytes");

static bool matches(const dlmap_import_plan *plan, const DLTensor *t, uint64_t flags) {
  const size_t ndim = (size_t)plan->ndim;
  /* device and dtype compared whole (one load each, no padding) */
  if (flags != plan->flags || memcmp(&t->device, &plan->device, sizeof(DLDevice)) != 0 ||
      memcmp(&t->dtype, &plan->dtype, sizeof(DLDataType)) != 0 || t->ndim != plan->ndim ||
      (t->strides != NULL) != plan->has_strides || (ndim > 0 && t->shape == NULL)) {
    return false;
  }
  if (ndim > 0 && !(plan->has_strides ? dlmap__same_dims(t->shape, t->strides, plan->dims, plan->dims + ndim, ndim)
                                       : dlmap__same_dims(t->shape, t->shape, plan->dims, plan->dims, ndim))) {
    return false;
  }
  const import_plan *steps = &plan->steps;
  uintptr_t first;
  if (t->data == NULL && steps->extent.count > 0) return false; /* data_null */
  return first_element(t, plan->direct, &steps->extent, &first) && first_aligned(steps, plan->direct, first);
}

/* hand_out_view's compact strides, in this result's own storage (a tensor sent without strides). Out of line and
 * called last: the common case, strides sent, then makes no call and needs no frame. */
__attribute__((noinline)) static int32_t planned_compact_strides(const dlmap_import_plan *plan, dlmap_imported *out) {
  memcpy(out->strides_, plan->image.strides_, (size_t)plan->ndim * sizeof(int64_t));
  out->tensor.strides = out->strides_;
  return DLMAP_OK;
}

/* Where dlmap has loaded a GPU runtime, a fast plan's tensor has its claim checked too (its data is new on every call);
 * a claim refused here takes the unplanned path, which reports it and releases the tensor (matches() checked that
 * the tensor's extent stays inside the address space). One load and a branch
 * where no runtime is loaded. */
static inline bool planned_claim_ok(const dlmap_import_plan *plan, const DLTensor *t) {
  return !dlmap__gpu_any_loaded() ||
         dlmap__device_claim_check_tensor(plan->steps.device, t->device.device_id, plan->direct ? t->data : NULL,
                                          t->byte_offset, &plan->steps.extent, NULL) == DLMAP_OK;
}

/* A fast plan's view of a matching tensor: the image, with this tensor's addresses and ownership. */
__attribute__((always_inline)) static inline int32_t hand_out_planned(const dlmap_import_plan *plan,
                                                                      const DLTensor *t, void *managed,
                                                                      dlmap_imported *out) {
  memcpy(out, &plan->image, offsetof(dlmap_imported, strides_));
  out->tensor.data = t->data;
  out->tensor.byte_offset = t->byte_offset;
  out->tensor.shape = t->shape;
  out->tensor.strides = t->strides;
  out->managed_ = managed;
  return plan->has_strides || plan->ndim == 0 ? DLMAP_OK : planned_compact_strides(plan, out);
}

/* Every call the fast hand-out does not serve: the unprepared import under the plan's request (a NULL tensor is
 * invalid_argument; a NULL plan too, the tensor released). Kept out of line so that the fast path needs no frame for
 * it. */
__attribute__((noinline)) static int32_t import_versioned_unplanned(const dlmap_import_plan *plan,
                                                                    struct DLManagedTensorVersioned *tensor,
                                                                    dlmap_imported *out, dlmap_error *err) {
  if (tensor == NULL) return dlmap__invalid_argument(err, "tensor", "must not be NULL");
  producer p;
  const int32_t status = read_versioned(tensor, &p, err);
  if (status != DLMAP_OK) return status;
  if (plan == NULL) return fail(&p, dlmap__invalid_argument(err, "plan", "must not be NULL"));
  return import_tensor(&p, &plan->request, out, err);
}

__attribute__((noinline)) static int32_t import_legacy_unplanned(const dlmap_import_plan *plan,
                                                                 DLManagedTensor *tensor, dlmap_imported *out,
                                                                 dlmap_error *err) {
  if (tensor == NULL) return dlmap__invalid_argument(err, "tensor", "must not be NULL");
  const producer p = {tensor, false, &tensor->dl_tensor, 0, {0, 0}};
  if (plan == NULL) return fail(&p, dlmap__invalid_argument(err, "plan", "must not be NULL"));
  return import_tensor(&p, &plan->request, out, err);
}

int32_t dlmap_import_versioned_planned(const dlmap_import_plan *plan, struct DLManagedTensorVersioned *tensor,
                                       dlmap_imported *out, dlmap_error *err) {
  /* The version first: only the plan's, which read_versioned accepted when the plan was made, lets the rest be read. */
  if (tensor != NULL && plan != NULL && plan->fast && plan->versioned && out != NULL &&
      memcmp(&tensor->version, &plan->version, sizeof plan->version) == 0 && /* major and minor in one compare */
      matches(plan, &tensor->dl_tensor, tensor->flags & plan->flags_read) && planned_claim_ok(plan, &tensor->dl_tensor)) {
    return hand_out_planned(plan, &tensor->dl_tensor, tensor, out);
  }
  return import_versioned_unplanned(plan, tensor, out, err);
}

int32_t dlmap_import_legacy_planned(const dlmap_import_plan *plan, DLManagedTensor *tensor, dlmap_imported *out,
                                    dlmap_error *err) {
  if (tensor != NULL && plan != NULL && plan->fast && !plan->versioned && out != NULL &&
      matches(plan, &tensor->dl_tensor, 0) && planned_claim_ok(plan, &tensor->dl_tensor)) {
    return hand_out_planned(plan, &tensor->dl_tensor, tensor, out);
  }
  return import_legacy_unplanned(plan, tensor, out, err);
}

void dlmap_import_plan_free(dlmap_import_plan *plan) {
  if (plan == NULL) return;
  const dlmap_allocator allocator = plan->allocator; /* the plan holds the allocator it is freed with */
  dlmap__release(&allocator, plan);
}

/* ---- the last view's plan, per thread: an unprepared import of a tensor that matches, under the same request, the
 * view this thread last remembered is handed out from that view's plan, as a planned import would be (a framework
 * imports the same few layouts over and over; a layout is remembered when it comes twice in a row). It lives in
 * thread-local storage, allocated by nothing and freed by nothing; only views of up to kRememberedNdim dimensions are
 * remembered. ---- */

enum { kRememberedNdim = 8 };
/* A union may hold a struct with a flexible array member; the bytes give its dims room. */
static _Thread_local union {
  dlmap_import_plan plan;
  unsigned char bytes[sizeof(dlmap_import_plan) + 2 * kRememberedNdim * sizeof(int64_t)];
} remembered; /* remembered.plan.fast is false until a view is remembered */
/* The caller's request the remembered plan was made under, byte for byte as passed (NULL: the defaults). */
static _Thread_local dlmap_import_request remembered_request;

/* The fingerprint of the last view's layout that was not remembered. */
static _Thread_local uint64_t last_layout;

/* After a successful import: a view on the tensor's own device is remembered when its layout is the one the thread's
 * previous view had. A copy is not, and its producer's tensor is already released, so steps->copy is read first. */
static void remember(const producer *p, const dlmap_import_request *request, const import_plan *steps,
                     const dlmap_imported *out, const dlmap_import_request *caller_request) {
  if (steps->copy || steps->placement.kind != DLMAP__PLACE_VIEW || p->tensor->ndim > kRememberedNdim) return;
  const DLTensor *t = p->tensor;
  const uint64_t layout = dlmap__layout_fingerprint(t->ndim, t->shape, t->strides);
  if (layout != last_layout) {
    last_layout = layout;
    return;
  }
  plan_fill(&remembered.plan, p, request, steps, out);
  memcpy(&remembered_request, caller_request, DLMAP_IMPORT_REQUEST_STRUCT_SIZE); /* the caller's fields, no more */
}

/* Whether the caller's request (NULL: the defaults) is, byte for byte up to its last field, the one the remembered plan
 * was made under (padding included: a difference there only costs a full import). */
static bool same_request(const dlmap_import_request *r) {
  if (r == NULL) r = &kDefaultRequest;
  return r->struct_size == DLMAP_IMPORT_REQUEST_STRUCT_SIZE &&
         memcmp(r, &remembered_request, DLMAP_IMPORT_REQUEST_STRUCT_SIZE) == 0;
}

int32_t dlmap_import_versioned(struct DLManagedTensorVersioned *tensor, const dlmap_import_request *request,
                               dlmap_imported *out, dlmap_error *err) {
  const dlmap_import_plan *last = &remembered.plan;
  /* The version first, as read_versioned reads it. */
  if (tensor != NULL && out != NULL && last->fast && last->versioned && tensor->version.major == last->version.major &&
      tensor->version.minor == last->version.minor &&
      matches(last, &tensor->dl_tensor, tensor->flags & last->flags_read) && same_request(request) &&
      planned_claim_ok(last, &tensor->dl_tensor)) {
    return hand_out_planned(last, &tensor->dl_tensor, tensor, out);
  }
  if (tensor == NULL) {
    return dlmap__invalid_argument(err, "tensor", "must not be NULL");
  }
  producer p;
  const int32_t status = read_versioned(tensor, &p, err);
  return status != DLMAP_OK ? status : import_tensor(&p, request, out, err);
}

int32_t dlmap_import_legacy(DLManagedTensor *tensor, const dlmap_import_request *request, dlmap_imported *out,
                            dlmap_error *err) {
  const dlmap_import_plan *last = &remembered.plan;
  if (tensor != NULL && out != NULL && last->fast && !last->versioned && matches(last, &tensor->dl_tensor, 0) &&
      same_request(request) && planned_claim_ok(last, &tensor->dl_tensor)) {
    return hand_out_planned(last, &tensor->dl_tensor, tensor, out);
  }
  if (tensor == NULL) {
    return dlmap__invalid_argument(err, "tensor", "must not be NULL");
  }
  producer p = {tensor, false, &tensor->dl_tensor, 0, {0, 0}};
  return import_tensor(&p, request, out, err);
}

/* The copies an import made (GPU-runtime memory, the allocator's block). Out of line: a view has none, and its
 * release then saves no registers for these calls. */
__attribute__((noinline)) static void release_copies(const dlmap_imported *imported) {
  if (imported->gpu_copy_ != NULL) {
    const dlmap__gpu_buffer buffer = {imported->gpu_copy_,
                                      imported->gpu_bytes_,
                                      (dlmap_memory_kind)imported->gpu_memory_,
                                      imported->tensor.device.device_id,
                                      imported->tensor.device.device_type,
                                      (dlmap__gpu_source)imported->gpu_source_,
                                      imported->gpu_allocator_};
    dlmap__gpu_release(dlmap__gpu_loaded((dlmap_platform)imported->gpu_platform_), &buffer,
                       imported->gpu_release_stream_);
  }
  if (imported->copy_ != NULL) dlmap__release(&imported->allocator_, imported->copy_);
}

/* Zeroes every field up to strides_ in 16-byte stores where the target has SSE2 (GCC makes the memset of this size
 * a `rep stos`, slow to start on small blocks). */
static void zero_fields(dlmap_imported *imported) {
  enum { kBytes = offsetof(dlmap_imported, strides_) };
  char *bytes = (char *)imported;
  size_t done = 0;
#if defined(__SSE2__)
#pragma GCC unroll 16 /* unrolled before GCC's loop distribution could make it the memset again */
  for (; done + 16 <= kBytes; done += 16) _mm_storeu_si128((__m128i *)(bytes + done), _mm_setzero_si128());
#endif
  memset(bytes + done, 0, kBytes - done);
}

void dlmap_imported_release(dlmap_imported *imported) {
  if (imported == NULL) return;
  call_deleter(imported->managed_, imported->versioned_);
  if (imported->gpu_copy_ != NULL || imported->copy_ != NULL) release_copies(imported);
  zero_fields(imported);
}
