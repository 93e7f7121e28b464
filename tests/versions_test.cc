// Tests of src/versions.c: version comparison, the struct each DLPack version exchanges, and what a version can express.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
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

DLDataType D(uint8_t code, uint8_t bits, uint16_t lanes) {
  DLDataType d;
  d.code = code;
  d.bits = bits;
  d.lanes = lanes;
  return d;
}

const DLDataType kFloat32 = D(2, 32, 1);

// Runs dlmap_check_representable; returns the status and the message.
int32_t Check(int32_t device_type, DLDataType dtype, uint64_t flags, dlmap_version v, std::string *message) {
  dlmap_error err;
  memset(&err, 0, sizeof err);
  const int32_t status = dlmap_check_representable(device_type, dtype, flags, v, &err);
  EXPECT_EQ(dlmap_check_representable(device_type, dtype, flags, v, nullptr), status);
  if (status != DLMAP_OK) {
    EXPECT_EQ(err.code, status);
  } else {
    EXPECT_EQ(err.code, DLMAP_OK);
    EXPECT_STREQ(err.message, "");
  }
  *message = err.message;
  return status;
}

// DLPack's releases up to 1.3, oldest first, with the struct each exchanges: what must never change (the spec may
// list newer ones; the whole list is spec_facts').
struct Release {
  uint32_t major, minor;
  dlmap_struct_kind structure;
};
const std::vector<Release> &Releases() {
  static const std::vector<Release> releases = {
      {0, 1, DLMAP_STRUCT_NONE},      {0, 2, DLMAP_STRUCT_LEGACY},    {0, 3, DLMAP_STRUCT_LEGACY},
      {0, 4, DLMAP_STRUCT_LEGACY},    {0, 5, DLMAP_STRUCT_LEGACY},    {0, 6, DLMAP_STRUCT_LEGACY},
      {0, 7, DLMAP_STRUCT_LEGACY},    {0, 8, DLMAP_STRUCT_LEGACY},    {1, 0, DLMAP_STRUCT_VERSIONED},
      {1, 1, DLMAP_STRUCT_VERSIONED}, {1, 2, DLMAP_STRUCT_VERSIONED}, {1, 3, DLMAP_STRUCT_VERSIONED},
  };
  return releases;
}

// ---- comparison and the version list ------------------------------------------------------------------

TEST(Versions, Compare) {
  EXPECT_EQ(dlmap_version_compare(V(1, 3), V(1, 3)), 0);
  EXPECT_EQ(dlmap_version_compare(V(0, 0), V(0, 0)), 0);
  EXPECT_LT(dlmap_version_compare(V(0, 1), V(0, 2)), 0);
  EXPECT_GT(dlmap_version_compare(V(0, 2), V(0, 1)), 0);
  EXPECT_LT(dlmap_version_compare(V(0, 9), V(1, 0)), 0) << "major first";
  EXPECT_GT(dlmap_version_compare(V(1, 0), V(0, 99)), 0);
  EXPECT_GT(dlmap_version_compare(V(1, 10), V(1, 9)), 0) << "numeric, not textual";
  EXPECT_LT(dlmap_version_compare(V(1, UINT32_MAX), V(2, 0)), 0);
  EXPECT_GT(dlmap_version_compare(V(UINT32_MAX, 0), V(1, UINT32_MAX)), 0);
  EXPECT_LT(dlmap_version_compare(V(0, 0), V(UINT32_MAX, UINT32_MAX)), 0);
}

// The spec's current version (abi.current), read from the YAML.
dlmap_version Current() { return V(SPEC_FACTS_CURRENT_MAJOR, SPEC_FACTS_CURRENT_MINOR); }

// Device type values the spec does not define.
std::vector<int32_t> UnknownDeviceTypes() {
  int32_t largest = 0;
  for (const spec_facts_device_type &f : spec_facts_device_types) largest = f.value > largest ? f.value : largest;
  std::vector<int32_t> out;
  for (int32_t value : {0, 5, 6, largest + 1, -1, INT32_MIN, INT32_MAX}) {
    bool defined = false;
    for (const spec_facts_device_type &f : spec_facts_device_types) defined = defined || f.value == value;
    if (!defined) out.push_back(value);
  }
  return out;
}

// The flag bits the spec defines.
uint64_t KnownFlags() {
  uint64_t mask = 0;
  for (const spec_facts_flag &f : spec_facts_flags) mask |= uint64_t{1} << f.bit;
  return mask;
}

TEST(Versions, KnownVersions) {
  for (const Release &r : Releases()) {
    EXPECT_TRUE(dlmap_version_is_known(V(r.major, r.minor))) << r.major << "." << r.minor;
  }
  for (const spec_facts_version_entry &f : spec_facts_versions) {
    EXPECT_TRUE(dlmap_version_is_known(V(f.version.major, f.version.minor))) << f.text;
  }
  EXPECT_FALSE(dlmap_version_is_known(V(0, 0)));
  EXPECT_FALSE(dlmap_version_is_known(V(0, 9)));
  EXPECT_FALSE(dlmap_version_is_known(V(0, 10)));
  EXPECT_FALSE(dlmap_version_is_known(V(Current().major, Current().minor + 1))) << "the next minor";
  EXPECT_FALSE(dlmap_version_is_known(V(Current().major + 1, 0))) << "the next major";
  EXPECT_FALSE(dlmap_version_is_known(V(UINT32_MAX, UINT32_MAX)));
}

TEST(Versions, ListInOrder) {
  EXPECT_EQ(DLMAP_VERSION_COUNT, SPEC_FACTS_VERSION_COUNT);
  size_t i = 0;
  for (const spec_facts_version_entry &f : spec_facts_versions) {
    const dlmap_version_info *listed = dlmap_version_at(i);
    ASSERT_NE(listed, nullptr) << i;
    EXPECT_EQ(listed->version.major, f.version.major);
    EXPECT_EQ(listed->version.minor, f.version.minor);
    EXPECT_EQ(listed->structure, dlmap_version_struct(listed->version));
    ASSERT_NE(listed->note, nullptr);
    EXPECT_STRNE(listed->note, "");
    if (i > 0) {
      ASSERT_NE(dlmap_version_at(i - 1), nullptr);
      EXPECT_LT(dlmap_version_compare(dlmap_version_at(i - 1)->version, listed->version), 0) << "oldest first";
    }
    i++;
  }
  EXPECT_EQ(dlmap_version_at(i), nullptr);
  EXPECT_EQ(dlmap_version_at(SIZE_MAX), nullptr);
  ASSERT_NE(dlmap_version_at(4), nullptr);
  EXPECT_STREQ(dlmap_version_at(4)->note,
               "Renames only \xE2\x80\x94 kDLGPU becomes kDLCUDA, kDLCPUPinned becomes kDLCUDAHost; ABI unchanged. "
               "DLPACK_VERSION 050 (an octal literal, 40).");
}

TEST(Versions, StructKinds) {
  for (const Release &r : Releases()) {
    EXPECT_EQ(dlmap_version_struct(V(r.major, r.minor)), r.structure) << r.major << "." << r.minor;
  }
  EXPECT_EQ(dlmap_version_struct(V(0, 1)), DLMAP_STRUCT_NONE);
  EXPECT_EQ(dlmap_version_struct(V(0, 5)), DLMAP_STRUCT_LEGACY);
  EXPECT_EQ(dlmap_version_struct(V(1, 0)), DLMAP_STRUCT_VERSIONED);
  // A newer minor of a major dlmap reads: minor bumps only add enumeration values.
  EXPECT_EQ(dlmap_version_struct(V(1, 4)), DLMAP_STRUCT_VERSIONED);
  EXPECT_EQ(dlmap_version_struct(V(1, 7)), DLMAP_STRUCT_VERSIONED);
  EXPECT_EQ(dlmap_version_struct(V(1, UINT32_MAX)), DLMAP_STRUCT_VERSIONED);
  // A new major, and versions that never existed, are nothing dlmap can read.
  EXPECT_EQ(dlmap_version_struct(V(2, 0)), DLMAP_STRUCT_NONE);
  EXPECT_EQ(dlmap_version_struct(V(3, 1)), DLMAP_STRUCT_NONE);
  EXPECT_EQ(dlmap_version_struct(V(UINT32_MAX, 0)), DLMAP_STRUCT_NONE);
  EXPECT_EQ(dlmap_version_struct(V(0, 0)), DLMAP_STRUCT_NONE);
  EXPECT_EQ(dlmap_version_struct(V(0, 9)), DLMAP_STRUCT_NONE);
}

TEST(Versions, Current) {
  const dlmap_version current = dlmap_version_current();
  EXPECT_EQ(current.major, SPEC_FACTS_CURRENT_MAJOR);
  EXPECT_EQ(current.minor, SPEC_FACTS_CURRENT_MINOR);
  const spec_facts_version newest = spec_facts_versions[SPEC_FACTS_VERSION_COUNT - 1].version;
  EXPECT_EQ(dlmap_version_compare(current, V(newest.major, newest.minor)), 0) << "current is the newest listed";
  EXPECT_TRUE(dlmap_version_is_known(current));
  EXPECT_EQ(dlmap_version_struct(current), DLMAP_STRUCT_VERSIONED);
}

TEST(Versions, EverySpecVersionsStruct) {
  for (const spec_facts_version_entry &f : spec_facts_versions) {
    const std::string want = f.structure;
    const dlmap_struct_kind kind = want == "none" ? DLMAP_STRUCT_NONE
                                   : want == "legacy" ? DLMAP_STRUCT_LEGACY
                                                      : DLMAP_STRUCT_VERSIONED;
    EXPECT_EQ(dlmap_version_struct(V(f.version.major, f.version.minor)), kind) << f.text;
  }
}

// ---- what a version can express -----------------------------------------------------------------------------

TEST(InVersion, DeviceTypes) {
  EXPECT_FALSE(dlmap_device_type_in_version(14, V(0, 6)));  // kDLOneAPI arrived in 0.7
  EXPECT_TRUE(dlmap_device_type_in_version(14, V(0, 7)));
  EXPECT_TRUE(dlmap_device_type_in_version(14, V(1, 3)));
  EXPECT_TRUE(dlmap_device_type_in_version(2, V(0, 1)));    // kGPU
  EXPECT_FALSE(dlmap_device_type_in_version(11, V(0, 5)));  // kDLROCMHost 0.6
  EXPECT_TRUE(dlmap_device_type_in_version(11, V(0, 6)));
  EXPECT_FALSE(dlmap_device_type_in_version(17, V(0, 8)));  // kDLMAIA 1.0
  EXPECT_TRUE(dlmap_device_type_in_version(17, V(1, 0)));
  EXPECT_FALSE(dlmap_device_type_in_version(18, V(1, 1)));  // kDLTrn 1.2
  EXPECT_TRUE(dlmap_device_type_in_version(18, V(1, 2)));
  EXPECT_FALSE(dlmap_device_type_in_version(20, V(1, 2)));  // kDLTPUHost 1.3
  EXPECT_TRUE(dlmap_device_type_in_version(20, V(1, 3)));
  EXPECT_TRUE(dlmap_device_type_in_version(20, V(1, 7)));
  for (int32_t unknown : UnknownDeviceTypes()) {
    EXPECT_FALSE(dlmap_device_type_in_version(unknown, Current())) << unknown;
    EXPECT_FALSE(dlmap_device_type_in_version(unknown, V(UINT32_MAX, UINT32_MAX))) << unknown;
  }
}

TEST(InVersion, Dtypes) {
  EXPECT_FALSE(dlmap_dtype_in_version(D(10, 8, 1), V(1, 0)));  // float8_e4m3fn 1.1
  EXPECT_TRUE(dlmap_dtype_in_version(D(10, 8, 1), V(1, 1)));
  EXPECT_FALSE(dlmap_dtype_in_version(D(6, 8, 1), V(0, 7)));  // bool 0.8
  EXPECT_TRUE(dlmap_dtype_in_version(D(6, 8, 1), V(0, 8)));
  EXPECT_FALSE(dlmap_dtype_in_version(D(0, 4, 1), V(1, 0)));  // int4: kDLInt is 0.1, the width 1.1
  EXPECT_TRUE(dlmap_dtype_in_version(D(0, 4, 1), V(1, 1)));
  EXPECT_TRUE(dlmap_dtype_in_version(D(0, 8, 1), V(0, 1)));
  EXPECT_FALSE(dlmap_dtype_in_version(D(1, 1, 1), V(0, 8)));  // uint1 1.1
  EXPECT_FALSE(dlmap_dtype_in_version(D(4, 16, 1), V(0, 2)));  // bfloat16 0.3
  EXPECT_TRUE(dlmap_dtype_in_version(D(4, 16, 1), V(0, 3)));
  EXPECT_FALSE(dlmap_dtype_in_version(D(5, 64, 1), V(0, 3)));  // complex64 0.4
  EXPECT_FALSE(dlmap_dtype_in_version(D(18, 32, 1), V(1, 2)));  // bcomplex32 1.3
  EXPECT_TRUE(dlmap_dtype_in_version(D(18, 32, 1), V(1, 3)));
  EXPECT_TRUE(dlmap_dtype_in_version(D(17, 4, 2), V(1, 1)));
  EXPECT_FALSE(dlmap_dtype_in_version(D(200, 8, 1), V(1, 3))) << "unknown code";
  EXPECT_FALSE(dlmap_dtype_in_version(D(2, 7, 1), V(1, 3))) << "invalid width";
  EXPECT_FALSE(dlmap_dtype_in_version(D(3, 64, 1), V(1, 3))) << "kDLOpaqueHandle carries no width";
}

TEST(InVersion, Flags) {
  EXPECT_EQ(DLMAP_FLAG_READ_ONLY, uint64_t{1});
  EXPECT_EQ(DLMAP_FLAG_IS_COPIED, uint64_t{2});
  EXPECT_EQ(DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, uint64_t{4});
  EXPECT_EQ(DLMAP_FLAGS_KNOWN, KnownFlags());
  EXPECT_EQ(DLPACK_FLAG_BITMASK_READ_ONLY, DLMAP_FLAG_READ_ONLY);
  EXPECT_EQ(DLPACK_FLAG_BITMASK_IS_COPIED, DLMAP_FLAG_IS_COPIED);
  EXPECT_EQ(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED);

  EXPECT_TRUE(dlmap_flags_in_version(0, V(0, 1)));
  EXPECT_TRUE(dlmap_flags_in_version(0, V(0, 8)));
  EXPECT_FALSE(dlmap_flags_in_version(DLMAP_FLAG_READ_ONLY, V(0, 8))) << "legacy tensors carry no flags";
  EXPECT_TRUE(dlmap_flags_in_version(DLMAP_FLAG_READ_ONLY, V(1, 0)));
  EXPECT_TRUE(dlmap_flags_in_version(DLMAP_FLAG_IS_COPIED, V(1, 0)));
  EXPECT_FALSE(dlmap_flags_in_version(DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, V(1, 0)));
  EXPECT_TRUE(dlmap_flags_in_version(DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, V(1, 1)));
  EXPECT_FALSE(dlmap_flags_in_version(7, V(1, 0)));
  EXPECT_TRUE(dlmap_flags_in_version(7, V(1, 1)));
  EXPECT_TRUE(dlmap_flags_in_version(7, V(1, 9)));
  int next_bit = 0;  // the lowest bit the spec does not define
  while (KnownFlags() >> next_bit & 1) next_bit++;
  for (dlmap_version v : {V(0, 1), V(1, 0), Current(), V(1, 99), V(UINT32_MAX, UINT32_MAX)}) {
    EXPECT_FALSE(dlmap_flags_in_version(uint64_t{1} << 40, v)) << "an unknown bit is never expressible";
    EXPECT_FALSE(dlmap_flags_in_version((uint64_t{1} << 40) | 1, v));
    EXPECT_FALSE(dlmap_flags_in_version(uint64_t{1} << next_bit, v));
    EXPECT_FALSE(dlmap_flags_in_version(uint64_t{1} << 63, v));
    EXPECT_FALSE(dlmap_flags_in_version(UINT64_MAX, v));
  }
}

TEST(InVersion, FlagsByHand) {
  for (const Release &r : Releases()) {
    const dlmap_version v = V(r.major, r.minor);
    EXPECT_EQ(dlmap_flags_in_version(DLMAP_FLAG_READ_ONLY | DLMAP_FLAG_IS_COPIED, v), r.major >= 1);  // 1.0
    EXPECT_EQ(dlmap_flags_in_version(DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, v),
              r.major > 1 || (r.major == 1 && r.minor >= 1));  // 1.1
  }
}

TEST(InVersion, EveryFlagBitInEveryVersion) {
  for (const spec_facts_version_entry &r : spec_facts_versions) {
    const dlmap_version v = V(r.version.major, r.version.minor);
    for (int bit = 0; bit < 64; bit++) {
      bool expected = false;  // a bit the spec defines, from its version on
      for (const spec_facts_flag &f : spec_facts_flags) {
        expected = expected || (f.bit == bit && dlmap_version_compare(V(f.introduced.major, f.introduced.minor), v) <= 0);
      }
      EXPECT_EQ(dlmap_flags_in_version(uint64_t{1} << bit, v), expected) << "bit " << bit << " in " << r.text;
    }
  }
}

TEST(InVersion, EveryDeviceTypeInEveryVersion) {
  for (const spec_facts_device_type &f : spec_facts_device_types) {
    for (const spec_facts_version_entry &r : spec_facts_versions) {
      const dlmap_version v = V(r.version.major, r.version.minor);
      EXPECT_EQ(dlmap_device_type_in_version(f.value, v),
                dlmap_version_compare(V(f.introduced.major, f.introduced.minor), v) <= 0)
          << f.name << " in " << r.text;
    }
  }
}

// ---- dlmap_check_representable ------------------------------------------------------------------------------------

TEST(CheckRepresentable, DeviceTypeTooNew) {
  std::string message;
  EXPECT_EQ(Check(14, kFloat32, 0, V(0, 6), &message), DLMAP_ERR_DEVICE_TYPE_NOT_IN_VERSION);
  EXPECT_EQ(message, "Device type kDLOneAPI (14) cannot be expressed in DLPack 0.6; it was introduced in 0.7.");
  EXPECT_EQ(Check(20, kFloat32, 0, V(1, 2), &message), DLMAP_ERR_DEVICE_TYPE_NOT_IN_VERSION);
  EXPECT_EQ(message, "Device type kDLTPUHost (20) cannot be expressed in DLPack 1.2; it was introduced in 1.3.");
  dlmap_error err;
  dlmap_check_representable(14, kFloat32, 0, V(0, 6), &err);
  EXPECT_STREQ(err.id, "device_type_not_in_version");
  EXPECT_EQ(err.kind, DLMAP_KIND_BUFFER_ERROR);
}

TEST(CheckRepresentable, DtypeTooNew) {
  std::string message;
  EXPECT_EQ(Check(1, D(10, 8, 1), 0, V(1, 0), &message), DLMAP_ERR_DTYPE_NOT_IN_VERSION);
  EXPECT_EQ(message, "Data type float8_e4m3fn cannot be expressed in DLPack 1.0; it was introduced in 1.1.");
  EXPECT_EQ(Check(1, D(0, 4, 1), 0, V(1, 0), &message), DLMAP_ERR_DTYPE_NOT_IN_VERSION);
  EXPECT_EQ(message, "Data type int4 cannot be expressed in DLPack 1.0; it was introduced in 1.1.")
      << "the width's version, not kDLInt's";
  EXPECT_EQ(Check(1, D(6, 8, 4), 0, V(0, 7), &message), DLMAP_ERR_DTYPE_NOT_IN_VERSION);
  EXPECT_EQ(message, "Data type boolx4 cannot be expressed in DLPack 0.7; it was introduced in 0.8.");
  EXPECT_EQ(Check(2, D(4, 16, 1), 0, V(0, 2), &message), DLMAP_ERR_DTYPE_NOT_IN_VERSION);
  EXPECT_EQ(message, "Data type bfloat16 cannot be expressed in DLPack 0.2; it was introduced in 0.3.");
  EXPECT_EQ(Check(1, D(18, 32, 1), 0, V(1, 2), &message), DLMAP_ERR_DTYPE_NOT_IN_VERSION);
  EXPECT_EQ(message, "Data type bcomplex32 cannot be expressed in DLPack 1.2; it was introduced in 1.3.");
}

TEST(CheckRepresentable, FlagTooNew) {
  std::string message;
  EXPECT_EQ(Check(1, kFloat32, DLMAP_FLAG_READ_ONLY, V(0, 8), &message), DLMAP_ERR_FLAG_NOT_IN_VERSION);
  EXPECT_EQ(message, "Flag READ_ONLY cannot be expressed in DLPack 0.8; it was introduced in 1.0.");
  EXPECT_EQ(Check(1, D(17, 4, 1), DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, V(1, 0), &message),
            DLMAP_ERR_DTYPE_NOT_IN_VERSION)
      << "the dtype is checked before the flags";
  EXPECT_EQ(Check(1, D(0, 8, 1), DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, V(1, 0), &message), DLMAP_ERR_FLAG_NOT_IN_VERSION);
  EXPECT_EQ(message, "Flag IS_SUBBYTE_TYPE_PADDED cannot be expressed in DLPack 1.0; it was introduced in 1.1.");
  EXPECT_EQ(Check(1, kFloat32, DLMAP_FLAG_IS_COPIED | DLMAP_FLAG_READ_ONLY, V(0, 5), &message),
            DLMAP_ERR_FLAG_NOT_IN_VERSION);
  EXPECT_EQ(message, "Flag READ_ONLY cannot be expressed in DLPack 0.5; it was introduced in 1.0.")
      << "the lowest bit first";
}

TEST(CheckRepresentable, UnknownFlags) {
  std::string message;
  EXPECT_EQ(Check(1, kFloat32, uint64_t{1} << 40, V(1, 3), &message), DLMAP_ERR_FLAGS_UNKNOWN);
  EXPECT_EQ(message, "The DLPack tensor's flags 0x10000000000 contain bits this build does not know (0x10000000000).");
  EXPECT_EQ(Check(1, kFloat32, (uint64_t{1} << 40) | DLMAP_FLAG_READ_ONLY, V(1, 3), &message),
            DLMAP_ERR_FLAGS_UNKNOWN);
  EXPECT_EQ(message, "The DLPack tensor's flags 0x10000000001 contain bits this build does not know (0x10000000000).");
  EXPECT_EQ(Check(1, kFloat32, UINT64_MAX, V(1, 3), &message), DLMAP_ERR_FLAGS_UNKNOWN);
  char unknown[32];
  snprintf(unknown, sizeof unknown, "0x%llx", static_cast<unsigned long long>(~KnownFlags()));
  EXPECT_EQ(message, std::string("The DLPack tensor's flags 0xffffffffffffffff contain bits this build does not know (") +
                         unknown + ").");
}

TEST(CheckRepresentable, InvalidInputs) {
  std::string message;
  EXPECT_EQ(Check(5, kFloat32, 0, V(1, 3), &message), DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
  EXPECT_EQ(message, "Unknown DLPack device type 5: the spec this build was generated from does not define it.");
  EXPECT_EQ(Check(-1, kFloat32, 0, V(1, 3), &message), DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
  EXPECT_EQ(Check(1, D(200, 8, 1), 0, V(1, 3), &message), DLMAP_ERR_DTYPE_CODE_UNKNOWN);
  EXPECT_EQ(message, "Unknown or invalid DLPack type code 200");
  EXPECT_EQ(Check(1, D(2, 7, 1), 0, V(1, 3), &message), DLMAP_ERR_DTYPE_BITS_INVALID);
  EXPECT_EQ(message, "Invalid or unsupported DLPack kDLFloat width: 7 bits (valid: 16, 32, 64)");
  EXPECT_EQ(Check(1, D(2, 32, 0), 0, V(1, 3), &message), DLMAP_ERR_DTYPE_LANES_INVALID);
  // Order: device type, then dtype, then flags.
  EXPECT_EQ(Check(14, D(200, 8, 1), uint64_t{1} << 40, V(0, 6), &message), DLMAP_ERR_DEVICE_TYPE_NOT_IN_VERSION);
  EXPECT_EQ(Check(1, D(200, 8, 1), uint64_t{1} << 40, V(0, 6), &message), DLMAP_ERR_DTYPE_CODE_UNKNOWN);
}

TEST(CheckRepresentable, Representable) {
  std::string message;
  EXPECT_EQ(Check(1, kFloat32, 0, V(0, 5), &message), DLMAP_OK);
  EXPECT_EQ(Check(2, kFloat32, 0, V(0, 1), &message), DLMAP_OK);
  EXPECT_EQ(Check(14, kFloat32, 0, V(0, 7), &message), DLMAP_OK);
  EXPECT_EQ(Check(1, kFloat32, DLMAP_FLAG_READ_ONLY | DLMAP_FLAG_IS_COPIED, V(1, 0), &message), DLMAP_OK);
  EXPECT_EQ(Check(20, D(18, 32, 1), DLMAP_FLAGS_KNOWN, V(1, 3), &message), DLMAP_OK);
  EXPECT_EQ(Check(21, D(17, 4, 2), DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, V(1, 3), &message), DLMAP_OK);
  EXPECT_EQ(Check(21, D(17, 4, 2), DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED, V(1, 7), &message), DLMAP_OK)
      << "a newer minor can express everything 1.3 can";
}

}  // namespace
