// dlmap GPU tests — default pools the runtime refuses (its own process: a kind's pool is asked for once per process).
// A pinned pool that cannot be mapped for the devices (set_access fails), or a managed pool the runtime does not give
// (get_default fails), leaves that kind to its synchronous allocator for good: the copy still succeeds, byte-exact,
// the refusal is not left as the runtime's last error, and the pool is not asked for again.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

// Copies four device floats to `type` (on the fake's stream `stream` where it is not null); checks the bytes and
// releases the copy; the fake's stats of the copy (reset before it).
fake_gpu_stats CopyTo(DLManagedTensor *source, int32_t type, void *stream) {
  static const std::vector<int64_t> shape = {4};
  dlmap_array array = dlmap_array_default();
  array.data = source->dl_tensor.data;
  array.device_type = DLMAP_DEVICE_CUDA;
  array.dtype = kFloat32;
  array.ndim = 1;
  array.shape = shape.data();
  dlmap_export_request request = ExportTo(type);
  request.copy = DLMAP_COPY_ALWAYS;
  request.has_stream = stream != nullptr;
  request.stream = static_cast<int64_t>(reinterpret_cast<intptr_t>(stream));
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  if (out.legacy == nullptr) return *fake_gpu_get_stats();
  EXPECT_EQ(fake_gpu_synchronize_all(), 0);
  const float *values = static_cast<const float *>(out.legacy->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(values, values + 4), Values(4));
  const fake_gpu_stats stats = *fake_gpu_get_stats();
  out.legacy->deleter(out.legacy);
  return stats;
}

TEST(PoolRefused, ARefusedPoolLeavesTheKindToItsSynchronousAllocatorForGood) {
  fake_gpu_reset(2);
  const std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  dlmap_array host = HostArray(const_cast<float *>(data.data()), shape, {});
  dlmap_export_request to_device = ExportTo(DLMAP_DEVICE_CUDA);
  dlmap_exported source;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &to_device, &source, &err), DLMAP_OK) << err.message;
  void *stream = fake_gpu_stream_create();
  const int live = fake_gpu_get_stats()->live;

  struct Case {
    int32_t type;
    const char *op;  // the pool's call that fails
    const char *allocator;
    void *stream;
  };
  for (const Case &c : {Case{DLMAP_DEVICE_CUDAHOST, "set_access", "malloc_host", nullptr},
                        Case{DLMAP_DEVICE_CUDAMANAGED, "get_default", "malloc_managed", stream}}) {
    for (int attempt = 0; attempt < 2; attempt++) {
      fake_gpu_reset(2);
      if (attempt == 0) fake_gpu_fail_next(c.op, FAKE_NOT_SUPPORTED);
      const fake_gpu_stats stats = CopyTo(source.legacy, c.type, c.stream);
      EXPECT_EQ(fake_gpu_armed(), 0) << c.op << ": the pool was not asked for";
      EXPECT_EQ(stats.pool_allocations, 0) << c.op << ", attempt " << attempt;
      EXPECT_STREQ(stats.last_device_sync, c.allocator) << c.op << ", attempt " << attempt;
      EXPECT_EQ(fake_gpu_peek_last_error(), 0) << c.op << ": the refusal was left as the runtime's last error";
      EXPECT_EQ(fake_gpu_get_stats()->live, live) << c.op;
    }
  }
  EXPECT_EQ(fake_gpu_pinned_pool_devices(), 0) << "the pinned pool was mapped after all";
  fake_gpu_stream_destroy(stream);
  source.legacy->deleter(source.legacy);
}

}  // namespace
