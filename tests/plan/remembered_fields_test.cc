// The reuse check of export's remembered plan (src/export_plan_cache.c) cannot miss a field: once a plan is remembered,
// changing any byte of the array or the request up to its struct_size stops it being served, but for the fields
// listed here, which differ per call (data, owner, release: still served) or are compared by what they point at (shape,
// strides, the allocators: changing what they point at stops it). The bytes come from sizeof and offsetof, so a field
// added to either struct later is changed here too without an edit, and a check that ignored it fails.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"
#include "tests/plan/plan_equivalence.h"
#include "tests/plan/plan_tables.h"

extern "C" {
#include "src/export_plan_cache.h"
}

namespace {

using plan_tables::g_data;

// A field as a byte range of its struct.
struct Field {
  const char *name;
  size_t offset, size;
  bool Holds(size_t byte) const { return byte >= offset && byte < offset + size; }
};
#define FIELD(type, field) Field{#field, offsetof(type, field), sizeof(((type *)nullptr)->field)}

// The fields the check does not compare byte for byte (every other byte it must).
const Field kArrayPerCall[] = {FIELD(dlmap_array, data), FIELD(dlmap_array, owner), FIELD(dlmap_array, release)};
const Field kArrayPointedAt[] = {FIELD(dlmap_array, shape), FIELD(dlmap_array, strides)};
const Field kRequestPointedAt[] = {FIELD(dlmap_export_request, allocator),
                                   FIELD(dlmap_export_request, device_allocator)};

template <size_t N>
bool LeftOut(const Field (&fields)[N], size_t byte) {
  for (const Field &f : fields) {
    if (f.Holds(byte)) return true;
  }
  return false;
}

const int64_t kShape[2] = {2, 3};
const int64_t kStrides[2] = {3, 1};
const dlmap_allocator kAllocator = plan_tables::kOwnAllocator;
int g_owner = 0;
void Release(void *) {}

// The array and request a plan is remembered for (built from _default(), copied as bytes: padding is compared too).
dlmap_array BaseArray() {
  dlmap_array a = dlmap_array_default();
  a.data = g_data;
  a.dtype = plan_tables::kF32;
  a.ndim = 2;
  a.shape = kShape;
  a.strides = kStrides;
  a.owner = &g_owner;
  a.release = Release;
  return a;
}

dlmap_export_request BaseRequest() {
  dlmap_export_request r = dlmap_export_request_default();
  r.allocator = &kAllocator;
  return r;
}

// Whether this thread's remembered plan serves array and request (exactly as dlmap_export reads a caller's structs of
// this header's size); a served export is checked to carry the call's data and released.
bool Served(const dlmap_array &array, const dlmap_export_request &request) {
  dlmap_exported out{};
  dlmap_error err{};
  const int32_t status = dlmap__export_remembered(&array, &request, &out, &err);
  if (status == DLMAP__EXPORT_NOT_REMEMBERED) return false;
  EXPECT_EQ(status, DLMAP_OK) << err.message;
  if (status != DLMAP_OK) return true;
  EXPECT_EQ(plan_equivalence::TensorOf(out).data, array.data);
  plan_equivalence::Release(out);
  return true;
}

// Runs body on a new thread whose remembered plan is that of BaseArray() and BaseRequest() (exported twice: a layout
// is remembered when it comes twice in a row).
template <typename Body>
void WithBaseRemembered(Body body) {
  std::thread([&] {
    for (int i = 0; i < 2; i++) {
      const dlmap_array array = BaseArray();
      const dlmap_export_request request = BaseRequest();
      dlmap_exported out{};
      dlmap_error err{};
      ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
      plan_equivalence::Release(out);
    }
    ASSERT_TRUE(Served(BaseArray(), BaseRequest())) << "the base export is not remembered";
    body();
    EXPECT_TRUE(Served(BaseArray(), BaseRequest())) << "the checks above changed the remembered plan";
  }).join();
}

TEST(RememberedFields, EveryArrayByteButThoseLeftOutIsCompared) {
  WithBaseRemembered([] {
    int compared = 0;
    for (size_t byte = 0; byte < DLMAP_ARRAY_STRUCT_SIZE; byte++) {
      if (LeftOut(kArrayPerCall, byte) || LeftOut(kArrayPointedAt, byte)) continue;
      dlmap_array array = BaseArray();
      reinterpret_cast<unsigned char *>(&array)[byte] ^= 1;
      EXPECT_FALSE(Served(array, BaseRequest())) << "dlmap_array byte " << byte << " changed";
      compared++;
    }
    EXPECT_GT(compared, 0);
  });
}

TEST(RememberedFields, EveryRequestByteButThoseLeftOutIsCompared) {
  WithBaseRemembered([] {
    int compared = 0;
    for (size_t byte = 0; byte < DLMAP_EXPORT_REQUEST_STRUCT_SIZE; byte++) {
      if (LeftOut(kRequestPointedAt, byte)) continue;
      dlmap_export_request request = BaseRequest();
      reinterpret_cast<unsigned char *>(&request)[byte] ^= 1;
      EXPECT_FALSE(Served(BaseArray(), request)) << "dlmap_export_request byte " << byte << " changed";
      compared++;
    }
    EXPECT_GT(compared, 0);
  });
}

TEST(RememberedFields, PerCallFieldsStillServe) {
  WithBaseRemembered([] {
    int owner = 0;
    dlmap_array array = BaseArray();
    array.data = g_data + 64;
    array.owner = &owner;
    array.release = nullptr;
    EXPECT_TRUE(Served(array, BaseRequest()));
  });
}

TEST(RememberedFields, PointedAtFieldsAreComparedByWhatTheyPointAt) {
  WithBaseRemembered([] {
    const int64_t same_shape[2] = {2, 3}, same_strides[2] = {3, 1};
    const dlmap_allocator same_allocator = kAllocator;
    dlmap_array array = BaseArray();
    array.shape = same_shape;
    array.strides = same_strides;
    dlmap_export_request request = BaseRequest();
    request.allocator = &same_allocator;
    EXPECT_TRUE(Served(array, request)) << "equal copies elsewhere";

    const int64_t other_shape[2] = {2, 4}, other_strides[2] = {4, 1};
    array = BaseArray();
    array.shape = other_shape;
    EXPECT_FALSE(Served(array, BaseRequest())) << "shape";
    array = BaseArray();
    array.strides = other_strides;
    EXPECT_FALSE(Served(array, BaseRequest())) << "strides";
    array = BaseArray();
    array.strides = nullptr;
    EXPECT_FALSE(Served(array, BaseRequest())) << "strides NULL";

    int other_context = 0;
    dlmap_allocator other_allocator = kAllocator;
    other_allocator.ctx = &other_context;
    request = BaseRequest();
    request.allocator = &other_allocator;
    EXPECT_FALSE(Served(BaseArray(), request)) << "allocator context";
    request.allocator = nullptr;
    EXPECT_FALSE(Served(BaseArray(), request)) << "the default allocator";
    const dlmap_device_allocator device_allocator = {nullptr, nullptr, &other_context};
    request = BaseRequest();
    request.device_allocator = &device_allocator;
    EXPECT_FALSE(Served(BaseArray(), request)) << "a device allocator";
  });
}

}  // namespace
