// Downstream example test — Acme's library knows kDLAcmeNPU (65537, a vendor extension) and raises JAX's exception
// kinds, through dlmap's public API only.
#include <cstring>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"

TEST(AcmeDlmap, VendorDeviceType) {
  const dlmap_device_info *info = dlmap_device_type_find(DLMAP_DEVICE_ACMENPU);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->value, 65537);
  EXPECT_STREQ(info->name, "kDLAcmeNPU");
  EXPECT_TRUE(info->vendor);
  EXPECT_EQ(info->platform, DLMAP_PLATFORM_ACME);
  EXPECT_STREQ(dlmap_platform_name(DLMAP_PLATFORM_ACME), "acme");
  int32_t value = 0;
  ASSERT_TRUE(dlmap_device_type_parse("acme_npu", 8, &value));
  EXPECT_EQ(value, 65537);
  dlmap_platform platform;
  ASSERT_EQ(dlmap_platform_lookup_by_version("acme-runtime 2.1", &platform, nullptr), DLMAP_OK);
  EXPECT_EQ(platform, DLMAP_PLATFORM_ACME);
}

TEST(AcmeDlmap, JaxExceptionKinds) {
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_FROM_DLPACK_MISSING_METHODS)->kind, DLMAP_KIND_TYPE_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_IMPORT_UNSUPPORTED_DEVICE_TYPE)->kind, DLMAP_KIND_TYPE_ERROR);
  // Untouched errors keep the default spec's kinds.
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE)->kind, DLMAP_KIND_BUFFER_ERROR);
}

TEST(AcmeDlmap, ImportOfAcmeMemoryRaisesTypeError) {
  // Acme memory has no dlmap backend: importing it is the unsupported-device error, now a TypeError.
  static int deletes = 0;
  int64_t shape[1] = {4};
  float data[4] = {0};
  struct DLManagedTensorVersioned tensor;
  std::memset(&tensor, 0, sizeof tensor);
  tensor.version.major = 1;
  tensor.version.minor = 3;
  tensor.deleter = [](struct DLManagedTensorVersioned *) { deletes++; };
  tensor.dl_tensor.data = data;
  tensor.dl_tensor.device.device_type = static_cast<DLDeviceType>(65537);
  tensor.dl_tensor.ndim = 1;
  tensor.dl_tensor.shape = shape;
  tensor.dl_tensor.dtype.code = kDLFloat;
  tensor.dl_tensor.dtype.bits = 32;
  tensor.dl_tensor.dtype.lanes = 1;
  dlmap_imported imported;
  dlmap_error err;
  EXPECT_EQ(dlmap_import_versioned(&tensor, nullptr, &imported, &err), DLMAP_ERR_IMPORT_UNSUPPORTED_DEVICE_TYPE);
  EXPECT_STREQ(dlmap_error_kind_name(err.kind), "TypeError");
  EXPECT_STREQ(err.message,
               "Array passed to from_dlpack is on unsupported device type (DLDeviceType: 65537, array: kDLAcmeNPU "
               "tensor of ndim 1)");
  EXPECT_EQ(deletes, 1);
}
