// dlmap GPU tests — the kernels' reload budget (its own process: the budget is per platform and process). Each time
// the contexts are made anew, the next launch finds its module gone and loads the kernels again, 16 times at most;
// past that a lost module is a failed launch: the copy takes the runtime's copies, byte-exact, and the status says so.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

std::string KernelStatus() {
  char text[512];
  dlmap_platform_kernels(DLMAP_PLATFORM_CUDA, text, sizeof text);
  return text;
}

TEST(KernelReloadLimit, SixteenReloadsThenTheRuntimesCopies) {
  fake_gpu_reset(2);
  std::vector<float> data = Values(12);
  std::vector<int64_t> flat = {12};
  dlmap_array host = HostArray(data.data(), flat, {});
  dlmap_export_request to_device = ExportTo(DLMAP_DEVICE_CUDA);
  dlmap_exported source;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &to_device, &source, &err), DLMAP_OK) << err.message;
  const std::vector<int64_t> shape = {4, 3}, transposed = {1, 4};
  for (int round = 0; round <= 17; round++) {
    fake_gpu_reset(2);
    dlmap_array view = HostArray(nullptr, shape, transposed);
    view.data = source.legacy->dl_tensor.data;
    view.device_type = DLMAP_DEVICE_CUDA;
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
    request.copy = DLMAP_COPY_ALWAYS;
    dlmap_exported out;
    ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << err.message;
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    EXPECT_EQ(fake_gpu_values<float>(out.legacy->dl_tensor.data, 12), Expected(data.data(), shape, transposed))
        << "round " << round;
    // Round 0 loads the kernels; rounds 1 to 16 each reload them once; round 17 has no reload left.
    EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, round <= 16 ? 1 : 0) << "round " << round << ": "
                                                                         << KernelStatus();
    if (round == 17) {
      EXPECT_EQ(KernelStatus(), "launch failed: fakeLaunchKernel failed (error 400) for dlmap_transpose_u4; that copy "
                                "took the memcpy path");
      EXPECT_GE(fake_gpu_get_stats()->memcpy_2d_calls, 1);
    }
    out.legacy->deleter(out.legacy);
    fake_gpu_kernels_remake_contexts();
  }
  source.legacy->deleter(source.legacy);
}

}  // namespace
