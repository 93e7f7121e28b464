/* dlmap core — shapes, strides and byte extents: the checks and layout tests export and import share. */
#ifndef DLMAP_SRC_LAYOUT_H_
#define DLMAP_SRC_LAYOUT_H_

#include "src/internal.h"

/* What a valid shape and stride set addresses, relative to the first element. */
typedef struct dlmap__extent {
  uint64_t count;        /* elements */
  uint64_t element_bits; /* bits × lanes */
  uint64_t compact_bytes; /* bytes of a packed, compact copy: ceil(count × element_bits / 8) */
  int64_t lo_bytes;      /* lowest byte reached, ≤ 0 (negative strides) */
  int64_t hi_bytes;      /* one past the highest byte reached, ≥ 0 */
} dlmap__extent;

/* Validates ndim, shape and strides (NULL strides: compact row-major) and computes the extent. Errors:
 * ndim_negative, ndim_too_large, shape_null, dim_negative, size_overflow. Reads exactly ndim entries. */
int32_t dlmap__check_shape(int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype,
                           dlmap__extent *out, dlmap_error *err);

/* Writes the compact row-major strides of shape into out (ndim entries). */
void dlmap__compact_strides(int32_t ndim, const int64_t *shape, int64_t *out);

/* Row-major (C-contiguous): every dimension of extent > 1 has the compact stride. NULL strides and
 * tensors with no elements qualify. */
bool dlmap__is_row_major(int32_t ndim, const int64_t *shape, const int64_t *strides);

/* A permutation of a compact layout (XLA's rule): ordering dimensions by stride, every dimension of
 * extent > 1 has exactly the product of the extents inside it. Size-1 dimensions may carry any
 * stride; tensors with no elements qualify. */
bool dlmap__is_compact_permutation(int32_t ndim, const int64_t *shape, const int64_t *strides);

#endif /* DLMAP_SRC_LAYOUT_H_ */
