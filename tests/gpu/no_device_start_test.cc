// dlmap GPU tests — the fake runtimes started in a process that has no device (its own process: a runtime is started
// once). Neither the runtime that cannot start (35) nor the fake (no device) starts: the first one that loaded is kept,
// not started, and the probe gives its vendor's reason.
#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

namespace {

TEST(NoDeviceStart, TheFirstRuntimeThatLoadedGivesTheReason) {
  fake_gpu_reset(0);
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  EXPECT_TRUE(status.built);
  EXPECT_FALSE(status.available);
  EXPECT_EQ(status.device_count, 0);
  EXPECT_STREQ(status.reason, "fake error 35: the driver is older than this runtime (fakeGetDeviceCount returned 35)");
  EXPECT_EQ(fake_gpu_peek_last_error(), 0) << "the fake's failed count was left as its last error";
  fake_gpu_reset(2);
}

}  // namespace
