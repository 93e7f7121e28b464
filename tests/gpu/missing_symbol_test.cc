// dlmap GPU tests — a spec whose CUDA table names an entry point libcudart does not export: the backend loads
// nothing, and the probe and every exchange that needs the runtime say which symbol is missing.
#include <string>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"

namespace {

// Whether no runtime library of the spec's (or the toolkit's) could be loaded at all: then no symbol can be missing.
bool NotInstalled(const dlmap_platform_status &status) {
  return std::string(status.reason).rfind("cannot load the runtime: ", 0) == 0;
}

TEST(MissingSymbol, TheProbeNamesIt) {
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  EXPECT_TRUE(status.built);
  if (NotInstalled(status)) GTEST_SKIP() << "no CUDA runtime is installed here: " << status.reason;
  EXPECT_FALSE(status.available);
  EXPECT_STREQ(status.reason, "the runtime lacks cudaMallocThatDoesNotExist");
}

TEST(MissingSymbol, ExportsThatNeedTheRuntimeSayWhy) {
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  EXPECT_TRUE(status.built);
  if (NotInstalled(status)) GTEST_SKIP() << "no CUDA runtime is installed here: " << status.reason;
  float data[2] = {1, 2};
  const int64_t shape[1] = {2};
  dlmap_array array = dlmap_array_default();
  array.data = data;
  array.device_type = DLMAP_DEVICE_CUDA;
  array.dtype = {kDLFloat, 32, 1};
  array.ndim = 1;
  array.shape = shape;
  dlmap_export_request request = dlmap_export_request_default();
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_PLATFORM_UNAVAILABLE);
  EXPECT_STREQ(err.message, "Device type kDLCUDA (2) needs platform cuda, which this build or machine cannot serve: "
                            "the runtime lacks cudaMallocThatDoesNotExist");
}

TEST(MissingSymbol, OtherPlatformsAreUnaffected) {
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_ROCM, &status);
  EXPECT_TRUE(status.built);
  EXPECT_EQ(std::string(status.reason).find("lacks"), std::string::npos) << status.reason;
}

}  // namespace
