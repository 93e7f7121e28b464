// dlmap GPU tests — every call of each runtime and driver entry point failing in turn, over the fake runtime: an
// exchange is run once per call of the op it makes (fake_gpu_fail_later(op, k) for k = 0, 1, ... until a run takes no
// failure), and whichever call fails, the exchange either succeeds with the right bytes (dlmap had a way around the
// failure) or fails with one of the catalogue's runtime errors carrying the runtime's own words, and either way leaves
// no device memory, pool or event behind, gives the thread its context back, leaves no runtime error of its own, and
// keeps or releases the caller's owner as a clean run does.
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fakeCtxSetCurrent(void *context);  // the driver's cuCtxSetCurrent in the fake
extern "C" int fakeMalloc(void **ptr, size_t bytes);  // the fake's cudaMalloc: a framework allocator's memory
extern "C" int fakeFree(void *ptr);
extern "C" int fakeGetLastError(void);

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

// One exchange: runs it, checks the bytes where it succeeded and releases what it made; returns its status.
struct Exchange {
  const char *name;
  std::function<int32_t(dlmap_error *err, int *released)> run;
  int released_on_error = 0;  // an export leaves the caller its owner; an import has run the tensor's deleter once
};

// The ops and the code each fails with (runtime ops as a failed runtime call would; driver ops with the driver's).
struct Op {
  const char *name;
  int code;
  bool driver;
};

const std::vector<Op> kOps = {
    {"get_device", FAKE_INVALID_VALUE, false}, {"set_device", FAKE_INVALID_DEVICE, false},
    {"malloc", FAKE_OUT_OF_MEMORY, false},     {"memcpy", FAKE_INVALID_VALUE, false},
    {"memset", FAKE_INVALID_VALUE, false},     {"event_create", FAKE_OUT_OF_MEMORY, false},
    {"record", FAKE_INVALID_HANDLE, false},    {"wait", FAKE_INVALID_HANDLE, false},
    {"sync", FAKE_ILLEGAL_ADDRESS, false},     {"attributes", FAKE_ILLEGAL_ADDRESS, false},
    {"free_async", FAKE_INVALID_HANDLE, false}, {"get_current", FAKE_INVALID_CONTEXT, true},
    {"set_current", FAKE_INVALID_CONTEXT, true}, {"retain", FAKE_INVALID_DEVICE, true},
    {"range", FAKE_NOT_FOUND, true},
};

// Device memory holding Values(count) on device `id`, made outside any sweep; freed by its deleter.
DLManagedTensor *DeviceValues(size_t count, int32_t id) {
  static std::vector<float> data;
  data = Values(count);
  std::vector<int64_t> shape = {static_cast<int64_t>(count)};
  dlmap_array host = HostArray(data.data(), shape, {});
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, id);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  return out.legacy;
}

dlmap_array DeviceView(DLManagedTensor *t, int32_t id, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &strides) {
  return DeviceArray(t->dl_tensor.data, id, shape, strides);
}

// Exports `array` (its owner counted in *released) as `request` asks; on success checks the copy's bytes against
// `want` (read through the fake where they are device memory) and runs the deleter.
int32_t ExportAndCheck(dlmap_array array, const dlmap_export_request &request, const std::vector<float> &want,
                       dlmap_error *err, int *released) {
  array.owner = released;
  array.release = [](void *owner) { ++*static_cast<int *>(owner); };
  dlmap_exported out;
  const int32_t status = dlmap_export(&array, &request, &out, err);
  if (status != DLMAP_OK) return status;
  EXPECT_EQ(fake_gpu_synchronize_all(), 0);
  const void *data = out.legacy->dl_tensor.data;
  std::vector<float> got;
  if (fake_gpu_memory_type(data, want.size() * sizeof(float), nullptr) == FAKE_DEVICE) {
    got = fake_gpu_values<float>(data, want.size());
  } else {
    got.assign(static_cast<const float *>(data), static_cast<const float *>(data) + want.size());
  }
  EXPECT_EQ(got, want);
  out.legacy->deleter(out.legacy);
  return status;
}

// More calls of one op than any exchange here makes.
constexpr int kMaxCalls = 32;

class RuntimeFailureSweep {
 public:
  // Runs the exchange with each call of each op failing in turn (the fake reset before each run).
  void Sweep(const Exchange &exchange) {
    dlmap_platform_status platform;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &platform);
    ASSERT_TRUE(platform.available) << platform.reason;
    fake_gpu_reset(2);
    dlmap_error err;
    int clean_released = 0;
    ASSERT_EQ(exchange.run(&err, &clean_released), DLMAP_OK) << exchange.name << ": " << err.message;
    for (const Op &op : kOps) {
      bool pair_taken = false;
      for (int skip = 0; skip < 2 * kMaxCalls; skip++) {
        // Even runs on a thread with no current context (as a fresh thread), odd ones with device 0's.
        const bool fresh = skip % 2 == 0;
        const std::string what = std::string(exchange.name) + ": call " + std::to_string(skip / 2) + " of " + op.name +
                                 (fresh ? ", no context" : ", device 0's context");
        fakeCtxSetCurrent(fresh ? nullptr : reinterpret_cast<void *>(1));  // the fake's primary context of device 0
        fake_gpu_reset(2);
        const int live = fake_gpu_get_stats()->live;
        void *context = fake_gpu_current_context();
        const int device = fake_gpu_current_device();
        fake_gpu_fail_later(op.name, skip / 2, op.code);
        int released = 0;
        memset(&err, 0, sizeof err);
        const int32_t status = exchange.run(&err, &released);
        const bool taken = fake_gpu_armed() == 0;
        ASSERT_EQ(fake_gpu_synchronize_all(), 0) << what;
        const fake_gpu_stats *stats = fake_gpu_get_stats();
        EXPECT_EQ(stats->live, live) << what << ": memory left allocated";
        EXPECT_EQ(stats->events_created, stats->events_destroyed) << what << ": an event left";
        EXPECT_EQ(stats->double_frees, 0) << what;
        if (std::strcmp(op.name, "get_current") == 0) {
          // Without the driver's word on the thread's context, the runtime's way restores the thread's device (and
          // makes its primary context current, as set_device does): the device is what is given back.
          EXPECT_EQ(fake_gpu_current_device(), device) << what << ": the thread's device was not given back";
        } else if (std::strcmp(op.name, "set_current") != 0) {  // a refused restore itself cannot be undone
          EXPECT_EQ(fake_gpu_current_context(), context) << what << ": the thread's context was not given back";
        }
        EXPECT_EQ(fake_gpu_peek_last_error(), 0) << what << ": dlmap's failure left as the runtime's last error";
        if (status == DLMAP_OK) {
          EXPECT_EQ(released, clean_released) << what;
        } else {
          EXPECT_TRUE(taken) << what << ": failed without the injected failure: " << err.message;
          if (status == DLMAP_ERR_OUT_OF_MEMORY) {
            // A framework's allocator answers NULL, not the runtime's words: out_of_memory.
            EXPECT_STREQ(op.name, "malloc") << what << ": " << err.message;
          } else {
            EXPECT_TRUE(status == DLMAP_ERR_RUNTIME_COPY_FAILED || status == DLMAP_ERR_STREAM_SYNC_FAILED ||
                        status == DLMAP_ERR_BACKEND_CALL_FAILED)
                << what << ": " << status << " " << err.message;
            const std::string said = op.driver ? "driver error " + std::to_string(op.code)
                                               : "(error " + std::to_string(op.code) + ")";
            EXPECT_NE(std::string(err.message).find(said), std::string::npos) << what << ": " << err.message;
          }
          EXPECT_EQ(released, exchange.released_on_error) << what << ": the owner's releases on error";
        }
        pair_taken = fresh ? taken : pair_taken || taken;
        if (!fresh && !pair_taken) break;  // the exchange made no more calls of op, on either thread
        ASSERT_LT(skip, 2 * kMaxCalls - 1) << what << ": more calls than expected";
      }
    }
    fake_gpu_reset(2);
  }
};

// Host memory to device 1 (a device switch, the stream protocol's wait), with each stream the consumer may name.
TEST(RuntimeFailureSweepTest, HostToAnotherDevice) {
  fake_gpu_reset(2);
  std::vector<float> data = Values(12);
  std::vector<int64_t> shape = {3, 4};
  RuntimeFailureSweep sweep;
  for (int64_t stream : {int64_t{0}, int64_t{-1}, int64_t{2}}) {
    sweep.Sweep({"host to cuda:1", [&](dlmap_error *err, int *released) {
                   dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, 1);
                   request.has_stream = stream != 0;  // 0 here: None
                   request.stream = stream;
                   return ExportAndCheck(HostArray(data.data(), shape, {}), request, data, err, released);
                 }});
  }
}

// A transposed host view to device 0: one 2-D copy, or through the host for a reversed one.
TEST(RuntimeFailureSweepTest, StridedHostToDevice) {
  fake_gpu_reset(2);
  std::vector<float> data = Values(12);
  RuntimeFailureSweep sweep;
  const std::vector<int64_t> shape = {4, 3}, transposed = {1, 4}, reversed = {-3, -1};
  sweep.Sweep({"transposed host to cuda", [&](dlmap_error *err, int *released) {
                 return ExportAndCheck(HostArray(data.data(), shape, transposed), ExportTo(DLMAP_DEVICE_CUDA),
                                       Expected(data.data(), shape, transposed), err, released);
               }});
  sweep.Sweep({"reversed host to cuda", [&](dlmap_error *err, int *released) {
                 return ExportAndCheck(HostArray(data.data(), shape, reversed, 11 * sizeof(float)),
                                       ExportTo(DLMAP_DEVICE_CUDA), Expected(data.data() + 11, shape, reversed), err,
                                       released);
               }});
}

// Device 0 to device 1, and a transposed device view to the host (the kernel path and its buffer).
TEST(RuntimeFailureSweepTest, DeviceToDeviceAndHost) {
  fake_gpu_reset(2);
  DLManagedTensor *on0 = DeviceValues(12, 0);
  ASSERT_NE(on0, nullptr);
  const std::vector<float> data = Values(12);
  const std::vector<int64_t> flat = {12}, unit = {1}, shape = {4, 3}, transposed = {1, 4};
  RuntimeFailureSweep sweep;
  sweep.Sweep({"cuda:0 to cuda:1", [&](dlmap_error *err, int *released) {
                 return ExportAndCheck(DeviceView(on0, 0, flat, unit), ExportTo(DLMAP_DEVICE_CUDA, 1), data, err,
                                       released);
               }});
  sweep.Sweep({"transposed cuda:0 to cuda:0", [&](dlmap_error *err, int *released) {
                 dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
                 request.copy = DLMAP_COPY_ALWAYS;
                 return ExportAndCheck(DeviceView(on0, 0, shape, transposed), request,
                                       Expected(data.data(), shape, transposed), err, released);
               }});
  sweep.Sweep({"transposed cuda:0 to cpu", [&](dlmap_error *err, int *released) {
                 return ExportAndCheck(DeviceView(on0, 0, shape, transposed), ExportTo(DLMAP_DEVICE_CPU),
                                       Expected(data.data(), shape, transposed), err, released);
               }});
  fake_gpu_reset(2);
  on0->deleter(on0);
}

// Host memory to pinned and managed memory (the runtime's pools, else its synchronous allocators).
TEST(RuntimeFailureSweepTest, HostToPinnedAndManaged) {
  fake_gpu_reset(2);
  std::vector<float> data = Values(8);
  std::vector<int64_t> shape = {8};
  RuntimeFailureSweep sweep;
  for (int32_t type : {DLMAP_DEVICE_CUDAHOST, DLMAP_DEVICE_CUDAMANAGED}) {
    sweep.Sweep({type == DLMAP_DEVICE_CUDAHOST ? "host to pinned" : "host to managed",
                 [&](dlmap_error *err, int *released) {
                   return ExportAndCheck(HostArray(data.data(), shape, {}), ExportTo(type), data, err, released);
                 }});
  }
}

// Imports `tensor`'s memory (a wrapper whose deleter counts into *released) as `want` asks; on success checks the
// bytes against `want_values` and releases the import.
int32_t ImportAndCheck(DLManagedTensor *tensor, const dlmap_import_request &want, const std::vector<float> &want_values,
                       dlmap_error *err, int *released) {
  struct Wrapper {
    DLManagedTensor managed;
    int *released;
  };
  Wrapper *wrapper = new Wrapper{*tensor, released};
  wrapper->managed.manager_ctx = wrapper;
  wrapper->managed.deleter = [](DLManagedTensor *self) {
    Wrapper *w = static_cast<Wrapper *>(self->manager_ctx);
    ++*w->released;
    delete w;
  };
  dlmap_imported out;
  const int32_t status = dlmap_import_legacy(&wrapper->managed, &want, &out, err);
  if (status != DLMAP_OK) return status;
  EXPECT_EQ(fake_gpu_synchronize_all(), 0);
  const char *data = static_cast<const char *>(out.tensor.data) + out.tensor.byte_offset;
  std::vector<float> got;
  if (fake_gpu_memory_type(data, want_values.size() * sizeof(float), nullptr) == FAKE_DEVICE) {
    got = fake_gpu_values<float>(data, want_values.size());
  } else {
    got.assign(reinterpret_cast<const float *>(data), reinterpret_cast<const float *>(data) + want_values.size());
  }
  EXPECT_EQ(got, want_values);
  dlmap_imported_release(&out);
  return status;
}

// A framework's device allocator over the fake's cudaMalloc/cudaFree; like a framework's, it reads its own failures.
void *FrameworkAllocate(void *, size_t bytes, int32_t, int32_t, void *) {
  void *p = nullptr;
  if (fakeMalloc(&p, bytes) == 0) return p;
  fakeGetLastError();
  return nullptr;
}
void FrameworkRelease(void *, void *pointer, size_t, int32_t, int32_t, void *) { fakeFree(pointer); }

// Imports of device memory: a view (its extent judged by the runtime), a copy to the host, a copy on the device into a
// framework's memory.
TEST(RuntimeFailureSweepTest, Imports) {
  fake_gpu_reset(2);
  DLManagedTensor *on0 = DeviceValues(4096, 0);
  ASSERT_NE(on0, nullptr);
  const std::vector<float> data = Values(4096);
  RuntimeFailureSweep sweep;
  sweep.Sweep({"view of cuda:0", [&](dlmap_error *err, int *released) {
                 return ImportAndCheck(on0, dlmap_import_request_default(), data, err, released);
               }, 1});
  sweep.Sweep({"cuda:0 copied to cpu", [&](dlmap_error *err, int *released) {
                 dlmap_import_request want = dlmap_import_request_default();
                 want.has_device = true;
                 want.device_type = DLMAP_DEVICE_CPU;
                 return ImportAndCheck(on0, want, data, err, released);
               }, 1});
  static const dlmap_device_allocator framework = {FrameworkAllocate, FrameworkRelease, nullptr};
  sweep.Sweep({"cuda:0 copied into a framework's memory", [&](dlmap_error *err, int *released) {
                 dlmap_import_request want = dlmap_import_request_default();
                 want.copy = DLMAP_COPY_ALWAYS;
                 want.device_allocator = &framework;
                 return ImportAndCheck(on0, want, data, err, released);
               }, 1});
  fake_gpu_reset(2);
  on0->deleter(on0);
}

}  // namespace
