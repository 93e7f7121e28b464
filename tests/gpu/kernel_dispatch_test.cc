// dlmap GPU tests — the strided-copy kernels' dispatch over the fake runtime (fake_gpu_kernels.c runs a launched kernel
// on the host, after checking its block shape, stream and memory as a GPU would): which layouts take which kernel, that
// the launch gets the consumer's stream, device → host through a compact device buffer, and each fallback with the
// reason dlmap_platform_kernels reports. Built three times, one per shape of the spec's runtime.kernels:
//   KERNELS_CUDA      fake_cuda.yaml: the committed PTX through the module API, a runtime compiler behind it
//   KERNELS_SOURCE    fake_source_kernels.yaml: no PTX, the module API in the runtime itself (HIP's shape)
//   KERNELS_MISSING   fake_missing_kernels.yaml: a module API without one of its entry points
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

extern "C" int fakeCtxSetCurrent(void *context);  // the driver's cuCtxSetCurrent in the fake

namespace {

std::string KernelStatus() {
  char text[400];
  dlmap_platform_kernels(DLMAP_PLATFORM_CUDA, text, sizeof text);
  return text;
}

// Bytes whose every position differs (mod 251), so that any misplaced byte shows.
std::vector<unsigned char> Bytes(size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<unsigned char>(i * 7 % 251);
  return v;
}

// A strided view's elements in row-major order, element_bytes each.
std::vector<unsigned char> Expected(const unsigned char *first, const std::vector<int64_t> &shape,
                                    const std::vector<int64_t> &strides, size_t element_bytes) {
  std::vector<unsigned char> out;
  int64_t count = 1;
  for (int64_t n : shape) count *= n;
  for (int64_t k = 0; k < count; k++) {
    int64_t rest = k, offset = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      offset += rest % shape[d] * strides[d];
      rest /= shape[d];
    }
    const unsigned char *element = first + offset * static_cast<int64_t>(element_bytes);
    out.insert(out.end(), element, element + element_bytes);
  }
  return out;
}

struct Layout {
  const char *what;
  DLDataType dtype;
  std::vector<int64_t> shape, strides;
  int64_t first;       // the first element's byte offset in the buffer (negative strides start inside it)
  const char *kernel;  // the kernel that must run; nullptr: none (a memcpy does it)
};

// A view of device memory at buffer in layout c (its first element at c.first).
dlmap_array DeviceView(void *buffer, const Layout &c) {
  dlmap_array view = dlmap_array_default();
  view.data = buffer;
  view.byte_offset = static_cast<uint64_t>(c.first);
  view.device_type = DLMAP_DEVICE_CUDA;
  view.dtype = c.dtype;
  view.ndim = static_cast<int32_t>(c.shape.size());
  view.shape = c.shape.data();
  view.strides = c.strides.data();
  return view;
}

// __dlpack__(dl_device=(type, 0), copy=copy).
dlmap_export_request ExportTo(int32_t type, dlmap_copy_mode copy) {
  dlmap_export_request request = dlmap_export_request_default();
  request.has_dl_device = true;
  request.dl_device_type = type;
  request.copy = copy;
  return request;
}

const DLDataType kInt8 = {kDLInt, 8, 1}, kFloat32 = {kDLFloat, 32, 1}, kFloat64 = {kDLFloat, 64, 1},
                 kComplex128 = {kDLComplex, 128, 1}, kFloat16 = {kDLFloat, 16, 1};

class Kernels : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    if (!status.available) GTEST_SKIP() << "the fake runtime did not load: " << status.reason;
  }

  // A device buffer holding `bytes` (a compact export of a 1-D int8 host array).
  DLManagedTensor *DeviceBuffer(std::vector<unsigned char> &bytes) {
    const int64_t shape[1] = {static_cast<int64_t>(bytes.size())};
    dlmap_array host = dlmap_array_default();
    host.data = bytes.data();
    host.device_type = DLMAP_DEVICE_CPU;
    host.dtype = kInt8;
    host.ndim = 1;
    host.shape = shape;
    const dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, DLMAP_COPY_IF_NEEDED);
    dlmap_exported out;
    dlmap_error err;
    EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
    return out.legacy;
  }

  // Exports a strided view of device memory as a compact copy on the device (copy=True) and checks its bytes, then
  // returns the kernel stats of that export.
  void CopyOnDevice(const Layout &c, int64_t stream, bool has_stream) {
    const size_t element_bytes = c.dtype.bits / 8;
    int64_t extent = 1;
    for (size_t d = 0; d < c.shape.size(); d++) extent += (c.shape[d] - 1) * (c.strides[d] < 0 ? -c.strides[d] : c.strides[d]);
    std::vector<unsigned char> bytes = Bytes(static_cast<size_t>(extent + 1) * element_bytes + c.first);
    DLManagedTensor *buffer = DeviceBuffer(bytes);
    ASSERT_NE(buffer, nullptr);
    fake_gpu_reset(2);
    if (arm_) arm_();
    dlmap_array view = DeviceView(buffer->dl_tensor.data, c);
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, DLMAP_COPY_ALWAYS);
    request.has_stream = has_stream;
    request.stream = stream;
    dlmap_exported out;
    dlmap_error err;
    view.producer_stream = producer_;
    ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << c.what << ": " << err.message;
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    const std::vector<unsigned char> want = Expected(bytes.data() + c.first, c.shape, c.strides, element_bytes);
    EXPECT_EQ(fake_gpu_values(out.legacy->dl_tensor.data, want.size()), want) << c.what;
    out.legacy->deleter(out.legacy);
    buffer->deleter(buffer);
  }

  void *producer_ = nullptr;     // the view's producer stream: an export copies on it
  std::function<void()> arm_;  // run after the counts are reset, before the copy: failures to inject
};

const Layout kTransposed = {"transposed", kFloat32, {64, 48}, {1, 64}, 0, "dlmap_transpose_u4"};

#ifndef KERNELS_MISSING

TEST_F(Kernels, EachLayoutTakesItsKernel) {
  const std::vector<Layout> cases = {
      {"compact", kFloat32, {6, 4}, {4, 1}, 0, nullptr},
      kTransposed,
      // contiguous rows move in the widest unit their length, pitch and addresses allow
      {"rows of a wider buffer", kFloat32, {40, 32}, {36, 1}, 0, "dlmap_gather32_u16"},
      {"rows of 120 bytes", kFloat32, {40, 30}, {32, 1}, 0, "dlmap_gather32_u8"},
      {"rows at an odd 4 bytes", kFloat32, {40, 32}, {36, 1}, 4, "dlmap_gather32_u4"},
      {"step 2", kFloat32, {100}, {2}, 0, "dlmap_gather32_u4"},
      {"broadcast rows", kFloat32, {5, 7}, {0, 1}, 0, "dlmap_gather32_u4"},
      {"negative strides", kFloat32, {3, 4}, {-4, -1}, 44, "dlmap_gather32_u4"},
      {"a batch of transposes", kFloat32, {3, 8, 5}, {40, 1, 8}, 0, "dlmap_transpose_u4"},
      {"bytes, step 3", kInt8, {50}, {3}, 0, "dlmap_gather32_u1"},
      {"halves, transposed", kFloat16, {33, 17}, {1, 33}, 0, "dlmap_transpose_u2"},
      {"doubles, transposed", kFloat64, {9, 7}, {1, 9}, 0, "dlmap_transpose_u8"},
      {"complex128, transposed", kComplex128, {5, 6}, {1, 5}, 0, "dlmap_transpose_u16"},
      // 16-byte elements at an 8-byte offset: copied as two 8-byte units each (the element becomes a dimension)
      {"complex128 at an odd 8 bytes, rows", kComplex128, {4, 3}, {5, 1}, 8, "dlmap_gather32_u8"},
      {"four dimensions", kFloat32, {2, 3, 4, 5}, {1, 2, 6, 24}, 0, "dlmap_gather32_u4"},
  };
  for (const Layout &c : cases) {
    CopyOnDevice(c, 0, false);
    const fake_gpu_kernel_stats *k = fake_gpu_kernel_get_stats();
    if (c.kernel == nullptr) {
      EXPECT_EQ(k->launches, 0) << c.what;
      continue;
    }
    EXPECT_EQ(k->launches, 1) << c.what;
    EXPECT_STREQ(k->last_kernel, c.kernel) << c.what;
    EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 0) << c.what;
    EXPECT_EQ(fake_gpu_get_stats()->kinds[1] + fake_gpu_get_stats()->kinds[2], 0) << c.what << ": through the host";
  }
  EXPECT_EQ(KernelStatus().rfind("loaded: ", 0), 0u) << KernelStatus();
}

TEST_F(Kernels, TheLaunchRunsOnTheCopysStream) {
  // An export copies on the producer's stream (the consumer's then waits for it) ...
  void *made = fake_gpu_stream_create();
  producer_ = made;
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->last_stream, made);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->last_device, 0);
  producer_ = nullptr;
  // ... an import on the consumer's.
  std::vector<unsigned char> bytes = Bytes(64 * 48 * 4);
  DLManagedTensor *buffer = DeviceBuffer(bytes);
  ASSERT_NE(buffer, nullptr);
  for (int64_t stream : {int64_t{2}, static_cast<int64_t>(reinterpret_cast<intptr_t>(made))}) {
    void *handle = nullptr;
    dlmap_error err;
    ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, stream, &handle, &err), DLMAP_OK);
    DLManagedTensor view = {};
    view.dl_tensor.data = buffer->dl_tensor.data;
    view.dl_tensor.device = {kDLCUDA, 0};
    view.dl_tensor.ndim = 2;
    view.dl_tensor.dtype = kFloat32;
    view.dl_tensor.shape = const_cast<int64_t *>(kTransposed.shape.data());
    view.dl_tensor.strides = const_cast<int64_t *>(kTransposed.strides.data());
    fake_gpu_reset(2);
    dlmap_import_request want = dlmap_import_request_default();
    want.copy = DLMAP_COPY_ALWAYS;
    want.layout = DLMAP_LAYOUT_ROW_MAJOR;
    want.consumer_stream = handle;
    dlmap_imported copy;
    ASSERT_EQ(dlmap_import_legacy(&view, &want, &copy, &err), DLMAP_OK) << err.message;
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 1);
    EXPECT_EQ(fake_gpu_kernel_get_stats()->last_stream, reinterpret_cast<void *>(stream));
    const std::vector<unsigned char> want_bytes = Expected(bytes.data(), kTransposed.shape, kTransposed.strides, 4);
    EXPECT_EQ(fake_gpu_values(static_cast<const char *>(copy.tensor.data) + copy.tensor.byte_offset, want_bytes.size()),
              want_bytes);
    dlmap_imported_release(&copy);
  }
  buffer->deleter(buffer);
  fake_gpu_stream_destroy(made);
}

TEST_F(Kernels, DeviceToHostCompactsOnTheDeviceFirst) {
  std::vector<unsigned char> bytes = Bytes(64 * 48 * 4);
  DLManagedTensor *buffer = DeviceBuffer(bytes);
  ASSERT_NE(buffer, nullptr);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_reset(2);
  const dlmap_array view = DeviceView(buffer->dl_tensor.data, kTransposed);
  const dlmap_export_request request = ExportTo(DLMAP_DEVICE_CPU, DLMAP_COPY_IF_NEEDED);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&view, &request, &out, &err), DLMAP_OK) << err.message;
  const fake_gpu_stats *s = fake_gpu_get_stats();
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 1);
  EXPECT_STREQ(fake_gpu_kernel_get_stats()->last_kernel, "dlmap_transpose_u4");
  EXPECT_EQ(s->kinds[2], 1) << "one device-to-host copy of the compact buffer";
  EXPECT_EQ(s->memcpy_2d_calls, 0);
  EXPECT_EQ(s->live, live) << "the compact device buffer is freed";
  const unsigned char *copied = static_cast<const unsigned char *>(out.legacy->dl_tensor.data);
  const std::vector<unsigned char> want = Expected(bytes.data(), kTransposed.shape, kTransposed.strides, 4);
  EXPECT_EQ(std::vector<unsigned char>(copied, copied + want.size()), want);
  out.legacy->deleter(out.legacy);
  buffer->deleter(buffer);
}

int Loads() { return fake_gpu_kernel_get_stats()->ptx_loads + fake_gpu_kernel_get_stats()->built_loads; }

TEST_F(Kernels, AFailedLaunchTakesTheMemcpyPathAndSaysSo) {
  arm_ = [] { fake_gpu_kernels_refuse_launches(1); };
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 0);
  EXPECT_GE(fake_gpu_get_stats()->memcpy_2d_calls, 1);
  EXPECT_EQ(KernelStatus(),
            "launch failed: fakeLaunchKernel failed (error 1) for dlmap_transpose_u4; that copy took the memcpy path");
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(Loads(), 0) << "a failure that a reload did not cure loads nothing more";
  arm_ = nullptr;
  CopyOnDevice(kTransposed, 0, false);  // the next copy tries again
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 1);
}

TEST_F(Kernels, AContextMadeAnewAtTheSameAddressLoadsTheKernelsAgain) {
  CopyOnDevice(kTransposed, 0, false);  // loaded (now or by an earlier test) and launched in this context
  arm_ = [] { fake_gpu_kernels_remake_contexts(); };
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(Loads(), 1) << "the old module's functions went with the old context";
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 1) << KernelStatus();
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 0);
  arm_ = nullptr;
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(Loads(), 0) << "loaded once in the new context";
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 1);
}

// Issue 56: launches refused for the copy's own reasons (an illegal address: 700) reload nothing, so the reload budget
// is still there for a context made anew after a hundred of them, and the kernels come back.
TEST_F(Kernels, RefusedLaunchesLeaveTheReloadBudgetForAContextMadeAnew) {
  CopyOnDevice(kTransposed, 0, false);  // loaded and launched in this context
  arm_ = [] { fake_gpu_kernels_fail_next("launch", FAKE_ILLEGAL_ADDRESS); };
  for (int i = 0; i < 100; i++) {
    CopyOnDevice(kTransposed, 0, false);  // the refused launch's copy takes the memcpy path
    ASSERT_EQ(Loads(), 0) << "refused launch " << i << " reloaded the kernels: " << KernelStatus();
  }
  arm_ = [] { fake_gpu_kernels_remake_contexts(); };
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(Loads(), 1) << KernelStatus();
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 1) << KernelStatus();
  EXPECT_EQ(fake_gpu_get_stats()->memcpy_2d_calls, 0);
}

// Threads copying at once, the contexts made anew while they do: every copy is right, and the threads reload the
// kernels at most once between them (the hardening's TSan step runs this test for races).
TEST_F(Kernels, ThreadsCopyingAtOnceShareOneReload) {
  std::vector<unsigned char> bytes = Bytes(64 * 48 * 4);
  DLManagedTensor *buffer = DeviceBuffer(bytes);
  ASSERT_NE(buffer, nullptr);
  CopyOnDevice(kTransposed, 0, false);  // loaded and launched in this context
  fake_gpu_kernels_remake_contexts();
  fake_gpu_reset(2);
  const std::vector<unsigned char> want = Expected(bytes.data(), kTransposed.shape, kTransposed.strides, 4);
  std::atomic<int> wrong{0}, ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      ready++;
      while (ready.load() < 4) std::this_thread::yield();  // all start together, so their first launches overlap
      for (int i = 0; i < 16; i++) {
        const dlmap_array view = DeviceView(buffer->dl_tensor.data, kTransposed);
        const dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, DLMAP_COPY_ALWAYS);
        dlmap_exported out;
        dlmap_error err;
        if (dlmap_export(&view, &request, &out, &err) != DLMAP_OK || fake_gpu_synchronize_all() != 0) {
          wrong++;
          continue;
        }
        wrong += fake_gpu_values(out.legacy->dl_tensor.data, want.size()) != want;
        out.legacy->deleter(out.legacy);
      }
    });
  }
  for (std::thread &t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(Loads(), 1) << "one thread reloads; the others retry with its functions";
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 64) << KernelStatus();
  buffer->deleter(buffer);
}

// Images are loaded per context: a fresh (non-primary) context on device 0 loads them anew, so each case below sees
// the load happen.
class KernelLoading : public Kernels {
 protected:
  void SetUp() override {
    Kernels::SetUp();
    context_ = fake_gpu_context_create(0);
    ASSERT_NE(context_, nullptr);
    ASSERT_EQ(fakeCtxSetCurrent(context_), 0);
  }
  void TearDown() override { fakeCtxSetCurrent(nullptr); }
  void *context_ = nullptr;
};

TEST_F(Kernels, ToolsLoadThemAheadOfTheFirstCopy) {
  std::thread([] {  // a thread without a context: it gets none back
    EXPECT_TRUE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 1));
    EXPECT_EQ(fake_gpu_has_context(), 0);
  }).join();
  EXPECT_EQ(KernelStatus().rfind("loaded: ", 0), 0u) << KernelStatus();
  EXPECT_NE(KernelStatus().find(" ms (the first use in this context)"), std::string::npos) << KernelStatus();
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CUDA, 2)) << "the fake has two devices";
  EXPECT_FALSE(dlmap_platform_kernels_load(DLMAP_PLATFORM_CPU, 0));
}

#endif  // !KERNELS_MISSING

#ifdef KERNELS_CUDA
TEST_F(KernelLoading, TheCommittedPtxLoadsFirst) {
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->ptx_loads, 1);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->compiles, 0);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->functions, 15) << "every kernel of the PTX is looked up once";
  EXPECT_EQ(KernelStatus().rfind("loaded: the committed PTX through fakeModuleLoadData in ", 0), 0u) << KernelStatus();
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->ptx_loads, 0) << "loaded once per context";
}

TEST_F(KernelLoading, APtxTheDriverRefusesIsBuiltByTheCompiler) {
  arm_ = [] { fake_gpu_kernels_refuse_ptx(1); };
  CopyOnDevice(kTransposed, 0, false);
  const fake_gpu_kernel_stats *k = fake_gpu_kernel_get_stats();
  EXPECT_EQ(k->compiles, 1);
  EXPECT_EQ(k->built_loads, 1);
  EXPECT_EQ(k->launches, 1);
  EXPECT_EQ(KernelStatus().rfind("loaded: the PTX was refused: fakeModuleLoadData failed (error 222); built by "
                                 "libdlmap_fake_gpu.so and fakeModuleLoadData in ", 0), 0u)
      << KernelStatus();
}

TEST_F(KernelLoading, NeitherPtxNorCompilerLeavesTheMemcpyPathWithTheReasons) {
  arm_ = [] {
    fake_gpu_kernels_refuse_ptx(1);
    fake_gpu_kernels_fail_next("compile", 6);
  };
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 0);
  EXPECT_GE(fake_gpu_get_stats()->memcpy_2d_calls, 1);
  EXPECT_EQ(KernelStatus(), "not used: the PTX was refused: fakeModuleLoadData failed (error 222); fakertcCompileProgram "
                            "failed (error 6): strided_copy.cu(1): error: the fake compiler was told to fail; layout "
                            "copies take the memcpy path");
  CopyOnDevice(kTransposed, 0, false);  // this context is not retried: the driver would answer the same
  EXPECT_EQ(fake_gpu_kernel_get_stats()->ptx_loads + fake_gpu_kernel_get_stats()->compiles, 0);
}
#endif

#ifdef KERNELS_SOURCE
TEST_F(KernelLoading, WithoutPtxTheSourceIsBuiltAtFirstUse) {
  CopyOnDevice(kTransposed, 0, false);
  const fake_gpu_kernel_stats *k = fake_gpu_kernel_get_stats();
  EXPECT_EQ(k->ptx_loads, 0);
  EXPECT_EQ(k->compiles, 1) << "the source and its header reach the compiler";
  EXPECT_EQ(k->built_loads, 1);
  EXPECT_EQ(k->launches, 1);
  EXPECT_EQ(KernelStatus().rfind("loaded: built by libdlmap_fake_gpu.so and fakeModuleLoadData in ", 0), 0u)
      << KernelStatus();
}
#endif

#ifdef KERNELS_MISSING
TEST_F(Kernels, AModuleApiWithoutAnEntryPointLeavesTheMemcpyPath) {
  CopyOnDevice(kTransposed, 0, false);
  EXPECT_EQ(fake_gpu_kernel_get_stats()->launches, 0);
  EXPECT_GE(fake_gpu_get_stats()->memcpy_2d_calls, 1);
  EXPECT_EQ(KernelStatus(), "not used: the library lacks fakeNoSuchLaunchKernel");
}
#endif

TEST(KernelStatus, APlatformWithoutKernelsSaysSo) {
  char text[200];
  EXPECT_GT(dlmap_platform_kernels(DLMAP_PLATFORM_CPU, text, sizeof text), 0u);
  EXPECT_STREQ(text, "none: the spec names no kernels for this platform");
  EXPECT_EQ(dlmap_platform_kernels(DLMAP_PLATFORM_CPU, text, 5), 4u) << "cut to the buffer";
}

}  // namespace
