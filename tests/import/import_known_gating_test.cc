// dlmap import tests — src/import.c under a profile that combines two import keys no shipped profile does
// (known_gating_profile.yaml): version_gating known with unknown flag bits still refused, so flags_unknown is the one
// version refusal (values newer than the stamp are taken); and views only of compact permutations, other layouts
// copied, so copy=False of a broadcast is refused by the profile's view layout (strides_not_compact), while copy=None
// copies it. Each refusal runs the producer's deleter once (dlmap owns a tensor once it is handed over).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "dlmap/dlmap.h"
#include "dlmap/profile.h"

namespace {

int g_deleted = 0;
void CountDeleter(DLManagedTensorVersioned *) { g_deleted++; }

float g_data[4] = {1, 2, 3, 4};

DLManagedTensorVersioned Tensor(int64_t *shape, int64_t *strides) {
  DLManagedTensorVersioned tensor;
  std::memset(&tensor, 0, sizeof tensor);
  tensor.version = {1, 0};
  tensor.deleter = CountDeleter;
  tensor.dl_tensor.data = g_data;
  tensor.dl_tensor.device = {kDLCPU, 0};
  tensor.dl_tensor.ndim = 1;
  tensor.dl_tensor.dtype = {kDLFloat, 32, 1};
  tensor.dl_tensor.shape = shape;
  tensor.dl_tensor.strides = strides;
  return tensor;
}

TEST(ImportKnownGating, TheProfileIsTheFixtures) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  EXPECT_STREQ(profile->name, "array_api_known_gating");
  EXPECT_EQ(profile->import_gating, DLMAP_GATING_KNOWN);
  EXPECT_FALSE(profile->unknown_flags_ignored);
  EXPECT_EQ(profile->view_layout, DLMAP_LAYOUT_COMPACT_PERMUTATION);
  EXPECT_FALSE(profile->other_layouts_refused);
}

TEST(ImportKnownGating, OnlyUnknownFlagBitsAreRefused) {
  g_deleted = 0;
  int64_t shape[1] = {4};
  DLManagedTensorVersioned tensor = Tensor(shape, nullptr);
  const uint64_t unknown_bit = uint64_t{1} << 40;
  tensor.flags = unknown_bit | DLPACK_FLAG_BITMASK_READ_ONLY;
  const dlmap_import_request request = dlmap_import_request_default();
  dlmap_imported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_import_versioned(&tensor, &request, &out, &err), DLMAP_ERR_FLAGS_UNKNOWN);
  EXPECT_STREQ(err.id, "flags_unknown");
  EXPECT_NE(std::string(err.message).find("(0x10000000000)"), std::string::npos) << err.message;  // the unknown bit
  EXPECT_EQ(g_deleted, 1);

  tensor.flags = DLPACK_FLAG_BITMASK_READ_ONLY;  // known bits only
  ASSERT_EQ(dlmap_import_versioned(&tensor, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(out.tensor.data, static_cast<void *>(g_data));
  dlmap_imported_release(&out);
  EXPECT_EQ(g_deleted, 2);
}

TEST(ImportKnownGating, ALayoutTheProfileViewsNotIsCopiedOrRefusedWithCopyFalse) {
  g_deleted = 0;
  int64_t shape[1] = {4};
  int64_t broadcast[1] = {0};  // every element the first: no permutation of a compact layout
  DLManagedTensorVersioned tensor = Tensor(shape, broadcast);
  dlmap_import_request never = dlmap_import_request_default();
  never.copy = DLMAP_COPY_NEVER;
  dlmap_imported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_import_versioned(&tensor, &never, &out, &err), DLMAP_ERR_STRIDES_NOT_COMPACT);
  EXPECT_STREQ(err.id, "strides_not_compact");
  EXPECT_EQ(g_deleted, 1);

  const dlmap_import_request if_needed = dlmap_import_request_default();
  ASSERT_EQ(dlmap_import_versioned(&tensor, &if_needed, &out, &err), DLMAP_OK) << err.message;
  EXPECT_TRUE(out.copied);
  const float *values = static_cast<const float *>(out.tensor.data);
  for (int i = 0; i < 4; i++) EXPECT_EQ(values[i], g_data[0]);
  dlmap_imported_release(&out);
  EXPECT_EQ(g_deleted, 2);
}

}  // namespace
