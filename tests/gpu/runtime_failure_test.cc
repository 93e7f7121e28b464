// dlmap GPU tests — runtime and driver calls that fail in the middle of an exchange, over the fake runtime
// (fake_gpu_fail_next / fake_gpu_fail_later): switching devices (the driver's contexts, and the runtime's way where the
// driver's query fails), the current-device query, the stream protocol's event, the staged and 2-D copies, the
// kernel path's buffer and download, and the frees. Each is the catalogue's error with the runtime's text, leaks no
// memory or event, leaves the caller its owner and its device, and clears only the runtime errors dlmap caused.
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fakeFree(void *ptr);  // the fake's cudaFree: gives back memory a refused free left allocated
extern "C" int fakeMalloc(void **ptr, size_t bytes);  // the fake's cudaMalloc, for a framework's allocator

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

class RuntimeFailure : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    ASSERT_TRUE(status.available) << status.reason;
    live_ = fake_gpu_get_stats()->live;
  }
  void TearDown() override {
    fake_gpu_kernels_refuse_launches(0);
    fake_gpu_reset(2);  // disarms what a failed expectation left armed
  }

  // Exports host data to (CUDA, id) as a legacy tensor; the caller calls its deleter.
  static DLManagedTensor *DeviceCopy(const std::vector<float> &data, int32_t id = 0) {
    std::vector<int64_t> shape = {static_cast<int64_t>(data.size())};
    dlmap_array host = HostArray(const_cast<float *>(data.data()), shape, {});
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, id);
    dlmap_exported out;
    dlmap_error err;
    EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
    return out.legacy;
  }

  // A strided view of a device tensor's memory.
  static dlmap_array View(DLManagedTensor *tensor, int32_t id, const std::vector<int64_t> &shape,
                          const std::vector<int64_t> &strides) {
    return DeviceArray(tensor->dl_tensor.data, id, shape, strides);
  }

  int live_ = 0;
};

// A host array whose owner counts its releases.
struct CountedHost {
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  int released = 0;
  dlmap_array array() {
    dlmap_array a = HostArray(data.data(), shape, {});
    a.owner = &released;
    a.release = [](void *owner) { ++*static_cast<int *>(owner); };
    return a;
  }
};

// ---- the current device ---------------------------------------------------------------------------------------------

// The driver refuses to make device 1's primary context current: backend_call_failed names cuCtxSetCurrent's
// stand-in with the driver's number only (the runtime's text does not describe the driver's enum), and the runtime's
// last error (the framework's, unread) is not touched: no runtime call failed.
TEST_F(RuntimeFailure, TheDriverRefusingTheTargetContextIsACopyFailureThatKeepsTheFrameworksError) {
  CountedHost host;
  dlmap_array array = host.array();
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
  void *context = fake_gpu_current_context();
  fake_gpu_set_last_error(FAKE_INVALID_HANDLE);
  fake_gpu_fail_next("set_current", FAKE_INVALID_CONTEXT);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message,
               "Allocating the copy's memory failed for the tensor on (kDLCPU, 0) (shape [4], 16 bytes) being copied to "
               "(kDLCUDA, 1): the cuda runtime says driver error 201. The copy's memory was freed.");
  EXPECT_EQ(fake_gpu_peek_last_error(), FAKE_INVALID_HANDLE) << "a driver failure cleared the framework's error";
  EXPECT_EQ(fake_gpu_current_context(), context) << "the thread's context was not given back";
  EXPECT_EQ(fake_gpu_get_stats()->live, live_);
  EXPECT_EQ(host.released, 0) << "on error the caller keeps its owner";
}

// The runtime cannot say which device is current: nothing is allocated or switched, and the failure (dlmap's) is
// cleared from the runtime's last error.
TEST_F(RuntimeFailure, TheCurrentDeviceQueryFailingStopsTheExportBeforeAnyAllocation) {
  CountedHost host;
  dlmap_array array = host.array();
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
  fake_gpu_fail_next("get_device", FAKE_INVALID_VALUE);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message,
               "Allocating the copy's memory failed for the tensor on (kDLCPU, 0) (shape [4], 16 bytes) being copied to "
               "(kDLCUDA, 1): the cuda runtime says fake error 1: invalid value (error 1). The copy's memory was freed.");
  EXPECT_EQ(fake_gpu_peek_last_error(), 0) << "dlmap's own failure was left as the runtime's last error";
  EXPECT_EQ(fake_gpu_get_stats()->allocations, 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live_);
  EXPECT_EQ(host.released, 0);
}

// Where the driver cannot report the thread's context, devices are switched the runtime's way (set_device) and the
// thread's device is set back the same way: the exchange still lands on device 1, byte-exact.
TEST_F(RuntimeFailure, WithoutTheDriversContextDevicesSwitchThroughTheRuntime) {
  std::vector<float> data = Values(4);
  fake_gpu_fail_next("get_current", FAKE_INVALID_CONTEXT);
  DLManagedTensor *on1 = DeviceCopy(data, 1);
  ASSERT_NE(on1, nullptr);
  int device = -1;
  EXPECT_EQ(fake_gpu_memory_type(on1->dl_tensor.data, 16, &device), FAKE_DEVICE);
  EXPECT_EQ(device, 1);
  EXPECT_EQ(fake_gpu_values<float>(on1->dl_tensor.data, 4), data);
  EXPECT_EQ(fake_gpu_get_stats()->set_device_calls, 2) << "to device 1 and back";
  EXPECT_EQ(fake_gpu_current_device(), 0);
  on1->deleter(on1);
}

// The same, with the runtime refusing the switch: set_device's failure is the error, cleared from the last error.
TEST_F(RuntimeFailure, TheRuntimeRefusingTheSwitchIsACopyFailure) {
  CountedHost host;
  dlmap_array array = host.array();
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
  fake_gpu_fail_next("get_current", FAKE_INVALID_CONTEXT);
  fake_gpu_fail_next("set_device", FAKE_INVALID_DEVICE);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message,
               "Allocating the copy's memory failed for the tensor on (kDLCPU, 0) (shape [4], 16 bytes) being copied to "
               "(kDLCUDA, 1): the cuda runtime says fake error 101: invalid device ordinal (error 101). The copy's memory "
               "was freed.");
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  EXPECT_EQ(fake_gpu_current_device(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live_);
  EXPECT_EQ(host.released, 0);
}

// ---- the stream protocol --------------------------------------------------------------------------------------------

// The event the consumer's stream would wait on cannot be made: stream_sync_failed with the entry point and the
// runtime's text; the copy is freed once its stream is done with it, and no event is left.
TEST_F(RuntimeFailure, AnEventTheRuntimeCannotMakeIsAStreamSyncFailure) {
  CountedHost host;
  dlmap_array array = host.array();
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  fake_gpu_fail_next("event_create", FAKE_OUT_OF_MEMORY);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_STREAM_SYNC_FAILED);
  EXPECT_STREQ(err.message,
               "Making stream 0 wait for the producer failed on cuda: fakeEventCreateWithFlags: fake error 2: out "
               "of memory (error 2)");
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->events_created, fake_gpu_get_stats()->events_destroyed);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live_);
  EXPECT_EQ(host.released, 0);
}

// ---- copies ---------------------------------------------------------------------------------------------------------

// 81 copies of 9 rows between device memories: staged through the host (fake_runtime_test's ManySlices case 3).
const std::vector<int64_t> kStagedShape = {9, 9, 9}, kStagedStrides = {1, 100, 10};
const int64_t kStagedExtent = 1 + 8 + 800 + 80;

struct StagedCase {
  const char *op;
  int skip;
  int code;
  const char *message;
};

TEST_F(RuntimeFailure, EachFailingStepOfAStagedCopyIsACopyFailureThatFreesTheCopy) {
  static const char kIllegalAddress[] =
      "Copying the data failed for the tensor on (kDLCUDA, 0) (shape [9, 9, 9], 2916 bytes) being copied to (kDLCUDA, "
      "0): the cuda runtime says fake error 700: an illegal memory access was encountered (error 700). The copy's "
      "memory was freed.";
  static const char kInvalidValue[] =
      "Copying the data failed for the tensor on (kDLCUDA, 0) (shape [9, 9, 9], 2916 bytes) being copied to (kDLCUDA, "
      "0): the cuda runtime says fake error 1: invalid value (error 1). The copy's memory was freed.";
  const std::vector<StagedCase> cases = {
      {"sync", 0, FAKE_ILLEGAL_ADDRESS, kIllegalAddress},  // the wait before the host reads the source
      {"memcpy", 0, FAKE_INVALID_VALUE, kInvalidValue},    // the source's download
      {"memcpy", 1, FAKE_INVALID_VALUE, kInvalidValue},    // the compacted upload
  };
  std::vector<float> data = Values(static_cast<size_t>(kStagedExtent));
  DLManagedTensor *device = DeviceCopy(data);
  ASSERT_NE(device, nullptr);
  for (const StagedCase &c : cases) {
    const std::string what = std::string(c.op) + " after " + std::to_string(c.skip);
    fake_gpu_reset(2);
    fake_gpu_kernels_refuse_launches(1);
    const int live = fake_gpu_get_stats()->live;
    dlmap_array view = View(device, 0, kStagedShape, kStagedStrides);
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
    request.copy = DLMAP_COPY_ALWAYS;
    fake_gpu_fail_later(c.op, c.skip, c.code);
    dlmap_exported out;
    dlmap_error err;
    EXPECT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED) << what;
    EXPECT_STREQ(err.message, c.message) << what;
    EXPECT_EQ(fake_gpu_peek_last_error(), 0) << what;
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    EXPECT_EQ(fake_gpu_get_stats()->live, live) << what << ": the copy's memory was not freed";
  }
  device->deleter(device);
}

// A strided device tensor copied to the host with no kernel: 81 slices are past the 2-D copies worth issuing, so the
// source comes down whole and is compacted straight into the destination.
TEST_F(RuntimeFailure, AStagedCopyToTheHostCompactsIntoTheDestination) {
  std::vector<float> data = Values(static_cast<size_t>(kStagedExtent));
  DLManagedTensor *device = DeviceCopy(data);
  ASSERT_NE(device, nullptr);
  fake_gpu_reset(2);
  fake_gpu_kernels_refuse_launches(1);
  dlmap_array view = View(device, 0, kStagedShape, kStagedStrides);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CPU);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 0);
  EXPECT_EQ(fake_gpu_get_stats()->kinds[2], 1) << "one download of the whole extent";
  const float *values = static_cast<const float *>(out.legacy->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(values, values + 729), Expected(data.data(), kStagedShape, kStagedStrides));
  out.legacy->deleter(out.legacy);
  device->deleter(device);
}

// A transposed device tensor to the host with no kernel goes as 2-D copies; the runtime refusing one is the error.
TEST_F(RuntimeFailure, ARefused2DCopyIsACopyFailure) {
  std::vector<float> data = Values(12);
  DLManagedTensor *device = DeviceCopy(data);
  ASSERT_NE(device, nullptr);
  fake_gpu_reset(2);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_kernels_refuse_launches(1);
  const std::vector<int64_t> shape = {4, 3}, strides = {1, 4};  // a transpose
  dlmap_array view = View(device, 0, shape, strides);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CPU);
  fake_gpu_fail_next("memcpy", FAKE_INVALID_VALUE);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message,
               "Copying the data failed for the tensor on (kDLCUDA, 0) (shape [4, 3], 48 bytes) being copied to (kDLCPU, "
               "0): the cuda runtime says fake error 1: invalid value (error 1). The copy's memory was freed.");
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 1);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live) << "the kernel path's buffer came back";
  device->deleter(device);
}

// The kernel path to the host needs a compact device buffer: without room for it, the 2-D copies serve instead.
TEST_F(RuntimeFailure, NoRoomForTheKernelsBufferFallsBackTo2DCopies) {
  std::vector<float> data = Values(12);
  DLManagedTensor *device = DeviceCopy(data);
  ASSERT_NE(device, nullptr);
  fake_gpu_reset(2);
  const int live = fake_gpu_get_stats()->live;
  const std::vector<int64_t> shape = {4, 3}, strides = {1, 4};  // a transpose
  dlmap_array view = View(device, 0, shape, strides);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CPU);
  fake_gpu_fail_next("malloc", FAKE_OUT_OF_MEMORY);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 0);
  EXPECT_GE(fake_gpu_get_stats()->memcpy_2d_calls, 1);
  const float *values = static_cast<const float *>(out.legacy->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(values, values + 12), Expected(data.data(), shape, strides));
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
  out.legacy->deleter(out.legacy);
  device->deleter(device);
}

// The kernel ran into the buffer, and its download fails: the error, and the buffer goes back.
TEST_F(RuntimeFailure, TheKernelBuffersDownloadFailingIsACopyFailure) {
  std::vector<float> data = Values(12);
  DLManagedTensor *device = DeviceCopy(data);
  ASSERT_NE(device, nullptr);
  fake_gpu_reset(2);
  const int live = fake_gpu_get_stats()->live;
  const std::vector<int64_t> shape = {4, 3}, strides = {1, 4};  // a transpose
  dlmap_array view = View(device, 0, shape, strides);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CPU);
  fake_gpu_fail_next("memcpy", FAKE_ILLEGAL_ADDRESS);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message,
               "Copying the data failed for the tensor on (kDLCUDA, 0) (shape [4, 3], 48 bytes) being copied to (kDLCPU, "
               "0): the cuda runtime says fake error 700: an illegal memory access was encountered (error 700). "
               "The copy's memory was freed.");
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 1);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
  device->deleter(device);
}

// ---- kernels ------------------------------------------------------------------------------------------------------

// dlmap_platform_kernels_load: a device the runtime does not have, or a thread whose device cannot be read, loads
// nothing (and leaves no runtime error of dlmap's); a thread that never used the device gets its primary context for
// the load and none afterwards.
TEST_F(RuntimeFailure, KernelsLoadOnADeviceTheRuntimeHasOnAThreadItCanRead) {
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, -1));
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 2)) << "the fake has devices 0 and 1";
  fake_gpu_fail_next("get_device", FAKE_INVALID_VALUE);
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0));
  EXPECT_EQ(fake_gpu_armed(), 0);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  bool loaded = false, context_after = true;
  std::thread fresh([&] {
    loaded = dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0);
    context_after = fake_gpu_has_context();
  });
  fresh.join();
  EXPECT_TRUE(loaded);
  EXPECT_FALSE(context_after) << "the thread kept the context made for the load";
}

// One device element broadcast (stride 0) into a device copy with no kernel: not a fill (a memset writes a byte
// pattern the host knows, and this element is device memory), but the 2-D copies of the element.
TEST_F(RuntimeFailure, ABroadcastDeviceElementIsCopiedNotFilled) {
  std::vector<float> data = Values(1);
  DLManagedTensor *device = DeviceCopy(data);
  ASSERT_NE(device, nullptr);
  fake_gpu_reset(2);
  fake_gpu_kernels_refuse_launches(1);
  const int live = fake_gpu_get_stats()->live;
  const std::vector<int64_t> shape = {8}, strides = {0};
  dlmap_array view = View(device, 0, shape, strides);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  request.copy = DLMAP_COPY_ALWAYS;
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << err.message;
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->memset_calls, 0);
  EXPECT_EQ(fake_gpu_values<float>(out.legacy->dl_tensor.data, 8), std::vector<float>(8, data[0]));
  out.legacy->deleter(out.legacy);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
  device->deleter(device);
}

// A runtime with no text for its error code: the message says "unknown error" with the code.
TEST_F(RuntimeFailure, AnErrorWithoutTextIsAnUnknownErrorWithItsCode) {
  CountedHost host;
  dlmap_array array = host.array();
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  fake_gpu_fail_next("memcpy", FAKE_NO_TEXT);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_RUNTIME_COPY_FAILED);
  EXPECT_STREQ(err.message,
               "Copying the data failed for the tensor on (kDLCPU, 0) (shape [4], 16 bytes) being copied to "
               "(kDLCUDA, 0): the cuda runtime says unknown error (error 998). The copy's memory was freed.");
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live_);
}

// The driver cannot retain the primary context of a thread that never used the device: no context, no kernels.
TEST_F(RuntimeFailure, KernelsDoNotLoadWhereThePrimaryContextCannotBeRetained) {
  bool loaded = true, context_after = true;
  std::thread fresh([&] {
    fake_gpu_fail_next("retain", FAKE_INVALID_DEVICE);
    loaded = dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0);
    context_after = fake_gpu_has_context();
  });
  fresh.join();
  EXPECT_FALSE(loaded);
  EXPECT_FALSE(context_after);
  EXPECT_EQ(fake_gpu_armed(), 0);
}

// Platforms outside the spec's table have no kernels and no PTX floor.
TEST_F(RuntimeFailure, APlatformOutsideTheTableHasNoKernels) {
  char text[256];
  dlmap_platform_driver(DLMAP_PLATFORM_COUNT, text, sizeof text);
  EXPECT_STREQ(text, "none: the spec gives this platform's kernels no PTX");
  dlmap_platform_kernels(DLMAP_PLATFORM_COUNT, text, sizeof text);
  EXPECT_STREQ(text, "none: the spec names no kernels for this platform");
}

// ---- frees ----------------------------------------------------------------------------------------------------------

// The kernel buffer's stream-ordered free is refused (a stream gone): it is freed synchronously instead.
TEST_F(RuntimeFailure, ARefusedStreamOrderedFreeFreesSynchronously) {
  std::vector<float> data = Values(12);
  DLManagedTensor *device = DeviceCopy(data);
  ASSERT_NE(device, nullptr);
  fake_gpu_reset(2);
  const int live = fake_gpu_get_stats()->live;
  const std::vector<int64_t> shape = {4, 3}, strides = {1, 4};  // a transpose
  dlmap_array view = View(device, 0, shape, strides);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CPU);
  fake_gpu_fail_next("free_async", FAKE_INVALID_HANDLE);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 1);
  EXPECT_EQ(fake_gpu_get_stats()->frees, 1) << "the synchronous free";
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0) << "the refused free's error was left as the runtime's last error";
  const float *values = static_cast<const float *>(out.legacy->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(values, values + 12), Expected(data.data(), shape, strides));
  out.legacy->deleter(out.legacy);
  device->deleter(device);
}

// A deleter whose frees the runtime refuses: nothing to report to (a deleter returns nothing), so dlmap's failure is
// cleared from the runtime's last error rather than left for the framework's next check.
TEST_F(RuntimeFailure, ARefusedFreeInADeleterLeavesNoRuntimeError) {
  std::vector<float> data = Values(4);
  DLManagedTensor *device = DeviceCopy(data);
  ASSERT_NE(device, nullptr);
  void *memory = device->dl_tensor.data;
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_fail_next("free_async", FAKE_INVALID_HANDLE);  // the stream-ordered free, then the synchronous one
  fake_gpu_fail_next("free", FAKE_ILLEGAL_ADDRESS);
  device->deleter(device);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live) << "the refused free freed";
  EXPECT_EQ(fakeFree(memory), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live - 1);
}

// A deleter on a thread where neither the driver's context nor the runtime's device can be read: the memory is still
// freed (a deleter cannot report), nothing is switched back, and dlmap's failure is not left as the last error.
TEST_F(RuntimeFailure, ADeleterThatCannotEnterTheDeviceStillFrees) {
  std::vector<float> data = Values(4);
  DLManagedTensor *device = DeviceCopy(data, 1);
  ASSERT_NE(device, nullptr);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  const int live = fake_gpu_get_stats()->live;
  const int set_device_calls = fake_gpu_get_stats()->set_device_calls;
  fake_gpu_fail_next("get_current", FAKE_INVALID_CONTEXT);
  fake_gpu_fail_next("get_device", FAKE_INVALID_VALUE);
  device->deleter(device);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_armed(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->live, live - 1);
  EXPECT_EQ(fake_gpu_get_stats()->set_device_calls, set_device_calls);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
}

// A framework's device allocator over the fake's cudaMalloc/cudaFree that counts its releases.
int g_framework_releases = 0;
void *FrameworkAllocate(void *, size_t bytes, int32_t, int32_t, void *) {
  void *p = nullptr;
  return fakeMalloc(&p, bytes) == 0 ? p : nullptr;
}
void FrameworkRelease(void *, void *pointer, size_t, int32_t, int32_t, void *) {
  g_framework_releases++;
  fakeFree(pointer);
}

// The same for a copy in a framework's memory (its device allocator): the framework's release still runs, once, and
// nothing is switched back.
TEST_F(RuntimeFailure, AFrameworkCopyReleasedWhereTheDeviceCannotBeEnteredIsStillReleased) {
  std::vector<float> data = Values(4);
  DLManagedTensor *device = DeviceCopy(data, 1);
  ASSERT_NE(device, nullptr);
  DLManagedTensor producer = *device;  // the same memory, with a deleter that touches no runtime
  producer.manager_ctx = nullptr;
  producer.deleter = [](DLManagedTensor *) {};
  static const dlmap_device_allocator framework = {FrameworkAllocate, FrameworkRelease, nullptr};
  dlmap_import_request want = dlmap_import_request_default();
  want.copy = DLMAP_COPY_ALWAYS;
  want.device_allocator = &framework;
  dlmap_imported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_import_legacy(&producer, &want, &out, &err), DLMAP_OK) << err.message;
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_values<float>(out.tensor.data, 4), data);
  g_framework_releases = 0;
  const int set_device_calls = fake_gpu_get_stats()->set_device_calls;
  fake_gpu_fail_next("get_current", FAKE_INVALID_CONTEXT);
  fake_gpu_fail_next("get_device", FAKE_INVALID_VALUE);
  dlmap_imported_release(&out);
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_armed(), 0);
  EXPECT_EQ(g_framework_releases, 1);
  EXPECT_EQ(fake_gpu_get_stats()->set_device_calls, set_device_calls);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  device->deleter(device);
  EXPECT_EQ(fake_gpu_get_stats()->live, live_);
}

}  // namespace
