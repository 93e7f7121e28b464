// Conformance tables — the row type and the drivers shared by every profile's table: an exported or imported tensor
// under the library's profile, checked for the outcome a contract row states.
#ifndef DLMAP_TESTS_CONFORMANCE_CONFORMANCE_H_
#define DLMAP_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"
#include "tests/plan/plan_equivalence.h"

namespace conformance {

inline constexpr DLDataType kF32 = {DLMAP_DTYPE_FLOAT, 32, 1};

// The outcome a row checks: a status and, on error, the kind and message.
struct Outcome {
  int32_t status = DLMAP_OK;
  dlmap_error err{};
};

struct Row {
  const char *id;                 // the contract row
  std::function<Outcome()> run;   // drives dlmap; checks what a success must look like itself
  const char *kind;               // nullptr: the row expects success
  std::string message;            // the exact text when an error is expected
};

// A 2x3 float32 host array over static data, exportable as is.
struct HostArray {
  float values[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {2, 3};
  dlmap_array array = dlmap_array_default();
  explicit HostArray(int32_t device_type = DLMAP_DEVICE_CPU) {
    array.data = values;
    array.device_type = device_type;
    array.dtype = kF32;
    array.ndim = 2;
    array.shape = shape;
  }
};

inline void release(const dlmap_exported &out) {
  if (out.structure == DLMAP_STRUCT_VERSIONED) {
    out.versioned->deleter(out.versioned);
  } else {
    out.legacy->deleter(out.legacy);
  }
}

// Exports and, on success, checks the struct the profile answers with, the tensor's device and whether it copied;
// then requires a prepared export to give the same (plan_equivalence.h).
inline Outcome Export(const dlmap_array &array, const dlmap_export_request &request, dlmap_struct_kind want_struct,
                      int32_t want_device_type = -1, bool want_copy = false) {
  Outcome o;
  dlmap_exported out;
  o.status = dlmap_export(&array, &request, &out, &o.err);
  if (o.status == DLMAP_OK) {
    EXPECT_EQ(out.structure, want_struct);
    const DLTensor *t = out.structure == DLMAP_STRUCT_VERSIONED ? &out.versioned->dl_tensor : &out.legacy->dl_tensor;
    if (want_device_type >= 0) {
      EXPECT_EQ(t->device.device_type, want_device_type);
    }
    EXPECT_EQ(out.copied, want_copy);
    release(out);
  }
  plan_equivalence::ExpectSameExport(array, request);
  return o;
}

inline dlmap_export_request MaxVersion(uint32_t major, uint32_t minor) {
  dlmap_export_request request = dlmap_export_request_default();
  request.has_max_version = true;
  request.max_version = {major, minor};
  return request;
}

// A legacy producer tensor over a static buffer; its deleter counts calls.
inline int g_deleted = 0;
struct Legacy {
  alignas(64) float values[16] = {};
  int64_t shape[4] = {2, 3, 0, 0};
  int64_t strides[4] = {3, 1, 0, 0};
  DLManagedTensor managed{};
  Legacy() {
    managed.dl_tensor.data = values;
    managed.dl_tensor.device = {kDLCPU, 0};
    managed.dl_tensor.ndim = 2;
    managed.dl_tensor.dtype = kF32;
    managed.dl_tensor.shape = shape;
    managed.dl_tensor.strides = strides;
    managed.deleter = [](DLManagedTensor *) { g_deleted++; };
  }
};

// The Legacy tensor as plan_equivalence's producer: the same struct every time (its deleter only counts).
struct LegacyProducer : plan_equivalence::ProducerTensor {
  Legacy &tensor;
  explicit LegacyProducer(Legacy &t) : tensor(t) {}
  bool versioned() const override { return false; }
  void *make() override { return &tensor.managed; }
};

// Imports; the producer's deleter must have run exactly once by the end, whatever happened. Then a prepared import
// must give the same (plan_equivalence.h).
inline Outcome Import(Legacy &tensor, const dlmap_import_request &request) {
  g_deleted = 0;
  Outcome o;
  dlmap_imported imported;
  o.status = dlmap_import_legacy(&tensor.managed, &request, &imported, &o.err);
  if (o.status == DLMAP_OK) dlmap_imported_release(&imported);
  EXPECT_EQ(g_deleted, 1) << "the deleter runs exactly once";
  LegacyProducer producer(tensor);
  const int made = plan_equivalence::ExpectSameImport(producer, request);
  EXPECT_EQ(g_deleted, 1 + made) << "each tensor released exactly once";
  return o;
}

inline Outcome Device(const dlmap_device_query &query, int32_t want_type = -1, int32_t want_id = -1) {
  Outcome o;
  int32_t type = -1, id = -1;
  o.status = dlmap_dlpack_device(&query, &type, &id, &o.err);
  if (o.status == DLMAP_OK) {
    EXPECT_EQ(type, want_type);
    EXPECT_EQ(id, want_id);
  }
  return o;
}

inline dlmap_device_query Query(const char *platform, const char *version, bool pinned, int32_t id = 3) {
  dlmap_device_query q = dlmap_device_query_default();
  q.platform = platform;
  q.platform_version = version;
  q.pinned_host = pinned;
  q.num_shards = 1;
  q.has_local_hardware_id = true;
  q.local_hardware_id = id;
  return q;
}

// Runs every row: a success row must succeed (its own checks ran inside), an error row must raise the row's kind and
// exact text.
inline void RunRows(const std::vector<Row> &rows) {
  for (const Row &row : rows) {
    SCOPED_TRACE(row.id);
    const Outcome o = row.run();
    if (row.kind == nullptr) {
      EXPECT_EQ(o.status, DLMAP_OK) << o.err.message;
      continue;
    }
    EXPECT_NE(o.status, DLMAP_OK);
    EXPECT_STREQ(dlmap_error_kind_name(o.err.kind), row.kind) << o.err.message;
    EXPECT_EQ(std::string(o.err.message), row.message);
  }
}

}  // namespace conformance

#endif  // DLMAP_TESTS_CONFORMANCE_CONFORMANCE_H_
