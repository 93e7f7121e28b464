// Export's remembered plan (src/export_plan_cache.c) against calls that differ from it in one compared thing, through
// both copies of the reuse check: dlmap__export_remembered's (is the plan served?) and dlmap_export's own, where
// a call that must not be served shows by what its export does. A NULL shape, a NULL data pointer with elements, a
// strideless layout of other dims, an allocator or device allocator with another function or context: none is served,
// and each export made with them is the call's own (its allocator allocates and releases; a host view never asks the
// device allocator, whichever plan is remembered). Each check runs on a thread of its own, whose memory starts empty.
#include <cstddef>
#include <cstdint>
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
const int64_t kOtherShape[2] = {3, 2};

dlmap_array Array2x3() {  // strideless: the compact row-major layout
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

// Allocators that count, by their context, what they hand out and take back; two functions of each kind, counted
// apart, so that a block shows which ones made and keep it.
struct Counts {
  int allocated = 0;
  int allocated_other = 0;
  int released = 0;
  int released_other = 0;
};
void *CountingAllocate(void *ctx, size_t size, size_t alignment) {
  static_cast<Counts *>(ctx)->allocated++;
  return dlmap_allocator_default()->allocate(dlmap_allocator_default()->ctx, size, alignment);
}
void *OtherAllocate(void *ctx, size_t size, size_t alignment) {
  static_cast<Counts *>(ctx)->allocated_other++;
  return dlmap_allocator_default()->allocate(dlmap_allocator_default()->ctx, size, alignment);
}
void CountingRelease(void *ctx, void *pointer) {
  static_cast<Counts *>(ctx)->released++;
  dlmap_allocator_default()->release(dlmap_allocator_default()->ctx, pointer);
}
void OtherRelease(void *ctx, void *pointer) {
  static_cast<Counts *>(ctx)->released_other++;
  dlmap_allocator_default()->release(dlmap_allocator_default()->ctx, pointer);
}

// Device allocators that count any call: a host view's export never makes one.
int g_device_calls = 0;
void *DeviceAllocate(void *, size_t, int32_t, int32_t, void *) {
  g_device_calls++;
  return nullptr;
}
void *OtherDeviceAllocate(void *, size_t, int32_t, int32_t, void *) {
  g_device_calls++;
  return nullptr;
}
void DeviceRelease(void *, void *, size_t, int32_t, int32_t, void *) { g_device_calls++; }
void OtherDeviceRelease(void *, void *, size_t, int32_t, int32_t, void *) { g_device_calls++; }

// Exports array per request through dlmap_export and requires the plain host view of array: its data, shape and
// strides as given (none: compact), released at once.
void ExpectView(const dlmap_array &array, const dlmap_export_request &request) {
  dlmap_exported out{};
  dlmap_error err{};
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  const DLTensor &t = plan_equivalence::TensorOf(out);
  EXPECT_FALSE(out.copied);
  EXPECT_EQ(t.data, array.data);
  ASSERT_EQ(t.ndim, array.ndim);
  for (int32_t i = 0; i < t.ndim; i++) EXPECT_EQ(t.shape[i], array.shape[i]) << "dimension " << i;
  plan_equivalence::Release(out);
}

TEST(RememberedMismatch, ALayoutTheReuseCheckCannotCompareIsNotServed) {
  std::thread([] {
    const dlmap_array array = Array2x3();
    const dlmap_export_request request = dlmap_export_request_default();
    Remember(array, request);
    ASSERT_TRUE(Served(array, request)) << "the layout is not remembered";
    dlmap_array no_shape = array;  // shape_null, which the steps report
    no_shape.shape = nullptr;
    EXPECT_FALSE(Served(no_shape, request));
    dlmap_array no_data = array;  // data_null: elements and no data pointer
    no_data.data = nullptr;
    EXPECT_FALSE(Served(no_data, request));
    dlmap_exported out{};
    dlmap_error err{};
    EXPECT_NE(dlmap_export(&no_data, &request, &out, &err), DLMAP_OK);
    EXPECT_STREQ(err.id, "data_null");
    dlmap_array other_dims = array;  // strideless too, of other dims: another layout
    other_dims.shape = kOtherShape;
    EXPECT_FALSE(Served(other_dims, request));
    ExpectView(other_dims, request);
    EXPECT_TRUE(Served(array, request));  // a layout exported once is not remembered: the plan stays
  }).join();
}

TEST(RememberedMismatch, AnAllocatorWithAnotherFunctionOrContextIsNotServed) {
  Counts a, b;
  const dlmap_allocator kA = {CountingAllocate, CountingRelease, &a};
  const dlmap_allocator kCases[] = {
      {OtherAllocate, CountingRelease, &a},    // another allocate
      {CountingAllocate, OtherRelease, &a},    // another release
      {CountingAllocate, CountingRelease, &b}  // another context
  };
  for (const dlmap_allocator &other : kCases) {
    std::thread([&] {
      const dlmap_array array = Array2x3();
      dlmap_export_request with_a = dlmap_export_request_default();
      with_a.allocator = &kA;
      Remember(array, with_a);
      ASSERT_TRUE(Served(array, with_a)) << "the layout is not remembered";
      dlmap_export_request request = dlmap_export_request_default();
      request.allocator = &other;
      EXPECT_FALSE(Served(array, request));
      // Through dlmap_export the block is the call's allocator's: its function and context make it, its release
      // frees it (a served export would have used the plan's kA: CountingAllocate, CountingRelease, &a).
      Counts *const ctx = static_cast<Counts *>(other.ctx);
      const Counts before = *ctx;
      ExpectView(array, request);
      if (other.allocate == OtherAllocate) {
        EXPECT_EQ(ctx->allocated_other, before.allocated_other + 1);
        EXPECT_EQ(ctx->allocated, before.allocated);
      } else {
        EXPECT_EQ(ctx->allocated, before.allocated + 1);
      }
      if (other.release == OtherRelease) {
        EXPECT_EQ(ctx->released_other, before.released_other + 1);
        EXPECT_EQ(ctx->released, before.released);
      } else {
        EXPECT_EQ(ctx->released, before.released + 1);
      }
    }).join();
  }
  EXPECT_EQ(a.allocated + a.allocated_other, a.released + a.released_other);
  EXPECT_EQ(b.allocated + b.allocated_other, b.released + b.released_other);
  EXPECT_GT(b.allocated, 0);
}

TEST(RememberedMismatch, ADeviceAllocatorWithAnotherFunctionOrContextIsNotServed) {
  int ctx_a = 0, ctx_b = 0;
  const dlmap_device_allocator kA = {DeviceAllocate, DeviceRelease, &ctx_a};
  const dlmap_device_allocator kCases[] = {
      {OtherDeviceAllocate, DeviceRelease, &ctx_a},  // another allocate
      {DeviceAllocate, OtherDeviceRelease, &ctx_a},  // another release
      {DeviceAllocate, DeviceRelease, &ctx_b}        // another context
  };
  g_device_calls = 0;
  for (const dlmap_device_allocator &other : kCases) {
    std::thread([&] {
      const dlmap_array array = Array2x3();
      dlmap_export_request with_a = dlmap_export_request_default();
      with_a.device_allocator = &kA;
      Remember(array, with_a);
      ASSERT_TRUE(Served(array, with_a)) << "the layout is not remembered";
      ExpectView(array, with_a);  // through dlmap_export, served
      dlmap_export_request request = dlmap_export_request_default();
      request.device_allocator = &other;
      EXPECT_FALSE(Served(array, request));
      Remember(array, with_a);
      ExpectView(array, request);  // through dlmap_export, against the plan with kA
      Remember(array, with_a);
      ExpectView(array, dlmap_export_request_default());  // none, where the plan has one
    }).join();
  }
  std::thread([&] {  // one, where the plan has none
    const dlmap_array array = Array2x3();
    Remember(array, dlmap_export_request_default());
    dlmap_export_request with_a = dlmap_export_request_default();
    with_a.device_allocator = &kA;
    ExpectView(array, with_a);
  }).join();
  EXPECT_EQ(g_device_calls, 0);  // host views: the device allocator is only ever a copy's
}

TEST(RememberedMismatch, ARequestThatDefersTheStreamSyncIsNotServedForOneThatDoesNot) {
  std::thread([] {
    const dlmap_array array = Array2x3();
    const dlmap_export_request request = dlmap_export_request_default();
    Remember(array, request);
    ASSERT_TRUE(Served(array, request)) << "the layout is not remembered";
    dlmap_export_request deferring = request;
    deferring.defer_stream_sync = true;
    EXPECT_FALSE(Served(array, deferring));
    Remember(array, request);
    ExpectView(array, deferring);  // through dlmap_export: a host view, deferred or not
  }).join();
}

}  // namespace
