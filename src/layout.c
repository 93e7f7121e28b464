/* dlmap core — shapes, strides and byte extents: validation with overflow checks, and the layout tests
 * behind the import policies (row-major, permutation of compact). No allocation. */
#include "src/layout.h"

static int32_t overflow(int32_t ndim, const int64_t *shape, const int64_t *strides, dlmap_error *err) {
  const int32_t shown = ndim < 16 ? ndim : 16; /* the message lists the first 16 dimensions */
  if (strides != NULL) return dlmap_raise_size_overflow(err, shape, shown, strides, shown);
  /* Without strides the message says so in words: text where {strides} is a list of ints, so built by hand. The
   * DLMAP_ERR_SIZE_OVERFLOW_ARG_* names exist only while size_overflow takes those placeholders (as its typed
   * function's parameters do), so this site too stops compiling when the spec drops one. */
  const dlmap_arg args[] = {dlmap_arg_ints(DLMAP_ERR_SIZE_OVERFLOW_ARG_SHAPE, shape, shown),
                            dlmap_arg_str(DLMAP_ERR_SIZE_OVERFLOW_ARG_STRIDES, "none: compact row-major")};
  return dlmap_error_set(err, DLMAP_ERR_SIZE_OVERFLOW, args, sizeof args / sizeof args[0]);
}

/* One pass over the dimensions (issue 15: about 90 instructions less at ndim 4 than two): the element count, and the
 * lowest and highest element offsets the strides reach. Overflows are only noted on the way: a negative extent anywhere
 * is reported first, and the strides count only for a tensor with elements. The count never decreases without a zero
 * extent, so "above INT64_MAX at some step" is "above it, or wrapped, at the end". The copy layout is not built here
 * (dlmap__copy_layout_make): this runs on every import, and most never copy. */
int32_t dlmap__check_shape(int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype,
                           dlmap__extent *out, dlmap_error *err) {
  if (ndim < 0) {
    return dlmap_raise_ndim_negative(err, ndim, DLMAP_MAX_NDIM);
  }
  if (ndim > DLMAP_MAX_NDIM) {
    return dlmap_raise_ndim_too_large(err, ndim, DLMAP_MAX_NDIM);
  }
  if (ndim > 0 && shape == NULL) {
    return dlmap_raise_shape_null(err, ndim);
  }
  uint64_t count = 1;
  bool overflowed = false, empty = false, strides_overflowed = false;
  int64_t lo = 0, hi = 0;
  for (int32_t i = 0; i < ndim; i++) {
    const int64_t extent = shape[i];
    if (extent < 0) {
      return dlmap_raise_dim_negative(err, i, extent);
    }
    empty |= extent == 0;
    overflowed |= __builtin_mul_overflow(count, (uint64_t)extent, &count);
    if (strides != NULL) {
      int64_t step;
      strides_overflowed |= __builtin_mul_overflow(extent - 1, strides[i], &step);
      strides_overflowed |= __builtin_add_overflow(step < 0 ? lo : hi, step, step < 0 ? &lo : &hi);
    }
  }
  overflowed |= count > (uint64_t)INT64_MAX;
  const uint64_t element_bits = (uint64_t)dtype.bits * dtype.lanes;
  /* A zero extent makes the product 0 whatever else overflowed. Only a zero extent: a product that
   * wrapped to 0 (shape {2^32, 2^32}) is an overflow, not an empty tensor. */
  if (empty) {
    overflowed = false;
    count = 0;
  }
  /* The bit count must fit in int64, as the strided extents below are computed in signed bits: a
   * sub-byte count × bits can reach 2^64 − 1 without wrapping, and (bits + 7) / 8 would then wrap to 0. */
  uint64_t bits;
  if (overflowed || __builtin_mul_overflow(count, element_bits, &bits) || bits > (uint64_t)INT64_MAX) {
    return overflow(ndim, shape, strides, err);
  }
  out->count = count;
  out->element_bits = element_bits;
  out->compact_bytes = (bits + 7) / 8;
  out->lo_bytes = 0;
  out->hi_bytes = (int64_t)out->compact_bytes;
  if (strides == NULL || count == 0) return DLMAP_OK;

  /* Strided: the lowest and highest element offsets, in bytes (sub-byte elements round outwards). */
  if (strides_overflowed) return overflow(ndim, shape, strides, err);
  int64_t lo_bits, hi_bits, end;
  if (__builtin_add_overflow(hi, 1, &end) || __builtin_mul_overflow(lo, (int64_t)element_bits, &lo_bits) ||
      __builtin_mul_overflow(end, (int64_t)element_bits, &hi_bits) || lo_bits < -INT64_MAX + 7) {
    return overflow(ndim, shape, strides, err);
  }
  out->lo_bytes = lo_bits >= 0 ? lo_bits / 8 : -((-lo_bits + 7) / 8);
  out->hi_bytes = hi_bits / 8 + (hi_bits % 8 != 0);
  return DLMAP_OK;
}

void dlmap__compact_strides(int32_t ndim, const int64_t *shape, int64_t *out) {
  int64_t stride = 1;
  for (int32_t i = ndim - 1; i >= 0; i--) {
    out[i] = stride;
    /* Cannot overflow when the tensor has elements (the count was checked). A tensor with no elements
     * may have other extents whose product does not fit ({0, 2^62, 2^62}); its strides address
     * nothing, so they saturate at INT64_MAX. */
    if (__builtin_mul_overflow(stride, shape[i] > 0 ? shape[i] : 1, &stride)) stride = INT64_MAX;
  }
}

void dlmap__copy_layout_make(int32_t ndim, const int64_t *shape, const int64_t *strides, const dlmap__extent *extent,
                             dlmap__copy_layout *out) {
  const bool packed = extent->element_bits % 8 != 0; /* copied as its bytes */
  const int64_t element_bytes = packed ? 1 : (int64_t)(extent->element_bits / 8);
  out->count = packed ? extent->compact_bytes : extent->count;
  out->element_bytes = (uint64_t)element_bytes;
  out->bytes = extent->compact_bytes;
  out->lo_bytes = extent->lo_bytes;
  out->hi_bytes = extent->hi_bytes;
  out->align_bits = (uint64_t)element_bytes;
  out->ndim = 0;
  out->tensor_ndim = ndim;
  out->shape = shape;
  if (out->count <= 1) return;
  if (packed || strides == NULL) { /* compact: one run */
    out->dims[0] = (dlmap__copy_dim){(int64_t)out->count, element_bytes, element_bytes};
    out->ndim = 1;
    return;
  }
  dlmap__copy_dim *dims = out->dims;
  int32_t n = 0;
  int64_t dst_step = element_bytes;
  for (int32_t i = ndim - 1; i >= 0; i--) {
    if (shape[i] == 1) continue; /* never stepped; its stride may be anything */
    const int64_t src_step = strides[i] * element_bytes;
    int64_t span;
    if (n > 0 && !__builtin_mul_overflow(dims[n - 1].src_step, dims[n - 1].extent, &span) && span == src_step) {
      dims[n - 1].extent *= shape[i]; /* the destination is compact: it always continues there */
    } else {
      dims[n++] = (dlmap__copy_dim){shape[i], src_step, dst_step};
      out->align_bits |= (uint64_t)src_step;
    }
    dst_step *= shape[i];
  }
  out->ndim = n;
}

static bool has_no_elements(int32_t ndim, const int64_t *shape) {
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] == 0) return true;
  }
  return false;
}

bool dlmap__is_row_major(int32_t ndim, const int64_t *shape, const int64_t *strides) {
  if (strides == NULL || has_no_elements(ndim, shape)) return true;
  int64_t expected = 1;
  for (int32_t i = ndim - 1; i >= 0; i--) {
    if (shape[i] > 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

bool dlmap__is_compact_permutation(int32_t ndim, const int64_t *shape, const int64_t *strides) {
  /* Row-major is the identity permutation, and the common case: answered without the sort (bench/). */
  if (dlmap__is_row_major(ndim, shape, strides)) return true;
  /* Insertion sort of dimension indices, minor first: smaller stride first; on equal strides the
   * higher-numbered dimension is the more minor (the row-major reading). ndim ≤ DLMAP_MAX_NDIM. */
  int32_t order[DLMAP_MAX_NDIM];
  for (int32_t i = 0; i < ndim; i++) {
    int32_t dim = ndim - 1 - i, j = i;
    while (j > 0 && strides[order[j - 1]] > strides[dim]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = dim;
  }
  int64_t expected = 1;
  for (int32_t i = 0; i < ndim; i++) {
    const int32_t dim = order[i];
    if (shape[dim] > 1 && strides[dim] != expected) return false;
    expected *= shape[dim];
  }
  return true;
}
