// dlmap GPU check — the kernels of gpu/check_main.c (nvcc): a slow writer for the stream-ordering test, a
// reader that counts what it did not expect, and a sum that reads memory in place (zero-copy checks).
#include <cuda_runtime.h>
#include <stddef.h>

// Every block first spins for `spin` clock cycles, then writes `value` into its part of buf: a producer kernel
// slow enough that a consumer not made to wait reads the previous iteration's values.
__global__ void slow_fill(unsigned *buf, size_t n, unsigned value, long long spin) {
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    buf[i] = value;
  }
}

__global__ void count_mismatches(const unsigned *buf, size_t n, unsigned value, unsigned long long *mismatches) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    local += buf[i] != value;
  }
  if (local != 0) atomicAdd(mismatches, local);
}

__global__ void sum_floats(const float *buf, size_t n, double *out) {
  double local = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    local += buf[i];
  }
  atomicAdd(out, local);
}

__global__ void scale_floats(float *buf, size_t n, float factor) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    buf[i] *= factor;
  }
}

extern "C" {

int check_slow_fill(unsigned *buf, size_t n, unsigned value, long long spin, cudaStream_t stream) {
  slow_fill<<<1024, 256, 0, stream>>>(buf, n, value, spin);
  return (int)cudaGetLastError();
}

int check_count_mismatches(const unsigned *buf, size_t n, unsigned value, unsigned long long *mismatches,
                           cudaStream_t stream) {
  count_mismatches<<<1024, 256, 0, stream>>>(buf, n, value, mismatches);
  return (int)cudaGetLastError();
}

int check_sum_floats(const float *buf, size_t n, double *out, cudaStream_t stream) {
  sum_floats<<<256, 256, 0, stream>>>(buf, n, out);
  return (int)cudaGetLastError();
}

int check_scale_floats(float *buf, size_t n, float factor, cudaStream_t stream) {
  scale_floats<<<256, 256, 0, stream>>>(buf, n, factor);
  return (int)cudaGetLastError();
}

}  // extern "C"
