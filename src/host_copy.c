/* dlmap core — the host (CPU backend) copy from any strides to compact row-major, with the SIMD paths the CPU has:
 * what export and import copies on the host, and what the GPU backend stages through. */
#include <string.h>

#include "src/host_caches.h"
#include "src/host_copy.h"

/* ---- host copy: any strides → compact row-major ---------------------------------------------------------------
 * The layout is first reduced: size-1 dimensions go, and a dimension that continues the one inside it in the
 * source (its step is that one's step × extent) is fused with it, so a crop or an every-other-element slice of
 * a row is one long run. Then, by the innermost remaining dimension:
 *   contiguous            one memcpy per run (runs of 1 KiB and more: an AVX-512 loop where the CPU has it);
 *   strided, and another dimension steps less in the source (a transposed view)
 *                         a tiled 2-D copy over the two: a tile's source and destination lines stay in L1 while
 *                         it is copied (8×8 and 4×4 AVX transposes for 4- and 8-byte elements where the CPU has
 *                         AVX, else 4×4 and 2×2 SSE2 ones);
 *                         a large plane band by band, so that a source page serves several tiles; a plane of
 *                         4-byte elements transposed straight into the destination instead (no tile) with AVX-512
 *                         (16×16 blocks in 128-element tiles, the next tile prefetched), or with AVX under
 *                         a destination that does not stream (8×8 blocks);
 *   strided otherwise     an element loop typed by size (SSE2 shuffles for a step of two 4- or 8-byte elements,
 *                         AVX and AVX-512 permutes for 4-byte ones).
 * Large destinations leave the tiles, the step-2 gathers, the AVX-512 transpose and long contiguous runs through
 * non-temporal stores (streams() below: the threshold from the caches the CPU reports, src/host_caches.c).
 * Offsets are tracked as integers from src (an intermediate position may lie outside the buffer); every step
 * fits: the extent check bounded (extent - 1) × stride × bits. bench/ measures each path against memcpy. */

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && defined(__SSE2__)
#include <immintrin.h>
#include <stdatomic.h>
#include <stdlib.h>
#define DLMAP_HAVE_AVX_PATHS 1
#endif

/* Whether a copy streams its stores (non-temporal: no read for ownership, the cache left to the source), decided
 * once per copy from its whole destination against this core's share of the last-level cache (src/host_caches.c),
 * never per row or plane: a destination that fits the share stays in cache for whoever reads it next, a larger one
 * would be evicted anyway. Every streaming store takes this one threshold: the AVX-512 transpose's and step-2
 * gather's whole lines, the tiles' 16-byte stores, the AVX gather's 32-byte ones and long contiguous rows (bench/:
 * step2 16/256 MiB about 0.5× → 0.65-0.7× memcpy; rows at 256 MiB on an Intel Xeon VM 0.56× with one memcpy per
 * row, whose own streaming threshold is per call). Whole lines once streamed from L2's size (an AMD EPYC (Zen 5) VM:
 * step2 1 MiB 0.64× plain, 0.71-0.73× streamed); on an AMD EPYC (Zen 4) VM, 1 MiB streamed cost more than it saved
 * (transposed 0.39-0.40× → 0.50-0.52×, step2 0.47-0.56× → 0.61-0.67× plain; a 4 MiB transpose 0.36-0.41× →
 * 0.40-0.46×, 9 MiB 0.96-1.33× streamed against 0.36-0.78× plain). */
static bool streams(int64_t destination_bytes) {
  return dlmap__stream_destination(dlmap__host_caches_read(), destination_bytes);
}

#ifdef DLMAP_HAVE_AVX_PATHS
/* The transposes use AVX where the CPU and OS have it, and AVX-512 (avx512f) where they have that (the build itself
 * targets baseline x86-64: SSE2), chosen once. DLMAP_HOST_COPY_SIMD=sse2 or =avx caps the choice (for tests, and to
 * rule the wider paths out). */
static int simd_level(void) {
  static atomic_int choice; /* 0 unknown, 1 SSE2, 2 AVX, 3 AVX-512 */
  int c = atomic_load_explicit(&choice, memory_order_relaxed);
  if (c == 0) {
    const char *forced = getenv("DLMAP_HOST_COPY_SIMD");
    __builtin_cpu_init();
    c = !__builtin_cpu_supports("avx") ? 1 : !__builtin_cpu_supports("avx512f") ? 2 : 3;
    if (forced != NULL && strcmp(forced, "sse2") == 0) c = 1;
    if (forced != NULL && strcmp(forced, "avx") == 0 && c > 2) c = 2;
    atomic_store_explicit(&choice, c, memory_order_relaxed);
  }
  return c;
}

static bool use_avx(void) { return simd_level() >= 2; }
static bool use_avx512(void) { return simd_level() == 3; }

/* 8×8 blocks of 4-byte elements into the tile: source line k (k = 0..7, col_step bytes apart) holds 8 consecutive
 * destination rows of column c + k; eight loads, the 8×8 transpose in registers, eight stores of tile rows. */
__attribute__((target("avx"))) static void tile_blocks_4_avx(char *tile, int64_t pitch, const char *src,
                                                             int64_t col_step, int64_t rows, int64_t cols) {
  for (int64_t c = 0; c < cols; c += 8) {
    for (int64_t r = 0; r < rows; r += 8) {
      const char *s = src + r * 4 + c * col_step;
      const __m256 x0 = _mm256_loadu_ps((const float *)(const void *)s);
      const __m256 x1 = _mm256_loadu_ps((const float *)(const void *)(s + col_step));
      const __m256 x2 = _mm256_loadu_ps((const float *)(const void *)(s + 2 * col_step));
      const __m256 x3 = _mm256_loadu_ps((const float *)(const void *)(s + 3 * col_step));
      const __m256 x4 = _mm256_loadu_ps((const float *)(const void *)(s + 4 * col_step));
      const __m256 x5 = _mm256_loadu_ps((const float *)(const void *)(s + 5 * col_step));
      const __m256 x6 = _mm256_loadu_ps((const float *)(const void *)(s + 6 * col_step));
      const __m256 x7 = _mm256_loadu_ps((const float *)(const void *)(s + 7 * col_step));
      /* Pairs interleaved, then quads (per 128-bit lane), then the lanes exchanged. */
      const __m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1);
      const __m256 t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);
      const __m256 t4 = _mm256_unpacklo_ps(x4, x5), t5 = _mm256_unpackhi_ps(x4, x5);
      const __m256 t6 = _mm256_unpacklo_ps(x6, x7), t7 = _mm256_unpackhi_ps(x6, x7);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
      const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
      const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
      const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
      const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
      const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
      const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
      const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
      char *d = tile + r * pitch + c * 4;
      _mm256_storeu_ps((float *)(void *)d, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps((float *)(void *)(d + pitch), _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps((float *)(void *)(d + 2 * pitch), _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps((float *)(void *)(d + 3 * pitch), _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps((float *)(void *)(d + 4 * pitch), _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps((float *)(void *)(d + 5 * pitch), _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps((float *)(void *)(d + 6 * pitch), _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps((float *)(void *)(d + 7 * pitch), _mm256_permute2f128_ps(u3, u7, 0x31));
    }
  }
}

/* A plane of 4-byte elements whose rows and cols are multiples of 8, transposed straight into the destination (no
 * tile): 8×8 blocks along bands of 16 destination rows, the band's columns outer, so that two neighbouring blocks
 * write whole 64-byte destination lines. One call per band: a call per 16×16 square cost its spills each time
 * (bench/, an AMD EPYC (Zen 4) VM with the AVX paths, 1 MiB: 0.55-0.56× → 0.59× memcpy). */
__attribute__((target("avx"))) static void transpose_direct_4_avx(char *out, int64_t dst_row, const char *in,
                                                                  int64_t col_step, int64_t rows, int64_t cols) {
  for (int64_t rb = 0; rb < rows; rb += 16) {
    const int64_t tr = rows - rb < 16 ? rows - rb : 16;
    tile_blocks_4_avx(out + rb * dst_row, dst_row, in + rb * 4, col_step, tr, cols);
  }
}

/* 4×4 blocks of 8-byte elements, the same way. */
__attribute__((target("avx"))) static void tile_blocks_8_avx(char *tile, int64_t pitch, const char *src,
                                                             int64_t col_step, int64_t rows, int64_t cols) {
  for (int64_t c = 0; c < cols; c += 4) {
    for (int64_t r = 0; r < rows; r += 4) {
      const char *s = src + r * 8 + c * col_step;
      const __m256d x0 = _mm256_loadu_pd((const double *)(const void *)s);
      const __m256d x1 = _mm256_loadu_pd((const double *)(const void *)(s + col_step));
      const __m256d x2 = _mm256_loadu_pd((const double *)(const void *)(s + 2 * col_step));
      const __m256d x3 = _mm256_loadu_pd((const double *)(const void *)(s + 3 * col_step));
      const __m256d t0 = _mm256_unpacklo_pd(x0, x1), t1 = _mm256_unpackhi_pd(x0, x1);
      const __m256d t2 = _mm256_unpacklo_pd(x2, x3), t3 = _mm256_unpackhi_pd(x2, x3);
      char *d = tile + r * pitch + c * 8;
      _mm256_storeu_pd((double *)(void *)d, _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd((double *)(void *)(d + pitch), _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd((double *)(void *)(d + 2 * pitch), _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd((double *)(void *)(d + 3 * pitch), _mm256_permute2f128_pd(t1, t3, 0x31));
    }
  }
}

/* A step of two 4-byte elements: 8 out per two 32-byte loads (the lanes paired, then the even elements picked).
 * The loads stop before the last element's gap (j + 9 <= count). Where the copy streams (streams()) and
 * the destination is 32-byte aligned, they are written with 32-byte non-temporal stores (16-byte ones measured no
 * gain). Returns how many elements it copied. */
__attribute__((target("avx"))) static int64_t gather_step2_4_avx(char *out, const char *in, int64_t count,
                                                                   bool streamed) {
  int64_t j = 0;
  const bool stream = streamed && (uintptr_t)out % 32 == 0;
  for (; j + 9 <= count; j += 8, in += 64, out += 32) {
    const __m256 a = _mm256_loadu_ps((const float *)(const void *)in);
    const __m256 b = _mm256_loadu_ps((const float *)(const void *)(in + 32));
    const __m256 lo = _mm256_permute2f128_ps(a, b, 0x20), hi = _mm256_permute2f128_ps(a, b, 0x31);
    const __m256 even = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    if (stream) {
      _mm256_stream_ps((float *)(void *)out, even);
    } else {
      _mm256_storeu_ps((float *)(void *)out, even);
    }
  }
  if (stream) _mm_sfence(); /* the streamed stores ordered before the caller hands the copy out */
  return j;
}

/* A step of two 4-byte elements with AVX-512: 16 out per two 64-byte loads and one two-source permute (the even
 * elements), each store a whole destination line. Streamed (streams()) where the destination is 64-byte aligned,
 * the source then prefetched 4 KiB ahead (non-temporal hint: bench/, 16 MiB, 0.64-0.75× → 0.71-0.83×
 * memcpy). The loads stop before the last element's gap (j + 17 <= count). Returns how many it copied. */
__attribute__((target("avx512f"))) static int64_t gather_step2_4_avx512(char *out, const char *in, int64_t count,
                                                                         bool streamed) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const bool stream = streamed && (uintptr_t)out % 64 == 0;
  int64_t j = 0;
  for (; j + 17 <= count; j += 16, in += 128, out += 64) {
    if (stream && j + 512 + 17 <= count) { /* 4 KiB of source ahead, past the caches the copy does not need */
      _mm_prefetch(in + 4096, _MM_HINT_NTA);
      _mm_prefetch(in + 4096 + 64, _MM_HINT_NTA);
    }
    const __m512 a = _mm512_loadu_ps((const void *)in);
    const __m512 b = _mm512_loadu_ps((const void *)(in + 64));
    const __m512 v = _mm512_permutex2var_ps(a, even, b);
    if (stream) {
      _mm512_stream_ps((void *)out, v);
    } else {
      _mm512_storeu_ps((void *)out, v);
    }
  }
  if (stream) _mm_sfence();
  return j;
}

/* 16×16 4-byte elements with AVX-512: source line k (col_step bytes apart) holds destination column k of 16
 * consecutive destination rows. Sixteen whole-line loads, the transpose in registers (pairs, quads, then 128-bit
 * lanes in two steps), sixteen whole-line stores, streamed or not. Always inlined into the row of blocks below. */
__attribute__((target("avx512f"), always_inline)) static inline void block16_4_avx512(char *d, int64_t dst_row,
                                                                                      const char *s, int64_t col_step,
                                                                                      bool stream) {
  __m512 r[16], t[16];
#pragma GCC unroll 16
  for (int k = 0; k < 16; k++) r[k] = _mm512_loadu_ps((const void *)(s + k * col_step));
#pragma GCC unroll 16
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
#pragma GCC unroll 16
  for (int k = 0; k < 16; k += 4) {
    r[k] = _mm512_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 1] = _mm512_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[k + 2] = _mm512_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 3] = _mm512_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 16
  for (int k = 0; k < 16; k += 8) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
      t[k + j] = _mm512_shuffle_f32x4(r[k + j], r[k + j + 4], 0x88);
      t[k + j + 4] = _mm512_shuffle_f32x4(r[k + j], r[k + j + 4], 0xdd);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < 8; j++) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
  }
  if (stream) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++) _mm512_stream_ps((void *)(d + k * dst_row), r[k]);
  } else {
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++) _mm512_storeu_ps((void *)(d + k * dst_row), r[k]);
  }
}

enum { DLMAP_TILE512 = 128 }; /* the AVX-512 transpose's tile edge, in elements */

/* The next tile's source lines, prefetched 16 per block while a tile is copied. */
typedef struct next_tile {
  const char *first; /* its first source line (its source rows are the copy's col_step apart) */
  int64_t per_row;   /* lines a source row */
  int64_t rows;      /* source rows (0: no next tile) */
  int64_t row, line; /* the next line to prefetch */
} next_tile;

/* A row of `blocks` 16×16 blocks, left to right, each after 16 of the next tile's lines are prefetched. Its own
 * function, never inlined into the tile walk: inlined, GCC spilled the walk's counters around each block (bench/, an
 * AMD EPYC (Zen 4) VM, 1 MiB: 0.40× memcpy inlined, 0.47× with a call per block, 0.59-0.60× with a call per row). */
__attribute__((target("avx512f"), noinline)) static void block_row_4_avx512(char *d, int64_t dst_row, const char *s,
                                                                           int64_t col_step, int64_t blocks,
                                                                           bool stream, next_tile *next) {
  const char *first = next->first;
  const int64_t per_row = next->per_row, rows = next->rows;
  int64_t row = next->row, line = next->line;
  for (int64_t b = 0; b < blocks; b++, d += 64, s += 16 * col_step) {
    for (int k = 0; k < 16 && row < rows; k++) {
      _mm_prefetch(first + line * 64 + row * col_step, _MM_HINT_T1);
      if (++line == per_row) line = 0, row++;
    }
    block16_4_avx512(d, dst_row, s, col_step, stream);
  }
  next->row = row, next->line = line;
}

/* A plane of 4-byte elements whose rows and cols are multiples of 16, with AVX-512: tiles of 128 × 128 elements,
 * destination rows outer, each tile in 16×16 blocks (destination rows outer), while the next tile's source lines
 * are prefetched, 16 per block (a tile has as many blocks × 16 as source lines). Each source and destination
 * line is then read or written whole, once; the prefetch turns the column walk's scattered misses into misses
 * served ahead of use (bench/, 16 and 256 MiB, streamed: 0.47× and 0.60× memcpy without it, 0.8-0.95× with). It goes
 * into L2, not L1: the next tile's source is 64 KiB, more than any x86-64 L1d holds, and where the source pitch is a
 * power of two its 128 lines share two L1 sets, so prefetched into L1 they evicted each other and the tile being
 * copied (bench/, an AMD EPYC (Zen 4) VM, L1d 32 KiB: 256 MiB 0.49-0.53× → 0.68-0.78× memcpy, 16 MiB 0.87-0.92× →
 * 1.3×; 1 MiB unchanged). */
__attribute__((target("avx512f"))) static void transpose_tiles_4_avx512(char *out, int64_t dst_row, const char *in,
                                                                       int64_t col_step, int64_t rows, int64_t cols,
                                                                       bool stream) {
  enum { T = DLMAP_TILE512 };
  for (int64_t tr = 0; tr < rows; tr += T) {
    const int64_t th = rows - tr < T ? rows - tr : T;
    for (int64_t tc = 0; tc < cols; tc += T) {
      const int64_t tw = cols - tc < T ? cols - tc : T;
      /* The next tile: its source rows are destination columns ntc.., its lines hold destination rows ntr... */
      const int64_t ntr = tc + T < cols ? tr : tr + T, ntc = tc + T < cols ? tc + T : 0;
      const int64_t per_row = ntr < rows ? ((rows - ntr < T ? rows - ntr : T) / 16) : 0;
      next_tile next = {in + ntr * 4 + ntc * col_step, per_row, 0, 0, 0};
      next.rows = per_row > 0 ? (cols - ntc < T ? cols - ntc : T) : 0;
      for (int64_t r = tr; r < tr + th; r += 16) {
        block_row_4_avx512(out + r * dst_row + tc * 4, dst_row, in + r * 4 + tc * col_step, col_step, tw / 16, stream,
                           &next);
      }
    }
  }
  if (stream) _mm_sfence(); /* the streamed stores ordered before the caller hands the copy out */
}
#endif

/* A dimension of the copy in bytes (src/layout.h): the kernels below walk them outer dimension first. */
typedef dlmap__copy_dim copy_dim;

/* One element of any size: fixed-size memcpys the compiler turns into moves. */
static inline void copy_element(char *dst, const char *src, size_t n) {
  switch (n) {
    case 1: memcpy(dst, src, 1); return;
    case 2: memcpy(dst, src, 2); return;
    case 4: memcpy(dst, src, 4); return;
    case 8: memcpy(dst, src, 8); return;
    case 16: memcpy(dst, src, 16); return;
    default: memcpy(dst, src, n); return;
  }
}

#define DLMAP_STRIDED_LOOP(size)                                                 \
  for (; j < count; j++, in += step, out += (size)) memcpy(out, in, (size))

/* count elements, step bytes apart in the source, to consecutive destination elements. */
static void copy_strided_run(char *out, const char *in, int64_t step, int64_t count, size_t element_bytes,
                             bool streamed) {
  (void)streamed; /* used by the SIMD step-2 gathers only */
  int64_t j = 0;
  if (step == 0) { /* a broadcast: one element, then the filled part doubled */
    const size_t total = (size_t)count * element_bytes;
    memcpy(out, in, element_bytes);
    for (size_t done = element_bytes; done < total; done *= 2) {
      memcpy(out + done, out, done < total - done ? done : total - done);
    }
    return;
  }
#if defined(__SSE2__)
  /* A step of two elements: two loads and one shuffle per 16 bytes out. The loads stop before the last element's
   * gap: they read only bytes between the first and the last element. */
  if (element_bytes == 4 && step == 8) {
#ifdef DLMAP_HAVE_AVX_PATHS
    if (use_avx512()) {
      j = gather_step2_4_avx512(out, in, count, streamed);
      in += j * 8, out += j * 4;
    }
    if (use_avx()) {
      const int64_t done = gather_step2_4_avx(out, in, count - j, streamed);
      j += done, in += done * 8, out += done * 4;
    }
#endif
    for (; j + 5 <= count; j += 4, in += 32, out += 16) {
      const __m128 a = _mm_loadu_ps((const float *)(const void *)in);
      const __m128 b = _mm_loadu_ps((const float *)(const void *)(in + 16));
      _mm_storeu_ps((float *)(void *)out, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    }
  } else if (element_bytes == 8 && step == 16) {
    for (; j + 3 <= count; j += 2, in += 32, out += 16) {
      const __m128d a = _mm_loadu_pd((const double *)(const void *)in);
      const __m128d b = _mm_loadu_pd((const double *)(const void *)(in + 16));
      _mm_storeu_pd((double *)(void *)out, _mm_unpacklo_pd(a, b));
    }
  }
#endif
  switch (element_bytes) {
    case 1: DLMAP_STRIDED_LOOP(1); return;
    case 2: DLMAP_STRIDED_LOOP(2); return;
    case 4: DLMAP_STRIDED_LOOP(4); return;
    case 8: DLMAP_STRIDED_LOOP(8); return;
    case 16: DLMAP_STRIDED_LOOP(16); return;
    default: DLMAP_STRIDED_LOOP(element_bytes); return;
  }
}

#undef DLMAP_STRIDED_LOOP

/* Contiguous runs (rows) of at least this many bytes are streamed where the whole copy streams: shorter ones would
 * leave partial lines at both ends beside the streamed middle. */
#define DLMAP_STREAM_RUN_BYTES 2048

#ifdef DLMAP_HAVE_AVX_PATHS
/* lines 64-byte lines from in to the 64-byte aligned out through non-temporal stores, 64 or 32 bytes at a time. */
__attribute__((target("avx512f"))) static void stream_lines_avx512(char *out, const char *in, int64_t lines) {
  for (; lines > 0; lines--, in += 64, out += 64) {
    _mm512_stream_si512((void *)out, _mm512_loadu_si512((const void *)in));
  }
}

/* Runs of at least this many bytes that stay in cache are copied by copy_lines_avx512 where the CPU has AVX-512:
 * a crop's rows of a few KiB each pay glibc memcpy's per-call size dispatch (bench/, an AMD EPYC (Zen 4) VM, rows
 * of 2 KiB, 1 MiB in all: 0.85-0.86× → 0.91-0.92× memcpy of the whole; a software prefetch in the loop measured
 * slower). */
#define DLMAP_LOOP_RUN_BYTES 1024

/* bytes from in to out with plain 64-byte loads and stores, four lines a step, the tail by memcpy. */
__attribute__((target("avx512f"))) static void copy_lines_avx512(char *out, const char *in, size_t bytes) {
  size_t k = 0;
  for (; k + 256 <= bytes; k += 256) {
    const __m512i a = _mm512_loadu_si512((const void *)(in + k));
    const __m512i b = _mm512_loadu_si512((const void *)(in + k + 64));
    const __m512i c = _mm512_loadu_si512((const void *)(in + k + 128));
    const __m512i d = _mm512_loadu_si512((const void *)(in + k + 192));
    _mm512_storeu_si512((void *)(out + k), a);
    _mm512_storeu_si512((void *)(out + k + 64), b);
    _mm512_storeu_si512((void *)(out + k + 128), c);
    _mm512_storeu_si512((void *)(out + k + 192), d);
  }
  memcpy(out + k, in + k, bytes - k);
}

__attribute__((target("avx"))) static void stream_lines_avx(char *out, const char *in, int64_t lines) {
  for (; lines > 0; lines--, in += 64, out += 64) {
    const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)in);
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(in + 32));
    _mm256_stream_si256((__m256i *)(void *)out, a);
    _mm256_stream_si256((__m256i *)(void *)(out + 32), b);
  }
}
#endif

/* One contiguous run of bytes. In a copy that streams (streams()), a long run's whole destination lines go
 * through non-temporal stores: glibc's memcpy decides streaming per call (about 3/4 of the LLC share), so a 256 MiB
 * crop copied as 32 KiB rows was written through the cache, reading every destination line for ownership first
 * (bench/, an Intel Xeon VM: rows 256 MiB 0.56× memcpy). */
static void copy_run(char *out, const char *in, size_t bytes, bool streamed) {
#if defined(__SSE2__)
  if (streamed && bytes >= DLMAP_STREAM_RUN_BYTES) {
    const size_t head = (64 - (uintptr_t)out % 64) % 64, lines = (bytes - head) / 64;
    memcpy(out, in, head);
    char *o = out + head;
    const char *i = in + head;
#ifdef DLMAP_HAVE_AVX_PATHS
    if (use_avx()) {
      (use_avx512() ? stream_lines_avx512 : stream_lines_avx)(o, i, (int64_t)lines);
    } else
#endif
    for (size_t k = 0; k < lines * 4; k++) {
      _mm_stream_si128((__m128i *)(void *)(o + 16 * k), _mm_loadu_si128((const __m128i *)(const void *)(i + 16 * k)));
    }
    _mm_sfence(); /* the streamed stores ordered before the caller hands the copy out */
    memcpy(o + lines * 64, i + lines * 64, bytes - head - lines * 64);
    return;
  }
#endif
  (void)streamed;
#ifdef DLMAP_HAVE_AVX_PATHS
  if (bytes >= DLMAP_LOOP_RUN_BYTES && use_avx512()) {
    copy_lines_avx512(out, in, bytes);
    return;
  }
#endif
  memcpy(out, in, bytes);
}

enum { DLMAP_TILE_COLS = 32, DLMAP_TILE_BYTES = 16384 }; /* destination columns per tile; the tile buffer's size */
_Static_assert(DLMAP_TILE_COLS % 16 == 0, "a tile's pitch (DLMAP_TILE_COLS elements) is a multiple of 16 bytes");

/* A 2-D plane: rows × cols elements of esize bytes; the source steps row_step (the small step) and col_step bytes,
 * the destination dst_row bytes per row and esize per column. */
typedef struct copy_plane {
  char *out;
  const char *in;
  int64_t rows, cols;
  int64_t row_step, col_step;
  int64_t dst_row;
  int64_t esize;
} copy_plane;

/* The L1 buffer a tile goes through: tile_rows rows of pitch bytes (TILE_COLS elements). */
typedef struct copy_tile {
  char *bytes;
  int64_t pitch;
  int64_t tile_rows;
  bool stream; /* whole aligned tile rows written out with 16-byte streaming stores */
} copy_tile;

/* The SIMD blocks of the tile tr × tc elements from src: returns, in *rows and *cols, the part they filled. */
static void fill_tile_simd(const copy_plane *p, const copy_tile *t, const char *src, int64_t tr, int64_t tc,
                           int64_t *rows, int64_t *cols) {
  char *tile = t->bytes;
  const int64_t pitch = t->pitch, col_step = p->col_step, esize = p->esize;
  *rows = *cols = 0;
  if ((esize != 4 && esize != 8) || p->row_step != esize) return;
#ifdef DLMAP_HAVE_AVX_PATHS
  if (use_avx()) {
    const int64_t block = esize == 4 ? 8 : 4;
    *rows = tr & ~(block - 1), *cols = tc & ~(block - 1);
    (esize == 4 ? tile_blocks_4_avx : tile_blocks_8_avx)(tile, pitch, src, col_step, *rows, *cols);
    return;
  }
#endif
#if defined(__SSE2__)
  const int64_t block = esize == 4 ? 4 : 2; /* 4×4 blocks of 4-byte elements, 2×2 of 8-byte ones */
  *rows = tr & ~(block - 1), *cols = tc & ~(block - 1);
  for (int64_t c = 0; c < *cols; c += block) {
    for (int64_t r = 0; r < *rows; r += block) {
      const char *s = src + r * esize + c * col_step;
      char *d = tile + r * pitch + c * esize;
      if (esize == 4) { /* four loads along the rows, one transpose */
        __m128 x0 = _mm_loadu_ps((const float *)(const void *)s);
        __m128 x1 = _mm_loadu_ps((const float *)(const void *)(s + col_step));
        __m128 x2 = _mm_loadu_ps((const float *)(const void *)(s + 2 * col_step));
        __m128 x3 = _mm_loadu_ps((const float *)(const void *)(s + 3 * col_step));
        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
        _mm_store_ps((float *)(void *)d, x0);
        _mm_store_ps((float *)(void *)(d + pitch), x1);
        _mm_store_ps((float *)(void *)(d + 2 * pitch), x2);
        _mm_store_ps((float *)(void *)(d + 3 * pitch), x3);
      } else {
        const __m128d x0 = _mm_loadu_pd((const double *)(const void *)s);
        const __m128d x1 = _mm_loadu_pd((const double *)(const void *)(s + col_step));
        _mm_store_pd((double *)(void *)d, _mm_unpacklo_pd(x0, x1));
        _mm_store_pd((double *)(void *)(d + pitch), _mm_unpackhi_pd(x0, x1));
      }
    }
  }
#endif
}

/* The tile's tr rows of tc elements, from the buffer to destination row r0, column c0. */
static void write_tile_out(const copy_plane *p, const copy_tile *t, int64_t r0, int64_t c0, int64_t tr,
                           int64_t tc) {
  enum { TILE_COLS = DLMAP_TILE_COLS };
  const int64_t esize = p->esize, dst_row = p->dst_row, pitch = t->pitch;
  const char *tile = t->bytes;
  char *d = p->out + r0 * dst_row + c0 * esize;
#if defined(__SSE2__)
  if (t->stream && tc == TILE_COLS) { /* non-temporal: no read for ownership, the cache left to the source */
    for (int64_t r = 0; r < tr; r++, d += dst_row) {
      for (int64_t b = 0; b < pitch; b += 16) {
        const __m128i v = _mm_load_si128((const __m128i *)(const void *)(tile + r * pitch + b));
        _mm_stream_si128((__m128i *)(void *)(d + b), v);
      }
    }
    return;
  }
#endif
  if (tc == TILE_COLS && esize == 4) { /* whole tile rows of the common sizes: inlined fixed-size copies */
    for (int64_t r = 0; r < tr; r++, d += dst_row) memcpy(d, tile + r * pitch, TILE_COLS * 4);
  } else if (tc == TILE_COLS && esize == 8) {
    for (int64_t r = 0; r < tr; r++, d += dst_row) memcpy(d, tile + r * pitch, TILE_COLS * 8);
  } else {
    for (int64_t r = 0; r < tr; r++, d += dst_row) memcpy(d, tile + r * pitch, (size_t)(tc * esize));
  }
}

/* One tile of the plane: tr × tc elements from (r0, c0), through the L1 buffer: the SIMD blocks, the rest one
 * source column at a time, then the buffer written out. */
static void copy_one_tile(const copy_plane *p, const copy_tile *t, int64_t r0, int64_t c0, int64_t tr, int64_t tc) {
  const int64_t esize = p->esize, pitch = t->pitch;
  const char *src = p->in + r0 * p->row_step + c0 * p->col_step;
  int64_t simd_rows, simd_cols;
  fill_tile_simd(p, t, src, tr, tc, &simd_rows, &simd_cols);
  for (int64_t c = 0; c < tc; c++) {
    const char *s = src + c * p->col_step;
    for (int64_t r = c < simd_cols ? simd_rows : 0; r < tr; r++) {
      copy_element(t->bytes + r * pitch + c * esize, s + r * p->row_step, (size_t)esize);
    }
  }
  write_tile_out(p, t, r0, c0, tr, tc);
}

#ifdef DLMAP_HAVE_AVX_PATHS
/* A plane of 4-byte elements whose rows are adjacent in the source (row_step 4), straight into the destination (no
 * tile), then the edges (rows and cols past the multiples of the block) one element at a time. With AVX-512, any
 * size: 16×16 blocks in prefetched 128-element tiles (transpose_tiles_4_avx512), streamed (streams()) where
 * destination lines are 64-byte aligned. With AVX only, where the copy does not stream: 8×8 blocks along 16-row
 * bands (transpose_direct_4_avx); in cache the tile's second pass costs more than the L1 conflicts it avoids
 * (bench/, an AMD EPYC (Zen 4) VM: 64 KiB 0.35× → 0.50-0.56× memcpy, 1 MiB 0.32-0.41× → 0.47-0.49×); streamed, the
 * tile with streaming stores stays there (the direct 8×8 walk, streamed or not, measured 2-2.5× slower). */
static void copy_plane_direct_4(const copy_plane *p, bool avx512, bool streamed) {
  const int64_t block = avx512 ? 16 : 8, rows = p->rows, cols = p->cols, dst_row = p->dst_row;
  const int64_t rows_b = rows & ~(block - 1), cols_b = cols & ~(block - 1);
  if (avx512) {
    const bool stream = streamed && (uintptr_t)p->out % 64 == 0 && dst_row % 64 == 0;
    transpose_tiles_4_avx512(p->out, dst_row, p->in, p->col_step, rows_b, cols_b, stream);
  } else {
    transpose_direct_4_avx(p->out, dst_row, p->in, p->col_step, rows_b, cols_b);
  }
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = r < rows_b ? cols_b : 0; c < cols; c++) {
      memcpy(p->out + r * dst_row + c * 4, p->in + r * 4 + c * p->col_step, 4);
    }
  }
}
#endif

/* The plane tile by tile: the source is read along its small step (each source line read whole, once) into a small
 * buffer laid out as the destination, which is then written out row by row (each destination line written whole,
 * once). Copying straight from source to destination instead leaves the tile's lines to fight over the same L1
 * sets when the steps are powers of two (2.5× memcpy's L1 misses at 16 MiB, 1.03× this way: bench/). The tile is
 * half the L1 data cache the CPU reports (at most its 16 KiB buffer), so the source lines it reads stay beside it. */
static void copy_plane_tiled(const copy_plane *p, bool streamed) {
  enum { TILE_COLS = DLMAP_TILE_COLS };
  const int64_t esize = p->esize;
  if (esize > DLMAP_TILE_BYTES / TILE_COLS) { /* large elements: each one is a sizeable memcpy already */
    for (int64_t r = 0; r < p->rows; r++) {
      copy_strided_run(p->out + r * p->dst_row, p->in + r * p->row_step, p->col_step, p->cols, (size_t)esize,
                       streamed);
    }
    return;
  }
#ifdef DLMAP_HAVE_AVX_PATHS
  if (esize == 4 && p->row_step == 4 && (use_avx512() || (!streamed && use_avx()))) {
    copy_plane_direct_4(p, use_avx512(), streamed);
    return;
  }
#endif
  _Alignas(16) char buffer[DLMAP_TILE_BYTES];
  const int64_t half_l1 = dlmap__host_caches_read()->l1d / 2;
  copy_tile t = {buffer, TILE_COLS * esize, 0, false};
  t.tile_rows = (half_l1 < DLMAP_TILE_BYTES ? half_l1 : DLMAP_TILE_BYTES) / t.pitch;
  if (t.tile_rows == 0) t.tile_rows = 1; /* the largest elements' pitch is the whole buffer */
  /* the pitch, TILE_COLS elements, is a multiple of 16 bytes (the _Static_assert by DLMAP_TILE_COLS) */
  t.stream = streamed && (uintptr_t)p->out % 16 == 0 && p->dst_row % 16 == 0;
  /* A large plane goes band by band, each band column block by column block: a band is 8 tile heights, a 4 KiB page
   * of each source column where the rows are adjacent, so one page serves 8 tiles in a row where each tile took a
   * new page per column (bench/, 256 MiB: 0.40× → 0.46× memcpy; the hardware prefetchers follow the columns down,
   * where prefetching the next tile's lines measured slower). In cache a band is one tile height. */
  const int64_t band = streamed ? 8 * t.tile_rows : t.tile_rows;
  for (int64_t b0 = 0; b0 < p->rows; b0 += band) {
    const int64_t b1 = p->rows - b0 < band ? p->rows : b0 + band;
    for (int64_t c0 = 0; c0 < p->cols; c0 += TILE_COLS) {
      const int64_t tc = p->cols - c0 < TILE_COLS ? p->cols - c0 : TILE_COLS;
      for (int64_t r0 = b0; r0 < b1; r0 += t.tile_rows) {
        copy_one_tile(p, &t, r0, c0, b1 - r0 < t.tile_rows ? b1 - r0 : t.tile_rows, tc);
      }
    }
  }
#if defined(__SSE2__)
  if (t.stream) _mm_sfence();
#endif
}

/* The outer dimension that steps least in the source, where it steps less than the inner one (a transposed view:
 * copied as tiled planes over the two); -1 where none does. */
static int32_t least_step_dim(const copy_dim *dims, int32_t inner) {
  int32_t across = -1;
  int64_t least = dims[inner].src_step < 0 ? -dims[inner].src_step : dims[inner].src_step;
  for (int32_t i = 0; i < inner; i++) {
    const int64_t step = dims[i].src_step < 0 ? -dims[i].src_step : dims[i].src_step;
    if (step < least) least = step, across = i;
  }
  return across;
}

/* One plane: its rows along the dimension across, its columns along the inner one. */
static void copy_tiles(char *out, const char *in, const copy_dim *across, const copy_dim *inner, int64_t esize,
                       bool streamed) {
  const copy_plane plane = {out, in, across->extent, inner->extent, across->src_step, inner->src_step,
                            across->dst_step, esize};
  copy_plane_tiled(&plane, streamed);
}

void dlmap__copy_to_compact(void *dst, const void *src, const dlmap__copy_layout *layout) {
  const int32_t n = layout->ndim; /* layout->count > 0: every copy runs under dlmap__copy_compact's count > 0 */
  if (n < 1 || dlmap__copy_layout_compact(layout)) { /* one run (n < 1: the same, said so to the compiler) */
    memcpy(dst, src, (size_t)layout->bytes);
    return;
  }
  const size_t element_bytes = (size_t)layout->element_bytes;
  copy_dim dims[DLMAP_MAX_NDIM]; /* outer dimension first */
  for (int32_t i = 0; i < n; i++) dims[i] = layout->dims[n - 1 - i];
  const int32_t inner = n - 1;
  const int64_t esize = (int64_t)element_bytes;
  const bool runs = dims[inner].src_step == esize;
  const int32_t across = runs ? -1 : least_step_dim(dims, inner); /* TILES: the plane's other dimension */
  const enum { RUNS, TILES, STRIDED } kind = runs ? RUNS : across >= 0 ? TILES : STRIDED;
  /* Every other dimension is walked with an odometer. */
  int32_t outer[DLMAP_MAX_NDIM], m = 0;
  for (int32_t i = 0; i < inner; i++) {
    if (i != across) outer[m++] = i;
  }
  int64_t index[DLMAP_MAX_NDIM] = {0};
  int64_t src_offset = 0, dst_offset = 0;
  const bool streamed = streams((int64_t)layout->count * esize);
  const char *base = (const char *)src;
  char *out = (char *)dst;
  for (;;) {
    switch (kind) {
      case RUNS:
        copy_run(out + dst_offset, base + src_offset, (size_t)(dims[inner].extent * esize), streamed);
        break;
      case STRIDED:
        copy_strided_run(out + dst_offset, base + src_offset, dims[inner].src_step, dims[inner].extent, element_bytes,
                         streamed);
        break;
      case TILES:
        copy_tiles(out + dst_offset, base + src_offset, &dims[across], &dims[inner], esize, streamed);
        break;
    }
    int32_t d = m - 1;
    for (; d >= 0; d--) {
      const copy_dim *c = &dims[outer[d]];
      src_offset += c->src_step;
      dst_offset += c->dst_step;
      if (++index[d] < c->extent) break;
      src_offset -= c->extent * c->src_step;
      dst_offset -= c->extent * c->dst_step;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}
