// dlmap GPU tests — exchanges that need a device, through the public API only: round trips, every copy direction
// (compact, 2-D, several 2-D, staged), pinned and managed memory without copies, the stream protocol and its batch
// form, pointer queries. Built twice: device_test against the real runtimes (each platform skips, with the reason
// printed, where it has no device) and fake_device_test against the fake runtime of fake_gpu_runtime.c
// (DLMAP_FAKE_GPU), which also checks which runtime calls were made; there fake_runtime_test.cc adds the failures and
// regressions only the fake can stage.
#include <cstring>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"

#ifdef DLMAP_FAKE_GPU
#include "tests/gpu/fake_gpu_runtime.h"
#endif

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

struct Gpu {
  const char *name;
  dlmap_platform platform;
  int32_t device, pinned, managed;  // device types; managed -1 where the platform has none
};

void PrintTo(const Gpu &gpu, std::ostream *os) { *os << gpu.name; }

std::vector<Gpu> Gpus() {
#ifdef DLMAP_FAKE_GPU
  return {{"fake_cuda", DLMAP_PLATFORM_CUDA, DLMAP_DEVICE_CUDA, DLMAP_DEVICE_CUDAHOST, DLMAP_DEVICE_CUDAMANAGED}};
#else
  return {{"cuda", DLMAP_PLATFORM_CUDA, DLMAP_DEVICE_CUDA, DLMAP_DEVICE_CUDAHOST, DLMAP_DEVICE_CUDAMANAGED},
          {"rocm", DLMAP_PLATFORM_ROCM, DLMAP_DEVICE_ROCM, DLMAP_DEVICE_ROCMHOST, -1}};
#endif
}


class GpuExchange : public ::testing::TestWithParam<Gpu> {
 public:
  void SetUp() override {
#ifdef DLMAP_FAKE_GPU
    fake_gpu_reset(2);
#endif
    dlmap_platform_probe(GetParam().platform, &status_);
    if (!status_.available) {
      GTEST_SKIP() << "no " << GetParam().name << " device here (" << status_.reason
                   << "): run gpu/check.sh on a GPU machine";
    }
  }

  // Exports a host array to (type, id) as a versioned tensor (a copy).
  DLManagedTensorVersioned *ToDevice(const dlmap_array &host, int32_t type, int32_t id = 0) {
    dlmap_export_request request = VersionedExportTo(type, id);
    request.has_stream = type == GetParam().device || type == GetParam().managed;
    request.stream = GetParam().platform == DLMAP_PLATFORM_CUDA ? 1 : 0;  // the legacy default stream
    dlmap_exported out;
    dlmap_error err;
    EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
    if (out.versioned == nullptr) return nullptr;
    EXPECT_TRUE(out.copied);
    EXPECT_EQ(out.versioned->dl_tensor.device.device_type, type);
    EXPECT_EQ(out.versioned->dl_tensor.device.device_id, id);
    return out.versioned;
  }

  // Imports a tensor into host memory (a copy for device memory) and returns its floats; releases it.
  std::vector<float> ToHost(DLManagedTensorVersioned *tensor) {
    dlmap_import_request want = dlmap_import_request_default();
    want.has_device = true;
    want.device_type = DLMAP_DEVICE_CPU;
    want.layout = DLMAP_LAYOUT_ROW_MAJOR;
    dlmap_imported out;
    dlmap_error err;
    if (dlmap_import_versioned(tensor, &want, &out, &err) != DLMAP_OK) {
      ADD_FAILURE() << err.message;
      return {};
    }
    int64_t count = 1;
    for (int32_t d = 0; d < out.tensor.ndim; d++) count *= out.tensor.shape[d];
    const float *first = reinterpret_cast<const float *>(static_cast<const char *>(out.tensor.data) + out.tensor.byte_offset);
    std::vector<float> values(first, first + count);
    dlmap_imported_release(&out);
    return values;
  }

  // A device round trip of a host view: host → device (compact) → host.
  void RoundTrip(const std::vector<float> &buffer, const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &strides, uint64_t byte_offset = 0) {
    std::vector<float> data = buffer;
    const dlmap_array host = HostArray(data.data(), shape, strides, byte_offset);
    DLManagedTensorVersioned *device = ToDevice(host, GetParam().device);
    ASSERT_NE(device, nullptr);
    const float *first = reinterpret_cast<const float *>(reinterpret_cast<const char *>(data.data()) + byte_offset);
    std::vector<int64_t> st = strides;
    if (st.empty()) {
      st.assign(shape.size(), 1);
      for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
    }
    EXPECT_EQ(ToHost(device), Expected(first, shape, st));
  }

  dlmap_platform_status status_;
};

TEST_P(GpuExchange, RoundTripCompact) { RoundTrip(Values(24), {4, 6}, {}); }

TEST_P(GpuExchange, RoundTripRowsOfAWiderBuffer) {  // one 2-D copy
#ifdef DLMAP_FAKE_GPU
  RoundTrip(Values(32), {4, 6}, {8, 1});
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 1);
  EXPECT_EQ(fake_gpu_get_stats()->kinds[1], 1) << "one host-to-device copy";
#else
  RoundTrip(Values(32), {4, 6}, {8, 1});
#endif
}

TEST_P(GpuExchange, RoundTripTransposed) {  // one 2-D copy per slice across the longer side (rows down it)
  RoundTrip(Values(24), {6, 4}, {1, 6});
#ifdef DLMAP_FAKE_GPU
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 4);
#endif
}

TEST_P(GpuExchange, RoundTripThreeDimensionsWithGaps) {  // several 2-D copies
  RoundTrip(Values(2 * 40), {2, 3, 4}, {40, 10, 1});
#ifdef DLMAP_FAKE_GPU
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 2);
#endif
}

TEST_P(GpuExchange, RoundTripNegativeStrides) {  // staged through the host
  RoundTrip(Values(12), {3, 4}, {-4, -1}, 11 * sizeof(float));
#ifdef DLMAP_FAKE_GPU
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 0);
#endif
}

TEST_P(GpuExchange, RoundTripManySlices) {  // more 2-D copies than worth issuing from host memory: staged
  RoundTrip(Values(70 * 141), {70, 70}, {141, 2});
#ifdef DLMAP_FAKE_GPU
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 0);
  EXPECT_GE(fake_gpu_get_stats()->syncs, 1);
#endif
}

TEST_P(GpuExchange, RoundTripScalarAndEmpty) {
  RoundTrip(Values(1), {}, {});
  std::vector<float> none;
  std::vector<int64_t> shape = {0, 3};
  dlmap_array host = HostArray(none.data(), shape, {});
  DLManagedTensorVersioned *device = ToDevice(host, GetParam().device);
  ASSERT_NE(device, nullptr);
  EXPECT_TRUE(ToHost(device).empty());
}

TEST_P(GpuExchange, DeviceToDeviceCopyAlways) {
  std::vector<float> data = Values(12);
  std::vector<int64_t> shape = {12};
  DLManagedTensorVersioned *device = ToDevice(HostArray(data.data(), shape, {}), GetParam().device);
  ASSERT_NE(device, nullptr);
  void *original = device->dl_tensor.data;
  // from_dlpack(x, copy=True) on a device tensor: a new device buffer (JAX fails here; dlmap must not).
  dlmap_import_request want = dlmap_import_request_default();
  want.copy = DLMAP_COPY_ALWAYS;
  dlmap_imported copy;
  dlmap_error err;
  ASSERT_EQ(dlmap_import_versioned(device, &want, &copy, &err), DLMAP_OK) << err.message;
  EXPECT_TRUE(copy.copied);
  EXPECT_EQ(copy.tensor.device.device_type, GetParam().device);
  EXPECT_NE(copy.tensor.data, original);
  dlmap_memory_kind kind;
  int32_t on;
  ASSERT_EQ(dlmap_memory_locate(GetParam().device, copy.tensor.data, &kind, &on, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(kind, DLMAP_MEMORY_DEVICE);
  EXPECT_EQ(on, 0);
#ifdef DLMAP_FAKE_GPU
  EXPECT_EQ(fake_gpu_get_stats()->kinds[3], 1) << "one device-to-device copy";
#endif
  // Back to the host through an export of the imported device tensor.
  dlmap_array array = dlmap_array_default();
  array.data = copy.tensor.data;
  array.device_type = GetParam().device;
  array.dtype = kFloat32;
  array.ndim = 1;
  array.shape = copy.tensor.shape;
  dlmap_export_request request = VersionedExportTo(DLMAP_DEVICE_CPU);
  dlmap_exported back;
  ASSERT_EQ(dlmap_export(&array, &request, &back, &err), DLMAP_OK) << err.message;
  EXPECT_TRUE(back.copied);
  const float *values = static_cast<const float *>(back.versioned->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(values, values + 12), data);
  back.versioned->deleter(back.versioned);
  dlmap_imported_release(&copy);
}

TEST_P(GpuExchange, HostToDeviceOnImport) {
  std::vector<float> data = Values(8);
  int64_t shape[1] = {8};
  static int deleted;
  deleted = 0;
  DLManagedTensorVersioned tensor = {};
  tensor.version = {1, 3};
  tensor.dl_tensor.data = data.data();
  tensor.dl_tensor.device = {kDLCPU, 0};
  tensor.dl_tensor.ndim = 1;
  tensor.dl_tensor.dtype = kFloat32;
  tensor.dl_tensor.shape = shape;
  tensor.deleter = [](DLManagedTensorVersioned *) { deleted++; };
  dlmap_import_request want = dlmap_import_request_default();
  want.has_device = true;
  want.device_type = GetParam().device;
  dlmap_imported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_import_versioned(&tensor, &want, &out, &err), DLMAP_OK) << err.message;
  EXPECT_TRUE(out.copied);
  EXPECT_EQ(deleted, 1) << "the producer's tensor is released once the copy is complete";
  EXPECT_EQ(out.tensor.device.device_type, GetParam().device);
  dlmap_memory_kind kind;
  ASSERT_EQ(dlmap_memory_locate(GetParam().device, out.tensor.data, &kind, nullptr, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(kind, DLMAP_MEMORY_DEVICE);
  dlmap_imported_release(&out);
}

TEST_P(GpuExchange, CrossDevice) {
  if (status_.device_count < 2) GTEST_SKIP() << "one " << GetParam().name << " device: no second device to copy to";
  std::vector<float> data = Values(16);
  std::vector<int64_t> shape = {4, 4};
  DLManagedTensorVersioned *on0 = ToDevice(HostArray(data.data(), shape, {}), GetParam().device, 0);
  ASSERT_NE(on0, nullptr);
  dlmap_array array = dlmap_array_default();
  array.data = on0->dl_tensor.data;
  array.device_type = GetParam().device;
  array.device_id = 0;
  array.dtype = kFloat32;
  array.ndim = 2;
  array.shape = on0->dl_tensor.shape;
  array.strides = on0->dl_tensor.strides;
  DLManagedTensorVersioned *on1 = ToDevice(array, GetParam().device, 1);
  ASSERT_NE(on1, nullptr);
  dlmap_memory_kind kind;
  int32_t device_id = -1;
  dlmap_error err;
  ASSERT_EQ(dlmap_memory_locate(GetParam().device, on1->dl_tensor.data, &kind, &device_id, &err), DLMAP_OK);
  EXPECT_EQ(kind, DLMAP_MEMORY_DEVICE);
  EXPECT_EQ(device_id, 1);
  EXPECT_EQ(ToHost(on1), data);
  on0->deleter(on0);
}

TEST_P(GpuExchange, DeviceIdOutOfRange) {
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request request = ExportTo(GetParam().device, status_.device_count);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_ERR_DEVICE_ID_OUT_OF_RANGE);
  EXPECT_EQ(std::string(err.message), "Device id " + std::to_string(status_.device_count) + " is out of range for platform " +
                                          dlmap_platform_find(GetParam().platform)->name + ", which has " +
                                          std::to_string(status_.device_count) + " device(s).");
}

// Pinned and managed memory: the host reads it in place, and the GPU reads it without a copy.
void CheckHostAndDeviceViews(GpuExchange *test, int32_t memory_type, dlmap_memory_kind expected_kind) {
  const Gpu &gpu = test->GetParam();
  std::vector<float> data = Values(10);
  std::vector<int64_t> shape = {10};
  DLManagedTensorVersioned *tensor = test->ToDevice(HostArray(data.data(), shape, {}), memory_type);
  ASSERT_NE(tensor, nullptr);
  const float *host = static_cast<const float *>(tensor->dl_tensor.data);
  dlmap_memory_kind kind;
  dlmap_error err;
  ASSERT_EQ(dlmap_memory_locate(gpu.device, host, &kind, nullptr, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(kind, expected_kind);
  EXPECT_EQ(std::vector<float>(host, host + 10), data) << "readable on the host without a copy";

  dlmap_import_request want = dlmap_import_request_default();
  want.has_device = true;
  want.device_type = gpu.device;
  want.copy = DLMAP_COPY_NEVER;
  dlmap_imported view;
  ASSERT_EQ(dlmap_import_versioned(tensor, &want, &view, &err), DLMAP_OK) << err.message;
  EXPECT_FALSE(view.copied);
  EXPECT_EQ(view.tensor.device.device_type, gpu.device);
  // The GPU-side address reads back the same values through a device-to-host export.
  dlmap_array array = dlmap_array_default();
  array.data = view.tensor.data;
  array.device_type = gpu.device;
  array.dtype = kFloat32;
  array.ndim = 1;
  array.shape = view.tensor.shape;
  dlmap_export_request request = VersionedExportTo(DLMAP_DEVICE_CPU);
  request.copy = DLMAP_COPY_ALWAYS;
  dlmap_exported back;
  ASSERT_EQ(dlmap_export(&array, &request, &back, &err), DLMAP_OK) << err.message;
  const float *values = static_cast<const float *>(back.versioned->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(values, values + 10), data);
  back.versioned->deleter(back.versioned);
  dlmap_imported_release(&view);
}

TEST_P(GpuExchange, PinnedMemoryWithoutCopies) { CheckHostAndDeviceViews(this, GetParam().pinned, DLMAP_MEMORY_HOST_PINNED); }

TEST_P(GpuExchange, ManagedMemoryWithoutCopies) {
  if (GetParam().managed < 0) GTEST_SKIP() << GetParam().name << " has no managed device type in the spec";
  CheckHostAndDeviceViews(this, GetParam().managed, DLMAP_MEMORY_MANAGED);
}

TEST_P(GpuExchange, AClaimOfPinnedMemoryThatDoesNotHold) {
  std::vector<float> data = Values(4);  // plain host memory, claimed to be pinned
  int64_t shape[1] = {4};
  DLManagedTensorVersioned tensor = {};
  tensor.version = {1, 3};
  tensor.dl_tensor.data = data.data();
  tensor.dl_tensor.device = {static_cast<DLDeviceType>(GetParam().pinned), 0};
  tensor.dl_tensor.ndim = 1;
  tensor.dl_tensor.dtype = kFloat32;
  tensor.dl_tensor.shape = shape;
  dlmap_import_request want = dlmap_import_request_default();
  want.has_device = true;
  want.device_type = GetParam().device;
  want.copy = DLMAP_COPY_NEVER;
  dlmap_imported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_import_versioned(&tensor, &want, &out, &err), DLMAP_ERR_IMPORT_COPY_TO_DEVICE_FORBIDDEN);
  dlmap_memory_kind kind;
  ASSERT_EQ(dlmap_memory_locate(GetParam().device, data.data(), &kind, nullptr, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(kind, DLMAP_MEMORY_HOST);
}

TEST_P(GpuExchange, ViewsMakeTheConsumersStreamWait) {
  std::vector<float> data = Values(6);
  std::vector<int64_t> shape = {6};
  DLManagedTensorVersioned *device = ToDevice(HostArray(data.data(), shape, {}), GetParam().device);
  ASSERT_NE(device, nullptr);
  dlmap_array array = dlmap_array_default();
  array.data = device->dl_tensor.data;
  array.device_type = GetParam().device;
  array.dtype = kFloat32;
  array.ndim = 1;
  array.shape = device->dl_tensor.shape;
  dlmap_export_request request = dlmap_export_request_default();  // stream None
  dlmap_exported out;
  dlmap_error err;
#ifdef DLMAP_FAKE_GPU
  fake_gpu_reset(2);
#endif
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_FALSE(out.copied);
  EXPECT_EQ(out.legacy->dl_tensor.data, array.data);
#ifdef DLMAP_FAKE_GPU
  const fake_gpu_stats *s = fake_gpu_get_stats();
  EXPECT_EQ(s->events_recorded, 1);
  EXPECT_EQ(s->waits, 1);
  EXPECT_EQ(s->last_wait_stream, reinterpret_cast<void *>(1)) << "None: the legacy default stream (cudaStreamLegacy)";
#endif
  out.legacy->deleter(out.legacy);
#ifdef DLMAP_FAKE_GPU
  // Issue 64: the release makes the producer's stream wait for the consumer's, so that the producer's next write or
  // stream-ordered free of the memory cannot overtake the consumer's queued work.
  EXPECT_EQ(s->events_recorded, 2);
  EXPECT_EQ(s->waits, 2);
  EXPECT_EQ(s->last_record_stream, reinterpret_cast<void *>(1)) << "recorded on the consumer's stream";
  EXPECT_EQ(s->last_wait_stream, array.producer_stream) << "waited for by the producer's";
  EXPECT_EQ(s->events_destroyed, s->events_created);
  EXPECT_EQ(s->syncs, 0) << "the host never waits";
  // A stream handle (one the runtime made), and -1.
  void *consumer = fake_gpu_stream_create();
  request.has_stream = true;
  request.stream = reinterpret_cast<intptr_t>(consumer);
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(s->waits, 3);
  EXPECT_EQ(s->last_wait_stream, consumer);
  out.legacy->deleter(out.legacy);
  EXPECT_EQ(s->waits, 4);
  EXPECT_EQ(s->last_record_stream, consumer);
  fake_gpu_stream_destroy(consumer);
  request.stream = -1;  // no synchronisation, and none at the release either: the consumer orders its own work
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  out.legacy->deleter(out.legacy);
  EXPECT_EQ(s->waits, 4);
  EXPECT_EQ(s->syncs, 0);
#endif
  device->deleter(device);
}

TEST_P(GpuExchange, BatchWaitsOncePerProducerStream) {
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  DLManagedTensorVersioned *device = ToDevice(HostArray(data.data(), shape, {}), GetParam().device);
  ASSERT_NE(device, nullptr);
  std::vector<dlmap_array> arrays(1000, dlmap_array_default());
  dlmap_export_request request = dlmap_export_request_default();
  request.defer_stream_sync = true;
  std::vector<dlmap_exported> outs(arrays.size());
  dlmap_error err;
#ifdef DLMAP_FAKE_GPU
  fake_gpu_reset(2);
#endif
  for (size_t i = 0; i < arrays.size(); i++) {
    dlmap_array &a = arrays[i];
    a = dlmap_array_default();
    a.data = device->dl_tensor.data;
    a.device_type = GetParam().device;
    a.dtype = kFloat32;
    a.ndim = 1;
    a.shape = device->dl_tensor.shape;
    ASSERT_EQ(dlmap_export(&a, &request, &outs[i], &err), DLMAP_OK) << err.message;
  }
#ifdef DLMAP_FAKE_GPU
  EXPECT_EQ(fake_gpu_get_stats()->events_recorded, 0) << "deferred: no wait per export";
#endif
  size_t waits = 0;
  ASSERT_EQ(dlmap_stream_wait_batch(arrays.data(), arrays.size(), false, 0, &waits, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(waits, 1u) << "one event, one wait for 1000 tensors";
#ifdef DLMAP_FAKE_GPU
  EXPECT_EQ(fake_gpu_get_stats()->events_recorded, 1);
  EXPECT_EQ(fake_gpu_get_stats()->waits, 1);
#endif
  for (auto &out : outs) out.legacy->deleter(out.legacy);
  device->deleter(device);
}

INSTANTIATE_TEST_SUITE_P(Gpus, GpuExchange, ::testing::ValuesIn(Gpus()),
                         [](const ::testing::TestParamInfo<Gpu> &info) { return std::string(info.param.name); });

}  // namespace
