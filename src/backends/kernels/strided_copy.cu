// dlmap strided-copy kernels: a strided device tensor into compact row-major memory on the device, at memory
// bandwidth, where memcpy_2d_async calls would issue one small copy per row or element. One source for every vendor:
// Debian's clang compiles it into the committed PTX (strided_copy.ptx, codegen/kernel_ptx.py), HIPRTC at first use. It
// includes nothing but its parameter block: the runtime compilers see no system header.
//
// Kernels, each taking one dlmap_copy_params by value, per unit size (u1, u2, u4, u8, u16 bytes), as
// strided_copy_params.h lists them (DLMAP_KERNEL_SHAPES × DLMAP_KERNEL_UNITS):
//   dlmap_gather32_uN   any layout, 32-bit indices (count < 2^31): one thread per destination unit, source offset
//                       from the index's mixed-radix digits; broadcast (stride 0) and negative strides included
//   dlmap_gather_uN     the same with 64-bit indices
//   dlmap_transpose_uN  a plane whose source is contiguous along the destination's outer dimension (a transposed
//                       view), through shared-memory tiles so that reads and writes are both coalesced; a third
//                       dimension repeats the plane
#include "strided_copy_params.h"

struct alignas(16) dlmap_u128 {
  unsigned long long lo, hi;
};

template <typename T, typename I>
__device__ __forceinline__ void gather(const dlmap_copy_params &p) {
  const T *src = static_cast<const T *>(p.src);
  T *dst = static_cast<T *>(p.dst);
  const I count = (I)p.count, inner = (I)p.shape[0], step = (I)gridDim.x * blockDim.x;
  const long long inner_stride = p.stride[0];
  const int ndim = (int)p.ndim;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
    I rest = i / inner;
    long long offset = (long long)(i - rest * inner) * inner_stride;
    for (int d = 1; d < ndim; d++) {
      const I n = (I)p.shape[d], next = rest / n;
      offset += (long long)(rest - next * n) * p.stride[d];
      rest = next;
    }
    dst[i] = src[offset];
  }
}

template <typename T>
__device__ __forceinline__ void transpose(const dlmap_copy_params &p) {
  __shared__ T tile[DLMAP_KERNEL_TILE][DLMAP_KERNEL_TILE + 1];  // +1: columns fall in distinct banks
  const T *src = static_cast<const T *>(p.src);
  T *dst = static_cast<T *>(p.dst);
  const long long cols = p.shape[0], rows = p.shape[1];  // the destination plane is rows × cols
  const long long col_stride = p.stride[0], row_stride = p.stride[1];
  const long long planes = p.ndim > 2 ? p.shape[2] : 1, plane_stride = p.ndim > 2 ? p.stride[2] : 0;
  const long long tile_cols = (cols + DLMAP_KERNEL_TILE - 1) / DLMAP_KERNEL_TILE;
  const long long tile_rows = (rows + DLMAP_KERNEL_TILE - 1) / DLMAP_KERNEL_TILE;
  const long long per_plane = tile_cols * tile_rows, tiles = per_plane * planes;
  const int x = threadIdx.x, y = threadIdx.y;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long plane = t / per_plane, in_plane = t - plane * per_plane;
    const long long row0 = in_plane / tile_cols * DLMAP_KERNEL_TILE;
    const long long col0 = in_plane % tile_cols * DLMAP_KERNEL_TILE;
    const T *from = src + plane * plane_stride;
    T *to = dst + plane * rows * cols;
    // Read along the source's contiguous dimension (the destination's rows) ...
    for (int j = y; j < DLMAP_KERNEL_TILE; j += DLMAP_KERNEL_TILE_ROWS) {
      const long long row = row0 + x, col = col0 + j;
      if (row < rows && col < cols) tile[x][j] = from[row * row_stride + col * col_stride];
    }
    __syncthreads();
    // ... and write along the destination's contiguous one.
    for (int j = y; j < DLMAP_KERNEL_TILE; j += DLMAP_KERNEL_TILE_ROWS) {
      const long long row = row0 + j, col = col0 + x;
      if (row < rows && col < cols) to[row * cols + col] = tile[j][x];
    }
    __syncthreads();
  }
}

// The kernels of strided_copy_params.h's lists (shape × unit), each running its shape's function for its unit.
template <typename T>
__device__ __forceinline__ void run_gather32(const dlmap_copy_params &p) { gather<T, unsigned int>(p); }
template <typename T>
__device__ __forceinline__ void run_gather(const dlmap_copy_params &p) { gather<T, unsigned long long>(p); }
template <typename T>
__device__ __forceinline__ void run_transpose(const dlmap_copy_params &p) { transpose<T>(p); }

#define DLMAP_KERNEL(SHAPE, shape, threads, unit, T)                                                           \
  extern "C" __global__ void __launch_bounds__(threads) dlmap_##shape##_##unit(const dlmap_copy_params p) { \
    run_##shape<T>(p);                                                                                         \
  }
#define DLMAP_KERNELS_OF_UNIT(unit, T, ...) DLMAP_KERNEL_SHAPES(DLMAP_KERNEL, unit, T)
DLMAP_KERNEL_UNITS(DLMAP_KERNELS_OF_UNIT, ~)
