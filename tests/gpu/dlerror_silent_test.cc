// dlmap GPU tests — a library the spec names that does not load, with dlerror() answering NULL (wrapped at link time,
// for dlmap's calls only): each reason still names the library, never a NULL string. One source, one library per
// fake_cuda.yaml variant (BUILD: the runtime, the driver's context entry points, the module API, the runtime compiler
// that do not load).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" {
char *__real_dlerror(void);
static int g_dlerror_calls;  // how many times dlmap asked (so a test that reaches no dlerror cannot pass)
char *__wrap_dlerror(void) {
  g_dlerror_calls++;
  __real_dlerror();  // clears the error state, as the call it stands for would
  return nullptr;
}
}

namespace {

[[maybe_unused]] dlmap_platform_status Probe() {
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  return status;
}

#if defined(VARIANT_NO_RUNTIME)

// No library of the spec's loads: the reason names the one it tried.
TEST(DlerrorSilent, NoRuntimeLibraryNamesTheLibrary) {
  const dlmap_platform_status status = Probe();
  EXPECT_TRUE(status.built);
  EXPECT_FALSE(status.available);
  EXPECT_STREQ(status.reason, "cannot load the runtime: libdlmap_no_such_runtime.so");
  EXPECT_GT(g_dlerror_calls, 0);
}

#elif defined(VARIANT_NO_DRIVER)

// The runtime starts, the driver library of the context entry points does not load: the reason names it.
TEST(DlerrorSilent, NoDriverLibraryNamesTheLibrary) {
  fake_gpu_reset(2);
  const dlmap_platform_status status = Probe();
  EXPECT_TRUE(status.built);
  EXPECT_FALSE(status.available);
  EXPECT_STREQ(status.reason, "cannot load the driver's context entry points: libdlmap_no_such_driver.so");
  EXPECT_GT(g_dlerror_calls, 0);
}

#elif defined(VARIANT_NO_MODULE_API)

// The module API's library does not load: the kernels' status and the driver's text both name it.
TEST(DlerrorSilent, NoModuleApiLibraryNamesTheLibrary) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
  fake_gpu_reset(2);
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0));
  char text[512];
  dlmap_platform_kernels(DLMAP_PLATFORM_CUDA, text, sizeof text);
  EXPECT_STREQ(text, "not used: cannot load libdlmap_no_such_module_api.so: dlopen failed");
  const int calls = g_dlerror_calls;
  EXPECT_GT(calls, 0);
  dlmap_platform_driver(DLMAP_PLATFORM_CUDA, text, sizeof text);
  EXPECT_STREQ(text, "driver unknown: cannot load libdlmap_no_such_module_api.so: dlopen failed");
  EXPECT_GT(g_dlerror_calls, calls);
}

#elif defined(VARIANT_NO_COMPILER)

// The PTX is refused and no runtime compiler loads: the status names the first compiler library tried.
TEST(DlerrorSilent, NoCompilerLibraryNamesTheFirstLibrary) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
  fake_gpu_reset(2);
  fake_gpu_kernels_refuse_ptx(1);
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0));
  char text[512];
  dlmap_platform_kernels(DLMAP_PLATFORM_CUDA, text, sizeof text);
  EXPECT_NE(std::string(text).find("; no runtime compiler: libdlmap_fake_nvrtc_absent.so"), std::string::npos)
      << text;
  EXPECT_EQ(std::string(text).find("(null)"), std::string::npos) << text;
  EXPECT_GT(g_dlerror_calls, 0);
}

#endif

}  // namespace
