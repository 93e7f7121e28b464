// dlmap GPU tests — over the fake runtime only (fake_gpu_runtime.c): the failures and regressions only a fake can
// stage (allocation, stream-wait and pointer-query failures, contexts and threads, stream handles no one created,
// pinned memory without a device address, copies that must stay on the device) and the calls behind each. Linked into
// fake_device_test beside device_test.cc's exchanges.
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fake_too_new_start_attempts(void);  // tests/gpu/fake_gpu_old_driver.c
extern "C" int fakeCtxSetCurrent(void *context);      // the driver's cuCtxSetCurrent in the fake

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

class FakeRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    if (!status.available) GTEST_SKIP() << "the fake runtime did not load: " << status.reason;
  }
};

TEST_F(FakeRuntime, ProbeSeesItsDevicesOnce) {
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  EXPECT_EQ(status.device_count, 2);
  fake_gpu_reset(3);  // runtimes enumerate devices when they start: the count is the one seen then
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  EXPECT_EQ(status.device_count, 2);
  fake_gpu_reset(2);
}

TEST_F(FakeRuntime, AllocationFailureIsRuntimeCopyFailedAndLeaksNothing) {
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  dlmap_array host = HostArray(data.data(), shape, {});
  static int released;
  released = 0;
  host.owner = &released;
  host.release = [](void *) { released++; };
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_fail_next("malloc", FAKE_OUT_OF_MEMORY);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message, "Allocating the copy's memory failed for the tensor on (kDLCPU, 0) (shape [4], 16 bytes) "
                            "being copied to (kDLCUDA, 0): the cuda runtime says fake error 2: out of memory (error 2). "
                            "The copy's memory was freed.");
  EXPECT_STREQ(dlmap_error_kind_name(err.kind), "RuntimeError");
  EXPECT_EQ(released, 0) << "on error the caller keeps its owner";
  EXPECT_EQ(fake_gpu_get_stats()->live, live);

  fake_gpu_fail_next("memcpy", 1);
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message, "Copying the data failed for the tensor on (kDLCPU, 0) (shape [4], 16 bytes) being copied "
                            "to (kDLCUDA, 0): the cuda runtime says fake error 1: invalid value (error 1). The copy's "
                            "memory was freed.");
  EXPECT_EQ(fake_gpu_get_stats()->live, live) << "the device copy is freed again";
  EXPECT_EQ(released, 0);
}

TEST_F(FakeRuntime, StreamWaitFailureIsStreamSyncFailed) {
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  void *device_memory = nullptr;
  {
    dlmap_array host = HostArray(data.data(), shape, {});
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
    request.has_stream = true;
    request.stream = -1;
    dlmap_exported out;
    dlmap_error err;
    ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
    device_memory = out.legacy->dl_tensor.data;
    dlmap_array array = host;
    array.data = device_memory;
    array.device_type = DLMAP_DEVICE_CUDA;
    dlmap_export_request view = dlmap_export_request_default();
    view.has_stream = true;
    view.stream = 0x12340;  // above the first page: a handle to the convention (issue 48), refused by the runtime
    fake_gpu_fail_next("wait", FAKE_INVALID_HANDLE);
    dlmap_exported unused;
    EXPECT_EQ(dlmap_export(&array, &view, &unused, &err), DLMAP_ERR_STREAM_SYNC_FAILED);
    EXPECT_STREQ(err.message, "Making stream 74560 wait for the producer failed on cuda: fakeStreamWaitEvent: fake "
                              "error 400: invalid resource handle (error 400)");
    EXPECT_EQ(fake_gpu_get_stats()->events_destroyed, fake_gpu_get_stats()->events_created);
    out.legacy->deleter(out.legacy);
  }
}

TEST_F(FakeRuntime, TheCallersDeviceIsRestoredAndEventsLiveOnTheProducersDevice) {
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request to1 = ExportTo(DLMAP_DEVICE_CUDA, 1);
  dlmap_exported on1;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &to1, &on1, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_current_device(), 0) << "dlmap switched to device 1 and back";
  EXPECT_EQ(fake_gpu_get_stats()->last_record_device, 1) << "the copy's event is recorded on the target device";

  dlmap_array array = host;
  array.data = on1.legacy->dl_tensor.data;
  array.device_type = DLMAP_DEVICE_CUDA;
  array.device_id = 1;
  void *producer = fake_gpu_stream_create();
  array.producer_stream = producer;
  dlmap_export_request view = dlmap_export_request_default();
  dlmap_exported out;
  ASSERT_EQ(dlmap_export(&array, &view, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->last_record_stream, producer);
  fake_gpu_stream_destroy(producer);
  EXPECT_EQ(fake_gpu_get_stats()->last_record_device, 1);
  EXPECT_EQ(fake_gpu_current_device(), 0);
  out.legacy->deleter(out.legacy);
  on1.legacy->deleter(on1.legacy);
}

TEST_F(FakeRuntime, ImportCopiesCompleteBeforeTheProducerIsReleased) {
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request request = VersionedExportTo(DLMAP_DEVICE_CUDA);
  dlmap_exported device;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &request, &device, &err), DLMAP_OK) << err.message;
  // Wrap the device tensor so its release records how many stream synchronisations came before it.
  static int syncs_at_release;
  static DLManagedTensorVersioned *inner;
  syncs_at_release = -1;
  inner = device.versioned;
  DLManagedTensorVersioned outer = *device.versioned;
  outer.deleter = [](DLManagedTensorVersioned *) {
    syncs_at_release = fake_gpu_get_stats()->syncs;
    inner->deleter(inner);
  };
  fake_gpu_reset(2);
  void *consumer = fake_gpu_stream_create();
  dlmap_import_request want = dlmap_import_request_default();
  want.copy = DLMAP_COPY_ALWAYS;
  want.consumer_stream = consumer;
  dlmap_imported copy;
  ASSERT_EQ(dlmap_import_versioned(&outer, &want, &copy, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(syncs_at_release, 1) << "the copy on the consumer's stream completed first";
  EXPECT_EQ(fake_gpu_get_stats()->last_sync_stream, consumer);
  dlmap_imported_release(&copy);
  fake_gpu_stream_destroy(consumer);
}

// ---- first contact with real GPUs (issue 18) and hostile inputs (issue 14): each of these failed before its fix --------

// Exports host data to (CUDA, id) as a legacy tensor; the caller calls its deleter.
DLManagedTensor *FakeDeviceCopy(const std::vector<float> &data, const std::vector<int64_t> &shape, int32_t id) {
  dlmap_array host = HostArray(const_cast<float *>(data.data()), shape, {});
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, id);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  return out.legacy;
}

dlmap_array DeviceArray(DLManagedTensor *tensor, int32_t id) {
  dlmap_array a = dlmap_array_default();
  a.data = tensor->dl_tensor.data;
  a.device_type = DLMAP_DEVICE_CUDA;
  a.device_id = id;
  a.dtype = kFloat32;
  a.ndim = tensor->dl_tensor.ndim;
  a.shape = tensor->dl_tensor.shape;
  return a;
}

// Defect 1: the spec lists a runtime that cannot start on this "driver" (35) before one that can. The backend must
// try it, give up on it, and serve with the next soname, not stay unavailable for the life of the process.
TEST(FakeLoader, ARuntimeThatCannotStartGivesWayToTheNextSoname) {
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  EXPECT_GE(fake_too_new_start_attempts(), 1) << "the first soname was not tried";
  EXPECT_TRUE(status.available) << status.reason;
  EXPECT_EQ(status.device_count, 2);
  EXPECT_STREQ(status.reason, "");
}

// Defect 2a: only InvalidValue means "not the runtime's memory"; a sticky error (700) is an error, not host memory
// (which would let a host copy read device memory).
TEST_F(FakeRuntime, AFailedPointerQueryIsAnErrorNotHostMemory) {
  std::vector<float> data = Values(6);
  DLManagedTensor *device = FakeDeviceCopy(data, {6}, 0);
  ASSERT_NE(device, nullptr);
  dlmap_array array = DeviceArray(device, 0);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CPU);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_fail_next("attributes", FAKE_ILLEGAL_ADDRESS);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message, "Copying the data failed for the tensor on (kDLCUDA, 0) (shape [6], 24 bytes) being copied "
                            "to (kDLCPU, 0): the cuda runtime says fake error 700: an illegal memory access was "
                            "encountered (error 700). The copy's memory was freed.");
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
  // InvalidValue still means plain host memory, for dlmap_memory_locate as before.
  fake_gpu_fail_next("attributes", FAKE_INVALID_VALUE);
  dlmap_memory_kind kind;
  ASSERT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CUDA, data.data(), &kind, nullptr, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(kind, DLMAP_MEMORY_HOST);
  device->deleter(device);
}

// Defect 2b: HIP describes device memory only on its own device. The query must run there, or device-1 memory
// becomes "host memory" and the copy direction (and a staged copy's host reads) go wrong.
TEST_F(FakeRuntime, PointersAreLocatedOnTheirOwnDevice) {
  std::vector<float> data = Values(12);
  DLManagedTensor *on1 = FakeDeviceCopy(data, {3, 4}, 1);
  ASSERT_NE(on1, nullptr);
  fake_gpu_reset(2);
  fake_gpu_attributes_on_own_device_only(1);
  dlmap_array array = DeviceArray(on1, 1);
  const std::vector<int64_t> strides = {1, 3};  // a transposed view: 2-D copies, device to host
  const std::vector<int64_t> shape = {4, 3};
  array.shape = shape.data();
  array.strides = strides.data();
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CPU);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  const fake_gpu_stats *s = fake_gpu_get_stats();
  EXPECT_GE(s->kinds[2], 1);
  EXPECT_EQ(s->kinds[2], s->memcpy_calls + s->memcpy_2d_calls)
      << "every copy device-to-host (not 'default' between two host ends)";
  EXPECT_EQ(s->kinds[4], 0);
  const float *values = static_cast<const float *>(out.legacy->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(values, values + 12), Expected(data.data(), shape, strides));
  EXPECT_EQ(fake_gpu_current_device(), 0);
  out.legacy->deleter(out.legacy);
  on1->deleter(on1);
}

// Defect 3: a copy from cuda:0 to dl_device=(kDLCUDA, 1) with stream None/1/2: the consumer's default stream is
// device 1's, so the wait runs with device 1 current (the event is recorded on device 0, where the copy runs).
TEST_F(FakeRuntime, DefaultStreamHandlesNameTheConsumersDevice) {
  std::vector<float> data = Values(8);
  DLManagedTensor *on0 = FakeDeviceCopy(data, {8}, 0);
  ASSERT_NE(on0, nullptr);
  dlmap_array array = DeviceArray(on0, 0);
  for (int64_t stream : {int64_t{0}, int64_t{1}, int64_t{2}}) {  // 0 here: None
    fake_gpu_reset(2);
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
    request.has_stream = stream != 0;
    request.stream = stream;
    dlmap_exported out;
    dlmap_error err;
    ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
    const fake_gpu_stats *s = fake_gpu_get_stats();
    // issue 64: device 0's copy waits for its memory, taken on the consumer's stream of device 1; then the consumer
    // waits for the copy
    EXPECT_EQ(s->waits, 2);
    EXPECT_EQ(s->last_wait_stream, reinterpret_cast<void *>(stream == 0 ? 1 : stream));
    EXPECT_EQ(s->last_wait_device, 1) << "stream " << stream << " was resolved on the producer's device";
    EXPECT_EQ(s->last_record_device, 0);
    EXPECT_EQ(fake_gpu_current_device(), 0);
    out.legacy->deleter(out.legacy);
  }
  on0->deleter(on0);
}

// Issue 63: the fake's two devices have disjoint, sealed memory, so an exchange between them is right only when the
// runtime's own copies move the bytes (a host pointer into either device's memory faults). Device 0 to device 1 and
// back, by export (dl_device) and by import (a consumer's device), plain and transposed: byte-exact, on the device
// asked for, and no copy through the host.
TEST_F(FakeRuntime, CrossDeviceExchangesAreByteExactThroughTheRuntimesCopies) {
  std::vector<float> data = Values(12);
  for (int32_t from : {0, 1}) {
    const int32_t to = 1 - from;
    DLManagedTensor *source = FakeDeviceCopy(data, {3, 4}, from);
    ASSERT_NE(source, nullptr);
    for (const std::vector<int64_t> &strides : {std::vector<int64_t>{4, 1}, std::vector<int64_t>{1, 3}}) {
      const std::vector<int64_t> shape = strides[0] == 4 ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{4, 3};
      const std::string what = "device " + std::to_string(from) + " to " + std::to_string(to) +
                               (strides[0] == 4 ? ", compact" : ", transposed");
      const std::vector<float> want = Expected(data.data(), shape, strides);
      dlmap_array array = DeviceArray(source, from);
      array.shape = shape.data();
      array.strides = strides.data();
      fake_gpu_reset(2);
      dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, to);
      dlmap_exported out;
      dlmap_error err;
      ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << what << ": " << err.message;
      int device = -1;
      EXPECT_EQ(fake_gpu_memory_type(out.legacy->dl_tensor.data, want.size() * 4, &device), FAKE_DEVICE) << what;
      EXPECT_EQ(device, to) << what;
      EXPECT_EQ(fake_gpu_values<float>(out.legacy->dl_tensor.data, want.size()), want) << what << ", export";
      EXPECT_EQ(fake_gpu_get_stats()->kinds[1] + fake_gpu_get_stats()->kinds[2], 0) << what << ": through the host";

      DLManagedTensor tensor = {};
      tensor.dl_tensor.data = source->dl_tensor.data;
      tensor.dl_tensor.device = {kDLCUDA, from};
      tensor.dl_tensor.ndim = 2;
      tensor.dl_tensor.dtype = kFloat32;
      tensor.dl_tensor.shape = const_cast<int64_t *>(shape.data());
      tensor.dl_tensor.strides = const_cast<int64_t *>(strides.data());
      dlmap_import_request want_import = dlmap_import_request_default();
      want_import.has_device = true;
      want_import.device_type = DLMAP_DEVICE_CUDA;
      want_import.device_id = to;
      want_import.layout = DLMAP_LAYOUT_ROW_MAJOR;
      dlmap_imported imported;
      ASSERT_EQ(dlmap_import_legacy(&tensor, &want_import, &imported, &err), DLMAP_OK) << what << ": " << err.message;
      ASSERT_EQ(fake_gpu_synchronize_all(), 0);
      const char *first = static_cast<const char *>(imported.tensor.data) + imported.tensor.byte_offset;
      EXPECT_EQ(fake_gpu_memory_type(first, want.size() * 4, &device), FAKE_DEVICE) << what;
      EXPECT_EQ(device, to) << what;
      EXPECT_EQ(fake_gpu_values<float>(first, want.size()), want) << what << ", import";
      dlmap_imported_release(&imported);
      out.legacy->deleter(out.legacy);
    }
    source->deleter(source);
  }
}

// Defect 3, zero-copy: pinned memory of device 0 handed to device 1 without a copy; None is device 1's stream.
TEST_F(FakeRuntime, APinnedViewOnAnotherDeviceWaitsOnThatDevicesStream) {
  std::vector<float> data = Values(8);
  std::vector<int64_t> shape = {8};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request to_pinned = ExportTo(DLMAP_DEVICE_CUDAHOST);
  dlmap_exported pinned;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &to_pinned, &pinned, &err), DLMAP_OK) << err.message;
  dlmap_array array = host;
  array.data = pinned.legacy->dl_tensor.data;
  array.device_type = DLMAP_DEVICE_CUDAHOST;
  fake_gpu_reset(2);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
  request.copy = DLMAP_COPY_NEVER;
  dlmap_exported view;
  ASSERT_EQ(dlmap_export(&array, &request, &view, &err), DLMAP_OK) << err.message;
  EXPECT_FALSE(view.copied);
  EXPECT_EQ(fake_gpu_get_stats()->waits, 1);
  EXPECT_EQ(fake_gpu_get_stats()->last_wait_stream, reinterpret_cast<void *>(1));
  EXPECT_EQ(fake_gpu_get_stats()->last_wait_device, 1) << "the legacy stream of the pinned memory's device waited";
  view.legacy->deleter(view.legacy);
  pinned.legacy->deleter(pinned.legacy);
}

// Defect 4: a thread that never used the runtime asks for a copy on device 1. dlmap must not "restore" device 0 with
// set_device, which initialises a context there (hundreds of MB on a real GPU), and leaves the thread as it was.
TEST_F(FakeRuntime, AThreadWithoutAContextGetsNoneOnADeviceItNeverUsed) {
  fake_gpu_reset(2);
  bool had_context_before = true, has_context_after = true;
  int32_t status = -1;
  std::thread worker([&] {
    had_context_before = fake_gpu_has_context() != 0;
    std::vector<float> data = Values(4);
    dlmap_array host = HostArray(data.data(), {4}, {});
    std::vector<int64_t> shape = {4};
    host.shape = shape.data();
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
    dlmap_exported out;
    dlmap_error err;
    status = dlmap_export(&host, &request, &out, &err);
    if (status == DLMAP_OK) out.legacy->deleter(out.legacy);  // frees on device 1 too
    has_context_after = fake_gpu_has_context() != 0;
  });
  worker.join();
  ASSERT_EQ(status, DLMAP_OK);
  EXPECT_FALSE(had_context_before);
  EXPECT_GE(fake_gpu_get_stats()->contexts_created[1], 1) << "the copy ran on device 1";
  EXPECT_EQ(fake_gpu_get_stats()->contexts_created[0], 0) << "a context was created on device 0, never used";
  EXPECT_FALSE(has_context_after) << "the thread had no context and keeps none";
}

// Issue 14: a symbol missing after dlopen closes the library again (tests/gpu/fake_missing_symbol_test.cc).

// Issue 14: from_dlpack(x, stream=S, copy=True): the consumer's stream argument as the runtime's handle, and the
// import's copy on it.
TEST_F(FakeRuntime, ImportCopiesRunOnTheConsumersStream) {
  void *handle = reinterpret_cast<void *>(0x5);
  dlmap_error err;
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, false, 0, &handle, &err), DLMAP_OK);
  EXPECT_EQ(handle, reinterpret_cast<void *>(1)) << "None: the legacy default stream (cudaStreamLegacy)";
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, 1, &handle, &err), DLMAP_OK);
  EXPECT_EQ(handle, reinterpret_cast<void *>(1));
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, 2, &handle, &err), DLMAP_OK);
  EXPECT_EQ(handle, reinterpret_cast<void *>(2)) << "the per-thread default stream (cudaStreamPerThread)";
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, 0x7f00, &handle, &err), DLMAP_OK);
  EXPECT_EQ(handle, reinterpret_cast<void *>(0x7f00)) << "a stream handle is the pointer";
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, -1, &handle, &err), DLMAP_OK);
  EXPECT_EQ(handle, nullptr) << "no synchronisation: the default stream";
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_ROCM, true, 0, &handle, &err), DLMAP_OK);
  EXPECT_EQ(handle, nullptr) << "ROCm's 0: the null stream";
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CPU, false, 0, &handle, &err), DLMAP_OK);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, 0, &handle, &err), DLMAP_ERR_STREAM_INVALID);
  EXPECT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CPU, true, 5, &handle, &err), DLMAP_ERR_STREAM_INVALID);

  std::vector<float> data = Values(5);
  void *made = fake_gpu_stream_create();
  for (int64_t stream : {int64_t{2}, static_cast<int64_t>(reinterpret_cast<intptr_t>(made))}) {
    DLManagedTensor *device = FakeDeviceCopy(data, {5}, 0);
    ASSERT_NE(device, nullptr);
    ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, stream, &handle, &err), DLMAP_OK);
    fake_gpu_reset(2);
    dlmap_import_request want = dlmap_import_request_default();
    want.copy = DLMAP_COPY_ALWAYS;
    want.consumer_stream = handle;
    dlmap_imported copy;
    ASSERT_EQ(dlmap_import_legacy(device, &want, &copy, &err), DLMAP_OK) << err.message;
    EXPECT_EQ(fake_gpu_get_stats()->last_memcpy_stream, reinterpret_cast<void *>(stream));
    EXPECT_EQ(fake_gpu_get_stats()->last_sync_stream, reinterpret_cast<void *>(stream));
    dlmap_imported_release(&copy);
  }
  fake_gpu_stream_destroy(made);
}

// Issue 14: when the consumer's wait fails after the copy was enqueued, the destination is freed only once the copy
// ran (deferred streams: the copy really is in flight when the wait fails).
TEST_F(FakeRuntime, AFailedFinishFreesNothingACopyStillUses) {
  std::vector<float> data = Values(16);
  dlmap_array host = HostArray(data.data(), {16}, {});
  std::vector<int64_t> shape = {16};
  host.shape = shape.data();
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  // None: the consumer's legacy stream waits for the copy, which runs on the per-thread one (a handle's stream would
  // run the copy itself, with no wait to fail).
  fake_gpu_set_deferred(1, 7);
  fake_gpu_fail_next("wait", FAKE_INVALID_HANDLE);
  const int live = fake_gpu_get_stats()->live;
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_ERR_STREAM_SYNC_FAILED);
  EXPECT_EQ(fake_gpu_pending(), 0) << "the caller owns its host data again while a copy still reads it";
  EXPECT_EQ(fake_gpu_get_stats()->freed_in_flight, 0) << "the destination was freed under a queued copy";
  fake_gpu_set_deferred(0, 0); // runs the destination's stream-ordered free, queued after the copy
  EXPECT_EQ(fake_gpu_get_stats()->freed_accesses, 0) << "the destination was freed before the copy ran";
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
}

TEST_F(FakeRuntime, AFailedImportSyncReleasesNothingACopyStillUses) {
  std::vector<float> data = Values(16);
  DLManagedTensor *device = FakeDeviceCopy(data, {16}, 0);
  ASSERT_NE(device, nullptr);
  static DLManagedTensor *inner;
  static int pending_at_release;
  inner = device;
  pending_at_release = -1;
  DLManagedTensor outer = *device;
  outer.deleter = [](DLManagedTensor *) {
    pending_at_release = fake_gpu_pending();
    inner->deleter(inner);
  };
  fake_gpu_set_deferred(1, 11);
  fake_gpu_fail_next("sync", FAKE_ILLEGAL_ADDRESS);
  void *consumer = fake_gpu_stream_create();
  dlmap_import_request want = dlmap_import_request_default();
  want.copy = DLMAP_COPY_ALWAYS;
  want.consumer_stream = consumer;
  dlmap_imported copy;
  dlmap_error err;
  EXPECT_EQ(dlmap_import_legacy(&outer, &want, &copy, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message, "Waiting for the copy failed for the tensor on (kDLCUDA, 0) (shape [16], 64 bytes) being "
                            "copied to (kDLCUDA, 0): the cuda runtime says fake error 700: an illegal memory access "
                            "was encountered (error 700). The copy's memory was freed.");
  EXPECT_EQ(pending_at_release, 0) << "the producer's memory was released while the copy could still read it";
  EXPECT_EQ(fake_gpu_get_stats()->freed_in_flight, 0) << "the copy's destination was freed while in flight";
  fake_gpu_set_deferred(0, 0);
  fake_gpu_stream_destroy(consumer);
}

// ---- issue 24: a stricter fake (each of these failed on main before its fix) ---------------------------------------

// The fake's stream rule: a handle no one created names no stream (a real runtime would dereference it, and may crash).
// The spec's default-stream handles (what the kDLCUDA convention's 1 and 2 become) and created streams are streams; 3
// (a "handle" by the convention, python/check's old probe) is refused, and reaches the caller as the catalogue's
// error with nothing left behind.
TEST_F(FakeRuntime, StreamHandlesNoOneCreatedAreRefused) {
  std::vector<float> data = Values(4);
  DLManagedTensor *device = FakeDeviceCopy(data, {4}, 0);
  ASSERT_NE(device, nullptr);
  dlmap_array array = DeviceArray(device, 0);
  void *made = fake_gpu_stream_create();
  fake_gpu_reset(2);
  // 0x10000: above the first page, so only the runtime can tell it names no stream (3 is refused before it: issue 48).
  const int64_t invented = 0x10000;
  for (int64_t stream : {int64_t{1}, int64_t{2}, static_cast<int64_t>(reinterpret_cast<intptr_t>(made)), invented}) {
    dlmap_export_request request = dlmap_export_request_default();
    request.has_stream = true;
    request.stream = stream;
    dlmap_exported out;
    dlmap_error err;
    const int32_t status = dlmap_export(&array, &request, &out, &err);
    if (stream != invented) {
      EXPECT_EQ(status, DLMAP_OK) << "stream " << stream << ": " << err.message;
      if (status == DLMAP_OK) out.legacy->deleter(out.legacy);
    } else {
      EXPECT_EQ(status, DLMAP_ERR_STREAM_SYNC_FAILED) << "stream 0x10000 names no stream";
      EXPECT_STREQ(err.message, "Making stream 65536 wait for the producer failed on cuda: fakeStreamWaitEvent: fake "
                                "error 400: invalid resource handle (error 400)");
    }
  }
  EXPECT_EQ(fake_gpu_get_stats()->invalid_streams, 1);
  EXPECT_EQ(fake_gpu_get_stats()->waits, 6) << "3 exports and their releases (issue 64: the producer waits)";
  EXPECT_EQ(fake_gpu_get_stats()->events_destroyed, fake_gpu_get_stats()->events_created);
  fake_gpu_stream_destroy(made);
  device->deleter(device);
}

// Defect 5: pinned memory whose pointer attributes give no device address ("cannot be accessed directly by the current
// device") is not handed to the device at its host address: copy=False is refused with the catalogue's error, and
// otherwise the import copies into device memory.
TEST_F(FakeRuntime, PinnedMemoryWithoutADeviceAddressIsCopied) {
  std::vector<float> data = Values(6);
  std::vector<int64_t> shape = {6};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request to_pinned = VersionedExportTo(DLMAP_DEVICE_CUDAHOST);
  dlmap_exported pinned;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &to_pinned, &pinned, &err), DLMAP_OK) << err.message;
  // Imports take ownership: each gets a copy of the tensor whose deleter leaves the pinned memory alone.
  DLManagedTensorVersioned borrowed = *pinned.versioned;
  borrowed.deleter = [](DLManagedTensorVersioned *) {};
  fake_gpu_pinned_unmapped(1);
  dlmap_import_request want = dlmap_import_request_default();
  want.has_device = true;
  want.device_type = DLMAP_DEVICE_CUDA;
  want.copy = DLMAP_COPY_NEVER;
  dlmap_imported view;
  DLManagedTensorVersioned first = borrowed;
  const int32_t refused = dlmap_import_versioned(&first, &want, &view, &err);
  EXPECT_EQ(refused, DLMAP_ERR_IMPORT_COPY_TO_DEVICE_FORBIDDEN);
  if (refused == DLMAP_OK) {
    EXPECT_NE(view.tensor.data, pinned.versioned->dl_tensor.data) << "a GPU view of a host address";
    dlmap_imported_release(&view);
  }
  want.copy = DLMAP_COPY_IF_NEEDED;
  dlmap_imported copy;
  DLManagedTensorVersioned second = borrowed;
  ASSERT_EQ(dlmap_import_versioned(&second, &want, &copy, &err), DLMAP_OK) << err.message;
  EXPECT_TRUE(copy.copied);
  EXPECT_NE(copy.tensor.data, pinned.versioned->dl_tensor.data) << "a GPU view of a host address";
  dlmap_memory_kind kind;
  ASSERT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CUDA, copy.tensor.data, &kind, nullptr, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(kind, DLMAP_MEMORY_DEVICE);
  dlmap_imported_release(&copy);
  fake_gpu_pinned_unmapped(0);
  pinned.versioned->deleter(pinned.versioned);
}

// Defect 6a: a thread without a context copies to device 1. It keeps no context, and the runtime's per-thread device
// is still the one it had: set_device(1) left cudaGetDevice answering 1 once the context was unset.
TEST_F(FakeRuntime, AThreadWithoutAContextKeepsItsRuntimeDevice) {
  int device_before = -1, device_after = -1;
  bool has_context_after = true;
  int32_t status = -1;
  std::thread worker([&] {
    device_before = fake_gpu_current_device();
    std::vector<float> data = Values(4);
    std::vector<int64_t> shape = {4};
    dlmap_array host = HostArray(data.data(), shape, {});
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
    dlmap_exported out;
    dlmap_error err;
    status = dlmap_export(&host, &request, &out, &err);
    if (status == DLMAP_OK) out.legacy->deleter(out.legacy);
    has_context_after = fake_gpu_has_context() != 0;
    device_after = fake_gpu_current_device();
  });
  worker.join();
  ASSERT_EQ(status, DLMAP_OK);
  EXPECT_EQ(device_before, 0);
  EXPECT_EQ(device_after, device_before) << "cudaGetDevice answers the device dlmap switched to";
  EXPECT_FALSE(has_context_after);
  EXPECT_EQ(fake_gpu_get_stats()->contexts_created[0], 0) << "a context was created on device 0, never used";
}

// Defect 6b: a thread whose current context is a non-primary one (cuCtxCreate's) gets that context back after dlmap
// worked on another device, not the device's primary context.
TEST_F(FakeRuntime, ANonPrimaryContextIsGivenBack) {
  void *own = fake_gpu_context_create(0);
  ASSERT_NE(own, nullptr);
  void *after = nullptr;
  int32_t status = -1;
  std::thread worker([&] {
    if (fakeCtxSetCurrent(own) != 0) return;
    std::vector<float> data = Values(4);
    std::vector<int64_t> shape = {4};
    dlmap_array host = HostArray(data.data(), shape, {});
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
    dlmap_exported out;
    dlmap_error err;
    status = dlmap_export(&host, &request, &out, &err);
    if (status == DLMAP_OK) out.legacy->deleter(out.legacy);
    after = fake_gpu_current_context();
  });
  worker.join();
  ASSERT_EQ(status, DLMAP_OK);
  EXPECT_EQ(after, own) << "the caller's context was replaced";
}

// Item 7: the runtime's last error belongs to the framework until dlmap's own runtime call overwrites it. A failure of
// the driver's (switching to the memory's device in a deleter) sets none, so dlmap must not clear the one the
// framework has not read yet; the memory is still freed.
TEST_F(FakeRuntime, ADriverFailureLeavesTheFrameworksLastErrorAlone) {
  std::vector<float> data = Values(4);
  DLManagedTensor *on1 = FakeDeviceCopy(data, {4}, 1);
  ASSERT_NE(on1, nullptr);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_set_last_error(FAKE_INVALID_VALUE);  // a launch of the framework's failed; it has not checked yet
  fake_gpu_fail_next("retain", FAKE_INVALID_DEVICE);
  on1->deleter(on1);
  EXPECT_EQ(fake_gpu_peek_last_error(), FAKE_INVALID_VALUE) << "dlmap cleared an error it did not cause";
  EXPECT_EQ(fake_gpu_get_stats()->live, live - 1);
  fake_gpu_set_last_error(0);
}

// Item 7: a copy from host memory into device memory does not run on the legacy default stream (it synchronises with
// every blocking stream of the device, and may not be used while a stream is captured into a graph), nor does the
// staged path's first synchronisation: the consumer's stream where it names one, else the per-thread default stream.
TEST_F(FakeRuntime, HostToDeviceCopiesAvoidTheLegacyDefaultStream) {
  std::vector<float> data = Values(12);
  void *consumer = fake_gpu_stream_create();
  const std::vector<std::vector<int64_t>> strides = {{}, {-4, -1}};  // one copy; staged through the host
  for (const auto &st : strides) {
    const int64_t made = static_cast<int64_t>(reinterpret_cast<intptr_t>(consumer));
    for (int64_t stream : {int64_t{-1}, int64_t{0}, int64_t{1}, made}) {
      fake_gpu_reset(2);
      std::vector<int64_t> shape = {3, 4};
      dlmap_array host = HostArray(data.data(), shape, st, st.empty() ? 0 : 11 * sizeof(float));
      dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
      request.has_stream = stream != 0;  // 0 here: None
      request.stream = stream;
      dlmap_exported out;
      dlmap_error err;
      ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
      EXPECT_GE(fake_gpu_get_stats()->memcpy_calls, 1);
      EXPECT_EQ(fake_gpu_get_stats()->legacy_copies, 0) << "stream " << stream << (st.empty() ? "" : ", staged");
      EXPECT_EQ(fake_gpu_get_stats()->legacy_syncs, 0) << "stream " << stream << (st.empty() ? "" : ", staged");
      if (stream > 2) {
        EXPECT_EQ(fake_gpu_get_stats()->last_memcpy_stream, consumer) << "the consumer's stream";
      }
      out.legacy->deleter(out.legacy);
    }
  }
  // An import of host memory into device memory, with no stream and with the legacy one.
  for (void *handle : {static_cast<void *>(nullptr), reinterpret_cast<void *>(1)}) {
    int64_t shape[1] = {12};
    DLManagedTensorVersioned tensor = {};
    tensor.version = {1, 3};
    tensor.dl_tensor.data = data.data();
    tensor.dl_tensor.device = {kDLCPU, 0};
    tensor.dl_tensor.ndim = 1;
    tensor.dl_tensor.dtype = kFloat32;
    tensor.dl_tensor.shape = shape;
    fake_gpu_reset(2);
    dlmap_import_request want = dlmap_import_request_default();
    want.has_device = true;
    want.device_type = DLMAP_DEVICE_CUDA;
    want.consumer_stream = handle;
    dlmap_imported imported;
    dlmap_error err;
    ASSERT_EQ(dlmap_import_versioned(&tensor, &want, &imported, &err), DLMAP_OK) << err.message;
    EXPECT_EQ(fake_gpu_get_stats()->legacy_copies, 0);
    EXPECT_EQ(fake_gpu_get_stats()->legacy_syncs, 0);
    dlmap_imported_release(&imported);
  }
  fake_gpu_stream_destroy(consumer);
}

// Item 7: a broadcast of one element whose bytes are all alike (dlmap.empty's zero source: every stride 0) is filled on
// the device by the runtime's memset, on the stream a host-to-device copy would use: no host buffer, no upload. A
// broadcast of any other element, or a partial one, is still copied, element by element as the source holds it.
TEST_F(FakeRuntime, ABroadcastOfOneRepeatedByteIsFilledOnTheDevice) {
  struct Case {
    DLDataType dtype;
    std::vector<unsigned char> element;
    std::vector<int64_t> strides;
    bool fill;
  };
  const DLDataType kInt8 = {kDLInt, 8, 1}, kUInt16 = {kDLUInt, 16, 1};
  const std::vector<Case> cases = {
      {kFloat32, {0, 0, 0, 0}, {0, 0}, true},           // dlmap.empty
      {kInt8, {7}, {0, 0}, true},                       // one byte, not zero
      {kUInt16, {0xAB, 0xAB}, {0, 0}, true},            // alike bytes
      {kFloat32, {0, 0, 0x80, 0x3F}, {0, 0}, false},    // 1.0f: bytes differ
      {kInt8, {5, 6, 7, 8}, {0, 1}, false},             // a partial broadcast: elements differ
  };
  for (int64_t stream : {int64_t{0}, int64_t{1}}) {
    for (const Case &c : cases) {
      fake_gpu_reset(2);
      const int64_t shape[2] = {3, 4};
      dlmap_array host = dlmap_array_default();
      host.data = const_cast<unsigned char *>(c.element.data());
      host.device_type = DLMAP_DEVICE_CPU;
      host.dtype = c.dtype;
      host.ndim = 2;
      host.shape = shape;
      host.strides = c.strides.data();
      dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
      request.has_stream = stream != 0;  // 0 here: None
      request.stream = stream;
      request.copy = DLMAP_COPY_ALWAYS;
      dlmap_exported out;
      dlmap_error err;
      ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
      ASSERT_EQ(fake_gpu_synchronize_all(), 0);
      const fake_gpu_stats *stats = fake_gpu_get_stats();
      const std::string what = "case " + std::to_string(&c - cases.data()) + ", stream " + std::to_string(stream);
      if (c.fill) {
        EXPECT_EQ(stats->kinds[1], 0) << what << ": uploaded from the host";
        EXPECT_EQ(stats->memcpy_calls + stats->memcpy_2d_calls, 0) << what;
        EXPECT_EQ(stats->memset_calls, 1) << what;
      } else {
        EXPECT_EQ(stats->memset_calls, 0) << what;
      }
      EXPECT_EQ(stats->legacy_copies, 0) << what << ": on the legacy default stream";
      EXPECT_EQ(stats->legacy_syncs, 0) << what;
      const size_t element_bytes = c.dtype.bits / 8;
      const std::vector<unsigned char> bytes = fake_gpu_values(out.legacy->dl_tensor.data, 12 * element_bytes);
      ASSERT_EQ(bytes.size(), 12 * element_bytes) << what;
      for (int64_t i = 0; i < 12; i++) {
        const int64_t at = (i / 4) * c.strides[0] + (i % 4) * c.strides[1];  // the source element, in elements
        for (size_t b = 0; b < element_bytes; b++) {
          ASSERT_EQ(bytes[i * element_bytes + b], c.element[at * element_bytes + b]) << what << ", element " << i;
        }
      }
      out.legacy->deleter(out.legacy);
    }
  }
  // On the consumer's stream where it names one; a failed memset is the runtime's error and frees the destination.
  void *consumer = fake_gpu_stream_create();
  const float zero = 0.0f;
  const std::vector<int64_t> shape = {3, 4}, broadcast = {0, 0};
  dlmap_array host = HostArray(const_cast<float *>(&zero), shape, broadcast);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  request.has_stream = true;
  request.stream = static_cast<int64_t>(reinterpret_cast<intptr_t>(consumer));
  fake_gpu_reset(2);
  fake_gpu_set_deferred(1, 3);  // the fill must still be queued when the consumer is handed the tensor
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_pending(), 1) << "one memset queued on the consumer's stream, nothing waited for it";
  EXPECT_EQ(fake_gpu_get_stats()->waits + fake_gpu_get_stats()->syncs, 0);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  fake_gpu_set_deferred(0, 0);
  out.legacy->deleter(out.legacy);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_fail_next("memset", FAKE_INVALID_VALUE);
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message, "Copying the data failed for the tensor on (kDLCPU, 0) (shape [3, 4], 48 bytes) being "
                            "copied to (kDLCUDA, 0): the cuda runtime says fake error 1: invalid value (error 1). The "
                            "copy's memory was freed.");
  EXPECT_EQ(fake_gpu_get_stats()->live, live) << "the destination is freed again";
  fake_gpu_stream_destroy(consumer);
}

// Item 7: a strided copy between device memories of more than 64 slices stays on the device: 2-D copies whose rows
// run along the longest dimension a pitch can describe (a transpose: one copy per column), not device → host → device.
// This is the path where the strided-copy kernels cannot run (kernel_dispatch_test covers them): every launch fails.
TEST_F(FakeRuntime, ManySliceDeviceCopiesStayOnTheDevice) {
  struct Case {
    std::vector<int64_t> shape, strides;
    int most_copies;
  };
  const std::vector<Case> cases = {
      {{100, 80}, {1, 100}, 80},      // a transpose of 8000 elements: 80 or 100 slices whichever way
      {{70, 5, 3}, {3, 210, 1}, 5},   // rows of 3 elements; 70 slices one way, 5 the other
      {{2, 90, 2}, {1, 4, 2}, 4},     // innermost a pitch of 2 elements over the longest dimension
      {{9, 9, 9}, {1, 100, 10}, 0},   // 81 copies of 9 rows: more calls than a round trip through the host is worth
  };
  for (const Case &c : cases) {
    int64_t count = 1;
    for (int64_t n : c.shape) count *= n;
    int64_t extent = 1;
    for (size_t d = 0; d < c.shape.size(); d++) extent += (c.shape[d] - 1) * c.strides[d];
    std::vector<float> data = Values(static_cast<size_t>(extent));
    DLManagedTensor *device = FakeDeviceCopy(data, {extent}, 0);
    ASSERT_NE(device, nullptr);
    fake_gpu_reset(2);
    fake_gpu_kernels_refuse_launches(1);
    dlmap_array view = DeviceArray(device, 0);
    view.ndim = static_cast<int32_t>(c.shape.size());
    view.shape = c.shape.data();
    view.strides = c.strides.data();
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
    request.copy = DLMAP_COPY_ALWAYS;
    dlmap_exported out;
    dlmap_error err;
    ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << err.message;
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    const fake_gpu_stats *stats = fake_gpu_get_stats();
    const std::string what = "case " + std::to_string(&c - cases.data());
    if (c.most_copies > 0) {
      EXPECT_EQ(stats->kinds[2] + stats->kinds[1], 0) << what << ": through the host";
      EXPECT_GE(stats->memcpy_2d_calls, 1) << what;
      EXPECT_LE(stats->memcpy_2d_calls, c.most_copies) << what;
    } else {
      EXPECT_EQ(stats->memcpy_2d_calls, 0) << what;
      EXPECT_EQ(stats->kinds[2], 1) << what << ": staged";
    }
    EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 0) << what;
    EXPECT_EQ(fake_gpu_values<float>(out.legacy->dl_tensor.data, count), Expected(data.data(), c.shape, c.strides))
        << what;
    out.legacy->deleter(out.legacy);
    device->deleter(device);
  }
  fake_gpu_kernels_refuse_launches(0);
}

TEST_F(FakeRuntime, NothingLeaks) {
  const int live = fake_gpu_get_stats()->live;
  std::vector<float> data = Values(64);
  for (int32_t type : {DLMAP_DEVICE_CUDA, DLMAP_DEVICE_CUDAHOST, DLMAP_DEVICE_CUDAMANAGED}) {
    std::vector<int64_t> shape = {8, 8};
    dlmap_array host = HostArray(data.data(), shape, {});
    dlmap_export_request request = ExportTo(type);
    dlmap_exported out;
    dlmap_error err;
    ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
    EXPECT_EQ(fake_gpu_get_stats()->live, live + 1);
    out.legacy->deleter(out.legacy);
    EXPECT_EQ(fake_gpu_get_stats()->live, live);
  }
}

}  // namespace
