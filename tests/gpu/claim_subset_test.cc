// dlmap GPU tests — a profile whose import.device_claims lists one claim (BUILD: array_api with the list set, over the
// fake runtime): an import refuses the tensors that claim contradicts and takes as views those only an unlisted claim
// would refuse, the producer's deleter run once either way. One source, one library per claim (CLAIMS_*).
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fakeMalloc(void **ptr, size_t bytes);  // the fake's cudaMalloc, on the thread's current device
extern "C" int fakeFree(void *ptr);
extern "C" int fakeSetDevice(int device);

namespace {

const DLDataType kFloat32 = {kDLFloat, 32, 1};

int g_deletes = 0;

struct Owned {
  DLManagedTensorVersioned managed;
  int64_t shape[1];
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

class ClaimSubset : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);  // the runtime dlmap has loaded: claims are checked
    ASSERT_TRUE(status.available) << status.reason;
    g_deletes = 0;
  }

  void TearDown() override {
    for (void *memory : allocated_) fakeFree(memory);
  }

  // 64 bytes of fake device memory on `device`.
  void *DeviceMemory(int device) {
    void *memory = nullptr;
    EXPECT_EQ(fakeSetDevice(device), 0);
    EXPECT_EQ(fakeMalloc(&memory, 64), 0);
    EXPECT_EQ(fakeSetDevice(0), 0);
    allocated_.push_back(memory);
    return memory;
  }

  // Imports tensor as a view (released at once); the status, and the deleter ran exactly once.
  int32_t Import(DLManagedTensorVersioned *tensor) {
    g_deletes = 0;
    dlmap_imported out;
    const int32_t status = dlmap_import_versioned(tensor, nullptr, &out, &err_);
    if (status == DLMAP_OK) dlmap_imported_release(&out);
    EXPECT_EQ(g_deletes, 1);
    return status;
  }

  std::vector<void *> allocated_;
  std::vector<float> host_ = std::vector<float>(4, 1.0f);
  dlmap_error err_;
};

#if defined(CLAIMS_HOST_TYPES)
const int32_t kHostTypes = DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY;
#else
const int32_t kHostTypes = DLMAP_OK;
#endif
#if defined(CLAIMS_DEVICE_TYPES)
const int32_t kHostMemory = DLMAP_ERR_DEVICE_CLAIM_HOST_MEMORY;
const int32_t kOutside = DLMAP_ERR_DEVICE_CLAIM_OUTSIDE_ALLOCATION;
#else
const int32_t kHostMemory = DLMAP_OK;
const int32_t kOutside = DLMAP_OK;
#endif
#if defined(CLAIMS_DEVICE_ID)
const int32_t kWrongDevice = DLMAP_ERR_DEVICE_CLAIM_WRONG_DEVICE;
#else
const int32_t kWrongDevice = DLMAP_OK;
#endif

// A host-side type over device-only memory: host_types' refusal.
TEST_F(ClaimSubset, AHostSideTypeOverDeviceMemory) {
  EXPECT_EQ(Import(Make(DeviceMemory(0), DLMAP_DEVICE_CPU, 0)), kHostTypes) << err_.message;
}

// A device type over host memory the runtime does not know: device_types' refusal.
TEST_F(ClaimSubset, ADeviceTypeOverHostMemory) {
  EXPECT_EQ(Import(Make(host_.data(), DLMAP_DEVICE_CUDA, 0)), kHostMemory) << err_.message;
}

// Device memory of device 1 claimed on device 0: device_id's refusal.
TEST_F(ClaimSubset, AnotherDevicesMemory) {
  EXPECT_EQ(Import(Make(DeviceMemory(1), DLMAP_DEVICE_CUDA, 0)), kWrongDevice) << err_.message;
}

// 17 floats over a 64-byte allocation: device_types' refusal.
TEST_F(ClaimSubset, ATensorPastItsAllocation) {
  EXPECT_EQ(Import(Make(DeviceMemory(0), DLMAP_DEVICE_CUDA, 0, 17)), kOutside) << err_.message;
}

// The tensor every claim accepts: device memory on its device, inside its allocation.
TEST_F(ClaimSubset, ATensorEveryClaimAccepts) {
  EXPECT_EQ(Import(Make(DeviceMemory(1), DLMAP_DEVICE_CUDA, 1)), DLMAP_OK) << err_.message;
}

}  // namespace
