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

namespace {

using plan_equivalence::ExpectSameExport;
using plan_equivalence::ExpectSameImport;

int g_released = 0;
void CountRelease(void *) { g_released++; }

alignas(64) unsigned char g_data[4096];

DLDevice Dev(int32_t type, int32_t id) {
  DLDevice d;
  d.device_type = (DLDeviceType)type;
  d.device_id = id;
  return d;
}

constexpr DLDataType kF32 = {DLMAP_DTYPE_FLOAT, 32, 1};

// An array over g_data whose shape and strides it owns.
struct ArrayCase {
  std::string name;
  std::vector<int64_t> shape, strides;  // strides empty: NULL
  std::function<void(dlmap_array &)> edit = [](dlmap_array &) {};
};

dlmap_array MakeArray(const ArrayCase &c) {
  dlmap_array a = dlmap_array_default();
  a.data = g_data;
  a.dtype = kF32;
  a.ndim = (int32_t)c.shape.size();
  a.shape = c.shape.empty() ? nullptr : c.shape.data();
  a.strides = c.strides.empty() ? nullptr : c.strides.data();
  a.owner = &g_released;
  a.release = CountRelease;
  c.edit(a);
  return a;
}

std::vector<ArrayCase> ArrayCases() {
  return {
      {"compact 2x3", {2, 3}, {}},
      {"explicit strides", {2, 3}, {3, 1}},
      {"transposed", {3, 2}, {1, 3}},
      {"0-d", {}, {}},
      {"empty without data", {0, 4}, {}, [](dlmap_array &a) { a.data = nullptr; }},
      {"data NULL with elements", {2, 3}, {}, [](dlmap_array &a) { a.data = nullptr; }},
      {"ndim 8", {1, 2, 1, 2, 1, 2, 1, 2}, {}},
      {"negative dimension", {2, -3}, {}},
      {"read only", {2, 3}, {}, [](dlmap_array &a) { a.read_only = true; }},
      {"byte offset", {2, 3}, {}, [](dlmap_array &a) { a.byte_offset = 64; }},
      {"bool", {4}, {}, [](dlmap_array &a) { a.dtype = {DLMAP_DTYPE_BOOL, 8, 1}; }},
      {"int4 padded", {4}, {}, [](dlmap_array &a) {
         a.dtype = {DLMAP_DTYPE_INT, 4, 1};
         a.subbyte_padded = true;
       }},
      {"int4 packed", {4}, {}, [](dlmap_array &a) { a.dtype = {DLMAP_DTYPE_INT, 4, 1}; }},
      {"float32x4", {2}, {}, [](dlmap_array &a) { a.dtype = {DLMAP_DTYPE_FLOAT, 32, 4}; }},
      {"unknown dtype code", {2}, {}, [](dlmap_array &a) { a.dtype = {250, 32, 1}; }},
      {"CUDA device", {2, 3}, {}, [](dlmap_array &a) { a.device_type = DLMAP_DEVICE_CUDA; }},
      {"pinned host", {2, 3}, {}, [](dlmap_array &a) { a.device_type = DLMAP_DEVICE_CUDAHOST; }},
      {"CPU device 3", {2, 3}, {}, [](dlmap_array &a) { a.device_id = 3; }},
      {"unknown device type", {2}, {}, [](dlmap_array &a) { a.device_type = 999; }},
      {"sharded", {2}, {}, [](dlmap_array &a) { a.num_shards = 2; }},
  };
}

std::vector<std::pair<std::string, dlmap_export_request>> ExportRequests() {
  std::vector<std::pair<std::string, dlmap_export_request>> requests;
  auto add = [&](const char *name, const std::function<void(dlmap_export_request &)> &edit) {
    dlmap_export_request r = dlmap_export_request_default();
    edit(r);
    requests.emplace_back(name, r);
  };
  add("default", [](dlmap_export_request &) {});
  for (dlmap_version v : {dlmap_version{0, 8}, dlmap_version{1, 0}, dlmap_version{1, 99}, dlmap_version{2, 0}}) {
    add("max_version", [v](dlmap_export_request &r) {
      r.has_max_version = true;
      r.max_version = v;
    });
  }
  add("dl_device CPU", [](dlmap_export_request &r) {
    r.has_dl_device = true;
    r.dl_device_type = DLMAP_DEVICE_CPU;
  });
  add("dl_device CUDA 0", [](dlmap_export_request &r) {
    r.has_dl_device = true;
    r.dl_device_type = DLMAP_DEVICE_CUDA;
  });
  add("copy always", [](dlmap_export_request &r) { r.copy = DLMAP_COPY_ALWAYS; });
  add("copy never to CUDA", [](dlmap_export_request &r) {
    r.copy = DLMAP_COPY_NEVER;
    r.has_dl_device = true;
    r.dl_device_type = DLMAP_DEVICE_CUDA;
  });
  add("copy out of range", [](dlmap_export_request &r) { r.copy = (dlmap_copy_mode)7; });
  add("stream 1", [](dlmap_export_request &r) {
    r.has_stream = true;
    r.stream = 1;
  });
  add("stream -1", [](dlmap_export_request &r) {
    r.has_stream = true;
    r.stream = -1;
  });
  add("defer stream sync", [](dlmap_export_request &r) { r.defer_stream_sync = true; });
  add("versioned, defaults", [](dlmap_export_request &r) {
    r.has_max_version = true;
    r.max_version = dlmap_version_current();
  });
  return requests;
}

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
int g_deleted = 0;

struct TensorCase : plan_equivalence::ProducerTensor {
  std::string name;
  bool is_versioned = true;
  dlmap_version version = {1, 0};
  uint64_t flags = 0;
  DLTensor tensor{};
  std::vector<int64_t> shape, strides;
  DLManagedTensorVersioned versioned_struct{};
  DLManagedTensor legacy_struct{};

  TensorCase(std::string n, bool v, std::vector<int64_t> s, std::vector<int64_t> st,
             const std::function<void(TensorCase &)> &edit = [](TensorCase &) {})
      : name(std::move(n)), is_versioned(v), shape(std::move(s)), strides(std::move(st)) {
    tensor.data = g_data;
    tensor.device = Dev(DLMAP_DEVICE_CPU, 0);
    tensor.dtype = kF32;
    edit(*this);
  }
  TensorCase(const TensorCase &) = delete;
  bool versioned() const override { return is_versioned; }
  void *make() override {
    DLTensor t = tensor;
    t.ndim = (int32_t)shape.size();
    t.shape = shape.empty() ? nullptr : shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    if (is_versioned) {
      versioned_struct = {};
      versioned_struct.version = {version.major, version.minor};
      versioned_struct.flags = flags;
      versioned_struct.dl_tensor = t;
      versioned_struct.deleter = [](DLManagedTensorVersioned *) { g_deleted++; };
      return &versioned_struct;
    }
    legacy_struct = {};
    legacy_struct.dl_tensor = t;
    legacy_struct.deleter = [](DLManagedTensor *) { g_deleted++; };
    return &legacy_struct;
  }
};

std::vector<std::unique_ptr<TensorCase>> TensorCases() {
  std::vector<std::unique_ptr<TensorCase>> cases;
  for (bool v : {false, true}) {
    auto add = [&](const char *name, std::vector<int64_t> shape, std::vector<int64_t> strides,
                   const std::function<void(TensorCase &)> &edit = [](TensorCase &) {}) {
      cases.push_back(std::make_unique<TensorCase>(std::string(v ? "versioned " : "legacy ") + name, v,
                                                   std::move(shape), std::move(strides), edit));
    };
    add("compact", {2, 3}, {});
    add("explicit strides", {2, 3}, {3, 1});
    add("transposed", {3, 2}, {1, 3});
    add("broadcast", {2, 3}, {0, 1});
    add("negative stride", {3}, {-1}, [](TensorCase &c) { c.tensor.byte_offset = 8; });
    add("gapped rows", {2, 3}, {4, 1});
    add("0-d", {}, {});
    add("empty without data", {0, 3}, {}, [](TensorCase &c) { c.tensor.data = nullptr; });
    add("data NULL with elements", {2, 3}, {}, [](TensorCase &c) { c.tensor.data = nullptr; });
    add("unaligned data", {2, 3}, {}, [](TensorCase &c) { c.tensor.data = g_data + 2; });
    add("byte offset past the address space", {2}, {}, [](TensorCase &c) { c.tensor.byte_offset = UINT64_MAX - 4; });
    add("ndim 65", std::vector<int64_t>(65, 1), {});
    add("negative dimension", {-2}, {});
    add("bool", {4}, {}, [](TensorCase &c) { c.tensor.dtype = {DLMAP_DTYPE_BOOL, 8, 1}; });
    add("bfloat16", {4}, {}, [](TensorCase &c) { c.tensor.dtype = {DLMAP_DTYPE_BFLOAT, 16, 1}; });
    add("float32x4", {2}, {}, [](TensorCase &c) { c.tensor.dtype = {DLMAP_DTYPE_FLOAT, 32, 4}; });
    add("int4", {4}, {}, [](TensorCase &c) { c.tensor.dtype = {DLMAP_DTYPE_INT, 4, 1}; });
    add("float8", {4}, {}, [](TensorCase &c) { c.tensor.dtype = {DLMAP_DTYPE_FLOAT8_E4M3FN, 8, 1}; });
    add("unknown dtype code", {2}, {}, [](TensorCase &c) { c.tensor.dtype = {250, 32, 1}; });
    add("CUDA", {2, 3}, {}, [](TensorCase &c) { c.tensor.device = Dev(DLMAP_DEVICE_CUDA, 0); });
    add("pinned host", {2, 3}, {}, [](TensorCase &c) { c.tensor.device = Dev(DLMAP_DEVICE_CUDAHOST, 0); });
    add("CPU device 2", {2, 3}, {}, [](TensorCase &c) { c.tensor.device = Dev(DLMAP_DEVICE_CPU, 2); });
    add("unknown device type", {2}, {}, [](TensorCase &c) { c.tensor.device = Dev(999, 0); });
    if (!v) continue;
    add("read only", {2, 3}, {}, [](TensorCase &c) { c.flags = DLMAP_FLAG_READ_ONLY; });
    add("is copied", {2, 3}, {}, [](TensorCase &c) { c.flags = DLMAP_FLAG_IS_COPIED; });
    add("unknown flag", {2, 3}, {}, [](TensorCase &c) { c.flags = uint64_t{1} << 40; });
    add("int4 padded", {4}, {}, [](TensorCase &c) {
      c.tensor.dtype = {DLMAP_DTYPE_INT, 4, 1};
      c.flags = DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED;
    });
    add("version 1.99", {2, 3}, {}, [](TensorCase &c) { c.version = {1, 99}; });
    add("version 2.0", {2, 3}, {}, [](TensorCase &c) { c.version = {2, 0}; });
    add("version 0.8", {2, 3}, {}, [](TensorCase &c) { c.version = {0, 8}; });
  }
  return cases;
}

std::vector<std::pair<std::string, dlmap_import_request>> ImportRequests() {
  std::vector<std::pair<std::string, dlmap_import_request>> requests;
  auto add = [&](const char *name, const std::function<void(dlmap_import_request &)> &edit) {
    dlmap_import_request r = dlmap_import_request_default();
    edit(r);
    requests.emplace_back(name, r);
  };
  add("default", [](dlmap_import_request &) {});
  add("copy always", [](dlmap_import_request &r) { r.copy = DLMAP_COPY_ALWAYS; });
  add("copy never", [](dlmap_import_request &r) { r.copy = DLMAP_COPY_NEVER; });
  add("writable", [](dlmap_import_request &r) { r.writable = true; });
  add("writable, copy never", [](dlmap_import_request &r) {
    r.writable = true;
    r.copy = DLMAP_COPY_NEVER;
  });
  add("row major", [](dlmap_import_request &r) { r.layout = DLMAP_LAYOUT_ROW_MAJOR; });
  add("compact permutation", [](dlmap_import_request &r) { r.layout = DLMAP_LAYOUT_COMPACT_PERMUTATION; });
  add("alignment 64", [](dlmap_import_request &r) { r.alignment = 64; });
  add("alignment 3", [](dlmap_import_request &r) { r.alignment = 3; });
  add("to the CPU", [](dlmap_import_request &r) {
    r.has_device = true;
    r.device_type = DLMAP_DEVICE_CPU;
  });
  add("to CUDA 0", [](dlmap_import_request &r) {
    r.has_device = true;
    r.device_type = DLMAP_DEVICE_CUDA;
  });
  add("reported as pinned", [](dlmap_import_request &r) {
    r.has_reported_device = true;
    r.reported_device_type = DLMAP_DEVICE_CUDAHOST;
  });
  add("sharded", [](dlmap_import_request &r) { r.num_shards = 2; });
  return requests;
}

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
