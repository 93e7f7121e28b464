// dlmap GPU tests — a profile whose export stream policy is pass_through (JAX's, spec/profiles/jax.yaml) over the fake
// runtime: a view of device memory exported with a stream integer no convention gives a meaning (an invented small
// one) is not refused; the host waits for the producer's stream instead, and no event is made.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

TEST(PassThroughStream, AnUnclassifiableStreamWaitsOnTheHostForTheProducer) {
  fake_gpu_reset(2);
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request to_device = ExportTo(DLMAP_DEVICE_CUDA);
  dlmap_exported device;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &to_device, &device, &err), DLMAP_OK) << err.message;
  void *producer = fake_gpu_stream_create();
  fake_gpu_reset(2);
  dlmap_array view = HostArray(nullptr, shape, {});
  view.data = device.legacy->dl_tensor.data;
  view.device_type = DLMAP_DEVICE_CUDA;
  view.producer_stream = producer;
  dlmap_export_request request = dlmap_export_request_default();
  request.has_stream = true;
  request.stream = 5;  // 3 ≤ s < 4096: an invented small integer, stream_invalid under a refusing policy
  dlmap_exported out;
  ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->events_created, 0);
  EXPECT_EQ(fake_gpu_get_stats()->syncs, 1);
  EXPECT_EQ(fake_gpu_get_stats()->last_sync_stream, producer);
  EXPECT_EQ(fake_gpu_get_stats()->waits, 0);
  out.legacy->deleter(out.legacy);
  fake_gpu_stream_destroy(producer);
  device.legacy->deleter(device.legacy);
}

}  // namespace
