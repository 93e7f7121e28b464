// dlmap import tests — prepared and remembered imports (src/import.c) at their edges: a plan whose allocation fails is
// out_of_memory; a planned legacy import given no tensor, or no `out`, is invalid_argument (a given tensor is still
// released once); the thread's remembered view plan serves only the request it was made under, so a caller built with
// an older, smaller request struct and a legacy import asking copy=True each get the full import's result; a plan
// serves no tensor without a shape or with an overflowing byte_offset.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "dlmap/dlmap.h"

namespace {

float g_data[6] = {1, 2, 3, 4, 5, 6};
int64_t g_shape[2] = {2, 3};
int g_deleted = 0;

void DeleteLegacy(DLManagedTensor *) { g_deleted++; }

DLTensor Layout() {
  DLTensor t{};
  t.data = g_data;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = g_shape;
  return t;
}

DLManagedTensor Legacy() {
  DLManagedTensor m{};
  m.dl_tensor = Layout();
  m.deleter = DeleteLegacy;
  return m;
}

void *RefuseAllocate(void *, size_t, size_t) { return nullptr; }
void NeverRelease(void *, void *) {}

TEST(ImportPlanEdges, APlanWhoseAllocationFailsIsOutOfMemory) {
  const dlmap_allocator refusing = {RefuseAllocate, NeverRelease, nullptr};
  dlmap_import_request request = dlmap_import_request_default();
  request.allocator = &refusing;
  const DLTensor layout = Layout();
  dlmap_import_plan *plan = nullptr;
  dlmap_error err;
  EXPECT_EQ(dlmap_import_plan_create(&layout, false, {0, 8}, 0, &request, &plan, &err), DLMAP_ERR_OUT_OF_MEMORY);
  EXPECT_STREQ(err.id, "out_of_memory");
  EXPECT_EQ(plan, nullptr);
}

TEST(ImportPlanEdges, APlannedLegacyImportNeedsATensorAndAnOut) {
  const DLTensor layout = Layout();
  dlmap_import_plan *plan = nullptr;
  dlmap_error err;
  ASSERT_EQ(dlmap_import_plan_create(&layout, false, {0, 8}, 0, nullptr, &plan, &err), DLMAP_OK) << err.message;
  dlmap_imported out;
  EXPECT_EQ(dlmap_import_legacy_planned(plan, nullptr, &out, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("tensor"), std::string::npos) << err.message;
  g_deleted = 0;
  DLManagedTensor tensor = Legacy();
  EXPECT_EQ(dlmap_import_legacy_planned(plan, &tensor, nullptr, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("out"), std::string::npos) << err.message;
  EXPECT_EQ(g_deleted, 1) << "a tensor handed over is released, even on error";
  DLManagedTensor served = Legacy();  // control: the plan serves a tensor of its layout
  ASSERT_EQ(dlmap_import_legacy_planned(plan, &served, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(out.tensor.data, static_cast<void *>(g_data));
  dlmap_imported_release(&out);
  EXPECT_EQ(g_deleted, 2);
  dlmap_import_plan_free(plan);
}

// Imports a legacy view of Layout() twice with the default request (NULL), so that the thread remembers its plan.
void RememberLegacyView() {
  for (int i = 0; i < 2; i++) {
    DLManagedTensor tensor = Legacy();
    dlmap_imported out;
    dlmap_error err;
    ASSERT_EQ(dlmap_import_legacy(&tensor, nullptr, &out, &err), DLMAP_OK) << err.message;
    dlmap_imported_release(&out);
  }
}

TEST(ImportPlanEdges, TheRememberedViewServesOnlyItsOwnRequest) {
  std::thread([] {
    RememberLegacyView();
    dlmap_import_request copy = dlmap_import_request_default();
    copy.copy = DLMAP_COPY_ALWAYS;
    DLManagedTensor tensor = Legacy();
    dlmap_imported out;
    dlmap_error err;
    ASSERT_EQ(dlmap_import_legacy(&tensor, &copy, &out, &err), DLMAP_OK) << err.message;
    EXPECT_TRUE(out.copied) << "copy=True is not the remembered view's request";
    EXPECT_NE(out.tensor.data, static_cast<void *>(g_data));
    EXPECT_EQ(std::memcmp(out.tensor.data, g_data, sizeof g_data), 0);
    dlmap_imported_release(&out);
  }).join();
}

TEST(ImportPlanEdges, AnOlderRequestStructIsReadByItsOwnSize) {
  std::thread([] {
    RememberLegacyView();
    dlmap_import_request older = dlmap_import_request_default();
    older.struct_size = offsetof(dlmap_import_request, device_allocator);  // built before device_allocator
    older.copy = DLMAP_COPY_ALWAYS;
    DLManagedTensor tensor = Legacy();
    dlmap_imported out;
    dlmap_error err;
    ASSERT_EQ(dlmap_import_legacy(&tensor, &older, &out, &err), DLMAP_OK) << err.message;
    EXPECT_TRUE(out.copied);
    EXPECT_EQ(std::memcmp(out.tensor.data, g_data, sizeof g_data), 0);
    dlmap_imported_release(&out);
  }).join();
}

// A tensor that matches a plan in everything the plan compares first (flags, device, dtype, ndim, strides) but has
// no shape, or a byte_offset that overflows its address, is not served: the full import refuses it, releasing it once.
TEST(ImportPlanEdges, APlanRefusesATensorWithoutAShapeOrWithAnOverflowingOffset) {
  const DLTensor layout = Layout();
  dlmap_import_plan *plan = nullptr;
  dlmap_error err;
  ASSERT_EQ(dlmap_import_plan_create(&layout, false, {0, 8}, 0, nullptr, &plan, &err), DLMAP_OK) << err.message;
  dlmap_imported out;
  g_deleted = 0;
  DLManagedTensor no_shape = Legacy();
  no_shape.dl_tensor.shape = nullptr;
  EXPECT_EQ(dlmap_import_legacy_planned(plan, &no_shape, &out, &err), DLMAP_ERR_SHAPE_NULL);
  EXPECT_STREQ(err.id, "shape_null");
  EXPECT_EQ(g_deleted, 1);
  DLManagedTensor far = Legacy();
  far.dl_tensor.byte_offset = UINT64_MAX - 8;  // data + byte_offset wraps around the address space
  EXPECT_EQ(dlmap_import_legacy_planned(plan, &far, &out, &err), DLMAP_ERR_BYTE_OFFSET_OVERFLOW);
  EXPECT_STREQ(err.id, "byte_offset_overflow");
  EXPECT_EQ(g_deleted, 2);
  dlmap_import_plan_free(plan);
}

}  // namespace
