/* dlmap strided-copy kernels — what clang needs to compile strided_copy.cu to PTX without a CUDA toolkit
 * (codegen/kernel_ptx.py passes it with -include, with -nocudainc): the attributes the source's CUDA keywords stand
 * for, and clang's own declarations of threadIdx, blockIdx, blockDim and gridDim from the installed clang. nvcc,
 * NVRTC and HIPRTC define these themselves and never see this file. */
#ifndef DLMAP_SRC_BACKENDS_KERNELS_CLANG_CUDA_PRELUDE_H_
#define DLMAP_SRC_BACKENDS_KERNELS_CLANG_CUDA_PRELUDE_H_

#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

#include <__clang_cuda_builtin_vars.h>

#endif /* DLMAP_SRC_BACKENDS_KERNELS_CLANG_CUDA_PRELUDE_H_ */
