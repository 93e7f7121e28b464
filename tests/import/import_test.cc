// Adversarial table test of dlmap's import (from_dlpack, src/import.c): crafted producer tensors in both ABI flavours, each row with its request, the exact catalogue outcome and how often the deleter ran.
//
// Every row is a tensor a producer could hand over (valid, odd or hostile), built on the heap with
// exactly the memory it describes: shape and strides arrays of exactly their entries (new int64_t[n]),
// the data buffer exactly as large as the strides reach, so ASan reports any read past them. The
// deleter frees all of it, so a use after release or a second deleter call is caught too. Expected
// codes, kinds and messages are written out by hand; {data}, {first} and {reason} stand for values
// known only at run time (the data pointer, data + byte_offset, a GPU runtime's own error text).
#include <cctype>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"
#include "gtest/gtest.h"

namespace {

// ---- dtypes ------------------------------------------------------------------------------------------

DLDataType D(uint8_t code, uint8_t bits, uint16_t lanes = 1) {
  DLDataType d;
  d.code = code;
  d.bits = bits;
  d.lanes = lanes;
  return d;
}

const DLDataType kF32 = D(2, 32);
const DLDataType kF64 = D(2, 64);
const DLDataType kI8 = D(0, 8);
const DLDataType kU8 = D(1, 8);
const DLDataType kI4 = D(0, 4);
const DLDataType kBool = D(6, 8);

constexpr int64_t kMax = INT64_MAX;
constexpr int64_t kMin = INT64_MIN;

// ---- the producer: heap memory with a registry of live managed tensors ------------------------------

// What a producer allocated for one managed tensor, and how often its deleter ran.
struct Owned {
  int calls = 0;
  void *block = nullptr;     // the managed struct (malloc)
  int64_t *shape = nullptr;  // new int64_t[n]
  int64_t *strides = nullptr;
  void *data_base = nullptr; // posix_memalign
  bool freed = false;
};

std::map<const void *, Owned *> &Live() {
  static std::map<const void *, Owned *> live;
  return live;
}

int g_stray_deleter_calls = 0;  // a deleter called on a tensor that is not live (twice, or a wrong pointer)

void FreeOwned(Owned *o) {
  delete[] o->shape;
  delete[] o->strides;
  free(o->data_base);
  free(o->block);
  o->shape = o->strides = nullptr;
  o->data_base = o->block = nullptr;
  o->freed = true;
}

void Deleted(const void *self) {
  auto it = Live().find(self);
  if (it == Live().end()) {
    ++g_stray_deleter_calls;
    return;
  }
  Owned *o = it->second;
  Live().erase(it);
  ++o->calls;
  FreeOwned(o);
}

void VersionedDeleter(DLManagedTensorVersioned *self) { Deleted(self); }
void LegacyDeleter(DLManagedTensor *self) { Deleted(self); }

// ---- allocators -------------------------------------------------------------------------------------

struct AllocatorCounts {
  int allocations = 0;  // successful
  int attempts = 0;
  int releases = 0;
  size_t last_size = 0;
  size_t last_alignment = 0;
};

void *CountingAllocate(void *ctx, size_t size, size_t alignment) {
  auto *c = static_cast<AllocatorCounts *>(ctx);
  c->attempts++;
  c->last_size = size;
  c->last_alignment = alignment;
  void *p = nullptr;
  if (posix_memalign(&p, alignment, size) != 0) return nullptr;
  c->allocations++;
  return p;
}

void CountingRelease(void *ctx, void *pointer) {
  static_cast<AllocatorCounts *>(ctx)->releases++;
  free(pointer);
}

void *FailingAllocate(void *ctx, size_t size, size_t alignment) {
  auto *c = static_cast<AllocatorCounts *>(ctx);
  c->attempts++;
  c->last_size = size;
  c->last_alignment = alignment;
  return nullptr;
}

// ---- rows -------------------------------------------------------------------------------------------

enum class Flavour { kBoth, kVersioned, kLegacy };
enum class Data { kExact, kNull, kFake, kTiny };
enum class Alloc { kDefault, kCounting, kFailing };
enum class Outcome { kError, kView, kCopy, kPlatform };

struct Row {
  std::string name;
  Flavour flavour = Flavour::kBoth;
  // the managed struct
  uint32_t major = 1, minor = 3;  // versioned only; legacy tensors carry none
  uint64_t flags = 0;             // versioned only
  bool garbage = false;           // every field but version and deleter is garbage (fill)
  unsigned char fill = 0xA5;      // 0xA5: non-canonical pointers that fault if followed; 0x00: NULL everywhere
  bool truncated = false;         // the struct ends right after `deleter` (a future major may be shorter)
  bool null_deleter = false;
  // the tensor
  int32_t device_type = 1, device_id = 0;
  int32_t ndim = 1;
  bool shape_null = false;
  std::vector<int64_t> shape = {4};  // allocated with exactly these entries
  bool strides_null = true;
  std::vector<int64_t> strides;
  DLDataType dtype = kF32;
  uint64_t byte_offset = 0;
  Data data = Data::kExact;
  uintptr_t fake = 0;   // Data::kFake: a pointer dlmap must never dereference (device memory, crafted values)
  size_t misalign = 0;  // bytes between a 256-aligned allocation and the data pointer
  // the request
  dlmap_import_request request = dlmap_import_request_default();
  int32_t raw_copy = -1;    // >= 0: written into request.copy with memcpy (out-of-range values)
  int32_t raw_layout = -1;  // >= 0: written into request.layout with memcpy
  Alloc alloc = Alloc::kDefault;
  // the outcome
  Outcome outcome = Outcome::kView;
  int32_t code = DLMAP_OK;
  std::string kind, message;
  dlmap_platform platform = DLMAP_PLATFORM_COUNT;  // Outcome::kPlatform: the platform that must serve the copy
  bool out_device_set = false;
  int32_t out_type = 1, out_id = 0;
  bool read_only = false;
  bool subbyte_padded = false;
  size_t copy_alignment = DLMAP_DATA_ALIGNMENT;
  std::vector<float> values;  // hand-written float32 result, row-major (copies and views)

  Row &Versioned(uint32_t ma, uint32_t mi) {
    flavour = Flavour::kVersioned;
    major = ma;
    minor = mi;
    return *this;
  }
  Row &Legacy() {
    flavour = Flavour::kLegacy;
    return *this;
  }
  Row &Flags(uint64_t f) {
    if (flavour == Flavour::kBoth) flavour = Flavour::kVersioned;
    flags = f;
    return *this;
  }
  Row &Garbage(unsigned char with = 0xA5) {
    garbage = true;
    fill = with;
    return *this;
  }
  Row &Truncated() {
    truncated = true;
    return *this;
  }
  Row &NoDeleter() {
    null_deleter = true;
    return *this;
  }
  Row &Dev(int32_t t, int32_t id = 0) {
    device_type = t;
    device_id = id;
    return *this;
  }
  Row &Shape(std::vector<int64_t> s) {
    shape = std::move(s);
    ndim = static_cast<int32_t>(shape.size());
    return *this;
  }
  Row &Ndim(int32_t n) {
    ndim = n;
    return *this;
  }
  Row &NoShape() {
    shape_null = true;
    shape.clear();
    return *this;
  }
  Row &Strides(std::vector<int64_t> s) {
    strides_null = false;
    strides = std::move(s);
    return *this;
  }
  Row &Dtype(DLDataType d) {
    dtype = d;
    return *this;
  }
  Row &Offset(uint64_t b) {
    byte_offset = b;
    return *this;
  }
  Row &NullData() {
    data = Data::kNull;
    return *this;
  }
  Row &Fake(uintptr_t p) {
    data = Data::kFake;
    fake = p;
    return *this;
  }
  Row &Tiny() {
    data = Data::kTiny;
    return *this;
  }
  Row &Misalign(size_t m) {
    misalign = m;
    return *this;
  }
  Row &Copy(dlmap_copy_mode c) {
    request.copy = c;
    return *this;
  }
  Row &Layout(dlmap_layout_policy l) {
    request.layout = l;
    return *this;
  }
  Row &Align(uint64_t a) {
    request.alignment = a;
    return *this;
  }
  Row &Writable() {
    request.writable = true;
    return *this;
  }
  Row &Target(int32_t t, int32_t id = 0) {
    request.has_device = true;
    request.device_type = t;
    request.device_id = id;
    return *this;
  }
  Row &Reported(int32_t t) {
    request.has_reported_device = true;
    request.reported_device_type = t;
    return *this;
  }
  Row &RawCopy(int32_t c) {
    raw_copy = c;
    return *this;
  }
  Row &RawLayout(int32_t l) {
    raw_layout = l;
    return *this;
  }
  Row &Allocator(Alloc a) {
    alloc = a;
    return *this;
  }
  Row &Err(int32_t c, const char *k, std::string m) {
    outcome = Outcome::kError;
    code = c;
    kind = k;
    message = std::move(m);
    return *this;
  }
  // A copy through a GPU platform: platform_unavailable with the probe's reason where the platform cannot
  // serve (this CI machine), not_implemented where it can.
  Row &NeedsPlatform(dlmap_platform p, std::string prefix) {
    outcome = Outcome::kPlatform;
    platform = p;
    message = std::move(prefix);
    return *this;
  }
  Row &View() {
    outcome = Outcome::kView;
    return *this;
  }
  Row &Copied() {
    outcome = Outcome::kCopy;
    return *this;
  }
  Row &OutDev(int32_t t, int32_t id) {
    out_device_set = true;
    out_type = t;
    out_id = id;
    return *this;
  }
  Row &ReadOnly() {
    read_only = true;
    return *this;
  }
  Row &Padded() {
    subbyte_padded = true;
    return *this;
  }
  Row &CopyAlignment(size_t a) {
    copy_alignment = a;
    return *this;
  }
  Row &Values(std::vector<float> v) {
    values = std::move(v);
    return *this;
  }
};

Row R(const char *name) {
  Row r;
  r.name = name;
  return r;
}

std::vector<int64_t> Ones(int n) { return std::vector<int64_t>(static_cast<size_t>(n), 1); }

const char kUnsupported[] = "Array passed to from_dlpack is on unsupported device type (DLDeviceType: ";
const char kReportMismatch[] = "__dlpack_device__ reported device type ";
const char kReportMismatchTail[] =
    "; a report may differ from the tensor only to name pinned host memory for a tensor in host memory. The tensor "
    "was released.";
const char kUnsupportedTarget[] = "The device passed to from_dlpack has an unsupported device type (DLDeviceType: ";
const char kCompact[] =
    "Only DLPack tensors with trivial (compact) striding are supported; i.e., tensors whose striding represents "
    "a transposition of the underlying buffer but not broadcasting. Dimensions were: ";
const char kRowMajor[] = "Only row-major (C-contiguous) DLPack tensors are accepted here. Dimensions were: ";
const char kMajor[] = "The DLPack tensor has version ";
const char kMajorTail[] =
    ", whose major version this build cannot read (it supports up to " SPEC_FACTS_CURRENT_TEXT "); the tensor was released.";

// The smallest device type value and dtype code the spec's YAML does not define: what DLPack would add next.
int32_t NextDeviceType() {
  int32_t value = 1;
  for (bool defined = true; defined; value += defined) {
    defined = false;
    for (const spec_facts_device_type &f : spec_facts_device_types) defined = defined || f.value == value;
  }
  return value;
}
uint8_t NextDtypeCode() {
  int code = 0;
  for (bool defined = true; defined; code += defined) {
    defined = false;
    for (const spec_facts_dtype_code &f : spec_facts_dtype_codes) defined = defined || f.code == code;
  }
  return static_cast<uint8_t>(code);
}
const char kForbiddenTail[] =
    ", however copy=False. Set copy=True or copy=None to perform the requested operation.";

std::vector<Row> Rows() {
  std::vector<Row> rows;
  auto add = [&rows](const Row &r) { rows.push_back(r); };

  // ---- versions: an unknown major releases the tensor and reads nothing but version and deleter ----
  add(R("major 2.0, garbage in every other field").Versioned(2, 0).Garbage()
          .Err(102, "BufferError", std::string(kMajor) + "2.0" + kMajorTail));
  add(R("major 2.0, NULL and zero in every other field").Versioned(2, 0).Garbage(0x00)
          .Err(102, "BufferError", std::string(kMajor) + "2.0" + kMajorTail));
  add(R("major 99.0, garbage").Versioned(99, 0).Garbage().Err(102, "BufferError", std::string(kMajor) + "99.0" + kMajorTail));
  add(R("major 0.8 in a versioned struct, garbage").Versioned(0, 8).Garbage()
          .Err(102, "BufferError", std::string(kMajor) + "0.8" + kMajorTail));
  add(R("major 0.0 in a versioned struct, garbage").Versioned(0, 0).Garbage()
          .Err(102, "BufferError", std::string(kMajor) + "0.0" + kMajorTail));
  add(R("major UINT32_MAX, garbage").Versioned(UINT32_MAX, UINT32_MAX).Garbage()
          .Err(102, "BufferError", std::string(kMajor) + "4294967295.4294967295" + kMajorTail));
  add(R("major 2.0, struct ends after deleter").Versioned(2, 0).Truncated()
          .Err(102, "BufferError", std::string(kMajor) + "2.0" + kMajorTail));
  add(R("major 0.5, struct ends after deleter").Versioned(0, 5).Truncated()
          .Err(102, "BufferError", std::string(kMajor) + "0.5" + kMajorTail));
  add(R("major 2.0 with a NULL deleter").Versioned(2, 0).Garbage().NoDeleter()
          .Err(102, "BufferError", std::string(kMajor) + "2.0" + kMajorTail));

  // ---- versions: newer minors and values the stamped version cannot express ----
  add(R("newer minor 1.7 with known values").Versioned(1, 7).Shape({2, 2}).View().Values({0, 1, 2, 3}));
  const std::string next_code = std::to_string(NextDtypeCode()), next_type = std::to_string(NextDeviceType());
  add(R(("newer minor 1.7, unknown dtype code " + next_code).c_str()).Versioned(1, 7).Dtype(D(NextDtypeCode(), 32))
          .Err(301, "BufferError", "Unknown or invalid DLPack type code " + next_code));
  add(R("newer minor 1.7, unknown flag bit 5").Versioned(1, 7).Flags(UINT64_C(1) << 5)
          .Err(107, "BufferError", "The DLPack tensor's flags 0x20 contain bits this build does not know (0x20)."));
  add(R(("newer minor 1.7, unknown device type " + next_type).c_str()).Versioned(1, 7).Dev(NextDeviceType())
          .Err(204, "BufferError", std::string(kUnsupported) + next_type + ", array: unknown tensor of ndim 1)"));
  add(R("flag bit 63 with READ_ONLY").Versioned(1, 3).Flags((UINT64_C(1) << 63) | 1)
          .Err(107, "BufferError",
               "The DLPack tensor's flags 0x8000000000000001 contain bits this build does not know (0x8000000000000000)."));
  add(R("1.0 tensor with float8_e4m3fn (1.1)").Versioned(1, 0).Dtype(D(10, 8))
          .Err(104, "BufferError", "Data type float8_e4m3fn cannot be expressed in DLPack 1.0; it was introduced in 1.1."));
  add(R("1.0 tensor with int4 (width of 1.1)").Versioned(1, 0).Dtype(kI4)
          .Err(104, "BufferError", "Data type int4 cannot be expressed in DLPack 1.0; it was introduced in 1.1."));
  add(R("1.2 tensor with bcomplex32 (1.3)").Versioned(1, 2).Dtype(D(18, 32))
          .Err(104, "BufferError", "Data type bcomplex32 cannot be expressed in DLPack 1.2; it was introduced in 1.3."));
  add(R("1.1 tensor with float8_e4m3fn").Versioned(1, 1).Dtype(D(10, 8)).View());
  add(R("1.0 tensor with bool (0.8)").Versioned(1, 0).Dtype(kBool).View());
  add(R("1.0 tensor with kDLOneAPI: in the version, but no backend").Versioned(1, 0).Dev(14)
          .Err(204, "BufferError", std::string(kUnsupported) + "14, array: kDLOneAPI tensor of ndim 1)"));
  add(R("1.0 tensor with kDLMAIA: in the version, but no backend").Versioned(1, 0).Dev(17)
          .Err(204, "BufferError", std::string(kUnsupported) + "17, array: kDLMAIA tensor of ndim 1)"));
  add(R("1.1 tensor with kDLTrn (1.2)").Versioned(1, 1).Dev(18)
          .Err(103, "BufferError", "Device type kDLTrn (18) cannot be expressed in DLPack 1.1; it was introduced in 1.2."));
  add(R("1.2 tensor with kDLTPUHost (1.3)").Versioned(1, 2).Dev(20)
          .Err(103, "BufferError", "Device type kDLTPUHost (20) cannot be expressed in DLPack 1.2; it was introduced in 1.3."));
  add(R("1.3 tensor with kDLTrn: in the version, but no backend").Versioned(1, 3).Dev(18)
          .Err(204, "BufferError", std::string(kUnsupported) + "18, array: kDLTrn tensor of ndim 1)"));
  add(R("1.0 tensor with IS_SUBBYTE_TYPE_PADDED (1.1)").Versioned(1, 0).Dtype(kU8).Flags(4)
          .Err(105, "BufferError", "Flag IS_SUBBYTE_TYPE_PADDED cannot be expressed in DLPack 1.0; it was introduced in 1.1."));
  add(R("IS_SUBBYTE_TYPE_PADDED on float32").Versioned(1, 1).Flags(4)
          .Err(304, "BufferError", "IS_SUBBYTE_TYPE_PADDED is set but float32 is not a sub-byte type."));
  add(R("IS_SUBBYTE_TYPE_PADDED on int4x2 (8 bits per element)").Versioned(1, 3).Dtype(D(0, 4, 2)).Flags(4)
          .Err(304, "BufferError", "IS_SUBBYTE_TYPE_PADDED is set but int4x2 is not a sub-byte type."));
  add(R("READ_ONLY and IS_COPIED accepted").Versioned(1, 0).Flags(3).View().ReadOnly());
  add(R("IS_SUBBYTE_TYPE_PADDED int4: a view that says so").Versioned(1, 1).Dtype(kI4).Shape({3}).Flags(4)
          .View().Padded());
  add(R("IS_SUBBYTE_TYPE_PADDED float6 strided: a byte-wise copy, still padded").Versioned(1, 3).Dtype(D(15, 6))
          .Shape({2, 3}).Strides({1, 2}).Flags(4).Layout(DLMAP_LAYOUT_ROW_MAJOR).Copied().Padded());
  add(R("legacy tensor with float8_e5m2 (JAX sends it this way)").Legacy().Dtype(D(12, 8)).View());
  add(R("legacy tensor with int4").Legacy().Dtype(kI4).Shape({5}).View());
  add(R("legacy tensor with kDLTPUHost").Legacy().Dev(20)
          .Err(204, "BufferError", std::string(kUnsupported) + "20, array: kDLTPUHost tensor of ndim 1)"));

  // ---- ndim and shape ----
  add(R("ndim -1").Shape({}).Ndim(-1)
          .Err(401, "BufferError", "Number of dimensions in DLManagedTensor must be nonnegative, got -1"));
  add(R("ndim INT32_MIN").Shape({}).Ndim(INT32_MIN)
          .Err(401, "BufferError", "Number of dimensions in DLManagedTensor must be nonnegative, got -2147483648"));
  add(R("ndim 65").Shape(Ones(65)).Strides(Ones(65))
          .Err(402, "BufferError", "Number of dimensions in DLManagedTensor is 65, above the maximum of 64"));
  add(R("ndim INT32_MAX with one shape entry").Shape({1}).Ndim(INT32_MAX)
          .Err(402, "BufferError", "Number of dimensions in DLManagedTensor is 2147483647, above the maximum of 64"));
  add(R("ndim 64, the maximum, strides filled in").Shape(Ones(64)).View());
  add(R("NULL shape with ndim 2").NoShape().Ndim(2)
          .Err(403, "BufferError", "The DLPack tensor has 2 dimension(s) but a NULL shape"));
  add(R("NULL shape with ndim 0 (DLPack 1.3)").NoShape().Ndim(0).View().Values({0}));
  add(R("NULL shape, empty strides array, ndim 0").NoShape().Ndim(0).Strides({}).View());
  add(R("negative dim").Shape({2, -3}).Tiny().Err(404, "BufferError", "Dimension 1 of the DLPack tensor has negative extent -3"));
  add(R("INT64_MIN dim").Shape({kMin}).Tiny()
          .Err(404, "BufferError", "Dimension 0 of the DLPack tensor has negative extent -9223372036854775808"));
  add(R("negative dim after a zero dim").Shape({0, -1}).Tiny()
          .Err(404, "BufferError", "Dimension 1 of the DLPack tensor has negative extent -1"));
  add(R("element count overflow {INT64_MAX, 2}").Shape({kMax, 2}).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [9223372036854775807, 2], "
               "strides [none: compact row-major])"));
  add(R("element count 2^64").Shape({INT64_C(1) << 32, INT64_C(1) << 32}).Strides({INT64_C(1) << 32, 1}).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [4294967296, 4294967296], "
               "strides [4294967296, 1])"));
  add(R("byte count overflow 2^62 float32").Shape({INT64_C(1) << 62}).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [4611686018427387904], strides [none: compact row-major])"));
  add(R("byte extent overflow via a huge stride").Shape({2, 2}).Strides({INT64_C(1) << 61, 1}).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [2, 2], strides [2305843009213693952, 1])"));
  add(R("element extent overflow, stride INT64_MAX").Shape({3}).Strides({kMax}).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [3], strides [9223372036854775807])"));
  add(R("huge negative stride INT64_MIN").Shape({2}).Strides({kMin}).Dtype(kI8).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [2], strides [-9223372036854775808])"));
  // Sub-byte bit counts: count × bits must fit in int64 (issue 14). 2^64 − 4 bits did not wrap a uint64 but
  // (bits + 7) / 8 did, to 0 bytes: a view of nothing, and a "copy" of 0 bytes claiming 2^62 elements.
  add(R("int4 × (2^62 − 1): 2^64 − 4 bits").Shape({(INT64_C(1) << 62) - 1}).Dtype(kI4).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [4611686018427387903], strides "
               "[none: compact row-major])"));
  add(R("int4 × (2^62 − 1), copy=True").Shape({(INT64_C(1) << 62) - 1}).Dtype(kI4).Tiny().Copy(DLMAP_COPY_ALWAYS)
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [4611686018427387903], strides "
               "[none: compact row-major])"));
  add(R("uint1 × 3 lanes × 6·10^18: 1.8·10^19 bits").Shape({INT64_C(6000000000000000000)}).Dtype(D(1, 1, 3)).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [6000000000000000000], strides "
               "[none: compact row-major])"));
  add(R("uint1 × 2 lanes × 2^62: exactly 2^63 bits").Shape({INT64_C(1) << 62}).Dtype(D(1, 1, 2)).Tiny()
          .Err(405, "BufferError",
               "The DLPack tensor's element count or byte extent overflows (shape [4611686018427387904], strides "
               "[none: compact row-major])"));
  add(R("uint1 × INT64_MAX: 2^63 − 1 bits, the largest, a view").Shape({kMax}).Dtype(D(1, 1)).Fake(0x10000)
          .Copy(DLMAP_COPY_NEVER).View());
  add(R("huge negative stride reaching below address 0").Shape({2}).Strides({-(INT64_C(1) << 50)}).Dtype(kU8)
          .Fake(0x10000)
          .Err(407, "BufferError", "byte_offset 0 added to data pointer 0x10000 overflows the address space"));
  add(R("zero-size tensor whose other extents overflow, strides filled in").Shape({0, kMax, kMax}).NullData().View());
  add(R("zero-size {INT64_MAX, 0}").Shape({kMax, 0}).NullData().View());

  // ---- data and byte_offset ----
  add(R("byte_offset UINT64_MAX").Offset(UINT64_MAX).Tiny()
          .Err(407, "BufferError", "byte_offset 18446744073709551615 added to data pointer {data} overflows the address space"));
  add(R("byte_offset reaching past the top of the address space").Fake(UINTPTR_MAX - 15).Offset(8)
          .Err(407, "BufferError", "byte_offset 8 added to data pointer 0xfffffffffffffff0 overflows the address space"));
  add(R("byte_offset 8 kept in a view").Offset(8).View().Values({0, 1, 2, 3}));
  add(R("data NULL with elements").Shape({2, 3}).NullData()
          .Err(406, "BufferError", "The DLPack tensor has a NULL data pointer but 24 bytes of data"));
  add(R("data NULL, ndim 0").Shape({}).Dtype(kF64).NullData()
          .Err(406, "BufferError", "The DLPack tensor has a NULL data pointer but 8 bytes of data"));
  add(R("data NULL, int4 {3}").Shape({3}).Dtype(kI4).NullData()
          .Err(406, "BufferError", "The DLPack tensor has a NULL data pointer but 2 bytes of data"));
  add(R("data NULL with a zero-size shape").Shape({2, 0, 3}).NullData().View());

  // ---- dtypes ----
  add(R("lanes 0").Dtype(D(2, 32, 0))
          .Err(303, "BufferError",
               "Invalid DLPack lanes for kDLFloat: 0 (lanes must be at least 1, and exactly 1 for scalar-only codes)"));
  add(R("bool with 1 bit").Dtype(D(6, 1))
          .Err(302, "BufferError", "Invalid or unsupported DLPack kDLBool width: 1 bits (valid: 8)"));
  add(R("float with 7 bits").Dtype(D(2, 7))
          .Err(302, "BufferError", "Invalid or unsupported DLPack kDLFloat width: 7 bits (valid: 16, 32, 64)"));
  add(R("opaque handle").Dtype(D(3, 64))
          .Err(302, "BufferError", "Invalid or unsupported DLPack kDLOpaqueHandle width: 64 bits (valid: none)"));
  add(R("int with 0 bits").Dtype(D(0, 0))
          .Err(302, "BufferError", "Invalid or unsupported DLPack kDLInt width: 0 bits (valid: 2, 4, 8, 16, 32, 64)"));
  add(R("float6 with 8 bits").Dtype(D(15, 8))
          .Err(302, "BufferError", "Invalid or unsupported DLPack kDLFloat6_e2m3fn width: 8 bits (valid: 6)"));
  add(R("dtype code 255").Dtype(D(255, 8)).Err(301, "BufferError", "Unknown or invalid DLPack type code 255"));
  add(R(("dtype code " + std::to_string(NextDtypeCode())).c_str()).Dtype(D(NextDtypeCode(), 8))
          .Err(301, "BufferError", "Unknown or invalid DLPack type code " + std::to_string(NextDtypeCode())));
  add(R("float32x4 vector").Dtype(D(2, 32, 4)).Shape({3}).View());
  add(R("float64 with 65535 lanes").Dtype(D(2, 64, 65535)).Shape({1}).View());

  // ---- deleter ----
  add(R("NULL deleter accepted").NoDeleter().View());
  add(R("NULL deleter on an error path").NoDeleter().Shape({}).Ndim(-1)
          .Err(401, "BufferError", "Number of dimensions in DLManagedTensor must be nonnegative, got -1"));

  // ---- layout: any strides are a view ----
  add(R("strides NULL: compact strides filled in").Shape({2, 3, 4}).View());
  add(R("broadcast stride 0, zero-copy").Shape({2, 3}).Strides({0, 1}).View().Values({0, 1, 2, 0, 1, 2}));
  add(R("negative strides, zero-copy").Shape({2, 3}).Strides({-3, -1}).View().Values({5, 4, 3, 2, 1, 0}));
  add(R("gaps, zero-copy").Shape({2, 3}).Strides({6, 2}).View().Values({0, 2, 4, 6, 8, 10}));
  add(R("overlapping strides, zero-copy").Shape({2, 3}).Strides({1, 1}).View().Values({0, 1, 2, 1, 2, 3}));
  add(R("size-1 dim with stride INT64_MAX, copied").Shape({1, 3}).Strides({kMax, 2}).Copy(DLMAP_COPY_ALWAYS)
          .Copied().Values({0, 2, 4}));
  add(R("innermost size-1 dim with stride INT64_MIN, copied").Shape({3, 1}).Strides({2, kMin}).Copy(DLMAP_COPY_ALWAYS)
          .Copied().Values({0, 2, 4}));
  add(R("negative strides, copied").Shape({2, 3}).Strides({-3, -1}).Copy(DLMAP_COPY_ALWAYS).Copied()
          .Values({5, 4, 3, 2, 1, 0}));
  add(R("zero-size with garbage strides under ANY").Shape({0, 3}).Strides({kMin, kMax}).View());

  // ---- layout: compact permutations (XLA) ----
  const dlmap_layout_policy kPerm = DLMAP_LAYOUT_COMPACT_PERMUTATION;
  add(R("permutation: transpose").Shape({3, 2}).Strides({1, 3}).Layout(kPerm).Copy(DLMAP_COPY_NEVER).View()
          .Values({0, 3, 1, 4, 2, 5}));
  add(R("permutation: F-order").Shape({2, 3, 4}).Strides({1, 2, 6}).Layout(kPerm).Copy(DLMAP_COPY_NEVER).View());
  add(R("permutation: size-1 dims with any stride").Shape({2, 1, 3, 1}).Strides({3, -77, 1, kMax}).Layout(kPerm)
          .Copy(DLMAP_COPY_NEVER).View());
  add(R("permutation: size-0 with garbage strides").Shape({0, 3}).Strides({kMin, 12345}).Layout(kPerm)
          .Copy(DLMAP_COPY_NEVER).View());
  add(R("permutation: transpose with copy=None stays a view").Shape({3, 2}).Strides({1, 3}).Layout(kPerm).View());
  add(R("permutation: broadcast, copy=False").Shape({2, 3}).Strides({0, 1}).Layout(kPerm).Copy(DLMAP_COPY_NEVER)
          .Err(408, "BufferError", std::string(kCompact) + "[2, 3], strides were [0, 1]."));
  add(R("permutation: overlapping, copy=False").Shape({2, 3}).Strides({1, 1}).Layout(kPerm).Copy(DLMAP_COPY_NEVER)
          .Err(408, "BufferError", std::string(kCompact) + "[2, 3], strides were [1, 1]."));
  add(R("permutation: gaps, copy=False").Shape({2, 3}).Strides({6, 2}).Layout(kPerm).Copy(DLMAP_COPY_NEVER)
          .Err(408, "BufferError", std::string(kCompact) + "[2, 3], strides were [6, 2]."));
  add(R("permutation: negative, copy=False").Shape({2, 3}).Strides({-3, -1}).Layout(kPerm).Copy(DLMAP_COPY_NEVER)
          .Err(408, "BufferError", std::string(kCompact) + "[2, 3], strides were [-3, -1]."));
  add(R("permutation: broadcast, copied").Shape({2, 3}).Strides({0, 1}).Layout(kPerm).Copied()
          .Values({0, 1, 2, 0, 1, 2}));
  add(R("permutation: overlapping, copied").Shape({2, 3}).Strides({1, 1}).Layout(kPerm).Copied()
          .Values({0, 1, 2, 1, 2, 3}));
  add(R("permutation: gaps, copied").Shape({2, 3}).Strides({6, 2}).Layout(kPerm).Copied()
          .Values({0, 2, 4, 6, 8, 10}));
  add(R("permutation: negative, copied").Shape({2, 3}).Strides({-3, -1}).Layout(kPerm).Copied()
          .Values({5, 4, 3, 2, 1, 0}));
  add(R("permutation: 3-d broadcast, copied").Shape({2, 2, 2}).Strides({2, 0, 1}).Layout(kPerm).Copied()
          .Values({0, 1, 0, 1, 2, 3, 2, 3}));

  // ---- layout: row-major ----
  const dlmap_layout_policy kRow = DLMAP_LAYOUT_ROW_MAJOR;
  add(R("row-major: transpose, copy=False").Shape({3, 2}).Strides({1, 3}).Layout(kRow).Copy(DLMAP_COPY_NEVER)
          .Err(409, "BufferError", std::string(kRowMajor) + "[3, 2], strides were [1, 3]."));
  add(R("row-major: F-order, copy=False").Shape({2, 3, 4}).Strides({1, 2, 6}).Layout(kRow).Copy(DLMAP_COPY_NEVER)
          .Err(409, "BufferError", std::string(kRowMajor) + "[2, 3, 4], strides were [1, 2, 6]."));
  add(R("row-major: broadcast, copy=False").Shape({2, 3}).Strides({0, 1}).Layout(kRow).Copy(DLMAP_COPY_NEVER)
          .Err(409, "BufferError", std::string(kRowMajor) + "[2, 3], strides were [0, 1]."));
  add(R("row-major: transpose, copied").Shape({3, 2}).Strides({1, 3}).Layout(kRow).Copied()
          .Values({0, 3, 1, 4, 2, 5}));
  add(R("row-major: F-order, copied").Shape({2, 3, 4}).Strides({1, 2, 6}).Layout(kRow).Copied());
  add(R("row-major: size-1 dims with any stride").Shape({2, 1, 3}).Strides({3, 999, 1}).Layout(kRow)
          .Copy(DLMAP_COPY_NEVER).View());
  add(R("row-major: explicit compact strides").Shape({2, 3}).Strides({3, 1}).Layout(kRow).Copy(DLMAP_COPY_NEVER).View());
  add(R("row-major: size-0 with garbage strides").Shape({3, 0}).Strides({-5, 7}).Layout(kRow).Copy(DLMAP_COPY_NEVER)
          .View());
  add(R("row-major: strided int4 cannot be copied").Shape({2, 2}).Strides({1, 2}).Dtype(kI4).Layout(kRow)
          .Err(603, "NotImplementedError", "Copying strided sub-byte data is not implemented by dlmap"));
  add(R("row-major: compact int4, copied").Shape({2, 3}).Dtype(kI4).Layout(kRow).Copy(DLMAP_COPY_ALWAYS).Copied());

  // ---- alignment ----
  add(R("data 4 bytes off a 64-byte boundary, copy=False").Misalign(4).Align(64).Copy(DLMAP_COPY_NEVER)
          .Err(410, "ValueError", "Can't create a view of buffer with unaligned data, ptr: {first} is not aligned to 64 bytes."));
  add(R("byte_offset 4 off a 64-byte boundary, copy=False").Offset(4).Align(64).Copy(DLMAP_COPY_NEVER)
          .Err(410, "ValueError", "Can't create a view of buffer with unaligned data, ptr: {first} is not aligned to 64 bytes."));
  add(R("unaligned data, copied and 64-byte aligned").Misalign(4).Align(64).Copied().CopyAlignment(64)
          .Values({0, 1, 2, 3}));
  add(R("unaligned data, alignment 256, copied and 256-byte aligned").Misalign(4).Align(256).Copied()
          .CopyAlignment(256).Values({0, 1, 2, 3}));
  add(R("aligned data, alignment 256, copy=False").Align(256).Copy(DLMAP_COPY_NEVER).View());
  add(R("data 4 bytes off, alignment 4").Misalign(4).Align(4).Copy(DLMAP_COPY_NEVER).View());
  add(R("alignment on a zero-size tensor").Shape({0}).Misalign(4).Align(64).Copy(DLMAP_COPY_NEVER).View());
  add(R("unaligned device memory, copy=False").Dev(2).Fake(0x7f0000100004).Align(64).Copy(DLMAP_COPY_NEVER)
          .Err(410, "ValueError", "Can't create a view of buffer with unaligned data, ptr: 0x7f0000100004 is not aligned to 64 bytes."));

  // ---- read-only ----
  add(R("READ_ONLY, writable, copy=False").Flags(1).Writable().Copy(DLMAP_COPY_NEVER)
          .Err(411, "ValueError",
               "The DLPack tensor is read-only but writable memory was requested, however copy=False. Set copy=True or "
               "copy=None to perform the requested operation."));
  add(R("READ_ONLY, writable, copy=None: copied").Flags(1).Writable().Copied().Values({0, 1, 2, 3}));
  add(R("READ_ONLY, writable, copy=True: copied").Flags(1).Writable().Copy(DLMAP_COPY_ALWAYS).Copied());
  add(R("READ_ONLY, not writable: read-only view").Flags(1).Copy(DLMAP_COPY_NEVER).View().ReadOnly());
  add(R("legacy tensors are never read-only").Legacy().Writable().Copy(DLMAP_COPY_NEVER).View());

  // ---- copies and allocators ----
  add(R("copy=True: compact copy, deleter already ran").Shape({2, 3}).Strides({3, 1}).Copy(DLMAP_COPY_ALWAYS)
          .Allocator(Alloc::kCounting).Copied().Values({0, 1, 2, 3, 4, 5}));
  add(R("view: no allocation").Shape({2, 3}).Allocator(Alloc::kCounting).View());
  add(R("copy of a zero-size tensor with data NULL").Shape({3, 0}).NullData().Copy(DLMAP_COPY_ALWAYS)
          .Allocator(Alloc::kCounting).Copied());
  add(R("copy of a 0-d tensor").Shape({}).Dtype(kF64).Copy(DLMAP_COPY_ALWAYS).Allocator(Alloc::kCounting).Copied());
  add(R("allocator returns NULL").Shape({2, 3}).Copy(DLMAP_COPY_ALWAYS).Allocator(Alloc::kFailing)
          .Err(601, "MemoryError", "Out of memory allocating 88 bytes for an imported copy"));
  add(R("allocator returns NULL, 0-d").Shape({}).Dtype(kF64).Copy(DLMAP_COPY_ALWAYS).Allocator(Alloc::kFailing)
          .Err(601, "MemoryError", "Out of memory allocating 8 bytes for an imported copy"));
  add(R("allocator returns NULL, alignment 256").Shape({2, 3}).Misalign(4).Align(256).Allocator(Alloc::kFailing)
          .Err(601, "MemoryError", "Out of memory allocating 280 bytes for an imported copy"));

  // ---- request validation ----
  add(R("copy mode 7").RawCopy(7)
          .Err(701, "ValueError",
               "Invalid argument copy: must be DLMAP_COPY_IF_NEEDED, DLMAP_COPY_ALWAYS or DLMAP_COPY_NEVER"));
  add(R("layout policy 3").RawLayout(3)
          .Err(701, "ValueError",
               "Invalid argument layout: must be DLMAP_LAYOUT_ANY, DLMAP_LAYOUT_COMPACT_PERMUTATION or "
               "DLMAP_LAYOUT_ROW_MAJOR"));
  add(R("alignment 48").Align(48).Err(701, "ValueError", "Invalid argument alignment: must be 0 or a power of two"));
  add(R("alignment 1").Align(1).Copy(DLMAP_COPY_NEVER).Misalign(3).Dtype(kU8).View());

  // ---- device types ----
  for (int32_t t : {0, 5, 6, NextDeviceType(), 200, -7, INT32_MIN}) {
    bool defined = false;
    for (const spec_facts_device_type &f : spec_facts_device_types) defined = defined || f.value == t;
    if (defined) continue;
    char name[64], message[160];
    snprintf(name, sizeof name, "unknown device type %d", static_cast<int>(t));
    snprintf(message, sizeof message, "%s%d, array: unknown tensor of ndim 1)", kUnsupported, static_cast<int>(t));
    add(R(name).Dev(t).Err(204, "BufferError", message));
  }
  add(R("kDLOpenCL (no backend)").Dev(4)
          .Err(204, "BufferError",
               "Array passed to from_dlpack is on unsupported device type (DLDeviceType: 4, array: kDLOpenCL tensor of ndim 1)"));
  add(R("kDLVPI (platform none)").Dev(9)
          .Err(204, "BufferError", std::string(kUnsupported) + "9, array: kDLVPI tensor of ndim 1)"));
  add(R("kDLMetal 2-d").Dev(8).Shape({2, 2})
          .Err(204, "BufferError", std::string(kUnsupported) + "8, array: kDLMetal tensor of ndim 2)"));
  add(R("kDLExtDev").Dev(12).Err(204, "BufferError", std::string(kUnsupported) + "12, array: kDLExtDev tensor of ndim 1)"));
  add(R("unknown device with ndim -1: the device error first").Dev(200).Shape({}).Ndim(-1)
          .Err(204, "BufferError", std::string(kUnsupported) + "200, array: unknown tensor of ndim -1)"));
  add(R("reported kDLCUDAHost over a kDLCPU capsule (PyTorch pinned)").Reported(3).View().OutDev(3, 0));
  add(R("reported kDLCUDAHost, target kDLCPU").Reported(3).Target(1).View().OutDev(1, 0));
  add(R("reported kDLROCMHost over a kDLCPU capsule").Reported(11).View().OutDev(11, 0));
  add(R("reported kDLCUDA over a kDLCUDA capsule: no disagreement").Dev(2, 0).Fake(0x7f0000100000).Reported(2).View()
          .OutDev(2, 0));
  // Any other disagreement is the producer contradicting itself (issue 14): never a host view of device memory.
  add(R("reported device 5 over a kDLCPU capsule").Reported(5)
          .Err(215, "BufferError", std::string(kReportMismatch) + "unknown (5) but the DLPack tensor is on (kDLCPU, 0)" +
                                       kReportMismatchTail));
  add(R("reported kDLCPU over a kDLCUDA capsule").Dev(2, 0).Fake(0x10000).Reported(1)
          .Err(215, "BufferError", std::string(kReportMismatch) + "kDLCPU (1) but the DLPack tensor is on (kDLCUDA, 0)" +
                                       kReportMismatchTail));
  add(R("reported kDLCPU over a kDLCUDA capsule, target kDLCPU").Dev(2, 0).Fake(0x10000).Reported(1).Target(1)
          .Err(215, "BufferError", std::string(kReportMismatch) + "kDLCPU (1) but the DLPack tensor is on (kDLCUDA, 0)" +
                                       kReportMismatchTail));
  add(R("reported kDLCUDAManaged over a kDLCPU capsule").Reported(13)
          .Err(215, "BufferError",
               std::string(kReportMismatch) + "kDLCUDAManaged (13) but the DLPack tensor is on (kDLCPU, 0)" +
                   kReportMismatchTail));
  add(R("reported kDLCUDAHost over a kDLCUDA capsule").Dev(2, 1).Fake(0x10000).Reported(3)
          .Err(215, "BufferError",
               std::string(kReportMismatch) + "kDLCUDAHost (3) but the DLPack tensor is on (kDLCUDA, 1)" +
                   kReportMismatchTail));
  add(R("reported kDLCUDA over a kDLCUDAHost capsule").Dev(3, 0).Reported(2)
          .Err(215, "BufferError", std::string(kReportMismatch) + "kDLCUDA (2) but the DLPack tensor is on (kDLCUDAHost, 0)" +
                                       kReportMismatchTail));
  add(R("reported kDLCUDAHost over an unknown capsule device 200").Dev(200).Reported(3)
          .Err(215, "BufferError", std::string(kReportMismatch) + "kDLCUDAHost (3) but the DLPack tensor is on (unknown, 0)" +
                                       kReportMismatchTail));
  add(R("kDLCUDAHost read on the host").Dev(3, 1).Target(1).Copy(DLMAP_COPY_NEVER).View().OutDev(1, 0));
  add(R("kDLROCMHost read on the host").Dev(11, 2).Target(1).Copy(DLMAP_COPY_NEVER).View().OutDev(1, 0));
  add(R("kDLCUDAManaged read on the host").Dev(13, 1).Target(1).Copy(DLMAP_COPY_NEVER).View().OutDev(1, 0));
  add(R("kDLCUDAHost kept on its own device").Dev(3, 1).View().OutDev(3, 1));
  add(R("kDLCUDAHost copied to the host").Dev(3, 1).Copy(DLMAP_COPY_ALWAYS).Copied().OutDev(1, 0));
  add(R("kDLCUDA on its own device, data never touched").Dev(2, 0).Fake(0x7f0000100000).View().OutDev(2, 0));
  add(R("kDLCPU id 3, target kDLCPU id 0: the same host").Dev(1, 3).Target(1, 0).Copy(DLMAP_COPY_NEVER).View()
          .OutDev(1, 3));
  add(R("host tensor to kDLCUDA, copy=False").Target(2).Copy(DLMAP_COPY_NEVER)
          .Err(212, "ValueError",
               std::string("Specified device=(kDLCUDA, 0) which requires a copy since the source device is (kDLCPU, 0)") +
                   kForbiddenTail));
  add(R("kDLCUDA 0 to kDLCUDA 1, copy=False").Dev(2, 0).Fake(0x7f0000100000).Target(2, 1).Copy(DLMAP_COPY_NEVER)
          .Err(212, "ValueError",
               std::string("Specified device=(kDLCUDA, 1) which requires a copy since the source device is (kDLCUDA, 0)") +
                   kForbiddenTail));
  add(R("kDLCUDA to the host, copy=False").Dev(2, 0).Fake(0x7f0000100000).Target(1).Copy(DLMAP_COPY_NEVER)
          .Err(212, "ValueError",
               std::string("Specified device=(kDLCPU, 0) which requires a copy since the source device is (kDLCUDA, 0)") +
                   kForbiddenTail));
  add(R("target device 5").Target(5)
          .Err(214, "BufferError", std::string(kUnsupportedTarget) + "5)"));
  add(R("target kDLOpenCL").Target(4)
          .Err(214, "BufferError", std::string(kUnsupportedTarget) + "4)"));
  add(R("host tensor to kDLCUDA, copy=None").Target(2)
          .NeedsPlatform(DLMAP_PLATFORM_CUDA,
                         "Device type kDLCUDA (2) needs platform cuda, which this build or machine cannot serve: {reason}"));
  add(R("kDLCUDA tensor to the host, copy=None").Dev(2).Fake(0x7f0000100000).Target(1)
          .NeedsPlatform(DLMAP_PLATFORM_CUDA,
                         "Device type kDLCUDA (2) needs platform cuda, which this build or machine cannot serve: {reason}"));
  add(R("kDLCUDA tensor, copy=True").Dev(2).Fake(0x7f0000100000).Copy(DLMAP_COPY_ALWAYS)
          .NeedsPlatform(DLMAP_PLATFORM_CUDA,
                         "Device type kDLCUDA (2) needs platform cuda, which this build or machine cannot serve: {reason}"));
  add(R("kDLCUDA broadcast tensor under the permutation policy").Dev(2).Fake(0x7f0000100000).Shape({2, 3})
          .Strides({0, 1}).Layout(kPerm)
          .NeedsPlatform(DLMAP_PLATFORM_CUDA,
                         "Device type kDLCUDA (2) needs platform cuda, which this build or machine cannot serve: {reason}"));
  add(R("kDLROCM tensor to the host, copy=None").Dev(10).Fake(0x7f0000100000).Target(1)
          .NeedsPlatform(DLMAP_PLATFORM_ROCM,
                         "Device type kDLROCM (10) needs platform rocm, which this build or machine cannot serve: {reason}"));
  return rows;
}

// ---- crafting a tensor from a row --------------------------------------------------------------------

// Bytes one element occupies in memory (padded sub-byte elements take one byte); 0 for packed sub-byte data.
uint64_t ElementBytes(const Row &r) {
  const uint64_t bits = static_cast<uint64_t>(r.dtype.bits) * r.dtype.lanes;
  if ((r.flags & 4) != 0 && bits < 8) return 1;
  return bits % 8 == 0 ? bits / 8 : 0;
}

// Compact row-major strides (extent 0 counts as 1; a product past INT64_MAX saturates).
std::vector<int64_t> CompactStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = stride;
    if (__builtin_mul_overflow(stride, shape[i] > 0 ? shape[i] : 1, &stride)) stride = INT64_MAX;
  }
  return s;
}

int64_t Count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

std::string Hex(const void *p) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
  return buf;
}

void Replace(std::string *s, const std::string &token, const std::string &value) {
  for (size_t at = s->find(token); at != std::string::npos; at = s->find(token, at + value.size())) {
    s->replace(at, token.size(), value);
  }
}

void SetDeviceType(DLTensor *t, int32_t type) {
  static_assert(sizeof t->device.device_type == sizeof(int32_t), "DLDeviceType is 4 bytes");
  memcpy(&t->device.device_type, &type, sizeof type);  // any int32_t, without an out-of-range C++ enum value
}

int32_t DeviceType(const DLTensor &t) {
  int32_t type;
  memcpy(&type, &t.device.device_type, sizeof type);
  return type;
}

int g_unreleased = 0;  // tensors still live when their test ended (the harness frees them)

struct Crafted {
  Crafted() = default;
  Crafted(const Crafted &) = delete;
  Crafted &operator=(const Crafted &) = delete;
  ~Crafted() {
    if (owned->freed) return;
    ++g_unreleased;
    Live().erase(owned->block);
    FreeOwned(owned.get());
  }
  std::unique_ptr<Owned> owned{new Owned};
  void *managed = nullptr;
  bool versioned = false;
  void *data = nullptr;
  const int64_t *shape = nullptr;
  const int64_t *strides = nullptr;
  std::vector<uint8_t> reference;  // the elements, compact row-major (what a copy must hold)
  bool has_reference = false;
};

void Craft(const Row &r, bool versioned, Crafted *c) {
  Owned *o = c->owned.get();
  c->versioned = versioned;
  if (r.garbage || r.truncated) {
    const size_t size = r.truncated ? offsetof(DLManagedTensorVersioned, flags) : sizeof(DLManagedTensorVersioned);
    auto *block = static_cast<unsigned char *>(malloc(size));
    memset(block, r.fill, size);
    DLPackVersion v;
    v.major = r.major;
    v.minor = r.minor;
    memcpy(block + offsetof(DLManagedTensorVersioned, version), &v, sizeof v);
    void (*deleter)(DLManagedTensorVersioned *) = r.null_deleter ? nullptr : VersionedDeleter;
    memcpy(block + offsetof(DLManagedTensorVersioned, deleter), &deleter, sizeof deleter);
    o->block = block;
    c->managed = block;
    Live()[block] = o;
    return;
  }

  if (!r.shape_null) {
    o->shape = new int64_t[r.shape.size()];
    for (size_t i = 0; i < r.shape.size(); i++) o->shape[i] = r.shape[i];
  }
  if (!r.strides_null) {
    o->strides = new int64_t[r.strides.size()];
    for (size_t i = 0; i < r.strides.size(); i++) o->strides[i] = r.strides[i];
  }

  // The data: exactly the bytes the strides reach, element 0 placed so negative strides stay inside.
  void *data = nullptr;
  if (r.data == Data::kFake) {
    data = reinterpret_cast<void *>(r.fake);
  } else if (r.data == Data::kTiny) {
    EXPECT_EQ(0, posix_memalign(&o->data_base, 256, 16 + r.misalign));
    memset(o->data_base, 0xEE, 16 + r.misalign);
    data = static_cast<char *>(o->data_base) + r.misalign;
  } else if (r.data == Data::kExact) {
    const std::vector<int64_t> shape = r.shape_null ? std::vector<int64_t>() : r.shape;
    const int64_t count = Count(shape);
    const uint64_t eb = ElementBytes(r);
    int64_t lo = 0, hi = 0;
    uint64_t bytes = 0;
    const std::vector<int64_t> strides = r.strides_null ? CompactStrides(shape) : r.strides;
    if (eb == 0) {
      bytes = (static_cast<uint64_t>(count) * r.dtype.bits * r.dtype.lanes + 7) / 8;  // packed, compact only
    } else if (count > 0) {
      for (size_t i = 0; i < shape.size(); i++) {
        const int64_t step = (shape[i] - 1) * strides[i];
        (step < 0 ? lo : hi) += step;
      }
      bytes = static_cast<uint64_t>(hi - lo + 1) * eb;
    }
    const size_t shift = static_cast<size_t>(-lo) * eb;
    const size_t total = r.misalign + r.byte_offset + bytes;
    EXPECT_EQ(0, posix_memalign(&o->data_base, 256, total));
    auto *base = static_cast<unsigned char *>(o->data_base);
    memset(base, 0xEE, r.misalign + r.byte_offset);
    unsigned char *region = base + r.misalign + r.byte_offset;  // lowest byte an element occupies
    const bool floats = r.dtype.code == 2 && r.dtype.bits == 32 && r.dtype.lanes == 1;
    for (uint64_t k = 0; k < bytes; k++) region[k] = static_cast<unsigned char>(k * 29 + 11);
    if (floats) {
      for (uint64_t j = 0; j < bytes / 4; j++) {
        const float v = static_cast<float>(j);
        memcpy(region + 4 * j, &v, 4);
      }
    }
    data = base + r.misalign + shift;
    // The reference: every element in row-major order, gathered by the test itself.
    const unsigned char *first = static_cast<unsigned char *>(data) + r.byte_offset;
    if (eb == 0) {
      c->reference.assign(first, first + bytes);
    } else {
      std::vector<int64_t> index(shape.size(), 0);
      for (int64_t n = 0; n < count; n++) {
        int64_t offset = 0;
        for (size_t i = 0; i < shape.size(); i++) offset += index[i] * strides[i];
        c->reference.insert(c->reference.end(), first + offset * static_cast<int64_t>(eb),
                            first + (offset + 1) * static_cast<int64_t>(eb));
        for (size_t i = shape.size(); i-- > 0;) {
          if (++index[i] < shape[i]) break;
          index[i] = 0;
        }
      }
    }
    c->has_reference = true;
  }
  if (r.data == Data::kNull) c->has_reference = true;  // rows with data NULL have no elements or fail
  c->data = data;
  c->shape = o->shape;
  c->strides = o->strides;

  DLTensor *t;
  if (versioned) {
    auto *m = static_cast<DLManagedTensorVersioned *>(calloc(1, sizeof(DLManagedTensorVersioned)));
    m->version.major = r.major;
    m->version.minor = r.minor;
    m->manager_ctx = nullptr;
    m->deleter = r.null_deleter ? nullptr : VersionedDeleter;
    m->flags = r.flags;
    t = &m->dl_tensor;
    o->block = m;
  } else {
    auto *m = static_cast<DLManagedTensor *>(calloc(1, sizeof(DLManagedTensor)));
    m->manager_ctx = nullptr;
    m->deleter = r.null_deleter ? nullptr : LegacyDeleter;
    t = &m->dl_tensor;
    o->block = m;
  }
  t->data = data;
  SetDeviceType(t, r.device_type);
  t->device.device_id = r.device_id;
  t->ndim = r.ndim;
  t->dtype = r.dtype;
  t->shape = o->shape;
  t->strides = o->strides;
  t->byte_offset = r.byte_offset;
  c->managed = o->block;
  Live()[o->block] = o;
}

// Frees what a NULL-deleter producer leaves to its owner.
void FreeUnowned(Crafted *c) {
  Owned *o = c->owned.get();
  if (o->freed) return;
  Live().erase(o->block);
  FreeOwned(o);
}

int32_t Import(const Crafted &c, const dlmap_import_request *request, dlmap_imported *out, dlmap_error *err) {
  return c.versioned ? dlmap_import_versioned(static_cast<DLManagedTensorVersioned *>(c.managed), request, out, err)
                     : dlmap_import_legacy(static_cast<DLManagedTensor *>(c.managed), request, out, err);
}

// ---- the table test ---------------------------------------------------------------------------------

struct Case {
  Row row;
  bool versioned;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.row.name << (c.versioned ? " (versioned)" : " (legacy)"); }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const Row &r : Rows()) {
    if (r.flavour != Flavour::kLegacy) cases.push_back({r, true});
    if (r.flavour != Flavour::kVersioned) cases.push_back({r, false});
  }
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<Case> &info) {
  std::string name;
  for (char ch : info.param.row.name) name += isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  char prefix[16];
  snprintf(prefix, sizeof prefix, "%03zu_", info.index);
  return prefix + name + (info.param.versioned ? "_versioned" : "_legacy");
}

class ImportTable : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    g_stray_deleter_calls = 0;
    g_unreleased = 0;
  }
  void TearDown() override {
    EXPECT_EQ(0, g_stray_deleter_calls) << "a deleter ran twice or on a pointer that is not a live tensor";
    EXPECT_EQ(0, g_unreleased) << "managed tensor(s) never released";
  }
};

// The request of a row, with its allocator and any raw enum values filled in.
dlmap_import_request MakeRequest(const Row &r, dlmap_allocator *allocator, AllocatorCounts *counts) {
  dlmap_import_request request = r.request;
  if (r.alloc == Alloc::kCounting) *allocator = {CountingAllocate, CountingRelease, counts};
  if (r.alloc == Alloc::kFailing) *allocator = {FailingAllocate, CountingRelease, counts};
  if (r.alloc != Alloc::kDefault) request.allocator = allocator;
  if (r.raw_copy >= 0) memcpy(&request.copy, &r.raw_copy, sizeof r.raw_copy);
  if (r.raw_layout >= 0) memcpy(&request.layout, &r.raw_layout, sizeof r.raw_layout);
  return request;
}

TEST_P(ImportTable, Row) {
  const Row &r = GetParam().row;
  const bool versioned = GetParam().versioned;
  const bool has_deleter = !r.null_deleter;
  const int deleter_calls = has_deleter ? 1 : 0;

  // What the row expects, with the run-time values filled in.
  Outcome outcome = r.outcome;
  int32_t code = r.code;
  std::string kind = r.kind, message = r.message;
  if (outcome == Outcome::kPlatform) {
    dlmap_platform_status status;
    dlmap_platform_probe(r.platform, &status);
    outcome = Outcome::kError;
    if (!status.available) {
      code = DLMAP_ERR_PLATFORM_UNAVAILABLE;
      kind = "BufferError";
      Replace(&message, "{reason}", status.reason);
    } else {
      // The GPU backend serves the row here; its buffer is host memory posing as device memory.
      GTEST_SKIP() << "the GPU backend serves this row here; tests/gpu covers it with device memory";
    }
  }

  Crafted c;
  Craft(r, versioned, &c);
  Replace(&message, "{data}", Hex(c.data));
  Replace(&message, "{first}", Hex(static_cast<char *>(c.data) + (c.data != nullptr ? r.byte_offset : 0)));

  AllocatorCounts counts;
  dlmap_allocator allocator;
  const dlmap_import_request request = MakeRequest(r, &allocator, &counts);
  dlmap_imported out;
  memset(&out, 0, sizeof out);
  dlmap_error err;
  memset(&err, 0, sizeof err);
  const int32_t status = Import(c, &request, &out, &err);

  if (outcome == Outcome::kError) {
    EXPECT_EQ(code, status);
    EXPECT_EQ(code, err.code);
    EXPECT_STREQ(kind.c_str(), dlmap_error_kind_name(err.kind));
    EXPECT_STREQ(dlmap_error_describe(code)->id, err.id);
    EXPECT_EQ(message, err.message);
    EXPECT_EQ(deleter_calls, c.owned->calls) << "dlmap owns the tensor on error: the deleter runs exactly once";
    EXPECT_EQ(0, counts.allocations) << "no allocation survives an error path";
    if (!has_deleter) FreeUnowned(&c);

    // The same row without an error struct: the same status, the same single deleter call.
    Crafted again;
    Craft(r, versioned, &again);
    EXPECT_EQ(code, Import(again, &request, &out, nullptr));
    EXPECT_EQ(deleter_calls, again.owned->calls);
    if (!has_deleter) FreeUnowned(&again);
    return;
  }

  ASSERT_EQ(DLMAP_OK, status) << err.message;
  const bool copied = outcome == Outcome::kCopy;
  const std::vector<int64_t> shape = r.shape_null ? std::vector<int64_t>() : r.shape;
  const int32_t ndim = r.ndim;
  EXPECT_EQ(copied, out.copied);
  EXPECT_EQ(r.read_only, out.read_only);
  EXPECT_EQ(r.subbyte_padded, out.subbyte_padded);
  EXPECT_EQ(versioned ? r.major : 0u, out.version.major);
  EXPECT_EQ(versioned ? r.minor : 0u, out.version.minor);
  EXPECT_EQ(ndim, out.tensor.ndim);
  EXPECT_EQ(r.dtype.code, out.tensor.dtype.code);
  EXPECT_EQ(r.dtype.bits, out.tensor.dtype.bits);
  EXPECT_EQ(r.dtype.lanes, out.tensor.dtype.lanes);
  const int32_t want_type = r.out_device_set ? r.out_type : copied ? 1 : r.device_type;
  const int32_t want_id = r.out_device_set ? r.out_id : copied ? 0 : r.device_id;
  EXPECT_EQ(want_type, DeviceType(out.tensor));
  EXPECT_EQ(want_id, out.tensor.device.device_id);
  if (ndim > 0) {
    ASSERT_NE(nullptr, out.tensor.shape);
    ASSERT_NE(nullptr, out.tensor.strides) << "strides are never NULL for ndim > 0";
    EXPECT_EQ(shape, std::vector<int64_t>(out.tensor.shape, out.tensor.shape + ndim));
  }
  const std::vector<int64_t> compact = CompactStrides(shape);
  const int64_t *strides = out.tensor.strides;
  const int64_t count = Count(shape);
  const uint64_t eb = ElementBytes(r);

  if (!copied) {
    // Zero-copy: the producer's own memory and metadata.
    EXPECT_EQ(c.data, out.tensor.data);
    EXPECT_EQ(r.byte_offset, out.tensor.byte_offset);
    EXPECT_EQ(c.shape, out.tensor.shape);
    if (!r.strides_null) {
      EXPECT_EQ(c.strides, out.tensor.strides);
    } else if (ndim > 0) {
      EXPECT_EQ(out.strides_, out.tensor.strides);
      EXPECT_EQ(compact, std::vector<int64_t>(strides, strides + ndim)) << "compact strides filled in";
    } else {
      EXPECT_EQ(nullptr, out.tensor.strides);
    }
    EXPECT_EQ(0, c.owned->calls) << "a view keeps the producer's tensor until release";
    if (c.has_reference && r.data != Data::kFake && count > 0 && eb > 0) {
      // The view reads the elements the reference holds.
      const auto *first = static_cast<const unsigned char *>(out.tensor.data) + out.tensor.byte_offset;
      std::vector<uint8_t> seen;
      std::vector<int64_t> index(shape.size(), 0);
      for (int64_t n = 0; n < count; n++) {
        int64_t offset = 0;
        for (int32_t i = 0; i < ndim; i++) offset += index[i] * strides[i];
        seen.insert(seen.end(), first + offset * static_cast<int64_t>(eb), first + (offset + 1) * static_cast<int64_t>(eb));
        for (int32_t i = ndim; i-- > 0;) {
          if (++index[i] < shape[i]) break;
          index[i] = 0;
        }
      }
      EXPECT_EQ(c.reference, seen);
    }
  } else {
    EXPECT_NE(c.data, out.tensor.data);
    EXPECT_EQ(0u, out.tensor.byte_offset);
    if (ndim > 0) {
      EXPECT_NE(c.shape, out.tensor.shape);
      EXPECT_EQ(compact, std::vector<int64_t>(strides, strides + ndim)) << "a copy is compact row-major";
    }
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(out.tensor.data) % r.copy_alignment);
    EXPECT_EQ(deleter_calls, c.owned->calls) << "a copy releases the producer's tensor at import";
    ASSERT_TRUE(c.has_reference);
    ASSERT_NE(nullptr, out.tensor.data);
    EXPECT_EQ(c.reference, std::vector<uint8_t>(static_cast<const uint8_t *>(out.tensor.data),
                                                 static_cast<const uint8_t *>(out.tensor.data) + c.reference.size()))
        << "the copy holds every element in row-major order";
  }
  if (!r.values.empty()) {
    ASSERT_EQ(static_cast<size_t>(count), r.values.size());
    ASSERT_EQ(2, r.dtype.code);
    const auto *first = reinterpret_cast<const unsigned char *>(out.tensor.data) + out.tensor.byte_offset;
    std::vector<float> got;
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t n = 0; n < count; n++) {
      int64_t offset = 0;
      for (int32_t i = 0; i < ndim; i++) offset += index[i] * strides[i];
      float v;
      memcpy(&v, first + offset * 4, 4);
      got.push_back(v);
      for (int32_t i = ndim; i-- > 0;) {
        if (++index[i] < shape[i]) break;
        index[i] = 0;
      }
    }
    EXPECT_EQ(r.values, got);
  }
  if (r.alloc == Alloc::kCounting) {
    EXPECT_EQ(copied ? 1 : 0, counts.allocations);
    if (copied) {
      EXPECT_GE(counts.last_alignment, r.copy_alignment);
    }
  }

  dlmap_imported_release(&out);
  EXPECT_EQ(deleter_calls, c.owned->calls) << "the deleter runs exactly once in all";
  if (r.alloc == Alloc::kCounting) {
    EXPECT_EQ(counts.allocations, counts.releases) << "release frees the copy";
  }
  dlmap_imported zero;
  memset(&zero, 0, sizeof zero);
  EXPECT_EQ(0, memcmp(&zero, &out, offsetof(dlmap_imported, strides_))) << "release zeroes all but the stride scratch";
  dlmap_imported_release(&out);  // a second release of the zeroed struct does nothing
  EXPECT_EQ(deleter_calls, c.owned->calls);
  if (!has_deleter) FreeUnowned(&c);
}

INSTANTIATE_TEST_SUITE_P(Rows, ImportTable, ::testing::ValuesIn(Cases()), CaseName);

// ---- beyond the table -------------------------------------------------------------------------------

class ImportApi : public ::testing::Test {
 protected:
  void SetUp() override {
    g_stray_deleter_calls = 0;
    g_unreleased = 0;
  }
  void TearDown() override {
    EXPECT_EQ(0, g_stray_deleter_calls);
    EXPECT_EQ(0, g_unreleased);
  }
};

TEST_F(ImportApi, NullTensorIsAnInvalidArgumentWithNothingToRelease) {
  dlmap_imported out;
  dlmap_error err;
  EXPECT_EQ(DLMAP_ERR_INVALID_ARGUMENT, dlmap_import_versioned(nullptr, nullptr, &out, &err));
  EXPECT_STREQ("Invalid argument tensor: must not be NULL", err.message);
  EXPECT_STREQ("ValueError", dlmap_error_kind_name(err.kind));
  EXPECT_EQ(DLMAP_ERR_INVALID_ARGUMENT, dlmap_import_legacy(nullptr, nullptr, &out, &err));
  EXPECT_STREQ("Invalid argument tensor: must not be NULL", err.message);
}

TEST_F(ImportApi, NullOutReleasesTheTensor) {
  for (bool versioned : {true, false}) {
    Crafted c;
    Craft(R("plain"), versioned, &c);
    dlmap_error err;
    EXPECT_EQ(DLMAP_ERR_INVALID_ARGUMENT, Import(c, nullptr, nullptr, &err));
    EXPECT_STREQ("Invalid argument out: must not be NULL", err.message);
    EXPECT_EQ(1, c.owned->calls);
  }
}

TEST_F(ImportApi, NullRequestIsTheDefaultRequest) {
  for (bool versioned : {true, false}) {
    Crafted c;
    Craft(R("broadcast").Shape({2, 3}).Strides({0, 1}), versioned, &c);
    dlmap_imported out;
    ASSERT_EQ(DLMAP_OK, Import(c, nullptr, &out, nullptr));
    EXPECT_EQ(c.data, out.tensor.data);
    EXPECT_FALSE(out.copied);
    dlmap_imported_release(&out);
    EXPECT_EQ(1, c.owned->calls);
  }
}

TEST_F(ImportApi, ReleaseFromAnotherThread) {
  for (bool copy : {false, true}) {
    Crafted c;
    Craft(R("plain").Shape({2, 3}), true, &c);
    dlmap_import_request request = dlmap_import_request_default();
    request.copy = copy ? DLMAP_COPY_ALWAYS : DLMAP_COPY_IF_NEEDED;
    dlmap_imported out;
    ASSERT_EQ(DLMAP_OK, Import(c, &request, &out, nullptr));
    EXPECT_EQ(copy ? 1 : 0, c.owned->calls);
    std::thread([&out] { dlmap_imported_release(&out); }).join();
    EXPECT_EQ(1, c.owned->calls);
    EXPECT_EQ(nullptr, out.tensor.data);
  }
}

TEST_F(ImportApi, ReleaseOfAZeroedStructAndNullIsSafe) {
  dlmap_imported out;
  memset(&out, 0, sizeof out);
  dlmap_imported_release(&out);
  dlmap_imported_release(nullptr);
}

TEST_F(ImportApi, CopyAlwaysReleasesTheProducerAtImportAndTheCopyAtRelease) {
  for (bool versioned : {true, false}) {
    Crafted c;
    Craft(R("transpose").Shape({3, 2}).Strides({1, 3}), versioned, &c);
    AllocatorCounts counts;
    dlmap_allocator allocator = {CountingAllocate, CountingRelease, &counts};
    dlmap_import_request request = dlmap_import_request_default();
    request.copy = DLMAP_COPY_ALWAYS;
    request.allocator = &allocator;
    dlmap_imported out;
    ASSERT_EQ(DLMAP_OK, Import(c, &request, &out, nullptr));
    EXPECT_EQ(1, c.owned->calls) << "the producer's deleter ran once, at import";
    EXPECT_TRUE(c.owned->freed);
    EXPECT_EQ(1, counts.allocations);
    EXPECT_EQ(0, counts.releases);
    EXPECT_EQ(0u, counts.last_size % DLMAP_DATA_ALIGNMENT);
    const float expected[] = {0, 3, 1, 4, 2, 5};
    EXPECT_EQ(0, memcmp(expected, out.tensor.data, sizeof expected));
    const int64_t strides[] = {2, 1};
    EXPECT_EQ(0, memcmp(strides, out.tensor.strides, sizeof strides));
    allocator = {nullptr, nullptr, nullptr};  // dlmap keeps its own copy of the allocator struct
    dlmap_imported_release(&out);
    EXPECT_EQ(1, counts.releases);
    EXPECT_EQ(1, c.owned->calls);
  }
}

TEST_F(ImportApi, OutIsUntouchedOnError) {
  Crafted c;
  Craft(R("ndim -1").Shape({}).Ndim(-1), true, &c);
  dlmap_imported out;
  memset(&out, 0x5C, sizeof out);
  unsigned char before[sizeof out];
  memcpy(before, &out, sizeof out);
  EXPECT_EQ(DLMAP_ERR_NDIM_NEGATIVE, Import(c, nullptr, &out, nullptr));
  EXPECT_EQ(0, memcmp(before, &out, sizeof out));
  EXPECT_EQ(1, c.owned->calls);
}

TEST_F(ImportApi, KDLOneAPIIsExpressibleIn10ButHasNoBackend) {
  // The table's kDLOneAPI rows fail for want of a backend, not for the version: 0.7 ≤ 1.0.
  dlmap_version v10 = {1, 0}, v06 = {0, 6};
  EXPECT_EQ(DLMAP_OK, dlmap_check_representable(DLMAP_DEVICE_ONEAPI, kF32, 0, v10, nullptr));
  dlmap_error err;
  EXPECT_EQ(DLMAP_ERR_DEVICE_TYPE_NOT_IN_VERSION, dlmap_check_representable(DLMAP_DEVICE_ONEAPI, kF32, 0, v06, &err));
  EXPECT_STREQ("Device type kDLOneAPI (14) cannot be expressed in DLPack 0.6; it was introduced in 0.7.", err.message);
}

TEST_F(ImportApi, EveryErrorCodeOfTheTableIsInTheCatalogue) {
  for (const Row &r : Rows()) {
    if (r.outcome != Outcome::kError) continue;
    const dlmap_error_info *info = dlmap_error_describe(r.code);
    EXPECT_STRNE("unknown", info->id) << r.name;
    EXPECT_STREQ(r.kind.c_str(), dlmap_error_kind_name(info->kind)) << r.name;
  }
}

}  // namespace
