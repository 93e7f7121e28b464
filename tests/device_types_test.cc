// Tests of src/device_types.c: device type info for any int32_t, memory kinds, names, and stream classification.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"
#include "gtest/gtest.h"
#include "tests/c_callers.h"

namespace {

struct Expected {
  int32_t value;
  const char *name;
  std::vector<std::string> spellings;
  std::vector<std::string> aliases;
  dlmap_platform platform;
  dlmap_memory_kind memory;
  dlmap_stream_convention stream;
  uint32_t major, minor;  // introduced
};

// The device types DLPack defined by 1.3 and its main branch, written out by hand from DLPack's history (reference
// §2.3): what must never change. The spec may add device types and aliases; the whole list is spec_facts'.
const std::vector<Expected> &Table() {
  static const std::vector<Expected> table = {
      {1, "kDLCPU", {"kCPU"}, {"cpu", "host"}, DLMAP_PLATFORM_CPU, DLMAP_MEMORY_HOST, DLMAP_STREAM_CONVENTION_NONE, 0, 1},
      {2, "kDLCUDA", {"kGPU", "kDLGPU"}, {"cuda", "gpu"}, DLMAP_PLATFORM_CUDA, DLMAP_MEMORY_DEVICE,
       DLMAP_STREAM_CONVENTION_CUDA, 0, 1},
      {3, "kDLCUDAHost", {"kCPUPinned", "kDLCPUPinned"}, {"cuda_host", "pinned", "cuda_pinned"}, DLMAP_PLATFORM_CUDA,
       DLMAP_MEMORY_HOST_PINNED, DLMAP_STREAM_CONVENTION_NONE, 0, 1},
      {4, "kDLOpenCL", {"kOpenCL"}, {"opencl"}, DLMAP_PLATFORM_OPENCL, DLMAP_MEMORY_DEVICE,
       DLMAP_STREAM_CONVENTION_OPAQUE, 0, 1},
      {7, "kDLVulkan", {}, {"vulkan"}, DLMAP_PLATFORM_VULKAN, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_OPAQUE, 0, 3},
      {8, "kDLMetal", {}, {"metal", "mps"}, DLMAP_PLATFORM_METAL, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_OPAQUE, 0,
       2},
      {9, "kDLVPI", {}, {"vpi"}, DLMAP_PLATFORM_NONE, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_OPAQUE, 0, 2},
      {10, "kDLROCM", {}, {"rocm", "hip"}, DLMAP_PLATFORM_ROCM, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_ROCM, 0, 2},
      {11, "kDLROCMHost", {}, {"rocm_host", "hip_host", "rocm_pinned"}, DLMAP_PLATFORM_ROCM, DLMAP_MEMORY_HOST_PINNED,
       DLMAP_STREAM_CONVENTION_NONE, 0, 6},
      {12, "kDLExtDev", {}, {"ext_dev", "extdev"}, DLMAP_PLATFORM_NONE, DLMAP_MEMORY_DEVICE,
       DLMAP_STREAM_CONVENTION_OPAQUE, 0, 3},
      {13, "kDLCUDAManaged", {}, {"cuda_managed", "managed"}, DLMAP_PLATFORM_CUDA, DLMAP_MEMORY_MANAGED,
       DLMAP_STREAM_CONVENTION_CUDA, 0, 6},
      {14, "kDLOneAPI", {}, {"oneapi", "sycl", "xpu"}, DLMAP_PLATFORM_ONEAPI, DLMAP_MEMORY_DEVICE,
       DLMAP_STREAM_CONVENTION_OPAQUE, 0, 7},
      {15, "kDLWebGPU", {}, {"webgpu"}, DLMAP_PLATFORM_WEBGPU, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_OPAQUE, 0, 7},
      {16, "kDLHexagon", {}, {"hexagon"}, DLMAP_PLATFORM_HEXAGON, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_OPAQUE,
       0, 7},
      {17, "kDLMAIA", {}, {"maia"}, DLMAP_PLATFORM_MAIA, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_OPAQUE, 1, 0},
      {18, "kDLTrn", {}, {"trn", "trainium"}, DLMAP_PLATFORM_TRN, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_OPAQUE, 1,
       2},
      {19, "kDLTPU", {}, {"tpu"}, DLMAP_PLATFORM_TPU, DLMAP_MEMORY_DEVICE, DLMAP_STREAM_CONVENTION_OPAQUE, 1, 3},
      {20, "kDLTPUHost", {}, {"tpu_host", "tpu_pinned"}, DLMAP_PLATFORM_TPU, DLMAP_MEMORY_HOST_PINNED,
       DLMAP_STREAM_CONVENTION_NONE, 1, 3},
      {21, "kDLAscend", {}, {"ascend", "npu"}, DLMAP_PLATFORM_ASCEND, DLMAP_MEMORY_DEVICE,
       DLMAP_STREAM_CONVENTION_OPAQUE, 1, 3},
  };
  return table;
}

std::vector<std::string> List(const char *const *names) {
  std::vector<std::string> out;
  EXPECT_NE(names, nullptr);
  for (const char *const *n = names; n != nullptr && *n != nullptr; n++) out.push_back(*n);
  return out;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool FromName(const std::string &name, int32_t *out) {
  return dlmap_device_type_parse(name.data(), name.size(), out);
}

// Whether `have` starts with the names of `want`, in order (a spec may append aliases, never drop one).
bool Prefix(const std::vector<std::string> &want, const std::vector<std::string> &have) {
  return want.size() <= have.size() && std::equal(want.begin(), want.end(), have.begin());
}

std::vector<std::string> FactNames(const spec_facts_device_type &f) {
  std::vector<std::string> out;
  for (const char *const *n = f.names; *n != nullptr; n++) out.push_back(*n);
  return out;
}

// ---- hand-written expectations ----------------------------------------------------------------------

TEST(DeviceTypes, HandWrittenTable) {
  for (const Expected &e : Table()) {
    SCOPED_TRACE(e.name);
    const dlmap_device_info *info = dlmap_device_type_find(e.value);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->value, e.value);
    EXPECT_STREQ(info->name, e.name);
    EXPECT_EQ(List(info->spellings), e.spellings);
    EXPECT_TRUE(Prefix(e.aliases, List(info->aliases))) << "an alias of an existing device type was removed";
    EXPECT_EQ(info->platform, e.platform);
    EXPECT_EQ(info->memory, e.memory);
    EXPECT_EQ(info->stream, e.stream);
    EXPECT_EQ(info->introduced.major, e.major);
    EXPECT_EQ(info->introduced.minor, e.minor);
    EXPECT_STREQ(dlmap_device_type_name(e.value), e.name);
  }
}

TEST(DeviceTypes, RocmHost) {
  // kDLROCMHost (11) → rocm, host_pinned, since 0.6
  const dlmap_device_info *info = dlmap_device_type_find(11);
  ASSERT_NE(info, nullptr);
  EXPECT_STREQ(info->name, "kDLROCMHost");
  EXPECT_EQ(info->platform, DLMAP_PLATFORM_ROCM);
  EXPECT_EQ(info->memory, DLMAP_MEMORY_HOST_PINNED);
  EXPECT_STREQ(dlmap_memory_kind_name(info->memory), "host_pinned");
  EXPECT_EQ(info->introduced.major, 0u);
  EXPECT_EQ(info->introduced.minor, 6u);
  EXPECT_EQ(info->stream, DLMAP_STREAM_CONVENTION_NONE);
  EXPECT_STREQ(info->doc, "Pinned ROCm host memory (hipMallocHost).");
  EXPECT_STREQ(info->note, "");
}

TEST(DeviceTypes, CudaSpellings) {
  const dlmap_device_info *info = dlmap_device_type_find(2);
  ASSERT_NE(info, nullptr);
  EXPECT_STREQ(info->name, "kDLCUDA");
  ASSERT_NE(info->spellings[0], nullptr);
  EXPECT_STREQ(info->spellings[0], "kGPU");
  ASSERT_NE(info->spellings[1], nullptr);
  EXPECT_STREQ(info->spellings[1], "kDLGPU");
  EXPECT_EQ(info->spellings[2], nullptr);
  EXPECT_STREQ(info->note, "Spelled kGPU in 0.1, kDLGPU from 0.2, kDLCUDA from 0.5; the value never changed.");
}

TEST(DeviceTypes, CudaHostSpellings) {
  const dlmap_device_info *info = dlmap_device_type_find(3);
  ASSERT_NE(info, nullptr);
  EXPECT_STREQ(info->name, "kDLCUDAHost");
  EXPECT_EQ(List(info->spellings), (std::vector<std::string>{"kCPUPinned", "kDLCPUPinned"}));
  EXPECT_EQ(info->memory, DLMAP_MEMORY_HOST_PINNED);
  EXPECT_EQ(info->platform, DLMAP_PLATFORM_CUDA);
}

TEST(DeviceTypes, CudaManaged) {
  const dlmap_device_info *info = dlmap_device_type_find(13);
  ASSERT_NE(info, nullptr);
  EXPECT_STREQ(info->name, "kDLCUDAManaged");
  EXPECT_EQ(info->platform, DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(info->memory, DLMAP_MEMORY_MANAGED);
  EXPECT_EQ(info->stream, DLMAP_STREAM_CONVENTION_CUDA);
}

TEST(DeviceTypes, IntroducedVersions) {
  EXPECT_EQ(dlmap_device_type_find(14)->introduced.major, 0u);  // kDLOneAPI since 0.7
  EXPECT_EQ(dlmap_device_type_find(14)->introduced.minor, 7u);
  EXPECT_STREQ(dlmap_device_type_find(18)->name, "kDLTrn");  // kDLTrn since 1.2
  EXPECT_EQ(dlmap_device_type_find(18)->introduced.major, 1u);
  EXPECT_EQ(dlmap_device_type_find(18)->introduced.minor, 2u);
  const dlmap_device_info *tpu_host = dlmap_device_type_find(20);  // kDLTPUHost, host_pinned, since 1.3
  ASSERT_NE(tpu_host, nullptr);
  EXPECT_STREQ(tpu_host->name, "kDLTPUHost");
  EXPECT_EQ(tpu_host->memory, DLMAP_MEMORY_HOST_PINNED);
  EXPECT_EQ(tpu_host->platform, DLMAP_PLATFORM_TPU);
  EXPECT_EQ(tpu_host->introduced.major, 1u);
  EXPECT_EQ(tpu_host->introduced.minor, 3u);
}

TEST(DeviceTypes, UpstreamMainOnly) {
  // kDLTPU, kDLTPUHost and kDLAscend are on DLPack's main branch after the v1.3 tag, not in the 1.3 release.
  for (int32_t value : {19, 20, 21}) EXPECT_TRUE(dlmap_device_type_find(value)->upstream_main) << value;
  for (int32_t value : {1, 2, 17, 18}) EXPECT_FALSE(dlmap_device_type_find(value)->upstream_main) << value;
}

TEST(DeviceTypes, EnumeratorsMatchTheDlpackHeader) {
  // The host's <dlpack/dlpack.h> (0.6 on Debian 12) and the spec agree on every value both know.
  EXPECT_EQ(DLMAP_DEVICE_CPU, static_cast<int>(kDLCPU));
  EXPECT_EQ(DLMAP_DEVICE_CUDA, static_cast<int>(kDLCUDA));
  EXPECT_EQ(DLMAP_DEVICE_CUDAHOST, static_cast<int>(kDLCUDAHost));
  EXPECT_EQ(DLMAP_DEVICE_OPENCL, static_cast<int>(kDLOpenCL));
  EXPECT_EQ(DLMAP_DEVICE_VULKAN, static_cast<int>(kDLVulkan));
  EXPECT_EQ(DLMAP_DEVICE_METAL, static_cast<int>(kDLMetal));
  EXPECT_EQ(DLMAP_DEVICE_VPI, static_cast<int>(kDLVPI));
  EXPECT_EQ(DLMAP_DEVICE_ROCM, static_cast<int>(kDLROCM));
  EXPECT_EQ(DLMAP_DEVICE_ROCMHOST, static_cast<int>(kDLROCMHost));
  EXPECT_EQ(DLMAP_DEVICE_EXTDEV, static_cast<int>(kDLExtDev));
  EXPECT_EQ(DLMAP_DEVICE_CUDAMANAGED, static_cast<int>(kDLCUDAManaged));
  EXPECT_EQ(DLMAP_DEVICE_ONEAPI, 14);
  EXPECT_EQ(DLMAP_DEVICE_TRN, 18);
  EXPECT_EQ(DLMAP_DEVICE_TPUHOST, 20);
  EXPECT_EQ(DLMAP_DEVICE_ASCEND, 21);
}

// Values the spec does not define: gaps DLPack left, one past the largest, and the int32_t extremes.
std::vector<int32_t> UnknownValues() {
  int32_t largest = 0;
  for (const spec_facts_device_type &f : spec_facts_device_types) largest = std::max(largest, f.value);
  std::vector<int32_t> out;
  for (int32_t value : {0, 5, 6, largest + 1, 100, 200, 1000, -1, INT32_MIN, INT32_MAX}) {
    bool defined = false;
    for (const spec_facts_device_type &f : spec_facts_device_types) defined = defined || f.value == value;
    if (!defined) out.push_back(value);
  }
  return out;
}

TEST(DeviceTypes, UnknownValues) {
  ASSERT_GE(UnknownValues().size(), 5u);
  for (int32_t value : UnknownValues()) {
    SCOPED_TRACE(value);
    EXPECT_EQ(dlmap_device_type_find(value), nullptr);
    EXPECT_STREQ(dlmap_device_type_name(value), "unknown");
    const dlmap_device_info *info = dlmap_device_type_find(1);
    dlmap_error err;
    memset(&err, 0, sizeof err);
    EXPECT_EQ(dlmap_device_type_lookup(value, &info, &err), DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
    EXPECT_EQ(info, nullptr);
    EXPECT_EQ(err.code, DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
    EXPECT_EQ(err.kind, DLMAP_KIND_VALUE_ERROR);
    EXPECT_STREQ(err.id, "device_type_unknown");
    EXPECT_EQ(std::string(err.message), "Unknown DLPack device type " + std::to_string(value) +
                                            ": the spec this build was generated from does not define it.");
    EXPECT_EQ(dlmap_device_type_lookup(value, nullptr, nullptr), DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
  }
}

TEST(DeviceTypes, InfoSuccess) {
  const dlmap_device_info *info = nullptr;
  dlmap_error err;
  memset(&err, 0, sizeof err);
  EXPECT_EQ(dlmap_device_type_lookup(10, &info, &err), DLMAP_OK);
  ASSERT_NE(info, nullptr);
  EXPECT_STREQ(info->name, "kDLROCM");
  EXPECT_EQ(err.code, DLMAP_OK) << "err untouched on success";
  EXPECT_EQ(dlmap_device_type_lookup(10, nullptr, nullptr), DLMAP_OK);
}

TEST(DeviceTypes, ByIndex) {
  ASSERT_NE(dlmap_device_type_at(0), nullptr);
  EXPECT_STREQ(dlmap_device_type_at(0)->name, "kDLCPU");
  ASSERT_NE(dlmap_device_type_at(DLMAP_DEVICE_TYPE_COUNT - 1), nullptr);
  EXPECT_STREQ(dlmap_device_type_at(DLMAP_DEVICE_TYPE_COUNT - 1)->name,
               spec_facts_device_types[SPEC_FACTS_DEVICE_TYPE_COUNT - 1].name);
  EXPECT_EQ(dlmap_device_type_at(DLMAP_DEVICE_TYPE_COUNT), nullptr);
  EXPECT_EQ(dlmap_device_type_at(SIZE_MAX), nullptr);
}

// ---- memory kinds and stream conventions ---------------------------------------------------------------

TEST(MemoryKinds, NamesAndHostAccess) {
  ASSERT_EQ(DLMAP_MEMORY_KIND_COUNT, SPEC_FACTS_MEMORY_KIND_COUNT);
  for (int kind = 0; kind < DLMAP_MEMORY_KIND_COUNT; kind++) {
    EXPECT_STREQ(dlmap_memory_kind_name(static_cast<dlmap_memory_kind>(kind)), spec_facts_memory_kinds[kind].name);
    EXPECT_EQ(dlmap_memory_kind_host_accessible(static_cast<dlmap_memory_kind>(kind)),
              spec_facts_memory_kinds[kind].host_accessible != 0);
  }
  EXPECT_STREQ(dlmap_memory_kind_name(DLMAP_MEMORY_DEVICE), "device");
  EXPECT_STREQ(dlmap_memory_kind_name(DLMAP_MEMORY_HOST), "host");
  EXPECT_STREQ(dlmap_memory_kind_name(DLMAP_MEMORY_HOST_PINNED), "host_pinned");
  EXPECT_STREQ(dlmap_memory_kind_name(DLMAP_MEMORY_MANAGED), "managed");
  EXPECT_FALSE(dlmap_memory_kind_host_accessible(DLMAP_MEMORY_DEVICE));
  EXPECT_TRUE(dlmap_memory_kind_host_accessible(DLMAP_MEMORY_HOST));
  EXPECT_TRUE(dlmap_memory_kind_host_accessible(DLMAP_MEMORY_HOST_PINNED));
  EXPECT_TRUE(dlmap_memory_kind_host_accessible(DLMAP_MEMORY_MANAGED));
  EXPECT_EQ(dlmap_memory_kind_name(DLMAP_MEMORY_KIND_COUNT), nullptr);
  EXPECT_FALSE(dlmap_memory_kind_host_accessible(DLMAP_MEMORY_KIND_COUNT));
  for (int kind : {-1, static_cast<int>(DLMAP_MEMORY_KIND_COUNT), 100, INT_MIN, INT_MAX}) {
    EXPECT_EQ(c_memory_kind_name(kind), nullptr) << kind;
    EXPECT_FALSE(c_memory_kind_host_accessible(kind)) << kind;
  }
  EXPECT_STREQ(c_memory_kind_name(2), "host_pinned");
}

TEST(StreamConventions, NamesAndRules) {
  ASSERT_EQ(DLMAP_STREAM_CONVENTION_COUNT, SPEC_FACTS_STREAM_CONVENTION_COUNT);
  for (int c = 0; c < DLMAP_STREAM_CONVENTION_COUNT; c++) {
    EXPECT_STREQ(dlmap_stream_convention_name(static_cast<dlmap_stream_convention>(c)),
                 spec_facts_stream_conventions[c].name);
    EXPECT_STREQ(dlmap_stream_convention_rule(static_cast<dlmap_stream_convention>(c)),
                 spec_facts_stream_conventions[c].rule);
  }
  EXPECT_STREQ(dlmap_stream_convention_name(DLMAP_STREAM_CONVENTION_NONE), "none");
  EXPECT_STREQ(dlmap_stream_convention_name(DLMAP_STREAM_CONVENTION_CUDA), "cuda");
  EXPECT_STREQ(dlmap_stream_convention_name(DLMAP_STREAM_CONVENTION_ROCM), "rocm");
  EXPECT_STREQ(dlmap_stream_convention_name(DLMAP_STREAM_CONVENTION_OPAQUE), "opaque");
  EXPECT_STREQ(dlmap_stream_convention_rule(DLMAP_STREAM_CONVENTION_NONE),
               "this device type takes no stream, so stream must be None.");
  EXPECT_STREQ(dlmap_stream_convention_rule(DLMAP_STREAM_CONVENTION_ROCM),
               "ROCm accepts None, -1 (no synchronisation), 0 (default stream) or a stream handle above 2; 1 and 2 "
               "are not supported.");
  EXPECT_EQ(dlmap_stream_convention_name(DLMAP_STREAM_CONVENTION_COUNT), nullptr);
  EXPECT_EQ(dlmap_stream_convention_rule(DLMAP_STREAM_CONVENTION_COUNT), nullptr);
  for (int convention : {-1, static_cast<int>(DLMAP_STREAM_CONVENTION_COUNT), 100, INT_MIN, INT_MAX}) {
    EXPECT_EQ(c_stream_convention_name(convention), nullptr) << convention;
    EXPECT_EQ(c_stream_convention_rule(convention), nullptr) << convention;
  }
}

// ---- stream classification -------------------------------------------------------------------------------

constexpr int kInvalid = -1;
constexpr int kNotAHandle = -2;  // stream_not_a_handle (issue 48)

// Classifies and returns the meaning, or kInvalid when the call reports stream_invalid, kNotAHandle when it reports
// stream_not_a_handle. DLMAP_STREAM_INVALID marks "untouched": a successful classification never writes it.
int Classify(int32_t device_type, bool has_stream, int64_t stream) {
  dlmap_stream_meaning meaning = DLMAP_STREAM_INVALID;
  dlmap_error err;
  memset(&err, 0, sizeof err);
  const int32_t status = dlmap_stream_classify(device_type, has_stream, stream, &meaning, &err);
  if (status == DLMAP_OK) {
    EXPECT_NE(meaning, DLMAP_STREAM_INVALID);
    return meaning;
  }
  if (status == DLMAP_ERR_STREAM_NOT_A_HANDLE) {
    EXPECT_EQ(err.code, DLMAP_ERR_STREAM_NOT_A_HANDLE);
    EXPECT_EQ(meaning, DLMAP_STREAM_INVALID) << "out untouched on error";
    return kNotAHandle;
  }
  EXPECT_EQ(status, DLMAP_ERR_STREAM_INVALID);
  EXPECT_EQ(err.code, DLMAP_ERR_STREAM_INVALID);
  EXPECT_EQ(meaning, DLMAP_STREAM_INVALID) << "out untouched on error";
  return kInvalid;
}

TEST(StreamClassify, Cuda) {
  for (int32_t device : {2, 13}) {  // kDLCUDA and kDLCUDAManaged
    SCOPED_TRACE(device);
    EXPECT_EQ(Classify(device, false, 0), DLMAP_STREAM_LEGACY_DEFAULT);
    EXPECT_EQ(Classify(device, false, 12345), DLMAP_STREAM_LEGACY_DEFAULT) << "value ignored without a stream";
    EXPECT_EQ(Classify(device, true, -1), DLMAP_STREAM_NO_SYNC);
    EXPECT_EQ(Classify(device, true, 0), kInvalid);
    EXPECT_EQ(Classify(device, true, 1), DLMAP_STREAM_LEGACY_DEFAULT);
    EXPECT_EQ(Classify(device, true, 2), DLMAP_STREAM_PER_THREAD_DEFAULT);
    EXPECT_EQ(Classify(device, true, 3), kNotAHandle) << "below the first page: an invented handle (issue 48)";
    EXPECT_EQ(Classify(device, true, 4095), kNotAHandle);
    EXPECT_EQ(Classify(device, true, 4096), DLMAP_STREAM_HANDLE);
    EXPECT_EQ(Classify(device, true, 0x7f0000001000), DLMAP_STREAM_HANDLE);
    EXPECT_EQ(Classify(device, true, INT64_MAX), DLMAP_STREAM_HANDLE);
    EXPECT_EQ(Classify(device, true, -2), kInvalid);
    EXPECT_EQ(Classify(device, true, INT64_MIN), kInvalid);
  }
}

TEST(StreamClassify, Rocm) {
  EXPECT_EQ(Classify(10, false, 0), DLMAP_STREAM_DEFAULT);
  EXPECT_EQ(Classify(10, true, -1), DLMAP_STREAM_NO_SYNC);
  EXPECT_EQ(Classify(10, true, 0), DLMAP_STREAM_DEFAULT);
  EXPECT_EQ(Classify(10, true, 1), kInvalid);
  EXPECT_EQ(Classify(10, true, 2), kInvalid);
  EXPECT_EQ(Classify(10, true, 3), kNotAHandle);
  EXPECT_EQ(Classify(10, true, 4096), DLMAP_STREAM_HANDLE);
  EXPECT_EQ(Classify(10, true, INT64_MAX), DLMAP_STREAM_HANDLE);
  EXPECT_EQ(Classify(10, true, -2), kInvalid);
  EXPECT_EQ(Classify(10, true, INT64_MIN), kInvalid);
}

TEST(StreamClassify, HostTypesTakeNoStream) {
  for (int32_t device : {1, 3, 11, 20}) {  // kDLCPU, kDLCUDAHost, kDLROCMHost, kDLTPUHost
    SCOPED_TRACE(device);
    EXPECT_EQ(Classify(device, false, 0), DLMAP_STREAM_HOST_SYNC);
    for (int64_t stream : {int64_t{-2}, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4096},
                           INT64_MAX, INT64_MIN}) {
      EXPECT_EQ(Classify(device, true, stream), kInvalid) << "stream " << stream;
    }
  }
}

TEST(StreamClassify, OpaqueTypes) {
  for (int32_t device : {4, 7, 8, 9, 12, 14, 15, 16, 17, 18, 19, 21}) {
    SCOPED_TRACE(device);
    EXPECT_EQ(Classify(device, false, 0), DLMAP_STREAM_HOST_SYNC);
    EXPECT_EQ(Classify(device, true, -1), DLMAP_STREAM_NO_SYNC);
    EXPECT_EQ(Classify(device, true, 0), DLMAP_STREAM_HANDLE);
    EXPECT_EQ(Classify(device, true, 1), DLMAP_STREAM_HANDLE);
    EXPECT_EQ(Classify(device, true, 2), DLMAP_STREAM_HANDLE);
    EXPECT_EQ(Classify(device, true, INT64_MAX), DLMAP_STREAM_HANDLE);
    EXPECT_EQ(Classify(device, true, -2), kInvalid);
    EXPECT_EQ(Classify(device, true, INT64_MIN), kInvalid);
  }
}

TEST(StreamClassify, InvalidMessages) {
  dlmap_error err;
  memset(&err, 0, sizeof err);
  EXPECT_EQ(dlmap_stream_classify(2, true, 0, nullptr, &err), DLMAP_ERR_STREAM_INVALID);
  EXPECT_EQ(err.kind, DLMAP_KIND_VALUE_ERROR);
  EXPECT_STREQ(err.id, "stream_invalid");
  EXPECT_STREQ(err.message,
               "stream=0 is not valid for device type kDLCUDA (2): CUDA accepts None, -1 (no synchronisation), 1 "
               "(legacy default stream), 2 (per-thread default stream) or a stream handle above 2; 0 is ambiguous "
               "and disallowed.");

  EXPECT_EQ(dlmap_stream_classify(1, true, 1, nullptr, &err), DLMAP_ERR_STREAM_INVALID);
  EXPECT_STREQ(err.message,
               "stream=1 is not valid for device type kDLCPU (1): this device type takes no stream, so stream must be "
               "None.");

  EXPECT_EQ(dlmap_stream_classify(10, true, 2, nullptr, &err), DLMAP_ERR_STREAM_INVALID);
  EXPECT_STREQ(err.message,
               "stream=2 is not valid for device type kDLROCM (10): ROCm accepts None, -1 (no synchronisation), 0 "
               "(default stream) or a stream handle above 2; 1 and 2 are not supported.");

  EXPECT_EQ(dlmap_stream_classify(14, true, -5, nullptr, &err), DLMAP_ERR_STREAM_INVALID);
  EXPECT_STREQ(err.message,
               "stream=-5 is not valid for device type kDLOneAPI (14): this device type's stream is an opaque queue "
               "handle that dlmap passes through; values below -1 are invalid.");

  EXPECT_EQ(dlmap_stream_classify(2, true, 0, nullptr, nullptr), DLMAP_ERR_STREAM_INVALID);
}

TEST(StreamClassify, UnknownDeviceType) {
  for (int32_t device : UnknownValues()) {
    SCOPED_TRACE(device);
    dlmap_stream_meaning meaning = DLMAP_STREAM_HANDLE;
    dlmap_error err;
    memset(&err, 0, sizeof err);
    EXPECT_EQ(dlmap_stream_classify(device, false, 0, &meaning, &err), DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
    EXPECT_EQ(meaning, DLMAP_STREAM_HANDLE) << "out untouched";
    EXPECT_EQ(std::string(err.message), "Unknown DLPack device type " + std::to_string(device) +
                                            ": the spec this build was generated from does not define it.");
    EXPECT_EQ(dlmap_stream_classify(device, true, 1, nullptr, nullptr), DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
  }
}

// ---- every entry -----------------------------------------------------------------------------------------------

TEST(DeviceTypes, EveryEntry) {
  std::set<int32_t> values;
  std::set<std::string> names;  // lower-cased: the lookup is case-insensitive
  size_t count = 0;
  for (size_t i = 0; dlmap_device_type_at(i) != nullptr; i++) {
    const dlmap_device_info *info = dlmap_device_type_at(i);
    count++;
    ASSERT_NE(info->name, nullptr);
    SCOPED_TRACE(info->name);
    EXPECT_GE(info->value, 0);
    EXPECT_TRUE(values.insert(info->value).second) << "duplicate value";
    EXPECT_EQ(dlmap_device_type_find(info->value), info);
    EXPECT_STREQ(dlmap_device_type_name(info->value), info->name);
    const dlmap_device_info *out = nullptr;
    EXPECT_EQ(dlmap_device_type_lookup(info->value, &out, nullptr), DLMAP_OK);
    EXPECT_EQ(out, info);

    EXPECT_LT(static_cast<unsigned>(info->platform), static_cast<unsigned>(DLMAP_PLATFORM_COUNT));
    EXPECT_NE(dlmap_platform_find(info->platform), nullptr);
    EXPECT_NE(dlmap_memory_kind_name(info->memory), nullptr);
    EXPECT_NE(dlmap_stream_convention_name(info->stream), nullptr);
    EXPECT_TRUE(dlmap_version_is_known(info->introduced));
    ASSERT_NE(info->doc, nullptr);
    EXPECT_STRNE(info->doc, "");
    EXPECT_NE(info->note, nullptr);
    EXPECT_EQ(std::string(info->name).rfind("kDL", 0), 0u) << "enumerators start with kDL";

    // A value is expressible from its introduced version on.
    EXPECT_TRUE(dlmap_device_type_in_version(info->value, info->introduced));
    EXPECT_TRUE(dlmap_device_type_in_version(info->value, dlmap_version_current()));

    // The host-side memory kinds never take a stream, and absence of a stream is always valid.
    dlmap_stream_meaning meaning;
    EXPECT_EQ(dlmap_stream_classify(info->value, false, 0, &meaning, nullptr), DLMAP_OK);
    if (info->memory == DLMAP_MEMORY_HOST || info->memory == DLMAP_MEMORY_HOST_PINNED) {
      EXPECT_EQ(info->stream, DLMAP_STREAM_CONVENTION_NONE);
      EXPECT_EQ(meaning, DLMAP_STREAM_HOST_SYNC);
    }

    // Every name, spelling and alias finds the value, as written, upper- and lower-cased.
    std::vector<std::string> all = {info->name};
    for (const std::string &s : List(info->spellings)) all.push_back(s);
    for (const std::string &s : List(info->aliases)) all.push_back(s);
    for (const std::string &name : all) {
      EXPECT_TRUE(names.insert(Lower(name)).second) << "name " << name << " is not unique";
      for (const std::string &variant : {name, Upper(name), Lower(name)}) {
        int32_t value = -12345;
        EXPECT_TRUE(FromName(variant, &value)) << variant;
        EXPECT_EQ(value, info->value) << variant;
      }
    }
  }
  EXPECT_EQ(count, size_t{DLMAP_DEVICE_TYPE_COUNT});
}

// ---- the spec's entries, read from the YAML (tests/spec_facts) ---------------------------------------------

TEST(DeviceTypes, EverySpecEntryInSpecOrder) {
  ASSERT_EQ(DLMAP_DEVICE_TYPE_COUNT, SPEC_FACTS_DEVICE_TYPE_COUNT);
  for (size_t i = 0; i < SPEC_FACTS_DEVICE_TYPE_COUNT; i++) {
    const spec_facts_device_type &f = spec_facts_device_types[i];
    SCOPED_TRACE(f.name);
    const dlmap_device_info *info = dlmap_device_type_at(i);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(dlmap_device_type_find(f.value), info);
    EXPECT_EQ(info->value, f.value);
    EXPECT_STREQ(info->name, f.name);
    std::vector<std::string> names = {info->name};
    for (const std::string &s : List(info->spellings)) names.push_back(s);
    for (const std::string &s : List(info->aliases)) names.push_back(s);
    EXPECT_EQ(names, FactNames(f));
    for (const std::string &name : FactNames(f)) {
      int32_t value = -12345;
      EXPECT_TRUE(FromName(name, &value)) << name;
      EXPECT_EQ(value, f.value) << name;
    }
    EXPECT_STREQ(dlmap_platform_find(info->platform)->name, f.platform);
    EXPECT_STREQ(dlmap_memory_kind_name(info->memory), f.memory);
    EXPECT_STREQ(dlmap_stream_convention_name(info->stream), f.stream);
    EXPECT_EQ(info->introduced.major, f.introduced.major);
    EXPECT_EQ(info->introduced.minor, f.introduced.minor);
    EXPECT_EQ(info->upstream_main, f.released == 0);
  }
  EXPECT_EQ(dlmap_device_type_at(SPEC_FACTS_DEVICE_TYPE_COUNT), nullptr);
}

TEST(DeviceTypes, EveryInt32ValueNearTheTable) {
  // Values around and between the defined ones: exactly the spec's device types are found.
  std::set<int32_t> defined;
  for (const spec_facts_device_type &f : spec_facts_device_types) defined.insert(f.value);
  for (int32_t value = -300; value <= 300; value++) {
    EXPECT_EQ(dlmap_device_type_find(value) != nullptr, defined.count(value) == 1) << value;
  }
}

// The meaning is optional: a valid stream with out NULL is only validated.
TEST(StreamClassify, AValidStreamWithoutAnOut) {
  dlmap_error err;
  EXPECT_EQ(dlmap_stream_classify(2, true, 1, nullptr, &err), DLMAP_OK);  // kDLCUDA, 1: the legacy default stream
  EXPECT_EQ(dlmap_stream_classify(1, false, 0, nullptr, &err), DLMAP_OK);  // kDLCPU, None
}

}  // namespace
