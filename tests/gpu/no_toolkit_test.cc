// dlmap GPU tests — the library as built on a machine without a CUDA toolkit or HIP runtime headers (config from
// third_party/toolchains/no_toolkit/dlmap_config.h): the GPU backend is built all the same, because it loads the vendor
// runtime with dlopen over the spec's symbol table, and finds an installed runtime (a framework's own libcudart, say) by
// the spec's library names alone.
#include <dlfcn.h>

#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include <dlmap_config.h>  // <>: the no-toolkit one, also unsandboxed (see src/backends/gpu_loader.c)

// LeakSanitizer (--config=asan): the HIP 5.2 runtime leaks per-thread state in every thread that calls
// hipGetDeviceCount; that is the vendor's allocation, suppressed by library name (as in tests/platforms_test.cc).
extern "C" const char *__lsan_default_suppressions();
extern "C" const char *__lsan_default_suppressions() { return "leak:libamdhip64.so\n"; }

namespace {

static_assert(DLMAP_HAS_CUDA == 0 && DLMAP_HAS_ROCM == 0, "this test is about a build that found no toolkit");

// The first of the spec's library names the dynamic loader finds here (no toolkit path), or "".
std::string InstalledRuntime(dlmap_platform platform) {
  for (const char *const *lib = dlmap_platform_find(platform)->libraries; *lib != nullptr; lib++) {
    void *handle = dlopen(*lib, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return *lib;  // stays open: a vendor runtime is not unloaded
  }
  return "";
}

class NoToolkit : public ::testing::TestWithParam<dlmap_platform> {};

TEST_P(NoToolkit, TheBackendIsBuiltAndLooksForTheRuntimeByTheSpecsNames) {
  dlmap_platform_status status;
  dlmap_platform_probe(GetParam(), &status);
  const std::string name = dlmap_platform_find(GetParam())->name;
  EXPECT_TRUE(status.built) << name << ": " << status.reason;
  const std::string reason = status.reason;
  const std::string installed = InstalledRuntime(GetParam());
  if (installed.empty()) {
    EXPECT_FALSE(status.available);
    EXPECT_EQ(reason.rfind("cannot load the runtime: ", 0), 0u) << reason;
    std::cout << name << ": no runtime installed here: " << reason << "\n";
    return;
  }
  // Installed: served (a driver and a device), or the vendor's own reason why not, naming its device count call.
  if (status.available) {
    EXPECT_GT(status.device_count, 0);
    EXPECT_EQ(reason, "");
  } else {
    const std::string call = dlmap_platform_find(GetParam())->device_count_symbol;
    EXPECT_NE(reason.find("(" + call + " returned "), std::string::npos) << reason;
  }
  std::cout << name << ": " << installed << " found by name; " << (status.available ? "available" : reason) << "\n";
}

INSTANTIATE_TEST_SUITE_P(GpuPlatforms, NoToolkit, ::testing::Values(DLMAP_PLATFORM_CUDA, DLMAP_PLATFORM_ROCM),
                         [](const ::testing::TestParamInfo<dlmap_platform> &info) {
                           return std::string(dlmap_platform_find(info.param)->name);
                         });

}  // namespace
