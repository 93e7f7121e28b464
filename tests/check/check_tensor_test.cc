// dlmap tests — dlmap_check_tensor, dlmap_check_version and dlmap_check_device_type (src/check_tensor.c): the spec's
// judgement of a tensor's values and version that dlmap_check_export and the Python checker (through the module's
// _judge_tensor, _judge_version, _judge_device_type) both report. Each rule is broken alone and gets its one problem
// with the text the checkers' rows show; the order is flags, strides, dtype, device. The values are the shipped
// spec's (spec/versions.yaml, devices.yaml, dtypes.yaml).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dlmap/check.h"

namespace {

constexpr int32_t kCPU = 1;
constexpr int32_t kTrn = 18;  // kDLTrn, introduced in 1.2
constexpr uint64_t kReadOnly = 1u << 0;
constexpr uint64_t kPadded = 1u << 2;  // IS_SUBBYTE_TYPE_PADDED, introduced in 1.1

struct Judged {
  size_t count;
  std::vector<std::string> lines;  // "rule: detail"
};

// A 2-d float32 tensor on the CPU with strides, as the arguments change it.
DLTensor tensor(int32_t device_type = kCPU, DLDataType dtype = {2, 32, 1}, bool null_strides = false) {
  static int64_t shape[2] = {2, 3};
  static int64_t strides[2] = {3, 1};
  DLTensor t = {};
  t.device.device_type = static_cast<DLDeviceType>(device_type);
  t.dtype = dtype;
  t.ndim = 2;
  t.shape = shape;
  t.strides = null_strides ? nullptr : strides;
  return t;
}

Judged judge(const DLTensor &t, uint64_t flags, const dlmap_version *version) {
  dlmap_check_problem problems[DLMAP_CHECK_TENSOR_PROBLEMS_MAX];
  Judged out;
  out.count = dlmap_check_tensor(&t, flags, version, problems, DLMAP_CHECK_TENSOR_PROBLEMS_MAX);
  for (size_t i = 0; i < out.count && i < DLMAP_CHECK_TENSOR_PROBLEMS_MAX; i++) {
    out.lines.push_back(std::string(problems[i].rule) + ": " + problems[i].detail);
  }
  return out;
}

const dlmap_version k1_0 = {1, 0};
const dlmap_version k1_1 = {1, 1};
const dlmap_version k1_2 = {1, 2};

TEST(CheckTensor, AValidTensorHasNoProblem) {
  EXPECT_EQ(judge(tensor(), kReadOnly, &k1_2).count, 0u);
  EXPECT_EQ(judge(tensor(), 0, nullptr).count, 0u);
}

TEST(CheckTensor, FlagsUnknownOrTooNewForTheVersion) {
  EXPECT_EQ(judge(tensor(), kPadded, &k1_0).lines,
            (std::vector<std::string>{"P-flags: IS_SUBBYTE_TYPE_PADDED needs (1, 1), the tensor is (1, 0)"}));
  EXPECT_EQ(judge(tensor(), kPadded, &k1_1).count, 0u);
  EXPECT_EQ(judge(tensor(), uint64_t{1} << 63 | uint64_t{1} << 40, &k1_2).lines,
            (std::vector<std::string>{"P-flags: bit 40 is not a flag the spec knows",
                                      "P-flags: bit 63 is not a flag the spec knows"}));
}

TEST(CheckTensor, NullStridesFromTheVersionThatRequiresThem) {
  EXPECT_EQ(judge(tensor(kCPU, {2, 32, 1}, true), 0, &k1_2).lines,
            (std::vector<std::string>{"P-strides: NULL strides with ndim 2 in (1, 2)"}));
  EXPECT_EQ(judge(tensor(kCPU, {2, 32, 1}, true), 0, &k1_1).count, 0u);  // 1.1 allows NULL strides
  EXPECT_EQ(judge(tensor(kCPU, {2, 32, 1}, true), 0, nullptr).count, 0u);
  DLTensor scalar = tensor(kCPU, {2, 32, 1}, true);
  scalar.ndim = 0;
  EXPECT_EQ(judge(scalar, 0, &k1_2).count, 0u);
}

TEST(CheckTensor, DtypeCodeWidthLanesAndVersion) {
  EXPECT_EQ(judge(tensor(kCPU, {200, 32, 1}), 0, &k1_2).lines,
            (std::vector<std::string>{"P-dtype: dtype code 200 is not in the spec"}));
  EXPECT_EQ(judge(tensor(kCPU, {2, 7, 1}), 0, &k1_2).lines,
            (std::vector<std::string>{"P-dtype: kDLFloat has no 7-bit width"}));
  EXPECT_EQ(judge(tensor(kCPU, {2, 32, 0}), 0, &k1_2).lines,
            (std::vector<std::string>{"P-dtype: kDLFloat cannot have 0 lanes"}));
  EXPECT_EQ(judge(tensor(kCPU, {0, 2, 1}), 0, &k1_0).lines,
            (std::vector<std::string>{"P-dtype: kDLInt 2-bit needs (1, 1), the tensor is (1, 0)"}));
  EXPECT_EQ(judge(tensor(kCPU, {0, 2, 1}), 0, nullptr).count, 0u);  // any version: int2 is a spec width
}

TEST(CheckTensor, DeviceTypeUnknownOrTooNew) {
  EXPECT_EQ(judge(tensor(999), 0, &k1_2).lines,
            (std::vector<std::string>{"P-device: device type 999 is not in the spec"}));
  EXPECT_EQ(judge(tensor(kTrn), 0, &k1_1).lines,
            (std::vector<std::string>{"P-device: kDLTrn needs (1, 2), the tensor is (1, 1)"}));
  EXPECT_EQ(judge(tensor(kTrn), 0, &k1_2).count, 0u);
}

TEST(CheckTensor, EveryProblemInOrderAndTheCountPastTheCapacity) {
  const Judged all = judge(tensor(999, {2, 7, 1}, true), kPadded | uint64_t{1} << 9, &k1_2);
  EXPECT_EQ(all.lines, (std::vector<std::string>{"P-flags: bit 9 is not a flag the spec knows",
                                                 "P-strides: NULL strides with ndim 2 in (1, 2)",
                                                 "P-dtype: kDLFloat has no 7-bit width",
                                                 "P-device: device type 999 is not in the spec"}));
  dlmap_check_problem one[1];
  const DLTensor t = tensor(999, {2, 7, 1}, true);
  EXPECT_EQ(dlmap_check_tensor(&t, 0, &k1_2, one, 1), 3u);
  EXPECT_STREQ(one[0].rule, "P-strides");
  EXPECT_EQ(dlmap_check_tensor(&t, 0, &k1_2, nullptr, 0), 3u);
}

TEST(CheckDeviceType, AReportedDeviceTypeOfAnyWidth) {
  dlmap_check_problem problem;
  EXPECT_TRUE(dlmap_check_device_type(kCPU, nullptr, &problem));
  EXPECT_FALSE(dlmap_check_device_type(int64_t{1} << 32 | kCPU, nullptr, &problem));  // not kDLCPU cut to 32 bits
  EXPECT_STREQ(problem.detail, "device type 4294967297 is not in the spec");
  EXPECT_FALSE(dlmap_check_device_type(kTrn, &k1_1, nullptr));
  EXPECT_TRUE(dlmap_check_device_type(kTrn, nullptr, nullptr));
}

TEST(CheckVersion, AStampedVersionInTheVersionedRange) {  // abi.versioned: [1.0, 2.0)
  dlmap_check_problem problem;
  EXPECT_TRUE(dlmap_check_version(k1_0, &problem));
  EXPECT_TRUE(dlmap_check_version(dlmap_version{1, 99}, nullptr));  // a newer minor of a readable major
  EXPECT_FALSE(dlmap_check_version(dlmap_version{2, 0}, &problem));
  EXPECT_STREQ(problem.rule, "P-version");
  EXPECT_STREQ(problem.detail, "(2, 0) is outside [(1, 0), (2, 0))");
  EXPECT_FALSE(dlmap_check_version(dlmap_version{0, 8}, &problem));
  EXPECT_STREQ(problem.detail, "(0, 8) is outside [(1, 0), (2, 0))");
}

TEST(CheckTensor, ItsRulesAreInTheCheckersTable) {
  for (const char *rule : {"P-flags", "P-strides", "P-dtype", "P-device", "P-version"}) {
    EXPECT_NE(dlmap_check_rule_find(rule), nullptr) << rule;
  }
}

// Without a version (a legacy tensor under known gating) a known flag of any version is fine, and a device type below
// int32 is as foreign as one above it.
TEST(CheckTensor, NoVersionAndNegativeDeviceTypesOfAnyWidth) {
  EXPECT_EQ(judge(tensor(), kPadded, nullptr).count, 0u);
  dlmap_check_problem problem;
  EXPECT_FALSE(dlmap_check_device_type(INT64_MIN, nullptr, &problem));
  EXPECT_STREQ(problem.detail, "device type -9223372036854775808 is not in the spec");
}

}  // namespace
