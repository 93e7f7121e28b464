// dlmap GPU tests — the strided-copy kernels failing to load into a context, over the fake's module API and runtime
// compiler: a function the module lacks, a compiler that cannot start, one whose code cannot be read, a build the
// driver refuses, and a failed build whose log cannot be had. Each leaves that context without kernels (dlmap_platform_kernels_load false), says why in the
// platform's kernel status, and leaves the thread its context. Each case loads into a context of its own (a
// non-primary one), since a context's kernels are loaded once.
#include <string>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fakeCtxSetCurrent(void *context);  // the driver's cuCtxSetCurrent in the fake

namespace {

std::string KernelStatus() {
  char text[512];
  dlmap_platform_kernels(DLMAP_PLATFORM_CUDA, text, sizeof text);
  return text;
}

class KernelLoadFailure : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    ASSERT_TRUE(status.available) << status.reason;
  }
  void TearDown() override { fake_gpu_reset(2); }

  // dlmap_platform_kernels_load(device 0) on a fresh context of device 0, made current for the call; checks the
  // thread's context is the fresh one afterwards (it had one: dlmap gives it back), then makes none current.
  static bool LoadOnAFreshContext() {
    void *context = fake_gpu_context_create(0);
    EXPECT_NE(context, nullptr) << "the fake has no more contexts";
    EXPECT_EQ(fakeCtxSetCurrent(context), 0);
    const bool loaded = dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0);
    EXPECT_EQ(fake_gpu_current_context(), context);
    fakeCtxSetCurrent(nullptr);
    return loaded;
  }
};

TEST_F(KernelLoadFailure, AFunctionTheModuleLacks) {
  fake_gpu_kernels_fail_next("function", FAKE_NOT_FOUND);
  EXPECT_FALSE(LoadOnAFreshContext());
  EXPECT_NE(KernelStatus().find("fakeModuleGetFunction failed (error 500) for "), std::string::npos)
      << KernelStatus();
  EXPECT_NE(KernelStatus().find("; layout copies take the memcpy path"), std::string::npos) << KernelStatus();
}

TEST_F(KernelLoadFailure, ACompilerThatCannotStart) {
  fake_gpu_kernels_refuse_ptx(1);
  fake_gpu_kernels_set_compiler(0);
  EXPECT_FALSE(LoadOnAFreshContext());
  EXPECT_NE(KernelStatus().find("fakertcCreateProgram failed (error 500)"), std::string::npos) << KernelStatus();
  EXPECT_EQ(fake_gpu_kernel_get_stats()->compiles, 0);
}

TEST_F(KernelLoadFailure, ACompilerWhoseCodeCannotBeRead) {
  for (const char *op : {"code_size", "code"}) {
    fake_gpu_reset(2);
    fake_gpu_kernels_refuse_ptx(1);
    fake_gpu_kernels_fail_next(op, FAKE_OUT_OF_MEMORY);
    EXPECT_FALSE(LoadOnAFreshContext()) << op;
    const std::string symbol = std::string(op) == "code" ? "fakertcGetCode" : "fakertcGetCodeSize";
    EXPECT_NE(KernelStatus().find(symbol + " failed (error 2)"), std::string::npos) << KernelStatus();
    EXPECT_EQ(fake_gpu_kernel_get_stats()->compiles, 1) << op;
    EXPECT_EQ(fake_gpu_kernel_get_stats()->built_loads, 0) << op << ": no build to load";
  }
}

// The compiler is newer than the driver: its build declares an ISA the driver does not load (222).
TEST_F(KernelLoadFailure, ABuildTheDriverRefuses) {
  fake_gpu_kernels_refuse_ptx(1);
  fake_gpu_kernels_set_driver(12040, 84);
  fake_gpu_kernels_set_compiler(90);
  EXPECT_FALSE(LoadOnAFreshContext());
  EXPECT_EQ(fake_gpu_kernel_get_stats()->built_loads, 1);
  EXPECT_NE(KernelStatus().find("built by libdlmap_fake_gpu.so and fakeModuleLoadData failed (error 222)"),
            std::string::npos)
      << KernelStatus();
}

// The build fails and its log cannot be had (its size query fails, it is empty, or its read fails): the status names
// the failed call and stops there, with no log text.
TEST_F(KernelLoadFailure, AFailedBuildWithoutItsLog) {
  for (int mode : {FAKE_LOG_SIZE_FAILS, FAKE_LOG_EMPTY, FAKE_LOG_FAILS}) {
    fake_gpu_reset(2);
    fake_gpu_kernels_refuse_ptx(1);
    fake_gpu_kernels_fail_next("compile", 6);
    fake_gpu_kernels_set_log(mode);
    EXPECT_FALSE(LoadOnAFreshContext()) << mode;
    EXPECT_NE(KernelStatus().find("fakertcCompileProgram failed (error 6); layout copies take the memcpy path"),
              std::string::npos)
        << mode << ": " << KernelStatus();
    EXPECT_EQ(fake_gpu_kernel_get_stats()->compiles, 1) << mode;
  }
}

}  // namespace
