/* dlmap fuzz target — export (to_dlpack / __dlpack__): random array descriptions (device, dtype, ndim, shape and
 * strides allocated at exactly ndim entries, data, offset, read-only, sub-byte padding) under random requests
 * (max_version, dl_device, copy, stream, allocator). Every exported tensor is released through its deleter.
 * Invariants: the owner's release runs exactly once per successful export (when the deleter runs) and never on
 * error; errors allocate nothing (out_of_memory aside) and leave a complete catalogue error; the exported struct,
 * version and flags agree with the request; a copy holds exactly the source elements; nothing leaks. */
#include "fuzz/harness.h"

#define MAX_DATA_BYTES ((size_t)1 << 18)

typedef struct owner_state {
  int releases;
} owner_state;

static void owner_release(void *owner) {
  owner_state *state = (owner_state *)owner;
  state->releases++;
  FUZZ_CHECK(state->releases == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size};

  /* ---- the array ---- */
  dlmap_array array = dlmap_array_default();
  array.device_type = fuzz_device_type(&in);
  array.device_id = (int32_t)fuzz_pick_i64(&in, kFuzzInterestingI64, 8);
  array.dtype = fuzz_dtype(&in);
  const uint8_t ndim_sel = fuzz_u8(&in);
  array.ndim = ndim_sel < 230 ? (int32_t)(ndim_sel % 7) : ndim_sel < 240 ? (int32_t)(60 + ndim_sel % 8)
                                                                          : (int32_t)fuzz_u32(&in);
  const uint8_t null_sel = fuzz_u8(&in);
  const uint64_t dtype_bits = (uint64_t)array.dtype.bits * array.dtype.lanes;
  int64_t *shape = (null_sel & 0x0f) == 0x0f ? NULL : fuzz_dims_block(&in, array.ndim, false, dtype_bits, NULL);
  int64_t *strides = (null_sel & 0x30) == 0 ? NULL : fuzz_dims_block(&in, array.ndim, true, dtype_bits, shape);
  array.shape = shape;
  array.strides = strides;
  const uint8_t off_sel = fuzz_u8(&in);
  array.byte_offset = off_sel < 200 ? (uint64_t)(off_sel % 72) : (uint64_t)fuzz_pick_i64(&in, kFuzzInterestingI64, 25);
  array.read_only = (null_sel & 0x40) != 0;
  array.subbyte_padded = (null_sel & 0x80) != 0 && (fuzz_u8(&in) & 1);
  const uint8_t buf_sel = fuzz_u8(&in);
  size_t buffer_size = (size_t)fuzz_u32(&in) % (MAX_DATA_BYTES + 1);
  if (buf_sel < 128) buffer_size %= 4097;
  char *buffer = (char *)malloc(buffer_size == 0 ? 1 : buffer_size);
  const uint8_t data_sel = fuzz_u8(&in);
  uintptr_t data_addr;
  if (data_sel < 200) {
    data_addr = (uintptr_t)buffer + (buffer_size > 0 ? data_sel % (buffer_size < 256 ? buffer_size : 256) : 0);
  } else if (data_sel < 215) {
    data_addr = 0;
  } else {
    data_addr = (uintptr_t)fuzz_u64(&in); /* a hostile address: must never be dereferenced */
  }
  array.data = (void *)data_addr;
  owner_state owner = {0};
  const uint8_t owner_sel = fuzz_u8(&in);
  array.owner = &owner;
  array.release = owner_sel == 0xff ? NULL : owner_release; /* release may be NULL */

  /* ---- the request ---- */
  dlmap_export_request request = dlmap_export_request_default();
  const uint8_t r0 = fuzz_u8(&in), r1 = fuzz_u8(&in);
  request.has_max_version = (r0 & 1) != 0;
  if (request.has_max_version) request.max_version = fuzz_version(&in);
  request.has_dl_device = (r0 & 2) != 0;
  request.dl_device_type = request.has_dl_device ? fuzz_device_type(&in) : 0;
  request.dl_device_id = request.has_dl_device ? (int32_t)fuzz_pick_i64(&in, kFuzzInterestingI64, 9) : 0;
  request.copy = (dlmap_copy_mode)((r0 >> 2) & 3); /* 3: invalid, must be a clean invalid_argument */
  request.has_stream = (r0 & 16) != 0;
  static const int64_t kStreams[] = {-1, 0, 1, 2, 3, 4, 5, 0x7f00, INT64_MAX, INT64_MIN, -2};
  request.stream = request.has_stream ? fuzz_pick_i64(&in, kStreams, sizeof kStreams / sizeof kStreams[0]) : 0;
  fuzz_allocator tracking;
  const uint8_t alloc_sel = (r1 >> 1) & 7;
  fuzz_allocator_init(&tracking, alloc_sel == 7 ? 1 : 0);

  /* The data is only read when every element lies in the buffer; otherwise copying is forbidden. */
  const bool padded = array.subbyte_padded && (uint64_t)array.dtype.bits * array.dtype.lanes < 8;
  uint64_t element_bits = (uint64_t)array.dtype.bits * array.dtype.lanes;
  if (padded) element_bits = 8;
  const fuzz_region region = fuzz_tensor_region(array.ndim, shape, strides, element_bits);
  /* dlmap's size limits count the dtype's bits (padded or not): every bit count must fit in int64. */
  const fuzz_region packed_region = fuzz_tensor_region(array.ndim, shape, strides, dtype_bits);
  const uintptr_t first = data_addr + (uintptr_t)array.byte_offset;
  const bool readable = data_addr != 0 && (uint64_t)data_addr + array.byte_offset >= (uint64_t)data_addr &&
                        fuzz_region_inside(&region, first, buffer, buffer_size);
  if (readable) { /* only then can dlmap read it: fill it for the copy check */
    for (size_t i = 0; i < buffer_size; i++) buffer[i] = (char)(i * 131 + 7);
  }
  if (!readable && request.copy != 3) request.copy = DLMAP_COPY_NEVER;
  const bool small_copy = readable && region.count * ((element_bits + 7) / 8) <= FUZZ_ALLOC_CAP;
  const bool use_default = alloc_sel == 0 && small_copy;
  request.allocator = use_default ? NULL : &tracking.api;

  int64_t shape_copy[DLMAP_MAX_NDIM], strides_copy[DLMAP_MAX_NDIM];
  const bool dims_ok = array.ndim >= 0 && array.ndim <= DLMAP_MAX_NDIM && (shape != NULL || array.ndim == 0);
  if (dims_ok && array.ndim > 0) memcpy(shape_copy, shape, (size_t)array.ndim * sizeof(int64_t));
  if (dims_ok && array.ndim > 0 && strides != NULL) memcpy(strides_copy, strides, (size_t)array.ndim * sizeof(int64_t));

  dlmap_exported out;
  memset(&out, 0xa5, sizeof out); /* untouched on error: still the pattern afterwards */
  dlmap_exported pattern;
  memcpy(&pattern, &out, sizeof out);
  dlmap_error err;
  memset(&err, 0, sizeof err);
  const int32_t status = dlmap_export(&array, &request, &out, &err);

  /* dlmap only reads the array during the call: the caller may free its shape and strides right away. */
  free(shape);
  free(strides);

  if (getenv("FUZZ_VERBOSE") != NULL) fprintf(stderr, "status %d: %s\n", status, status ? err.message : "");
  if (status != DLMAP_OK) {
    fuzz_check_error(&err, status);
    FUZZ_CHECK(owner.releases == 0); /* on error the caller keeps its reference */
    FUZZ_CHECK(tracking.live == 0);
    FUZZ_CHECK(tracking.attempts == 0 || status == DLMAP_ERR_OUT_OF_MEMORY);
    FUZZ_CHECK(memcmp(&out, &pattern, sizeof out) == 0);
    if (request.copy == 3) FUZZ_CHECK(status == DLMAP_ERR_INVALID_ARGUMENT);
  } else {
    FUZZ_CHECK(request.copy != 3);
    FUZZ_CHECK(owner.releases == 0);
    FUZZ_CHECK(packed_region.valid && fuzz_region_sizes_fit(&packed_region)); /* issue 14: sub-byte size wraps */
    DLTensor *t;
    if (out.structure == DLMAP_STRUCT_VERSIONED) {
      FUZZ_CHECK(out.versioned != NULL && out.legacy == NULL && request.has_max_version);
      FUZZ_CHECK(out.versioned->deleter != NULL);
      FUZZ_CHECK(out.versioned->version.major == out.version.major &&
                 out.versioned->version.minor == out.version.minor);
      FUZZ_CHECK(dlmap_version_compare(out.version, request.max_version) <= 0);
      FUZZ_CHECK(dlmap_version_compare(out.version, dlmap_version_current()) <= 0);
      FUZZ_CHECK(dlmap_version_struct(out.version) == DLMAP_STRUCT_VERSIONED);
      const uint64_t f = out.versioned->flags;
      FUZZ_CHECK(((f & DLMAP_FLAG_IS_COPIED) != 0) == out.copied);
      FUZZ_CHECK(((f & DLMAP_FLAG_READ_ONLY) != 0) == (array.read_only && !out.copied));
      FUZZ_CHECK(((f & DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0) == array.subbyte_padded);
      FUZZ_CHECK(dlmap_flags_in_version(f, out.version));
      t = &out.versioned->dl_tensor;
    } else {
      FUZZ_CHECK(out.structure == DLMAP_STRUCT_LEGACY);
      FUZZ_CHECK(out.legacy != NULL && out.versioned == NULL);
      FUZZ_CHECK(out.legacy->deleter != NULL);
      dlmap_struct_kind expected = DLMAP_STRUCT_NONE; /* the profile's answer to this max_version */
      FUZZ_CHECK(dlmap_profile_struct_lookup(request.has_max_version, request.max_version, &expected, NULL) == DLMAP_OK &&
                 expected == DLMAP_STRUCT_LEGACY);
      /* A legacy tensor cannot say read-only: refused, unless the profile drops the flag. */
      FUZZ_CHECK(!(array.read_only && !out.copied) || dlmap_profile_current()->legacy_drops_read_only);
      t = &out.legacy->dl_tensor;
    }
    if (request.copy == DLMAP_COPY_ALWAYS) FUZZ_CHECK(out.copied);
    if (request.copy == DLMAP_COPY_NEVER) FUZZ_CHECK(!out.copied);
    FUZZ_CHECK(t->ndim == array.ndim && dims_ok);
    FUZZ_CHECK(t->dtype.code == array.dtype.code && t->dtype.bits == array.dtype.bits &&
               t->dtype.lanes == array.dtype.lanes);
    FUZZ_CHECK(t->ndim == 0 || (t->shape != NULL && t->strides != NULL));
    for (int32_t i = 0; i < t->ndim; i++) FUZZ_CHECK(t->shape[i] == shape_copy[i]);
    /* dl_device names the target, except device type 0 where the profile reads it as None (falsy). */
    const bool dl_device = request.has_dl_device && !(request.dl_device_type == 0 && dlmap_profile_current()->dl_device_falsy_is_none);
    const int32_t target = dl_device ? request.dl_device_type : array.device_type;
    FUZZ_CHECK((int32_t)t->device.device_type == target);
    if (out.copied) {
      FUZZ_CHECK(readable);
      FUZZ_CHECK(t->byte_offset == 0 && (uintptr_t)t->data % DLMAP_DATA_ALIGNMENT == 0);
      FUZZ_CHECK(fuzz_strides_compact(t->ndim, t->shape, t->strides));
      if (element_bits % 8 == 0) {
        fuzz_check_copy(t->data, (const void *)first, array.ndim, shape_copy, strides != NULL ? strides_copy : NULL,
                        element_bits / 8, region.count);
      } else if (region.count > 0) {
        FUZZ_CHECK(memcmp(t->data, (const void *)first, (size_t)((region.count * element_bits + 7) / 8)) == 0);
      }
    } else {
      FUZZ_CHECK(t->data == array.data && t->byte_offset == array.byte_offset);
      if (strides != NULL) {
        for (int32_t i = 0; i < t->ndim; i++) FUZZ_CHECK(t->strides[i] == strides_copy[i]);
      } else if (t->ndim > 0) {
        FUZZ_CHECK(fuzz_strides_compact(t->ndim, t->shape, t->strides));
      }
    }
    if (!use_default) FUZZ_CHECK(tracking.live == 1 && tracking.attempts == 1);
    /* The consumer is done: one deleter call releases the block and the owner, exactly once. */
    if (out.structure == DLMAP_STRUCT_VERSIONED) {
      out.versioned->deleter(out.versioned);
    } else {
      out.legacy->deleter(out.legacy);
    }
    FUZZ_CHECK(owner.releases == (array.release != NULL ? 1 : 0));
    FUZZ_CHECK(tracking.live == 0);
  }
  free(buffer);
  return 0;
}
