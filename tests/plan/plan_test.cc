// Prepared exchanges (dlmap_export_plan_create / dlmap_import_plan_create) against the unprepared calls: every array
// of a table crossed with every request of a table, exported both ways; every producer tensor of a table (legacy and
// versioned) crossed with every import request, imported both ways; and plans reused for tensors that differ from
// what they were made for, where the planned call must give what the unprepared call gives that tensor. The same
// source runs against each profile's library (BUILD): the property holds whatever the policy.
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"
#include "tests/plan/plan_equivalence.h"
#include "tests/plan/plan_tables.h"

namespace {

using plan_equivalence::ExpectSameExport;
using plan_equivalence::ExpectSameImport;

using namespace plan_tables;  // NOLINT: the tables are this file's vocabulary

TEST(PreparedExport, EveryArrayAndRequestAsUnprepared) {
  for (const ArrayCase &c : ArrayCases()) {
    for (const auto &[request_name, request] : ExportRequests()) {
      SCOPED_TRACE(c.name + ", " + request_name);
      g_released = 0;
      const dlmap_array array = MakeArray(c);
      const int succeeded = ExpectSameExport(array, request);
      EXPECT_EQ(g_released, succeeded) << "the owner is released once per export that succeeded";
    }
  }
}

// A plan made for one data pointer, used with others: NULL where there are elements, an unaligned one, and a
// different buffer all give what the unprepared export gives.
TEST(PreparedExport, OtherDataPointersAsUnprepared) {
  const ArrayCase compact{"compact", {2, 3}, {}};
  void *pointers[] = {g_data + 128, g_data + 1, nullptr};
  for (void *data : pointers) {
    for (const auto &[request_name, request] : ExportRequests()) {
      SCOPED_TRACE(request_name);
      g_released = 0;
      const int succeeded = ExpectSameExport(MakeArray(compact), request, data);
      EXPECT_EQ(g_released, succeeded);
    }
  }
}

TEST(PreparedExport, ArgumentsChecked) {
  const ArrayCase compact{"compact", {2, 3}, {}};
  dlmap_array array = MakeArray(compact);
  const dlmap_export_request request = dlmap_export_request_default();
  dlmap_error err{};
  EXPECT_EQ(dlmap_export_plan_create(&array, &request, nullptr, &err), DLMAP_ERR_INVALID_ARGUMENT);
  dlmap_export_plan *plan = nullptr;
  EXPECT_EQ(dlmap_export_plan_create(nullptr, &request, &plan, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  ASSERT_EQ(dlmap_export_plan_create(&array, &request, &plan, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(dlmap_export_planned(plan, g_data, nullptr, nullptr, nullptr, &err), DLMAP_ERR_INVALID_ARGUMENT);
  dlmap_exported out;
  EXPECT_EQ(dlmap_export_planned(nullptr, g_data, nullptr, nullptr, &out, &err), DLMAP_ERR_INVALID_ARGUMENT);
  dlmap_export_plan_free(plan);
  dlmap_export_plan_free(nullptr);
}

// A plan is read-only once made: threads export through one plan at once, each getting its own blocks.
TEST(PreparedExport, OnePlanManyThreads) {
  const ArrayCase compact{"compact", {2, 3}, {}};
  dlmap_array array = MakeArray(compact);
  array.owner = nullptr;
  array.release = nullptr;
  const dlmap_export_request request = dlmap_export_request_default();
  dlmap_export_plan *plan = nullptr;
  dlmap_error err{};
  ASSERT_EQ(dlmap_export_plan_create(&array, &request, &plan, &err), DLMAP_OK) << err.message;
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int i = 0; i < 4; i++) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 2000; n++) {
        dlmap_exported out;
        dlmap_error e;
        if (dlmap_export_planned(plan, g_data + 64 * i, nullptr, nullptr, &out, &e) != DLMAP_OK) {
          failures[i]++;
          continue;
        }
        const DLTensor &t = plan_equivalence::TensorOf(out);
        if (t.data != g_data + 64 * i || t.shape[1] != 3) failures[i]++;
        plan_equivalence::Release(out);
      }
    });
  }
  for (std::thread &t : threads) t.join();
  for (int f : failures) EXPECT_EQ(f, 0);
  dlmap_export_plan_free(plan);
}

// A producer's tensor over g_data, made afresh for each import; its deleter counts.
TEST(PreparedImport, EveryTensorAndRequestAsUnprepared) {
  for (const auto &c : TensorCases()) {
    for (const auto &[request_name, request] : ImportRequests()) {
      SCOPED_TRACE(c->name + ", " + request_name);
      g_deleted = 0;
      const int made = ExpectSameImport(*c, request);
      EXPECT_EQ(g_deleted, made) << "every tensor released exactly once";
    }
  }
}

// A plan made for a 2x3 tensor of each struct (strides NULL, then explicit), used for every other tensor of the table: where one differs in
// anything the checks read (shape, strides, dtype, device, version, flags, addresses), the planned import must give
// what the unprepared one gives it.
TEST(PreparedImport, PlanForOneTensorUsedForOthers) {
  const auto cases = TensorCases();
  for (int d = 0; d < 4; d++) {
    const bool v = d % 2 == 1, strided = d >= 2;
    TensorCase described(std::string(v ? "versioned" : "legacy") + (strided ? " explicit strides" : " compact"), v,
                         {2, 3}, strided ? std::vector<int64_t>{3, 1} : std::vector<int64_t>{});
    for (const auto &c : cases) {
      for (const auto &[request_name, request] : ImportRequests()) {
        SCOPED_TRACE(c->name + " through the plan for " + described.name + ", " + request_name);
        g_deleted = 0;
        const int made = ExpectSameImport(*c, request, described);
        EXPECT_EQ(g_deleted, made);
      }
    }
  }
}

// The match compares every dimension (two at a time with SSE2, the odd one alone): for plans of ndim 1 to 9, with
// strides sent and not, a tensor that differs from the description in one extent or one stride, at each position,
// must get what the unprepared import gives it (a wider extent reaches past the strides; a changed stride is not
// row-major, so row-major requests copy it).
TEST(PreparedImport, EveryDimensionCompared) {
  for (int ndim = 1; ndim <= 9; ndim++) {
    const std::vector<int64_t> shape(static_cast<size_t>(ndim), 2);
    std::vector<int64_t> compact(static_cast<size_t>(ndim), 1);
    for (int i = ndim - 2; i >= 0; i--) compact[i] = compact[i + 1] * 2;
    for (bool strided : {false, true}) {
      TensorCase described("described", true, shape, strided ? compact : std::vector<int64_t>{});
      for (int dim = 0; dim < ndim; dim++) {
        for (bool stride_differs : {false, true}) {
          if (stride_differs && !strided) continue;
          std::vector<int64_t> other_shape = shape, other_strides = strided ? compact : std::vector<int64_t>{};
          (stride_differs ? other_strides : other_shape)[static_cast<size_t>(dim)] += 1;
          TensorCase c("differs", true, other_shape, other_strides);
          for (const auto &[request_name, request] : ImportRequests()) {
            SCOPED_TRACE("ndim " + std::to_string(ndim) + (strided ? " strided" : " compact") + ", " +
                         (stride_differs ? "stride " : "extent ") + std::to_string(dim) + ", " + request_name);
            g_deleted = 0;
            const int made = ExpectSameImport(c, request, described);
            EXPECT_EQ(g_deleted, made);
          }
        }
      }
    }
  }
}

TEST(PreparedImport, ArgumentsChecked) {
  TensorCase c("compact", true, {2, 3}, {});
  const dlmap_import_request request = dlmap_import_request_default();
  dlmap_error err{};
  DLTensor layout = static_cast<DLManagedTensorVersioned *>(c.make())->dl_tensor;
  dlmap_import_plan *plan = nullptr;
  EXPECT_EQ(dlmap_import_plan_create(nullptr, true, {1, 0}, 0, &request, &plan, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlmap_import_plan_create(&layout, true, {1, 0}, 0, &request, nullptr, &err), DLMAP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(dlmap_import_plan_create(&layout, true, {1, 0}, 0, nullptr, &plan, &err), DLMAP_OK) << err.message;
  dlmap_imported out;
  g_deleted = 0;
  // dlmap owns the tensor whatever the arguments: a NULL plan or out still releases it.
  EXPECT_EQ(dlmap_import_versioned_planned(nullptr, static_cast<DLManagedTensorVersioned *>(c.make()), &out, &err),
            DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("plan"), std::string::npos) << err.message;
  EXPECT_EQ(dlmap_import_versioned_planned(plan, static_cast<DLManagedTensorVersioned *>(c.make()), nullptr, &err),
            DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(g_deleted, 2);
  EXPECT_EQ(dlmap_import_versioned_planned(plan, nullptr, &out, &err), DLMAP_ERR_INVALID_ARGUMENT);
  TensorCase legacy("legacy", false, {2, 3}, {});
  EXPECT_EQ(dlmap_import_legacy_planned(nullptr, static_cast<DLManagedTensor *>(legacy.make()), &out, &err),
            DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(g_deleted, 3);
  dlmap_import_plan_free(plan);
  dlmap_import_plan_free(nullptr);
}

}  // namespace
