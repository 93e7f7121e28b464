// The tables //tests/plan's tests cross: arrays and export requests, producer tensors (legacy and versioned) and
// import requests, each row named, over one static buffer whose owner and deleters count their releases.
#ifndef DLMAP_TESTS_PLAN_PLAN_TABLES_H_
#define DLMAP_TESTS_PLAN_PLAN_TABLES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlmap/dlmap.h"
#include "tests/plan/plan_equivalence.h"

namespace plan_tables {

inline int g_released = 0;
inline void CountRelease(void *) { g_released++; }

alignas(64) inline unsigned char g_data[4096];

inline DLDevice Dev(int32_t type, int32_t id) {
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

inline dlmap_array MakeArray(const ArrayCase &c) {
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

inline std::vector<ArrayCase> ArrayCases() {
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

// An allocator of the caller's own (the default's functions under another context): requests that name it.
inline int g_own_context = 0;
inline void *OwnAllocate(void *, size_t size, size_t alignment) {
  return dlmap_allocator_default()->allocate(dlmap_allocator_default()->ctx, size, alignment);
}
inline void OwnRelease(void *, void *pointer) {
  dlmap_allocator_default()->release(dlmap_allocator_default()->ctx, pointer);
}
inline const dlmap_allocator kOwnAllocator = {OwnAllocate, OwnRelease, &g_own_context};

inline std::vector<std::pair<std::string, dlmap_export_request>> ExportRequests() {
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
  add("own allocator", [](dlmap_export_request &r) { r.allocator = &kOwnAllocator; });
  return requests;
}

inline int g_deleted = 0;

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

inline std::vector<std::unique_ptr<TensorCase>> TensorCases() {
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

inline std::vector<std::pair<std::string, dlmap_import_request>> ImportRequests() {
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
  add("own allocator", [](dlmap_import_request &r) { r.allocator = &kOwnAllocator; });
  add("own allocator, copy always", [](dlmap_import_request &r) {
    r.allocator = &kOwnAllocator;
    r.copy = DLMAP_COPY_ALWAYS;
  });
  return requests;
}

}  // namespace plan_tables

#endif  // DLMAP_TESTS_PLAN_PLAN_TABLES_H_
