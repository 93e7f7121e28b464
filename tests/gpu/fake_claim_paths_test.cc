// dlmap GPU tests over the fake runtime — device claims (src/device_claim.c) where the runtime's pointer query itself
// fails (a host-side claim and a device claim each report the runtime's error, the producer's deleter run once), and
// managed memory claimed as device memory (placed on a device: accepted on its own device, refused on another), and
// prepared and remembered legacy imports, which check every tensor's claim; a memory type the spec does not list
// refuses no host claim.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

namespace {

int g_deletes = 0;

struct Owned {
  DLManagedTensorVersioned managed;
  int64_t shape[1];
};

void Delete(DLManagedTensorVersioned *self) {
  g_deletes++;
  delete static_cast<Owned *>(self->manager_ctx);
}

// A versioned tensor of 4 float32 at data that claims (type, id); released through Delete.
DLManagedTensorVersioned *Make(void *data, int32_t type, int32_t id) {
  Owned *owned = new Owned();
  owned->shape[0] = 4;
  DLManagedTensorVersioned *m = &owned->managed;
  m->version = {1, 0};
  m->manager_ctx = owned;
  m->deleter = Delete;
  m->dl_tensor.data = data;
  m->dl_tensor.device = {static_cast<DLDeviceType>(type), id};
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype = {kDLFloat, 32, 1};
  m->dl_tensor.shape = owned->shape;
  return m;
}

class FakeClaims : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);  // the runtime dlmap has loaded: claims are checked
    ASSERT_TRUE(status.available) << "the fake runtime did not load: " << status.reason;
    g_deletes = 0;
  }
  void TearDown() override { fake_gpu_reset(2); }  // forgets the regions reported
  // Imports tensor as a view; the status, with the error in err_.
  int32_t Import(DLManagedTensorVersioned *tensor) {
    const int32_t status = dlmap_import_versioned(tensor, nullptr, &out_, &err_);
    if (status == DLMAP_OK) dlmap_imported_release(&out_);
    return status;
  }
  dlmap_imported out_;
  dlmap_error err_;
};

TEST_F(FakeClaims, AFailingPointerQueryFailsAHostClaim) {
  std::vector<float> host(4, 1.0f);
  fake_gpu_fail_next("attributes", FAKE_ILLEGAL_ADDRESS);  // not InvalidValue, which means unregistered host memory
  EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CPU, 0)), DLMAP_ERR_BACKEND_CALL_FAILED);
  EXPECT_NE(std::string(err_.message).find("fakePointerGetAttributes"), std::string::npos) << err_.message;
  EXPECT_EQ(g_deletes, 1);
  EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CPU, 0)), DLMAP_OK) << err_.message;  // control: one failure only
  EXPECT_EQ(g_deletes, 2);
}

TEST_F(FakeClaims, AFailingPointerQueryFailsADeviceClaim) {
  std::vector<float> region(4, 1.0f);
  ASSERT_EQ(fake_gpu_report(region.data(), region.size() * sizeof(float), FAKE_DEVICE, 0), 0);
  fake_gpu_fail_next("attributes", FAKE_ILLEGAL_ADDRESS);
  EXPECT_EQ(Import(Make(region.data(), DLMAP_DEVICE_CUDA, 0)), DLMAP_ERR_BACKEND_CALL_FAILED);
  EXPECT_NE(std::string(err_.message).find("fakePointerGetAttributes"), std::string::npos) << err_.message;
  EXPECT_EQ(g_deletes, 1);
}

TEST_F(FakeClaims, ManagedMemoryClaimedAsDeviceMemoryIsPlacedOnItsDevice) {
  std::vector<float> region(4, 1.0f);
  ASSERT_EQ(fake_gpu_report(region.data(), region.size() * sizeof(float), FAKE_MANAGED, 1), 0);
  EXPECT_EQ(Import(Make(region.data(), DLMAP_DEVICE_CUDA, 1)), DLMAP_OK) << err_.message;
  EXPECT_EQ(Import(Make(region.data(), DLMAP_DEVICE_CUDA, 0)), DLMAP_ERR_DEVICE_CLAIM_WRONG_DEVICE);
  EXPECT_EQ(g_deletes, 2);
}

// A prepared legacy import serves any tensor of its layout, but checks each one's claim: a tensor whose memory the
// runtime calls device memory is refused though its layout matches the plan's.
TEST_F(FakeClaims, APlannedLegacyImportChecksEveryTensorsClaim) {
  std::vector<float> host(4, 1.0f);
  DLManagedTensorVersioned *layout = Make(host.data(), DLMAP_DEVICE_CPU, 0);
  dlmap_import_plan *plan = nullptr;
  ASSERT_EQ(dlmap_import_plan_create(&layout->dl_tensor, false, {0, 8}, 0, nullptr, &plan, &err_), DLMAP_OK)
      << err_.message;
  layout->deleter(layout);
  static int legacy_deletes;
  legacy_deletes = 0;
  DLManagedTensorVersioned *holder = Make(host.data(), DLMAP_DEVICE_CPU, 0);  // owns the shape array below
  DLManagedTensor tensor{};
  tensor.dl_tensor = holder->dl_tensor;
  tensor.deleter = [](DLManagedTensor *) { legacy_deletes++; };
  ASSERT_EQ(dlmap_import_legacy_planned(plan, &tensor, &out_, &err_), DLMAP_OK) << err_.message;  // control
  dlmap_imported_release(&out_);
  ASSERT_EQ(fake_gpu_report(host.data(), host.size() * sizeof(float), FAKE_DEVICE, 0), 0);
  EXPECT_EQ(dlmap_import_legacy_planned(plan, &tensor, &out_, &err_), DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY);
  EXPECT_EQ(legacy_deletes, 2);
  dlmap_import_plan_free(plan);
  holder->deleter(holder);
}

// The thread's remembered legacy view serves any tensor of its layout, but checks each one's claim too.
TEST_F(FakeClaims, TheRememberedLegacyViewChecksEveryTensorsClaim) {
  std::vector<float> host(4, 1.0f);
  DLManagedTensorVersioned *holder = Make(host.data(), DLMAP_DEVICE_CPU, 0);  // owns the shape array below
  static int legacy_deletes;
  legacy_deletes = 0;
  DLManagedTensor tensor{};
  tensor.dl_tensor = holder->dl_tensor;
  tensor.deleter = [](DLManagedTensor *) { legacy_deletes++; };
  for (int i = 0; i < 3; i++) {  // remembered after the second
    ASSERT_EQ(dlmap_import_legacy(&tensor, nullptr, &out_, &err_), DLMAP_OK) << err_.message;
    dlmap_imported_release(&out_);
  }
  ASSERT_EQ(fake_gpu_report(host.data(), host.size() * sizeof(float), FAKE_DEVICE, 0), 0);
  EXPECT_EQ(dlmap_import_legacy(&tensor, nullptr, &out_, &err_), DLMAP_ERR_DEVICE_CLAIM_DEVICE_MEMORY);
  EXPECT_EQ(legacy_deletes, 4);
  holder->deleter(holder);
}

// A memory type the spec's runtime table does not list (a newer runtime's) is no evidence of device memory: a host
// claim over it stands, as over memory the runtime does not know.
TEST_F(FakeClaims, AnUnlistedMemoryTypeDoesNotRefuseAHostClaim) {
  std::vector<float> host(4, 1.0f);
  constexpr int kUnlistedType = 9;  // none of fake_cuda.yaml's memory types
  ASSERT_EQ(fake_gpu_report(host.data(), host.size() * sizeof(float), kUnlistedType, 0), 0);
  EXPECT_EQ(Import(Make(host.data(), DLMAP_DEVICE_CPU, 0)), DLMAP_OK) << err_.message;
  EXPECT_EQ(g_deletes, 1);
}

}  // namespace
