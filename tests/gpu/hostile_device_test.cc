// dlmap GPU tests — hostile device input over the fake runtime (issue 48): stream integers that cannot be handles are
// refused before any runtime call; a tensor whose device claim its memory contradicts (a host-side type over device
// memory, a device type over host memory, another device's memory) and a device id past the device count are catalogue
// errors on every import, views and planned imports included, with the producer's deleter run exactly once.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fakeMalloc(void **ptr, size_t bytes);  // the fake's cudaMalloc, on the thread's current device
extern "C" int fakeFree(void *ptr);
extern "C" int fakeSetDevice(int device);

namespace {

const DLDataType kFloat32 = {kDLFloat, 32, 1};

// Deleter calls of the tensors Make() hands out.
int g_deletes = 0;

struct Owned {
  DLManagedTensorVersioned managed;
  int64_t shape[1];
  int64_t strides[1];
};

void Delete(DLManagedTensorVersioned *self) {
  g_deletes++;
  delete static_cast<Owned *>(self->manager_ctx);
}

// A versioned tensor of `count` float32 at data that claims (type, id); released through Delete.
DLManagedTensorVersioned *Make(void *data, int32_t type, int32_t id, int64_t count = 4) {
  Owned *owned = new Owned();
  owned->shape[0] = count;
  DLManagedTensorVersioned *m = &owned->managed;
  m->version.major = 1;
  m->version.minor = 0;
  m->manager_ctx = owned;
  m->deleter = Delete;
  m->dl_tensor.data = data;
  m->dl_tensor.device.device_type = static_cast<DLDeviceType>(type);
  m->dl_tensor.device.device_id = id;
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype = kFloat32;
  m->dl_tensor.shape = owned->shape;
  return m;
}

class HostileDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);  // the runtime dlmap has loaded: claims are checked
    if (!status.available) GTEST_SKIP() << "the fake runtime did not load: " << status.reason;
    g_deletes = 0;
  }

  // Fake device memory on `device` (the fake's cudaMalloc there), reported as device memory by its pointer attributes.
  void *DeviceMemory(int device, size_t bytes = 64) {
    void *memory = nullptr;
    EXPECT_EQ(fakeSetDevice(device), 0);
    EXPECT_EQ(fakeMalloc(&memory, bytes), 0);
    EXPECT_EQ(fakeSetDevice(0), 0);
    allocated_.push_back(memory);
    return memory;
  }

  void TearDown() override {
    for (void *memory : allocated_) fakeFree(memory);
  }

  // Imports tensor as a view; the status, with the error in err_.
  int32_t Import(DLManagedTensorVersioned *tensor) {
    const int32_t status = dlmap_import_versioned(tensor, nullptr, &out_, &err_);
    if (status == DLMAP_OK) dlmap_imported_release(&out_);
    return status;
  }

  std::vector<void *> allocated_;
  dlmap_imported out_;
  dlmap_error err_;
};

// ---- streams ---------------------------------------------------------------------------------------------------------

// The H200's invented handle (3: cudaStreamWaitEvent on it killed the process) and the rest of the first page: no
// runtime object lives there. Each is refused by every entry point that reads a stream, and no runtime call saw it.
const int64_t kNotHandles[] = {3, 100, 4095};

TEST_F(HostileDevice, StreamIntegersBelowTheFirstPageAreRefusedBeforeAnyRuntimeCall) {
  void *memory = DeviceMemory(0);
  dlmap_array array = dlmap_array_default();
  array.data = memory;
  array.device_type = DLMAP_DEVICE_CUDA;
  array.dtype = kFloat32;
  array.ndim = 1;
  int64_t shape[1] = {4};
  array.shape = shape;
  for (int64_t stream : kNotHandles) {
    fake_gpu_reset(2);
    dlmap_export_request request = dlmap_export_request_default();
    request.has_stream = true;
    request.stream = stream;
    dlmap_exported exported;
    EXPECT_EQ(dlmap_export(&array, &request, &exported, &err_), DLMAP_ERR_STREAM_NOT_A_HANDLE) << stream;
    void *handle = nullptr;
    EXPECT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, stream, &handle, &err_), DLMAP_ERR_STREAM_NOT_A_HANDLE);
    size_t waits = 7;
    EXPECT_EQ(dlmap_stream_wait_batch(&array, 1, true, stream, &waits, &err_), DLMAP_ERR_STREAM_NOT_A_HANDLE);
    dlmap_stream_meaning meaning;
    EXPECT_EQ(dlmap_stream_classify(DLMAP_DEVICE_CUDA, true, stream, &meaning, &err_), DLMAP_ERR_STREAM_NOT_A_HANDLE);
    EXPECT_EQ(err_.code, DLMAP_ERR_STREAM_NOT_A_HANDLE);
    EXPECT_EQ(fake_gpu_calls(), 0) << "stream " << stream << " reached the runtime";
    EXPECT_EQ(fake_gpu_stream_calls(reinterpret_cast<void *>(static_cast<intptr_t>(stream))), 0);
  }
}

TEST_F(HostileDevice, TheRefusalSaysWhatAHandleIs) {
  dlmap_stream_meaning meaning;
  ASSERT_EQ(dlmap_stream_classify(DLMAP_DEVICE_CUDA, true, 3, &meaning, &err_), DLMAP_ERR_STREAM_NOT_A_HANDLE);
  EXPECT_EQ(std::string(err_.message).rfind("stream=3 cannot be a stream handle for device type kDLCUDA (2): ", 0), 0u)
      << err_.message;
  // The convention's constants and real handles are untouched.
  for (int64_t stream : {int64_t{-1}, int64_t{1}, int64_t{2}}) {
    EXPECT_EQ(dlmap_stream_classify(DLMAP_DEVICE_CUDA, true, stream, &meaning, &err_), DLMAP_OK) << stream;
  }
  void *made = fake_gpu_stream_create();
  const int64_t handle = static_cast<int64_t>(reinterpret_cast<intptr_t>(made));
  EXPECT_EQ(dlmap_stream_classify(DLMAP_DEVICE_CUDA, true, handle, &meaning, &err_), DLMAP_OK) << err_.message;
  EXPECT_EQ(meaning, DLMAP_STREAM_HANDLE);
  fake_gpu_stream_destroy(made);
}

// ---- device claims -----------------------------------------------------------------------------------------------------

// A host-side device type over device-only memory: the host's first read of the view would fault (H200: SIGSEGV).
TEST_F(HostileDevice, AHostSideTypeOverDeviceMemoryIsRefused) {
  void *memory = DeviceMemory(0);
  for (int32_t type : {DLMAP_DEVICE_CPU, DLMAP_DEVICE_CUDAHOST, DLMAP_DEVICE_CUDAMANAGED}) {
    g_deletes = 0;
    EXPECT_EQ(Import(Make(memory, type, 0)), DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY) << type;
    EXPECT_EQ(g_deletes, 1) << type;
  }
  EXPECT_EQ(std::string(err_.message).rfind("The DLPack tensor says it is on (kDLCUDAManaged, 0), memory the host can "
                                            "read, but the cuda runtime says its data 0x", 0),
            0u)
      << err_.message;
}

// A device type over host memory the runtime does not know (H200: copied as if it were device memory).
TEST_F(HostileDevice, ADeviceTypeOverUnregisteredHostMemoryIsRefused) {
  std::vector<float> host(4, 1.0f);
  EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CUDA, 0)), DLMAP_ERR_DEVICE_CLAIM_HOST_MEMORY) << err_.message;
  EXPECT_EQ(g_deletes, 1);
}

TEST_F(HostileDevice, AnotherDevicesMemoryIsRefused) {
  void *memory = DeviceMemory(1);
  EXPECT_EQ(Import(Make(memory, DLMAP_DEVICE_CUDA, 0)), DLMAP_ERR_DEVICE_CLAIM_WRONG_DEVICE) << err_.message;
  EXPECT_EQ(g_deletes, 1);
}

// H200: kDLCUDA with device_id 5 on a one-GPU machine was accepted as a view.
TEST_F(HostileDevice, ADeviceIdPastTheDeviceCountIsRefusedOnAView) {
  void *memory = DeviceMemory(0);
  EXPECT_EQ(Import(Make(memory, DLMAP_DEVICE_CUDA, 5)), DLMAP_ERR_DEVICE_ID_OUT_OF_RANGE);
  EXPECT_STREQ(err_.message, "Device id 5 is out of range for platform cuda, which has 2 device(s).");
  EXPECT_EQ(g_deletes, 1);
  // and on export of an array that says so
  dlmap_array array = dlmap_array_default();
  array.data = memory;
  array.device_type = DLMAP_DEVICE_CUDA;
  array.device_id = 5;
  array.dtype = kFloat32;
  array.ndim = 1;
  int64_t shape[1] = {4};
  array.shape = shape;
  dlmap_export_request request = dlmap_export_request_default();
  request.has_stream = true;
  request.stream = -1;
  dlmap_exported exported;
  EXPECT_EQ(dlmap_export(&array, &request, &exported, &err_), DLMAP_ERR_DEVICE_ID_OUT_OF_RANGE) << err_.message;
}

TEST_F(HostileDevice, TruthfulClaimsPass) {
  void *memory = DeviceMemory(1);
  std::vector<float> host(4, 1.0f);
  EXPECT_EQ(Import(Make(memory, DLMAP_DEVICE_CUDA, 1)), DLMAP_OK) << err_.message;
  EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CPU, 0)), DLMAP_OK) << err_.message;
  fake_gpu_report(host.data(), host.size() * sizeof(float), FAKE_HOST, 0);  // pinned: the host and the device read it
  EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CUDAHOST, 0)), DLMAP_OK) << err_.message;
  EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CUDA, 0)), DLMAP_OK) << err_.message;
  EXPECT_EQ(g_deletes, 4);
  // An empty tensor reaches no memory: nothing to ask.
  EXPECT_EQ(Import(Make(memory, DLMAP_DEVICE_CPU, 0, 0)), DLMAP_OK) << err_.message;
}

// A plan (or the thread's remembered view) serves any tensor of its layout: the claim is still checked per tensor.
TEST_F(HostileDevice, PlannedAndRememberedImportsCheckEveryTensor) {
  std::vector<float> host(4, 1.0f);
  DLManagedTensorVersioned *first = Make(host.data(), DLMAP_DEVICE_CPU, 0);
  dlmap_import_plan *plan = nullptr;
  ASSERT_EQ(dlmap_import_plan_create(&first->dl_tensor, true, {1, 0}, 0, nullptr, &plan, &err_), DLMAP_OK)
      << err_.message;
  first->deleter(first);
  g_deletes = 0;
  for (int i = 0; i < 3; i++) EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CPU, 0)), DLMAP_OK);  // remembered
  ASSERT_EQ(dlmap_import_versioned_planned(plan, Make(host.data(), DLMAP_DEVICE_CPU, 0), &out_, &err_), DLMAP_OK);
  dlmap_imported_release(&out_);
  fake_gpu_report(host.data(), host.size() * sizeof(float), FAKE_DEVICE, 0);  // the same address, now device memory
  g_deletes = 0;
  EXPECT_EQ(dlmap_import_versioned_planned(plan, Make(host.data(), DLMAP_DEVICE_CPU, 0), &out_, &err_),
            DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY);
  EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CPU, 0)), DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY);
  EXPECT_EQ(g_deletes, 2);
  dlmap_import_plan_free(plan);
}

// ---- device claims over the bytes the tensor reaches (issue 56) --------------------------------------------------------

// A tensor at data + byte_offset, `count` elements of float32 with stride `stride` (elements), claiming (type, id).
DLManagedTensorVersioned *MakeAt(void *data, uint64_t byte_offset, int32_t type, int32_t id, int64_t count,
                                 int64_t stride = 1) {
  DLManagedTensorVersioned *m = Make(data, type, id, count);
  m->dl_tensor.byte_offset = byte_offset;
  if (stride != 1) {
    Owned *owned = static_cast<Owned *>(m->manager_ctx);
    owned->strides[0] = stride;
    m->dl_tensor.strides = owned->strides;
  }
  return m;
}

class DeviceClaimExtent : public HostileDevice {
 protected:
  // A host region whose halves the fake reports as `low` and `high` memory (FAKE_UNREGISTERED: plain host memory).
  char *Region(int low, int low_device, int high, int high_device) {
    if (low != FAKE_UNREGISTERED) fake_gpu_report(region_, kHalf, low, low_device);
    if (high != FAKE_UNREGISTERED) fake_gpu_report(region_ + kHalf, kHalf, high, high_device);
    return region_;
  }

  // The error of importing `tensor` as a host copy (copy=True to kDLCPU), with no runtime copy or launch made.
  int32_t ImportCopy(DLManagedTensorVersioned *tensor) {
    dlmap_import_request request = dlmap_import_request_default();
    request.copy = DLMAP_COPY_ALWAYS;
    request.has_device = true;
    request.device_type = DLMAP_DEVICE_CPU;
    request.device_id = 0;
    const int32_t status = dlmap_import_versioned(tensor, &request, &out_, &err_);
    if (status == DLMAP_OK) dlmap_imported_release(&out_);
    return status;
  }

  static constexpr size_t kHalf = 4096;  // a page each: memory is host or device memory page by page
  alignas(kHalf) char region_[2 * kHalf] = {};
};

// The base pointer is host memory, the first element device memory: judged where the bytes are, as a view and a copy.
TEST_F(DeviceClaimExtent, AByteOffsetIntoDeviceMemoryIsNotAHostTensor) {
  char *r = Region(FAKE_UNREGISTERED, 0, FAKE_DEVICE, 0);
  EXPECT_EQ(Import(MakeAt(r, kHalf, DLMAP_DEVICE_CPU, 0, 4)), DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY) << err_.message;
  fake_gpu_reset(2);
  Region(FAKE_UNREGISTERED, 0, FAKE_DEVICE, 0);
  EXPECT_EQ(ImportCopy(MakeAt(r, kHalf, DLMAP_DEVICE_CPU, 0, 4)), DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY) << err_.message;
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_calls + fake_gpu_get_stats()->memcpy_2d_calls, 0);
  EXPECT_EQ(g_deletes, 2);
}

// The base pointer is device memory, the first element plain host memory.
TEST_F(DeviceClaimExtent, AByteOffsetIntoHostMemoryIsNotADeviceTensor) {
  char *r = Region(FAKE_DEVICE, 0, FAKE_UNREGISTERED, 0);
  EXPECT_EQ(Import(MakeAt(r, kHalf, DLMAP_DEVICE_CUDA, 0, 4)), DLMAP_ERR_DEVICE_CLAIM_HOST_MEMORY) << err_.message;
  EXPECT_EQ(g_deletes, 1);
}

// The device id is judged at the first element: device 1's memory behind a base pointer on device 0.
TEST_F(DeviceClaimExtent, TheDeviceIdIsTheFirstElementsDevice) {
  char *r = Region(FAKE_DEVICE, 0, FAKE_DEVICE, 1);
  EXPECT_EQ(Import(MakeAt(r, kHalf, DLMAP_DEVICE_CUDA, 1, 4)), DLMAP_OK) << err_.message;
  EXPECT_EQ(Import(MakeAt(r, kHalf, DLMAP_DEVICE_CUDA, 0, 4)), DLMAP_ERR_DEVICE_CLAIM_WRONG_DEVICE) << err_.message;
  EXPECT_EQ(Import(MakeAt(r, 0, DLMAP_DEVICE_CUDA, 1, 4)), DLMAP_ERR_DEVICE_CLAIM_WRONG_DEVICE) << err_.message;
  EXPECT_EQ(g_deletes, 3);
}

// An extent past the end of a device allocation, from its start, its middle and its end; and below its start with a
// negative stride. Each is refused before any copy or launch; every byte inside is accepted.
TEST_F(DeviceClaimExtent, AnExtentPastItsAllocationIsRefused) {
  char *memory = static_cast<char *>(DeviceMemory(0, 64));  // 16 float32
  EXPECT_EQ(Import(MakeAt(memory, 0, DLMAP_DEVICE_CUDA, 0, 16)), DLMAP_OK) << err_.message;
  EXPECT_EQ(Import(MakeAt(memory, 32, DLMAP_DEVICE_CUDA, 0, 8)), DLMAP_OK) << err_.message;
  EXPECT_EQ(Import(MakeAt(memory, 60, DLMAP_DEVICE_CUDA, 0, 16, -1)), DLMAP_OK) << err_.message;
  g_deletes = 0;
  fake_gpu_reset(2);
  EXPECT_EQ(Import(MakeAt(memory, 0, DLMAP_DEVICE_CUDA, 0, 17)), DLMAP_ERR_DEVICE_CLAIM_OUTSIDE_ALLOCATION);
  EXPECT_EQ(std::string(err_.message).rfind("The DLPack tensor says it is on (kDLCUDA, 0), but its elements reach 68 "
                                            "bytes from 0x", 0), 0u) << err_.message;
  EXPECT_EQ(ImportCopy(MakeAt(memory, 32, DLMAP_DEVICE_CUDA, 0, 9)), DLMAP_ERR_DEVICE_CLAIM_OUTSIDE_ALLOCATION);
  EXPECT_EQ(Import(MakeAt(memory, 60, DLMAP_DEVICE_CUDA, 0, 2)), DLMAP_ERR_DEVICE_CLAIM_OUTSIDE_ALLOCATION);
  EXPECT_EQ(Import(MakeAt(memory, 64, DLMAP_DEVICE_CUDA, 0, 1)), DLMAP_ERR_DEVICE_CLAIM_HOST_MEMORY);  // one past
  EXPECT_EQ(Import(MakeAt(memory, 60, DLMAP_DEVICE_CUDA, 0, 17, -1)), DLMAP_ERR_DEVICE_CLAIM_HOST_MEMORY);  // below
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_calls + fake_gpu_get_stats()->memcpy_2d_calls, 0);
  EXPECT_EQ(fake_gpu_get_stats()->allocations, 0) << "no copy was started";
  EXPECT_EQ(g_deletes, 5);
}

// Where the runtime names no allocation for the first byte (the address-range query fails), both ends are asked of the
// pointer query: an end outside the device memory still refuses the tensor.
TEST_F(DeviceClaimExtent, WithoutTheAddressRangeBothEndsAreAsked) {
  char *memory = static_cast<char *>(DeviceMemory(0, 64));
  fake_gpu_fail_next("range", FAKE_NOT_FOUND);
  EXPECT_EQ(Import(MakeAt(memory, 0, DLMAP_DEVICE_CUDA, 0, 17)), DLMAP_ERR_DEVICE_CLAIM_OUTSIDE_ALLOCATION);
  fake_gpu_fail_next("range", FAKE_NOT_FOUND);
  EXPECT_EQ(Import(MakeAt(memory, 0, DLMAP_DEVICE_CUDA, 0, 16)), DLMAP_OK) << err_.message;
  EXPECT_EQ(g_deletes, 2);
}

// Host-side claims: pinned memory must hold every byte; plain host memory must not run into device memory.
TEST_F(DeviceClaimExtent, AHostTensorRunningIntoDeviceMemoryOrPastItsPinnedMemoryIsRefused) {
  char *r = Region(FAKE_HOST, 0, FAKE_DEVICE, 0);
  EXPECT_EQ(Import(MakeAt(r, 0, DLMAP_DEVICE_CUDAHOST, 0, kHalf / 4)), DLMAP_OK) << err_.message;
  EXPECT_EQ(Import(MakeAt(r, 0, DLMAP_DEVICE_CUDAHOST, 0, kHalf / 4 + 1)), DLMAP_ERR_DEVICE_CLAIM_OUTSIDE_ALLOCATION);
  fake_gpu_reset(2);
  Region(FAKE_UNREGISTERED, 0, FAKE_DEVICE, 0);
  EXPECT_EQ(Import(MakeAt(r, 0, DLMAP_DEVICE_CPU, 0, kHalf / 4)), DLMAP_OK) << err_.message;
  EXPECT_EQ(ImportCopy(MakeAt(r, 0, DLMAP_DEVICE_CPU, 0, kHalf / 4 + 1)), DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY);
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_calls, 0);
  EXPECT_EQ(g_deletes, 4);
}

// A plan serves any tensor of its layout: each one's byte_offset and extent are judged, not the plan's first tensor's.
TEST_F(DeviceClaimExtent, PlannedImportsJudgeEachTensorsBytes) {
  char *memory = static_cast<char *>(DeviceMemory(0, 64));
  DLManagedTensorVersioned *first = MakeAt(memory, 0, DLMAP_DEVICE_CUDA, 0, 8);
  dlmap_import_plan *plan = nullptr;
  ASSERT_EQ(dlmap_import_plan_create(&first->dl_tensor, true, {1, 0}, 0, nullptr, &plan, &err_), DLMAP_OK)
      << err_.message;
  first->deleter(first);
  g_deletes = 0;
  ASSERT_EQ(dlmap_import_versioned_planned(plan, MakeAt(memory, 32, DLMAP_DEVICE_CUDA, 0, 8), &out_, &err_), DLMAP_OK)
      << err_.message;
  dlmap_imported_release(&out_);
  EXPECT_EQ(dlmap_import_versioned_planned(plan, MakeAt(memory, 36, DLMAP_DEVICE_CUDA, 0, 8), &out_, &err_),
            DLMAP_ERR_DEVICE_CLAIM_OUTSIDE_ALLOCATION);
  char *r = Region(FAKE_DEVICE, 0, FAKE_DEVICE, 1);
  EXPECT_EQ(dlmap_import_versioned_planned(plan, MakeAt(r, kHalf, DLMAP_DEVICE_CUDA, 0, 8), &out_, &err_),
            DLMAP_ERR_DEVICE_CLAIM_WRONG_DEVICE);
  EXPECT_EQ(Import(MakeAt(memory, 36, DLMAP_DEVICE_CUDA, 0, 8)), DLMAP_ERR_DEVICE_CLAIM_OUTSIDE_ALLOCATION);  // remembered
  EXPECT_EQ(g_deletes, 4);
  dlmap_import_plan_free(plan);
}

}  // namespace
