/* dlmap fuzz harness support — input reader, invariant checks and a tracking allocator shared by the fuzz targets
 * (built with clang + libFuzzer by --config=fuzz, and with gcc into //tests/hardening:*_replay_test). */
#ifndef DLMAP_FUZZ_HARNESS_H_
#define DLMAP_FUZZ_HARNESS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlmap/dlmap.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DLMAP_FUZZ_ASAN 1
#endif
#endif
#if !defined(DLMAP_FUZZ_ASAN) && defined(__SANITIZE_ADDRESS__)
#define DLMAP_FUZZ_ASAN 1
#endif
#ifdef DLMAP_FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define FUZZ_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* An invariant of dlmap's contract: a violation aborts, which libFuzzer (and the replay test) reports as a crash. */
#define FUZZ_CHECK(cond)                                                                        \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond);            \
      abort();                                                                                  \
    }                                                                                           \
  } while (0)

/* 128-bit arithmetic for the harness's own size computations, which must not overflow where dlmap's may. */
__extension__ typedef __int128 fuzz_i128;

/* ---- input reader: takes values from the front; zeros once the input is exhausted -------------------- */

typedef struct fuzz_input {
  const uint8_t *data;
  size_t size;
} fuzz_input;

static inline uint64_t fuzz_bytes(fuzz_input *in, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t b = 0;
    if (in->size > 0) {
      b = in->data[0];
      in->data++;
      in->size--;
    }
    v |= (uint64_t)b << (8 * i);
  }
  return v;
}
static inline uint8_t fuzz_u8(fuzz_input *in) { return (uint8_t)fuzz_bytes(in, 1); }
static inline uint16_t fuzz_u16(fuzz_input *in) { return (uint16_t)fuzz_bytes(in, 2); }
static inline uint32_t fuzz_u32(fuzz_input *in) { return (uint32_t)fuzz_bytes(in, 4); }
static inline uint64_t fuzz_u64(fuzz_input *in) { return fuzz_bytes(in, 8); }
static inline bool fuzz_bool(fuzz_input *in) { return (fuzz_u8(in) & 1) != 0; }

/* Picks from a table most of the time (byte < 224), else takes a raw value: dictionaries of interesting values
 * keep the fuzzer near the boundaries while raw values cover the rest. */
static inline int64_t fuzz_pick_i64(fuzz_input *in, const int64_t *table, size_t n) {
  const uint8_t sel = fuzz_u8(in);
  if (sel < 224 && n > 0) return table[sel % n];
  return (int64_t)fuzz_u64(in);
}

static const int64_t kFuzzInterestingI64[] = {0, 1, 2, 3, 4, 5, 7, 8, -1, -2, 16, 64, 255, 256, 1023, 4096,
                                              INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, INT64_MAX / 2,
                                              (int64_t)1 << 32, (int64_t)1 << 40, (int64_t)1 << 62, -((int64_t)1 << 62)};

/* ndim beyond this gets a 1-byte shape/strides block: any read of it is out of bounds (ASan reports it). */
#define MAX_DIM_ALLOC 512

/* A value whose product with `factor` lands near 2^62, 2^63 or 2^64 (one byte picks the power and an offset of
 * -2..+2): with factor = element bits × the other extents, the tensor's bit count straddles the limits where a
 * uint64 or int64 bit count, or its rounding up to bytes, wraps. Clamped to [0, INT64_MAX]. */
static inline int64_t fuzz_bit_boundary(fuzz_input *in, fuzz_i128 factor) {
  const uint8_t k = fuzz_u8(in);
  const int exponent = 62 + k % 3;
  const int offset = (int)((k / 3) % 5) - 2;
  if (factor < 1) factor = 1;
  fuzz_i128 value = (((fuzz_i128)1) << exponent) / factor + offset;
  if (value < 0) value = 0;
  if (value > INT64_MAX) value = INT64_MAX;
  return (int64_t)value;
}

/* A shape (or, with strides, a strides) block of exactly n int64 entries, malloc'd so that ASan catches a read
 * past entry n-1; a 1-byte block when n is out of the allocatable range. Mostly small extents and steps (zero,
 * negative and broadcast included), sometimes the interesting boundary values, and sometimes (selector 252..255) a
 * bit-count boundary: an extent that brings count × element_bits near 2^62, 2^63 or 2^64 given the extents before
 * it, or a stride whose step over `shape` (the block's shape, for strides) does the same in bits. */
/* A 1-byte block, through a function: gcc 14's -Walloc-size rejects malloc(1) assigned to an int64_t pointer, and
 * that undersized block is the point (no entry of it may be read). */
static inline void *fuzz_one_byte_block(void) { return malloc(1); }

static inline int64_t *fuzz_dims_block(fuzz_input *in, int32_t n, bool strides, uint64_t element_bits,
                                       const int64_t *shape) {
  if (n <= 0 || n > MAX_DIM_ALLOC) return (int64_t *)fuzz_one_byte_block();
  int64_t *dims = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  static const int64_t kExtents[] = {1, 2, 3, 0, 4, 5, 1, 2, 7, 16, -1, 1, 2, 3, 64, 255};
  static const int64_t kStrides[] = {1, 2, 0, -1, 3, 4, 6, -2, 8, 12, 16, 24, 64, -3, 5, 1};
  fuzz_i128 before = 1; /* product of the extents so far (saturated), for extent boundaries */
  for (int32_t i = 0; i < n; i++) {
    const uint8_t sel = fuzz_u8(in);
    if (sel < 240) {
      dims[i] = strides ? kStrides[sel % 16] : kExtents[sel % 16];
    } else if (sel < 252) {
      dims[i] = fuzz_pick_i64(in, kFuzzInterestingI64, sizeof kFuzzInterestingI64 / sizeof kFuzzInterestingI64[0]);
    } else if (!strides) {
      dims[i] = fuzz_bit_boundary(in, before * (fuzz_i128)element_bits);
    } else {
      const int64_t steps = shape != NULL && n <= DLMAP_MAX_NDIM && shape[i] > 1 ? shape[i] - 1 : 1;
      dims[i] = fuzz_bit_boundary(in, (fuzz_i128)steps * (fuzz_i128)element_bits);
      if (sel & 1) dims[i] = -dims[i]; /* the low end: negative steps */
    }
    if (!strides && dims[i] > 0) { /* saturates at 2^80 without overflowing on the way */
      before = dims[i] > (((fuzz_i128)1 << 80) / before) ? (fuzz_i128)1 << 80 : before * dims[i];
    }
  }
  return dims;
}

/* A DLPack device type: mostly ones the spec defines (and their neighbours), sometimes anything. */
static inline int32_t fuzz_device_type(fuzz_input *in) {
  static const int64_t kTypes[] = {1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                   0, 5, 6, 22, 200, -1, INT32_MAX, INT32_MIN, 1, 1, 1, 3, 13};
  return (int32_t)fuzz_pick_i64(in, kTypes, sizeof kTypes / sizeof kTypes[0]);
}

/* The spec's sub-byte widths (code, bits < 8), from the library's own tables: filled once, in spec order. */
typedef struct fuzz_subbyte_widths {
  size_t count;
  uint8_t code[64], bits[64];
} fuzz_subbyte_widths;

static inline const fuzz_subbyte_widths *fuzz_subbyte(void) {
  static fuzz_subbyte_widths widths;
  static bool filled;
  if (!filled) {
    for (size_t i = 0; dlmap_dtype_code_at(i) != NULL; i++) {
      const uint8_t code = dlmap_dtype_code_at(i)->code;
      for (uint8_t bits = 1; bits < 8 && widths.count < 64; bits++) {
        if (!dlmap_dtype_width_valid(code, bits, NULL)) continue;
        widths.code[widths.count] = code;
        widths.bits[widths.count] = bits;
        widths.count++;
      }
    }
    filled = true;
  }
  return &widths;
}

/* A dtype: mostly valid widths of known codes, sometimes anything (including lanes 0 and vector lanes), and
 * sometimes (code selector 200..215) one of the spec's sub-byte widths with lanes 1, 2, 3, 4, 7 or 8, where the
 * bit count of a tensor is not a whole number of bytes. */
static inline DLDataType fuzz_dtype(fuzz_input *in) {
  static const uint8_t kBits[] = {8, 16, 32, 64, 1, 4, 6, 128, 0, 2, 3, 7, 255, 8, 32, 64};
  static const uint16_t kSubbyteLanes[] = {1, 2, 3, 4, 7, 8, 1, 3};
  DLDataType t;
  const uint8_t a = fuzz_u8(in), b = fuzz_u8(in), c = fuzz_u8(in);
  const uint8_t raw_code = a < 200 ? (uint8_t)(a % 20) : fuzz_u8(in);
  t.code = raw_code;
  t.bits = b < 224 ? kBits[b % sizeof kBits] : fuzz_u8(in);
  t.lanes = c < 200 ? 1 : c < 230 ? (uint16_t)(c % 8) : fuzz_u16(in);
  const fuzz_subbyte_widths *subbyte = fuzz_subbyte();
  if (a >= 200 && a < 216 && subbyte->count > 0) { /* the byte read as a raw code picks the width instead */
    t.code = subbyte->code[raw_code % subbyte->count];
    t.bits = subbyte->bits[raw_code % subbyte->count];
    t.lanes = kSubbyteLanes[(a + c) % 8];
  }
  return t;
}

/* A DLPack version: the interesting ones (listed, legacy, future, unknown majors) or anything. */
static inline dlmap_version fuzz_version(fuzz_input *in) {
  static const uint32_t kVersions[][2] = {{1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 99}, {0, 5}, {0, 8}, {0, 1},
                                          {0, 0}, {2, 0}, {3, 1}, {1, UINT32_MAX}, {UINT32_MAX, 0}, {0, 4}};
  dlmap_version v;
  const uint8_t sel = fuzz_u8(in);
  if (sel < 240) {
    v.major = kVersions[sel % (sizeof kVersions / sizeof kVersions[0])][0];
    v.minor = kVersions[sel % (sizeof kVersions / sizeof kVersions[0])][1];
  } else {
    v.major = fuzz_u32(in);
    v.minor = fuzz_u32(in);
  }
  return v;
}

/* ---- a tracking allocator: counts attempts and live blocks, fails on request, refuses huge sizes -------- */

#define FUZZ_MAX_BLOCKS 16
#define FUZZ_ALLOC_CAP ((size_t)1 << 16) /* larger requests fail (MemoryError), like a bounded framework pool */

typedef struct fuzz_allocator {
  dlmap_allocator api;
  size_t attempts;       /* calls to allocate */
  size_t live;           /* blocks handed out and not yet released */
  size_t fail_at;        /* 1-based attempt that fails; 0: none */
  size_t last_alignment;
  void *blocks[FUZZ_MAX_BLOCKS];
} fuzz_allocator;

static inline bool fuzz_is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

static inline void *fuzz_allocate(void *ctx, size_t size, size_t alignment) {
  fuzz_allocator *a = (fuzz_allocator *)ctx;
  a->attempts++;
  /* The dlmap_allocator contract: alignment is a power of two and size a multiple of it (aligned_alloc's rule). */
  FUZZ_CHECK(fuzz_is_pow2(alignment));
  FUZZ_CHECK(size > 0 && size % alignment == 0);
  a->last_alignment = alignment;
  if (a->attempts == a->fail_at || size > FUZZ_ALLOC_CAP || alignment > FUZZ_ALLOC_CAP) return NULL;
  void *p = aligned_alloc(alignment, size);
  if (p == NULL) return NULL;
  for (size_t i = 0; i < FUZZ_MAX_BLOCKS; i++) {
    if (a->blocks[i] == NULL) {
      a->blocks[i] = p;
      a->live++;
      return p;
    }
  }
  FUZZ_CHECK(!"more live blocks than one fuzz iteration can create");
  return NULL;
}

static inline void fuzz_release(void *ctx, void *pointer) {
  fuzz_allocator *a = (fuzz_allocator *)ctx;
  for (size_t i = 0; i < FUZZ_MAX_BLOCKS; i++) {
    if (a->blocks[i] == pointer && pointer != NULL) {
      a->blocks[i] = NULL;
      a->live--;
      free(pointer);
      return;
    }
  }
  FUZZ_CHECK(!"release of a pointer this allocator did not hand out (or released twice)");
}

static inline void fuzz_allocator_init(fuzz_allocator *a, size_t fail_at) {
  memset(a, 0, sizeof *a);
  a->api.allocate = fuzz_allocate;
  a->api.release = fuzz_release;
  a->api.ctx = a;
  a->fail_at = fail_at;
}

/* ---- error invariants ------------------------------------------------------------------------------- */

/* What every failing call must leave in its dlmap_error: the status, a catalogue id and kind, and a message
 * that is NUL-terminated inside the buffer and as long as strlen says. */
static inline void fuzz_check_error(const dlmap_error *err, int32_t status) {
  FUZZ_CHECK(status != DLMAP_OK);
  FUZZ_CHECK(err->code == status);
  FUZZ_CHECK(err->id != NULL);
  FUZZ_CHECK(memchr(err->message, '\0', sizeof err->message) != NULL);
  FUZZ_CHECK(strlen(err->message) > 0);
  const dlmap_error_info *info = dlmap_error_describe(status);
  FUZZ_CHECK(info->code == status); /* every status dlmap returns is in its catalogue */
  FUZZ_CHECK(err->kind == info->kind && strcmp(err->id, info->id) == 0);
  if (status == DLMAP_ERR_OUT_OF_MEMORY) FUZZ_CHECK(err->kind == DLMAP_KIND_MEMORY_ERROR);
}

/* ---- the bytes a tensor description reaches (DLPack semantics, computed independently of dlmap) ------ */

typedef struct fuzz_region {
  bool valid;        /* ndim, shape and strides are well formed and nothing overflows */
  uint64_t count;    /* elements */
  fuzz_i128 lo_bytes; /* lowest byte reached, relative to the first element (<= 0) */
  fuzz_i128 hi_bytes; /* one past the highest byte reached */
  fuzz_i128 bits;     /* count × element bits (saturated far above 2^64): what a compact copy holds */
  fuzz_i128 lo_bits, hi_bits; /* the lowest and one past the highest bit the strides reach (saturated) */
} fuzz_region;

/* Whether a tensor that dlmap accepted is one its size rules accept: every bit count it describes fits in int64
 * (DLMAP's size_overflow limit; a wider count wraps either the uint64 product or its rounding up to bytes). */
static inline bool fuzz_region_sizes_fit(const fuzz_region *r) {
  return r->bits <= INT64_MAX && r->hi_bits <= INT64_MAX && r->lo_bits >= -(fuzz_i128)INT64_MAX;
}

/* element_bits: bits × lanes, or 8 for padded sub-byte elements (one byte each). */
static inline fuzz_region fuzz_tensor_region(int32_t ndim, const int64_t *shape, const int64_t *strides,
                                             uint64_t element_bits) {
  fuzz_region r;
  memset(&r, 0, sizeof r);
  if (ndim < 0 || ndim > DLMAP_MAX_NDIM || (ndim > 0 && shape == NULL) || element_bits == 0) return r;
  fuzz_i128 count = 1, lo = 0, hi = 0, exact = 1;
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] < 0) return r;
    count *= shape[i];
    if (count > ((fuzz_i128)1 << 62)) count = ((fuzz_i128)1 << 62) + 1; /* saturate: too big to fit anyway */
    /* saturates far above any bit count that fits, without overflowing on the way (exact is 0 once a zero extent) */
    exact = exact > 0 && shape[i] > (((fuzz_i128)1 << 80) / exact) ? (fuzz_i128)1 << 80 : exact * shape[i];
  }
  r.count = (uint64_t)count;
  r.valid = true;
  r.bits = exact * (fuzz_i128)element_bits;
  if (count == 0) return r;
  for (int32_t i = 0; i < ndim; i++) {
    const fuzz_i128 stride = strides != NULL ? strides[i] : 0;
    if (strides == NULL) continue;
    const fuzz_i128 step = (fuzz_i128)(shape[i] - 1) * stride; /* |step| < 2^126 */
    if (step < 0) lo += step;
    else hi += step;
    /* saturate far beyond any buffer, so that the sums and the × bits below cannot overflow */
    if (lo < -((fuzz_i128)1 << 80)) lo = -((fuzz_i128)1 << 80);
    if (hi > ((fuzz_i128)1 << 80)) hi = (fuzz_i128)1 << 80;
  }
  if (strides == NULL) hi = exact - 1;
  const fuzz_i128 bits = element_bits;
  r.lo_bits = lo * bits;
  r.hi_bits = (hi + 1) * bits;
  r.lo_bytes = lo * bits >= 0 ? lo * bits / 8 : -((-lo * bits + 7) / 8);
  r.hi_bytes = ((hi + 1) * bits + 7) / 8;
  return r;
}

/* Whether every byte the tensor reaches lies in [buf, buf + size) when its first element is at `first`. */
static inline bool fuzz_region_inside(const fuzz_region *r, uintptr_t first, const void *buf, size_t size) {
  if (!r->valid) return false;
  if (r->count == 0) return true;
  const fuzz_i128 lo = (fuzz_i128)first + r->lo_bytes, hi = (fuzz_i128)first + r->hi_bytes;
  return buf != NULL && lo >= (fuzz_i128)(uintptr_t)buf && hi <= (fuzz_i128)(uintptr_t)buf + (fuzz_i128)size;
}

/* The byte offset of element `index` (row-major order) in a strided tensor, relative to the first element. */
static inline int64_t fuzz_element_offset(int32_t ndim, const int64_t *shape, const int64_t *strides, uint64_t index,
                                          uint64_t element_bytes) {
  if (strides == NULL) return (int64_t)(index * element_bytes);
  int64_t offset = 0;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    const uint64_t extent = (uint64_t)shape[d];
    const uint64_t at = index % extent;
    index /= extent;
    offset += (int64_t)at * strides[d];
  }
  return offset * (int64_t)element_bytes;
}

/* Compact row-major strides of a shape (what a copy must carry). A tensor with no elements may have extents whose
 * product does not fit: its strides address nothing and saturate at INT64_MAX. */
static inline bool fuzz_strides_compact(int32_t ndim, const int64_t *shape, const int64_t *strides) {
  int64_t expected = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    if (strides[d] != expected) return false;
    if (__builtin_mul_overflow(expected, shape[d] > 0 ? shape[d] : 1, &expected)) expected = INT64_MAX;
  }
  return true;
}

/* Row-major (C-contiguous) by NumPy's rule: every dimension of extent > 1 has the compact stride; no elements
 * or NULL strides qualify. */
static inline bool fuzz_row_major(int32_t ndim, const int64_t *shape, const int64_t *strides) {
  if (strides == NULL) return true;
  for (int32_t d = 0; d < ndim; d++) {
    if (shape[d] == 0) return true;
  }
  int64_t expected = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    if (shape[d] > 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

/* Checks that a compact copy holds exactly the source's elements (byte-sized elements; small tensors). */
static inline void fuzz_check_copy(const void *copy, const void *first, int32_t ndim, const int64_t *shape,
                                   const int64_t *strides, uint64_t element_bytes, uint64_t count) {
  if (count > 4096 || element_bytes == 0) return;
  const char *src = (const char *)first;
  for (uint64_t i = 0; i < count; i++) {
    const int64_t offset = fuzz_element_offset(ndim, shape, strides, i, element_bytes);
    FUZZ_CHECK(memcmp((const char *)copy + i * element_bytes, src + offset, element_bytes) == 0);
  }
}

#endif /* DLMAP_FUZZ_HARNESS_H_ */
