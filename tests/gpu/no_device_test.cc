// dlmap GPU tests — the paths of machines without a GPU, run for real: the vendor runtime loads (every symbol of
// the spec's table resolves in the installed libcudart / libamdhip64), cannot start, and its own error text
// reaches the catalogue errors of the public API. On a machine where a platform has a device these tests skip
// with the reason printed; tests/gpu/device_test.cc covers that case.
#include <dlfcn.h>

#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "dlmap_config.h"

namespace {

struct Runtime {
  const char *name;
  dlmap_platform platform;
  std::string toolkit;         // the toolkit's runtime library found at configure time; "" without a toolkit
  int32_t device, pinned;      // device types served by the platform
};

std::vector<Runtime> Runtimes() {
  return {
      {"cuda", DLMAP_PLATFORM_CUDA,
       DLMAP_HAS_CUDA ? std::string(DLMAP_CUDA_LIBDIR) + "/" + DLMAP_CUDART_SONAME : std::string(), DLMAP_DEVICE_CUDA,
       DLMAP_DEVICE_CUDAHOST},
      {"rocm", DLMAP_PLATFORM_ROCM,
       DLMAP_HAS_ROCM ? std::string(DLMAP_ROCM_LIBDIR) + "/" + DLMAP_AMDHIP_SONAME : std::string(), DLMAP_DEVICE_ROCM,
       DLMAP_DEVICE_ROCMHOST},
  };
}

// The runtime symbol the spec names for an op of a platform ("device_count" → "cudaGetDeviceCount"), or nullptr; looked
// up by the op's name, so that the test does not pin the table's order.
const char *SymbolOf(dlmap_platform platform, const std::string &op) {
  const char *name = nullptr;
  for (size_t i = 0; const char *symbol = dlmap_platform_runtime_symbol_at(platform, i, &name); i++) {
    if (op == name) return symbol;
  }
  return nullptr;
}

// The runtime library the backend would load here: one of the spec's names the loader finds, else the toolkit's.
std::string InstalledRuntime(const Runtime &r) {
  for (const char *const *lib = dlmap_platform_find(r.platform)->libraries; *lib != nullptr; lib++) {
    void *handle = dlopen(*lib, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return *lib;
  }
  return r.toolkit;
}

void PrintTo(const Runtime &r, std::ostream *os) { *os << r.name; }

// What the vendor runtime itself says, asked directly (not through dlmap): its status and text.
struct VendorAnswer {
  int status = 0;
  std::string text;
};

VendorAnswer AskVendor(const Runtime &r, const std::string &path) {
  VendorAnswer answer;
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return answer;
  int (*count)(int *) = nullptr;
  const char *(*text)(int) = nullptr;
  *reinterpret_cast<void **>(&count) = dlsym(handle, SymbolOf(r.platform, "device_count"));
  *reinterpret_cast<void **>(&text) = dlsym(handle, SymbolOf(r.platform, "error_string"));
  int n = 0;
  answer.status = count != nullptr ? count(&n) : -1;
  answer.text = text != nullptr ? text(answer.status) : "";
  return answer;
}

std::string Unavailable(const char *device_type, int32_t value, const char *platform, const std::string &reason) {
  return std::string("Device type ") + device_type + " (" + std::to_string(value) + ") needs platform " + platform +
         ", which this build or machine cannot serve: " + reason;
}

// A one-dimensional float32 array of shape[0] elements at data, on a device type.
dlmap_array FloatArray(float *data, const int64_t *shape, int32_t device_type) {
  dlmap_array array = dlmap_array_default();
  array.data = data;
  array.device_type = device_type;
  array.dtype = {kDLFloat, 32, 1};
  array.ndim = 1;
  array.shape = shape;
  return array;
}

class NoDevice : public ::testing::TestWithParam<Runtime> {
 protected:
  void SetUp() override {
    const Runtime &r = GetParam();
    dlmap_platform_probe(r.platform, &status_);
    ASSERT_TRUE(status_.built) << "every platform with a runtime in the spec is built, toolkit or not";
    if (status_.available) {
      GTEST_SKIP() << r.name << " has " << status_.device_count
                   << " device(s) here: the no-device path cannot be reached (device_test covers this machine)";
    }
    path_ = InstalledRuntime(r);
    if (path_.empty()) {
      GTEST_SKIP() << "no " << r.name << " runtime is installed here (" << status_.reason
                   << "): the vendor's no-device answer cannot be asked";
    }
    vendor_ = AskVendor(r, path_);
    // The reason dlmap gives: the vendor's text and status, naming the entry point.
    expected_reason_ = vendor_.text + " (" + SymbolOf(r.platform, "device_count") + " returned " +
                       std::to_string(vendor_.status) + ")";
  }
  // err is the catalogue's platform_unavailable for the parameter's device type, with the vendor's own reason.
  void ExpectUnavailable(const dlmap_error &err) const {
    const Runtime &r = GetParam();
    EXPECT_EQ(std::string(err.message),
              Unavailable(dlmap_device_type_name(r.device), r.device, r.name, expected_reason_));
  }
  dlmap_platform_status status_;
  std::string path_;  // the runtime library found here
  VendorAnswer vendor_;
  std::string expected_reason_;
};

TEST_P(NoDevice, ProbeGivesTheVendorsOwnText) {
  EXPECT_TRUE(status_.built);
  EXPECT_FALSE(status_.available);
  EXPECT_EQ(status_.device_count, 0);
  ASSERT_NE(vendor_.status, 0) << "the runtime started without reporting a device";
  EXPECT_EQ(std::string(status_.reason), expected_reason_);
  // CUDA's answer on a machine with a toolkit and no driver (doc: offline-build.md §9.2). HIP's wording for the same
  // status differs between releases (5.2: "hipErrorNoDevice"), so only the comparison above holds for it.
  if (std::string(GetParam().name) == "cuda" && vendor_.status == 35) {
    EXPECT_STREQ(status_.reason,
                 "CUDA driver version is insufficient for CUDA runtime version (cudaGetDeviceCount returned 35)");
  }
}

TEST_P(NoDevice, EveryRuntimeSymbolResolvesInTheInstalledLibrary) {
  const Runtime &r = GetParam();
  void *handle = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  size_t n = 0;
  const char *op = nullptr;
  for (const char *symbol; (symbol = dlmap_platform_runtime_symbol_at(r.platform, n, &op)) != nullptr; n++) {
    EXPECT_NE(dlsym(handle, symbol), nullptr) << path_ << " lacks " << symbol << " (op " << op << ")";
  }
  EXPECT_GT(n, 0u) << "the spec's table lists the ops dlmap calls";
  // The probe's reason is the vendor's, not "the runtime lacks …": the backend resolved the whole table.
  EXPECT_EQ(std::string(status_.reason).find("lacks"), std::string::npos) << status_.reason;
}

TEST_P(NoDevice, ExportOfAViewNeedsTheStreamWaitAndFails) {
  const Runtime &r = GetParam();
  float data[4] = {1, 2, 3, 4};
  const int64_t shape[1] = {4};
  dlmap_array array = FloatArray(data, shape, r.device);
  dlmap_export_request request = dlmap_export_request_default();  // stream None: the consumer's default stream must wait
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_PLATFORM_UNAVAILABLE);
  EXPECT_STREQ(dlmap_error_kind_name(err.kind), "BufferError");
  ExpectUnavailable(err);

  request.has_stream = true;  // stream=-1: no synchronisation, no runtime needed
  request.stream = -1;
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  out.legacy->deleter(out.legacy);
}

TEST_P(NoDevice, CopiesToAndFromTheDeviceFail) {
  const Runtime &r = GetParam();
  float data[4] = {1, 2, 3, 4};
  const int64_t shape[1] = {4};
  dlmap_array array = FloatArray(data, shape, DLMAP_DEVICE_CPU);
  dlmap_export_request request = dlmap_export_request_default();
  request.has_dl_device = true;
  request.dl_device_type = r.device;
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_ERR_PLATFORM_UNAVAILABLE);
  ExpectUnavailable(err);

  // from_dlpack(x, copy=True) of a device tensor: the producer's deleter still runs exactly once.
  static int deleted;
  deleted = 0;
  int64_t tshape[1] = {4};
  DLManagedTensor managed = {};
  managed.dl_tensor.data = data;
  managed.dl_tensor.device = {static_cast<DLDeviceType>(r.device), 0};
  managed.dl_tensor.ndim = 1;
  managed.dl_tensor.dtype = {kDLFloat, 32, 1};
  managed.dl_tensor.shape = tshape;
  managed.deleter = [](DLManagedTensor *) { deleted++; };
  dlmap_import_request want = dlmap_import_request_default();
  want.copy = DLMAP_COPY_ALWAYS;
  dlmap_imported view;
  EXPECT_EQ(dlmap_import_legacy(&managed, &want, &view, &err), DLMAP_ERR_PLATFORM_UNAVAILABLE);
  ExpectUnavailable(err);
  EXPECT_EQ(deleted, 1);
}

TEST_P(NoDevice, PinnedMemoryStaysReadableOnTheHost) {
  // Without a runtime no GPU work can be pending on pinned memory: the host view needs nothing.
  const Runtime &r = GetParam();
  float data[4] = {1, 2, 3, 4};
  const int64_t shape[1] = {4};
  dlmap_array array = FloatArray(data, shape, r.pinned);
  dlmap_export_request request = dlmap_export_request_default();
  request.has_dl_device = true;
  request.dl_device_type = DLMAP_DEVICE_CPU;
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_FALSE(out.copied);
  EXPECT_EQ(out.legacy->dl_tensor.data, static_cast<void *>(data));
  out.legacy->deleter(out.legacy);
}

TEST_P(NoDevice, BatchWaitAndPointerQueriesNeedTheRuntime) {
  const Runtime &r = GetParam();
  std::vector<dlmap_array> arrays(3, dlmap_array_default());
  for (auto &a : arrays) a.device_type = r.device;
  size_t waits = 99;
  dlmap_error err;
  EXPECT_EQ(dlmap_stream_wait_batch(arrays.data(), arrays.size(), false, 0, &waits, &err),
            DLMAP_ERR_PLATFORM_UNAVAILABLE);
  ExpectUnavailable(err);
  EXPECT_EQ(waits, 0u);
  EXPECT_EQ(dlmap_stream_wait_batch(arrays.data(), arrays.size(), true, -1, &waits, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(waits, 0u);

  // A deferred export needs no runtime; the batch call that follows does.
  float data[2] = {1, 2};
  const int64_t shape[1] = {2};
  dlmap_array array = FloatArray(data, shape, r.device);
  dlmap_export_request request = dlmap_export_request_default();
  request.defer_stream_sync = true;
  dlmap_exported out;
  ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(out.stream, r.platform == DLMAP_PLATFORM_CUDA ? DLMAP_STREAM_LEGACY_DEFAULT : DLMAP_STREAM_DEFAULT);
  out.legacy->deleter(out.legacy);
  EXPECT_EQ(dlmap_stream_wait_batch(&array, 1, false, 0, nullptr, &err), DLMAP_ERR_PLATFORM_UNAVAILABLE);

  dlmap_memory_kind kind;
  int32_t device_id;
  EXPECT_EQ(dlmap_memory_locate(r.device, data, &kind, &device_id, &err), DLMAP_ERR_PLATFORM_UNAVAILABLE);
  ExpectUnavailable(err);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, NoDevice, ::testing::ValuesIn(Runtimes()),
                         [](const ::testing::TestParamInfo<Runtime> &info) { return std::string(info.param.name); });

// ---- independent of any runtime ----------------------------------------------------------------------------------

TEST(GpuApi, HostArraysNeedNoWait) {
  std::vector<dlmap_array> arrays(4, dlmap_array_default());
  for (auto &a : arrays) a.device_type = DLMAP_DEVICE_CPU;
  size_t waits = 7;
  dlmap_error err;
  EXPECT_EQ(dlmap_stream_wait_batch(arrays.data(), arrays.size(), false, 0, &waits, &err), DLMAP_OK);
  EXPECT_EQ(waits, 0u);
  EXPECT_EQ(dlmap_stream_wait_batch(nullptr, 0, false, 0, &waits, &err), DLMAP_OK);
}

TEST(GpuApi, BatchChecksEveryStreamArgument) {
  dlmap_array arrays[2] = {dlmap_array_default(), dlmap_array_default()};
  arrays[0].device_type = DLMAP_DEVICE_CPU;
  arrays[1].device_type = DLMAP_DEVICE_CUDA;
  dlmap_error err;
  EXPECT_EQ(dlmap_stream_wait_batch(arrays, 2, true, 0, nullptr, &err), DLMAP_ERR_STREAM_INVALID);
  EXPECT_STREQ(err.message, "stream=0 is not valid for device type kDLCPU (1): this device type takes no stream, "
                            "so stream must be None.");
  EXPECT_EQ(dlmap_stream_wait_batch(nullptr, 3, false, 0, nullptr, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "Invalid argument arrays: must not be NULL when count > 0");
}

TEST(GpuApi, LocateAnswersOnlyForGpuPlatforms) {
  int x = 0;
  dlmap_memory_kind kind;
  dlmap_error err;
  EXPECT_EQ(dlmap_memory_locate(DLMAP_DEVICE_CPU, &x, &kind, nullptr, &err), DLMAP_ERR_PLATFORM_UNAVAILABLE);
  EXPECT_STREQ(err.message, "Device type kDLCPU (1) needs platform cpu, which this build or machine cannot serve: "
                            "only a GPU runtime can say where a pointer lives");
  EXPECT_EQ(dlmap_memory_locate(99, &x, &kind, nullptr, &err), DLMAP_ERR_DEVICE_TYPE_UNKNOWN);
}

TEST(GpuApi, TheSymbolTableIsTheSpecs) {
  // Hand-written from spec/platforms.yaml: a few ops' symbols, found by op name (the table's order is the spec's).
  EXPECT_STREQ(SymbolOf(DLMAP_PLATFORM_CUDA, "device_count"), "cudaGetDeviceCount");
  EXPECT_STREQ(SymbolOf(DLMAP_PLATFORM_CUDA, "malloc"), "cudaMalloc");
  EXPECT_STREQ(SymbolOf(DLMAP_PLATFORM_CUDA, "stream_wait_event"), "cudaStreamWaitEvent");
  EXPECT_STREQ(SymbolOf(DLMAP_PLATFORM_ROCM, "malloc_host"), "hipHostMalloc");
  EXPECT_STREQ(SymbolOf(DLMAP_PLATFORM_ROCM, "pointer_attributes"), "hipPointerGetAttributes");
  EXPECT_EQ(SymbolOf(DLMAP_PLATFORM_ROCM, "no such op"), nullptr);
  EXPECT_EQ(dlmap_platform_runtime_symbol_at(DLMAP_PLATFORM_CPU, 0, nullptr), nullptr);
  // Every op is required of every runtime: both tables list the same ops.
  size_t n = 0;
  const char *op = nullptr;
  for (; dlmap_platform_runtime_symbol_at(DLMAP_PLATFORM_CUDA, n, &op) != nullptr; n++) {
    EXPECT_NE(SymbolOf(DLMAP_PLATFORM_ROCM, op), nullptr) << op;
  }
  EXPECT_EQ(dlmap_platform_runtime_symbol_at(DLMAP_PLATFORM_ROCM, n, nullptr), nullptr);
  EXPECT_NE(dlmap_platform_runtime_symbol_at(DLMAP_PLATFORM_ROCM, n - 1, nullptr), nullptr);
}

}  // namespace
