/* dlmap fuzz target — import (from_dlpack): a producer's managed tensor with every field fuzzed, in both ABI
 * flavours (DLManagedTensorVersioned and legacy DLManagedTensor), under random import requests. The harness
 * allocates exactly ndim shape and stride entries, the managed struct at its exact size and a data buffer of the
 * size the input claims (capped), so ASan reports any read past them. Invariants: the deleter runs exactly once
 * per call (on error before the call returns, on success by dlmap_imported_release), a failing call allocates
 * nothing (out_of_memory aside) and leaves a complete catalogue error, a copy holds exactly the source elements at
 * the requested alignment, and nothing dlmap allocated outlives the release. */
#include "fuzz/harness.h"

#define MAX_DATA_BYTES ((size_t)1 << 18)

/* What the producer's deleter frees and counts. */
typedef struct producer_ctx {
  int64_t *shape;
  int64_t *strides;
  void *managed;
  size_t managed_size;
  int deleter_calls;
} producer_ctx;

static producer_ctx *g_producer; /* the tensor of the current iteration (one at a time) */

static void free_producer_memory(producer_ctx *ctx) {
  FUZZ_UNPOISON(ctx->managed, ctx->managed_size);
  free(ctx->shape);
  free(ctx->strides);
  free(ctx->managed);
  ctx->shape = ctx->strides = NULL;
  ctx->managed = NULL;
}

static void versioned_deleter(struct DLManagedTensorVersioned *self) {
  FUZZ_CHECK(g_producer != NULL && self == g_producer->managed);
  g_producer->deleter_calls++;
  FUZZ_CHECK(g_producer->deleter_calls == 1); /* a second call would also be a use after free */
  free_producer_memory(g_producer);
}

static void legacy_deleter(DLManagedTensor *self) {
  FUZZ_CHECK(g_producer != NULL && self == g_producer->managed);
  g_producer->deleter_calls++;
  FUZZ_CHECK(g_producer->deleter_calls == 1);
  free_producer_memory(g_producer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size};
  const uint8_t mode = fuzz_u8(&in);
  const bool versioned = (mode & 1) != 0;

  /* ---- the producer's tensor ---- */
  DLTensor t;
  memset(&t, 0, sizeof t);
  dlmap_version version = fuzz_version(&in);
  const uint8_t flag_sel = fuzz_u8(&in);
  uint64_t flags = flag_sel < 200 ? (uint64_t)(flag_sel & 7) : fuzz_u64(&in);
  t.device.device_type = (DLDeviceType)fuzz_device_type(&in);
  t.device.device_id = (int32_t)fuzz_pick_i64(&in, kFuzzInterestingI64, 8);
  t.dtype = fuzz_dtype(&in);
  const uint8_t ndim_sel = fuzz_u8(&in);
  t.ndim = ndim_sel < 230 ? (int32_t)(ndim_sel % 7) : ndim_sel < 240 ? (int32_t)(60 + ndim_sel % 8)
                                                                      : (int32_t)fuzz_u32(&in);
  const uint8_t null_sel = fuzz_u8(&in);
  const uint64_t dtype_bits = (uint64_t)t.dtype.bits * t.dtype.lanes;
  int64_t *shape = (null_sel & 0x0f) == 0x0f ? NULL : fuzz_dims_block(&in, t.ndim, false, dtype_bits, NULL);
  int64_t *strides = (null_sel & 0x30) == 0 ? NULL : fuzz_dims_block(&in, t.ndim, true, dtype_bits, shape);
  t.shape = shape;
  t.strides = strides;
  const uint8_t off_sel = fuzz_u8(&in);
  t.byte_offset = off_sel < 200 ? (uint64_t)(off_sel % 72) : (uint64_t)fuzz_pick_i64(&in, kFuzzInterestingI64, 25);
  const uint8_t buf_sel = fuzz_u8(&in);
  size_t buffer_size = (size_t)fuzz_u32(&in) % (MAX_DATA_BYTES + 1); /* the size the input claims, capped */
  if (buf_sel < 128) buffer_size %= 4097;
  char *buffer = (char *)malloc(buffer_size == 0 ? 1 : buffer_size);
  const uint8_t data_sel = fuzz_u8(&in);
  uintptr_t data_addr;
  if (data_sel < 200) {
    data_addr = (uintptr_t)buffer + (buffer_size > 0 ? data_sel % (buffer_size < 256 ? buffer_size : 256) : 0);
  } else if (data_sel < 215) {
    data_addr = 0;
  } else {
    data_addr = (uintptr_t)fuzz_u64(&in); /* a hostile address: only ever compared, never dereferenced */
  }
  t.data = (void *)data_addr;

  /* Own copies of shape and strides for checking after the producer's memory is gone. */
  int64_t shape_copy[DLMAP_MAX_NDIM], strides_copy[DLMAP_MAX_NDIM];
  const bool dims_ok = t.ndim >= 0 && t.ndim <= DLMAP_MAX_NDIM && (shape != NULL || t.ndim == 0);
  if (dims_ok && t.ndim > 0) memcpy(shape_copy, shape, (size_t)t.ndim * sizeof(int64_t));
  if (dims_ok && t.ndim > 0 && strides != NULL) memcpy(strides_copy, strides, (size_t)t.ndim * sizeof(int64_t));

  /* ---- the request ---- */
  dlmap_import_request request = dlmap_import_request_default();
  const uint8_t r0 = fuzz_u8(&in), r1 = fuzz_u8(&in);
  request.has_device = (r0 & 1) != 0;
  request.device_type = request.has_device ? fuzz_device_type(&in) : 0;
  request.device_id = request.has_device ? (int32_t)fuzz_pick_i64(&in, kFuzzInterestingI64, 8) : 0;
  request.copy = (dlmap_copy_mode)((r0 >> 1) & 3); /* 3 is not a mode: must act as a valid one, never crash */
  request.writable = (r0 & 8) != 0;
  request.layout = (dlmap_layout_policy)((r0 >> 4) % 3);
  const uint8_t align_sel = fuzz_u8(&in);
  request.alignment = align_sel < 128 ? 0 : align_sel < 224 ? (uint64_t)1 << (align_sel % 14)
                                                            : (uint64_t)fuzz_pick_i64(&in, kFuzzInterestingI64, 25);
  request.has_reported_device = (r1 & 1) != 0;
  request.reported_device_type = request.has_reported_device ? fuzz_device_type(&in) : 0;
  fuzz_allocator tracking;
  const uint8_t alloc_sel = (r1 >> 1) & 7;
  fuzz_allocator_init(&tracking, alloc_sel == 7 ? 1 : 0); /* 7: the one allocation fails */
  const bool null_out = (r1 & 0xf0) == 0xf0;

  /* The buffer is only read when the tensor's elements all lie inside it; otherwise no copy is allowed. */
  /* IS_SUBBYTE_TYPE_PADDED (valid on sub-byte types only): each element takes a byte of its own. */
  const bool padded = versioned && (flags & DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0 &&
                      (uint64_t)t.dtype.bits * t.dtype.lanes < 8;
  const uint64_t element_bits = padded ? 8 : (uint64_t)t.dtype.bits * t.dtype.lanes;
  const fuzz_region region = fuzz_tensor_region(t.ndim, shape, strides, element_bits);
  const uintptr_t first = data_addr + (uintptr_t)t.byte_offset;
  const bool readable = data_addr != 0 && (uint64_t)data_addr + t.byte_offset >= (uint64_t)data_addr &&
                        fuzz_region_inside(&region, first, buffer, buffer_size);
  if (readable) { /* only then can dlmap read it: fill it for the copy check */
    for (size_t i = 0; i < buffer_size; i++) buffer[i] = (char)(i * 131 + 7);
  }
  if (!readable) request.copy = DLMAP_COPY_NEVER;
  /* The default allocator only for copies that are surely small (it has no size cap). */
  const bool small_copy = readable && region.count * ((element_bits + 7) / 8) <= FUZZ_ALLOC_CAP;
  const bool use_default = alloc_sel == 0 && small_copy && request.alignment <= 4096;
  request.allocator = use_default ? NULL : &tracking.api;

  /* ---- the managed tensor, exactly as large as its struct ---- */
  producer_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.shape = shape;
  ctx.strides = strides;
  g_producer = &ctx;
  const bool null_deleter = mode == 0xfe; /* DLPack allows a NULL deleter: nothing to call, nothing to count */
  dlmap_imported out;
  dlmap_error err;
  memset(&err, 0, sizeof err);
  int32_t status;
  bool unsupported_major = false;
  if (versioned) {
    struct DLManagedTensorVersioned *m = (struct DLManagedTensorVersioned *)malloc(sizeof *m);
    ctx.managed = m;
    ctx.managed_size = sizeof *m;
    m->version.major = version.major;
    m->version.minor = version.minor;
    m->manager_ctx = &ctx;
    m->deleter = null_deleter ? NULL : versioned_deleter;
    m->flags = flags;
    m->dl_tensor = t;
    unsupported_major = dlmap_version_struct(version) != DLMAP_STRUCT_VERSIONED;
    if (unsupported_major) {
      /* The ABI rule: with a major dlmap does not speak, only version and deleter may be read. */
      FUZZ_POISON(&m->flags, sizeof m->flags);
      FUZZ_POISON(&m->dl_tensor, sizeof m->dl_tensor);
      FUZZ_POISON(&m->manager_ctx, sizeof m->manager_ctx);
    }
    status = dlmap_import_versioned(m, &request, null_out ? NULL : &out, &err);
  } else {
    DLManagedTensor *m = (DLManagedTensor *)malloc(sizeof *m);
    ctx.managed = m;
    ctx.managed_size = sizeof *m;
    m->dl_tensor = t;
    m->manager_ctx = &ctx;
    m->deleter = null_deleter ? NULL : legacy_deleter;
    status = dlmap_import_legacy(m, &request, null_out ? NULL : &out, &err);
  }

  /* A report may replace the tensor's device type only for host memory reported as pinned host memory. */
  const dlmap_device_info *own_info = dlmap_device_type_find((int32_t)t.device.device_type);
  const dlmap_device_info *reported_info =
      request.has_reported_device ? dlmap_device_type_find(request.reported_device_type) : NULL;
  const bool report_differs = request.has_reported_device &&
                              request.reported_device_type != (int32_t)t.device.device_type;
  const bool report_pinned = report_differs && own_info != NULL && reported_info != NULL &&
                             own_info->memory == DLMAP_MEMORY_HOST && reported_info->memory == DLMAP_MEMORY_HOST_PINNED;

  const int expected_calls_if_deleted = null_deleter ? 0 : 1;
  if (getenv("FUZZ_VERBOSE") != NULL) fprintf(stderr, "status %d: %s\n", status, status ? err.message : "");
  if (status != DLMAP_OK) {
    fuzz_check_error(&err, status);
    FUZZ_CHECK(ctx.deleter_calls == expected_calls_if_deleted); /* dlmap owned it: released before returning */
    FUZZ_CHECK(tracking.live == 0);
    FUZZ_CHECK(tracking.attempts == 0 || status == DLMAP_ERR_OUT_OF_MEMORY); /* errors do not allocate */
    if (unsupported_major) FUZZ_CHECK(status == DLMAP_ERR_VERSION_MAJOR_UNSUPPORTED);
    if (null_out) FUZZ_CHECK(status == DLMAP_ERR_INVALID_ARGUMENT || unsupported_major);
    /* A contradicting report is refused before anything else about the tensor (request validation aside). */
    if (report_differs && !report_pinned) {
      FUZZ_CHECK(status == DLMAP_ERR_DEVICE_REPORT_MISMATCH || status == DLMAP_ERR_INVALID_ARGUMENT || unsupported_major);
    }
  } else {
    FUZZ_CHECK(!report_differs || report_pinned);
    /* Every bit count of an accepted tensor fits in int64 (issue 14: 2^64 − 4 bits of int4 passed as 0 bytes). */
    FUZZ_CHECK(region.valid && fuzz_region_sizes_fit(&region));
    FUZZ_CHECK(!null_out && !unsupported_major);
    FUZZ_CHECK(err.code == DLMAP_OK || err.code == 0);
    const DLTensor *r = &out.tensor;
    FUZZ_CHECK(r->ndim == t.ndim && r->dtype.code == t.dtype.code && r->dtype.bits == t.dtype.bits &&
               r->dtype.lanes == t.dtype.lanes);
    FUZZ_CHECK(t.ndim >= 0 && t.ndim <= DLMAP_MAX_NDIM);
    FUZZ_CHECK(t.ndim == 0 || (r->shape != NULL && r->strides != NULL));
    for (int32_t i = 0; i < t.ndim; i++) FUZZ_CHECK(r->shape[i] == shape_copy[i]);
    FUZZ_CHECK(out.version.major == (versioned ? version.major : 0));
    FUZZ_CHECK(out.subbyte_padded == padded);
    if (request.writable) FUZZ_CHECK(!out.read_only);
    if (request.copy == DLMAP_COPY_ALWAYS) FUZZ_CHECK(out.copied);
    if (request.copy == DLMAP_COPY_NEVER) FUZZ_CHECK(!out.copied);
    if (request.layout == DLMAP_LAYOUT_ROW_MAJOR) FUZZ_CHECK(fuzz_row_major(r->ndim, r->shape, r->strides));
    if (out.copied) {
      FUZZ_CHECK(readable);
      FUZZ_CHECK(ctx.deleter_calls == expected_calls_if_deleted); /* the copy no longer needs the producer */
      FUZZ_CHECK(r->byte_offset == 0 && r->device.device_type == (DLDeviceType)DLMAP_DEVICE_CPU);
      FUZZ_CHECK(fuzz_strides_compact(r->ndim, r->shape, r->strides));
      const uint64_t align = request.alignment > DLMAP_DATA_ALIGNMENT ? request.alignment : DLMAP_DATA_ALIGNMENT;
      FUZZ_CHECK((uintptr_t)r->data % align == 0);
      if (!use_default) FUZZ_CHECK(tracking.live == 1 && tracking.attempts == 1);
      if (element_bits % 8 == 0) { /* padded sub-byte elements are copied byte-wise, still padded */
        fuzz_check_copy(r->data, (const void *)first, t.ndim, shape_copy, strides != NULL ? strides_copy : NULL,
                        element_bits / 8, region.count);
      } else if (region.count > 0) {
        FUZZ_CHECK(memcmp(r->data, (const void *)first, (size_t)((region.count * element_bits + 7) / 8)) == 0);
      }
    } else {
      FUZZ_CHECK(ctx.deleter_calls == 0); /* a view keeps the producer's tensor alive until release */
      FUZZ_CHECK(tracking.attempts == 0);
      FUZZ_CHECK(r->data == t.data && r->byte_offset == t.byte_offset);
      if (strides != NULL) {
        for (int32_t i = 0; i < t.ndim; i++) FUZZ_CHECK(r->strides[i] == strides_copy[i]);
      } else if (t.ndim > 0) {
        FUZZ_CHECK(fuzz_strides_compact(r->ndim, r->shape, r->strides));
      }
      const dlmap_device_info *source = report_pinned ? reported_info : own_info;
      FUZZ_CHECK(source != NULL);
      const bool direct = dlmap_memory_kind_host_accessible(source->memory) ||
                          dlmap_platform_find(source->platform)->backend != DLMAP_BACKEND_NONE;
      if (request.alignment > 1 && direct && region.count > 0) {
        FUZZ_CHECK(first % request.alignment == 0);
      }
      if (versioned) FUZZ_CHECK(out.read_only == ((flags & DLMAP_FLAG_READ_ONLY) != 0));
    }
    dlmap_imported_release(&out);
    FUZZ_CHECK(ctx.deleter_calls == expected_calls_if_deleted);
    FUZZ_CHECK(tracking.live == 0);
    dlmap_imported_release(&out); /* zeroed by the first release: a no-op */
    FUZZ_CHECK(ctx.deleter_calls == expected_calls_if_deleted);
  }
  if (null_deleter) free_producer_memory(&ctx); /* nobody else could */
  g_producer = NULL;
  free(buffer);
  return 0;
}
