// Spec-extension test — a library built from the default spec plus vendor_device.yaml knows device
// type 200 through every lookup, with no C edited. The overlay's entry is written out by hand; the size of the
// extended table comes from the spec's YAML (tests/spec_facts).
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"

namespace {

TEST(SpecExtension, GeneratedEnumeratorAndCount) {
  EXPECT_EQ(DLMAP_DEVICE_ACMENPU, 200);
  EXPECT_EQ(DLMAP_DEVICE_TYPE_COUNT, SPEC_FACTS_DEVICE_TYPE_COUNT);
  EXPECT_EQ(spec_facts_device_types[SPEC_FACTS_DEVICE_TYPE_COUNT - 2].value, 200) << "the overlay's entries come last";
  EXPECT_EQ(DLMAP_DEVICE_ACMEVPU, 65537);
}

TEST(SpecExtension, InfoForValue200) {
  const dlmap_device_info *info = dlmap_device_type_find(200);
  ASSERT_NE(info, nullptr);
  EXPECT_STREQ(info->name, "kDLAcmeNPU");
  EXPECT_STREQ(info->spellings[0], "kAcmeNPU");
  EXPECT_EQ(info->spellings[1], nullptr);
  EXPECT_STREQ(info->aliases[0], "acme");
  EXPECT_STREQ(info->aliases[1], "acme_npu");
  EXPECT_EQ(info->platform, DLMAP_PLATFORM_NONE);
  EXPECT_EQ(info->memory, DLMAP_MEMORY_DEVICE);
  EXPECT_EQ(info->stream, DLMAP_STREAM_CONVENTION_OPAQUE);
  EXPECT_EQ(info->introduced.major, 1u);
  EXPECT_EQ(info->introduced.minor, 3u);
  EXPECT_STREQ(dlmap_device_type_name(200), "kDLAcmeNPU");
  EXPECT_FALSE(info->vendor) << "it claims DLPack 1.3";
  // The overlay's entries come last in spec order.
  EXPECT_EQ(dlmap_device_type_at(DLMAP_DEVICE_TYPE_COUNT - 2), info);
  EXPECT_EQ(dlmap_device_type_at(DLMAP_DEVICE_TYPE_COUNT), nullptr);
}

// `introduced: vendor`: in no DLPack release; expressible in every listed version (its producers stamp what they
// speak, so a dlmap whose spec moved to a newer DLPack still takes their tensors).
TEST(SpecExtension, VendorDeviceType) {
  const dlmap_device_info *info = dlmap_device_type_find(65537);
  ASSERT_NE(info, nullptr);
  EXPECT_STREQ(info->name, "kDLAcmeVPU");
  EXPECT_TRUE(info->vendor);
  EXPECT_FALSE(info->upstream_main);
  for (size_t i = 0; dlmap_version_at(i) != nullptr; i++) {
    EXPECT_TRUE(dlmap_device_type_in_version(65537, dlmap_version_at(i)->version)) << "version index " << i;
  }
  EXPECT_EQ(info->platform, DLMAP_PLATFORM_NONE) << "named by an alias spelling (NONE) in the overlay";
  EXPECT_EQ(dlmap_device_type_at(DLMAP_DEVICE_TYPE_COUNT - 1), info);
  for (size_t i = 0; i < SPEC_FACTS_DEVICE_TYPE_COUNT; i++) {
    const spec_facts_device_type &f = spec_facts_device_types[i];
    EXPECT_EQ(dlmap_device_type_find(f.value)->vendor, f.vendor != 0) << f.name;
  }
}

// `_name` for every table the naming vocabulary covers, from the spec's own names.
TEST(SpecExtension, TableNames) {
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) {
    ASSERT_LT(static_cast<size_t>(p), SPEC_FACTS_PLATFORM_COUNT);
    EXPECT_STREQ(dlmap_platform_name(static_cast<dlmap_platform>(p)), spec_facts_platforms[p].name);
  }
  EXPECT_EQ(dlmap_platform_name(DLMAP_PLATFORM_COUNT), nullptr);
  EXPECT_EQ(dlmap_platform_name(static_cast<dlmap_platform>(-1)), nullptr);
  for (size_t i = 0; i < SPEC_FACTS_DTYPE_CODE_COUNT; i++) {
    const spec_facts_dtype_code &c = spec_facts_dtype_codes[i];
    EXPECT_STREQ(dlmap_dtype_code_name(static_cast<uint8_t>(c.code)), c.name);
  }
  EXPECT_EQ(dlmap_dtype_code_name(250), nullptr);
}

TEST(SpecExtension, NameLookups) {
  for (const char *name : {"kDLAcmeNPU", "kAcmeNPU", "acme", "ACME", "acme_npu", "kdlacmenpu"}) {
    int32_t value = -1;
    EXPECT_TRUE(dlmap_device_type_parse(name, std::strlen(name), &value)) << name;
    EXPECT_EQ(value, 200) << name;
  }
  int32_t value = -1;
  EXPECT_FALSE(dlmap_device_type_parse("acm", 3, &value));
  // The default entries are still there.
  EXPECT_TRUE(dlmap_device_type_parse("cuda", 4, &value));
  EXPECT_EQ(value, 2);
}

TEST(SpecExtension, VersionsAndStreams) {
  EXPECT_TRUE(dlmap_device_type_in_version(200, dlmap_version{1, 3}));
  EXPECT_FALSE(dlmap_device_type_in_version(200, dlmap_version{1, 2}));
  dlmap_error err;
  DLDataType f32 = {2, 32, 1};
  EXPECT_EQ(dlmap_check_representable(200, f32, 0, dlmap_version{1, 0}, &err), DLMAP_ERR_DEVICE_TYPE_NOT_IN_VERSION);
  EXPECT_STREQ(err.message, "Device type kDLAcmeNPU (200) cannot be expressed in DLPack 1.0; it was introduced in 1.3.");
  dlmap_stream_meaning meaning;
  EXPECT_EQ(dlmap_stream_classify(200, true, 7, &meaning, nullptr), DLMAP_OK);
  EXPECT_EQ(meaning, DLMAP_STREAM_HANDLE);
}

TEST(SpecExtension, ProbeSaysNoBackend) {
  dlmap_platform_status status;
  dlmap_platform_probe(dlmap_device_type_find(200)->platform, &status);
  EXPECT_FALSE(status.built);
  EXPECT_FALSE(status.available);
  EXPECT_STREQ(status.reason, "no dlmap backend serves this platform");
}

}  // namespace
