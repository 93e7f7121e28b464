// Tests of src/export.c (dlmap_export, the to_dlpack / __dlpack__ contract): a hand-written table of arrays, requests
// and expected results or exact errors, a sweep over every device type, and the ownership and allocation invariants.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"
#include "gtest/gtest.h"

namespace {

// ---- data types used by the rows ----------------------------------------------------------------------------------

constexpr DLDataType kF32 = {DLMAP_DTYPE_FLOAT, 32, 1};
constexpr DLDataType kF32x4 = {DLMAP_DTYPE_FLOAT, 32, 4};
constexpr DLDataType kI16 = {DLMAP_DTYPE_INT, 16, 1};
constexpr DLDataType kI32 = {DLMAP_DTYPE_INT, 32, 1};
constexpr DLDataType kI64 = {DLMAP_DTYPE_INT, 64, 1};
constexpr DLDataType kU8 = {DLMAP_DTYPE_UINT, 8, 1};
constexpr DLDataType kBool = {DLMAP_DTYPE_BOOL, 8, 1};
constexpr DLDataType kC128 = {DLMAP_DTYPE_COMPLEX, 128, 1};
constexpr DLDataType kBc32 = {DLMAP_DTYPE_BCOMPLEX, 32, 1};
constexpr DLDataType kF8 = {DLMAP_DTYPE_FLOAT8_E4M3FN, 8, 1};
constexpr DLDataType kF4 = {DLMAP_DTYPE_FLOAT4_E2M1FN, 4, 1};
constexpr DLDataType kF4x2 = {DLMAP_DTYPE_FLOAT4_E2M1FN, 4, 2};
constexpr DLDataType kOpaque = {DLMAP_DTYPE_OPAQUEHANDLE, 64, 1};
constexpr DLDataType kF7 = {DLMAP_DTYPE_FLOAT, 7, 1};
constexpr DLDataType kF32Lanes0 = {DLMAP_DTYPE_FLOAT, 32, 0};
constexpr DLDataType kCode99 = {99, 32, 1};

constexpr uint64_t kReadOnly = DLPACK_FLAG_BITMASK_READ_ONLY;
constexpr uint64_t kCopied = DLPACK_FLAG_BITMASK_IS_COPIED;
constexpr uint64_t kPadded = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;

constexpr dlmap_struct_kind kLegacy = DLMAP_STRUCT_LEGACY;
constexpr dlmap_struct_kind kVersioned = DLMAP_STRUCT_VERSIONED;

constexpr dlmap_stream_meaning kHostSync = DLMAP_STREAM_HOST_SYNC;

constexpr uint32_t kCurMajor = SPEC_FACTS_CURRENT_MAJOR, kCurMinor = SPEC_FACTS_CURRENT_MINOR;
constexpr dlmap_stream_meaning kNoSync = DLMAP_STREAM_NO_SYNC;
constexpr dlmap_stream_meaning kHandle = DLMAP_STREAM_HANDLE;

// The stream conventions' rules as spec/platforms.yaml words them (quoted in stream_invalid).
#define RULE_NONE "this device type takes no stream, so stream must be None."
#define RULE_CUDA                                                                                                  \
  "CUDA accepts None, -1 (no synchronisation), 1 (legacy default stream), 2 (per-thread default stream) or a " \
  "stream handle above 2; 0 is ambiguous and disallowed."
#define RULE_ROCM \
  "ROCm accepts None, -1 (no synchronisation), 0 (default stream) or a stream handle above 2; 1 and 2 are not supported."
#define RULE_OPAQUE \
  "this device type's stream is an opaque queue handle that dlmap passes through; values below -1 are invalid."

#define FORBIDDEN(device, source)                                                                               \
  "Specified device=" device " which requires a copy since the source device is " source                        \
  ", however copy=False. Set copy=True or copy=None to perform the requested operation."

#define SEED(type) "The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: " type ")"

#define UNKNOWN_TYPE(type) "Unknown DLPack device type " type ": the spec this build was generated from does not define it."

// ---- the array, the request and the expected outcome of a row ----------------------------------------------------

// A framework array. Default: float32 [2, 3], compact (strides NULL), on (kDLCPU, 0), writable, byte_offset 0.
struct ArraySpec {
  int32_t device_type = DLMAP_DEVICE_CPU;
  int32_t device_id = 0;
  DLDataType dtype = kF32;
  std::vector<int64_t> shape = {2, 3};
  bool has_ndim = false;  // ndim other than shape.size() (for the ndim errors)
  int32_t ndim = 0;
  bool shape_null = false;
  bool has_strides = false;
  std::vector<int64_t> strides;
  uint64_t byte_offset = 0;
  bool read_only = false;
  bool subbyte_padded = false;
  bool data_null = false;

  ArraySpec On(int32_t type, int32_t id) const { ArraySpec a = *this; a.device_type = type; a.device_id = id; return a; }
  ArraySpec Of(DLDataType t) const { ArraySpec a = *this; a.dtype = t; return a; }
  ArraySpec Shape(std::vector<int64_t> s) const { ArraySpec a = *this; a.shape = std::move(s); return a; }
  ArraySpec Strides(std::vector<int64_t> s) const {
    ArraySpec a = *this;
    a.has_strides = true;
    a.strides = std::move(s);
    return a;
  }
  ArraySpec Ndim(int32_t n) const { ArraySpec a = *this; a.has_ndim = true; a.ndim = n; return a; }
  ArraySpec NullShape() const { ArraySpec a = *this; a.shape_null = true; return a; }
  ArraySpec Offset(uint64_t o) const { ArraySpec a = *this; a.byte_offset = o; return a; }
  ArraySpec ReadOnly() const { ArraySpec a = *this; a.read_only = true; return a; }
  ArraySpec Padded() const { ArraySpec a = *this; a.subbyte_padded = true; return a; }
  ArraySpec NullData() const { ArraySpec a = *this; a.data_null = true; return a; }
};
ArraySpec Arr() { return ArraySpec(); }

// __dlpack__(stream=None, max_version=None, dl_device=None, copy=None) unless set.
struct RequestSpec {
  bool has_max = false;
  uint32_t major = 0, minor = 0;
  bool has_dl_device = false;
  int32_t dl_type = 0, dl_id = 0;
  dlmap_copy_mode copy = DLMAP_COPY_IF_NEEDED;
  bool has_stream = false;
  int64_t stream = 0;

  RequestSpec Max(uint32_t a, uint32_t b) const { RequestSpec r = *this; r.has_max = true; r.major = a; r.minor = b; return r; }
  RequestSpec To(int32_t type, int32_t id) const {
    RequestSpec r = *this;
    r.has_dl_device = true;
    r.dl_type = type;
    r.dl_id = id;
    return r;
  }
  RequestSpec Always() const { RequestSpec r = *this; r.copy = DLMAP_COPY_ALWAYS; return r; }
  RequestSpec Never() const { RequestSpec r = *this; r.copy = DLMAP_COPY_NEVER; return r; }
  RequestSpec Stream(int64_t s) const { RequestSpec r = *this; r.has_stream = true; r.stream = s; return r; }
};
RequestSpec Req() { return RequestSpec(); }

enum class Kind { kOk, kError, kNeedsGpu };

struct Outcome {
  Kind kind = Kind::kOk;
  // kOk. Layout default: shape [2, 3], strides [3, 1], byte_offset 0 (the default array's).
  dlmap_struct_kind structure = DLMAP_STRUCT_NONE;
  uint32_t major = 0, minor = 0;
  uint64_t flags = 0;
  int32_t device_type = 0, device_id = 0;
  dlmap_stream_meaning stream = DLMAP_STREAM_INVALID;
  bool scalar = false;  // ndim 0: shape and strides NULL in the tensor
  std::vector<int64_t> shape = {2, 3}, strides = {3, 1};
  uint64_t byte_offset = 0;
  bool copied = false;
  bool check_elements = false;  // the copy holds these source elements (indices into the buffer), in order
  std::vector<int64_t> elements;
  bool check_bytes = false;  // the copy holds these source bytes (packed sub-byte data)
  std::vector<int64_t> bytes;
  bool data_null = false;  // a view of a NULL data pointer
  // kError and kNeedsGpu
  int32_t code = DLMAP_OK;
  std::string id, exception, message;  // kNeedsGpu: message is the platform_unavailable prefix
  dlmap_platform platform = DLMAP_PLATFORM_CPU;  // kNeedsGpu

  Outcome Layout(std::vector<int64_t> s, std::vector<int64_t> st) const {
    Outcome o = *this;
    o.shape = std::move(s);
    o.strides = std::move(st);
    return o;
  }
  Outcome Offset(uint64_t b) const { Outcome o = *this; o.byte_offset = b; return o; }
  Outcome Scalar() const { Outcome o = *this; o.scalar = true; o.shape.clear(); o.strides.clear(); return o; }
  // A copy (IS_COPIED where versioned); the element list may be empty (no elements to check).
  Outcome Copy(std::vector<int64_t> e) const {
    Outcome o = *this;
    o.copied = true;
    o.check_elements = true;
    o.elements = std::move(e);
    return o;
  }
  Outcome CopyBytes(std::vector<int64_t> b) const {
    Outcome o = *this;
    o.copied = true;
    o.check_bytes = true;
    o.bytes = std::move(b);
    return o;
  }
  Outcome DataNull() const { Outcome o = *this; o.data_null = true; return o; }
};

Outcome Ok(dlmap_struct_kind structure, uint32_t major, uint32_t minor, uint64_t flags, int32_t device_type,
           int32_t device_id, dlmap_stream_meaning stream) {
  Outcome o;
  o.structure = structure;
  o.major = major;
  o.minor = minor;
  o.flags = flags;
  o.device_type = device_type;
  o.device_id = device_id;
  o.stream = stream;
  return o;
}

Outcome Fail(int32_t code, const char *id, const char *exception, const std::string &message) {
  Outcome o;
  o.kind = Kind::kError;
  o.code = code;
  o.id = id;
  o.exception = exception;
  o.message = message;
  return o;
}

// The operation needs the GPU backend (a copy to or from accelerator memory, or making the consumer's stream wait).
// Where the platform cannot be served (this machine: CUDA toolkit, no driver) that is platform_unavailable with the
// given prefix and the probe's (vendor's) reason; where it can, the row is skipped: its buffer is host memory posing
// as device memory, and tests/gpu exercises the backend with real (or fake-runtime) device memory.
Outcome NeedsGpu(dlmap_platform platform, const char *prefix) {
  Outcome o;
  o.kind = Kind::kNeedsGpu;
  o.platform = platform;
  o.message = prefix;
  return o;
}

const char *const kCudaPrefix = "Device type kDLCUDA (2) needs platform cuda, which this build or machine cannot serve: ";
const char *const kCudaHostPrefix =
    "Device type kDLCUDAHost (3) needs platform cuda, which this build or machine cannot serve: ";
const char *const kManagedPrefix =
    "Device type kDLCUDAManaged (13) needs platform cuda, which this build or machine cannot serve: ";
const char *const kRocmPrefix = "Device type kDLROCM (10) needs platform rocm, which this build or machine cannot serve: ";

struct Row {
  std::string name;
  ArraySpec array;
  RequestSpec request;
  Outcome expect;
};

void PrintTo(const Row &row, std::ostream *os) { *os << row.name; }

// ---- the table -------------------------------------------------------------------------------------------------

std::vector<Row> ExportRows() {
  const int32_t CPU = DLMAP_DEVICE_CPU, CUDA = DLMAP_DEVICE_CUDA, CUDAHOST = DLMAP_DEVICE_CUDAHOST,
                OPENCL = DLMAP_DEVICE_OPENCL, ROCM = DLMAP_DEVICE_ROCM, ROCMHOST = DLMAP_DEVICE_ROCMHOST,
                MANAGED = DLMAP_DEVICE_CUDAMANAGED, ONEAPI = DLMAP_DEVICE_ONEAPI, TPUHOST = DLMAP_DEVICE_TPUHOST;
  const Outcome cpu_legacy = Ok(kLegacy, 0, 8, 0, CPU, 0, kHostSync);
  return {
      // ---- versions: max_version=None → legacy, which speaks DLPack 0.8 --------------------------------------
      {"no_max_version_is_legacy_0_8", Arr(), Req(), cpu_legacy},
      {"legacy_bool_is_fine_in_0_8", Arr().Of(kBool), Req(), cpu_legacy},
      {"legacy_float8_not_in_0_8", Arr().Of(kF8), Req(),
       Fail(104, "dtype_not_in_version", "BufferError",
            "Data type float8_e4m3fn cannot be expressed in DLPack 0.8; it was introduced in 1.1.")},
      {"max_0_4_too_old", Arr(), Req().Max(0, 4),
       Fail(101, "max_version_too_old", "BufferError",
            "dlmap does not support any DLPack version below 0.5 but version 0.4 was requested.")},
      {"max_0_0_too_old", Arr(), Req().Max(0, 0),
       Fail(101, "max_version_too_old", "BufferError",
            "dlmap does not support any DLPack version below 0.5 but version 0.0 was requested.")},
      {"max_0_5_legacy_0_5", Arr(), Req().Max(0, 5), Ok(kLegacy, 0, 5, 0, CPU, 0, kHostSync)},
      {"max_0_6_legacy_0_6", Arr(), Req().Max(0, 6), Ok(kLegacy, 0, 6, 0, CPU, 0, kHostSync)},
      {"max_0_6_oneapi_not_in_version", Arr().On(ONEAPI, 0), Req().Max(0, 6),
       Fail(103, "device_type_not_in_version", "BufferError",
            "Device type kDLOneAPI (14) cannot be expressed in DLPack 0.6; it was introduced in 0.7.")},
      {"max_0_7_oneapi_legacy", Arr().On(ONEAPI, 2), Req().Max(0, 7), Ok(kLegacy, 0, 7, 0, ONEAPI, 2, kHostSync)},
      {"max_0_6_bool_not_in_version", Arr().Of(kBool), Req().Max(0, 6),
       Fail(104, "dtype_not_in_version", "BufferError",
            "Data type bool cannot be expressed in DLPack 0.6; it was introduced in 0.8.")},
      {"max_0_9_legacy_0_8", Arr(), Req().Max(0, 9), cpu_legacy},
      {"max_1_0_versioned_1_0", Arr(), Req().Max(1, 0), Ok(kVersioned, 1, 0, 0, CPU, 0, kHostSync)},
      {"max_1_1_versioned_1_1", Arr(), Req().Max(1, 1), Ok(kVersioned, 1, 1, 0, CPU, 0, kHostSync)},
      {"max_1_3_versioned_1_3", Arr(), Req().Max(1, 3), Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync)},
      // A newer max_version gets the current version (the spec's abi.current, read from the YAML).
      {"max_1_9_versioned_current", Arr(), Req().Max(1, 9), Ok(kVersioned, kCurMajor, kCurMinor, 0, CPU, 0, kHostSync)},
      {"max_2_0_versioned_current", Arr(), Req().Max(2, 0), Ok(kVersioned, kCurMajor, kCurMinor, 0, CPU, 0, kHostSync)},
      {"float8_to_1_0_not_in_version", Arr().Of(kF8), Req().Max(1, 0),
       Fail(104, "dtype_not_in_version", "BufferError",
            "Data type float8_e4m3fn cannot be expressed in DLPack 1.0; it was introduced in 1.1.")},
      {"float8_to_1_1", Arr().Of(kF8), Req().Max(1, 1), Ok(kVersioned, 1, 1, 0, CPU, 0, kHostSync)},
      {"bcomplex32_to_1_2_not_in_version", Arr().Of(kBc32), Req().Max(1, 2),
       Fail(104, "dtype_not_in_version", "BufferError",
            "Data type bcomplex32 cannot be expressed in DLPack 1.2; it was introduced in 1.3.")},
      {"bcomplex32_to_1_3", Arr().Of(kBc32), Req().Max(1, 3), Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync)},
      // Padded float4 to 1.0: both the dtype (1.1) and IS_SUBBYTE_TYPE_PADDED (1.1) are too new. The check order is
      // device type, dtype, flags (dlmap_check_representable), so the dtype is reported; every sub-byte width of the
      // default spec arrived in 1.1, so flag_not_in_version cannot come first here (see FlagNotInVersion below).
      {"padded_float4_to_1_0_dtype_first", Arr().Of(kF4).Padded(), Req().Max(1, 0),
       Fail(104, "dtype_not_in_version", "BufferError",
            "Data type float4_e2m1fn cannot be expressed in DLPack 1.0; it was introduced in 1.1.")},
      {"padded_float4_to_1_1", Arr().Of(kF4).Padded(), Req().Max(1, 1), Ok(kVersioned, 1, 1, kPadded, CPU, 0, kHostSync)},
      {"packed_float4_to_1_1", Arr().Of(kF4), Req().Max(1, 1), Ok(kVersioned, 1, 1, 0, CPU, 0, kHostSync)},
      {"padded_float32_invalid", Arr().Padded(), Req().Max(1, 3),
       Fail(304, "subbyte_padding_invalid", "BufferError",
            "IS_SUBBYTE_TYPE_PADDED is set but float32 is not a sub-byte type.")},
      {"padded_float4x2_is_a_byte", Arr().Of(kF4x2).Padded(), Req().Max(1, 3),
       Fail(304, "subbyte_padding_invalid", "BufferError",
            "IS_SUBBYTE_TYPE_PADDED is set but float4_e2m1fnx2 is not a sub-byte type.")},
      {"trn_to_1_1_not_in_version", Arr().On(DLMAP_DEVICE_TRN, 0), Req().Max(1, 1),
       Fail(103, "device_type_not_in_version", "BufferError",
            "Device type kDLTrn (18) cannot be expressed in DLPack 1.1; it was introduced in 1.2.")},

      // ---- read-only -----------------------------------------------------------------------------------------
      {"read_only_legacy", Arr().ReadOnly(), Req(),
       Fail(106, "read_only_needs_versioned", "BufferError",
            "Cannot export a read-only array as a legacy DLManagedTensor, which cannot mark it read-only; pass "
            "max_version=(1, 0) or higher, or copy=True.")},
      {"read_only_max_0_8_legacy", Arr().ReadOnly(), Req().Max(0, 8),
       Fail(106, "read_only_needs_versioned", "BufferError",
            "Cannot export a read-only array as a legacy DLManagedTensor, which cannot mark it read-only; pass "
            "max_version=(1, 0) or higher, or copy=True.")},
      {"read_only_legacy_copy_never", Arr().ReadOnly(), Req().Never(),
       Fail(106, "read_only_needs_versioned", "BufferError",
            "Cannot export a read-only array as a legacy DLManagedTensor, which cannot mark it read-only; pass "
            "max_version=(1, 0) or higher, or copy=True.")},
      {"read_only_legacy_copy_always", Arr().ReadOnly(), Req().Always(), cpu_legacy.Copy({0, 1, 2, 3, 4, 5})},
      {"read_only_versioned", Arr().ReadOnly(), Req().Max(1, 0), Ok(kVersioned, 1, 0, kReadOnly, CPU, 0, kHostSync)},
      {"read_only_versioned_copy_always_is_writable", Arr().ReadOnly(), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Copy({0, 1, 2, 3, 4, 5})},
      {"read_only_pinned_host_view", Arr().On(CUDAHOST, 0).ReadOnly(), Req().Max(1, 0).To(CPU, 0),
       Ok(kVersioned, 1, 0, kReadOnly, CPU, 0, kHostSync)},

      // ---- copy=True: a compact, 64-byte-aligned copy holding the elements in row-major order ----------------
      {"copy_compact", Arr(), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Copy({0, 1, 2, 3, 4, 5})},
      {"copy_legacy_says_copied_without_flag", Arr(), Req().Always(), cpu_legacy.Copy({0, 1, 2, 3, 4, 5})},
      // a [2, 3] int32 buffer seen transposed: [[0, 3], [1, 4], [2, 5]]
      {"copy_transposed", Arr().Of(kI32).Shape({3, 2}).Strides({1, 3}), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({3, 2}, {2, 1}).Copy({0, 3, 1, 4, 2, 5})},
      // x[::-1] of 4 int32: the first element is the last in memory (byte_offset 12)
      {"copy_negative_stride", Arr().Of(kI32).Shape({4}).Strides({-1}).Offset(12), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({4}, {1}).Copy({3, 2, 1, 0})},
      // x[::-1, ::-1] of a [2, 3] int16 buffer (first element at byte 10)
      {"copy_negative_strides_2d", Arr().Of(kI16).Strides({-3, -1}).Offset(10), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Copy({5, 4, 3, 2, 1, 0})},
      // x[1:3, 1:4:2] of a [4, 5] int32 buffer: elements 6, 8, 11, 13
      {"copy_sliced", Arr().Of(kI32).Shape({2, 2}).Strides({5, 2}).Offset(24), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({2, 2}, {2, 1}).Copy({6, 8, 11, 13})},
      {"copy_byte_offset_folded", Arr().Of(kI32).Shape({3}).Offset(8), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({3}, {1}).Copy({2, 3, 4})},
      {"copy_broadcast", Arr().Of(kI32).Strides({0, 1}), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Copy({0, 1, 2, 0, 1, 2})},
      {"copy_size_1_dims_get_compact_strides", Arr().Of(kI32).Shape({1, 3, 1}).Strides({100, 2, 7}),
       Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({1, 3, 1}, {3, 1, 1}).Copy({0, 2, 4})},
      {"copy_0d", Arr().Of(kI64).Shape({}).NullShape().Offset(16), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Scalar().Copy({2})},
      {"copy_size_0", Arr().Shape({0, 3}), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({0, 3}, {3, 1}).Copy({})},
      {"copy_size_0_null_data", Arr().Shape({2, 0}).NullData(), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({2, 0}, {1, 1}).Copy({})},
      {"copy_size_0_null_data_with_offset", Arr().Shape({0}).NullData().Offset(8), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({0}, {1}).Copy({})},
      // float32x4 elements are 16 bytes; every other one
      {"copy_vector_lanes", Arr().Of(kF32x4).Shape({2}).Strides({2}), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({2}, {1}).Copy({0, 2})},
      {"copy_complex128_reversed", Arr().Of(kC128).Shape({3}).Strides({-1}).Offset(32), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({3}, {1}).Copy({2, 1, 0})},
      {"copy_uint8_fortran_order", Arr().Of(kU8).Shape({2, 2}).Strides({1, 2}), Req().Max(1, 3).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({2, 2}, {2, 1}).Copy({0, 2, 1, 3})},
      // packed float4: 6 elements in 3 bytes
      {"copy_packed_float4", Arr().Of(kF4).Shape({6}), Req().Max(1, 1).Always(),
       Ok(kVersioned, 1, 1, kCopied, CPU, 0, kHostSync).Layout({6}, {1}).CopyBytes({0, 1, 2})},
      {"copy_packed_float4_strided_not_implemented", Arr().Of(kF4).Shape({3}).Strides({2}), Req().Max(1, 1).Always(),
       Fail(603, "not_implemented", "NotImplementedError", "Copying strided sub-byte data is not implemented by dlmap")},
      // padded float4: one byte per element, so 5 elements are 5 bytes
      {"copy_padded_float4", Arr().Of(kF4).Shape({5}).Padded(), Req().Max(1, 1).Always(),
       Ok(kVersioned, 1, 1, kCopied | kPadded, CPU, 0, kHostSync).Layout({5}, {1}).CopyBytes({0, 1, 2, 3, 4})},
      {"copy_padded_float4_strided", Arr().Of(kF4).Shape({3}).Strides({2}).Padded(), Req().Max(1, 1).Always(),
       Ok(kVersioned, 1, 1, kCopied | kPadded, CPU, 0, kHostSync).Layout({3}, {1}).CopyBytes({0, 2, 4})},
      {"copy_never_same_device_is_a_view", Arr(), Req().Max(1, 3).Never(), Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync)},
      {"copy_never_keeps_strides", Arr().Of(kI32).Shape({3, 2}).Strides({1, 3}), Req().Max(1, 3).Never(),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Layout({3, 2}, {1, 3})},
      {"copy_cuda_needs_gpu", Arr().On(CUDA, 0), Req().Max(1, 3).Always().Stream(-1), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaPrefix)},
      {"copy_pinned_to_pinned_needs_gpu", Arr().On(CUDAHOST, 0), Req().Max(1, 3).Always(),
       NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaHostPrefix)},
      {"copy_opencl_has_no_backend", Arr().On(OPENCL, 0), Req().Max(1, 3).Always(),
       Fail(208, "platform_unavailable", "BufferError",
            "Device type kDLOpenCL (4) needs platform opencl, which this build or machine cannot serve: no dlmap "
            "backend serves this platform")},

      // ---- layout of views: strides filled when NULL, kept as given otherwise; byte_offset kept -------------
      {"view_0d_null_shape", Arr().Shape({}).NullShape(), Req().Max(1, 3), Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Scalar()},
      {"view_0d_with_shape_pointer", Arr().Shape({}).Strides({}), Req(), cpu_legacy.Scalar()},
      {"view_size_0", Arr().Shape({2, 0, 3}), Req().Max(1, 3),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Layout({2, 0, 3}, {3, 3, 1})},
      {"view_size_0_null_data", Arr().Shape({0}).NullData(), Req().Max(1, 3),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Layout({0}, {1}).DataNull()},
      {"view_size_1_strides_not_normalised", Arr().Shape({1, 3}).Strides({42, 1}), Req().Max(1, 3),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Layout({1, 3}, {42, 1})},
      {"view_null_strides_filled", Arr().Shape({2, 3, 4}), Req(), cpu_legacy.Layout({2, 3, 4}, {12, 4, 1})},
      {"view_byte_offset_kept", Arr().Offset(64), Req().Max(1, 3), Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Offset(64)},
      {"view_negative_stride_kept", Arr().Of(kI32).Shape({4}).Strides({-1}).Offset(12), Req().Max(1, 3),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Layout({4}, {-1}).Offset(12)},
      {"view_cpu_id_is_0", Arr().On(CPU, 3), Req(), cpu_legacy},

      // ---- the array's own description ---------------------------------------------------------------------
      {"array_device_type_6_unknown", Arr().On(6, 0), Req().Max(1, 3),
       Fail(210, "device_type_unknown", "ValueError", UNKNOWN_TYPE("6"))},
      {"dtype_code_unknown", Arr().Of(kCode99), Req().Max(1, 3),
       Fail(301, "dtype_code_unknown", "BufferError", "Unknown or invalid DLPack type code 99")},
      {"dtype_bits_invalid", Arr().Of(kF7), Req().Max(1, 3),
       Fail(302, "dtype_bits_invalid", "BufferError", "Invalid or unsupported DLPack kDLFloat width: 7 bits (valid: 16, 32, 64)")},
      {"dtype_opaque_handle", Arr().Of(kOpaque), Req().Max(1, 3),
       Fail(302, "dtype_bits_invalid", "BufferError",
            "Invalid or unsupported DLPack kDLOpaqueHandle width: 64 bits (valid: none)")},
      {"dtype_lanes_0", Arr().Of(kF32Lanes0), Req().Max(1, 3),
       Fail(303, "dtype_lanes_invalid", "BufferError",
            "Invalid DLPack lanes for kDLFloat: 0 (lanes must be at least 1, and exactly 1 for scalar-only codes)")},
      {"data_null_with_elements", Arr().NullData(), Req().Max(1, 3),
       Fail(406, "data_null", "BufferError", "The DLPack tensor has a NULL data pointer but 24 bytes of data")},
      {"data_null_packed_float4", Arr().Of(kF4).Shape({5}).NullData(), Req().Max(1, 3),
       Fail(406, "data_null", "BufferError", "The DLPack tensor has a NULL data pointer but 3 bytes of data")},
      {"data_null_padded_float4", Arr().Of(kF4).Shape({5}).Padded().NullData(), Req().Max(1, 3),
       Fail(406, "data_null", "BufferError", "The DLPack tensor has a NULL data pointer but 5 bytes of data")},
      {"ndim_negative", Arr().Ndim(-1), Req().Max(1, 3),
       Fail(401, "ndim_negative", "BufferError", "Number of dimensions in DLManagedTensor must be nonnegative, got -1")},
      {"ndim_65", Arr().Shape(std::vector<int64_t>(65, 1)), Req().Max(1, 3),
       Fail(402, "ndim_too_large", "BufferError", "Number of dimensions in DLManagedTensor is 65, above the maximum of 64")},
      {"ndim_64", Arr().Shape(std::vector<int64_t>(64, 1)), Req().Max(1, 3),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Layout(std::vector<int64_t>(64, 1), std::vector<int64_t>(64, 1))},
      {"shape_null", Arr().NullShape(), Req().Max(1, 3),
       Fail(403, "shape_null", "BufferError", "The DLPack tensor has 2 dimension(s) but a NULL shape")},
      {"dim_negative", Arr().Shape({2, -3}), Req().Max(1, 3),
       Fail(404, "dim_negative", "BufferError", "Dimension 1 of the DLPack tensor has negative extent -3")},
      {"size_overflow", Arr().Shape({INT64_MAX, 2}).Strides({2, 1}), Req().Max(1, 3),
       Fail(405, "size_overflow", "BufferError",
            "The DLPack tensor's element count or byte extent overflows (shape [9223372036854775807, 2], strides [2, 1])")},
      // Sub-byte bit counts past int64 (issue 14): 2^64 − 4 bits used to wrap to a 0-byte tensor.
      {"size_overflow_float4_2_64_bits", Arr().Of(kF4).Shape({(INT64_C(1) << 62) - 1}), Req().Max(1, 3),
       Fail(405, "size_overflow", "BufferError",
            "The DLPack tensor's element count or byte extent overflows (shape [4611686018427387903], strides [none: "
            "compact row-major])")},
      {"size_overflow_float4x2_2_63_bits", Arr().Of(kF4x2).Shape({INT64_C(1) << 60}), Req().Max(1, 3),
       Fail(405, "size_overflow", "BufferError",
            "The DLPack tensor's element count or byte extent overflows (shape [1152921504606846976], strides [none: "
            "compact row-major])")},

      // ---- dl_device -----------------------------------------------------------------------------------------
      {"to_cpu_same_device", Arr(), Req().Max(1, 3).To(CPU, 0), Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync)},
      {"to_cpu_any_id_is_the_host", Arr(), Req().Max(1, 3).To(CPU, 3), Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync)},
      {"to_cpu_copy_never", Arr(), Req().Max(1, 3).To(CPU, 0).Never(), Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync)},
      {"to_cpu_copy_always", Arr(), Req().To(CPU, 0).Always(), cpu_legacy.Copy({0, 1, 2, 3, 4, 5})},
      {"to_cpu_from_cuda_host_is_a_view", Arr().On(CUDAHOST, 1), Req().To(CPU, 0), cpu_legacy},
      {"to_cpu_from_cuda_host_copy_never", Arr().On(CUDAHOST, 1), Req().Max(1, 3).To(CPU, 0).Never(),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync)},
      {"to_cpu_from_rocm_host_is_a_view", Arr().On(ROCMHOST, 1), Req().Max(1, 3).To(CPU, 0),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync)},
      {"to_cpu_from_cuda_managed_is_a_view", Arr().On(MANAGED, 0).Offset(16), Req().Max(1, 3).To(CPU, 0),
       Ok(kVersioned, 1, 3, 0, CPU, 0, kHostSync).Offset(16)},
      {"to_cpu_from_cuda_host_copy_always", Arr().On(CUDAHOST, 0).Of(kI32).Shape({3}).Offset(4),
       Req().Max(1, 3).To(CPU, 0).Always(),
       Ok(kVersioned, 1, 3, kCopied, CPU, 0, kHostSync).Layout({3}, {1}).Copy({1, 2, 3})},
      {"to_opencl_4", Arr(), Req().Max(1, 3).To(OPENCL, 0),
       Fail(201, "export_unsupported_device_type", "BufferError", SEED("4"))},
      {"to_unknown_5", Arr(), Req().Max(1, 3).To(5, 0),
       Fail(201, "export_unsupported_device_type", "BufferError", SEED("5"))},
      {"to_unknown_200", Arr(), Req().Max(1, 3).To(200, 0),
       Fail(201, "export_unsupported_device_type", "BufferError", SEED("200"))},
      {"to_unknown_0", Arr(), Req().To(0, 0), Fail(201, "export_unsupported_device_type", "BufferError", SEED("0"))},
      {"to_unknown_negative", Arr(), Req().To(-1, 0),
       Fail(201, "export_unsupported_device_type", "BufferError", SEED("-1"))},
      {"to_vpi_no_platform", Arr(), Req().To(DLMAP_DEVICE_VPI, 0),
       Fail(201, "export_unsupported_device_type", "BufferError", SEED("9"))},
      {"to_oneapi_no_backend", Arr(), Req().To(ONEAPI, 0),
       Fail(201, "export_unsupported_device_type", "BufferError", SEED("14"))},
      {"to_own_opencl_device_is_a_view", Arr().On(OPENCL, 1), Req().Max(1, 3).To(OPENCL, 1),
       Ok(kVersioned, 1, 3, 0, OPENCL, 1, kHostSync)},
      {"to_other_opencl_device_has_no_backend", Arr().On(OPENCL, 1), Req().Max(1, 3).To(OPENCL, 0),
       Fail(208, "platform_unavailable", "BufferError",
            "Device type kDLOpenCL (4) needs platform opencl, which this build or machine cannot serve: no dlmap "
            "backend serves this platform")},
      {"to_cuda_copy_never", Arr(), Req().Max(1, 3).To(CUDA, 0).Never(),
       Fail(211, "export_copy_to_device_forbidden", "BufferError", FORBIDDEN("(kDLCUDA, 0)", "(kDLCPU, 0)"))},
      {"to_cuda_copy_if_needed", Arr(), Req().Max(1, 3).To(CUDA, 0), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaPrefix)},
      {"to_cuda_copy_always", Arr(), Req().Max(1, 3).To(CUDA, 0).Always(), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaPrefix)},
      {"to_cuda_host_from_cpu", Arr(), Req().Max(1, 3).To(CUDAHOST, 0), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaHostPrefix)},
      {"to_rocm_from_cpu", Arr(), Req().Max(1, 3).To(ROCM, 0), NeedsGpu(DLMAP_PLATFORM_ROCM, kRocmPrefix)},
      {"to_cpu_from_cuda", Arr().On(CUDA, 1), Req().Max(1, 3).To(CPU, 0), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaPrefix)},
      {"to_cpu_from_cuda_copy_never", Arr().On(CUDA, 1), Req().Max(1, 3).To(CPU, 0).Never(),
       Fail(211, "export_copy_to_device_forbidden", "BufferError", FORBIDDEN("(kDLCPU, 0)", "(kDLCUDA, 1)"))},
      {"to_other_cuda_device_copy_never", Arr().On(CUDA, 0), Req().Max(1, 3).To(CUDA, 1).Never().Stream(-1),
       Fail(211, "export_copy_to_device_forbidden", "BufferError", FORBIDDEN("(kDLCUDA, 1)", "(kDLCUDA, 0)"))},
      {"to_own_cuda_device_no_sync", Arr().On(CUDA, 1), Req().Max(1, 3).To(CUDA, 1).Never().Stream(-1),
       Ok(kVersioned, 1, 3, 0, CUDA, 1, kNoSync)},
      {"to_cpu_negative_id", Arr(), Req().Max(1, 3).To(CPU, -1),
       Fail(209, "device_id_out_of_range", "ValueError",
            "Device id -1 is out of range for platform cpu, which has 1 device(s).")},
      // the count is the CUDA runtime's (0 on this machine, which has no driver); {cuda_devices} is filled in
      {"to_cuda_negative_id", Arr(), Req().Max(1, 3).To(CUDA, -2),
       Fail(209, "device_id_out_of_range", "ValueError",
            "Device id -2 is out of range for platform cuda, which has {cuda_devices} device(s).")},

      // ---- streams, read by the target device type's convention --------------------------------------------
      {"cpu_stream_none", Arr(), Req(), cpu_legacy},
      {"cpu_stream_0", Arr(), Req().Stream(0),
       Fail(502, "stream_invalid", "ValueError", "stream=0 is not valid for device type kDLCPU (1): " RULE_NONE)},
      {"cpu_stream_minus_1", Arr(), Req().Stream(-1),
       Fail(502, "stream_invalid", "ValueError", "stream=-1 is not valid for device type kDLCPU (1): " RULE_NONE)},
      {"cpu_stream_7", Arr(), Req().Max(1, 3).Stream(7),
       Fail(502, "stream_invalid", "ValueError", "stream=7 is not valid for device type kDLCPU (1): " RULE_NONE)},
      {"to_cpu_from_pinned_stream_1", Arr().On(CUDAHOST, 0), Req().To(CPU, 0).Stream(1),
       Fail(502, "stream_invalid", "ValueError", "stream=1 is not valid for device type kDLCPU (1): " RULE_NONE)},
      {"to_cpu_from_cuda_stream_minus_1", Arr().On(CUDA, 0), Req().To(CPU, 0).Stream(-1),
       Fail(502, "stream_invalid", "ValueError", "stream=-1 is not valid for device type kDLCPU (1): " RULE_NONE)},
      {"cuda_stream_minus_1_no_sync", Arr().On(CUDA, 0), Req().Stream(-1), Ok(kLegacy, 0, 8, 0, CUDA, 0, kNoSync)},
      {"cuda_stream_minus_1_versioned", Arr().On(CUDA, 3).ReadOnly(), Req().Max(1, 3).Stream(-1),
       Ok(kVersioned, 1, 3, kReadOnly, CUDA, 3, kNoSync)},
      {"cuda_stream_0", Arr().On(CUDA, 0), Req().Stream(0),
       Fail(502, "stream_invalid", "ValueError", "stream=0 is not valid for device type kDLCUDA (2): " RULE_CUDA)},
      {"cuda_stream_minus_2", Arr().On(CUDA, 0), Req().Stream(-2),
       Fail(502, "stream_invalid", "ValueError", "stream=-2 is not valid for device type kDLCUDA (2): " RULE_CUDA)},
      // 1, 2 and handles are valid, but making the consumer's stream wait needs the GPU backend
      {"cuda_stream_1", Arr().On(CUDA, 0), Req().Stream(1), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaPrefix)},
      {"cuda_stream_2", Arr().On(CUDA, 0), Req().Stream(2), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaPrefix)},
      {"cuda_stream_handle", Arr().On(CUDA, 0), Req().Stream(0x10000), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaPrefix)},
      // an integer below the first page is no handle: refused before the backend is asked (issue 48)
      {"cuda_stream_5", Arr().On(CUDA, 0), Req().Stream(5),
       Fail(505, "stream_not_a_handle", "ValueError", "stream=5 cannot be a stream handle for device type kDLCUDA (2): "
            "a handle is the address of a stream the runtime made, 4096 or above; no runtime call was given it.")},
      {"cuda_stream_none", Arr().On(CUDA, 0), Req(), NeedsGpu(DLMAP_PLATFORM_CUDA, kCudaPrefix)},
      {"to_cuda_from_cpu_stream_0", Arr(), Req().To(CUDA, 0).Stream(0),
       Fail(502, "stream_invalid", "ValueError", "stream=0 is not valid for device type kDLCUDA (2): " RULE_CUDA)},
      {"managed_stream_0", Arr().On(MANAGED, 0), Req().Stream(0),
       Fail(502, "stream_invalid", "ValueError", "stream=0 is not valid for device type kDLCUDAManaged (13): " RULE_CUDA)},
      {"managed_stream_minus_1", Arr().On(MANAGED, 0), Req().Max(1, 0).Stream(-1),
       Ok(kVersioned, 1, 0, 0, MANAGED, 0, kNoSync)},
      {"managed_stream_1", Arr().On(MANAGED, 0), Req().Stream(1), NeedsGpu(DLMAP_PLATFORM_CUDA, kManagedPrefix)},
      {"rocm_stream_minus_1_no_sync", Arr().On(ROCM, 1), Req().Stream(-1), Ok(kLegacy, 0, 8, 0, ROCM, 1, kNoSync)},
      {"rocm_stream_1", Arr().On(ROCM, 0), Req().Stream(1),
       Fail(502, "stream_invalid", "ValueError", "stream=1 is not valid for device type kDLROCM (10): " RULE_ROCM)},
      {"rocm_stream_2", Arr().On(ROCM, 0), Req().Stream(2),
       Fail(502, "stream_invalid", "ValueError", "stream=2 is not valid for device type kDLROCM (10): " RULE_ROCM)},
      {"rocm_stream_0", Arr().On(ROCM, 0), Req().Stream(0), NeedsGpu(DLMAP_PLATFORM_ROCM, kRocmPrefix)},
      {"rocm_stream_handle", Arr().On(ROCM, 0), Req().Stream(0x10000), NeedsGpu(DLMAP_PLATFORM_ROCM, kRocmPrefix)},
      {"rocm_stream_3", Arr().On(ROCM, 0), Req().Stream(3),
       Fail(505, "stream_not_a_handle", "ValueError", "stream=3 cannot be a stream handle for device type kDLROCM (10): "
            "a handle is the address of a stream the runtime made, 4096 or above; no runtime call was given it.")},
      {"cuda_host_stream_none", Arr().On(CUDAHOST, 2), Req(), Ok(kLegacy, 0, 8, 0, CUDAHOST, 2, kHostSync)},
      {"cuda_host_stream_1", Arr().On(CUDAHOST, 0), Req().Stream(1),
       Fail(502, "stream_invalid", "ValueError", "stream=1 is not valid for device type kDLCUDAHost (3): " RULE_NONE)},
      {"cuda_host_stream_minus_1", Arr().On(CUDAHOST, 0), Req().Stream(-1),
       Fail(502, "stream_invalid", "ValueError", "stream=-1 is not valid for device type kDLCUDAHost (3): " RULE_NONE)},
      {"rocm_host_stream_0", Arr().On(ROCMHOST, 0), Req().Stream(0),
       Fail(502, "stream_invalid", "ValueError", "stream=0 is not valid for device type kDLROCMHost (11): " RULE_NONE)},
      {"tpu_host_stream_none", Arr().On(TPUHOST, 1), Req().Max(1, 3), Ok(kVersioned, 1, 3, 0, TPUHOST, 1, kHostSync)},
      {"opencl_stream_5_handle", Arr().On(OPENCL, 0), Req().Stream(5), Ok(kLegacy, 0, 8, 0, OPENCL, 0, kHandle)},
      {"opencl_stream_0_handle", Arr().On(OPENCL, 0), Req().Max(1, 3).Stream(0), Ok(kVersioned, 1, 3, 0, OPENCL, 0, kHandle)},
      {"opencl_stream_minus_1", Arr().On(OPENCL, 0), Req().Stream(-1), Ok(kLegacy, 0, 8, 0, OPENCL, 0, kNoSync)},
      {"opencl_stream_none", Arr().On(OPENCL, 0), Req(), Ok(kLegacy, 0, 8, 0, OPENCL, 0, kHostSync)},
      {"opencl_stream_minus_2", Arr().On(OPENCL, 0), Req().Stream(-2),
       Fail(502, "stream_invalid", "ValueError", "stream=-2 is not valid for device type kDLOpenCL (4): " RULE_OPAQUE)},
  };
}

// Every device type of the spec and unknown values, exported on its own device (id 1) with stream None and
// copy=None, once legacy (max_version None) and once versioned (1.3). GPU device types (kDLCUDA, kDLROCM,
// kDLCUDAManaged) read None as "the default stream", which the producer must make wait: that needs the GPU backend,
// so on this machine (no driver) they are platform_unavailable (the rows above show them succeeding with stream -1).
// Host-ish and handle-based types are views. The host is one device, so kDLCPU reports id 0. The device types up to
// 21 are written out by hand; any other the spec's YAML lists gets the outcome its facts imply (SpecEntry).
std::vector<Row> SweepRows() {
  struct Entry {
    int32_t type;
    std::string name;
    Outcome legacy, versioned;
  };
  auto ok = [](dlmap_struct_kind s, int32_t type, int32_t id) {
    return s == kLegacy ? Ok(kLegacy, 0, 8, 0, type, id, kHostSync) : Ok(kVersioned, 1, 3, 0, type, id, kHostSync);
  };
  auto both_ok = [&](int32_t type, const char *name) { return Entry{type, name, ok(kLegacy, type, 1), ok(kVersioned, type, 1)}; };
  auto unknown = [](int32_t type, const std::string &name, const std::string &message) {
    const Outcome o = Fail(210, "device_type_unknown", "ValueError", message);
    return Entry{type, name, o, o};
  };
  auto too_new = [&](int32_t type, const std::string &name, const std::string &message) {
    return Entry{type, name, Fail(103, "device_type_not_in_version", "BufferError", message), ok(kVersioned, type, 1)};
  };
  auto gpu = [](int32_t type, const char *name, dlmap_platform platform, const char *prefix) {
    return Entry{type, name, NeedsGpu(platform, prefix), NeedsGpu(platform, prefix)};
  };
  std::vector<Entry> entries = {
      unknown(0, "unknown_0", UNKNOWN_TYPE("0")),
      Entry{1, "kDLCPU", ok(kLegacy, 1, 0), ok(kVersioned, 1, 0)},
      gpu(2, "kDLCUDA", DLMAP_PLATFORM_CUDA, kCudaPrefix),
      both_ok(3, "kDLCUDAHost"),
      both_ok(4, "kDLOpenCL"),
      unknown(5, "unknown_5", UNKNOWN_TYPE("5")),
      unknown(6, "unknown_6", UNKNOWN_TYPE("6")),
      both_ok(7, "kDLVulkan"),
      both_ok(8, "kDLMetal"),
      both_ok(9, "kDLVPI"),
      gpu(10, "kDLROCM", DLMAP_PLATFORM_ROCM, kRocmPrefix),
      both_ok(11, "kDLROCMHost"),
      both_ok(12, "kDLExtDev"),
      gpu(13, "kDLCUDAManaged", DLMAP_PLATFORM_CUDA, kManagedPrefix),
      both_ok(14, "kDLOneAPI"),
      both_ok(15, "kDLWebGPU"),
      both_ok(16, "kDLHexagon"),
      too_new(17, "kDLMAIA", "Device type kDLMAIA (17) cannot be expressed in DLPack 0.8; it was introduced in 1.0."),
      too_new(18, "kDLTrn", "Device type kDLTrn (18) cannot be expressed in DLPack 0.8; it was introduced in 1.2."),
      too_new(19, "kDLTPU", "Device type kDLTPU (19) cannot be expressed in DLPack 0.8; it was introduced in 1.3."),
      too_new(20, "kDLTPUHost", "Device type kDLTPUHost (20) cannot be expressed in DLPack 0.8; it was introduced in 1.3."),
      too_new(21, "kDLAscend", "Device type kDLAscend (21) cannot be expressed in DLPack 0.8; it was introduced in 1.3."),
  };
  // The rest of the spec's device types: too new for the negotiated version, a GPU platform whose convention reads
  // None as a default stream (needs the GPU backend), or a view on its own device (id 0 on the host).
  spec_facts_version newest_legacy = {0, 0};
  for (const spec_facts_version_entry &v : spec_facts_versions) {
    if (std::string(v.structure) == "legacy") newest_legacy = v.version;
  }
  int32_t largest = 0;
  for (size_t i = 0; i < SPEC_FACTS_DEVICE_TYPE_COUNT; i++) {
    const spec_facts_device_type &f = spec_facts_device_types[i];
    largest = std::max(largest, f.value);
    bool listed = false;
    for (const Entry &e : entries) listed = listed || e.type == f.value;
    if (listed) continue;
    size_t platform = 0, convention = 0;
    while (std::string(spec_facts_platforms[platform].name) != f.platform) platform++;
    while (std::string(spec_facts_stream_conventions[convention].name) != f.stream) convention++;
    const bool on_host = std::string(spec_facts_platforms[platform].backend) == "cpu";
    const bool needs_gpu = std::string(spec_facts_platforms[platform].backend) == "gpu" &&
                           std::string(spec_facts_stream_conventions[convention].absent) != "host_sync";
    auto text = [](spec_facts_version v) { return std::to_string(v.major) + "." + std::to_string(v.minor); };
    auto outcome = [&](dlmap_struct_kind s, spec_facts_version version) {
      if (dlmap_version_compare(dlmap_version{f.introduced.major, f.introduced.minor},
                                dlmap_version{version.major, version.minor}) > 0) {
        return Fail(103, "device_type_not_in_version", "BufferError",
                    "Device type " + std::string(f.name) + " (" + std::to_string(f.value) +
                        ") cannot be expressed in DLPack " + text(version) + "; it was introduced in " +
                        text(f.introduced) + ".");
      }
      if (needs_gpu) {
        const std::string prefix = "Device type " + std::string(f.name) + " (" + std::to_string(f.value) +
                                   ") needs platform " + f.platform + ", which this build or machine cannot serve: ";
        return NeedsGpu(static_cast<dlmap_platform>(platform), prefix.c_str());
      }
      return Ok(s, version.major, version.minor, 0, f.value, on_host ? 0 : 1, kHostSync);
    };
    entries.push_back(Entry{f.value, f.name, outcome(kLegacy, newest_legacy), outcome(kVersioned, {1, 3})});
  }
  // Values the spec does not define, DLPack's next one among them.
  for (int32_t value : {largest + 1, 200, -1}) {
    bool defined = false;
    for (const spec_facts_device_type &f : spec_facts_device_types) defined = defined || f.value == value;
    if (defined) continue;
    const std::string text = std::to_string(value);
    entries.push_back(unknown(value, value < 0 ? "unknown_minus_" + text.substr(1) : "unknown_" + text,
                              "Unknown DLPack device type " + text +
                                  ": the spec this build was generated from does not define it."));
  }
  std::vector<Row> rows;
  for (const Entry &e : entries) {
    rows.push_back({std::string("legacy_") + e.name, Arr().On(e.type, 1), Req(), e.legacy});
    rows.push_back({std::string("v1_3_") + e.name, Arr().On(e.type, 1), Req().Max(1, 3), e.versioned});
  }
  return rows;
}

// ---- running a row ---------------------------------------------------------------------------------------------

// Owners count their releases; the static counter counts every release in the process.
std::atomic<int> g_owner_releases{0};

struct Owner {
  std::atomic<int> releases{0};
};

void ReleaseOwner(void *owner) {
  static_cast<Owner *>(owner)->releases++;
  g_owner_releases++;
}

// An allocator that counts, remembers the last block and can be told to fail.
struct CountingAllocator {
  std::atomic<int> allocations{0}, releases{0};
  void *last = nullptr;
  size_t last_size = 0, last_alignment = 0;
  void *released = nullptr;
  bool fail = false;

  static void *Allocate(void *ctx, size_t size, size_t alignment) {
    auto *self = static_cast<CountingAllocator *>(ctx);
    self->allocations++;
    self->last_size = size;
    self->last_alignment = alignment;
    // A size past PTRDIFF_MAX is refused as malloc would (and gcc 14 warns on a constant one reaching aligned_alloc).
    self->last = self->fail || size > PTRDIFF_MAX ? nullptr : std::aligned_alloc(alignment, size);
    return self->last;
  }
  static void Release(void *ctx, void *pointer) {
    auto *self = static_cast<CountingAllocator *>(ctx);
    self->releases++;
    self->released = pointer;
    std::free(pointer);
  }
  dlmap_allocator Hook() { return dlmap_allocator{&Allocate, &Release, this}; }
};

// The array's memory: byte i holds a pattern value, so elements at different offsets differ.
struct Buffer {
  alignas(64) unsigned char bytes[4096];
  Buffer() {
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = static_cast<unsigned char>(i * 131u + (i >> 8) + 7u);
  }
};

struct Built {
  dlmap_array array;
  std::vector<int64_t> shape, strides;  // the array's own (the tensor must not alias them)
};

void Build(const ArraySpec &spec, Buffer *buffer, Owner *owner, Built *out) {
  out->shape = spec.shape;
  out->strides = spec.strides;
  static const int64_t kNoDims[1] = {0};
  dlmap_array &a = out->array;
  a = dlmap_array_default();
  a.data = spec.data_null ? nullptr : buffer->bytes;
  a.device_type = spec.device_type;
  a.device_id = spec.device_id;
  a.dtype = spec.dtype;
  a.ndim = spec.has_ndim ? spec.ndim : static_cast<int32_t>(spec.shape.size());
  a.shape = spec.shape_null ? nullptr : (out->shape.empty() ? kNoDims : out->shape.data());
  a.strides = !spec.has_strides ? nullptr : (out->strides.empty() ? kNoDims : out->strides.data());
  a.byte_offset = spec.byte_offset;
  a.read_only = spec.read_only;
  a.subbyte_padded = spec.subbyte_padded;
  a.owner = owner;
  a.release = &ReleaseOwner;
}

dlmap_export_request MakeRequest(const RequestSpec &spec, const dlmap_allocator *allocator) {
  dlmap_export_request r = dlmap_export_request_default();
  r.has_max_version = spec.has_max;
  r.max_version.major = spec.major;
  r.max_version.minor = spec.minor;
  r.has_dl_device = spec.has_dl_device;
  r.dl_device_type = spec.dl_type;
  r.dl_device_id = spec.dl_id;
  r.copy = spec.copy;
  r.has_stream = spec.has_stream;
  r.stream = spec.stream;
  r.allocator = allocator;
  return r;
}

std::string Replace(std::string text, const std::string &from, const std::string &to) {
  const size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Machine-dependent parts of an expectation, filled in from the platform probe.
Outcome Resolve(const Outcome &expected, std::string *reason) {
  Outcome o = expected;
  if (o.message.find("{cuda_devices}") != std::string::npos) {
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    o.message = Replace(o.message, "{cuda_devices}", std::to_string(status.device_count));
  }
  if (o.kind != Kind::kNeedsGpu) return o;
  dlmap_platform_status status;
  dlmap_platform_probe(o.platform, &status);
  if (!status.available) {
    o = Fail(208, "platform_unavailable", "BufferError", expected.message);
    o.kind = Kind::kNeedsGpu;  // message is a prefix; the rest is the probe's reason
    *reason = status.reason;
  } else {
    o = Fail(603, "not_implemented", "NotImplementedError",
             "Moving data to or from accelerator memory (the GPU backend) is not implemented by dlmap");
  }
  return o;
}

size_t StorageBytes(const ArraySpec &a) {
  const size_t bits = static_cast<size_t>(a.dtype.bits) * a.dtype.lanes;
  return a.subbyte_padded ? 1 : bits / 8;
}

void CallDeleter(const dlmap_exported &out, bool on_thread) {
  auto call = [out] {
    if (out.structure == DLMAP_STRUCT_LEGACY) {
      out.legacy->deleter(out.legacy);
    } else {
      out.versioned->deleter(out.versioned);
    }
  };
  if (on_thread) {
    std::thread thread(call);
    thread.join();
  } else {
    call();
  }
}

// Exports the row and checks everything the contract says about the result; then releases it.
void RunRow(const Row &row, CountingAllocator *counting, bool deleter_on_thread) {
  auto buffer = std::make_unique<Buffer>();
  Owner owner;
  Built built;
  Build(row.array, buffer.get(), &owner, &built);
  dlmap_allocator hook;
  if (counting != nullptr) hook = counting->Hook();
  const dlmap_export_request request = MakeRequest(row.request, counting != nullptr ? &hook : nullptr);

  dlmap_exported out, before;
  std::memset(&out, 0x5A, sizeof out);
  std::memcpy(&before, &out, sizeof out);
  dlmap_error err;
  std::memset(&err, 0, sizeof err);
  const int32_t status = dlmap_export(&built.array, &request, &out, &err);

  std::string reason;
  const Outcome want = Resolve(row.expect, &reason);
  if (want.kind != Kind::kOk) {
    EXPECT_EQ(status, want.code) << err.message;
    EXPECT_EQ(err.code, want.code);
    EXPECT_STREQ(err.id, want.id.c_str());
    EXPECT_STREQ(dlmap_error_kind_name(err.kind), want.exception.c_str());
    if (want.kind == Kind::kNeedsGpu) {
      const std::string message = err.message;
      ASSERT_EQ(message.substr(0, want.message.size()), want.message);
      EXPECT_FALSE(reason.empty());
      EXPECT_EQ(message.substr(want.message.size()), reason);
    } else {
      EXPECT_STREQ(err.message, want.message.c_str());
    }
    // On error: nothing allocated, out untouched, the caller still owns the array.
    EXPECT_EQ(std::memcmp(&out, &before, sizeof out), 0) << "out was written on error";
    EXPECT_EQ(owner.releases.load(), 0);
    if (counting != nullptr) {
      EXPECT_EQ(counting->allocations.load(), 0);
    }
    return;
  }

  ASSERT_EQ(status, DLMAP_OK) << err.id << ": " << err.message;
  ASSERT_EQ(out.structure, want.structure);
  EXPECT_EQ(out.version.major, want.major);
  EXPECT_EQ(out.version.minor, want.minor);
  EXPECT_EQ(out.copied, want.copied);
  EXPECT_EQ(out.stream, want.stream);
  const DLTensor *tensor;
  void *block;
  if (want.structure == kLegacy) {
    ASSERT_NE(out.legacy, nullptr);
    EXPECT_EQ(out.versioned, nullptr);
    EXPECT_NE(out.legacy->deleter, nullptr);
    tensor = &out.legacy->dl_tensor;
    block = out.legacy;
  } else {
    ASSERT_NE(out.versioned, nullptr);
    EXPECT_EQ(out.legacy, nullptr);
    EXPECT_NE(out.versioned->deleter, nullptr);
    EXPECT_EQ(out.versioned->version.major, want.major);
    EXPECT_EQ(out.versioned->version.minor, want.minor);
    EXPECT_EQ(out.versioned->flags, want.flags);
    tensor = &out.versioned->dl_tensor;
    block = out.versioned;
  }
  // Read as int32_t: Debian's 0.6 <dlpack/dlpack.h> enum spans 0–15 in C++, so loading kDLTPUHost (20) through
  // DLDeviceType would be undefined behaviour (UBSan's -fsanitize=enum).
  int32_t device_type;
  std::memcpy(&device_type, &tensor->device.device_type, sizeof device_type);
  EXPECT_EQ(device_type, want.device_type);
  EXPECT_EQ(tensor->device.device_id, want.device_id);
  EXPECT_EQ(tensor->dtype.code, row.array.dtype.code);
  EXPECT_EQ(tensor->dtype.bits, row.array.dtype.bits);
  EXPECT_EQ(tensor->dtype.lanes, row.array.dtype.lanes);
  EXPECT_EQ(tensor->byte_offset, want.byte_offset);
  if (want.scalar) {
    EXPECT_EQ(tensor->ndim, 0);
    EXPECT_EQ(tensor->shape, nullptr);
    EXPECT_EQ(tensor->strides, nullptr);
  } else {
    ASSERT_EQ(tensor->ndim, static_cast<int32_t>(want.shape.size()));
    ASSERT_NE(tensor->shape, nullptr);
    ASSERT_NE(tensor->strides, nullptr);  // strides are never NULL for ndim > 0 (DLPack 1.2)
    EXPECT_EQ(std::vector<int64_t>(tensor->shape, tensor->shape + tensor->ndim), want.shape);
    EXPECT_EQ(std::vector<int64_t>(tensor->strides, tensor->strides + tensor->ndim), want.strides);
    EXPECT_NE(tensor->shape, built.array.shape);
    EXPECT_NE(tensor->strides, built.array.strides);
  }
  if (counting != nullptr) {
    // One allocation holds the managed tensor (first), shape, strides and any copy.
    EXPECT_EQ(counting->allocations.load(), 1);
    EXPECT_EQ(block, counting->last);
    EXPECT_GE(counting->last_alignment, static_cast<size_t>(DLMAP_DATA_ALIGNMENT));
    const char *lo = static_cast<const char *>(counting->last), *hi = lo + counting->last_size;
    if (!want.scalar && tensor->ndim > 0) {
      EXPECT_TRUE(reinterpret_cast<const char *>(tensor->shape) >= lo &&
                  reinterpret_cast<const char *>(tensor->strides + tensor->ndim) <= hi);
    }
    if (want.copied) {
      EXPECT_TRUE(static_cast<const char *>(tensor->data) >= lo && static_cast<const char *>(tensor->data) <= hi);
    }
  }
  if (want.copied) {
    ASSERT_NE(tensor->data, nullptr);
    EXPECT_NE(tensor->data, built.array.data);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor->data) % DLMAP_DATA_ALIGNMENT, 0u);
    const unsigned char *copy = static_cast<const unsigned char *>(tensor->data);
    if (want.check_elements) {
      const size_t n = StorageBytes(row.array);
      for (size_t j = 0; j < want.elements.size(); j++) {
        EXPECT_EQ(std::memcmp(copy + j * n, buffer->bytes + static_cast<size_t>(want.elements[j]) * n, n), 0)
            << "element " << j << " should be source element " << want.elements[j];
      }
    }
    if (want.check_bytes) {
      for (size_t j = 0; j < want.bytes.size(); j++) {
        EXPECT_EQ(copy[j], buffer->bytes[want.bytes[j]]) << "byte " << j;
      }
    }
  } else if (want.data_null) {
    EXPECT_EQ(tensor->data, nullptr);
  } else {
    EXPECT_EQ(tensor->data, built.array.data);  // a view: the same pointer (or handle), never offset
  }

  // The consumer owns it now: the owner is released exactly once, by the deleter, with the block.
  EXPECT_EQ(owner.releases.load(), 0);
  CallDeleter(out, deleter_on_thread);
  EXPECT_EQ(owner.releases.load(), 1);
  if (counting != nullptr) {
    EXPECT_EQ(counting->allocations.load(), 1);
    EXPECT_EQ(counting->releases.load(), 1);
    EXPECT_EQ(counting->released, block);
  }
}

class ExportTable : public ::testing::TestWithParam<Row> {};

// With a counting allocator and the deleter on another thread; then with the default allocator and the deleter on
// this thread (ASan/LSan check the default allocator's block).
TEST_P(ExportTable, Row) {
  if (GetParam().expect.kind == Kind::kNeedsGpu) {
    dlmap_platform_status status;
    dlmap_platform_probe(GetParam().expect.platform, &status);
    if (status.available) GTEST_SKIP() << "the GPU backend serves this row here; tests/gpu covers it with device memory";
  }
  {
    SCOPED_TRACE("counting allocator, deleter on another thread");
    CountingAllocator counting;
    RunRow(GetParam(), &counting, true);
  }
  {
    SCOPED_TRACE("default allocator, deleter on this thread");
    RunRow(GetParam(), nullptr, false);
  }
}

std::string RowName(const ::testing::TestParamInfo<Row> &info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Rules, ExportTable, ::testing::ValuesIn(ExportRows()), RowName);
INSTANTIATE_TEST_SUITE_P(EveryDeviceType, ExportTable, ::testing::ValuesIn(SweepRows()), RowName);

// ---- invariants beyond the table ----------------------------------------------------------------------------------

dlmap_array CpuArray(void *data, const int64_t *shape, int32_t ndim, Owner *owner) {
  dlmap_array a = dlmap_array_default();
  a.data = data;
  a.device_type = DLMAP_DEVICE_CPU;
  a.dtype = kF32;
  a.ndim = ndim;
  a.shape = shape;
  a.owner = owner;
  a.release = &ReleaseOwner;
  return a;
}

dlmap_export_request Request(bool versioned, dlmap_copy_mode copy, const dlmap_allocator *allocator) {
  dlmap_export_request r = dlmap_export_request_default();
  r.has_max_version = versioned;
  r.max_version.major = 1;
  r.max_version.minor = 3;
  r.copy = copy;
  r.allocator = allocator;
  return r;
}

TEST(ExportOwnership, EveryDeleterReleasesTheOwnerOnceFromAnyThread) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3};
  Owner owner;
  const int before = g_owner_releases.load();
  std::vector<dlmap_exported> exported;
  for (int i = 0; i < 16; i++) {
    const dlmap_array array = CpuArray(data, shape, 2, &owner);  // each export takes one reference
    const dlmap_export_request request = Request(i % 2 == 0, i % 4 < 2 ? DLMAP_COPY_IF_NEEDED : DLMAP_COPY_ALWAYS, nullptr);
    dlmap_exported out;
    ASSERT_EQ(dlmap_export(&array, &request, &out, nullptr), DLMAP_OK);
    exported.push_back(out);
  }
  EXPECT_EQ(owner.releases.load(), 0);
  std::vector<std::thread> threads;
  for (const dlmap_exported &out : exported) threads.emplace_back([out] { CallDeleter(out, false); });
  for (std::thread &t : threads) t.join();
  EXPECT_EQ(owner.releases.load(), 16);
  EXPECT_EQ(g_owner_releases.load() - before, 16);
}

TEST(ExportOwnership, NullReleaseIsAllowed) {
  float data[6] = {};
  const int64_t shape[2] = {2, 3};
  dlmap_array array = CpuArray(data, shape, 2, nullptr);
  array.release = nullptr;
  const dlmap_export_request request = Request(true, DLMAP_COPY_ALWAYS, nullptr);
  dlmap_exported out;
  ASSERT_EQ(dlmap_export(&array, &request, &out, nullptr), DLMAP_OK);
  const int before = g_owner_releases.load();
  CallDeleter(out, true);
  EXPECT_EQ(g_owner_releases.load(), before);
}

TEST(ExportOwnership, ErrorsNeverReleaseTheOwnerOrTouchOut) {
  float data[6] = {};
  const int64_t shape[2] = {2, 3};
  Owner owner;
  const int before = g_owner_releases.load();
  const dlmap_array array = CpuArray(data, shape, 2, &owner);
  dlmap_export_request request = Request(false, DLMAP_COPY_IF_NEEDED, nullptr);
  request.has_stream = true;  // stream=0 on the CPU
  dlmap_exported out, untouched;
  std::memset(&out, 0xC3, sizeof out);
  std::memcpy(&untouched, &out, sizeof out);
  EXPECT_EQ(dlmap_export(&array, &request, &out, nullptr), DLMAP_ERR_STREAM_INVALID);  // err may be NULL
  EXPECT_EQ(std::memcmp(&out, &untouched, sizeof out), 0);
  EXPECT_EQ(owner.releases.load(), 0);
  EXPECT_EQ(g_owner_releases.load(), before);
}

TEST(ExportMemory, OneAllocationPerExportThroughTheCallersAllocator) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3};
  for (dlmap_copy_mode copy : {DLMAP_COPY_IF_NEEDED, DLMAP_COPY_ALWAYS}) {
    CountingAllocator counting;
    const dlmap_allocator hook = counting.Hook();
    Owner owner;
    const dlmap_array array = CpuArray(data, shape, 2, &owner);
    const dlmap_export_request request = Request(true, copy, &hook);
    dlmap_exported out;
    ASSERT_EQ(dlmap_export(&array, &request, &out, nullptr), DLMAP_OK);
    EXPECT_EQ(counting.allocations.load(), 1);
    EXPECT_EQ(counting.last_alignment, static_cast<size_t>(DLMAP_DATA_ALIGNMENT));
    EXPECT_EQ(counting.last_size % DLMAP_DATA_ALIGNMENT, 0u);
    EXPECT_EQ(static_cast<void *>(out.versioned), counting.last);
    if (copy == DLMAP_COPY_ALWAYS) {
      const float *copied = static_cast<const float *>(out.versioned->dl_tensor.data);
      EXPECT_EQ(std::vector<float>(copied, copied + 6), std::vector<float>(data, data + 6));
    }
    CallDeleter(out, true);
    EXPECT_EQ(counting.releases.load(), 1);
    EXPECT_EQ(counting.released, counting.last);
    EXPECT_EQ(owner.releases.load(), 1);
  }
}

TEST(ExportMemory, TheAllocatorStructNeedNotOutliveTheExport) {
  float data[6] = {};
  const int64_t shape[2] = {2, 3};
  CountingAllocator counting;
  Owner owner;
  dlmap_exported out;
  {
    dlmap_allocator hook = counting.Hook();
    const dlmap_array array = CpuArray(data, shape, 2, &owner);
    const dlmap_export_request request = Request(true, DLMAP_COPY_ALWAYS, &hook);
    ASSERT_EQ(dlmap_export(&array, &request, &out, nullptr), DLMAP_OK);
    std::memset(&hook, 0, sizeof hook);  // the caller reuses its struct
  }
  CallDeleter(out, false);
  EXPECT_EQ(counting.releases.load(), 1);
  EXPECT_EQ(owner.releases.load(), 1);
}

TEST(ExportMemory, AllocatorFailureIsOutOfMemoryAndLeaksNothing) {
  float data[6] = {};
  const int64_t shape[2] = {2, 3};
  // The block: managed-tensor header (120 bytes on LP64) + shape and strides (2 × 2 × 8) = 152, rounded to 192;
  // a copy of 24 bytes follows at the aligned offset: 216.
  const struct {
    dlmap_copy_mode copy;
    const char *message;
  } cases[] = {
      {DLMAP_COPY_IF_NEEDED, "Out of memory allocating 192 bytes for an export"},
      {DLMAP_COPY_ALWAYS, "Out of memory allocating 216 bytes for an export"},
  };
  for (const auto &c : cases) {
    CountingAllocator counting;
    counting.fail = true;
    const dlmap_allocator hook = counting.Hook();
    Owner owner;
    const dlmap_array array = CpuArray(data, shape, 2, &owner);
    const dlmap_export_request request = Request(true, c.copy, &hook);
    dlmap_exported out, untouched;
    std::memset(&out, 0x11, sizeof out);
    std::memcpy(&untouched, &out, sizeof out);
    dlmap_error err;
    EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_OUT_OF_MEMORY);
    EXPECT_STREQ(err.id, "out_of_memory");
    EXPECT_STREQ(dlmap_error_kind_name(err.kind), "MemoryError");
    EXPECT_STREQ(err.message, c.message);
    EXPECT_EQ(counting.allocations.load(), 1);
    EXPECT_EQ(counting.releases.load(), 0);
    EXPECT_EQ(owner.releases.load(), 0);
    EXPECT_EQ(std::memcmp(&out, &untouched, sizeof out), 0);
  }
}

TEST(ExportArguments, NullPointersAndBadCopyMode) {
  float data[6] = {};
  const int64_t shape[2] = {2, 3};
  Owner owner;
  const dlmap_array array = CpuArray(data, shape, 2, &owner);
  const dlmap_export_request request = Request(true, DLMAP_COPY_IF_NEEDED, nullptr);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(nullptr, &request, &out, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "Invalid argument array: must not be NULL");
  EXPECT_STREQ(dlmap_error_kind_name(err.kind), "ValueError");
  EXPECT_EQ(dlmap_export(&array, nullptr, &out, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "Invalid argument request: must not be NULL");
  EXPECT_EQ(dlmap_export(&array, &request, nullptr, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "Invalid argument out: must not be NULL");
  dlmap_export_request bad = request;
  bad.copy = static_cast<dlmap_copy_mode>(3);
  EXPECT_EQ(dlmap_export(&array, &bad, &out, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message,
               "Invalid argument copy: must be DLMAP_COPY_IF_NEEDED, DLMAP_COPY_ALWAYS or DLMAP_COPY_NEVER");
  EXPECT_EQ(owner.releases.load(), 0);
}

TEST(ExportLayout, TheTensorOwnsItsShapeAndStrides) {
  float data[12] = {};
  int64_t shape[2] = {3, 4};
  int64_t strides[2] = {1, 3};
  Owner owner;
  dlmap_array array = CpuArray(data, shape, 2, &owner);
  array.strides = strides;
  const dlmap_export_request request = Request(true, DLMAP_COPY_NEVER, nullptr);
  dlmap_exported out;
  ASSERT_EQ(dlmap_export(&array, &request, &out, nullptr), DLMAP_OK);
  shape[0] = shape[1] = strides[0] = strides[1] = -7;  // the framework's array goes away
  const DLTensor &t = out.versioned->dl_tensor;
  EXPECT_EQ(std::vector<int64_t>(t.shape, t.shape + 2), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(std::vector<int64_t>(t.strides, t.strides + 2), (std::vector<int64_t>{1, 3}));
  CallDeleter(out, false);
  EXPECT_EQ(owner.releases.load(), 1);
}

TEST(ExportMemory, TheDefaultAllocatorHonoursEveryAlignment) {
  const dlmap_allocator *base = dlmap_allocator_default();
  ASSERT_NE(base, nullptr);
  for (size_t alignment = 1; alignment <= 4096; alignment *= 2) {
    for (size_t size : {size_t{0}, size_t{1}, size_t{24}, size_t{4097}}) {
      auto *block = static_cast<unsigned char *>(base->allocate(base->ctx, size, alignment));
      ASSERT_NE(block, nullptr) << size << " bytes aligned to " << alignment;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % alignment, 0u) << alignment;
      if (size > 0) memset(block, 0xAB, size);  // every byte is ours (ASan and valgrind check it)
      base->release(base->ctx, block);
    }
  }
  EXPECT_EQ(base->allocate(base->ctx, SIZE_MAX - 8, 64), nullptr) << "a size that overflows is refused";
}

// IS_SUBBYTE_TYPE_PADDED needs 1.1, but so does every sub-byte dtype of the default spec, and dtypes are checked
// first (see padded_float4_to_1_0_dtype_first). The flag's own error, as export's check would word it for a
// dtype that 1.0 knows:
TEST(ExportVersions, FlagNotInVersion) {
  dlmap_error err;
  EXPECT_EQ(dlmap_check_representable(DLMAP_DEVICE_CPU, kU8, kPadded, dlmap_version{1, 0}, &err),
            DLMAP_ERR_FLAG_NOT_IN_VERSION);
  EXPECT_STREQ(err.message, "Flag IS_SUBBYTE_TYPE_PADDED cannot be expressed in DLPack 1.0; it was introduced in 1.1.");
  EXPECT_STREQ(dlmap_error_kind_name(err.kind), "BufferError");
}


// A 0-d export carries a NULL shape (and strides) at every version it can be stamped with, and dlmap's own import takes
// it back at that version: spec/versions.yaml's 1.3 note says why a NULL shape at ndim 0 is safe for every version
// (issue 65). Every version the spec lists that the profile exports to (its struct lookup says which), plain and copied.
TEST(ExportVersions, ZeroDimAtEveryStampedVersion) {
  int exported_versions = 0;
  for (const spec_facts_version_entry &f : spec_facts_versions) {
    dlmap_struct_kind kind;
    if (dlmap_profile_struct_lookup(true, dlmap_version{f.version.major, f.version.minor}, &kind, nullptr) != DLMAP_OK)
      continue;
    exported_versions++;
    for (const dlmap_copy_mode copy : {DLMAP_COPY_IF_NEEDED, DLMAP_COPY_ALWAYS}) {
      SCOPED_TRACE(std::string(f.text) + (copy == DLMAP_COPY_ALWAYS ? ", copied" : ", view"));
      float value = 2.5f;
      Owner owner;
      const dlmap_array array = CpuArray(&value, nullptr, 0, &owner);
      dlmap_export_request request = dlmap_export_request_default();
      request.has_max_version = true;
      request.max_version.major = f.version.major;
      request.max_version.minor = f.version.minor;
      request.copy = copy;
      dlmap_exported out;
      dlmap_error err;
      ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
      EXPECT_EQ(out.version.major, f.version.major);
      EXPECT_EQ(out.version.minor, f.version.minor);
      const DLTensor *tensor = out.versioned != nullptr ? &out.versioned->dl_tensor : &out.legacy->dl_tensor;
      EXPECT_EQ(out.structure, kind);
      EXPECT_EQ(std::string(f.structure), kind == DLMAP_STRUCT_VERSIONED ? "versioned" : "legacy");
      EXPECT_EQ(tensor->ndim, 0);
      EXPECT_EQ(tensor->shape, nullptr);
      EXPECT_EQ(tensor->strides, nullptr);

      dlmap_import_request import = dlmap_import_request_default();
      dlmap_imported imported;
      const int32_t status = out.versioned != nullptr ? dlmap_import_versioned(out.versioned, &import, &imported, &err)
                                                      : dlmap_import_legacy(out.legacy, &import, &imported, &err);
      ASSERT_EQ(status, DLMAP_OK) << err.message;
      EXPECT_EQ(imported.tensor.ndim, 0);
      float read;
      std::memcpy(&read, imported.tensor.data, sizeof read);
      EXPECT_EQ(read, 2.5f);
      dlmap_imported_release(&imported);
      EXPECT_EQ(owner.releases.load(), 1);
    }
  }
  EXPECT_GE(exported_versions, 2) << "at least one legacy and one versioned release";
}

}  // namespace
