// dlmap GPU tests — the sealed fake catches a host read of device memory (issue 63). This target alone links the
// library with `-Wl,--wrap=dlmap__gpu_locate_span`: the device-claim check of a real import then reads the tensor's
// first byte from the host before asking the runtime where it lives, the bug a GPU punishes with a SIGSEGV. On the
// sealed fake the import's process dies with SIGSEGV; with the fake's device memory left host-readable
// (DLMAP_FAKE_GPU_UNSEALED=1, as every fake before issue 63) the same planted read passes unnoticed. The planting is
// in this file and its target's link flags only: the library's sources and normal build carry none of it.
#include <csignal>
#include <cstdint>
#include <cstdlib>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fakeMalloc(void **ptr, size_t bytes);
extern "C" int fakeFree(void *ptr);

namespace {

int planted_reads = 0;

}  // namespace

// The planted bug: a host load of the tensor's lowest byte, then the real query. The backend's types are opaque here
// (pointers are passed through untouched).
extern "C" int32_t __real_dlmap__gpu_locate_span(const void *gpu, const void *lo, const void *hi, int32_t device,
                                                 void *out, void *err);
extern "C" int32_t __wrap_dlmap__gpu_locate_span(const void *gpu, const void *lo, const void *hi, int32_t device,
                                                 void *out, void *err) {
  const char first = *static_cast<const volatile char *>(lo);
  (void)first;
  planted_reads++;
  return __real_dlmap__gpu_locate_span(gpu, lo, hi, device, out, err);
}

namespace {

// In the death test's child: a view import of a CUDA device tensor, whose claim check runs the planted read. Exits 0
// when the import succeeded after the planted read ran, 3 when the import failed, 4 when nothing was planted.
void ImportDeviceTensor() {
  std::signal(SIGSEGV, SIG_DFL);  // a sanitizer's handler would turn the fault into an exit code
  std::signal(SIGBUS, SIG_DFL);
  fake_gpu_reset(2);
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);  // loads the runtime: claims are checked from then on
  if (!status.available) std::exit(5);
  void *device = nullptr;
  if (fakeMalloc(&device, 16) != 0) std::exit(6);
  int64_t shape[1] = {4};
  DLManagedTensorVersioned tensor = {};
  tensor.version = {1, 3};
  tensor.dl_tensor.data = device;
  tensor.dl_tensor.device = {kDLCUDA, 0};
  tensor.dl_tensor.ndim = 1;
  tensor.dl_tensor.dtype = {kDLFloat, 32, 1};
  tensor.dl_tensor.shape = shape;
  dlmap_import_request want = dlmap_import_request_default();
  dlmap_imported view;
  dlmap_error err;
  const int32_t rc = dlmap_import_versioned(&tensor, &want, &view, &err);
  if (rc == DLMAP_OK) dlmap_imported_release(&view);
  fakeFree(device);
  std::exit(rc != DLMAP_OK ? 3 : planted_reads > 0 ? 0 : 4);
}

bool KilledByAFault(int status) {
  return WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS);
}

TEST(PlantedHostRead, KillsTheProcessOnTheSealedFake) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_EQ(unsetenv("DLMAP_FAKE_GPU_UNSEALED"), 0);
  EXPECT_EXIT(ImportDeviceTensor(), KilledByAFault, "");
}

// The control: the same planted read on device memory the host can read exits cleanly. This is what made the bug
// class invisible before the fake was sealed.
TEST(PlantedHostRead, GoesUnnoticedWhenDeviceMemoryIsHostReadable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_EQ(setenv("DLMAP_FAKE_GPU_UNSEALED", "1", 1), 0);
  EXPECT_EXIT(ImportDeviceTensor(), ::testing::ExitedWithCode(0), "");
  ASSERT_EQ(unsetenv("DLMAP_FAKE_GPU_UNSEALED"), 0);
}

}  // namespace
