// dlmap GPU tests — a strided copy staged through the host when the host cannot give it a buffer (malloc wrapped at
// link time: a call of an armed size fails once): the catalogue's out_of_memory naming the bytes, and the copy's
// device memory freed. Over the fake runtime, whose own allocations (a shared library's) are not wrapped.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" {
void *__real_malloc(size_t size);
static size_t g_fail_size;  // the size of the next malloc that fails (0: none)
void *__wrap_malloc(size_t size) {
  if (g_fail_size != 0 && size == g_fail_size) {
    g_fail_size = 0;
    return nullptr;
  }
  return __real_malloc(size);
}
}

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

// 81 copies of 9 rows between device memories: staged (runtime_failure_test's case). The source's extent is 889
// floats (3556 bytes), the compacted copy 729 (2916 bytes).
TEST(StagedCopyOom, EachStagingBufferTheHostRefusesIsOutOfMemory) {
  fake_gpu_reset(2);
  const std::vector<int64_t> shape = {9, 9, 9}, strides = {1, 100, 10};
  std::vector<float> data = Values(889);
  std::vector<int64_t> flat = {889};
  dlmap_array host = HostArray(data.data(), flat, {});
  dlmap_export_request to_device = ExportTo(DLMAP_DEVICE_CUDA);
  dlmap_exported source;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &to_device, &source, &err), DLMAP_OK) << err.message;
  for (size_t bytes : {size_t{3556}, size_t{2916}}) {
    fake_gpu_reset(2);
    fake_gpu_kernels_refuse_launches(1);
    const int live = fake_gpu_get_stats()->live;
    dlmap_array view = dlmap_array_default();
    view.data = source.legacy->dl_tensor.data;
    view.device_type = DLMAP_DEVICE_CUDA;
    view.dtype = kFloat32;
    view.ndim = 3;
    view.shape = shape.data();
    view.strides = strides.data();
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
    request.copy = DLMAP_COPY_ALWAYS;
    g_fail_size = bytes;
    dlmap_exported out;
    EXPECT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_ERR_OUT_OF_MEMORY) << bytes;
    EXPECT_EQ(g_fail_size, 0u) << "no malloc of " << bytes << " bytes";
    g_fail_size = 0;
    EXPECT_EQ(std::string(err.message),
              "Out of memory allocating " + std::to_string(bytes) + " bytes for staging a strided GPU copy");
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    EXPECT_EQ(fake_gpu_get_stats()->live, live) << bytes << ": the copy's memory was not freed";
  }
  fake_gpu_kernels_refuse_launches(0);
  source.legacy->deleter(source.legacy);
}

}  // namespace
