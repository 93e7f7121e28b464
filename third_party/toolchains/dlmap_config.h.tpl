/* dlmap_config.h: what %{WRITER} found (string macros are "" when absent). Written from
 * third_party/toolchains/dlmap_config.h.tpl, the one list of these macros, which dlmap_configure.bzl, gpu/check.sh and
 * //third_party/toolchains:no_toolkit_config_header fill. */
#ifndef DLMAP_CONFIG_H_
#define DLMAP_CONFIG_H_

#define DLMAP_HAS_CUDA %{DLMAP_HAS_CUDA}
#define DLMAP_HAS_ROCM %{DLMAP_HAS_ROCM}
#define DLMAP_CUDA_LIBDIR "%{DLMAP_CUDA_LIBDIR}"
#define DLMAP_CUDART_SONAME "%{DLMAP_CUDART_SONAME}"
#define DLMAP_CUDA_VERSION_STR "%{DLMAP_CUDA_VERSION_STR}"
#define DLMAP_ROCM_LIBDIR "%{DLMAP_ROCM_LIBDIR}"
#define DLMAP_AMDHIP_SONAME "%{DLMAP_AMDHIP_SONAME}"
#define DLMAP_ROCM_VERSION_STR "%{DLMAP_ROCM_VERSION_STR}"
#define DLMAP_DLPACK_VERSION_STR "%{DLMAP_DLPACK_VERSION_STR}"
#define DLMAP_DLPACK_HEADER "%{DLMAP_DLPACK_HEADER}"

#endif /* DLMAP_CONFIG_H_ */
