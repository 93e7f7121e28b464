/* dlmap GPU check — the layout-copy benchmark (issue 47's targets): dlmap's device copy of a strided tensor into
 * compact memory (the strided-copy kernels) next to cudaMemcpy device to device of the same bytes, for a transposed
 * view, rows of a wider buffer, every other element and a broadcast, at 64 MiB, 256 MiB and 1 GiB; then device to host
 * of a transposed tensor next to device to host of the compact one. Best of 5. Device time from CUDA events around the
 * copy on the legacy default stream (what the kernel and cudaMemcpy take on the GPU), wall time with dlmap's own
 * allocation of the destination (cudaMalloc, which cudaMemcpy's side also does). Prints INFO rows and one table;
 * returns the number of exchanges that failed (the figures are not verdicts: tests never assert on wall time). */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dlmap/dlmap.h"
#include "gpu/check_array.h"
#include "gpu/check_layout_bench.h"

#define REPEATS 5

static double wall(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool cuda_ok(cudaError_t status, const char *what) {
  if (status == cudaSuccess) return true;
  printf("FAIL  layout copies: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

typedef struct timing {
  double device_ms, wall_ms; /* best of REPEATS */
} timing;

/* dlmap's copy of `array` to (target, 0), copy=True, consumer on the legacy default stream. */
static bool time_dlmap(const dlmap_array *array, int32_t target, const dlmap_allocator *allocator, timing *best) {
  cudaEvent_t start, stop;
  if (!cuda_ok(cudaEventCreate(&start), "cudaEventCreate") || !cuda_ok(cudaEventCreate(&stop), "cudaEventCreate")) {
    return false;
  }
  best->device_ms = best->wall_ms = 1e30;
  bool ok = true;
  for (int rep = 0; rep < REPEATS && ok; rep++) {
    dlmap_export_request request = dlmap_export_request_default();
    request.has_dl_device = true;
    request.dl_device_type = target;
    request.copy = DLMAP_COPY_ALWAYS;
    request.has_stream = target != DLMAP_DEVICE_CPU;
    request.stream = 1; /* cudaStreamLegacy: the copy is enqueued on the producer's (default) stream, waited for here */
    request.allocator = allocator;
    dlmap_exported out;
    dlmap_error err;
    ok = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const double t0 = wall();
    cudaEventRecord(start, 0);
    const int32_t status = dlmap_export(array, &request, &out, &err);
    cudaEventRecord(stop, 0);
    ok = ok && cuda_ok(cudaEventSynchronize(stop), "cudaEventSynchronize");
    const double t1 = wall();
    if (status != DLMAP_OK) {
      printf("FAIL  layout copies: %s\n", err.message);
      ok = false;
      break;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (ms < best->device_ms) best->device_ms = ms;
    if ((t1 - t0) * 1e3 < best->wall_ms) best->wall_ms = (t1 - t0) * 1e3;
    if (out.versioned != NULL) out.versioned->deleter(out.versioned);
    if (out.legacy != NULL) out.legacy->deleter(out.legacy);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ok;
}

/* cudaMemcpy of bytes device to device (into a fresh cudaMalloc, as dlmap's copy allocates its own). */
static bool time_memcpy(const void *src, size_t bytes, timing *best) {
  cudaEvent_t start, stop;
  if (!cuda_ok(cudaEventCreate(&start), "cudaEventCreate") || !cuda_ok(cudaEventCreate(&stop), "cudaEventCreate")) {
    return false;
  }
  best->device_ms = best->wall_ms = 1e30;
  bool ok = true;
  for (int rep = 0; rep < REPEATS && ok; rep++) {
    void *dst = NULL;
    ok = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const double t0 = wall();
    ok = ok && cuda_ok(cudaMalloc(&dst, bytes), "cudaMalloc");
    cudaEventRecord(start, 0);
    ok = ok && cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
    cudaEventRecord(stop, 0);
    ok = ok && cuda_ok(cudaEventSynchronize(stop), "cudaEventSynchronize");
    const double t1 = wall();
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (ok && ms < best->device_ms) best->device_ms = ms;
    if (ok && (t1 - t0) * 1e3 < best->wall_ms) best->wall_ms = (t1 - t0) * 1e3;
    cudaFree(dst);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ok;
}

static double gbs(size_t bytes, double ms) { return (double)bytes / (ms * 1e-3) / 1e9; }

/* An allocator handing out one preallocated pinned block: both device-to-host copies land in the same memory. */
typedef struct fixed_block {
  void *memory;
  size_t size;
} fixed_block;

static void *fixed_allocate(void *ctx, size_t size, size_t alignment) {
  (void)alignment;
  const fixed_block *block = (const fixed_block *)ctx;
  return size <= block->size ? block->memory : NULL;
}

static void fixed_release(void *ctx, void *pointer) {
  (void)ctx;
  (void)pointer;
}

int check_layout_bench(void) {
  int failures = 0;
  char status[400];
  dlmap_platform_kernels(DLMAP_PLATFORM_CUDA, status, sizeof status);
  printf("INFO  layout copies: kernels %s\n", status);
  printf("INFO  layout copies, float32 device -> device, best of %d (device: CUDA events around the copy; wall: with "
         "the destination's cudaMalloc on both sides)\n", REPEATS);
  printf("INFO  %-24s %8s %12s %12s %12s %9s %9s\n", "layout", "MiB", "dlmap GB/s", "memcpy GB/s", "dlmap wall ms",
         "device x", "wall x");
  const size_t sizes[] = {64u << 20, 256u << 20, 1024u << 20};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    const size_t bytes = sizes[s];
    int64_t n = 1;
    while ((n * 2) * (n * 2) * 4 <= (int64_t)bytes) n *= 2; /* n × n float32 = bytes */
    const int64_t pitch = n + 16, count = (int64_t)(bytes / 4);
    /* One source buffer big enough for every layout (step 2 reads twice the bytes), filled once. */
    const size_t source_bytes = 2 * bytes + (size_t)(16 * n * 4);
    void *source = NULL;
    if (!cuda_ok(cudaMalloc(&source, source_bytes), "cudaMalloc of the source") ||
        !cuda_ok(cudaMemset(source, 1, source_bytes), "cudaMemset")) {
      failures++;
      continue;
    }
    const int64_t square[2] = {n, n}, transposed[2] = {1, n}, rows[2] = {pitch, 1}, broadcast[2] = {0, 1};
    const int64_t line[1] = {count}, step2[1] = {2};
    const struct {
      const char *name;
      dlmap_array array;
    } layouts[] = {
        {"transposed", check_array(source, DLMAP_DEVICE_CUDA, kCheckFloat32, 2, square, transposed)},
        {"rows of a wider buffer", check_array(source, DLMAP_DEVICE_CUDA, kCheckFloat32, 2, square, rows)},
        {"step 2", check_array(source, DLMAP_DEVICE_CUDA, kCheckFloat32, 1, line, step2)},
        {"broadcast rows", check_array(source, DLMAP_DEVICE_CUDA, kCheckFloat32, 2, square, broadcast)},
    };
    timing memcpy_time;
    if (!time_memcpy(source, bytes, &memcpy_time)) {
      failures++;
    } else {
      for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        timing t;
        if (!time_dlmap(&layouts[l].array, DLMAP_DEVICE_CUDA, NULL, &t)) {
          failures++;
          continue;
        }
        printf("INFO  %-24s %8zu %12.1f %12.1f %12.2f %9.2f %9.2f\n", layouts[l].name, bytes >> 20, gbs(bytes, t.device_ms),
               gbs(bytes, memcpy_time.device_ms), t.wall_ms, memcpy_time.device_ms / t.device_ms,
               memcpy_time.wall_ms / t.wall_ms);
      }
    }
    if (bytes == (256u << 20)) { /* device -> host: the transposed tensor against the compact one, same pinned block */
      void *pinned = NULL;
      if (!cuda_ok(cudaHostAlloc(&pinned, bytes, cudaHostAllocPortable), "cudaHostAlloc")) {
        failures++;
      } else {
        fixed_block block = {pinned, bytes};
        const dlmap_allocator hook = {fixed_allocate, fixed_release, &block};
        const dlmap_array compact = check_array(source, DLMAP_DEVICE_CUDA, kCheckFloat32, 2, square, NULL);
        const dlmap_array transposed_view = layouts[0].array;
        timing tc, tt;
        if (time_dlmap(&compact, DLMAP_DEVICE_CPU, &hook, &tc) &&
            time_dlmap(&transposed_view, DLMAP_DEVICE_CPU, &hook, &tt)) {
          printf("INFO  device -> host %zu MiB: compact %.1f GB/s, transposed %.1f GB/s (%.2f of compact; target 0.9)\n",
                 bytes >> 20, gbs(bytes, tc.wall_ms), gbs(bytes, tt.wall_ms), tc.wall_ms / tt.wall_ms);
        } else {
          failures++;
        }
        cudaFreeHost(pinned);
      }
    }
    cudaFree(source);
  }
  printf("INFO  layout copies: targets (issue 47): transposed >= 0.8x memcpy device time at 256 MiB and 1 GiB, other "
         "layouts >= 0.7x\n");
  return failures;
}
