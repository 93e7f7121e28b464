/* Transposed-copy kernels other than dlmap's, against memcpy of the same bytes: the evidence behind BENCHMARKS.md's
 * measured bound on CPUs without AVX-512. Where the CPU has AVX-512, dlmap copies a transposed float32 plane with
 * 16×16 AVX-512 blocks in prefetched 128-element tiles, streamed past the L3 share; without it, below that with 8×8 AVX
 * transposes straight to the destination along 16-row bands, and a larger one band by band through a 16 KiB L1 tile
 * (src/host_copy.c); this program times the other usual AVX designs on the same n × n float32 planes
 * (1, 16 and 256 MiB): 8×8 AVX transposes stored straight to the destination, walking square blocks of 16 to 128
 * elements, with plain and with streaming stores, and the 8×8 transpose built from 128-bit row halves (two fewer
 * shuffle stages); beside them, the same walk's loads and stores without the shuffles (the access pattern's own
 * cost: what no choice of in-register transpose can go below). Best of 3 timed batches each; the same machine, one
 * run. The register loops are unrolled (#pragma GCC unroll): at -O2 GCC would keep the eight vectors in memory.
 *
 *   bazel run -c opt //bench:transpose_kernels
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One row of a transposed block: a streaming store (past the caches) or a plain one. */
__attribute__((target("avx"))) static inline void store_row(float *d, __m256 v, int stream) {
  if (stream) {
    _mm256_stream_ps(d, v);
  } else {
    _mm256_storeu_ps(d, v);
  }
}

/* dst rows r..r+7, columns c..c+7 of dst[r][c] = src[c][r]: eight 8-float rows loaded, shuffled in three stages. */
__attribute__((target("avx"))) static inline void block_shuffled(float *d, size_t dn, const float *s, size_t sn,
                                                                  int stream) {
  __m256 x[8], t[8], u[8];
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k++) x[k] = _mm256_loadu_ps(s + (size_t)k * sn);
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(x[k], x[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(x[k], x[k + 1]);
  }
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
  }
  #pragma GCC unroll 8
  for (int k = 0; k < 4; k++) {
    const __m256 lo = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20), hi = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    store_row(d + (size_t)k * dn, lo, stream);
    store_row(d + (size_t)(k + 4) * dn, hi, stream);
  }
}

/* The same block from 128-bit halves: rows k and k + 4 share a register, so one shuffle stage less. */
__attribute__((target("avx"))) static inline void block_halves(float *d, size_t dn, const float *s, size_t sn,
                                                                int stream) {
  __m256 x[8], t[8];
  #pragma GCC unroll 8
  for (int k = 0; k < 4; k++) {
    x[k] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(s + (size_t)k * sn)),
                                _mm_loadu_ps(s + (size_t)(k + 4) * sn), 1);
    x[k + 4] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(s + (size_t)k * sn + 4)),
                                    _mm_loadu_ps(s + (size_t)(k + 4) * sn + 4), 1);
  }
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(x[k], x[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(x[k], x[k + 1]);
  }
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k += 4) {
    const __m256 r[4] = {_mm256_shuffle_ps(t[k], t[k + 2], 0x44), _mm256_shuffle_ps(t[k], t[k + 2], 0xEE),
                         _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44), _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE)};
    #pragma GCC unroll 8
    for (int j = 0; j < 4; j++) {
      store_row(d + (size_t)(k + j) * dn, r[j], stream);
    }
  }
}

/* The same loads and stores as block_shuffled, without the shuffles: block (r, c) of the source lands untransposed
 * at block (c, r) of the destination. Not a transpose; the memory traffic of one, to time the access pattern alone. */
__attribute__((target("avx"))) static inline void block_pattern(float *d, size_t dn, const float *s, size_t sn,
                                                                 int stream) {
  __m256 x[8];
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k++) x[k] = _mm256_loadu_ps(s + (size_t)k * sn);
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k++) store_row(d + (size_t)k * dn, x[k], stream);
}

/* kernel: 0 three shuffle stages, 1 from 128-bit halves, 2 the access pattern alone (block_pattern). */
__attribute__((target("avx"))) static void transpose(float *d, const float *s, size_t n, size_t b, int kernel,
                                                     int stream) {
  for (size_t rb = 0; rb < n; rb += b) {
    for (size_t cb = 0; cb < n; cb += b) {
      for (size_t r = rb; r < rb + b; r += 8) {
        for (size_t c = cb; c < cb + b; c += 8) {
          (kernel == 2 ? block_pattern : kernel == 1 ? block_halves : block_shuffled)(d + r * n + c, n,
                                                                                       s + c * n + r, n, stream);
        }
      }
    }
  }
  if (stream) _mm_sfence();
}

/* Best-of-3 GB/s of destination bytes for kernel k (-1: memcpy). */
static double measure(float *d, const float *s, size_t n, int reps, int k, size_t b, int kernel, int stream) {
  const double bytes = (double)n * (double)n * 4.0;
  double best = 1e30;
  for (int round = 0; round < 3; round++) {
    const double start = seconds();
    for (int i = 0; i < reps; i++) {
      if (k < 0) {
        memcpy(d, s, n * n * 4);
      } else {
        transpose(d, s, n, b, kernel, stream);
      }
      __asm__ volatile("" : : "r"(d) : "memory");
    }
    const double each = (seconds() - start) / reps;
    if (each < best) best = each;
  }
  return bytes / best / 1e9;
}

int main(void) {
  if (!__builtin_cpu_supports("avx")) {
    printf("transpose_kernels: skipped, this CPU has no AVX\n");
    return 0;
  }
  const size_t sizes[] = {512, 2048, 8192}; /* 1, 16 and 256 MiB of float32 */
  const size_t blocks[] = {16, 32, 64, 128};
  printf("| size | kernel | block | stores | GB/s | ÷ memcpy |\n|---|---|---:|---|---:|---:|\n");
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const size_t n = sizes[i], bytes = n * n * 4;
    float *s = aligned_alloc(64, bytes), *d = aligned_alloc(64, bytes);
    if (s == NULL || d == NULL) return 1;
    for (size_t j = 0; j < n * n; j++) s[j] = (float)j;
    memset(d, 0, bytes);
    const int reps = bytes < ((size_t)4 << 20) ? 200 : bytes < ((size_t)64 << 20) ? 10 : 2;
    const double base = measure(d, s, n, reps, -1, 0, 0, 0);
    printf("| %zu MiB | memcpy | | | %.1f | 1.00× |\n", bytes >> 20, base);
    for (size_t j = 0; j < sizeof blocks / sizeof blocks[0]; j++) {
      for (int kernel = 0; kernel < 3; kernel++) {
        for (int stream = 0; stream < 2; stream++) {
          const double g = measure(d, s, n, reps, 0, blocks[j], kernel, stream);
          if (kernel < 2 && (d[1] != s[n] || d[n * n - 2] != s[n * n - 1 - n])) {
            printf("transpose_kernels: wrong result\n");
            return 1;
          }
          printf("| %zu MiB | %s | %zu | %s | %.1f | %.2f× |\n", bytes >> 20,
                 kernel == 2   ? "pattern alone (no shuffles)"
                 : kernel == 1 ? "8×8 from 128-bit halves"
                               : "8×8 three shuffle stages",
                 blocks[j], stream ? "streaming" : "plain", g, g / base);
        }
      }
    }
    free(s);
    free(d);
  }
  return 0;
}
#else
int main(void) {
  printf("transpose_kernels: skipped, x86-64 only (AVX kernels)\n");
  return 0;
}
#endif
