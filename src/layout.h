/* dlmap core — shapes, strides and byte extents: the checks and layout tests export and import share. */
#ifndef DLMAP_SRC_LAYOUT_H_
#define DLMAP_SRC_LAYOUT_H_

#include "src/internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* One dimension of a copy, in bytes: a dimension of the tensor of extent > 1, or several fused into one. */
typedef struct dlmap__copy_dim {
  int64_t extent;   /* > 1 */
  int64_t src_step; /* bytes between neighbours in the source: any sign, 0 broadcasts */
  int64_t dst_step; /* bytes between neighbours in the compact destination: element bytes × the extents inside */
} dlmap__copy_dim;

/* Everything a copy of a tensor into a compact row-major buffer needs to know about its layout, worked out once
 * (dlmap__copy_layout_make) and read by every copier: the host's (src/host_copy.c), the GPU backend's 2-D and staged
 * paths (src/backends/gpu.c) and the strided-copy kernels' plan (src/backends/gpu_kernels.c). */
typedef struct dlmap__copy_layout {
  uint64_t count;         /* elements of element_bytes to copy */
  uint64_t element_bytes; /* packed sub-byte data (row-major: dlmap__check_copyable) is copied as its bytes: 1 */
  uint64_t bytes;         /* the compact copy: the extent's compact_bytes */
  int64_t lo_bytes;       /* the bytes the source reaches, relative to its first element (the extent's) */
  int64_t hi_bytes;
  /* element_bytes | every dimension's src_step: a power of two divides each byte offset the source is read at
   * exactly when it divides this (a fused dimension's stride is a multiple of its inner part's step). */
  uint64_t align_bits;
  int32_t ndim;                         /* merged dimensions; 0: at most one element, or the tensor has none */
  dlmap__copy_dim dims[DLMAP_MAX_NDIM]; /* innermost first */
  int32_t tensor_ndim;                  /* the tensor as given, for messages */
  const int64_t *shape;
} dlmap__copy_layout;

/* The copy layout of a tensor whose shape and strides dlmap__check_shape (or _check_storage) accepted with `extent`
 * (strides NULL: compact). Dimensions of extent 1 are dropped (never stepped, their stride may be anything), and a
 * dimension whose step continues the one inside it (that one's step × extent) is fused with it: the only place
 * dimensions are merged. Built only where a copy is planned, not in the shape check that every import runs: the
 * prepared import of a view must not pay for it (bench/: its instruction count). */
void dlmap__copy_layout_make(int32_t ndim, const int64_t *shape, const int64_t *strides, const dlmap__extent *extent,
                             dlmap__copy_layout *out);

/* Whether the layout is one contiguous run (or one element): a single memcpy of `bytes` copies it. */
static inline bool dlmap__copy_layout_compact(const dlmap__copy_layout *layout) {
  return layout->ndim == 0 || (layout->ndim == 1 && layout->dims[0].src_step == (int64_t)layout->element_bytes);
}

/* Writes the compact row-major strides of shape into out (ndim entries). */
void dlmap__compact_strides(int32_t ndim, const int64_t *shape, int64_t *out);

/* Row-major (C-contiguous): every dimension of extent > 1 has the compact stride. NULL strides and
 * tensors with no elements qualify. */
bool dlmap__is_row_major(int32_t ndim, const int64_t *shape, const int64_t *strides);

/* A permutation of a compact layout (XLA's rule): ordering dimensions by stride, every dimension of
 * extent > 1 has exactly the product of the extents inside it. Size-1 dimensions may carry any
 * stride; tensors with no elements qualify. */
bool dlmap__is_compact_permutation(int32_t ndim, const int64_t *shape, const int64_t *strides);

#if defined(__SSE2__)
/* Two int64s at a and b against each other: a 64-bit lane is equal exactly when both its 32-bit halves are (SSE2 has
 * no 64-bit compare). */
static inline __m128i dlmap__pair_equal(const int64_t *a, const int64_t *b) {
  return _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)a), _mm_loadu_si128((const __m128i *)b));
}
#endif

/* Whether shape[i] == want_shape[i] and strides[i] == want_strides[i] for every i < n (a layout without strides
 * passes its shape for both). Inline, without an early exit and two dimensions a step with SSE2 where the target has
 * it: a prepared import asks this of every tensor and nearly always gets true. */
static inline bool dlmap__same_dims(const int64_t *shape, const int64_t *strides, const int64_t *want_shape,
                                    const int64_t *want_strides, size_t n) {
  size_t i = 0;
  uint64_t differ = 0;
#if defined(__SSE2__)
  __m128i equal = _mm_set1_epi32(-1);
  for (; i + 2 <= n; i += 2) {
    equal = _mm_and_si128(equal, _mm_and_si128(dlmap__pair_equal(shape + i, want_shape + i),
                                               dlmap__pair_equal(strides + i, want_strides + i)));
  }
  differ = (uint64_t)(_mm_movemask_epi8(equal) ^ 0xFFFF);
#endif
  for (; i < n; i++) {
    differ |= ((uint64_t)shape[i] ^ (uint64_t)want_shape[i]) | ((uint64_t)strides[i] ^ (uint64_t)want_strides[i]);
  }
  return differ == 0;
}

/* A fingerprint of a layout: equal layouts give equal fingerprints; different ones usually differ (sums, so a
 * permutation of the same extents and strides does not: a false match only costs the full comparison that follows).
 * The unprepared calls compare it before the remembered plan, and remember a layout's plan only when it comes twice in
 * a row (src/export_plan_cache.c, src/import.c). Sums, two dimensions a step: a few instructions per dimension. */
static inline uint64_t dlmap__layout_fingerprint(int32_t ndim, const int64_t *shape, const int64_t *strides) {
  uint64_t extent0 = 0, extent1 = 0, step0 = 0, step1 = 0;
  const int32_t pairs = ndim / 2 * 2;
  for (int32_t i = 0; i < pairs; i += 2) {
    extent0 += (uint64_t)shape[i];
    extent1 += (uint64_t)shape[i + 1];
  }
  if (pairs < ndim) extent0 += (uint64_t)shape[pairs];
  if (strides == NULL) {
    step0 = UINT64_MAX; /* strides not sent */
  } else {
    for (int32_t i = 0; i < pairs; i += 2) {
      step0 += (uint64_t)strides[i];
      step1 += (uint64_t)strides[i + 1];
    }
    if (pairs < ndim) step0 += (uint64_t)strides[pairs];
  }
  return ((uint64_t)(uint32_t)ndim << 56) ^ ((extent0 + 3 * extent1) * 0x9E3779B97F4A7C15u) ^
         ((step0 + 3 * step1) * 0xC2B2AE3D27D4EB4Fu);
}

#endif /* DLMAP_SRC_LAYOUT_H_ */
