// dlmap GPU tests — which drivers load the strided-copy kernels' committed PTX (issue 55), over the fake runtime
// (fake_cuda.yaml: the PTX first, a runtime compiler behind it). The fake driver reports a release through its
// driver_version entry point and refuses an image whose ".version" is above that release's PTX ISA with 222, as
// NVIDIA's drivers do. Five drivers × the runtime compiler absent, older (CUDA 11.0's ISA) and newer (one ISA above
// the driver's): wherever the spec's floor allows, the PTX loads and no compiler runs; elsewhere the compiler's build
// loads where the driver knows its ISA, else the memcpy path; and `dlmap devices`' driver line says which and why.
// The releases' facts are NVIDIA's (PTX ISA release notes), pinned by hand: a release's ISA never changes.
#include <cstdio>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fakeCtxSetCurrent(void *context);  // the driver's cuCtxSetCurrent in the fake

namespace {

struct Driver {
  const char *release;
  int version;  // what cuDriverGetVersion reports
  int isa;      // the highest PTX ISA it JIT-compiles, in tenths
};

const Driver kDrivers[] = {
    {"11.8", 11080, 78}, {"12.0", 12000, 80}, {"12.4", 12040, 84}, {"12.8", 12080, 87}, {"13.0", 13000, 90}};

enum Compiler { kAbsent, kOlder, kNewer };
const char *const kCompilerNames[] = {"absent", "older", "newer"};
const int kOlderCompilerIsa = 70;  // CUDA 11.0's NVRTC

std::string DriverLine() {
  char text[400];
  dlmap_platform_driver(DLMAP_PLATFORM_CUDA, text, sizeof text);
  return text;
}

std::string KernelStatus() {
  char text[400];
  dlmap_platform_kernels(DLMAP_PLATFORM_CUDA, text, sizeof text);
  return text;
}

std::string Isa(int tenths) { return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10); }

// The floor the library reports ("the kernels' PTX (ISA 7.0, sm_75)"): ISA tenths and the parenthesis' text.
int Floor(std::string *said) {
  const std::string line = DriverLine();
  const size_t at = line.find("the kernels' PTX (ISA ");
  if (at == std::string::npos) return -1;
  const size_t open = at + std::string("the kernels' PTX (").size();
  *said = line.substr(open, line.find(')', open) - open);
  int major = 0, minor = 0;
  return std::sscanf(line.c_str() + at + 22, "%d.%d", &major, &minor) == 2 ? major * 10 + minor : -1;
}

class DriverMatrix : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  void SetUp() override {
    fake_gpu_reset(1);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    ASSERT_TRUE(status.available) << status.reason;
    // A context of its own: kernels are loaded (or refused) once per context.
    void *context = fake_gpu_context_create(0);
    ASSERT_NE(context, nullptr);
    ASSERT_EQ(fakeCtxSetCurrent(context), 0);
  }
  void TearDown() override { fakeCtxSetCurrent(nullptr); }
};

TEST_P(DriverMatrix, ThePtxLoadsWhereverTheFloorAllows) {
  const Driver &d = kDrivers[std::get<0>(GetParam())];
  const Compiler compiler = static_cast<Compiler>(std::get<1>(GetParam()));
  const int compiler_isa = compiler == kAbsent ? 0 : compiler == kOlder ? kOlderCompilerIsa : d.isa + 1;
  fake_gpu_kernels_set_driver(d.version, d.isa);
  fake_gpu_kernels_set_compiler(compiler_isa);
  std::string floor_said;
  const int floor = Floor(&floor_said);
  ASSERT_GT(floor, 0) << DriverLine();
  ASSERT_LE(floor, 80) << "issue 55: every CUDA 12 and 13 driver must load the kernels";

  const bool usable = dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0);
  const fake_gpu_kernel_stats *k = fake_gpu_kernel_get_stats();
  const std::string cell = std::string("driver ") + d.release + ", compiler " + kCompilerNames[compiler];
  const std::string head = "driver " + std::to_string(d.version) + " (cuda " + d.release +
                           "): JIT-compiles PTX up to ISA " + Isa(d.isa) + "; ";
  if (d.isa >= floor) {
    EXPECT_TRUE(usable) << cell << ": " << KernelStatus();
    EXPECT_EQ(k->ptx_loads, 1) << cell;
    EXPECT_EQ(k->compiles, 0) << cell << ": the PTX loaded, no compiler runs";
    EXPECT_EQ(KernelStatus().rfind("loaded: the committed PTX through fakeModuleLoadData in ", 0), 0u)
        << cell << ": " << KernelStatus();
    EXPECT_EQ(DriverLine(), head + "the kernels' PTX (" + floor_said + ") loads") << cell;
    return;
  }
  // Below the floor: the PTX is refused, and the compiler's build loads only where the driver knows its ISA.
  EXPECT_EQ(k->compiles, compiler == kAbsent ? 0 : 1) << cell;
  EXPECT_EQ(usable, compiler != kAbsent && compiler_isa <= d.isa) << cell << ": " << KernelStatus();
  EXPECT_NE(KernelStatus().find("the PTX was refused: fakeModuleLoadData failed (error 222)"), std::string::npos)
      << cell << ": " << KernelStatus();
  EXPECT_EQ(DriverLine().rfind(head + "too old for the kernels' PTX (" + floor_said + "), which cuda ", 0), 0u)
      << cell << ": " << DriverLine();
}

INSTANTIATE_TEST_SUITE_P(DriversAndCompilers, DriverMatrix,
                         ::testing::Combine(::testing::Range(0, 5), ::testing::Values(kAbsent, kOlder, kNewer)));

// Outside the table's rows: older than its first release, between two releases (a newer minor), and a failed query.
TEST(DriverLine, SaysWhatTheTableDoesNotList) {
  fake_gpu_reset(1);
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  ASSERT_TRUE(status.available) << status.reason;
  fake_gpu_kernels_set_driver(10020, 65);
  EXPECT_EQ(DriverLine().rfind("driver 10020, older than cuda 11.0 (the oldest release the spec lists): not known "
                               "to JIT-compile the kernels' PTX (ISA ", 0), 0u) << DriverLine();
  fake_gpu_kernels_set_driver(13010, 91);
  EXPECT_EQ(DriverLine().rfind("driver 13010 (cuda 13.0 or newer): JIT-compiles PTX up to ISA 9.0 at least; the "
                               "kernels' PTX (ISA ", 0), 0u) << DriverLine();
  fake_gpu_kernels_fail_next("driver", 999);
  EXPECT_EQ(DriverLine(), "driver unknown: libdlmap_fake_gpu.so: fakeDriverGetVersion failed (error 999)");
  char text[200];
  dlmap_platform_driver(DLMAP_PLATFORM_CPU, text, sizeof text);
  EXPECT_STREQ(text, "none: the spec gives this platform's kernels no PTX");
  EXPECT_EQ(dlmap_platform_driver(DLMAP_PLATFORM_CUDA, text, 8), 7u) << "cut to the buffer";
}

}  // namespace
