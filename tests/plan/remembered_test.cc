// The unprepared calls remember, per thread, the plan of a view whose layout came twice in a row
// (src/export_plan_cache.c, src/import.c). What an exchange gives must not depend on what came before it on the
// thread: for every pair of table rows, the second exchanged right after the first (made twice) gives what it gives on
// a thread of its own (whose memory is empty), in status, error, tensor and ownership. Also: threads that exchange
// different layouts at once, and an allocator that exports from inside an export served from memory.
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"
#include "tests/plan/plan_equivalence.h"
#include "tests/plan/plan_tables.h"

namespace {

using namespace plan_tables;  // NOLINT: the tables are this file's vocabulary

// What an exchange gave, as text: status and error, or the result's every field that a consumer reads (the data
// pointer of a view, the bytes of a copy), and how many releases it caused once released.
std::string DescribeTensor(const DLTensor &t, bool copied) {
  std::string s = "device " + std::to_string(t.device.device_type) + ":" + std::to_string(t.device.device_id) +
                  " dtype " + std::to_string(t.dtype.code) + "/" + std::to_string(t.dtype.bits) + "x" +
                  std::to_string(t.dtype.lanes) + " ndim " + std::to_string(t.ndim) + " offset " +
                  std::to_string(t.byte_offset) + (t.shape == nullptr ? " shape NULL" : " shape") +
                  (t.strides == nullptr ? " strides NULL" : " strides");
  for (int32_t i = 0; i < t.ndim; i++) {
    s += " " + std::to_string(t.shape[i]) + "/" + (t.strides != nullptr ? std::to_string(t.strides[i]) : "-");
  }
  if (!copied) {
    s += " data " + std::to_string(reinterpret_cast<uintptr_t>(t.data));
  } else if (static_cast<int32_t>(t.device.device_type) == DLMAP_DEVICE_CPU && t.data != nullptr) {
    const uint64_t bytes = plan_equivalence::CompactBytes(t);
    s += " bytes " + std::string(static_cast<const char *>(t.data), static_cast<size_t>(bytes));
  }
  return s;
}

std::string DescribeError(int32_t status, const dlmap_error &err) {
  return "status " + std::to_string(status) + " code " + std::to_string(err.code) + " kind " +
         std::to_string(err.kind) + " id " + err.id + ": " + err.message;
}

std::string ExportOnce(const ArrayCase &c, const dlmap_export_request &request) {
  g_released = 0;
  const dlmap_array array = MakeArray(c);
  dlmap_exported out{};
  dlmap_error err{};
  const int32_t status = dlmap_export(&array, &request, &out, &err);
  if (status != DLMAP_OK) return DescribeError(status, err) + " released " + std::to_string(g_released);
  std::string s = "structure " + std::to_string(out.structure) + " version " + std::to_string(out.version.major) +
                  "." + std::to_string(out.version.minor) + " copied " + std::to_string(out.copied) + " stream " +
                  std::to_string(out.stream);
  if (out.structure == DLMAP_STRUCT_VERSIONED) {
    s += " flags " + std::to_string(out.versioned->flags) + " stamped " +
         std::to_string(out.versioned->version.major) + "." + std::to_string(out.versioned->version.minor);
  }
  s += " " + DescribeTensor(plan_equivalence::TensorOf(out), out.copied);
  plan_equivalence::Release(out);
  return s + " released " + std::to_string(g_released);
}

std::string ImportOnce(TensorCase &c, const dlmap_import_request &request) {
  g_deleted = 0;
  dlmap_imported out;
  dlmap_error err{};
  const int32_t status = plan_equivalence::ImportOnce(c, nullptr, request, &out, &err);
  if (status != DLMAP_OK) return DescribeError(status, err) + " deleted " + std::to_string(g_deleted);
  const std::string s = "read_only " + std::to_string(out.read_only) + " copied " + std::to_string(out.copied) +
                        " padded " + std::to_string(out.subbyte_padded) + " version " +
                        std::to_string(out.version.major) + "." + std::to_string(out.version.minor) + " " +
                        DescribeTensor(out.tensor, out.copied) + " deleted before release " +
                        std::to_string(g_deleted);
  dlmap_imported_release(&out);
  return s + " deleted " + std::to_string(g_deleted);
}

// Runs f on a new thread (nothing remembered there) and returns what it returned.
template <typename F>
std::string OnFreshThread(F f) {
  std::string result;
  std::thread([&] { result = f(); }).join();
  return result;
}

// Rows 0 … n - 1 of a table (run(row) exchanges the row and describes what it gave, name(row) names it): each row on a
// thread of its own first; then, on one thread, every row right after every other row, that first row made twice (a
// layout is remembered when it comes twice in a row), must give what it gave alone. skip_refused_firsts leaves rows
// that are refused alone out as the first of a pair.
template <typename Run, typename Name>
void ExpectEveryRowAfterEveryOther(size_t n, Run run, Name name, bool skip_refused_firsts) {
  std::vector<std::string> alone;
  for (size_t row = 0; row < n; row++) alone.push_back(OnFreshThread([&] { return run(row); }));
  std::thread([&] {
    for (size_t first = 0; first < n; first++) {
      if (skip_refused_firsts && alone[first].rfind("status", 0) == 0) continue;
      for (size_t second = 0; second < n; second++) {
        run(first);
        run(first);
        const std::string got = run(second);
        if (got != alone[second]) {
          ADD_FAILURE() << name(second) << " after " << name(first) << ":\n  got   " << got << "\n  alone "
                        << alone[second];
        }
      }
    }
  }).join();
}

TEST(Remembered, EveryExportAfterEveryOtherAsOnItsOwn) {
  const std::vector<ArrayCase> arrays = ArrayCases();
  const auto requests = ExportRequests();
  const size_t per_array = requests.size();
  ExpectEveryRowAfterEveryOther(
      arrays.size() * per_array,
      [&](size_t row) { return ExportOnce(arrays[row / per_array], requests[row % per_array].second); },
      [&](size_t row) { return arrays[row / per_array].name + ", " + requests[row % per_array].first; }, false);
}

TEST(Remembered, EveryImportAfterEveryOtherAsOnItsOwn) {
  const auto tensors = TensorCases();
  const auto requests = ImportRequests();
  const size_t per_tensor = requests.size();
  // refused imports as the first of a pair touch only their own tensor (and leaving them out keeps the pairs' count
  // fit for valgrind)
  ExpectEveryRowAfterEveryOther(
      tensors.size() * per_tensor,
      [&](size_t row) { return ImportOnce(*tensors[row / per_tensor], requests[row % per_tensor].second); },
      [&](size_t row) { return tensors[row / per_tensor]->name + ", " + requests[row % per_tensor].first; }, true);
}

// The same layout exported round after round with another data pointer and byte offset: the data pointer is the call's
// (served from memory), and a changed offset is another plan, never the remembered one's.
TEST(Remembered, PerCallFieldsAreTheCallsOwn) {
  const ArrayCase compact{"compact", {2, 3}, {}};
  const dlmap_export_request request = dlmap_export_request_default();
  for (int round = 0; round < 3; round++) {
    dlmap_array array = MakeArray(compact);
    array.data = g_data + 64 * round;
    array.byte_offset = static_cast<uint64_t>(round) * 8;
    dlmap_exported out{};
    dlmap_error err{};
    ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
    const DLTensor &t = plan_equivalence::TensorOf(out);
    EXPECT_EQ(t.data, g_data + 64 * round);
    EXPECT_EQ(t.byte_offset, static_cast<uint64_t>(round) * 8);
    g_released = 0;
    plan_equivalence::Release(out);
    EXPECT_EQ(g_released, 1);
  }
}

// Threads exporting and importing different layouts at once (whichever struct the profile gives max_version=current),
// each its own memory.
TEST(Remembered, ThreadsRememberTheirOwn) {
  std::vector<std::thread> threads;
  std::vector<std::string> failures(4);
  for (int i = 0; i < 4; i++) {
    threads.emplace_back([&, i] {
      const std::vector<int64_t> shape = {i + 1, 3};
      for (int n = 0; n < 2000; n++) {
        dlmap_array array = dlmap_array_default();
        array.data = g_data + 64 * i;
        array.dtype = {DLMAP_DTYPE_FLOAT, 32, 1};
        array.ndim = 2;
        array.shape = shape.data();
        dlmap_export_request request = dlmap_export_request_default();
        request.has_max_version = true;
        request.max_version = dlmap_version_current();
        dlmap_exported out{};
        dlmap_error err{};
        if (dlmap_export(&array, &request, &out, &err) != DLMAP_OK) {
          failures[i] = std::string("export: ") + err.message;
          return;
        }
        dlmap_imported imported;
        const int32_t status = out.structure == DLMAP_STRUCT_VERSIONED
                                   ? dlmap_import_versioned(out.versioned, nullptr, &imported, &err)
                                   : dlmap_import_legacy(out.legacy, nullptr, &imported, &err);
        if (status != DLMAP_OK) {
          failures[i] = std::string("import: ") + err.message;
          return;
        }
        const DLTensor &t = imported.tensor;
        if ((t.data != g_data + 64 * i && !imported.copied) || t.shape[0] != i + 1 || t.shape[1] != 3) {
          failures[i] = "another thread's layout or data";
        }
        dlmap_imported_release(&imported);
      }
    });
  }
  for (std::thread &t : threads) t.join();
  for (const std::string &f : failures) EXPECT_EQ(f, "");
}

// An allocator that, the first time it is asked, exports another array on the same thread: the export served from
// memory copies the plan it started with, and the nested one neither reads nor overwrites it.
int g_nested = 0;
dlmap_exported g_nested_out;
void *NestingAllocate(void *, size_t size, size_t alignment) {
  if (g_nested == 1) {
    g_nested = 2;
    static const int64_t kShape[3] = {5, 1, 7};
    dlmap_array other = dlmap_array_default();
    other.data = g_data + 256;
    other.dtype = {DLMAP_DTYPE_INT, 8, 1};
    other.ndim = 3;
    other.shape = kShape;
    const dlmap_export_request request = dlmap_export_request_default();
    dlmap_error err{};
    if (dlmap_export(&other, &request, &g_nested_out, &err) != DLMAP_OK) g_nested = -1;
  }
  return dlmap_allocator_default()->allocate(dlmap_allocator_default()->ctx, size, alignment);
}
void NestingRelease(void *, void *pointer) {
  dlmap_allocator_default()->release(dlmap_allocator_default()->ctx, pointer);
}

TEST(Remembered, AllocatorThatExportsInside) {
  std::thread([] {
    const dlmap_allocator nesting = {NestingAllocate, NestingRelease, nullptr};
    dlmap_export_request request = dlmap_export_request_default();
    request.allocator = &nesting;
    const ArrayCase compact{"compact", {2, 3}, {}};
    const dlmap_array array = MakeArray(compact);
    for (int round = 0; round < 4; round++) {
      g_nested = round == 2 ? 1 : 0;  // the third export is served from memory and its allocator exports
      dlmap_exported out{};
      dlmap_error err{};
      ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
      const DLTensor &t = plan_equivalence::TensorOf(out);
      EXPECT_EQ(t.data, g_data);
      EXPECT_EQ(t.ndim, 2);
      EXPECT_EQ(t.shape[0], 2);
      EXPECT_EQ(t.shape[1], 3);
      EXPECT_EQ(t.dtype.code, DLMAP_DTYPE_FLOAT);
      plan_equivalence::Release(out);
      if (round == 2) {
        ASSERT_EQ(g_nested, 2);
        const DLTensor &n = plan_equivalence::TensorOf(g_nested_out);
        EXPECT_EQ(n.ndim, 3);
        EXPECT_EQ(n.shape[2], 7);
        EXPECT_EQ(n.data, g_data + 256);
        plan_equivalence::Release(g_nested_out);
      }
    }
  }).join();
}

}  // namespace
