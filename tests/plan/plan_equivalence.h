// Prepared exchanges give what the unprepared calls give: each helper runs one exchange both ways (the planned one
// twice, so that a plan is reused) and requires the same status, error (code, kind, id, exact text) and, on success,
// the same tensor, flags, version, copy and stream outcome. The conformance tables and //tests/plan:plan_test drive
// every row through them.
#ifndef DLMAP_TESTS_PLAN_PLAN_EQUIVALENCE_H_
#define DLMAP_TESTS_PLAN_PLAN_EQUIVALENCE_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"

namespace plan_equivalence {

inline void ExpectSameError(int32_t status, const dlmap_error &err, int32_t want_status, const dlmap_error &want,
                            const char *path) {
  SCOPED_TRACE(path);
  EXPECT_EQ(status, want_status);
  if (want_status == DLMAP_OK || status != want_status) return;
  EXPECT_EQ(err.code, want.code);
  EXPECT_EQ(err.kind, want.kind);
  EXPECT_STREQ(err.id, want.id);
  EXPECT_EQ(std::string(err.message), std::string(want.message));
}

// Two tensors describe the same result: a view must point at the same memory, a copy hold the same bytes.
inline void ExpectSameTensor(const DLTensor &got, const DLTensor &want, bool copied, uint64_t bytes) {
  EXPECT_EQ(got.device.device_type, want.device.device_type);
  EXPECT_EQ(got.device.device_id, want.device.device_id);
  EXPECT_EQ(got.dtype.code, want.dtype.code);
  EXPECT_EQ(got.dtype.bits, want.dtype.bits);
  EXPECT_EQ(got.dtype.lanes, want.dtype.lanes);
  ASSERT_EQ(got.ndim, want.ndim);
  EXPECT_EQ(got.byte_offset, want.byte_offset);
  EXPECT_EQ(got.shape == nullptr, want.shape == nullptr);
  EXPECT_EQ(got.strides == nullptr, want.strides == nullptr);
  for (int32_t i = 0; i < got.ndim; i++) {
    EXPECT_EQ(got.shape[i], want.shape[i]) << "dimension " << i;
    if (got.strides != nullptr && want.strides != nullptr) {
      EXPECT_EQ(got.strides[i], want.strides[i]) << i;
    }
  }
  if (!copied) {
    EXPECT_EQ(got.data, want.data);
  } else if (bytes > 0 && got.data != nullptr && want.data != nullptr &&
             static_cast<int32_t>(got.device.device_type) == DLMAP_DEVICE_CPU) {
    EXPECT_EQ(std::memcmp(got.data, want.data, bytes), 0);
  }
}

inline const DLTensor &TensorOf(const dlmap_exported &out) {
  return out.structure == DLMAP_STRUCT_VERSIONED ? out.versioned->dl_tensor : out.legacy->dl_tensor;
}

inline void Release(const dlmap_exported &out) {
  if (out.structure == DLMAP_STRUCT_VERSIONED) {
    out.versioned->deleter(out.versioned);
  } else {
    out.legacy->deleter(out.legacy);
  }
}

// The bytes of a compact tensor (every element counted once), for comparing copies.
inline uint64_t CompactBytes(const DLTensor &t) {
  uint64_t count = 1;
  for (int32_t i = 0; i < t.ndim; i++) count *= (uint64_t)t.shape[i];
  return (count * t.dtype.bits * t.dtype.lanes + 7) / 8;
}

// Exports `array` with its data replaced by `data` per request unprepared, then through a plan made from `array`;
// every result is released here. Returns how many exports succeeded: the array's owner is released once by each.
inline int ExpectSameExport(const dlmap_array &array, const dlmap_export_request &request, void *data) {
  dlmap_error want_err{}, err{};
  dlmap_exported want{};
  dlmap_array call = array;
  call.data = data;
  const int32_t want_status = dlmap_export(&call, &request, &want, &want_err);
  int succeeded = want_status == DLMAP_OK ? 1 : 0;
  dlmap_export_plan *plan = nullptr;
  const int32_t plan_status = dlmap_export_plan_create(&array, &request, &plan, &err);
  if (plan_status != DLMAP_OK && data == array.data) {
    // Making the plan fails exactly where the export fails, with the export's error.
    ExpectSameError(plan_status, err, want_status, want_err, "dlmap_export_plan_create");
  }
  if (plan_status != DLMAP_OK) {
    EXPECT_EQ(plan, nullptr);
  }
  for (int round = 0; plan != nullptr && round < 2; round++) {
    SCOPED_TRACE(round == 0 ? "first planned export" : "second planned export");
    dlmap_exported got{};
    err = dlmap_error{};
    const int32_t status = dlmap_export_planned(plan, data, array.owner, array.release, &got, &err);
    ExpectSameError(status, err, want_status, want_err, "dlmap_export_planned");
    if (status != DLMAP_OK) continue;
    succeeded++;
    if (want_status != DLMAP_OK) {
      Release(got);
      continue;
    }
    EXPECT_EQ(got.structure, want.structure);
    EXPECT_EQ(got.version.major, want.version.major);
    EXPECT_EQ(got.version.minor, want.version.minor);
    EXPECT_EQ(got.copied, want.copied);
    EXPECT_EQ(got.stream, want.stream);
    if (got.structure == DLMAP_STRUCT_VERSIONED && want.structure == DLMAP_STRUCT_VERSIONED) {
      EXPECT_EQ(got.versioned->flags, want.versioned->flags);
      EXPECT_EQ(got.versioned->version.major, want.versioned->version.major);
      EXPECT_EQ(got.versioned->version.minor, want.versioned->version.minor);
    }
    if (got.structure == want.structure) {
      ExpectSameTensor(TensorOf(got), TensorOf(want), want.copied, CompactBytes(TensorOf(want)));
    }
    Release(got);
  }
  dlmap_export_plan_free(plan);
  if (want_status == DLMAP_OK) Release(want);
  return succeeded;
}

inline int ExpectSameExport(const dlmap_array &array, const dlmap_export_request &request) {
  return ExpectSameExport(array, request, array.data);
}

// A producer's tensor, made afresh for each import (an import takes it over).
struct ProducerTensor {
  virtual ~ProducerTensor() = default;
  virtual bool versioned() const = 0;
  virtual void *make() = 0;  // a new managed tensor of the struct versioned() says, with a deleter
};

inline int32_t ImportOnce(ProducerTensor &producer, const dlmap_import_plan *plan,
                          const dlmap_import_request &request, dlmap_imported *out, dlmap_error *err) {
  void *managed = producer.make();
  if (producer.versioned()) {
    auto *t = static_cast<DLManagedTensorVersioned *>(managed);
    return plan != nullptr ? dlmap_import_versioned_planned(plan, t, out, err)
                           : dlmap_import_versioned(t, &request, out, err);
  }
  auto *t = static_cast<DLManagedTensor *>(managed);
  return plan != nullptr ? dlmap_import_legacy_planned(plan, t, out, err) : dlmap_import_legacy(t, &request, out, err);
}

// Imports a fresh tensor from producer unprepared, then through a plan made from a description of one tensor of
// `described` (twice), and releases everything. Returns how many tensors it made: each must be released exactly once.
inline int ExpectSameImport(ProducerTensor &producer, const dlmap_import_request &request,
                            ProducerTensor &described) {
  dlmap_error want_err{}, err{};
  dlmap_imported want;
  const int32_t want_status = ImportOnce(producer, nullptr, request, &want, &want_err);
  // The description: one tensor as `described` makes it, read before it is released unimported.
  void *sample = described.make();
  DLTensor layout;
  dlmap_version version = {0, 0};
  uint64_t flags = 0;
  if (described.versioned()) {
    auto *t = static_cast<DLManagedTensorVersioned *>(sample);
    layout = t->dl_tensor;
    version = {t->version.major, t->version.minor};
    flags = t->flags;
  } else {
    layout = static_cast<DLManagedTensor *>(sample)->dl_tensor;
  }
  dlmap_import_plan *plan = nullptr;
  const int32_t plan_status =
      dlmap_import_plan_create(&layout, described.versioned(), version, flags, &request, &plan, &err);
  dlmap_managed_tensor_delete(sample, described.versioned());
  if (plan_status != DLMAP_OK && &described == &producer) {
    ExpectSameError(plan_status, err, want_status, want_err, "dlmap_import_plan_create");
  }
  if (plan_status != DLMAP_OK) {
    EXPECT_EQ(plan, nullptr);
  }
  for (int round = 0; plan != nullptr && round < 2; round++) {
    SCOPED_TRACE(round == 0 ? "first planned import" : "second planned import");
    dlmap_imported got;
    err = dlmap_error{};
    const int32_t status = ImportOnce(producer, plan, request, &got, &err);
    ExpectSameError(status, err, want_status, want_err, "planned import");
    if (status != DLMAP_OK) continue;
    if (want_status == DLMAP_OK) {
      EXPECT_EQ(got.read_only, want.read_only);
      EXPECT_EQ(got.copied, want.copied);
      EXPECT_EQ(got.subbyte_padded, want.subbyte_padded);
      EXPECT_EQ(got.version.major, want.version.major);
      EXPECT_EQ(got.version.minor, want.version.minor);
      ExpectSameTensor(got.tensor, want.tensor, want.copied, CompactBytes(want.tensor));
    }
    dlmap_imported_release(&got);
  }
  const int made = plan != nullptr ? 4 : 2;
  dlmap_import_plan_free(plan);
  if (want_status == DLMAP_OK) dlmap_imported_release(&want);
  return made;
}

inline int ExpectSameImport(ProducerTensor &producer, const dlmap_import_request &request) {
  return ExpectSameImport(producer, request, producer);
}

}  // namespace plan_equivalence

#endif  // DLMAP_TESTS_PLAN_PLAN_EQUIVALENCE_H_
