// Public-header compile test in C++17 (-pedantic -Wall -Wextra -Werror): <dlmap/dlmap.h> compiles, links with C linkage
// and lays out the DLPack structures as the ABI requires.
#include <dlmap/dlmap.h>
#include <dlmap/dlmap.h>  // include guards

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "gtest/gtest.h"

// DLPack structures (x86-64 / LP64; reference §2.5).
static_assert(sizeof(DLPackVersion) == 8, "DLPackVersion");
static_assert(sizeof(DLDevice) == 8, "DLDevice");
static_assert(sizeof(DLDataType) == 4 && offsetof(DLDataType, bits) == 1 && offsetof(DLDataType, lanes) == 2,
              "DLDataType");
#if UINTPTR_MAX == UINT64_MAX
static_assert(sizeof(DLTensor) == 48, "DLTensor");
static_assert(offsetof(DLTensor, device) == 8 && offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, dtype) == 20 &&
                  offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
                  offsetof(DLTensor, byte_offset) == 40,
              "DLTensor layout");
static_assert(sizeof(DLManagedTensor) == 64 && offsetof(DLManagedTensor, manager_ctx) == 48 &&
                  offsetof(DLManagedTensor, deleter) == 56,
              "DLManagedTensor");
static_assert(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned size");
static_assert(offsetof(DLManagedTensorVersioned, version) == 0 && offsetof(DLManagedTensorVersioned, manager_ctx) == 8 &&
                  offsetof(DLManagedTensorVersioned, deleter) == 16 && offsetof(DLManagedTensorVersioned, flags) == 24 &&
                  offsetof(DLManagedTensorVersioned, dl_tensor) == 32,
              "DLManagedTensorVersioned layout");
static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) + offsetof(DLTensor, byte_offset) == 72,
              "byte_offset of the embedded tensor");
#endif
static_assert(std::is_same<dlmap_managed_versioned, DLManagedTensorVersioned>::value, "typedef");
static_assert(std::is_standard_layout<DLManagedTensorVersioned>::value, "C layout");
static_assert(std::is_standard_layout<dlmap_error>::value && std::is_trivially_copyable<dlmap_error>::value,
              "dlmap_error is plain data");
static_assert(std::is_trivially_copyable<dlmap_arg>::value, "dlmap_arg is plain data");
static_assert(sizeof(dlmap_version) == sizeof(DLPackVersion), "dlmap_version mirrors DLPackVersion");
static_assert(sizeof(dlmap_error{}.message) == DLMAP_MESSAGE_CAPACITY, "message capacity");
static_assert(DLPACK_FLAG_BITMASK_READ_ONLY == 1 && DLPACK_FLAG_BITMASK_IS_COPIED == 2 &&
                  DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED == 4,
              "flag bits");

// The API has C linkage: these exact function types exist.
static_assert(std::is_same<decltype(&dlmap_error_format),
                           size_t (*)(char *, size_t, int32_t, const dlmap_arg *, size_t)>::value,
              "dlmap_error_format signature");
static_assert(std::is_same<decltype(&dlmap_device_type_find), const dlmap_device_info *(*)(int32_t)>::value,
              "dlmap_device_type_find signature");

namespace {

TEST(PublicHeaderCxx, CallsAcrossTheCBoundary) {
  const dlmap_device_info *info = dlmap_device_type_find(DLMAP_DEVICE_ROCMHOST);
  ASSERT_NE(info, nullptr);
  EXPECT_STREQ(info->name, "kDLROCMHost");

  dlmap_error err{};
  const dlmap_arg arg = dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, "cuda-ish");
  EXPECT_EQ(dlmap_error_set(&err, DLMAP_ERR_UNKNOWN_GPU_PLATFORM, &arg, 1), DLMAP_ERR_UNKNOWN_GPU_PLATFORM);
  EXPECT_STREQ(err.message, "Unknown GPU platform for __dlpack__: cuda-ish");

  DLDataType dtype{};
  ASSERT_TRUE(dlmap_dtype_parse("float8_e4m3fn", 13, &dtype));
  char name[32];
  dlmap_dtype_format(dtype, name, sizeof name);
  EXPECT_EQ(std::string(name), "float8_e4m3fn");

  dlmap_platform platform = DLMAP_PLATFORM_NONE;
  EXPECT_EQ(dlmap_platform_lookup_by_version("cuda 12.4", &platform, nullptr), DLMAP_OK);
  EXPECT_EQ(platform, DLMAP_PLATFORM_CUDA);
}

TEST(PublicHeaderCxx, VersionedStructUsable) {
  int64_t shape[2] = {2, 2};
  float data[4] = {};
  DLManagedTensorVersioned tensor{};
  tensor.version.major = dlmap_version_current().major;
  tensor.version.minor = dlmap_version_current().minor;
  tensor.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
  tensor.dl_tensor.data = data;
  tensor.dl_tensor.device.device_type = kDLCPU;
  tensor.dl_tensor.ndim = 2;
  tensor.dl_tensor.dtype.code = kDLFloat;
  tensor.dl_tensor.dtype.bits = 32;
  tensor.dl_tensor.dtype.lanes = 1;
  tensor.dl_tensor.shape = shape;
  EXPECT_EQ(dlmap_check_representable(static_cast<int32_t>(tensor.dl_tensor.device.device_type),
                                      tensor.dl_tensor.dtype, tensor.flags, dlmap_version_current(), nullptr),
            DLMAP_OK);
  EXPECT_EQ(reinterpret_cast<char *>(&tensor.dl_tensor) - reinterpret_cast<char *>(&tensor), 32);
}

}  // namespace
