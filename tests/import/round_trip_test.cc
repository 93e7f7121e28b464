// Round trips export → import (src/export.c → src/import.c) for every dtype width in the spec, ndim 0–8, compact and permuted layouts, size-0 and size-1 dims, both ABI flavours: bytes and metadata identical, zero-copy proven by pointer equality.
//
// The framework's array is built on the heap with exactly the memory it describes; its shape and
// strides arrays are freed as soon as dlmap_export returns (dlmap reads them only during the call), so
// ASan reports any view that still points at them. Every copy is compared with a compact row-major
// reference the test gathers itself from the source memory before anything is released.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"
#include "gtest/gtest.h"

namespace {

dlmap_version V(uint32_t major, uint32_t minor) {
  dlmap_version v;
  v.major = major;
  v.minor = minor;
  return v;
}

// ---- every width of the spec ------------------------------------------------------------------------

struct Width {
  const char *name;  // dlmap_dtype_format's text
  uint8_t code, bits;
  uint16_t lanes;
  dlmap_version introduced;
};

const dlmap_version k01 = {0, 1}, k03 = {0, 3}, k04 = {0, 4}, k08 = {0, 8}, k11 = {1, 1}, k13 = {1, 3};
// The version a versioned consumer asks for: the spec's current one (read from the YAML).
const dlmap_version kCurrent = {SPEC_FACTS_CURRENT_MAJOR, SPEC_FACTS_CURRENT_MINOR};

// The named widths (lanes 1) of DLPack 1.3 and its main branch, by hand, in spec order: what must never change.
const Width kNamed[] = {
    {"int2", 0, 2, 1, k11},
    {"int4", 0, 4, 1, k11},
    {"int8", 0, 8, 1, k01},
    {"int16", 0, 16, 1, k01},
    {"int32", 0, 32, 1, k01},
    {"int64", 0, 64, 1, k01},
    {"uint1", 1, 1, 1, k11},
    {"uint2", 1, 2, 1, k11},
    {"uint4", 1, 4, 1, k11},
    {"uint8", 1, 8, 1, k01},
    {"uint16", 1, 16, 1, k01},
    {"uint32", 1, 32, 1, k01},
    {"uint64", 1, 64, 1, k01},
    {"float16", 2, 16, 1, k01},
    {"float32", 2, 32, 1, k01},
    {"float64", 2, 64, 1, k01},
    {"bfloat16", 4, 16, 1, k03},
    {"complex32", 5, 32, 1, k04},
    {"complex64", 5, 64, 1, k04},
    {"complex128", 5, 128, 1, k04},
    {"bool", 6, 8, 1, k08},
    {"float8_e3m4", 7, 8, 1, k11},
    {"float8_e4m3", 8, 8, 1, k11},
    {"float8_e4m3b11fnuz", 9, 8, 1, k11},
    {"float8_e4m3fn", 10, 8, 1, k11},
    {"float8_e4m3fnuz", 11, 8, 1, k11},
    {"float8_e5m2", 12, 8, 1, k11},
    {"float8_e5m2fnuz", 13, 8, 1, k11},
    {"float8_e8m0fnu", 14, 8, 1, k11},
    {"float6_e2m3fn", 15, 6, 1, k11},
    {"float6_e3m2fn", 16, 6, 1, k11},
    {"float4_e2m1fn", 17, 4, 1, k11},
    {"bcomplex32", 18, 32, 1, k13},
};

// Vector widths: byte-sized vectors of sub-byte lanes, sub-byte vectors, and wide ones.
const Width kVectors[] = {
    {"float32x4", 2, 32, 4, k01},       {"float16x2", 2, 16, 2, k01},   {"complex64x2", 5, 64, 2, k04},
    {"int4x2", 0, 4, 2, k11},           {"uint1x8", 1, 1, 8, k11},      {"float4_e2m1fnx2", 17, 4, 2, k11},
    {"float6_e2m3fnx4", 15, 6, 4, k11}, {"uint2x3", 1, 2, 3, k11},      {"boolx16", 6, 8, 16, k08},
};

// Every width of the spec's YAML (tests/spec_facts), lanes 1, in spec order: what the sweep runs. A width's version
// is its own or, when later, its code's; an unnamed width is shown as dlmap_dtype_format writes it.
const std::vector<Width> &SpecWidths() {
  static std::deque<std::string> names;
  static const std::vector<Width> widths = [] {
    std::vector<Width> out;
    for (const spec_facts_dtype_width &f : spec_facts_dtype_widths) {
      dlmap_version introduced = {f.introduced.major, f.introduced.minor};
      for (const spec_facts_dtype_code &c : spec_facts_dtype_codes) {
        if (c.code == f.code && dlmap_version_compare(V(c.introduced.major, c.introduced.minor), introduced) > 0) {
          introduced = V(c.introduced.major, c.introduced.minor);
        }
      }
      if (f.names[0] == nullptr) {
        names.push_back("(code " + std::to_string(f.code) + ", bits " + std::to_string(f.bits) + ", lanes 1)");
      }
      out.push_back({f.names[0] != nullptr ? f.names[0] : names.back().c_str(), static_cast<uint8_t>(f.code),
                     static_cast<uint8_t>(f.bits), 1, introduced});
    }
    return out;
  }();
  return widths;
}

DLDataType Dtype(const Width &w) {
  DLDataType d;
  d.code = w.code;
  d.bits = w.bits;
  d.lanes = w.lanes;
  return d;
}

uint64_t ElementBits(const Width &w) { return static_cast<uint64_t>(w.bits) * w.lanes; }
bool Subbyte(const Width &w) { return ElementBits(w) % 8 != 0; }

TEST(RoundTripWidths, TheSweepCoversEveryWidthOfTheSpec) {
  std::set<std::tuple<int, int, uint32_t, uint32_t>> spec, facts;
  for (size_t i = 0; dlmap_dtype_code_at(i) != nullptr; i++) {
    const uint8_t code = dlmap_dtype_code_at(i)->code;
    for (int bits = 1; bits <= 255; bits++) {
      dlmap_version introduced;
      if (dlmap_dtype_width_valid(code, static_cast<uint8_t>(bits), &introduced)) {
        // a width's version is its own or, when later, its code's
        dlmap_version code_version = dlmap_dtype_code_at(i)->introduced;
        if (dlmap_version_compare(code_version, introduced) > 0) introduced = code_version;
        spec.insert(std::make_tuple(code, bits, introduced.major, introduced.minor));
      }
    }
  }
  for (const Width &w : SpecWidths()) {
    facts.insert(std::make_tuple(w.code, w.bits, w.introduced.major, w.introduced.minor));
    EXPECT_TRUE(dlmap_dtype_in_version(Dtype(w), w.introduced)) << w.name;
    char name[64];
    dlmap_dtype_format(Dtype(w), name, sizeof name);
    EXPECT_STREQ(w.name, name);
  }
  EXPECT_EQ(spec, facts);
  EXPECT_EQ(SpecWidths().size(), spec.size());
  for (const Width &w : kNamed) {
    EXPECT_STREQ(w.name, dlmap_dtype_width_name(w.code, w.bits));
    EXPECT_EQ(facts.count(std::make_tuple(w.code, w.bits, w.introduced.major, w.introduced.minor)), 1u) << w.name;
  }
  for (const Width &w : kVectors) {
    char name[64];
    dlmap_dtype_format(Dtype(w), name, sizeof name);
    EXPECT_STREQ(w.name, name);
    EXPECT_EQ(DLMAP_OK, dlmap_dtype_validate(Dtype(w), nullptr)) << w.name;
  }
}

// ---- the framework's array ---------------------------------------------------------------------------

enum class Layout { kNullStrides, kCompact, kReversed, kRotated };
enum class Shape { kRegular, kSizeZero, kOnes };

const char *LayoutName(Layout l) {
  switch (l) {
    case Layout::kNullStrides: return "NULL strides";
    case Layout::kCompact: return "compact strides";
    case Layout::kReversed: return "reversed (F order)";
    case Layout::kRotated: return "rotated";
  }
  return "?";
}

const char *ShapeName(Shape s) {
  switch (s) {
    case Shape::kRegular: return "regular";
    case Shape::kSizeZero: return "size 0";
    case Shape::kOnes: return "all size 1";
  }
  return "?";
}

std::vector<int64_t> MakeShape(int ndim, Shape kind) {
  static const int64_t kPattern[] = {2, 3, 1, 4, 2, 1, 3, 2};
  std::vector<int64_t> shape(kPattern, kPattern + ndim);
  if (kind == Shape::kOnes) shape.assign(static_cast<size_t>(ndim), 1);
  if (kind == Shape::kSizeZero && ndim > 0) shape[static_cast<size_t>(ndim / 2)] = 0;
  return shape;
}

// Compact strides when the dimensions are laid out in memory in `order` (outermost first); extent 0
// counts as 1, as in NumPy.
std::vector<int64_t> StridesInOrder(const std::vector<int64_t> &shape, const std::vector<int> &order) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t k = order.size(); k-- > 0;) {
    strides[static_cast<size_t>(order[k])] = stride;
    stride *= shape[static_cast<size_t>(order[k])] > 0 ? shape[static_cast<size_t>(order[k])] : 1;
  }
  return strides;
}

std::vector<int64_t> CompactStrides(const std::vector<int64_t> &shape) {
  std::vector<int> order;
  for (size_t i = 0; i < shape.size(); i++) order.push_back(static_cast<int>(i));
  return StridesInOrder(shape, order);
}

std::vector<int64_t> MakeStrides(const std::vector<int64_t> &shape, Layout layout) {
  const int n = static_cast<int>(shape.size());
  std::vector<int> order;
  for (int i = 0; i < n; i++) order.push_back(i);
  if (layout == Layout::kReversed) {
    for (int i = 0; i < n; i++) order[static_cast<size_t>(i)] = n - 1 - i;
  } else if (layout == Layout::kRotated) {
    for (int i = 0; i < n; i++) order[static_cast<size_t>(i)] = (i + 1) % n;
  }
  return StridesInOrder(shape, order);
}

int64_t Count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// Row-major by hand: every extent > 1 has the compact stride (size-1 dims free, no elements exempt).
bool RowMajor(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
  if (Count(shape) == 0) return true;
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] > 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

struct Owner {
  int releases = 0;
};

void ReleaseOwner(void *owner) { static_cast<Owner *>(owner)->releases++; }

// The framework's array: exact heap memory, and the compact row-major reference of its elements.
struct Source {
  Width width;
  std::vector<int64_t> shape, strides;  // strides: what the elements really use (compact when NULL is passed)
  bool null_strides = false;
  int64_t *shape_array = nullptr;
  int64_t *strides_array = nullptr;
  void *base = nullptr;
  void *data = nullptr;
  uint64_t byte_offset = 0;
  size_t bytes = 0;                // of the elements
  std::vector<uint8_t> reference;  // compact row-major
  Owner owner;

  Source() = default;
  Source(const Source &) = delete;
  Source &operator=(const Source &) = delete;
  ~Source() {
    FreeDims();
    free(base);
  }
  void FreeDims() {
    delete[] shape_array;
    delete[] strides_array;
    shape_array = strides_array = nullptr;
  }
};

void MakeSource(const Width &w, const std::vector<int64_t> &shape, Layout layout, uint64_t offset_elements,
                unsigned seed, Source *s) {
  s->width = w;
  s->shape = shape;
  s->null_strides = layout == Layout::kNullStrides;
  s->strides = s->null_strides ? CompactStrides(shape) : MakeStrides(shape, layout);
  s->shape_array = new int64_t[shape.size()];
  for (size_t i = 0; i < shape.size(); i++) s->shape_array[i] = shape[i];
  if (!s->null_strides) {
    s->strides_array = new int64_t[shape.size()];
    for (size_t i = 0; i < shape.size(); i++) s->strides_array[i] = s->strides[i];
  }
  const uint64_t count = static_cast<uint64_t>(Count(shape));
  const uint64_t bits = ElementBits(w);
  const uint64_t eb = bits % 8 == 0 ? bits / 8 : 0;
  s->bytes = static_cast<size_t>((count * bits + 7) / 8);  // a permutation of compact reaches exactly this
  s->byte_offset = offset_elements * eb;
  const size_t total = static_cast<size_t>(s->byte_offset) + s->bytes;
  EXPECT_EQ(0, posix_memalign(&s->base, 64, total));
  auto *bytes = static_cast<unsigned char *>(s->base);
  for (size_t k = 0; k < total; k++) bytes[k] = static_cast<unsigned char>(k * 131 + seed * 17 + 5);
  s->data = s->base;
  const unsigned char *first = bytes + s->byte_offset;
  if (eb == 0) {
    s->reference.assign(first, first + s->bytes);
    return;
  }
  std::vector<int64_t> index(shape.size(), 0);
  for (uint64_t n = 0; n < count; n++) {
    int64_t offset = 0;
    for (size_t i = 0; i < shape.size(); i++) offset += index[i] * s->strides[i];
    s->reference.insert(s->reference.end(), first + offset * static_cast<int64_t>(eb),
                        first + (offset + 1) * static_cast<int64_t>(eb));
    for (size_t i = shape.size(); i-- > 0;) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
}

// The elements a tensor describes, gathered in row-major order.
std::vector<uint8_t> Gather(const DLTensor &t) {
  const uint64_t bits = static_cast<uint64_t>(t.dtype.bits) * t.dtype.lanes;
  const unsigned char *first = static_cast<const unsigned char *>(t.data) + t.byte_offset;
  int64_t count = 1;
  for (int32_t i = 0; i < t.ndim; i++) count *= t.shape[i];
  if (count == 0) return {};
  if (bits % 8 != 0) return std::vector<uint8_t>(first, first + (static_cast<uint64_t>(count) * bits + 7) / 8);
  const int64_t eb = static_cast<int64_t>(bits / 8);
  std::vector<uint8_t> out;
  std::vector<int64_t> index(static_cast<size_t>(t.ndim), 0);
  for (int64_t n = 0; n < count; n++) {
    int64_t offset = 0;
    for (int32_t i = 0; i < t.ndim; i++) offset += index[static_cast<size_t>(i)] * t.strides[i];
    out.insert(out.end(), first + offset * eb, first + (offset + 1) * eb);
    for (int32_t i = t.ndim; i-- > 0;) {
      if (++index[static_cast<size_t>(i)] < t.shape[i]) break;
      index[static_cast<size_t>(i)] = 0;
    }
  }
  return out;
}

int32_t DeviceType(const DLDevice &d) {
  int32_t type;
  memcpy(&type, &d.device_type, sizeof type);
  return type;
}

std::vector<int64_t> Dims(const int64_t *p, int32_t n) {
  return p == nullptr ? std::vector<int64_t>() : std::vector<int64_t>(p, p + n);
}

// ---- one round trip -----------------------------------------------------------------------------------

enum class Variant {
  kView,             // export a view, import with any layout: the same memory all the way
  kPermutationNever, // import under the compact-permutation policy with copy=False: still a view
  kRowMajor,         // import under the row-major policy with copy=None: a view, or a compact copy
  kExportCopy,       // export with copy=True, import a view of the export's copy
  kImportCopy,       // export a view, import with copy=True
};

const char *VariantName(Variant v) {
  switch (v) {
    case Variant::kView: return "view";
    case Variant::kPermutationNever: return "permutation policy, copy=False";
    case Variant::kRowMajor: return "row-major policy, copy=None";
    case Variant::kExportCopy: return "export copy=True";
    case Variant::kImportCopy: return "import copy=True";
  }
  return "?";
}

const Variant kVariants[] = {Variant::kView, Variant::kPermutationNever, Variant::kRowMajor, Variant::kExportCopy,
                             Variant::kImportCopy};

// The version a consumer of each flavour gets: a legacy export speaks 0.8 (the newest legacy release).
// The version a consumer of each flavour gets: a legacy export speaks 0.8 (the newest legacy release); a versioned
// consumer asks for the current version.
dlmap_version ExportVersion(bool versioned) { return versioned ? kCurrent : k08; }

void RoundTrip(const Width &w, bool versioned, const std::vector<int64_t> &shape, Layout layout, Variant variant,
               uint64_t offset_elements, unsigned seed) {
  Source src;
  MakeSource(w, shape, layout, offset_elements, seed, &src);
  const int32_t ndim = static_cast<int32_t>(shape.size());

  dlmap_array array = dlmap_array_default();
  array.data = src.data;
  array.device_type = DLMAP_DEVICE_CPU;
  array.device_id = 0;
  array.dtype = Dtype(w);
  array.ndim = ndim;
  array.shape = src.shape_array;
  array.strides = src.strides_array;
  array.byte_offset = src.byte_offset;
  array.owner = &src.owner;
  array.release = ReleaseOwner;

  dlmap_export_request er = dlmap_export_request_default();
  er.has_max_version = versioned;
  er.max_version = kCurrent;
  er.copy = variant == Variant::kExportCopy ? DLMAP_COPY_ALWAYS : DLMAP_COPY_IF_NEEDED;
  dlmap_exported ex;
  dlmap_error err;
  const int32_t exported = dlmap_export(&array, &er, &ex, &err);
  src.FreeDims();  // dlmap reads the array's shape and strides during dlmap_export only

  const dlmap_version version = ExportVersion(versioned);
  if (!dlmap_dtype_in_version(Dtype(w), version)) {
    // A legacy consumer cannot be told about a dtype newer than 0.8: the export refuses, and the caller
    // keeps its array.
    char message[256];
    snprintf(message, sizeof message, "Data type %s cannot be expressed in DLPack 0.8; it was introduced in %u.%u.",
             w.name, w.introduced.major, w.introduced.minor);
    EXPECT_FALSE(versioned);
    EXPECT_EQ(DLMAP_ERR_DTYPE_NOT_IN_VERSION, exported);
    EXPECT_STREQ(message, err.message);
    EXPECT_EQ(0, src.owner.releases);
    return;
  }
  ASSERT_EQ(DLMAP_OK, exported) << err.message;

  // The export: metadata identical, data zero-copy unless copy=True.
  const bool export_copy = variant == Variant::kExportCopy;
  const std::vector<int64_t> compact = CompactStrides(shape);
  ASSERT_EQ(versioned ? DLMAP_STRUCT_VERSIONED : DLMAP_STRUCT_LEGACY, ex.structure);
  EXPECT_EQ(0, dlmap_version_compare(version, ex.version));
  EXPECT_EQ(export_copy, ex.copied);
  const DLTensor &et = versioned ? ex.versioned->dl_tensor : ex.legacy->dl_tensor;
  if (versioned) {
    EXPECT_EQ(kCurrent.major, ex.versioned->version.major);
    EXPECT_EQ(kCurrent.minor, ex.versioned->version.minor);
    EXPECT_EQ(export_copy ? DLMAP_FLAG_IS_COPIED : UINT64_C(0), ex.versioned->flags);
  }
  EXPECT_EQ(ndim, et.ndim);
  EXPECT_EQ(w.code, et.dtype.code);
  EXPECT_EQ(w.bits, et.dtype.bits);
  EXPECT_EQ(w.lanes, et.dtype.lanes);
  EXPECT_EQ(DLMAP_DEVICE_CPU, DeviceType(et.device));
  EXPECT_EQ(0, et.device.device_id);
  EXPECT_EQ(shape, Dims(et.shape, ndim));
  if (ndim > 0) {
    ASSERT_NE(nullptr, et.strides) << "DLPack 1.2: strides are never NULL for ndim > 0";
  }
  const std::vector<int64_t> exported_strides = export_copy ? compact : src.strides;
  EXPECT_EQ(exported_strides, Dims(et.strides, ndim));
  if (export_copy) {
    EXPECT_NE(src.data, et.data);
    EXPECT_EQ(0u, et.byte_offset);
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(et.data) % DLMAP_DATA_ALIGNMENT);
  } else {
    EXPECT_EQ(src.data, et.data) << "zero-copy export";
    EXPECT_EQ(src.byte_offset, et.byte_offset);
  }
  EXPECT_EQ(src.reference, Gather(et)) << "the exported tensor holds the array's elements";
  void *const exported_data = et.data;
  const int64_t *const exported_shape = et.shape;
  const int64_t *const exported_strides_ptr = et.strides;
  const uint64_t exported_offset = et.byte_offset;

  // The import.
  dlmap_import_request ir = dlmap_import_request_default();
  bool import_copy = false;
  switch (variant) {
    case Variant::kView:
    case Variant::kExportCopy:
      break;
    case Variant::kPermutationNever:
      ir.layout = DLMAP_LAYOUT_COMPACT_PERMUTATION;
      ir.copy = DLMAP_COPY_NEVER;
      break;
    case Variant::kRowMajor:
      ir.layout = DLMAP_LAYOUT_ROW_MAJOR;
      import_copy = !RowMajor(shape, exported_strides);
      break;
    case Variant::kImportCopy:
      ir.copy = DLMAP_COPY_ALWAYS;
      import_copy = true;
      break;
  }
  dlmap_imported out;
  const int32_t imported = versioned ? dlmap_import_versioned(ex.versioned, &ir, &out, &err)
                                     : dlmap_import_legacy(ex.legacy, &ir, &out, &err);
  ASSERT_EQ(DLMAP_OK, imported) << err.message;
  EXPECT_EQ(import_copy, out.copied);
  EXPECT_FALSE(out.read_only);
  EXPECT_FALSE(out.subbyte_padded);
  EXPECT_EQ(0, dlmap_version_compare(versioned ? kCurrent : V(0, 0), out.version));
  EXPECT_EQ(ndim, out.tensor.ndim);
  EXPECT_EQ(w.code, out.tensor.dtype.code);
  EXPECT_EQ(w.bits, out.tensor.dtype.bits);
  EXPECT_EQ(w.lanes, out.tensor.dtype.lanes);
  EXPECT_EQ(DLMAP_DEVICE_CPU, DeviceType(out.tensor.device));
  EXPECT_EQ(0, out.tensor.device.device_id);
  EXPECT_EQ(shape, Dims(out.tensor.shape, ndim));
  if (!import_copy) {
    // Zero-copy all the way: the same data, shape and strides the export handed out.
    EXPECT_EQ(exported_data, out.tensor.data);
    EXPECT_EQ(exported_offset, out.tensor.byte_offset);
    EXPECT_EQ(exported_shape, out.tensor.shape);
    EXPECT_EQ(exported_strides_ptr, out.tensor.strides);
    if (!export_copy) {
      EXPECT_EQ(src.data, out.tensor.data) << "the framework's own memory";
    }
    EXPECT_EQ(0, src.owner.releases) << "the view holds the array";
  } else {
    EXPECT_NE(exported_data, out.tensor.data);
    EXPECT_EQ(0u, out.tensor.byte_offset);
    EXPECT_EQ(compact, Dims(out.tensor.strides, ndim));
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(out.tensor.data) % DLMAP_DATA_ALIGNMENT);
    EXPECT_EQ(1, src.owner.releases) << "a copy releases the export (and the array) at import";
    ASSERT_NE(nullptr, out.tensor.data) << "a copy has its own block, even with no elements";
    if (!src.reference.empty()) {
      EXPECT_EQ(0, memcmp(src.reference.data(), out.tensor.data, src.reference.size()))
          << "the copy holds the elements compact row-major";
    }
  }
  EXPECT_EQ(src.reference, Gather(out.tensor)) << "bytes identical";

  dlmap_imported_release(&out);
  EXPECT_EQ(1, src.owner.releases) << "the array is released exactly once";
}

// ---- the sweep -------------------------------------------------------------------------------------------

struct Param {
  Width width;
  bool versioned;
};

std::vector<Param> Params() {
  std::vector<Param> params;
  for (bool versioned : {true, false}) {
    for (const Width &w : SpecWidths()) params.push_back({w, versioned});
    for (const Width &w : kVectors) params.push_back({w, versioned});
  }
  return params;
}

void PrintTo(const Param &p, std::ostream *os) { *os << p.width.name << (p.versioned ? " (current)" : " (legacy)"); }

std::string ParamName(const ::testing::TestParamInfo<Param> &info) {
  std::string name = std::string(info.param.width.name) + (info.param.versioned ? "_versioned" : "_legacy");
  for (char &c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';  // gtest names: [A-Za-z0-9_]
  return name;
}

class RoundTripSweep : public ::testing::TestWithParam<Param> {};

TEST_P(RoundTripSweep, EveryNdimShapeLayoutAndVariant) {
  const Width &w = GetParam().width;
  const bool versioned = GetParam().versioned;
  unsigned seed = 0;
  int trips = 0;
  for (int ndim = 0; ndim <= 8; ndim++) {
    for (Shape shape_kind : {Shape::kRegular, Shape::kSizeZero, Shape::kOnes}) {
      if (ndim == 0 && shape_kind != Shape::kRegular) continue;
      const std::vector<int64_t> shape = MakeShape(ndim, shape_kind);
      for (Layout layout : {Layout::kNullStrides, Layout::kCompact, Layout::kReversed, Layout::kRotated}) {
        // Sub-byte data is packed along the compact row-major order only.
        if (Subbyte(w) && (layout == Layout::kReversed || layout == Layout::kRotated)) continue;
        for (Variant variant : kVariants) {
          SCOPED_TRACE(::testing::Message() << "ndim " << ndim << ", " << ShapeName(shape_kind) << ", "
                                            << LayoutName(layout) << ", " << VariantName(variant));
          RoundTrip(w, versioned, shape, layout, variant, 0, seed++);
          trips++;
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  // And byte_offset, kept by a view and honoured by a copy (byte-sized elements).
  if (!Subbyte(w)) {
    for (Layout layout : {Layout::kNullStrides, Layout::kReversed}) {
      for (Variant variant : kVariants) {
        SCOPED_TRACE(::testing::Message() << "byte_offset of 3 elements, " << LayoutName(layout) << ", "
                                          << VariantName(variant));
        RoundTrip(w, versioned, {3, 2, 4}, layout, variant, 3, seed++);
        trips++;
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(trips, 100);
}

INSTANTIATE_TEST_SUITE_P(Widths, RoundTripSweep, ::testing::ValuesIn(Params()), ParamName);

// ---- round trips with flags and devices ------------------------------------------------------------------

TEST(RoundTrip, ReadOnlyNeedsTheVersionedStructAndSurvivesIt) {
  const Width f32 = kNamed[14];
  ASSERT_STREQ("float32", f32.name);
  for (int mode = 0; mode < 3; mode++) {  // 0: read-only view, 1: writable copy=None, 2: writable copy=False
    Source src;
    MakeSource(f32, {2, 3}, Layout::kReversed, 0, 7, &src);
    dlmap_array array = dlmap_array_default();
    array.data = src.data;
    array.device_type = DLMAP_DEVICE_CPU;
    array.dtype = Dtype(f32);
    array.ndim = 2;
    array.shape = src.shape_array;
    array.strides = src.strides_array;
    array.read_only = true;
    array.owner = &src.owner;
    array.release = ReleaseOwner;
    dlmap_export_request er = dlmap_export_request_default();
    dlmap_exported ex;
    dlmap_error err;
    // A legacy consumer cannot be told: the export refuses.
    EXPECT_EQ(DLMAP_ERR_READ_ONLY_NEEDS_VERSIONED, dlmap_export(&array, &er, &ex, &err));
    er.has_max_version = true;
    er.max_version = V(1, 0);
    ASSERT_EQ(DLMAP_OK, dlmap_export(&array, &er, &ex, &err)) << err.message;
    EXPECT_EQ(DLMAP_FLAG_READ_ONLY, ex.versioned->flags);
    EXPECT_EQ(0u, ex.versioned->version.minor);
    dlmap_import_request ir = dlmap_import_request_default();
    ir.writable = mode != 0;
    ir.copy = mode == 2 ? DLMAP_COPY_NEVER : DLMAP_COPY_IF_NEEDED;
    dlmap_imported out;
    const int32_t status = dlmap_import_versioned(ex.versioned, &ir, &out, &err);
    if (mode == 2) {
      EXPECT_EQ(DLMAP_ERR_READ_ONLY_NOT_WRITABLE, status);
      EXPECT_EQ(1, src.owner.releases) << "the error path released the export and the array";
      continue;
    }
    ASSERT_EQ(DLMAP_OK, status) << err.message;
    EXPECT_EQ(0, dlmap_version_compare(V(1, 0), out.version));
    if (mode == 0) {
      EXPECT_TRUE(out.read_only);
      EXPECT_FALSE(out.copied);
      EXPECT_EQ(src.data, out.tensor.data);
    } else {
      EXPECT_FALSE(out.read_only);
      EXPECT_TRUE(out.copied);
      EXPECT_EQ(0, memcmp(src.reference.data(), out.tensor.data, src.reference.size()));
    }
    EXPECT_EQ(src.reference, Gather(out.tensor));
    dlmap_imported_release(&out);
    EXPECT_EQ(1, src.owner.releases);
  }
}

TEST(RoundTrip, PaddedSubbyteDataSaysSoOnBothSides) {
  const Width int4 = kNamed[1];
  ASSERT_STREQ("int4", int4.name);
  for (bool copy : {false, true}) {
    // Padded: one byte per element, so the buffer holds 6 bytes for a {2, 3} int4 array.
    const int64_t shape[] = {2, 3};
    unsigned char *data = static_cast<unsigned char *>(malloc(6));
    for (int i = 0; i < 6; i++) data[i] = static_cast<unsigned char>(i + 1);
    Owner owner;
    dlmap_array array = dlmap_array_default();
    array.data = data;
    array.device_type = DLMAP_DEVICE_CPU;
    array.dtype = Dtype(int4);
    array.ndim = 2;
    array.shape = shape;
    array.subbyte_padded = true;
    array.owner = &owner;
    array.release = ReleaseOwner;
    dlmap_export_request er = dlmap_export_request_default();
    er.has_max_version = true;
    er.max_version = V(1, 1);
    dlmap_exported ex;
    dlmap_error err;
    ASSERT_EQ(DLMAP_OK, dlmap_export(&array, &er, &ex, &err)) << err.message;
    EXPECT_EQ(DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, ex.versioned->flags);
    dlmap_import_request ir = dlmap_import_request_default();
    ir.copy = copy ? DLMAP_COPY_ALWAYS : DLMAP_COPY_IF_NEEDED;
    dlmap_imported out;
    ASSERT_EQ(DLMAP_OK, dlmap_import_versioned(ex.versioned, &ir, &out, &err)) << err.message;
    EXPECT_TRUE(out.subbyte_padded);
    EXPECT_EQ(copy, out.copied);
    if (!copy) {
      EXPECT_EQ(static_cast<void *>(data), out.tensor.data);
    }
    EXPECT_EQ(0, memcmp(data, out.tensor.data, 6)) << "all six padded bytes";
    dlmap_imported_release(&out);
    EXPECT_EQ(1, owner.releases);
    free(data);
  }
}

TEST(RoundTrip, PinnedMemoryIsReadOnTheHostWithoutACopy) {
  for (int32_t device : {DLMAP_DEVICE_CUDAHOST, DLMAP_DEVICE_ROCMHOST, DLMAP_DEVICE_CUDAMANAGED}) {
    for (bool versioned : {true, false}) {
      Source src;
      MakeSource(kNamed[14], {4, 2}, Layout::kRotated, 0, 3, &src);
      dlmap_array array = dlmap_array_default();
      array.data = src.data;
      array.device_type = device;
      array.device_id = 0;
      array.dtype = Dtype(kNamed[14]);
      array.ndim = 2;
      array.shape = src.shape_array;
      array.strides = src.strides_array;
      array.owner = &src.owner;
      array.release = ReleaseOwner;
      dlmap_export_request er = dlmap_export_request_default();
      er.has_max_version = versioned;
      er.max_version = k13;
      if (device == DLMAP_DEVICE_CUDAMANAGED) {  // a CUDA stream convention: -1 asks for no synchronisation
        er.has_stream = true;
        er.stream = -1;
      }
      dlmap_exported ex;
      dlmap_error err;
      ASSERT_EQ(DLMAP_OK, dlmap_export(&array, &er, &ex, &err)) << err.message;
      const DLTensor &et = versioned ? ex.versioned->dl_tensor : ex.legacy->dl_tensor;
      EXPECT_EQ(device, DeviceType(et.device));
      dlmap_import_request ir = dlmap_import_request_default();
      ir.has_device = true;
      ir.device_type = DLMAP_DEVICE_CPU;
      ir.copy = DLMAP_COPY_NEVER;
      dlmap_imported out;
      const int32_t status = versioned ? dlmap_import_versioned(ex.versioned, &ir, &out, &err)
                                       : dlmap_import_legacy(ex.legacy, &ir, &out, &err);
      ASSERT_EQ(DLMAP_OK, status) << err.message;
      EXPECT_EQ(src.data, out.tensor.data);
      EXPECT_EQ(DLMAP_DEVICE_CPU, DeviceType(out.tensor.device));
      EXPECT_EQ(0, out.tensor.device.device_id);
      EXPECT_EQ(src.reference, Gather(out.tensor));
      dlmap_imported_release(&out);
      EXPECT_EQ(1, src.owner.releases);
    }
  }
}

TEST(RoundTrip, SizeZeroWithNullData) {
  for (bool versioned : {true, false}) {
    const int64_t shape[] = {3, 0, 2};
    Owner owner;
    dlmap_array array = dlmap_array_default();
    array.device_type = DLMAP_DEVICE_CPU;
    array.dtype = Dtype(kNamed[15]);
    array.ndim = 3;
    array.shape = shape;
    array.owner = &owner;
    array.release = ReleaseOwner;
    dlmap_export_request er = dlmap_export_request_default();
    er.has_max_version = versioned;
    er.max_version = k13;
    dlmap_exported ex;
    dlmap_error err;
    ASSERT_EQ(DLMAP_OK, dlmap_export(&array, &er, &ex, &err)) << err.message;
    for (dlmap_copy_mode copy : {DLMAP_COPY_NEVER, DLMAP_COPY_ALWAYS}) {
      if (copy == DLMAP_COPY_ALWAYS) {
        ASSERT_EQ(DLMAP_OK, dlmap_export(&array, &er, &ex, &err)) << err.message;
      }
      dlmap_import_request ir = dlmap_import_request_default();
      ir.copy = copy;
      ir.layout = DLMAP_LAYOUT_ROW_MAJOR;
      ir.alignment = 256;
      dlmap_imported out;
      const int32_t status = versioned ? dlmap_import_versioned(ex.versioned, &ir, &out, &err)
                                       : dlmap_import_legacy(ex.legacy, &ir, &out, &err);
      ASSERT_EQ(DLMAP_OK, status) << err.message;
      EXPECT_EQ(copy == DLMAP_COPY_ALWAYS, out.copied);
      if (copy == DLMAP_COPY_NEVER) {
        EXPECT_EQ(nullptr, out.tensor.data);
      }
      EXPECT_EQ(std::vector<int64_t>({3, 0, 2}), Dims(out.tensor.shape, 3));
      EXPECT_EQ(std::vector<int64_t>({2, 2, 1}), Dims(out.tensor.strides, 3));
      dlmap_imported_release(&out);
    }
    EXPECT_EQ(2, owner.releases);
  }
}

}  // namespace
