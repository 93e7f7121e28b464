/* dlmap — dlmap_config.h as third_party/toolchains/dlmap_configure.bzl writes it on a machine without a CUDA toolkit
 * or HIP runtime (what `--config=nogpu` asks for). The one copy of it: //tests/gpu:no_toolkit_test builds the library
 * against it in every CI run, and the Python sdist ships it as config/dlmap_config.h (//python/pip:sdist). No toolkit
 * is needed at build time: the GPU backend is always compiled, and its loader (src/backends/gpu_loader.c) finds a
 * runtime at run time by the spec's library names (libcudart.so.13, .12, …; libamdhip64.so.N), the one the process
 * already loaded first. */
#ifndef DLMAP_CONFIG_H_
#define DLMAP_CONFIG_H_

#define DLMAP_HAS_CUDA 0
#define DLMAP_HAS_ROCM 0
#define DLMAP_CUDA_LIBDIR ""
#define DLMAP_CUDART_SONAME ""
#define DLMAP_CUDA_VERSION_STR ""
#define DLMAP_ROCM_LIBDIR ""
#define DLMAP_AMDHIP_SONAME ""
#define DLMAP_ROCM_VERSION_STR ""
#define DLMAP_DLPACK_VERSION_STR ""
#define DLMAP_DLPACK_HEADER ""

#endif /* DLMAP_CONFIG_H_ */
