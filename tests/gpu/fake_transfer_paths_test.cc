// dlmap GPU tests over the fake runtime — src/transfer.c and src/stream_sync.c paths the exchanges elsewhere do not
// take: a host copy out of pinned memory (which first waits for the source's stream, and fails when that wait does),
// a copy from device memory into pinned memory, a pinned view (host_sync: the device is checked, nothing enqueued),
// dlmap_stream_wait_batch's deduplication by device, producer stream and meaning (past its 64 remembered keys too),
// dlmap_memory_locate's failure and its optional outputs, a cross-device copy whose wait for its pool allocation
// fails, a scalar's failed copy, a view with stream=-1, an empty pinned array exported to the device, a pinned view
// whose device cannot be entered (copied instead) and a copy from memory of a type the spec does not list.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

class FakeTransfer : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    ASSERT_TRUE(status.available) << "the fake runtime did not load: " << status.reason;
  }
  void TearDown() override { fake_gpu_reset(2); }  // forgets the regions reported as pinned
};

// Host data exported to (CUDA, id), legacy; the caller calls its deleter.
DLManagedTensor *DeviceCopy(const std::vector<float> &data, int32_t id) {
  std::vector<int64_t> shape = {static_cast<int64_t>(data.size())};
  dlmap_array host = HostArray(const_cast<float *>(data.data()), shape, {});
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, id);
  dlmap_exported out{};
  dlmap_error err{};
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  return out.legacy;
}

// Host data reported to the fake as pinned memory on device 0, as a kDLCUDAHost array.
dlmap_array PinnedArray(std::vector<float> &data, const std::vector<int64_t> &shape) {
  EXPECT_EQ(fake_gpu_report(data.data(), data.size() * sizeof(float), FAKE_HOST, 0), 0);
  dlmap_array pinned = HostArray(data.data(), shape, {});
  pinned.device_type = DLMAP_DEVICE_CUDAHOST;
  return pinned;
}

int g_released = 0;
void CountRelease(void *) { g_released++; }

// copy=True of pinned memory to the host: the host copies, after waiting for the source's stream (GPU writes may be
// pending); when that wait fails, the export fails with the runtime's error and the caller keeps its owner.
TEST_F(FakeTransfer, AHostCopyOfPinnedMemoryWaitsForTheSourceStream) {
  std::vector<float> data = Values(4);
  const std::vector<int64_t> shape = {4};
  dlmap_array pinned = PinnedArray(data, shape);
  g_released = 0;
  pinned.owner = &g_released;
  pinned.release = CountRelease;
  dlmap_export_request to_host = ExportTo(DLMAP_DEVICE_CPU);
  to_host.copy = DLMAP_COPY_ALWAYS;
  const int syncs = fake_gpu_get_stats()->syncs;
  dlmap_exported out{};
  dlmap_error err{};
  ASSERT_EQ(dlmap_export(&pinned, &to_host, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->syncs - syncs, 1) << "the source's stream, once";
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_calls, 0) << "the host copies";
  const DLTensor &t = out.legacy->dl_tensor;
  EXPECT_NE(t.data, static_cast<void *>(data.data()));
  EXPECT_EQ(static_cast<int32_t>(t.device.device_type), DLMAP_DEVICE_CPU);
  EXPECT_EQ(std::vector<float>(static_cast<float *>(t.data), static_cast<float *>(t.data) + 4), data);
  out.legacy->deleter(out.legacy);
  EXPECT_EQ(g_released, 1) << "the copy gave the source back";

  g_released = 0;
  fake_gpu_fail_next("sync", FAKE_ILLEGAL_ADDRESS);
  dlmap_exported failed{};
  // No copy ran on a runtime (the host copies), so the runtime's call failure is reported as it is.
  EXPECT_EQ(dlmap_export(&pinned, &to_host, &failed, &err), DLMAP_ERR_BACKEND_CALL_FAILED);
  EXPECT_STREQ(err.id, "backend_call_failed");
  EXPECT_NE(std::string(err.message).find("fakeStreamSynchronize"), std::string::npos) << err.message;
  EXPECT_NE(std::string(err.message).find("error 700"), std::string::npos) << err.message;
  EXPECT_EQ(g_released, 0) << "on error the caller keeps its owner";
  EXPECT_EQ(failed.legacy, nullptr);
}

// A copy from device memory into pinned memory: the runtime copies, and the host waits for it (the host may read
// pinned memory at once).
TEST_F(FakeTransfer, ACopyIntoPinnedMemoryWaitsOnTheHost) {
  std::vector<float> data = Values(6);
  DLManagedTensor *device = DeviceCopy(data, 0);
  ASSERT_NE(device, nullptr);
  const std::vector<int64_t> shape = {6};
  dlmap_array on_device = HostArray(static_cast<float *>(device->dl_tensor.data), shape, {});
  on_device.device_type = DLMAP_DEVICE_CUDA;
  const dlmap_export_request to_pinned = ExportTo(DLMAP_DEVICE_CUDAHOST);
  const fake_gpu_stats before = *fake_gpu_get_stats();
  dlmap_exported out{};
  dlmap_error err{};
  ASSERT_EQ(dlmap_export(&on_device, &to_pinned, &out, &err), DLMAP_OK) << err.message;
  const fake_gpu_stats *after = fake_gpu_get_stats();
  EXPECT_EQ(after->syncs - before.syncs, 1);
  EXPECT_EQ(after->waits - before.waits, 0) << "no stream wait: the host waited";
  EXPECT_EQ(after->memcpy_calls + after->memcpy_2d_calls - before.memcpy_calls - before.memcpy_2d_calls, 1);
  const DLTensor &t = out.legacy->dl_tensor;
  EXPECT_EQ(static_cast<int32_t>(t.device.device_type), DLMAP_DEVICE_CUDAHOST);
  EXPECT_EQ(std::vector<float>(static_cast<float *>(t.data), static_cast<float *>(t.data) + 6), data);
  out.legacy->deleter(out.legacy);
  device->deleter(device);
}

// A view of pinned memory (stream convention none: host_sync): the runtime checks the device and the host waits;
// no event or stream wait is enqueued.
TEST_F(FakeTransfer, APinnedViewChecksTheDeviceAndEnqueuesNothing) {
  std::vector<float> data = Values(4);
  const std::vector<int64_t> shape = {4};
  dlmap_array pinned = PinnedArray(data, shape);
  const fake_gpu_stats before = *fake_gpu_get_stats();
  dlmap_exported out{};
  dlmap_error err{};
  const dlmap_export_request view = dlmap_export_request_default();
  ASSERT_EQ(dlmap_export(&pinned, &view, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(out.legacy->dl_tensor.data, static_cast<void *>(data.data()));
  EXPECT_EQ(fake_gpu_get_stats()->waits, before.waits);
  EXPECT_EQ(fake_gpu_get_stats()->events_recorded, before.events_recorded);
  out.legacy->deleter(out.legacy);
}

dlmap_array CudaArray(DLManagedTensor *tensor, int32_t id, void *producer_stream) {
  dlmap_array a = dlmap_array_default();
  a.data = tensor->dl_tensor.data;
  a.device_type = DLMAP_DEVICE_CUDA;
  a.device_id = id;
  a.dtype = kFloat32;
  a.ndim = tensor->dl_tensor.ndim;
  a.shape = tensor->dl_tensor.shape;
  a.producer_stream = producer_stream;
  return a;
}

// One event and one wait per distinct (device, producer stream, meaning); pinned memory (host_sync) is waited for on
// the host and counts no wait; waits may be NULL.
TEST_F(FakeTransfer, ABatchWaitsOncePerDeviceAndProducerStream) {
  std::vector<float> data = Values(4);
  DLManagedTensor *on0 = DeviceCopy(data, 0);
  DLManagedTensor *on1 = DeviceCopy(data, 1);
  ASSERT_NE(on0, nullptr);
  ASSERT_NE(on1, nullptr);
  void *a = fake_gpu_stream_create();
  void *b = fake_gpu_stream_create();
  std::vector<float> host = Values(4);
  const std::vector<int64_t> shape = {4};
  const std::vector<dlmap_array> arrays = {
      CudaArray(on0, 0, a), CudaArray(on0, 0, a) /* the same: no second wait */, CudaArray(on0, 0, b),
      CudaArray(on1, 1, a), CudaArray(on0, 0, nullptr),
      PinnedArray(host, shape) /* device 0, no producer stream, like the one before: another meaning (host_sync) */};
  const fake_gpu_stats before = *fake_gpu_get_stats();
  size_t waits = 99;
  dlmap_error err{};
  ASSERT_EQ(dlmap_stream_wait_batch(arrays.data(), arrays.size(), false, 0, &waits, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(waits, 4u);
  EXPECT_EQ(fake_gpu_get_stats()->waits - before.waits, 4);
  EXPECT_EQ(fake_gpu_get_stats()->events_recorded - before.events_recorded, 4);
  EXPECT_EQ(fake_gpu_get_stats()->syncs - before.syncs, 1) << "the pinned array, on the host";
  const int waits_before = fake_gpu_get_stats()->waits;
  ASSERT_EQ(dlmap_stream_wait_batch(arrays.data(), arrays.size(), false, 0, nullptr, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->waits - waits_before, 4);
  fake_gpu_stream_destroy(a);
  fake_gpu_stream_destroy(b);
  on0->deleter(on0);
  on1->deleter(on1);
}

// Past the 64 producer streams a batch remembers, later arrays are waited for without deduplication: still one wait
// each for distinct streams, and a repeat of a forgotten one waits again (correct, if not minimal).
TEST_F(FakeTransfer, ABatchPastItsRememberedStreamsStillWaitsForEach) {
  std::vector<float> data = Values(4);
  DLManagedTensor *on0 = DeviceCopy(data, 0);
  ASSERT_NE(on0, nullptr);
  std::vector<void *> streams;
  std::vector<dlmap_array> arrays;
  for (int i = 0; i < 70; i++) {
    streams.push_back(fake_gpu_stream_create());
    ASSERT_NE(streams.back(), nullptr);
    arrays.push_back(CudaArray(on0, 0, streams.back()));
  }
  arrays.push_back(arrays[69]);  // the 70th stream again: past the remembered 64, so waited for again
  arrays.push_back(arrays[0]);   // the first again: remembered, no wait
  size_t waits = 0;
  dlmap_error err{};
  ASSERT_EQ(dlmap_stream_wait_batch(arrays.data(), arrays.size(), false, 0, &waits, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(waits, 71u);
  for (void *s : streams) fake_gpu_stream_destroy(s);
  on0->deleter(on0);
}

// dlmap_memory_locate: a failing pointer query is the runtime's error; kind and device_id are each optional.
TEST_F(FakeTransfer, LocateReportsTheRuntimesFailureAndFillsOnlyWhatIsAsked) {
  std::vector<float> data = Values(4);
  DLManagedTensor *on1 = DeviceCopy(data, 1);
  ASSERT_NE(on1, nullptr);
  dlmap_memory_kind kind = DLMAP_MEMORY_KIND_COUNT;
  int32_t id = -1;
  dlmap_error err{};
  fake_gpu_fail_next("attributes", FAKE_ILLEGAL_ADDRESS);
  EXPECT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CUDA, on1->dl_tensor.data, &kind, &id, &err),
            DLMAP_ERR_BACKEND_CALL_FAILED);
  EXPECT_NE(std::string(err.message).find("fakePointerGetAttributes"), std::string::npos) << err.message;
  EXPECT_EQ(kind, DLMAP_MEMORY_KIND_COUNT) << "untouched on error";
  EXPECT_EQ(id, -1);
  ASSERT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CUDA, on1->dl_tensor.data, nullptr, &id, &err), DLMAP_OK)
      << err.message;
  EXPECT_EQ(id, 1);
  ASSERT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CUDA, on1->dl_tensor.data, &kind, nullptr, &err), DLMAP_OK)
      << err.message;
  EXPECT_EQ(kind, DLMAP_MEMORY_DEVICE);
  on1->deleter(on1);
}

// A copy from device 1 to device 0 with the consumer's stream named: the destination is taken from the pool on the
// consumer's stream (device 0) and the copy, on device 1's stream, first waits for that allocation. When that wait
// fails, the memory is given back and the export fails; nothing stays allocated.
TEST_F(FakeTransfer, ACrossDeviceCopyWhoseAllocationWaitFailsGivesTheMemoryBack) {
  std::vector<float> data = Values(4);
  DLManagedTensor *on1 = DeviceCopy(data, 1);
  ASSERT_NE(on1, nullptr);
  void *consumer = fake_gpu_stream_create();
  dlmap_array array = CudaArray(on1, 1, nullptr);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 0);
  request.copy = DLMAP_COPY_ALWAYS;
  request.has_stream = true;
  request.stream = reinterpret_cast<intptr_t>(consumer);
  const fake_gpu_stats before = *fake_gpu_get_stats();
  dlmap_exported out{};
  dlmap_error err{};
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->pool_allocations - before.pool_allocations, 1);
  EXPECT_EQ(fake_gpu_get_stats()->waits - before.waits, 2) << "the copy after the allocation, the consumer after the copy";
  out.legacy->deleter(out.legacy);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  const fake_gpu_stats settled = *fake_gpu_get_stats();
  fake_gpu_fail_next("wait", FAKE_INVALID_HANDLE);  // the first wait: the copy's stream for the allocation
  dlmap_exported failed{};
  EXPECT_EQ(dlmap_export(&array, &request, &failed, &err), DLMAP_ERR_STREAM_SYNC_FAILED);
  EXPECT_STREQ(err.id, "stream_sync_failed");
  EXPECT_NE(std::string(err.message).find("error 400"), std::string::npos) << err.message;
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  const fake_gpu_stats *after = fake_gpu_get_stats();
  EXPECT_EQ(after->pool_allocations - settled.pool_allocations, 1) << "taken before the wait";
  EXPECT_EQ(after->pool_frees_queued - settled.pool_frees_queued, 1) << "and given back";
  EXPECT_EQ(after->memcpy_calls + after->memcpy_2d_calls, settled.memcpy_calls + settled.memcpy_2d_calls)
      << "no copy was enqueued";
  EXPECT_EQ(after->live, settled.live);
  EXPECT_EQ(after->double_frees, 0);
  fake_gpu_stream_destroy(consumer);
  on1->deleter(on1);
}

// A scalar whose copy to the device fails: runtime_copy_failed names its empty shape.
TEST_F(FakeTransfer, AScalarsFailedCopyNamesItsEmptyShape) {
  float value = 42.0f;
  dlmap_array scalar = HostArray(&value, {}, {});
  const dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_fail_next("memcpy", FAKE_INVALID_VALUE);
  dlmap_exported out{};
  dlmap_error err{};
  EXPECT_EQ(dlmap_export(&scalar, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_NE(std::string(err.message).find("the tensor on (kDLCPU, 0) (shape [], 4 bytes)"), std::string::npos)
      << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->live, live) << "the device copy is freed again";
}

// stream=-1 (no synchronisation) on a view of device memory: nothing is enqueued and no event is made.
TEST_F(FakeTransfer, AViewWithStreamMinusOneEnqueuesNothing) {
  std::vector<float> data = Values(4);
  DLManagedTensor *on0 = DeviceCopy(data, 0);
  ASSERT_NE(on0, nullptr);
  void *producer = fake_gpu_stream_create();
  const dlmap_array array = CudaArray(on0, 0, producer);
  dlmap_export_request request = dlmap_export_request_default();
  request.has_stream = true;
  request.stream = -1;
  const fake_gpu_stats before = *fake_gpu_get_stats();
  dlmap_exported out{};
  dlmap_error err{};
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(out.legacy->dl_tensor.data, on0->dl_tensor.data);
  EXPECT_EQ(fake_gpu_get_stats()->events_recorded, before.events_recorded);
  EXPECT_EQ(fake_gpu_get_stats()->waits, before.waits);
  EXPECT_EQ(fake_gpu_get_stats()->syncs, before.syncs);
  out.legacy->deleter(out.legacy);
  fake_gpu_stream_destroy(producer);
  on0->deleter(on0);
}

// An empty pinned array (NULL data) exported to the device: no pointer to map, so no zero-copy view; an empty copy.
TEST_F(FakeTransfer, AnEmptyPinnedArrayToTheDeviceIsAnEmptyCopy) {
  const std::vector<int64_t> shape = {0};
  dlmap_array pinned = HostArray(nullptr, shape, {});
  pinned.device_type = DLMAP_DEVICE_CUDAHOST;
  const dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  dlmap_exported out{};
  dlmap_error err{};
  ASSERT_EQ(dlmap_export(&pinned, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(static_cast<int32_t>(out.legacy->dl_tensor.device.device_type), DLMAP_DEVICE_CUDA);
  EXPECT_EQ(out.legacy->dl_tensor.shape[0], 0);
  out.legacy->deleter(out.legacy);
}

// A host copy into pinned memory whose allocation fails: the host would copy (no runtime copies), but the memory is
// the pinned runtime's, so the failure is runtime_copy_failed naming the pinned destination.
TEST_F(FakeTransfer, AFailedPinnedAllocationForAHostCopyIsRuntimeCopyFailed) {
  std::vector<float> data = Values(4);
  const std::vector<int64_t> shape = {4};
  const dlmap_array host = HostArray(data.data(), shape, {});
  const dlmap_export_request to_pinned = ExportTo(DLMAP_DEVICE_CUDAHOST);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_fail_next("malloc", FAKE_OUT_OF_MEMORY);
  dlmap_exported out{};
  dlmap_error err{};
  EXPECT_EQ(dlmap_export(&host, &to_pinned, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_NE(std::string(err.message).find("being copied to (kDLCUDAHost, 0)"), std::string::npos) << err.message;
  EXPECT_NE(std::string(err.message).find("the cuda runtime says"), std::string::npos) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
}

// Pinned memory exported to device 1 is a zero-copy view of its device address; where device 1 cannot be entered to
// ask the runtime (its primary context refused once), the export copies instead: the bytes arrive, nothing leaks.
TEST_F(FakeTransfer, APinnedViewWhoseDeviceCannotBeEnteredIsCopiedInstead) {
  std::vector<float> data = Values(4);
  const std::vector<int64_t> shape = {4};
  dlmap_array pinned = PinnedArray(data, shape);
  const dlmap_export_request to_device = ExportTo(DLMAP_DEVICE_CUDA, 1);
  dlmap_exported view{};
  dlmap_error err{};
  ASSERT_EQ(dlmap_export(&pinned, &to_device, &view, &err), DLMAP_OK) << err.message;  // control: a view
  void *mapped = view.legacy->dl_tensor.data;
  EXPECT_NE(fake_gpu_memory_type(mapped, 16, nullptr), FAKE_DEVICE) << "a view, not a device copy";
  view.legacy->deleter(view.legacy);

  const fake_gpu_stats before = *fake_gpu_get_stats();
  fake_gpu_fail_next("retain", FAKE_INVALID_CONTEXT);
  dlmap_exported copy{};
  ASSERT_EQ(dlmap_export(&pinned, &to_device, &copy, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_armed(), 0) << "the view's device was not entered";
  const DLTensor &t = copy.legacy->dl_tensor;
  EXPECT_EQ(t.device.device_id, 1);
  EXPECT_NE(t.data, mapped);
  EXPECT_EQ(fake_gpu_memory_type(t.data, 16, nullptr), FAKE_DEVICE);
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_calls - before.memcpy_calls, 1);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_values<float>(t.data, 4), data);
  copy.legacy->deleter(copy.legacy);
  EXPECT_EQ(fake_gpu_get_stats()->live, before.live);
}

// A memory type the spec's runtime table does not list (a newer runtime's) names no kind: the copy keeps the
// producer's claim (pinned host memory here) and the bytes arrive on the device.
TEST_F(FakeTransfer, AnUnlistedMemoryTypeLeavesTheCopyTheProducersClaim) {
  std::vector<float> data = Values(4);
  const std::vector<int64_t> shape = {4};
  constexpr int kUnlistedType = 9;  // none of fake_cuda.yaml's memory types
  ASSERT_EQ(fake_gpu_report(data.data(), data.size() * sizeof(float), kUnlistedType, 0), 0);
  dlmap_array claimed = HostArray(data.data(), shape, {});
  claimed.device_type = DLMAP_DEVICE_CUDAHOST;
  dlmap_export_request to_device = ExportTo(DLMAP_DEVICE_CUDA);
  to_device.copy = DLMAP_COPY_ALWAYS;
  dlmap_exported out{};
  dlmap_error err{};
  ASSERT_EQ(dlmap_export(&claimed, &to_device, &out, &err), DLMAP_OK) << err.message;
  const DLTensor &t = out.legacy->dl_tensor;
  EXPECT_EQ(fake_gpu_memory_type(t.data, 16, nullptr), FAKE_DEVICE);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_values<float>(t.data, 4), data);
  out.legacy->deleter(out.legacy);
}

}  // namespace
