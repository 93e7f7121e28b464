// Conformance table of the default profile (spec/profiles/jax.yaml) against JAX's DLPack contract
// (shared/reference/jax-dlpack-contract.md): one row per contract row a C library can observe, named by the row's id,
// with JAX's exception kind and exact text. Rows that need a jax.Array or a Sharding are driven through the C inputs
// that stand for them (dlmap_array.num_shards, dlmap_import_request.num_shards, dlmap_device_query). The Python rows
// (J-I2, J-I5, J-I7, str(x) in J-I3) are in python/tests/jax_conformance_test.py. Rows out of a library's reach are
// listed at the end with the reason.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance.h"

namespace {

using conformance::Device;
using conformance::Export;
using conformance::HostArray;
using conformance::Import;
using conformance::Legacy;
using conformance::MaxVersion;
using conformance::Outcome;
using conformance::Query;
using conformance::Row;
using conformance::g_deleted;

// JAX always hands out a legacy tensor.
Outcome Export(const dlmap_array &array, const dlmap_export_request &request, int32_t want_device_type = -1,
               bool want_copy = false) {
  return conformance::Export(array, request, DLMAP_STRUCT_LEGACY, want_device_type, want_copy);
}

#define J_E5_TEXT(device, source)                                                                                  \
  "Specified device=" device " which requires a copy since the source device is " source                            \
  ", however copy=False. Set copy=True or copy=None to perform the requested operation."

std::vector<Row> Rows() {
  std::vector<Row> rows;
  // ---- export: Array.__dlpack__ / to_dlpack ----
  rows.push_back({"J-E1", [] {
                    HostArray a;
                    a.array.num_shards = 4;
                    return Export(a.array, dlmap_export_request_default());
                  },
                  "BufferError",
                  "to_dlpack can only pack a dlpack tensor from an array on a singular device, but an array with a "
                  "Sharding over 4 devices was provided."});
  for (int32_t type : {13, 19, 4, 12}) {
    rows.push_back({"J-E3", [type] {
                      HostArray a;
                      dlmap_export_request r = dlmap_export_request_default();
                      r.has_dl_device = true;
                      r.dl_device_type = type;
                      return Export(a.array, r);
                    },
                    "BufferError",
                    "The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: " +
                        std::to_string(type) + ")"});
  }
  rows.push_back({"J-E3 (kDLCPU in the map)", [] {
                    HostArray a;
                    dlmap_export_request r = dlmap_export_request_default();
                    r.has_dl_device = true;
                    r.dl_device_type = DLMAP_DEVICE_CPU;
                    return Export(a.array, r, DLMAP_DEVICE_CPU);
                  },
                  nullptr, ""});
  rows.push_back({"J-E3a", [] {
                    HostArray a;
                    dlmap_export_request r = dlmap_export_request_default();
                    r.has_dl_device = true;
                    r.dl_device_type = 0;  // falsy: no dl_device
                    r.dl_device_id = 5;
                    r.copy = DLMAP_COPY_NEVER;
                    return Export(a.array, r, DLMAP_DEVICE_CPU);
                  },
                  nullptr, ""});
  // J-E3b: kDLTPUHost and kDLOneAPI are in the map, but no dlmap backend serves their platforms: the move fails as
  // JAX's get_backend does, with a RuntimeError (dlmap's text names the platform and the reason, not XLA's).
  for (int32_t type : {20, 14}) {
    rows.push_back({"J-E3b", [type] {
                      HostArray a;
                      dlmap_export_request r = dlmap_export_request_default();
                      r.has_dl_device = true;
                      r.dl_device_type = type;
                      Outcome o = Export(a.array, r);
                      EXPECT_EQ(o.status, DLMAP_ERR_PLATFORM_UNAVAILABLE);
                      EXPECT_STREQ(dlmap_error_kind_name(o.err.kind), "RuntimeError");
                      return Outcome{};
                    },
                    nullptr, ""});
  }
  rows.push_back({"J-E4", [] {
                    HostArray a;
                    return Export(a.array, MaxVersion(0, 4));
                  },
                  "BufferError", "JAX does not support any version below (0, 5) but version ((0, 4)) was requested."});
  for (auto v : std::vector<std::pair<uint32_t, uint32_t>>{{0, 5}, {0, 8}, {1, 0}, {1, 3}, {2, 0}}) {
    rows.push_back({"J-E4a", [v] {
                      HostArray a;
                      return Export(a.array, MaxVersion(v.first, v.second), DLMAP_DEVICE_CPU);
                    },
                    nullptr, ""});
  }
  rows.push_back({"J-E4a (None)", [] {
                    HostArray a;
                    return Export(a.array, dlmap_export_request_default(), DLMAP_DEVICE_CPU);
                  },
                  nullptr, ""});
  rows.push_back({"J-E5", [] {
                    HostArray a;
                    dlmap_export_request r = dlmap_export_request_default();
                    r.has_dl_device = true;
                    r.dl_device_type = DLMAP_DEVICE_CUDA;
                    r.copy = DLMAP_COPY_NEVER;
                    return Export(a.array, r);
                  },
                  "ValueError", J_E5_TEXT("(kDLCUDA, 0)", "(kDLCPU, 0)")});
  rows.push_back({"J-E6", [] {
                    HostArray a;
                    dlmap_export_request r = dlmap_export_request_default();
                    r.copy = DLMAP_COPY_ALWAYS;
                    return Export(a.array, r, DLMAP_DEVICE_CPU, /*want_copy=*/true);
                  },
                  nullptr, ""});
  for (int64_t stream : {5, 0, -7}) {
    rows.push_back({"J-E7", [stream] {
                      HostArray a;
                      dlmap_export_request r = dlmap_export_request_default();
                      r.has_stream = true;
                      r.stream = stream;  // unchecked: the host already holds the data
                      return Export(a.array, r, DLMAP_DEVICE_CPU);
                    },
                    nullptr, ""});
  }
  rows.push_back({"J-E8", [] {
                    HostArray a(DLMAP_DEVICE_CUDAHOST);  // pinned host memory keeps its pinned device type
                    return Export(a.array, dlmap_export_request_default(), DLMAP_DEVICE_CUDAHOST);
                  },
                  nullptr, ""});
  rows.push_back({"J-E9", [] {
                    HostArray a(DLMAP_DEVICE_VULKAN);
                    return Export(a.array, dlmap_export_request_default());
                  },
                  "RuntimeError", "INVALID_ARGUMENT: Device (kDLVulkan, 0) cannot be used as a DLPack device."});
  for (DLDataType dtype : {DLDataType{DLMAP_DTYPE_FLOAT8_E4M3FN, 8, 1}, DLDataType{DLMAP_DTYPE_BFLOAT, 16, 1},
                           DLDataType{DLMAP_DTYPE_BOOL, 8, 1}, DLDataType{DLMAP_DTYPE_COMPLEX, 64, 1}}) {
    rows.push_back({"J-E10", [dtype] {
                      HostArray a;
                      a.array.dtype = dtype;
                      return Export(a.array, MaxVersion(1, 0), DLMAP_DEVICE_CPU);  // a legacy tensor all the same
                    },
                    nullptr, ""});
  }

  // ---- __dlpack_device__ ----
  rows.push_back({"J-D1", [] {
                    dlmap_device_query q = Query("gpu", "cuda 12.4", false);
                    q.num_shards = 2;
                    return Device(q);
                  },
                  "BufferError", "__dlpack__ only supported for unsharded arrays."});
  rows.push_back({"J-D2", [] { return Device(Query("cpu", nullptr, false), DLMAP_DEVICE_CPU, 0); }, nullptr, ""});
  rows.push_back({"J-D3", [] { return Device(Query("gpu", "cuda 12.4", true), DLMAP_DEVICE_CUDAHOST, 3); }, nullptr, ""});
  rows.push_back({"J-D3", [] { return Device(Query("gpu", "cuda 12.4", false), DLMAP_DEVICE_CUDA, 3); }, nullptr, ""});
  rows.push_back({"J-D4", [] { return Device(Query("gpu", "rocm 6.1", true), DLMAP_DEVICE_ROCMHOST, 3); }, nullptr, ""});
  rows.push_back({"J-D4", [] { return Device(Query("gpu", "rocm 6.1", false), DLMAP_DEVICE_ROCM, 3); }, nullptr, ""});
  for (bool pinned : {true, false}) {
    rows.push_back({"J-D5", [pinned] { return Device(Query("gpu", "oneapi 2025", pinned), DLMAP_DEVICE_ONEAPI, 3); },
                    nullptr, ""});
  }
  rows.push_back({"J-D6", [] { return Device(Query("gpu", "vendorx 1.0", false)); }, "BufferError",
                  "Unknown GPU platform for __dlpack__: vendorx 1.0"});
  rows.push_back({"J-D7", [] {
                    dlmap_device_query q = Query("gpu", "cuda 12.4", false);
                    q.has_local_hardware_id = false;
                    return Device(q);
                  },
                  "BufferError", "Couldn't get local_hardware_id for __dlpack__"});
  rows.push_back({"J-D8", [] { return Device(Query("tpu", nullptr, true), DLMAP_DEVICE_TPUHOST, 3); }, nullptr, ""});
  rows.push_back({"J-D9", [] { return Device(Query("tpu", nullptr, false)); }, "BufferError",
                  "__dlpack__ device only supported for TPU pinned host memory"});
  for (const char *platform : {"metal", "vulkan", "neuron"}) {
    rows.push_back({"J-D10", [platform] { return Device(Query(platform, nullptr, false)); }, "BufferError",
                    std::string("__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: ") +
                        platform});
  }

  // ---- import: jax.dlpack.from_dlpack ----
  rows.push_back({"J-I1", [] {
                    Legacy t;
                    dlmap_import_request r = dlmap_import_request_default();
                    r.num_shards = 2;
                    return Import(t, r);
                  },
                  "ValueError",
                  "from_dlpack can only unpack a dlpack tensor onto a singular device, but a Sharding with 2 devices "
                  "was provided."});
  for (int32_t type : {13, 19, 7}) {
    rows.push_back({"J-I3", [type] {
                      Legacy t;
                      t.managed.dl_tensor.device.device_type = (DLDeviceType)type;
                      return Import(t, dlmap_import_request_default());
                    },
                    "TypeError",
                    "Array passed to from_dlpack is on unsupported device type (DLDeviceType: " + std::to_string(type) +
                        ", array: " + dlmap_device_type_name(type) + " tensor of ndim 2"});
  }
  // kDLOneAPI is in JAX's map: a tensor on it imports as a view; a copy needs a oneAPI backend, which dlmap lacks
  // (the RuntimeError of J-E3b), and nothing reads its device memory on the host.
  rows.push_back({"J-I3 (kDLOneAPI, a view)", [] {
                    Legacy t;
                    t.managed.dl_tensor.device.device_type = (DLDeviceType)DLMAP_DEVICE_ONEAPI;
                    return Import(t, dlmap_import_request_default());
                  },
                  nullptr, ""});
  rows.push_back({"J-I3 (kDLOneAPI, a copy)", [] {
                    Legacy t;
                    t.managed.dl_tensor.device.device_type = (DLDeviceType)DLMAP_DEVICE_ONEAPI;
                    dlmap_import_request r = dlmap_import_request_default();
                    r.has_device = true;
                    r.device_type = DLMAP_DEVICE_CPU;
                    Outcome o = Import(t, r);
                    EXPECT_EQ(o.status, DLMAP_ERR_PLATFORM_UNAVAILABLE);
                    EXPECT_STREQ(dlmap_error_kind_name(o.err.kind), "RuntimeError");
                    return Outcome{};
                  },
                  nullptr, ""});
  rows.push_back({"J-I4", [] {
                    Legacy t;
                    dlmap_import_request r = dlmap_import_request_default();
                    r.has_device = true;
                    r.device_type = DLMAP_DEVICE_CUDA;
                    r.copy = DLMAP_COPY_NEVER;
                    return Import(t, r);
                  },
                  "ValueError", J_E5_TEXT("(kDLCUDA, 0)", "(kDLCPU, 0)")});
  rows.push_back({"J-I6", [] {
                    // PyTorch reports a pinned tensor as kDLCUDAHost and stores kDLCPU: the report names the device.
                    Legacy t;
                    dlmap_import_request r = dlmap_import_request_default();
                    r.has_reported_device = true;
                    r.reported_device_type = DLMAP_DEVICE_CUDAHOST;
                    g_deleted = 0;
                    Outcome o;
                    dlmap_imported imported;
                    o.status = dlmap_import_legacy(&t.managed, &r, &imported, &o.err);
                    if (o.status == DLMAP_OK) {
                      EXPECT_EQ(imported.tensor.device.device_type, DLMAP_DEVICE_CUDAHOST);
                      EXPECT_FALSE(imported.copied);
                      dlmap_imported_release(&imported);
                    }
                    EXPECT_EQ(g_deleted, 1);
                    return o;
                  },
                  nullptr, ""});
  rows.push_back({"J-I8", [] {
                    Legacy t;
                    t.managed.dl_tensor.ndim = -1;
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError",
                  "INVALID_ARGUMENT: Number of dimensions in DLManagedTensor must be nonnegative, got -1"});
  for (dlmap_copy_mode copy : {DLMAP_COPY_IF_NEEDED, DLMAP_COPY_ALWAYS}) {
    rows.push_back({"J-I9", [copy] {
                      Legacy t;
                      t.strides[0] = 1;  // (2, 3) with strides (1, 1): overlapping, not a permutation of compact
                      dlmap_import_request r = dlmap_import_request_default();
                      r.copy = copy;  // refused even with copy=True
                      return Import(t, r);
                    },
                    "RuntimeError",
                    "UNIMPLEMENTED: Only DLPack tensors with trivial (compact) striding are supported; i.e., tensors "
                    "whose striding represents a transposition of the underlying buffer but not broadcasting. "
                    "Dimensions were: [2,3], strides were [1,1]."});
  }
  rows.push_back({"J-I9 (transposition)", [] {
                    Legacy t;
                    t.shape[0] = 3;
                    t.shape[1] = 2;
                    t.strides[0] = 1;
                    t.strides[1] = 3;
                    dlmap_import_request r = dlmap_import_request_default();
                    r.copy = DLMAP_COPY_NEVER;  // a permutation of compact: a view
                    return Import(t, r);
                  },
                  nullptr, ""});
  rows.push_back({"J-I9 (no elements)", [] {
                    Legacy t;
                    t.shape[0] = 0;
                    t.strides[0] = 0;
                    t.strides[1] = 0;
                    return Import(t, dlmap_import_request_default());
                  },
                  nullptr, ""});
  // J-I10..J-I12 as JAX 0.11 raises them: XLA's dtype mapping runs first (lanes, then the code, then its widths).
  rows.push_back({"J-I10 (int4: the mapping's width, not a multiple-of-8 check)", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {DLMAP_DTYPE_INT, 4, 1};
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError", "UNIMPLEMENTED: Invalid or unsupported DLPack integer width: 4 bits"});
  rows.push_back({"J-I11", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {DLMAP_DTYPE_FLOAT, 32, 4};
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError", "UNIMPLEMENTED: DLPack types with lanes != 1 not implemented, got 4"});
  rows.push_back({"J-I11 (lanes before an unknown code)", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {99, 32, 2};
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError", "UNIMPLEMENTED: DLPack types with lanes != 1 not implemented, got 2"});
  rows.push_back({"J-I12 (unknown code)", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {99, 32, 1};
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError", "UNIMPLEMENTED: Unknown or invalid DLPack type code 99"});
  rows.push_back({"J-I12 (a code XLA does not map: float6)", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {DLMAP_DTYPE_FLOAT6_E2M3FN, 6, 1};
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError", "UNIMPLEMENTED: Unknown or invalid DLPack type code 15"});
  rows.push_back({"J-I12 (bool of 16 bits)", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {DLMAP_DTYPE_BOOL, 16, 1};
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError", "UNIMPLEMENTED: Only 8-bit DLPack booleans are supported, got 16 bits"});
  rows.push_back({"J-I12 (unsigned 2 bits)", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {DLMAP_DTYPE_UINT, 2, 1};
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError", "UNIMPLEMENTED: Invalid or unsupported DLPack unsigned integer width: 2 bits"});
  rows.push_back({"J-I12 (complex 32 bits)", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {DLMAP_DTYPE_COMPLEX, 32, 1};
                    return Import(t, dlmap_import_request_default());
                  },
                  "RuntimeError", "UNIMPLEMENTED: Invalid or unsupported DLPack complex width: 32 bits"});
  rows.push_back({"J-I13", [] {
                    Legacy t;
                    t.managed.dl_tensor.data = reinterpret_cast<char *>(t.values) + 4;  // 4 bytes past a 64-aligned start
                    t.managed.dl_tensor.byte_offset = 0;
                    dlmap_import_request r = dlmap_import_request_default();
                    r.alignment = 64;  // the consumer's minimum alignment (XLA's MinAlign)
                    r.copy = DLMAP_COPY_NEVER;
                    return Import(t, r);
                  },
                  "ValueError",
                  "Specified input which requires a copy since the source data buffer is not aligned to 64 bytes. "
                  "However copy=False. Set copy=True or copy=None to perform the requested operation."});
  return rows;
}

TEST(JaxConformance, ProfileInForceIsJax) { EXPECT_STREQ(dlmap_profile_current()->name, "jax"); }

TEST(JaxConformance, EveryRow) { conformance::RunRows(Rows()); }

// Rows of the reference out of a C library's reach, and why (the Python binding's rows are in
// python/tests/jax_conformance_test.py):
//   J-E2            a type check of jax.Array: dlmap.Array is the only array type the binding exports.
//   J-E3b (text)    XLA's text (Unknown backend / failed to initialize); dlmap raises the same RuntimeError kind with
//                   its own platform_unavailable text (the J-E3b rows above check the kind).
//   J-I14           JAX's dtype canonicalisation (jax_enable_x64) happens after the exchange, in JAX.

}  // namespace
