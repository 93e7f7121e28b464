// Export plans (src/export_plan_cache.c) where something fails or differs from the plain case: a plan whose
// allocation fails, a remembered plan whose block allocation fails (through dlmap_export and through the reuse check's
// own entry, dlmap__export_remembered), a request with a device allocator (the plan keeps its own copy, and the
// remembered plan is served only for the same functions and context), and remembered scalars and empty arrays whose
// data is NULL. Each check that depends on the remembered plan runs on a thread of its own, whose memory starts empty.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"
#include "tests/plan/plan_equivalence.h"

extern "C" {
#include "src/export_plan_cache.h"
}

namespace {

float g_data[16];
const int64_t kShape[2] = {2, 3};

// An allocator that counts what it hands out and takes back, and refuses while `failing`.
struct Counting {
  bool failing = false;
  int allocated = 0;
  int released = 0;
};

void *CountingAllocate(void *ctx, size_t size, size_t alignment) {
  Counting *c = static_cast<Counting *>(ctx);
  if (c->failing) return nullptr;
  c->allocated++;
  return dlmap_allocator_default()->allocate(dlmap_allocator_default()->ctx, size, alignment);
}

void CountingRelease(void *ctx, void *pointer) {
  static_cast<Counting *>(ctx)->released++;
  dlmap_allocator_default()->release(dlmap_allocator_default()->ctx, pointer);
}

// A device allocator that is never asked (the exports here are host views): only its identity matters.
void *NeverAllocate(void *, size_t, int32_t, int32_t, void *) { return nullptr; }
void NeverRelease(void *, void *, size_t, int32_t, int32_t, void *) {}

dlmap_array Array2x3() {
  dlmap_array a = dlmap_array_default();
  a.data = g_data;
  a.dtype = {DLMAP_DTYPE_FLOAT, 32, 1};
  a.ndim = 2;
  a.shape = kShape;
  return a;
}

// Exports array per request twice on this thread, so that its layout is remembered, releasing both.
void Remember(const dlmap_array &array, const dlmap_export_request &request) {
  for (int i = 0; i < 2; i++) {
    dlmap_exported out{};
    dlmap_error err{};
    ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
    plan_equivalence::Release(out);
  }
}

// Whether the remembered plan serves array and request; a served export is released.
bool Served(const dlmap_array &array, const dlmap_export_request &request) {
  dlmap_exported out{};
  dlmap_error err{};
  const int32_t status = dlmap__export_remembered(&array, &request, &out, &err);
  if (status == DLMAP__EXPORT_NOT_REMEMBERED) return false;
  EXPECT_EQ(status, DLMAP_OK) << err.message;
  if (status == DLMAP_OK) plan_equivalence::Release(out);
  return true;
}

TEST(PlanFailures, APlanWhoseAllocationFailsIsOutOfMemory) {
  Counting counting;
  counting.failing = true;
  const dlmap_allocator allocator = {CountingAllocate, CountingRelease, &counting};
  dlmap_export_request request = dlmap_export_request_default();
  request.allocator = &allocator;
  const dlmap_array array = Array2x3();
  dlmap_export_plan *plan = nullptr;
  dlmap_error err{};
  EXPECT_EQ(dlmap_export_plan_create(&array, &request, &plan, &err), DLMAP_ERR_OUT_OF_MEMORY);
  EXPECT_STREQ(err.id, "out_of_memory");
  EXPECT_EQ(plan, nullptr);  // nothing handed out
  EXPECT_EQ(counting.allocated, 0);
}

TEST(PlanFailures, ARememberedExportWhoseBlockAllocationFailsIsOutOfMemory) {
  std::thread([] {
    Counting counting;
    const dlmap_allocator allocator = {CountingAllocate, CountingRelease, &counting};
    dlmap_export_request request = dlmap_export_request_default();
    request.allocator = &allocator;
    const dlmap_array array = Array2x3();
    Remember(array, request);
    ASSERT_TRUE(Served(array, request)) << "the layout is not remembered";
    counting.failing = true;  // the same functions and context: the remembered plan still serves, and its block fails
    dlmap_exported out{};
    dlmap_error err{};
    EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_OUT_OF_MEMORY);
    EXPECT_STREQ(err.id, "out_of_memory");
    EXPECT_EQ(out.legacy, nullptr);
    EXPECT_EQ(out.versioned, nullptr);
    dlmap_error remembered_err{};
    EXPECT_EQ(dlmap__export_remembered(&array, &request, &out, &remembered_err), DLMAP_ERR_OUT_OF_MEMORY);
    EXPECT_STREQ(remembered_err.id, "out_of_memory");
    counting.failing = false;
    EXPECT_TRUE(Served(array, request));  // the failure left the plan as it was
    EXPECT_EQ(counting.allocated, counting.released);
  }).join();
}

TEST(PlanFailures, APlanKeepsItsOwnCopyOfTheDeviceAllocator) {
  dlmap_device_allocator device = {NeverAllocate, NeverRelease, nullptr};
  dlmap_export_request request = dlmap_export_request_default();
  request.device_allocator = &device;
  const dlmap_array array = Array2x3();
  dlmap_export_plan *plan = nullptr;
  dlmap_error err{};
  ASSERT_EQ(dlmap_export_plan_create(&array, &request, &plan, &err), DLMAP_OK) << err.message;
  std::memset(&device, 0xff, sizeof device);  // the caller's struct is gone; the plan must not read it
  dlmap_exported out{};
  ASSERT_EQ(dlmap_export_planned(plan, g_data + 4, nullptr, nullptr, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(plan_equivalence::TensorOf(out).data, g_data + 4);
  plan_equivalence::Release(out);
  dlmap_export_plan_free(plan);
}

TEST(PlanFailures, TheRememberedPlanIsServedOnlyForTheSameDeviceAllocator) {
  std::thread([] {
    int ctx_a = 0, ctx_b = 0;
    const dlmap_device_allocator a = {NeverAllocate, NeverRelease, &ctx_a};
    const dlmap_device_allocator a_again = a;  // another struct with the same functions and context
    const dlmap_device_allocator b = {NeverAllocate, NeverRelease, &ctx_b};
    const dlmap_array array = Array2x3();
    dlmap_export_request with_a = dlmap_export_request_default();
    with_a.device_allocator = &a;
    Remember(array, with_a);
    dlmap_export_request same = dlmap_export_request_default();
    same.device_allocator = &a_again;
    EXPECT_TRUE(Served(array, same));
    dlmap_export_request other = dlmap_export_request_default();
    other.device_allocator = &b;
    EXPECT_FALSE(Served(array, other));
    EXPECT_FALSE(Served(array, dlmap_export_request_default()));  // none, where the plan has one
  }).join();
  std::thread([] {
    int ctx = 0;
    const dlmap_device_allocator d = {NeverAllocate, NeverRelease, &ctx};
    const dlmap_array array = Array2x3();
    Remember(array, dlmap_export_request_default());
    dlmap_export_request with_d = dlmap_export_request_default();
    with_d.device_allocator = &d;
    EXPECT_FALSE(Served(array, with_d));  // one, where the plan has none
    EXPECT_TRUE(Served(array, dlmap_export_request_default()));
  }).join();
}

TEST(PlanFailures, RememberedScalarsAndEmptyArrays) {
  std::thread([] {  // a scalar: the profile's scalar_dims decides whether the tensor's dims point into the block
    dlmap_array scalar = dlmap_array_default();
    scalar.data = g_data;
    scalar.dtype = {DLMAP_DTYPE_FLOAT, 32, 1};
    Remember(scalar, dlmap_export_request_default());
    dlmap_exported out{};
    dlmap_error err{};
    scalar.data = g_data + 1;
    const dlmap_export_request request = dlmap_export_request_default();
    ASSERT_EQ(dlmap__export_remembered(&scalar, &request, &out, &err), DLMAP_OK)
        << err.message;
    const DLTensor &t = plan_equivalence::TensorOf(out);
    EXPECT_EQ(t.ndim, 0);
    EXPECT_EQ(t.data, g_data + 1);
    EXPECT_EQ(t.shape != nullptr, dlmap_profile_current()->scalar_dims_empty);
    plan_equivalence::Release(out);
  }).join();
  std::thread([] {  // no elements and a NULL data pointer: served, with NULL data
    static const int64_t kEmpty[1] = {0};
    dlmap_array empty = dlmap_array_default();
    empty.data = nullptr;
    empty.dtype = {DLMAP_DTYPE_FLOAT, 32, 1};
    empty.ndim = 1;
    empty.shape = kEmpty;
    Remember(empty, dlmap_export_request_default());
    dlmap_exported out{};
    dlmap_error err{};
    const dlmap_export_request request = dlmap_export_request_default();
    ASSERT_EQ(dlmap__export_remembered(&empty, &request, &out, &err), DLMAP_OK) << err.message;
    EXPECT_EQ(plan_equivalence::TensorOf(out).data, nullptr);
    EXPECT_EQ(plan_equivalence::TensorOf(out).shape[0], 0);
    plan_equivalence::Release(out);
  }).join();
}

// While an export is served from the remembered plan, the reuse check answers "not remembered" to any export made
// from inside it (an allocator's, on the same thread), so that the nested one never copies the plan being copied.
int g_nested_status = 0;
bool g_ask = false;                                  // set for the one served export under test
const dlmap_export_request *g_asking_request = nullptr;  // the served export's own request: the nested call's too
void *AskingAllocate(void *, size_t size, size_t alignment) {
  if (g_ask) {
    g_ask = false;  // once: a nested export that were served would allocate here again
    const dlmap_array array = Array2x3();
    dlmap_exported out{};
    dlmap_error err{};
    g_nested_status = dlmap__export_remembered(&array, g_asking_request, &out, &err);
    if (g_nested_status == DLMAP_OK) plan_equivalence::Release(out);
  }
  return dlmap_allocator_default()->allocate(dlmap_allocator_default()->ctx, size, alignment);
}
void AskingRelease(void *, void *pointer) { dlmap_allocator_default()->release(dlmap_allocator_default()->ctx, pointer); }

TEST(PlanFailures, TheReuseCheckIsClosedWhileAServedExportAllocates) {
  std::thread([] {
    const dlmap_allocator asking = {AskingAllocate, AskingRelease, nullptr};
    dlmap_export_request request = dlmap_export_request_default();
    request.allocator = &asking;
    const dlmap_array array = Array2x3();
    g_asking_request = &request;
    Remember(array, request);
    g_nested_status = 0;
    g_ask = true;
    dlmap_exported out{};
    dlmap_error err{};
    ASSERT_EQ(dlmap__export_remembered(&array, &request, &out, &err), DLMAP_OK) << err.message;  // served
    EXPECT_EQ(g_nested_status, DLMAP__EXPORT_NOT_REMEMBERED);
    EXPECT_EQ(plan_equivalence::TensorOf(out).data, static_cast<void *>(g_data));
    plan_equivalence::Release(out);
  }).join();
}

}  // namespace
