// Spec-extension test — a library built from the facts and child_profile.yaml (`extends: jax`, three changed keys)
// follows JAX's profile except where the child changes it, and says which profile each error's text comes from.
// The expected values are the fixture's and spec/profiles/jax.yaml's, written out by hand.
#include <gtest/gtest.h>

#include "dlmap/dlmap.h"

namespace {

TEST(ChildProfile, NameAndVersionedOutput) {
  EXPECT_STREQ(dlmap_profile_current()->name, "jax_versioned");
  dlmap_struct_kind out = DLMAP_STRUCT_NONE;
  dlmap_error err;
  EXPECT_EQ(dlmap_profile_struct_lookup(true, dlmap_version{1, 0}, &out, &err), DLMAP_OK);
  EXPECT_EQ(out, DLMAP_STRUCT_VERSIONED) << "the child's ranges replace JAX's";
  EXPECT_EQ(dlmap_profile_struct_lookup(true, dlmap_version{0, 8}, &out, &err), DLMAP_OK);
  EXPECT_EQ(out, DLMAP_STRUCT_LEGACY);
  EXPECT_EQ(dlmap_profile_struct_lookup(true, dlmap_version{0, 4}, &out, &err), DLMAP_ERR_MAX_VERSION_TOO_OLD);
  EXPECT_STREQ(err.message, "jax_versioned needs DLPack (0, 5) or newer; asked for ((0, 4)).");
}

TEST(ChildProfile, EverythingElseIsJax) {
  const dlmap_profile_info *p = dlmap_profile_current();
  EXPECT_EQ(p->absent_struct, DLMAP_STRUCT_LEGACY);  // max_version.absent: not named by the child
  EXPECT_EQ(p->request, DLMAP_REQUEST_LEGACY);
  EXPECT_TRUE(p->other_layouts_refused);
  EXPECT_FALSE(dlmap_profile_device_policy(DLMAP_DEVICE_METAL).import_accepted);
  EXPECT_TRUE(dlmap_profile_device_policy(DLMAP_DEVICE_TPUHOST).import_accepted);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_CAPSULE_CONSUMED)->kind, DLMAP_KIND_RUNTIME_ERROR);
}

TEST(ChildProfile, ErrorOrigins) {
  dlmap_error_origin o = dlmap_profile_error_origin(DLMAP_ERR_MAX_VERSION_TOO_OLD);
  EXPECT_STREQ(o.message, "jax_versioned");
  EXPECT_EQ(o.kind, nullptr);
  EXPECT_EQ(o.status, nullptr);
  o = dlmap_profile_error_origin(DLMAP_ERR_STRIDES_NOT_COMPACT);  // JAX's kind and text, the child's status word
  EXPECT_STREQ(o.kind, "jax");
  EXPECT_STREQ(o.message, "jax");
  EXPECT_STREQ(o.status, "jax_versioned");
  o = dlmap_profile_error_origin(DLMAP_ERR_DLPACK_SHARDED);  // the catalogue's own
  EXPECT_EQ(o.kind, nullptr);
  EXPECT_EQ(o.message, nullptr);
  EXPECT_EQ(o.status, nullptr);
  o = dlmap_profile_error_origin(-12345);
  EXPECT_EQ(o.message, nullptr);
  EXPECT_STREQ(dlmap_error_describe(DLMAP_ERR_STRIDES_NOT_COMPACT)->message_template,
               "INVALID_ARGUMENT: Only DLPack tensors with trivial (compact) striding are supported; i.e., tensors "
               "whose striding represents a transposition of the underlying buffer but not broadcasting. Dimensions "
               "were: [{shape:packed}], strides were [{strides:packed}].");
}

// export.byte_offset fold: a view's offset moves into data (data is an address on the host), the same through the
// full export, the thread's remembered plan (a layout exported twice in a row) and a prepared plan.
TEST(ChildProfile, ByteOffsetFoldedIntoData) {
  ASSERT_TRUE(dlmap_profile_current()->byte_offset_folded);
  alignas(8) static float buffer[8];
  const int64_t shape[] = {4};
  dlmap_array array = dlmap_array_default();
  array.data = buffer;
  array.dtype = DLDataType{kDLFloat, 32, 1};
  array.ndim = 1;
  array.shape = shape;
  array.byte_offset = 3 * sizeof(float);
  const dlmap_export_request request = dlmap_export_request_default();
  dlmap_error err;
  for (int round = 0; round < 3; round++) {  // the third is served from the remembered plan
    dlmap_exported out;
    ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
    EXPECT_EQ(out.legacy->dl_tensor.data, static_cast<void *>(buffer + 3)) << "round " << round;
    EXPECT_EQ(out.legacy->dl_tensor.byte_offset, 0u) << "round " << round;
    out.legacy->deleter(out.legacy);
  }
  dlmap_export_plan *plan = nullptr;
  ASSERT_EQ(dlmap_export_plan_create(&array, &request, &plan, &err), DLMAP_OK) << err.message;
  static float other[8];
  dlmap_exported out;
  ASSERT_EQ(dlmap_export_planned(plan, other, nullptr, nullptr, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(out.legacy->dl_tensor.data, static_cast<void *>(other + 3));
  EXPECT_EQ(out.legacy->dl_tensor.byte_offset, 0u);
  out.legacy->deleter(out.legacy);
  dlmap_export_plan_free(plan);
}

// Where no dlmap backend serves the device type, data may be a handle (OpenCL, Metal): dlmap cannot tell, so the
// offset stays in byte_offset (jax exports oneAPI arrays, which no backend serves).
TEST(ChildProfile, ByteOffsetKeptWhereNoBackendServesTheType) {
  static float buffer[8];
  const int64_t shape[] = {4};
  dlmap_array array = dlmap_array_default();
  array.data = buffer;
  array.device_type = DLMAP_DEVICE_ONEAPI;
  array.dtype = DLDataType{kDLFloat, 32, 1};
  array.ndim = 1;
  array.shape = shape;
  array.byte_offset = 8;
  const dlmap_export_request request = dlmap_export_request_default();
  dlmap_error err;
  dlmap_exported out;
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(out.legacy->dl_tensor.data, static_cast<void *>(buffer));
  EXPECT_EQ(out.legacy->dl_tensor.byte_offset, 8u);
  out.legacy->deleter(out.legacy);
}

}  // namespace
