// Tests of src/platforms.c (every public dlmap_platform_* function): platform info from the spec, and probing whether a platform can be served here.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"
#include "gtest/gtest.h"
#include "tests/c_callers.h"

// LeakSanitizer (--config=asan): the HIP 5.2 runtime leaks ~400 bytes of per-thread state in every thread that calls
// hipGetDeviceCount (seen with no AMD GPU present); that is the vendor's allocation, not dlmap's, so it is suppressed
// by library name. Every other leak still fails the test. Unused outside sanitizer builds.
extern "C" const char *__lsan_default_suppressions();
extern "C" const char *__lsan_default_suppressions() { return "leak:libamdhip64.so\n"; }

namespace {

struct Expected {
  dlmap_platform platform;
  const char *name;
  dlmap_backend backend;
  std::vector<std::string> aliases;
  std::vector<std::string> version_words;
  std::vector<std::string> libraries;
  const char *device_count_symbol;  // nullptr: no runtime
  const char *error_string_symbol;
};

// The platforms of the spec as of DLPack 1.3, by hand: what must never change (the spec may add platforms and
// aliases; the whole list is spec_facts').
const std::vector<Expected> &Table() {
  static const std::vector<Expected> table = {
      {DLMAP_PLATFORM_CPU, "cpu", DLMAP_BACKEND_CPU, {"host"}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_CUDA,
       "cuda",
       DLMAP_BACKEND_GPU,
       {"nvidia"},
       {"cuda"},
       {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11", "libcudart.so"},
       "cudaGetDeviceCount",
       "cudaGetErrorString"},
      {DLMAP_PLATFORM_ROCM,
       "rocm",
       DLMAP_BACKEND_GPU,
       {"hip", "amd"},
       {"rocm"},
       {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"},
       "hipGetDeviceCount",
       "hipGetErrorString"},
      {DLMAP_PLATFORM_ONEAPI, "oneapi", DLMAP_BACKEND_NONE, {"sycl", "xpu"}, {"oneapi"}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_METAL, "metal", DLMAP_BACKEND_NONE, {"mps"}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_OPENCL, "opencl", DLMAP_BACKEND_NONE, {}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_VULKAN, "vulkan", DLMAP_BACKEND_NONE, {}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_WEBGPU, "webgpu", DLMAP_BACKEND_NONE, {}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_HEXAGON, "hexagon", DLMAP_BACKEND_NONE, {}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_MAIA, "maia", DLMAP_BACKEND_NONE, {}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_TRN, "trn", DLMAP_BACKEND_NONE, {"trainium", "neuron"}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_TPU, "tpu", DLMAP_BACKEND_NONE, {}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_ASCEND, "ascend", DLMAP_BACKEND_NONE, {"npu"}, {}, {}, nullptr, nullptr},
      {DLMAP_PLATFORM_NONE, "none", DLMAP_BACKEND_NONE, {}, {}, {}, nullptr, nullptr},
  };
  return table;
}

std::vector<std::string> List(const char *const *names) {
  std::vector<std::string> out;
  EXPECT_NE(names, nullptr) << "lists are never NULL, only empty";
  for (const char *const *n = names; n != nullptr && *n != nullptr; n++) out.push_back(*n);
  return out;
}

void ExpectSymbol(const char *actual, const char *expected) {
  if (expected == nullptr) {
    EXPECT_EQ(actual, nullptr);
  } else {
    ASSERT_NE(actual, nullptr);
    EXPECT_STREQ(actual, expected);
  }
}

// Probes with the status pre-filled with garbage, and checks the reason is a terminated string.
dlmap_platform_status Probe(int platform) {
  dlmap_platform_status status;
  memset(&status, 0x5a, sizeof status);
  c_platform_probe(platform, &status);
  EXPECT_NE(memchr(status.reason, '\0', sizeof status.reason), nullptr) << "reason not NUL-terminated";
  return status;
}

// ---- platform info -------------------------------------------------------------------------------------------

TEST(Platforms, HandWrittenTable) {
  for (const Expected &e : Table()) {
    SCOPED_TRACE(e.name);
    const dlmap_platform_info *info = dlmap_platform_find(e.platform);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->platform, e.platform);
    EXPECT_STREQ(info->name, e.name);
    EXPECT_EQ(info->backend, e.backend);
    const std::vector<std::string> aliases = List(info->aliases);
    EXPECT_TRUE(aliases.size() >= e.aliases.size() && std::equal(e.aliases.begin(), e.aliases.end(), aliases.begin()))
        << "an alias of an existing platform was removed";
    EXPECT_EQ(List(info->version_words), e.version_words);
    EXPECT_EQ(List(info->libraries), e.libraries);
    ExpectSymbol(info->device_count_symbol, e.device_count_symbol);
    ExpectSymbol(info->error_string_symbol, e.error_string_symbol);
    ASSERT_NE(info->doc, nullptr);
    EXPECT_STRNE(info->doc, "");
  }
}

TEST(Platforms, EverySpecPlatformInSpecOrder) {
  ASSERT_EQ(DLMAP_PLATFORM_COUNT, SPEC_FACTS_PLATFORM_COUNT);
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) {
    const spec_facts_platform &f = spec_facts_platforms[p];
    SCOPED_TRACE(f.name);
    const dlmap_platform_info *info = dlmap_platform_find(static_cast<dlmap_platform>(p));
    ASSERT_NE(info, nullptr);
    EXPECT_STREQ(info->name, f.name);
    const std::string backend = f.backend;
    EXPECT_EQ(info->backend, backend == "cpu" ? DLMAP_BACKEND_CPU : backend == "gpu" ? DLMAP_BACKEND_GPU
                                                                                        : DLMAP_BACKEND_NONE);
    std::vector<std::string> names = {f.name};
    for (const char *const *a = f.aliases; *a != nullptr; a++) names.push_back(*a);
    std::vector<std::string> aliases = List(info->aliases);
    EXPECT_EQ(std::vector<std::string>(names.begin() + 1, names.end()), aliases);
    for (const std::string &name : names) {
      dlmap_platform found = DLMAP_PLATFORM_COUNT;
      EXPECT_TRUE(dlmap_platform_parse(name.data(), name.size(), &found)) << name;
      EXPECT_EQ(static_cast<int>(found), p) << name;
    }
  }
}

TEST(Platforms, OutOfRange) {
  EXPECT_EQ(dlmap_platform_find(DLMAP_PLATFORM_COUNT), nullptr);
  for (int p : {-1, static_cast<int>(DLMAP_PLATFORM_COUNT) + 1, 1000, INT_MIN, INT_MAX}) {
    EXPECT_EQ(c_platform_get(p), nullptr) << p;
  }
  ASSERT_NE(c_platform_get(1), nullptr);
  EXPECT_STREQ(c_platform_get(1)->name, "cuda");
}

TEST(Platforms, EveryEntry) {
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) {
    const dlmap_platform_info *info = dlmap_platform_find(static_cast<dlmap_platform>(p));
    ASSERT_NE(info, nullptr);
    SCOPED_TRACE(info->name);
    EXPECT_EQ(static_cast<int>(info->platform), p);
    // A runtime (libraries and both symbols) exactly for the GPU backend.
    const bool has_runtime = info->device_count_symbol != nullptr;
    EXPECT_EQ(has_runtime, info->backend == DLMAP_BACKEND_GPU);
    EXPECT_EQ(info->error_string_symbol != nullptr, has_runtime);
    EXPECT_EQ(!List(info->libraries).empty(), has_runtime);
    // The platform's name and version words lead back to it.
    dlmap_platform found = DLMAP_PLATFORM_COUNT;
    EXPECT_TRUE(dlmap_platform_parse(info->name, strlen(info->name), &found));
    EXPECT_EQ(static_cast<int>(found), p);
    for (const std::string &word : List(info->version_words)) {
      found = DLMAP_PLATFORM_COUNT;
      EXPECT_EQ(dlmap_platform_lookup_by_version(("runtime " + word + " 1.0").c_str(), &found, nullptr), DLMAP_OK);
      EXPECT_EQ(static_cast<int>(found), p) << word;
    }
  }
}

TEST(Platforms, DeviceTypesPointAtPlatforms) {
  // Every platform except cpu and none is served by at least one device type, and kDLCPU is cpu's.
  EXPECT_EQ(dlmap_device_type_find(1)->platform, DLMAP_PLATFORM_CPU);
  for (const Expected &e : Table()) {
    if (e.platform == DLMAP_PLATFORM_NONE) continue;
    bool used = false;
    for (size_t i = 0; dlmap_device_type_at(i) != nullptr; i++) used |= dlmap_device_type_at(i)->platform == e.platform;
    EXPECT_TRUE(used) << e.name;
  }
}

// ---- probing ---------------------------------------------------------------------------------------------------

TEST(PlatformProbe, Cpu) {
  const dlmap_platform_status status = Probe(DLMAP_PLATFORM_CPU);
  EXPECT_TRUE(status.built);
  EXPECT_TRUE(status.available);
  EXPECT_EQ(status.device_count, 1);
  EXPECT_STREQ(status.reason, "");
}

TEST(PlatformProbe, NoBackend) {
  for (const Expected &e : Table()) {
    if (e.backend != DLMAP_BACKEND_NONE) continue;
    SCOPED_TRACE(e.name);
    const dlmap_platform_status status = Probe(e.platform);
    EXPECT_FALSE(status.built);
    EXPECT_FALSE(status.available);
    EXPECT_EQ(status.device_count, 0);
    EXPECT_STREQ(status.reason, "no dlmap backend serves this platform");
  }
}

TEST(PlatformProbe, OutOfRange) {
  for (int p : {static_cast<int>(DLMAP_PLATFORM_COUNT), -1, 1000, INT_MIN, INT_MAX}) {
    SCOPED_TRACE(p);
    const dlmap_platform_status status = Probe(p);
    EXPECT_FALSE(status.built);
    EXPECT_FALSE(status.available);
    EXPECT_EQ(status.device_count, 0);
    EXPECT_STREQ(status.reason, "not a platform of this build's spec");
  }
}

// CUDA and ROCm: the toolkit may be present without a GPU or driver; the probe must be honest either way.
void ExpectHonestGpuProbe(dlmap_platform platform) {
  const dlmap_platform_status status = Probe(platform);
  std::cout << "[ probe    ] " << dlmap_platform_find(platform)->name << ": built=" << status.built
            << " available=" << status.available << " device_count=" << status.device_count << " reason=\""
            << status.reason << "\"" << std::endl;
  if (status.available) {
    EXPECT_TRUE(status.built);
    EXPECT_GT(status.device_count, 0);
    EXPECT_STREQ(status.reason, "");
  } else {
    EXPECT_EQ(status.device_count, 0);
    EXPECT_STRNE(status.reason, "") << "an unavailable platform says why";
  }
  // Probing again (the runtime stays loaded) gives the same answer.
  const dlmap_platform_status again = Probe(platform);
  EXPECT_EQ(again.built, status.built);
  EXPECT_EQ(again.available, status.available);
  EXPECT_EQ(again.device_count, status.device_count);
  EXPECT_STREQ(again.reason, status.reason);
}

TEST(PlatformProbe, Cuda) { ExpectHonestGpuProbe(DLMAP_PLATFORM_CUDA); }

TEST(PlatformProbe, Rocm) { ExpectHonestGpuProbe(DLMAP_PLATFORM_ROCM); }

TEST(PlatformProbe, FromManyThreadsAtOnce) {
  // Probing is documented as safe from any thread. The threads probe before this test's own reference probe, so
  // run alone (--gtest_filter=PlatformProbe.FromManyThreadsAtOnce) they also race to load the GPU runtimes.
  constexpr int kThreads = 4;
  static dlmap_platform_status seen[kThreads][DLMAP_PLATFORM_COUNT];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([t] {
      for (int round = 0; round < 20; round++) {
        for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) dlmap_platform_probe(static_cast<dlmap_platform>(p), &seen[t][p]);
      }
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) {
    const dlmap_platform_status reference = Probe(p);
    for (int t = 0; t < kThreads; t++) {
      SCOPED_TRACE(testing::Message() << "platform " << p << " thread " << t);
      EXPECT_EQ(seen[t][p].built, reference.built);
      EXPECT_EQ(seen[t][p].available, reference.available);
      EXPECT_EQ(seen[t][p].device_count, reference.device_count);
      EXPECT_STREQ(seen[t][p].reason, reference.reason);
    }
  }
}

// A platform without a GPU runtime (the CPU's) or not in the table has no allocator to name: the text says which.
TEST(Platforms, AllocatorOfAPlatformWithoutARuntime) {
  char text[128];
  ASSERT_GT(dlmap_platform_allocator(DLMAP_PLATFORM_CPU, text, sizeof text), 0u);
  EXPECT_STREQ(text, "none: the platform has no GPU runtime");
  ASSERT_EQ(dlmap_platform_find(DLMAP_PLATFORM_COUNT), nullptr);
  ASSERT_GT(dlmap_platform_allocator(DLMAP_PLATFORM_COUNT, text, sizeof text), 0u);
  EXPECT_STREQ(text, "none: the platform has no GPU runtime");
  dlmap_platform_status rocm;
  dlmap_platform_probe(DLMAP_PLATFORM_ROCM, &rocm);
  // A GPU platform: where its runtime is not available (no ROCm on CI) it has no allocator yet; either way it is never
  // the text of a platform without a GPU runtime.
  ASSERT_GT(dlmap_platform_allocator(DLMAP_PLATFORM_ROCM, text, sizeof text), 0u);
  if (!rocm.available) EXPECT_STREQ(text, "none: the runtime is not loaded and started");
  EXPECT_STRNE(text, "none: the platform has no GPU runtime");
}

}  // namespace
