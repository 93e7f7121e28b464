// Conformance table of the array_api profile (spec/profiles/array_api.yaml) against the Python Array API standard's
// __dlpack__ / __dlpack_device__ / from_dlpack and the DLPack 1.x ABI it builds on: one row per rule, named A-E*
// (export), A-D* (__dlpack_device__) and A-I* (import), with the exception kind and exact text where the rule
// raises. The Python rows (AttributeError for a missing method, capsule names, versioned-first negotiation) are in
// python/tests/array_api_conformance_test.py.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance.h"

namespace {

using conformance::Device;
using conformance::HostArray;
using conformance::Import;
using conformance::Legacy;
using conformance::MaxVersion;
using conformance::Outcome;
using conformance::Query;
using conformance::Row;

// Exports and checks the struct and, for a versioned tensor, the stamped version and flags.
Outcome Export(const dlmap_array &array, const dlmap_export_request &request, dlmap_struct_kind want_struct,
               dlmap_version want_version = {0, 0}, uint64_t want_flags = 0) {
  Outcome o;
  dlmap_exported out;
  o.status = dlmap_export(&array, &request, &out, &o.err);
  if (o.status != DLMAP_OK) return o;
  EXPECT_EQ(out.structure, want_struct);
  if (out.structure == DLMAP_STRUCT_VERSIONED) {
    EXPECT_EQ(out.versioned->version.major, want_version.major);
    EXPECT_EQ(out.versioned->version.minor, want_version.minor);
    EXPECT_EQ(out.versioned->flags, want_flags);
  }
  conformance::release(out);
  return o;
}

#define COPY_FORBIDDEN(device, source)                                                                             \
  "Specified device=" device " which requires a copy since the source device is " source                            \
  ", however copy=False. Set copy=True or copy=None to perform the requested operation."

std::vector<Row> Rows() {
  const dlmap_version current = dlmap_version_current();
  std::vector<Row> rows;
  // ---- __dlpack__ ----
  rows.push_back({"A-E1 max_version=None: a legacy DLManagedTensor", [] {
                    HostArray a;
                    return Export(a.array, dlmap_export_request_default(), DLMAP_STRUCT_LEGACY);
                  },
                  nullptr, ""});
  rows.push_back({"A-E2 max_version below 1.0: legacy", [] {
                    HostArray a;
                    return Export(a.array, MaxVersion(0, 8), DLMAP_STRUCT_LEGACY);
                  },
                  nullptr, ""});
  rows.push_back({"A-E3 max_version 1.0: versioned, stamped 1.0", [] {
                    HostArray a;
                    return Export(a.array, MaxVersion(1, 0), DLMAP_STRUCT_VERSIONED, {1, 0});
                  },
                  nullptr, ""});
  rows.push_back({"A-E4 a newer max_version: versioned, stamped with the current version", [current] {
                    HostArray a;
                    return Export(a.array, MaxVersion(1, 99), DLMAP_STRUCT_VERSIONED, current);
                  },
                  nullptr, ""});
  rows.push_back({"A-E5 max_version the producer cannot meet", [] {
                    HostArray a;
                    return Export(a.array, MaxVersion(0, 4), DLMAP_STRUCT_LEGACY);
                  },
                  "BufferError", "dlmap does not support any DLPack version below 0.5 but version 0.4 was requested."});
  rows.push_back({"A-E6 dl_device the producer cannot serve", [] {
                    HostArray a;
                    dlmap_export_request r = MaxVersion(1, 0);
                    r.has_dl_device = true;
                    r.dl_device_type = DLMAP_DEVICE_OPENCL;
                    return Export(a.array, r, DLMAP_STRUCT_VERSIONED);
                  },
                  "BufferError",
                  "The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: 4)"});
  rows.push_back({"A-E7 dl_device of the array's own type, without a backend", [] {
                    HostArray a(DLMAP_DEVICE_VULKAN);
                    dlmap_export_request r = MaxVersion(1, 0);
                    r.has_dl_device = true;
                    r.dl_device_type = DLMAP_DEVICE_VULKAN;
                    return Export(a.array, r, DLMAP_STRUCT_VERSIONED, {1, 0});
                  },
                  nullptr, ""});
  rows.push_back({"A-E8 copy=False but a copy is needed: BufferError", [] {
                    HostArray a;
                    dlmap_export_request r = MaxVersion(1, 0);
                    r.has_dl_device = true;
                    r.dl_device_type = DLMAP_DEVICE_CUDA;
                    r.copy = DLMAP_COPY_NEVER;
                    return Export(a.array, r, DLMAP_STRUCT_VERSIONED);
                  },
                  "BufferError", COPY_FORBIDDEN("(kDLCUDA, 0)", "(kDLCPU, 0)")});
  rows.push_back({"A-E9 copy=True: a copy flagged IS_COPIED", [] {
                    HostArray a;
                    dlmap_export_request r = MaxVersion(1, 0);
                    r.copy = DLMAP_COPY_ALWAYS;
                    return Export(a.array, r, DLMAP_STRUCT_VERSIONED, {1, 0}, DLPACK_FLAG_BITMASK_IS_COPIED);
                  },
                  nullptr, ""});
  rows.push_back({"A-E10 read-only data: READ_ONLY in a versioned tensor", [] {
                    HostArray a;
                    a.array.read_only = true;
                    return Export(a.array, MaxVersion(1, 0), DLMAP_STRUCT_VERSIONED, {1, 0},
                                  DLPACK_FLAG_BITMASK_READ_ONLY);
                  },
                  nullptr, ""});
  rows.push_back({"A-E11 read-only data to a legacy consumer, which cannot be told", [] {
                    HostArray a;
                    a.array.read_only = true;
                    return Export(a.array, dlmap_export_request_default(), DLMAP_STRUCT_LEGACY);
                  },
                  "BufferError",
                  "Cannot export a read-only array as a legacy DLManagedTensor, which cannot mark it read-only; pass "
                  "max_version=(1, 0) or higher, or copy=True."});
  rows.push_back({"A-E12 a value newer than the negotiated version", [] {
                    HostArray a;
                    a.array.dtype = {DLMAP_DTYPE_FLOAT8_E4M3FN, 8, 1};
                    return Export(a.array, dlmap_export_request_default(), DLMAP_STRUCT_LEGACY);
                  },
                  "BufferError",
                  "Data type float8_e4m3fn cannot be expressed in DLPack 0.8; it was introduced in 1.1."});
  rows.push_back({"A-E13 a stream host memory cannot take", [] {
                    HostArray a;
                    dlmap_export_request r = MaxVersion(1, 0);
                    r.has_stream = true;
                    r.stream = 5;
                    return Export(a.array, r, DLMAP_STRUCT_VERSIONED);
                  },
                  "ValueError",
                  "stream=5 is not valid for device type kDLCPU (1): this device type takes no stream, so stream must "
                  "be None."});
  // ---- __dlpack_device__ ----
  rows.push_back({"A-D1 host memory", [] { return Device(Query("cpu", nullptr, false), DLMAP_DEVICE_CPU, 0); }, nullptr,
                  ""});
  rows.push_back({"A-D2 device memory of a platform with a device type", [] {
                    return Device(Query("tpu", nullptr, false), DLMAP_DEVICE_TPU, 3);
                  },
                  nullptr, ""});
  // ---- from_dlpack ----
  rows.push_back({"A-I1 any strides: a view", [] {
                    Legacy t;
                    t.strides[0] = 0;  // broadcast
                    dlmap_import_request r = dlmap_import_request_default();
                    r.copy = DLMAP_COPY_NEVER;
                    return Import(t, r);
                  },
                  nullptr, ""});
  rows.push_back({"A-I2 copy=False but the device differs: ValueError", [] {
                    Legacy t;
                    dlmap_import_request r = dlmap_import_request_default();
                    r.has_device = true;
                    r.device_type = DLMAP_DEVICE_CUDA;
                    r.copy = DLMAP_COPY_NEVER;
                    return Import(t, r);
                  },
                  "ValueError", COPY_FORBIDDEN("(kDLCUDA, 0)", "(kDLCPU, 0)")});
  rows.push_back({"A-I3 sub-byte and vector types are exchanged", [] {
                    Legacy t;
                    t.managed.dl_tensor.dtype = {DLMAP_DTYPE_FLOAT, 32, 2};
                    return Import(t, dlmap_import_request_default());
                  },
                  nullptr, ""});
  rows.push_back({"A-I4 a device type no backend serves", [] {
                    Legacy t;
                    t.managed.dl_tensor.device.device_type = kDLVulkan;
                    return Import(t, dlmap_import_request_default());
                  },
                  "BufferError",
                  "Array passed to from_dlpack is on unsupported device type (DLDeviceType: 7, array: kDLVulkan tensor "
                  "of ndim 2)"});
  return rows;
}

TEST(ArrayApiConformance, ProfileInForceIsArrayApi) { EXPECT_STREQ(dlmap_profile_current()->name, "array_api"); }

TEST(ArrayApiConformance, EveryRow) { conformance::RunRows(Rows()); }

}  // namespace
