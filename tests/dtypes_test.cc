// Tests of src/dtypes.c: DLPack data type codes, valid widths, validation errors, names and formatting.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"
#include "gtest/gtest.h"

namespace {

DLDataType D(uint8_t code, uint8_t bits, uint16_t lanes) {
  DLDataType d;
  d.code = code;
  d.bits = bits;
  d.lanes = lanes;
  return d;
}

struct Code {
  uint8_t value;
  const char *name;
  uint32_t major, minor;
  bool vector_lanes;
  const char *valid_bits;
};

// The codes DLPack defined by 1.3 and its main branch, by hand (reference §2.4): what must never change. The spec may
// add codes and widths; the whole list is spec_facts'.
const std::vector<Code> &Codes() {
  static const std::vector<Code> codes = {
      {0, "kDLInt", 0, 1, true, "2, 4, 8, 16, 32, 64"},
      {1, "kDLUInt", 0, 1, true, "1, 2, 4, 8, 16, 32, 64"},
      {2, "kDLFloat", 0, 1, true, "16, 32, 64"},
      {3, "kDLOpaqueHandle", 0, 4, false, "none"},
      {4, "kDLBfloat", 0, 3, true, "16"},
      {5, "kDLComplex", 0, 4, true, "32, 64, 128"},
      {6, "kDLBool", 0, 8, true, "8"},
      {7, "kDLFloat8_e3m4", 1, 1, true, "8"},
      {8, "kDLFloat8_e4m3", 1, 1, true, "8"},
      {9, "kDLFloat8_e4m3b11fnuz", 1, 1, true, "8"},
      {10, "kDLFloat8_e4m3fn", 1, 1, true, "8"},
      {11, "kDLFloat8_e4m3fnuz", 1, 1, true, "8"},
      {12, "kDLFloat8_e5m2", 1, 1, true, "8"},
      {13, "kDLFloat8_e5m2fnuz", 1, 1, true, "8"},
      {14, "kDLFloat8_e8m0fnu", 1, 1, true, "8"},
      {15, "kDLFloat6_e2m3fn", 1, 1, true, "6"},
      {16, "kDLFloat6_e3m2fn", 1, 1, true, "6"},
      {17, "kDLFloat4_e2m1fn", 1, 1, true, "4"},
      {18, "kDLBcomplex", 1, 3, true, "32"},
  };
  return codes;
}

struct Width {
  uint8_t code, bits;
  const char *name;
  uint32_t major, minor;  // when the width became expressible
  std::vector<std::string> aliases;
};

// The widths of the codes above, by hand.
const std::vector<Width> &HandWidths() {
  static const std::vector<Width> widths = {
      {0, 2, "int2", 1, 1, {}},
      {0, 4, "int4", 1, 1, {}},
      {0, 8, "int8", 0, 1, {"i8"}},
      {0, 16, "int16", 0, 1, {"i16"}},
      {0, 32, "int32", 0, 1, {"i32"}},
      {0, 64, "int64", 0, 1, {"i64"}},
      {1, 1, "uint1", 1, 1, {}},
      {1, 2, "uint2", 1, 1, {}},
      {1, 4, "uint4", 1, 1, {}},
      {1, 8, "uint8", 0, 1, {"u8", "byte"}},
      {1, 16, "uint16", 0, 1, {"u16"}},
      {1, 32, "uint32", 0, 1, {"u32"}},
      {1, 64, "uint64", 0, 1, {"u64"}},
      {2, 16, "float16", 0, 1, {"f16", "half"}},
      {2, 32, "float32", 0, 1, {"f32"}},
      {2, 64, "float64", 0, 1, {"f64", "double"}},
      {4, 16, "bfloat16", 0, 3, {"bf16"}},
      {5, 32, "complex32", 0, 4, {"chalf"}},
      {5, 64, "complex64", 0, 4, {"c64", "cfloat"}},
      {5, 128, "complex128", 0, 4, {"c128", "cdouble"}},
      {6, 8, "bool", 0, 8, {"bool8", "boolean"}},
      {7, 8, "float8_e3m4", 1, 1, {}},
      {8, 8, "float8_e4m3", 1, 1, {}},
      {9, 8, "float8_e4m3b11fnuz", 1, 1, {}},
      {10, 8, "float8_e4m3fn", 1, 1, {}},
      {11, 8, "float8_e4m3fnuz", 1, 1, {}},
      {12, 8, "float8_e5m2", 1, 1, {}},
      {13, 8, "float8_e5m2fnuz", 1, 1, {}},
      {14, 8, "float8_e8m0fnu", 1, 1, {}},
      {15, 6, "float6_e2m3fn", 1, 1, {}},
      {16, 6, "float6_e3m2fn", 1, 1, {}},
      {17, 4, "float4_e2m1fn", 1, 1, {"fp4"}},
      {18, 32, "bcomplex32", 1, 3, {"complex_bf16"}},
  };
  return widths;
}

// A width as the spec's YAML lists it (tests/spec_facts): name NULL for an unnamed width.
struct FactWidth {
  uint8_t code, bits;
  const char *name;
  std::vector<std::string> aliases;
  spec_facts_version introduced;
};

const std::vector<FactWidth> &Widths() {
  static const std::vector<FactWidth> widths = [] {
    std::vector<FactWidth> out;
    for (const spec_facts_dtype_width &f : spec_facts_dtype_widths) {
      FactWidth w = {static_cast<uint8_t>(f.code), static_cast<uint8_t>(f.bits), f.names[0], {}, f.introduced};
      for (const char *const *n = f.names; *n != nullptr; n++) {
        if (n != f.names) w.aliases.push_back(*n);
      }
      out.push_back(w);
    }
    return out;
  }();
  return widths;
}

const FactWidth *FindWidth(uint8_t code, uint8_t bits) {
  for (const FactWidth &w : Widths()) {
    if (w.code == code && w.bits == bits) return &w;
  }
  return nullptr;
}

bool CodeDefined(int code) {
  for (const spec_facts_dtype_code &f : spec_facts_dtype_codes) {
    if (f.code == code) return true;
  }
  return false;
}

// The smallest code the spec does not define: what the next DLPack code would be.
uint8_t FirstUnknownCode() {
  int code = 0;
  while (CodeDefined(code)) code++;
  return static_cast<uint8_t>(code);
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string FormatDtype(DLDataType d, size_t cap = 64) {
  std::vector<char> buf(cap + 1, '\x7f');
  const size_t n = dlmap_dtype_format(d, buf.data(), cap);
  const std::string text(buf.data());
  EXPECT_EQ(n, text.size());
  return text;
}

std::string ValidBits(uint8_t code, size_t cap = 128) {
  std::vector<char> buf(cap + 1, '\x7f');
  const size_t n = dlmap_dtype_format_valid_bits(code, buf.data(), cap);
  const std::string text(buf.data());
  EXPECT_EQ(n, text.size());
  return text;
}

// Validates d; returns the status and the message (empty on success).
int32_t Validate(DLDataType d, std::string *message) {
  dlmap_error err;
  memset(&err, 0, sizeof err);
  const int32_t status = dlmap_dtype_validate(d, &err);
  EXPECT_EQ(dlmap_dtype_validate(d, nullptr), status) << "same answer without an error object";
  if (status != DLMAP_OK) {
    EXPECT_EQ(err.code, status);
    EXPECT_EQ(err.kind, DLMAP_KIND_BUFFER_ERROR);
  }
  *message = err.message;
  return status;
}

// ---- codes -------------------------------------------------------------------------------------------------

TEST(DtypeCodes, HandWrittenTable) {
  size_t index = 0;
  for (const Code &c : Codes()) {
    SCOPED_TRACE(c.name);
    const dlmap_dtype_code_info *info = dlmap_dtype_code_find(c.value);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->code, c.value);
    EXPECT_STREQ(info->name, c.name);
    EXPECT_EQ(info->introduced.major, c.major);
    EXPECT_EQ(info->introduced.minor, c.minor);
    EXPECT_EQ(info->vector_lanes, c.vector_lanes);
    ASSERT_NE(info->doc, nullptr);
    EXPECT_STRNE(info->doc, "");
    EXPECT_EQ(dlmap_dtype_code_at(index++), info) << "spec order";
    EXPECT_EQ(ValidBits(c.value), c.valid_bits);
    EXPECT_EQ(info->upstream_main, c.value == 18) << "kDLBcomplex is on DLPack main after the v1.3 tag";
  }
  EXPECT_EQ(dlmap_dtype_code_at(DLMAP_DTYPE_CODE_COUNT), nullptr);
  EXPECT_EQ(dlmap_dtype_code_at(SIZE_MAX), nullptr);
}

TEST(DtypeCodes, HandWrittenWidths) {
  for (const Width &w : HandWidths()) {
    SCOPED_TRACE(w.name);
    dlmap_version introduced = {77, 77};
    ASSERT_TRUE(dlmap_dtype_width_valid(w.code, w.bits, &introduced));
    EXPECT_EQ(introduced.major, w.major);
    EXPECT_EQ(introduced.minor, w.minor);
    EXPECT_STREQ(dlmap_dtype_width_name(w.code, w.bits), w.name);
    for (const std::string &alias : w.aliases) {
      DLDataType d = D(99, 99, 99);
      EXPECT_TRUE(dlmap_dtype_parse(alias.data(), alias.size(), &d)) << alias;
      EXPECT_EQ(d.code, w.code) << alias;
      EXPECT_EQ(d.bits, w.bits) << alias;
    }
  }
}

TEST(DtypeCodes, EverySpecCodeInSpecOrder) {
  ASSERT_EQ(DLMAP_DTYPE_CODE_COUNT, SPEC_FACTS_DTYPE_CODE_COUNT);
  for (size_t i = 0; i < SPEC_FACTS_DTYPE_CODE_COUNT; i++) {
    const spec_facts_dtype_code &f = spec_facts_dtype_codes[i];
    SCOPED_TRACE(f.name);
    const dlmap_dtype_code_info *info = dlmap_dtype_code_at(i);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(dlmap_dtype_code_find(static_cast<uint8_t>(f.code)), info);
    EXPECT_EQ(info->code, f.code);
    EXPECT_STREQ(info->name, f.name);
    EXPECT_EQ(info->introduced.major, f.introduced.major);
    EXPECT_EQ(info->introduced.minor, f.introduced.minor);
    EXPECT_EQ(info->vector_lanes, f.vector_lanes != 0);
    EXPECT_EQ(info->upstream_main, f.released == 0);
  }
}

TEST(DtypeCodes, UnknownCodes) {
  int unknown = 0;
  for (int code = 0; code <= 255; code++) {
    if (CodeDefined(code)) continue;
    unknown++;
    EXPECT_EQ(dlmap_dtype_code_find(static_cast<uint8_t>(code)), nullptr) << code;
    EXPECT_EQ(ValidBits(static_cast<uint8_t>(code)), "none") << code;
  }
  EXPECT_EQ(unknown, 256 - SPEC_FACTS_DTYPE_CODE_COUNT);
}

TEST(DtypeCodes, EnumeratorsMatchTheDlpackHeader) {
  EXPECT_EQ(DLMAP_DTYPE_INT, static_cast<int>(kDLInt));
  EXPECT_EQ(DLMAP_DTYPE_UINT, static_cast<int>(kDLUInt));
  EXPECT_EQ(DLMAP_DTYPE_FLOAT, static_cast<int>(kDLFloat));
  EXPECT_EQ(DLMAP_DTYPE_OPAQUEHANDLE, static_cast<int>(kDLOpaqueHandle));
  EXPECT_EQ(DLMAP_DTYPE_BFLOAT, static_cast<int>(kDLBfloat));
  EXPECT_EQ(DLMAP_DTYPE_COMPLEX, static_cast<int>(kDLComplex));
  EXPECT_EQ(DLMAP_DTYPE_BOOL, 6);
  EXPECT_EQ(DLMAP_DTYPE_FLOAT8_E4M3FN, 10);
  EXPECT_EQ(DLMAP_DTYPE_FLOAT4_E2M1FN, 17);
  EXPECT_EQ(DLMAP_DTYPE_BCOMPLEX, 18);
}

TEST(DtypeCodes, ValidBitsTruncates) {
  EXPECT_EQ(ValidBits(1, 8), "1, 2...");
  EXPECT_EQ(ValidBits(1, 4), "...");
  EXPECT_EQ(ValidBits(1, 2), "1");
  EXPECT_EQ(ValidBits(1, 1), "");
  EXPECT_EQ(dlmap_dtype_format_valid_bits(1, nullptr, 0), 0u);
  EXPECT_EQ(ValidBits(0, 20), "2, 4, 8, 16, 32, 64");
  EXPECT_EQ(ValidBits(0, 19), "2, 4, 8, 16, 32...");
}

// ---- validation ----------------------------------------------------------------------------------------------

TEST(DtypeValidate, UnknownCode) {
  std::string message;
  EXPECT_EQ(Validate(D(200, 32, 1), &message), DLMAP_ERR_DTYPE_CODE_UNKNOWN);
  EXPECT_EQ(message, "Unknown or invalid DLPack type code 200");
  const uint8_t next = FirstUnknownCode();
  EXPECT_EQ(Validate(D(next, 8, 1), &message), DLMAP_ERR_DTYPE_CODE_UNKNOWN);
  EXPECT_EQ(message, "Unknown or invalid DLPack type code " + std::to_string(next));
  EXPECT_EQ(Validate(D(255, 0, 0), &message), DLMAP_ERR_DTYPE_CODE_UNKNOWN) << "code is checked first";
  EXPECT_EQ(message, "Unknown or invalid DLPack type code 255");

  dlmap_error err;
  dlmap_dtype_validate(D(200, 32, 1), &err);
  EXPECT_STREQ(err.id, "dtype_code_unknown");
}

TEST(DtypeValidate, BadBits) {
  std::string message;
  EXPECT_EQ(Validate(D(0, 7, 1), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLInt width: 7 bits (valid: 2, 4, 8, 16, 32, 64)");
  EXPECT_EQ(Validate(D(2, 7, 1), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLFloat width: 7 bits (valid: 16, 32, 64)");
  EXPECT_EQ(Validate(D(2, 0, 1), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLFloat width: 0 bits (valid: 16, 32, 64)");
  EXPECT_EQ(Validate(D(6, 1, 1), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLBool width: 1 bits (valid: 8)");
  EXPECT_EQ(Validate(D(15, 8, 1), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLFloat6_e2m3fn width: 8 bits (valid: 6)");
  EXPECT_EQ(Validate(D(17, 8, 2), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLFloat4_e2m1fn width: 8 bits (valid: 4)");
  EXPECT_EQ(Validate(D(3, 64, 1), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLOpaqueHandle width: 64 bits (valid: none)");
  EXPECT_EQ(Validate(D(5, 255, 1), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLComplex width: 255 bits (valid: 32, 64, 128)");
  EXPECT_EQ(Validate(D(1, 0, 0), &message), DLMAP_ERR_DTYPE_BITS_INVALID) << "bits are checked before lanes";
}

TEST(DtypeValidate, Lanes) {
  std::string message;
  EXPECT_EQ(Validate(D(2, 32, 0), &message), DLMAP_ERR_DTYPE_LANES_INVALID);
  EXPECT_EQ(message,
            "Invalid DLPack lanes for kDLFloat: 0 (lanes must be at least 1, and exactly 1 for scalar-only codes)");
  EXPECT_EQ(Validate(D(6, 8, 0), &message), DLMAP_ERR_DTYPE_LANES_INVALID);
  EXPECT_EQ(message,
            "Invalid DLPack lanes for kDLBool: 0 (lanes must be at least 1, and exactly 1 for scalar-only codes)");
  dlmap_error err;
  dlmap_dtype_validate(D(2, 32, 0), &err);
  EXPECT_STREQ(err.id, "dtype_lanes_invalid");

  // Vector lanes on vector codes are fine, up to the field's maximum.
  EXPECT_EQ(Validate(D(2, 32, 4), &message), DLMAP_OK);
  EXPECT_EQ(Validate(D(2, 32, 65535), &message), DLMAP_OK);
  EXPECT_EQ(Validate(D(0, 8, 16), &message), DLMAP_OK);
}

TEST(DtypeValidate, ScalarOnlyCodeWithLanes) {
  // kDLOpaqueHandle is the default spec's only scalar-only code, and it has no valid width, so a vector of it
  // is rejected (by its width, which is checked before lanes) like every other use of it.
  std::string message;
  for (uint16_t lanes : {1, 2, 4}) {
    for (int bits = 0; bits <= 255; bits++) {
      EXPECT_NE(Validate(D(3, static_cast<uint8_t>(bits), lanes), &message), DLMAP_OK) << bits << "x" << lanes;
    }
  }
  EXPECT_EQ(Validate(D(3, 64, 2), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_FALSE(dlmap_dtype_code_find(3)->vector_lanes);
}

TEST(DtypeValidate, Float4LanesOneAndTwo) {
  // XLA exchanges float4_e2m1fn with lanes 1, PyTorch with lanes 2 (two per byte): both are valid.
  std::string message;
  EXPECT_EQ(Validate(D(17, 4, 1), &message), DLMAP_OK);
  EXPECT_EQ(message, "");
  EXPECT_EQ(Validate(D(17, 4, 2), &message), DLMAP_OK);
}

TEST(DtypeValidate, CommonTypes) {
  std::string message;
  for (DLDataType d : {D(2, 32, 1), D(2, 16, 1), D(4, 16, 1), D(6, 8, 1), D(5, 64, 1), D(0, 4, 1), D(1, 1, 1),
                       D(10, 8, 1), D(18, 32, 1), D(15, 6, 1)}) {
    EXPECT_EQ(Validate(d, &message), DLMAP_OK) << message;
  }
}

// ---- names and formatting ----------------------------------------------------------------------------------------

TEST(DtypeNames, WidthNames) {
  EXPECT_STREQ(dlmap_dtype_width_name(2, 32), "float32");
  EXPECT_STREQ(dlmap_dtype_width_name(4, 16), "bfloat16");
  EXPECT_STREQ(dlmap_dtype_width_name(10, 8), "float8_e4m3fn");
  EXPECT_STREQ(dlmap_dtype_width_name(6, 8), "bool");
  EXPECT_STREQ(dlmap_dtype_width_name(5, 64), "complex64");
  EXPECT_STREQ(dlmap_dtype_width_name(0, 4), "int4");
  EXPECT_STREQ(dlmap_dtype_width_name(1, 8), "uint8") << "the name, not an alias";
  EXPECT_STREQ(dlmap_dtype_width_name(17, 4), "float4_e2m1fn");
  EXPECT_EQ(dlmap_dtype_width_name(2, 7), nullptr);
  EXPECT_EQ(dlmap_dtype_width_name(2, 0), nullptr);
  EXPECT_EQ(dlmap_dtype_width_name(3, 64), nullptr);
  EXPECT_EQ(dlmap_dtype_width_name(200, 32), nullptr);
  EXPECT_EQ(dlmap_dtype_width_name(0, 0), nullptr);
}

TEST(DtypeNames, Format) {
  EXPECT_EQ(FormatDtype(D(2, 32, 1)), "float32");
  EXPECT_EQ(FormatDtype(D(2, 32, 4)), "float32x4");
  EXPECT_EQ(FormatDtype(D(2, 32, 65535)), "float32x65535");
  EXPECT_EQ(FormatDtype(D(2, 7, 1)), "(code 2, bits 7, lanes 1)");
  EXPECT_EQ(FormatDtype(D(2, 32, 0)), "(code 2, bits 32, lanes 0)");
  EXPECT_EQ(FormatDtype(D(200, 8, 1)), "(code 200, bits 8, lanes 1)");
  EXPECT_EQ(FormatDtype(D(255, 255, 65535)), "(code 255, bits 255, lanes 65535)");
  EXPECT_EQ(FormatDtype(D(3, 64, 1)), "(code 3, bits 64, lanes 1)");
  EXPECT_EQ(FormatDtype(D(4, 16, 1)), "bfloat16");
  EXPECT_EQ(FormatDtype(D(6, 8, 1)), "bool");
  EXPECT_EQ(FormatDtype(D(10, 8, 1)), "float8_e4m3fn");
  EXPECT_EQ(FormatDtype(D(5, 64, 1)), "complex64");
  EXPECT_EQ(FormatDtype(D(0, 4, 1)), "int4");
  EXPECT_EQ(FormatDtype(D(17, 4, 2)), "float4_e2m1fnx2");
}

TEST(DtypeNames, FormatTruncates) {
  EXPECT_EQ(FormatDtype(D(2, 32, 4), 10), "float32x4");
  EXPECT_EQ(FormatDtype(D(2, 32, 4), 9), "float...");
  EXPECT_EQ(FormatDtype(D(2, 7, 1), 12), "(code 2,...");
  EXPECT_EQ(FormatDtype(D(2, 7, 1), 3), "(c");
  EXPECT_EQ(dlmap_dtype_format(D(2, 32, 1), nullptr, 0), 0u);
  // Guard bytes around a small buffer stay untouched.
  char block[8 + 6 + 8];
  memset(block, 'G', sizeof block);
  dlmap_dtype_format(D(255, 255, 65535), block + 8, 6);
  for (int i = 0; i < 8; i++) {
    EXPECT_EQ(block[i], 'G');
    EXPECT_EQ(block[8 + 6 + i], 'G');
  }
  EXPECT_STREQ(block + 8, "(c...");
}

TEST(DtypeNames, Aliases) {
  struct Row {
    const char *name;
    uint8_t code, bits;
  };
  for (const Row &row : {Row{"bf16", 4, 16}, Row{"half", 2, 16}, Row{"double", 2, 64}, Row{"byte", 1, 8},
                         Row{"fp4", 17, 4}, Row{"cfloat", 5, 64}, Row{"boolean", 6, 8}, Row{"complex_bf16", 18, 32},
                         Row{"i8", 0, 8}, Row{"F32", 2, 32}, Row{"BFloat16", 4, 16}}) {
    SCOPED_TRACE(row.name);
    DLDataType d = D(99, 99, 99);
    ASSERT_TRUE(dlmap_dtype_parse(row.name, strlen(row.name), &d));
    EXPECT_EQ(d.code, row.code);
    EXPECT_EQ(d.bits, row.bits);
    EXPECT_EQ(d.lanes, 1);
  }
}

// ---- every code and width -------------------------------------------------------------------------------------------

TEST(DtypeWidths, EveryCodeAndWidth) {
  size_t valid = 0;
  for (int code = 0; code <= 255; code++) {
    for (int bits = 0; bits <= 255; bits++) {
      const uint8_t c = static_cast<uint8_t>(code), b = static_cast<uint8_t>(bits);
      const FactWidth *expected = FindWidth(c, b);
      dlmap_version introduced = {77, 77};
      const bool ok = dlmap_dtype_width_valid(c, b, &introduced);
      ASSERT_EQ(ok, expected != nullptr) << "code " << code << " bits " << bits;
      EXPECT_EQ(dlmap_dtype_width_valid(c, b, nullptr), ok);
      EXPECT_EQ(dlmap_dtype_validate(D(c, b, 1), nullptr) == DLMAP_OK, ok) << "code " << code << " bits " << bits;
      if (!ok) {
        EXPECT_EQ(introduced.major, 77u) << "out untouched";
        EXPECT_EQ(dlmap_dtype_width_name(c, b), nullptr);
        continue;
      }
      valid++;
      SCOPED_TRACE("code " + std::to_string(code) + " bits " + std::to_string(bits));
      EXPECT_EQ(introduced.major, expected->introduced.major);
      EXPECT_EQ(introduced.minor, expected->introduced.minor);
      const std::string shown =
          expected->name != nullptr ? expected->name : "(code " + std::to_string(code) + ", bits " + std::to_string(bits);
      if (expected->name != nullptr) {
        EXPECT_STREQ(dlmap_dtype_width_name(c, b), expected->name);
        EXPECT_EQ(FormatDtype(D(c, b, 1)), expected->name);
        EXPECT_EQ(FormatDtype(D(c, b, 3)), shown + "x3");
      } else {
        EXPECT_EQ(dlmap_dtype_width_name(c, b), nullptr);
        EXPECT_EQ(FormatDtype(D(c, b, 1)), shown + ", lanes 1)");
      }

      // The name and each alias look up (code, bits, lanes 1), case-insensitively.
      std::vector<std::string> names = expected->aliases;
      if (expected->name != nullptr) names.insert(names.begin(), expected->name);
      for (const std::string &name : names) {
        for (const std::string &variant : {name, Upper(name)}) {
          DLDataType d = D(99, 99, 99);
          ASSERT_TRUE(dlmap_dtype_parse(variant.data(), variant.size(), &d)) << variant;
          EXPECT_EQ(d.code, c) << variant;
          EXPECT_EQ(d.bits, b) << variant;
          EXPECT_EQ(d.lanes, 1) << variant;
        }
      }
      // A width is never older than its code, and is expressible from its version on.
      const dlmap_dtype_code_info *info = dlmap_dtype_code_find(c);
      ASSERT_NE(info, nullptr);
      EXPECT_GE(dlmap_version_compare(introduced, info->introduced), 0);
      EXPECT_TRUE(dlmap_version_is_known(introduced));
      EXPECT_TRUE(dlmap_dtype_in_version(D(c, b, 1), introduced));
    }
  }
  EXPECT_EQ(valid, Widths().size());
}

TEST(DtypeWidths, EveryTableCodeHasTheExpectedWidths) {
  for (size_t i = 0; dlmap_dtype_code_at(i) != nullptr; i++) {
    const dlmap_dtype_code_info *info = dlmap_dtype_code_at(i);
    SCOPED_TRACE(info->name);
    EXPECT_EQ(dlmap_dtype_code_find(info->code), info);
    std::string bits;
    for (const FactWidth &w : Widths()) {
      if (w.code != info->code) continue;
      if (!bits.empty()) bits += ", ";
      bits += std::to_string(w.bits);
    }
    EXPECT_EQ(ValidBits(info->code), bits.empty() ? "none" : bits);
  }
}

}  // namespace
