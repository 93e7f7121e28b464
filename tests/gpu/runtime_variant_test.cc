// dlmap GPU tests — the fake runtime under specs that each change one thing of fake_cuda.yaml (BUILD: the variants'
// sed expressions): a stream-ordered allocator or default pools the runtime is too old for or lacks a symbol of, a
// driver library for the context entry points that does not load or lacks one, no pointer-attributes layout for the
// runtime's version, a module API or runtime compiler that cannot be had, a driver without its version entry point,
// PTX of a newer ISA, a HIP-shaped runtime (no driver contexts, managed memory by an isManaged field), and two
// libraries that each lack an entry point. One source, one library per variant (VARIANT_*).
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

[[maybe_unused]] std::string Allocator() {
  char text[512];
  dlmap_platform_allocator(DLMAP_PLATFORM_CUDA, text, sizeof text);
  return text;
}

[[maybe_unused]] dlmap_platform_status Probe() {
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  return status;
}

// Exports Values(n) to `type` and checks the bytes; returns the fake's stats of the export (reset before it).
[[maybe_unused]] fake_gpu_stats ExportValues(int32_t type, int32_t id = 0) {
  fake_gpu_reset(2);
  std::vector<float> data = Values(8);
  std::vector<int64_t> shape = {8};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request request = ExportTo(type, id);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  if (out.legacy == nullptr) return *fake_gpu_get_stats();
  EXPECT_EQ(fake_gpu_synchronize_all(), 0);
  const void *copy = out.legacy->dl_tensor.data;
  std::vector<float> got = fake_gpu_memory_type(copy, 32, nullptr) == FAKE_DEVICE
                               ? fake_gpu_values<float>(copy, 8)
                               : std::vector<float>(static_cast<const float *>(copy),
                                                    static_cast<const float *>(copy) + 8);
  EXPECT_EQ(got, data);
  const fake_gpu_stats stats = *fake_gpu_get_stats();
  out.legacy->deleter(out.legacy);
  return stats;
}

#if defined(VARIANT_OLD_ALLOCATOR) || defined(VARIANT_LACKING_ALLOCATOR) || defined(VARIANT_LACKING_FREE_ASYNC)

// Device copies come from the synchronous allocator, which says why not the stream-ordered one; no pool is used for
// any kind (the pools go back by the stream-ordered free).
TEST(RuntimeVariant, TheSynchronousAllocatorServesAndSaysWhy) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
#ifdef VARIANT_OLD_ALLOCATOR
  EXPECT_EQ(Allocator(), "synchronous: fakeMalloc/fakeFree (runtime 12040 is older than 99999, which brought "
                         "fakeMallocAsync)");
#elif defined(VARIANT_LACKING_ALLOCATOR)
  EXPECT_EQ(Allocator(), "synchronous: fakeMalloc/fakeFree (the runtime lacks fakeNoSuchMallocAsync)");
#else
  EXPECT_EQ(Allocator(), "synchronous: fakeMalloc/fakeFree (the runtime lacks fakeNoSuchFreeAsync)");
#endif
  for (int32_t type : {DLMAP_DEVICE_CUDA, DLMAP_DEVICE_CUDAHOST, DLMAP_DEVICE_CUDAMANAGED}) {
    const fake_gpu_stats stats = ExportValues(type);
    EXPECT_EQ(stats.pool_allocations, 0) << type;
    EXPECT_EQ(stats.allocations, 1) << type;
    EXPECT_GE(stats.device_syncs, 1) << type << ": the synchronous allocator";
  }
}

#elif defined(VARIANT_OLD_POOLS) || defined(VARIANT_LACKING_POOLS) || defined(VARIANT_LACKING_POOL_DEFAULT)

// Device copies are stream-ordered; pinned and managed ones come from their synchronous allocators, and the allocator
// text says why not the pools.
TEST(RuntimeVariant, PinnedAndManagedMemoryComeFromTheirSynchronousAllocators) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
#ifdef VARIANT_OLD_POOLS
  const char *why = "runtime older than 99999";
#elif defined(VARIANT_LACKING_POOL_DEFAULT)
  const char *why = "the runtime lacks fakeNoSuchMemGetDefaultMemPool";  // the first it lacks, of the three
#else
  const char *why = "the runtime lacks fakeNoSuchMemPoolSetAccess";
#endif
  EXPECT_EQ(Allocator(), std::string("stream-ordered: fakeMallocAsync/fakeFreeAsync (runtime 12040; since 11020); "
                                     "host_pinned managed memory: their synchronous allocators (") +
                             why + ")");
  EXPECT_EQ(ExportValues(DLMAP_DEVICE_CUDA).pool_allocations, 1);
  for (int32_t type : {DLMAP_DEVICE_CUDAHOST, DLMAP_DEVICE_CUDAMANAGED}) {
    const fake_gpu_stats stats = ExportValues(type);
    EXPECT_EQ(stats.pool_allocations, 0) << type;
    EXPECT_EQ(stats.allocations, 1) << type;
    EXPECT_STREQ(stats.last_device_sync, type == DLMAP_DEVICE_CUDAHOST ? "malloc_host" : "malloc_managed");
  }
}

#elif defined(VARIANT_NO_DRIVER) || defined(VARIANT_LACKING_RETAIN) || defined(VARIANT_LACKING_GET_CURRENT) || \
    defined(VARIANT_LACKING_SET_CURRENT)

// The runtime starts, but the driver's context entry points the spec names cannot be had: the platform is not
// available, with the reason, and nothing is exchanged.
TEST(RuntimeVariant, ADriverWithoutTheContextEntryPointsLeavesThePlatformUnavailable) {
  fake_gpu_reset(2);
  const dlmap_platform_status status = Probe();
  EXPECT_TRUE(status.built);
  EXPECT_FALSE(status.available);
#ifdef VARIANT_NO_DRIVER
  EXPECT_STREQ(status.reason, "cannot load the driver's context entry points: libdlmap_no_such_driver.so: cannot open "
                              "shared object file: No such file or directory");
#elif defined(VARIANT_LACKING_RETAIN)
  EXPECT_STREQ(status.reason, "the driver lacks fakeNoSuchPrimaryCtxRetain");
#elif defined(VARIANT_LACKING_SET_CURRENT)
  EXPECT_STREQ(status.reason, "the driver lacks fakeNoSuchCtxSetCurrent");
#else
  EXPECT_STREQ(status.reason, "the driver lacks fakeNoSuchCtxGetCurrent");
#endif
  std::vector<float> data = Values(4);
  std::vector<int64_t> shape = {4};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_ERR_PLATFORM_UNAVAILABLE);
  EXPECT_EQ(fake_gpu_get_stats()->allocations, 0);
}

#elif defined(VARIANT_NO_LAYOUT)

// The spec has no pointer-attributes layout for the runtime's version: a pointer query is backend_call_failed with
// that reason, never a guess at where the memory lives.
TEST(RuntimeVariant, NoLayoutForTheRuntimesVersionIsAnError) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
  fake_gpu_reset(2);
  std::vector<float> data = Values(4);
  dlmap_memory_kind kind;
  dlmap_error err;
  EXPECT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CUDA, data.data(), &kind, nullptr, &err), DLMAP_ERR_BACKEND_CALL_FAILED);
  EXPECT_STREQ(err.message, "cuda runtime call fakePointerGetAttributes failed: the spec lists no pointer-attributes "
                            "layout for this runtime version");
}

#elif defined(VARIANT_NO_MODULE_API) || defined(VARIANT_NO_COMPILER) || defined(VARIANT_LACKING_COMPILER_CODE) || \
    defined(VARIANT_LACKING_MODULE_LOAD) || defined(VARIANT_LACKING_MODULE_FUNCTION) || defined(VARIANT_NO_KERNELS) || \
    defined(VARIANT_NO_COMPILER_ROW)

[[maybe_unused]] std::string KernelStatus() {
  char text[512];
  dlmap_platform_kernels(DLMAP_PLATFORM_CUDA, text, sizeof text);
  return text;
}

// The kernels cannot be had (the module API does not load; the PTX is refused and no compiler can build the source):
// no kernels, the status says why, and a transposed copy still arrives, by the runtime's copies.
TEST(RuntimeVariant, WithoutKernelsTheStatusSaysWhyAndCopiesStillArrive) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
  fake_gpu_reset(2);
#if defined(VARIANT_NO_COMPILER) || defined(VARIANT_LACKING_COMPILER_CODE) || defined(VARIANT_NO_COMPILER_ROW)
  fake_gpu_kernels_refuse_ptx(1);
#endif
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0));
#ifdef VARIANT_LACKING_MODULE_LOAD
  EXPECT_EQ(KernelStatus(), "not used: the library lacks fakeNoSuchModuleLoadData");
#elif defined(VARIANT_LACKING_MODULE_FUNCTION)
  EXPECT_EQ(KernelStatus(), "not used: the library lacks fakeNoSuchModuleGetFunction");
#elif defined(VARIANT_NO_KERNELS)
  EXPECT_EQ(KernelStatus(), "none: the spec names no kernels for this platform");
#elif defined(VARIANT_NO_COMPILER_ROW)
  EXPECT_EQ(KernelStatus().rfind("not used: the PTX was refused: fakeModuleLoadData failed (error 222); layout copies "
                                 "take the memcpy path", 0),
            0u)
      << KernelStatus();
#elif defined(VARIANT_NO_MODULE_API)
  EXPECT_EQ(KernelStatus(), "not used: cannot load libdlmap_no_such_module_api.so: libdlmap_no_such_module_api.so: "
                            "cannot open shared object file: No such file or directory");
#elif defined(VARIANT_NO_COMPILER)
  EXPECT_NE(KernelStatus().find("; no runtime compiler: libdlmap_fake_nvrtc_absent.so: cannot open shared object "
                                "file: No such file or directory"),
            std::string::npos)
      << KernelStatus();
#else
  EXPECT_NE(KernelStatus().find("; libdlmap_fake_gpu.so lacks fakertcNoSuchGetCode"), std::string::npos)
      << KernelStatus();
#endif
  std::vector<float> data = Values(12);
  const std::vector<int64_t> shape = {4, 3}, transposed = {1, 4};
  dlmap_array host = HostArray(data.data(), shape, transposed);
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_values<float>(out.legacy->dl_tensor.data, 12), Expected(data.data(), shape, transposed));
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 0);
  out.legacy->deleter(out.legacy);
}

#elif defined(VARIANT_LACKING_DRIVER_VERSION) || defined(VARIANT_NEWER_PTX)

[[maybe_unused]] std::string Driver() {
  char text[512];
  dlmap_platform_driver(DLMAP_PLATFORM_CUDA, text, sizeof text);
  return text;
}

#ifdef VARIANT_LACKING_DRIVER_VERSION
// The module API's library has no driver-version entry point: the driver is unknown, and the text names the symbol.
TEST(RuntimeVariant, ADriverWithoutItsVersionIsUnknown) {
  EXPECT_EQ(Driver(), "driver unknown: libdlmap_fake_gpu.so lacks fakeNoSuchDriverGetVersion");
}
#else
// PTX declaring ISA 8.0: a CUDA 11.8 driver (ISA 7.8) is too old, and the text names the oldest release that loads it.
TEST(RuntimeVariant, ADriverTooOldForThePtxNamesTheReleaseThatLoadsIt) {
  fake_gpu_reset(2);
  fake_gpu_kernels_set_driver(11080, 78);
  EXPECT_EQ(Driver(), "driver 11080 (cuda 11.8): JIT-compiles PTX up to ISA 7.8; too old for the kernels' PTX (ISA "
                      "8.0, sm_75), which cuda 12.0's driver or newer loads");
}
#endif

#elif defined(VARIANT_NO_RUNTIME)

// No library of the spec's loads: the platform is built but unavailable, and a second probe (which looks only among
// the libraries the process has loaded since) gives the first search's reason.
TEST(RuntimeVariant, NoRuntimeLibraryLeavesThePlatformUnavailableWithTheSameReason) {
  const char *reason = "cannot load the runtime: libdlmap_no_such_runtime.so: cannot open shared object file: No such "
                       "file or directory";
  for (int probe = 0; probe < 2; probe++) {
    const dlmap_platform_status status = Probe();
    EXPECT_TRUE(status.built);
    EXPECT_FALSE(status.available);
    EXPECT_STREQ(status.reason, reason) << "probe " << probe;
  }
}

#elif defined(VARIANT_TWO_LACKING)

// Two libraries that load but each lack an entry point of the table (the C library lacks every one, the fake that
// cannot start lacks one the spec renamed): the platform is unavailable, and the reason is the first library's.
TEST(RuntimeVariant, TheFirstLibraryLackingAnEntryPointGivesTheReason) {
  const dlmap_platform_status status = Probe();
  EXPECT_TRUE(status.built);
  EXPECT_FALSE(status.available);
  const std::string reason = status.reason;
  EXPECT_EQ(reason.rfind("the runtime lacks fake", 0), 0u) << reason;
  EXPECT_EQ(reason.find("fakeNoSuchMallocManaged"), std::string::npos) << reason << ": the second library's";
}

#elif defined(VARIANT_FAKE_ONLY) && defined(START_ZERO_DEVICES)

// A runtime that starts and counts no device: kept, not started; the probe says so.
TEST(RuntimeVariant, ARuntimeWithNoDevicesSaysSo) {
  fake_gpu_reset(0);
  fake_gpu_zero_devices_succeed(1);
  const dlmap_platform_status status = Probe();
  EXPECT_TRUE(status.built);
  EXPECT_FALSE(status.available);
  EXPECT_EQ(status.device_count, 0);
  EXPECT_STREQ(status.reason, "the runtime reports no devices");
  fake_gpu_zero_devices_succeed(0);
}

#elif defined(VARIANT_FAKE_ONLY) && defined(START_NO_VERSION)

// The runtime's version cannot be read when it starts: the failure is read from its last error, the version is
// unknown (-1), so no stream-ordered allocator or pointer layout is assumed.
TEST(RuntimeVariant, ARuntimeWhoseVersionCannotBeReadAssumesNoRelease) {
  fake_gpu_reset(2);
  fake_gpu_fail_next("runtime_version", FAKE_INVALID_VALUE);
  ASSERT_TRUE(Probe().available) << Probe().reason;
  EXPECT_EQ(fake_gpu_armed(), 0);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
  EXPECT_EQ(Allocator(), "synchronous: fakeMalloc/fakeFree (runtime -1 is older than 11020, which brought "
                         "fakeMallocAsync)");
  std::vector<float> data = Values(4);
  dlmap_memory_kind kind;
  dlmap_error err;
  EXPECT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CUDA, data.data(), &kind, nullptr, &err), DLMAP_ERR_BACKEND_CALL_FAILED);
  EXPECT_STREQ(err.message, "cuda runtime call fakePointerGetAttributes failed: the spec lists no pointer-attributes "
                            "layout for this runtime version");
}

#elif defined(VARIANT_RANGE_IN_RUNTIME) || defined(VARIANT_NO_RANGE_LIBRARY) || defined(VARIANT_LACKING_RANGE)

// An import of device memory is judged against the runtime's allocation where the address-range entry point is
// found (here in the runtime's own library), else by the pointer query at both ends: a view of the copy imports
// either way (16 KiB: its ends lie in different pages, so the query cannot stop at one end).
TEST(RuntimeVariant, ImportsAreJudgedWithOrWithoutTheAddressRange) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
  fake_gpu_reset(2);
  std::vector<float> data = Values(4096);
  std::vector<int64_t> shape = {4096};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_exported out;
  dlmap_error err;
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  fake_gpu_reset(2);
  dlmap_import_request want = dlmap_import_request_default();
  dlmap_imported view;
  DLManagedTensor inner = *out.legacy;
  inner.deleter = nullptr;  // the view's release must not free the export: it is released below
  ASSERT_EQ(dlmap_import_legacy(&inner, &want, &view, &err), DLMAP_OK) << err.message;
  dlmap_imported_release(&view);
#ifdef VARIANT_RANGE_IN_RUNTIME
  EXPECT_GE(fake_gpu_get_stats()->range_calls, 1);
#else
  EXPECT_EQ(fake_gpu_get_stats()->range_calls, 0);
#endif
  out.legacy->deleter(out.legacy);
}

#elif defined(VARIANT_HIP_SHAPED)

// No driver contexts: devices switch with set_device and the thread's device is set back; kernels are keyed by the
// device; managed memory is found by its isManaged field.
TEST(RuntimeVariant, DevicesSwitchThroughTheRuntimeAndComeBack) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
  const fake_gpu_stats stats = ExportValues(DLMAP_DEVICE_CUDA, 1);
  // Each step on device 1 (the allocation, the copy, the consumer's wait) switches there and back.
  EXPECT_EQ(stats.set_device_calls, 6);
  EXPECT_EQ(stats.last_memcpy_device, 1);
  EXPECT_EQ(fake_gpu_current_device(), 0);
}

TEST(RuntimeVariant, ManagedMemoryIsFoundByIsManaged) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
  fake_gpu_reset(2);
  fake_gpu_hip_attributes(1);
  std::vector<float> data = Values(8);
  std::vector<int64_t> shape = {8};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDAMANAGED);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  dlmap_memory_kind kind;
  int32_t device = -1;
  ASSERT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CUDAMANAGED, out.legacy->dl_tensor.data, &kind, &device, &err), DLMAP_OK)
      << err.message;
  EXPECT_EQ(kind, DLMAP_MEMORY_MANAGED);
  out.legacy->deleter(out.legacy);
}

TEST(RuntimeVariant, KernelsAreKeyedByTheDevice) {
  ASSERT_TRUE(Probe().available) << Probe().reason;
  fake_gpu_reset(2);
  EXPECT_TRUE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0));
  // The current device cannot be read when the kernels' key is asked for (the second and third get_device calls):
  // no key, no kernels, and dlmap's failure is not left as the runtime's last error.
  fake_gpu_fail_later("get_device", 1, FAKE_INVALID_VALUE);
  fake_gpu_fail_later("get_device", 1, FAKE_INVALID_VALUE);
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 0));
  EXPECT_EQ(fake_gpu_armed(), 0);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0);
}

#endif

}  // namespace
