/* dlmap GPU tests — dlmap_config.h as third_party/toolchains/dlmap_configure.bzl writes it on a machine without a
 * CUDA toolkit or HIP runtime (what `--config=nogpu` asks for), so //tests/gpu:no_toolkit_test builds that library
 * in every CI run: the GPU backend must still be built and find a runtime by the spec's library names. */
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
