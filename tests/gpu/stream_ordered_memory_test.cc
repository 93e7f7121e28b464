// dlmap GPU tests — device memory belongs to the framework (issue 64), over the fake runtime: every exchange direction
// takes its device memory from the stream-ordered pool or the framework's allocator and gives it back on the holder's
// stream, with no call that synchronises the whole device; releases are ordered after the holder's queued work under
// the fake's reordering scheduler. Linked into fake_device_test.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/device_test_support.h"
#include "tests/gpu/fake_gpu_runtime.h"

// The fake's entry points (fake_gpu_runtime.c), called as a framework would call its runtime.
extern "C" int fakeMallocAsync(void **ptr, size_t bytes, void *stream);
extern "C" int fakeFreeAsync(void *ptr, void *stream);
extern "C" int fakeMalloc(void **ptr, size_t bytes);
extern "C" int fakeFree(void *ptr);
extern "C" int fakeMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream);

namespace {

using namespace dlmap_gpu_test;  // NOLINT(build/namespaces): the shared helpers, by their short names

constexpr int kDeviceToDevice = 3;  // fake_cuda.yaml's memcpy_kinds

// A framework's allocator over the fake's own pool, with a ledger: what dlmap took, gave back, and on which streams.
struct Ledger {
  std::map<void *, size_t> live;  // pointer → bytes
  int allocations = 0, releases = 0, unknown_releases = 0, wrong_sizes = 0;
  bool fail = false;
  std::vector<void *> release_streams;
};

void *LedgerAllocate(void *ctx, size_t bytes, int32_t device_type, int32_t device_id, void *stream) {
  auto *ledger = static_cast<Ledger *>(ctx);
  EXPECT_EQ(device_type, DLMAP_DEVICE_CUDA);
  EXPECT_EQ(fake_gpu_current_device(), device_id) << "the framework allocates on the device current for its call";
  if (ledger->fail) return nullptr;
  void *pointer = nullptr;
  if (fakeMallocAsync(&pointer, bytes, stream == DLMAP_NO_STREAM ? nullptr : stream) != 0) return nullptr;
  ledger->live[pointer] = bytes;
  ledger->allocations++;
  return pointer;
}

void LedgerRelease(void *ctx, void *pointer, size_t bytes, int32_t device_type, int32_t device_id, void *stream) {
  auto *ledger = static_cast<Ledger *>(ctx);
  (void)device_type;
  (void)device_id;
  auto found = ledger->live.find(pointer);
  if (found == ledger->live.end()) {
    ledger->unknown_releases++;  // not ours, or given back twice
    return;
  }
  if (found->second != bytes) ledger->wrong_sizes++;
  ledger->live.erase(found);
  ledger->releases++;
  ledger->release_streams.push_back(stream);
  fakeFreeAsync(pointer, stream == DLMAP_NO_STREAM ? nullptr : stream);
}

dlmap_device_allocator LedgerAllocator(Ledger *ledger) { return {LedgerAllocate, LedgerRelease, ledger}; }

class StreamOrderedMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    if (!status.available) GTEST_SKIP() << "the fake runtime did not load: " << status.reason;
    stream_ = fake_gpu_stream_create();
  }
  void TearDown() override {
    if (stream_ != nullptr) fake_gpu_stream_destroy(stream_);
  }
  void *stream_ = nullptr;
};

// Exports host data to (CUDA, id) as a legacy tensor (the caller calls its deleter).
DLManagedTensor *DeviceCopy(const std::vector<float> &data, const std::vector<int64_t> &shape, int32_t id = 0) {
  dlmap_array host = HostArray(const_cast<float *>(data.data()), shape, {});
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA, id);
  dlmap_exported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_OK) << err.message;
  return out.legacy;
}

// Exports four host floats to (CUDA, 0) with the consumer's stream argument (has_stream false: None) into *out.
int32_t ExportFour(int64_t stream, bool has_stream, dlmap_exported *out, dlmap_error *err) {
  static const std::vector<float> data = Values(4);
  static const std::vector<int64_t> shape = {4};
  const dlmap_array host = HostArray(const_cast<float *>(data.data()), shape, {});
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  request.has_stream = has_stream;
  request.stream = stream;
  return dlmap_export(&host, &request, out, err);
}

dlmap_array OnDevice(DLManagedTensor *tensor, const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
  dlmap_array a = dlmap_array_default();
  a.data = tensor->dl_tensor.data;
  a.device_type = DLMAP_DEVICE_CUDA;
  a.device_id = tensor->dl_tensor.device.device_id;
  a.dtype = kFloat32;
  a.ndim = static_cast<int32_t>(shape.size());
  a.shape = shape.data();
  a.strides = strides.empty() ? nullptr : strides.data();
  return a;
}

// Exports four floats, from the device (`source`) or the host, as a copy to (to, 0) with the consumer's stream argument.
int32_t CopyFour(DLManagedTensor *source, bool from_device, int32_t to, bool has_stream, int64_t stream,
                 dlmap_exported *out, dlmap_error *err) {
  static const std::vector<float> data = Values(4);
  static const std::vector<int64_t> shape = {4};
  const dlmap_array array =
      from_device ? OnDevice(source, shape, {}) : HostArray(const_cast<float *>(data.data()), shape, {});
  dlmap_export_request request = ExportTo(to);
  request.copy = DLMAP_COPY_ALWAYS;
  request.has_stream = has_stream;
  request.stream = stream;
  return dlmap_export(&array, &request, out, err);
}

TEST_F(StreamOrderedMemory, DevicesSayWhichAllocatorServes) {
  char text[400];
  dlmap_platform_allocator(DLMAP_PLATFORM_CUDA, text, sizeof text);
  EXPECT_EQ(std::string(text).rfind("stream-ordered: fakeMallocAsync/fakeFreeAsync (runtime 12040", 0), 0u) << text;
  EXPECT_NE(std::string(text).find("; host_pinned managed memory: stream-ordered from the default pools, "
                                   "fakeMemGetDefaultMemPool/fakeMallocFromPoolAsync (since 12040;"),
            std::string::npos)
      << text;
  dlmap_platform_allocator(DLMAP_PLATFORM_CPU, text, sizeof text);
  EXPECT_STREQ(text, "none: the platform has no GPU runtime");
  EXPECT_EQ(dlmap_platform_allocator(DLMAP_PLATFORM_CUDA, text, 8), 7u) << "cut to the buffer";
}

// Every exchange direction × layout × stream convention, with the runtime's pool and with a framework's allocator:
// no call that synchronises the whole device, every device byte back exactly once.
TEST_F(StreamOrderedMemory, NoExchangeSynchronisesTheDevice) {
  const std::vector<float> data = Values(12);
  DLManagedTensor *source = DeviceCopy(data, {3, 4});
  DLManagedTensor *on_device_1 = DeviceCopy(data, {3, 4}, 1);
  ASSERT_NE(source, nullptr);
  ASSERT_NE(on_device_1, nullptr);
  const std::vector<int64_t> compact_shape = {3, 4}, compact = {4, 1}, transposed_shape = {4, 3}, transposed = {1, 4};
  struct Stream {
    const char *name;
    bool has_stream;
    int64_t stream;
  };
  const Stream streams[] = {{"a stream handle", true, reinterpret_cast<intptr_t>(stream_)},
                            {"None (legacy default)", false, 0},
                            {"per-thread default (2)", true, 2}};
  int pool_buffers = -1;  // what the runtime's pool served without a framework allocator
  for (bool framework : {false, true}) {
    Ledger ledger;
    const dlmap_device_allocator allocator = LedgerAllocator(&ledger);
    const int live = fake_gpu_get_stats()->live;
    fake_gpu_reset(2);
    std::vector<dlmap_exported> exports;
    std::vector<std::string> names;
    auto export_one = [&](const dlmap_array &array, dlmap_export_request request, const std::string &what) {
      request.device_allocator = framework ? &allocator : nullptr;
      dlmap_exported out;
      dlmap_error err;
      ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << what << ": " << err.message;
      EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 0) << what << ": " << fake_gpu_get_stats()->last_device_sync;
      exports.push_back(out);
      names.push_back(what);
    };
    for (const Stream &s : streams) {
      dlmap_array host = HostArray(const_cast<float *>(data.data()), compact_shape, {});
      dlmap_export_request to_device = ExportTo(DLMAP_DEVICE_CUDA);
      to_device.has_stream = s.has_stream;
      to_device.stream = s.stream;
      export_one(host, to_device, std::string("host to device, ") + s.name);
      for (bool strided : {false, true}) {
        const dlmap_array device =
            OnDevice(source, strided ? transposed_shape : compact_shape, strided ? transposed : compact);
        dlmap_export_request copy = to_device;
        copy.copy = DLMAP_COPY_ALWAYS;
        export_one(device, copy, std::string("device to device, ") + (strided ? "transposed, " : "compact, ") + s.name);
      }
      // device 1 to device 0: the copy runs on device 1's stream into memory taken on the consumer's, on device 0
      export_one(OnDevice(on_device_1, compact_shape, compact), to_device, std::string("device 1 to 0, ") + s.name);
    }
    for (bool strided : {false, true}) {  // device to host: a transposed copy compacts in a device buffer first
      const dlmap_array device =
          OnDevice(source, strided ? transposed_shape : compact_shape, strided ? transposed : compact);
      export_one(device, ExportTo(DLMAP_DEVICE_CPU), strided ? "device to host, transposed" : "device to host");
    }
    std::vector<dlmap_imported> imports;
    for (void *consumer : {stream_, static_cast<void *>(nullptr)}) {
      for (int32_t to : {DLMAP_DEVICE_CUDA, DLMAP_DEVICE_CPU}) {
        DLManagedTensor tensor = {};
        tensor.dl_tensor.data = source->dl_tensor.data;
        tensor.dl_tensor.device = {kDLCUDA, 0};
        tensor.dl_tensor.ndim = 2;
        tensor.dl_tensor.dtype = kFloat32;
        tensor.dl_tensor.shape = const_cast<int64_t *>(transposed_shape.data());
        tensor.dl_tensor.strides = const_cast<int64_t *>(transposed.data());
        dlmap_import_request want = dlmap_import_request_default();
        want.copy = DLMAP_COPY_ALWAYS;
        want.has_device = to == DLMAP_DEVICE_CPU;
        want.device_type = to;
        want.consumer_stream = consumer;
        want.device_allocator = framework ? &allocator : nullptr;
        dlmap_imported imported;
        dlmap_error err;
        ASSERT_EQ(dlmap_import_legacy(&tensor, &want, &imported, &err), DLMAP_OK) << err.message;
        EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 0) << "import: " << fake_gpu_get_stats()->last_device_sync;
        imports.push_back(imported);
      }
    }
    if (!framework) pool_buffers = fake_gpu_get_stats()->pool_allocations;
    EXPECT_EQ(fake_gpu_get_stats()->pool_allocations, framework ? ledger.allocations : pool_buffers)
        << "with a framework allocator, dlmap takes nothing from the runtime's pool itself";
    // into managed memory (kDLCUDAManaged names streams): the runtime's default managed pool under both allocators (a
    // framework allocator serves device memory only)
    for (const Stream &s : streams) {
      dlmap_export_request to_managed = ExportTo(DLMAP_DEVICE_CUDAMANAGED);
      to_managed.copy = DLMAP_COPY_ALWAYS;
      to_managed.has_stream = s.has_stream;
      to_managed.stream = s.stream;
      export_one(HostArray(const_cast<float *>(data.data()), compact_shape, {}), to_managed,
                 std::string("host to managed, ") + s.name);
      export_one(OnDevice(source, transposed_shape, transposed), to_managed,
                 std::string("device to managed, transposed, ") + s.name);
    }
    for (size_t i = 0; i < exports.size(); i++) {
      exports[i].legacy->deleter(exports[i].legacy);
      EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 0) << "release of " << names[i];
    }
    for (dlmap_imported &imported : imports) dlmap_imported_release(&imported);
    EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 0) << "import releases";
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    EXPECT_EQ(fake_gpu_get_stats()->live, live) << "every device buffer given back";
    EXPECT_EQ(fake_gpu_get_stats()->freed_accesses, 0);
    EXPECT_EQ(fake_gpu_get_stats()->double_frees, 0);
    if (framework) {
      // 12 device copies by export, 2 by import, and the compact buffers of transposed device-to-host copies
      EXPECT_GE(ledger.allocations, 14);
      EXPECT_EQ(ledger.allocations, pool_buffers) << "the framework serves what the pool served";
      EXPECT_EQ(ledger.releases, ledger.allocations) << "each buffer given back exactly once";
      EXPECT_TRUE(ledger.live.empty());
      EXPECT_EQ(ledger.unknown_releases + ledger.wrong_sizes, 0);
    }
  }
  source->deleter(source);
  on_device_1->deleter(on_device_1);
}

// The runtime calls of one exchange and its release, by kind (printed for the closing note; the device-wide
// synchronisations are the contract): a host-to-device copy on a consumer's stream, a device-to-device copy, and a
// device view with a consumer stream.
TEST_F(StreamOrderedMemory, RuntimeCallsPerExchange) {
  const std::vector<float> data = Values(256);
  const std::vector<int64_t> shape = {256};
  DLManagedTensor *source = DeviceCopy(data, shape);
  ASSERT_NE(source, nullptr);
  dlmap_array host = HostArray(const_cast<float *>(data.data()), shape, {});
  host.shape = shape.data();
  const dlmap_array device = OnDevice(source, shape, {});
  struct Case {
    const char *name;
    const dlmap_array *array;
    dlmap_copy_mode copy;
  } const cases[] = {{"host to device copy", &host, DLMAP_COPY_IF_NEEDED},
                     {"device to device copy", &device, DLMAP_COPY_ALWAYS},
                     {"device view", &device, DLMAP_COPY_IF_NEEDED}};
  for (const Case &c : cases) {
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
    request.copy = c.copy;
    request.has_stream = true;
    request.stream = reinterpret_cast<intptr_t>(stream_);
    dlmap_exported out;
    dlmap_error err;
    fake_gpu_reset(2);
    ASSERT_EQ(dlmap_export(c.array, &request, &out, &err), DLMAP_OK) << err.message;
    out.legacy->deleter(out.legacy);
    const fake_gpu_stats *s = fake_gpu_get_stats();
    std::printf("runtime calls, %s + release: %d (device-wide synchronisations %d; pool %d + %d; events %d; waits %d)\n",
                c.name, fake_gpu_calls(), s->device_syncs, s->pool_allocations, s->pool_frees_queued, s->events_created,
                s->waits);
    EXPECT_EQ(s->device_syncs, 0) << c.name;
  }
  // Managed and pinned copies from the device, with the default pools and without (a pool that refuses: the
  // synchronous allocator, as before the pools), side by side; the pinned release is the synchronous free either way.
  struct Kind {
    const char *name;
    int32_t to;
    bool has_stream;  // kDLCUDAHost takes none
    int pool_syncs;
  } const kinds[] = {{"device to managed copy", DLMAP_DEVICE_CUDAMANAGED, true, 0},
                     {"device to pinned copy", DLMAP_DEVICE_CUDAHOST, false, 1}};
  for (const Kind &k : kinds) {
    for (bool pool : {true, false}) {
      fake_gpu_reset(2);
      if (!pool) fake_gpu_fail_next("malloc", FAKE_NOT_SUPPORTED);
      dlmap_exported out;
      dlmap_error err;
      ASSERT_EQ(CopyFour(source, true, k.to, k.has_stream, reinterpret_cast<intptr_t>(stream_), &out, &err),
                DLMAP_OK)
          << err.message;
      out.legacy->deleter(out.legacy);
      const fake_gpu_stats *s = fake_gpu_get_stats();
      std::printf("runtime calls, %s + release, %s: %d (device-wide synchronisations %d, the last %s)\n", k.name,
                  pool ? "default pool" : "synchronous allocator", fake_gpu_calls(), s->device_syncs,
                  s->last_device_sync != nullptr ? s->last_device_sync : "-");
      EXPECT_EQ(s->device_syncs, pool ? k.pool_syncs : 2) << k.name;
    }
  }
  source->deleter(source);
}

TEST_F(StreamOrderedMemory, AFailingFrameworkAllocatorIsOutOfMemoryAndLeaksNothing) {
  const std::vector<float> data = Values(4);
  Ledger ledger;
  ledger.fail = true;
  const dlmap_device_allocator allocator = LedgerAllocator(&ledger);
  static int released;
  released = 0;
  dlmap_array host = HostArray(const_cast<float *>(data.data()), {4}, {});
  const std::vector<int64_t> shape = {4};
  host.shape = shape.data();
  host.owner = &released;
  host.release = [](void *) { released++; };
  dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
  request.device_allocator = &allocator;
  const int live = fake_gpu_get_stats()->live;
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_export(&host, &request, &out, &err), DLMAP_ERR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(err.message).find("a device copy"), std::string::npos) << err.message;
  EXPECT_EQ(released, 0) << "on error the caller keeps its owner";
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
  EXPECT_EQ(ledger.releases + ledger.unknown_releases, 0);
}

// The protocol's -1: the consumer synchronises itself, on streams dlmap is never told about. The release cannot know
// where the holder's last work is queued, so it takes the synchronous free, which waits for the device.
TEST_F(StreamOrderedMemory, AReleaseWithNoStreamNamedWaitsForTheDevice) {
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(ExportFour(-1, true, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 0);
  out.legacy->deleter(out.legacy);
  EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 1);
  EXPECT_STREQ(fake_gpu_get_stats()->last_device_sync, "free");
}

// A release on a per-thread default stream would order the free after the deleter's thread's stream, not the
// consumer's: it goes on the legacy default stream, which every blocking stream synchronises with.
TEST_F(StreamOrderedMemory, APerThreadStreamsCopyIsFreedOnTheLegacyStream) {
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(ExportFour(2, true, &out, &err), DLMAP_OK) << err.message;
  out.legacy->deleter(out.legacy);
  void *legacy = nullptr;
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, 1, &legacy, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->last_free_async_stream, legacy);
}

TEST_F(StreamOrderedMemory, AnImportedCopyIsFreedOnTheConsumersStream) {
  const std::vector<float> data = Values(4);
  DLManagedTensor *source = DeviceCopy(data, {4});
  ASSERT_NE(source, nullptr);
  dlmap_import_request want = dlmap_import_request_default();
  want.copy = DLMAP_COPY_ALWAYS;
  want.consumer_stream = stream_;
  dlmap_imported imported;
  dlmap_error err;
  ASSERT_EQ(dlmap_import_legacy(source, &want, &imported, &err), DLMAP_OK) << err.message;
  dlmap_imported_release(&imported);
  EXPECT_EQ(fake_gpu_get_stats()->last_free_async_stream, stream_);
  EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 0);
}

// A device without a memory pool answers not_supported (the spec's runtime.stream_allocator.not_supported): the
// synchronous pair serves that copy. Any other failure of the pool is the copy's error.
TEST_F(StreamOrderedMemory, ADeviceWithoutAPoolFallsBackToTheSynchronousPair) {
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_fail_next("malloc", FAKE_NOT_SUPPORTED);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(ExportFour(0, false, &out, &err), DLMAP_OK) << err.message;
  EXPECT_STREQ(fake_gpu_get_stats()->last_device_sync, "malloc");
  EXPECT_EQ(fake_gpu_values<float>(out.legacy->dl_tensor.data, 4), Values(4));
  out.legacy->deleter(out.legacy);
  EXPECT_STREQ(fake_gpu_get_stats()->last_device_sync, "free") << "memory from malloc goes back to free";
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0) << "the pool's refusal was read, not left for the framework";
}

// The holder queues work that reads its copy on the stream it named, then drops the copy: under every schedule the
// fake's deferred mode picks, the free runs after that work (the fake poisons freed memory and counts late accesses).
// Two copies: from the host (which runs on the consumer's stream) and from device memory its producer writes on another
// stream (the copy runs there, the consumer's stream waits): the free must follow the consumer's work, not the copy's.
TEST_F(StreamOrderedMemory, AReleaseIsOrderedAfterTheHoldersQueuedWork) {
  const std::vector<float> data = Values(256);
  const std::vector<int64_t> shape = {256};
  void *mine = nullptr, *producer = fake_gpu_stream_create();
  ASSERT_EQ(fakeMalloc(&mine, data.size() * 4), 0);
  DLManagedTensor *source = DeviceCopy(data, shape);
  ASSERT_NE(source, nullptr);
  for (unsigned seed = 1; seed <= 80; seed++) {
    fake_gpu_set_deferred(1, seed);
    dlmap_array host = HostArray(const_cast<float *>(data.data()), shape, {});
    host.shape = shape.data();
    dlmap_array device = OnDevice(source, shape, {});
    device.producer_stream = producer;
    dlmap_export_request request = ExportTo(DLMAP_DEVICE_CUDA);
    request.copy = DLMAP_COPY_ALWAYS;
    request.has_stream = true;
    request.stream = reinterpret_cast<intptr_t>(stream_);
    dlmap_exported out;
    dlmap_error err;
    ASSERT_EQ(dlmap_export(seed % 2 ? &host : &device, &request, &out, &err), DLMAP_OK) << err.message;
    ASSERT_EQ(fakeMemcpyAsync(mine, out.legacy->dl_tensor.data, data.size() * 4, kDeviceToDevice, stream_), 0);
    out.legacy->deleter(out.legacy);  // while the read is still queued
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    EXPECT_EQ(fake_gpu_get_stats()->freed_accesses, 0) << "seed " << seed << ": freed under the holder's read";
    EXPECT_EQ(fake_gpu_values<float>(mine, data.size()), data) << "seed " << seed;
    fake_gpu_set_deferred(0, 0);
  }
  EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 1) << "only this test's own cudaMalloc";
  fakeFree(mine);
  source->deleter(source);
  fake_gpu_stream_destroy(producer);
}

// One array exported as views to two consumers on two streams: each queues a read, then drops its view; the framework
// then frees the memory on the array's producer stream (stream-ordered, as its pool would). Each view's release made
// the producer stream wait for its consumer's work, so under every schedule the free runs after both reads.
TEST_F(StreamOrderedMemory, AnArrayViewedOnSeveralStreamsIsFreedAfterEveryConsumersWork) {
  const std::vector<float> data = Values(256);
  const std::vector<int64_t> shape = {256};
  const size_t bytes = data.size() * 4;
  void *producer = fake_gpu_stream_create(), *second = fake_gpu_stream_create();
  void *theirs[2] = {nullptr, nullptr};
  ASSERT_EQ(fakeMalloc(&theirs[0], bytes), 0);
  ASSERT_EQ(fakeMalloc(&theirs[1], bytes), 0);
  void *consumers[2] = {stream_, second};
  for (unsigned seed = 1; seed <= 80; seed++) {
    fake_gpu_set_deferred(1, seed);
    void *memory = nullptr;
    ASSERT_EQ(fakeMallocAsync(&memory, bytes, producer), 0);
    ASSERT_EQ(fake_gpu_poke(memory, data.data(), bytes), 0);
    dlmap_array array = dlmap_array_default();
    array.data = memory;
    array.device_type = DLMAP_DEVICE_CUDA;
    array.dtype = kFloat32;
    array.ndim = 1;
    array.shape = shape.data();
    array.producer_stream = producer;
    for (int c = 0; c < 2; c++) {
      dlmap_export_request request = dlmap_export_request_default();
      request.has_stream = true;
      request.stream = reinterpret_cast<intptr_t>(consumers[c]);
      dlmap_exported out;
      dlmap_error err;
      ASSERT_EQ(dlmap_export(&array, &request, &out, &err), DLMAP_OK) << err.message;
      ASSERT_EQ(fakeMemcpyAsync(theirs[c], out.legacy->dl_tensor.data, bytes, kDeviceToDevice, consumers[c]), 0);
      out.legacy->deleter(out.legacy);  // the consumer is done with it: its read may still be queued
    }
    ASSERT_EQ(fakeFreeAsync(memory, producer), 0);
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    EXPECT_EQ(fake_gpu_get_stats()->freed_accesses, 0) << "seed " << seed << ": freed under a consumer's read";
    EXPECT_EQ(fake_gpu_values<float>(theirs[0], data.size()), data) << "seed " << seed;
    EXPECT_EQ(fake_gpu_values<float>(theirs[1], data.size()), data) << "seed " << seed;
    fake_gpu_set_deferred(0, 0);
  }
  fakeFree(theirs[0]);
  fakeFree(theirs[1]);
  fake_gpu_stream_destroy(producer);
  fake_gpu_stream_destroy(second);
}

// The check above can fail: the same read, with the buffer freed on another stream, is caught under some schedule.
TEST_F(StreamOrderedMemory, TheFakeCatchesAFreeOnTheWrongStream) {
  void *other = fake_gpu_stream_create();
  void *mine = nullptr, *theirs = nullptr;
  ASSERT_EQ(fakeMalloc(&mine, 1024), 0);
  int caught = 0;
  for (unsigned seed = 1; seed <= 40 && caught == 0; seed++) {
    fake_gpu_set_deferred(1, seed);
    ASSERT_EQ(fakeMallocAsync(&theirs, 1024, stream_), 0);
    ASSERT_EQ(fakeMemcpyAsync(mine, theirs, 1024, kDeviceToDevice, stream_), 0);
    ASSERT_EQ(fakeFreeAsync(theirs, other), 0);  // not ordered after the read
    ASSERT_EQ(fake_gpu_synchronize_all(), 0);
    caught += fake_gpu_get_stats()->freed_accesses;
    fake_gpu_set_deferred(0, 0);
  }
  EXPECT_GT(caught, 0) << "no schedule ran the free before the read";
  fakeFree(mine);
  fake_gpu_stream_destroy(other);
}

}  // namespace

// Managed copies (kDLCUDAManaged names streams) come from the runtime's default managed pool on the copy's stream and
// go back on the consumer's, from the device and from the host alike (the runtime copies host data there, since the
// memory is usable only after its allocation on that stream): no device-wide synchronisation either way.
TEST_F(StreamOrderedMemory, ManagedCopiesComeFromTheDefaultPoolAndGoBackOnTheConsumersStream) {
  DLManagedTensor *source = DeviceCopy(Values(4), {4});
  ASSERT_NE(source, nullptr);
  void *legacy = nullptr;
  dlmap_error err;
  ASSERT_EQ(dlmap_stream_handle(DLMAP_DEVICE_CUDA, true, 1, &legacy, &err), DLMAP_OK) << err.message;
  for (bool from_device : {true, false}) {
    for (bool named : {true, false}) {
      const std::string what = std::string(from_device ? "device" : "host") + (named ? ", a stream" : ", None");
      fake_gpu_reset(2);
      dlmap_exported out;
      ASSERT_EQ(CopyFour(source, from_device, DLMAP_DEVICE_CUDAMANAGED, named, reinterpret_cast<intptr_t>(stream_),
                         &out, &err),
                DLMAP_OK)
          << what << ": " << err.message;
      EXPECT_EQ(fake_gpu_get_stats()->pool_allocations, 1) << what;
      ASSERT_EQ(fake_gpu_synchronize_all(), 0);
      EXPECT_EQ(fake_gpu_values<float>(out.legacy->dl_tensor.data, 4), Values(4)) << what;
      out.legacy->deleter(out.legacy);
      EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 0) << what << ": " << fake_gpu_get_stats()->last_device_sync;
      EXPECT_EQ(fake_gpu_get_stats()->pool_frees_queued, 1) << what;
      EXPECT_EQ(fake_gpu_get_stats()->last_free_async_stream, named ? stream_ : legacy) << what;
    }
  }
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_get_stats()->freed_accesses + fake_gpu_get_stats()->double_frees, 0);
  source->deleter(source);
}

// Pinned copies (kDLCUDAHost names no stream). From the device: memory from the default pinned pool on the copy's
// stream, the pool mapped for every device first (the host allocator's memory is portable). Their release, as with
// stream -1, cannot know which streams the holder used, so it takes the synchronous free, which waits for the device:
// the one wait this direction keeps. From the host nothing names a stream for the allocation either: the host
// allocator serves it.
TEST_F(StreamOrderedMemory, PinnedCopiesWaitForTheDeviceOnlyWhereNoStreamIsNamed) {
  DLManagedTensor *source = DeviceCopy(Values(4), {4});
  ASSERT_NE(source, nullptr);
  dlmap_exported out;
  dlmap_error err;
  fake_gpu_reset(2);
  ASSERT_EQ(CopyFour(source, true, DLMAP_DEVICE_CUDAHOST, false, 0, &out, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 0) << fake_gpu_get_stats()->last_device_sync;
  EXPECT_EQ(fake_gpu_get_stats()->pool_allocations, 1);
  EXPECT_EQ(fake_gpu_pinned_pool_devices(), 0x3) << "mapped for both devices";
  EXPECT_EQ(std::vector<float>(static_cast<float *>(out.legacy->dl_tensor.data),
                               static_cast<float *>(out.legacy->dl_tensor.data) + 4),
            Values(4))
      << "complete when the export returns: the host reads it at once";
  out.legacy->deleter(out.legacy);
  EXPECT_EQ(fake_gpu_get_stats()->device_syncs, 1);
  EXPECT_STREQ(fake_gpu_get_stats()->last_device_sync, "free") << "pool memory goes back by free, not the host free";

  fake_gpu_reset(2);
  ASSERT_EQ(CopyFour(source, false, DLMAP_DEVICE_CUDAHOST, false, 0, &out, &err), DLMAP_OK) << err.message;
  EXPECT_STREQ(fake_gpu_get_stats()->last_device_sync, "malloc_host");
  out.legacy->deleter(out.legacy);
  EXPECT_STREQ(fake_gpu_get_stats()->last_device_sync, "free_host");
  EXPECT_EQ(fake_gpu_get_stats()->double_frees, 0);
  source->deleter(source);
}

// A device whose default pool refuses an allocation (not_supported) leaves that copy to the kind's own allocator.
TEST_F(StreamOrderedMemory, AManagedPoolTheDeviceLacksFallsBackToTheManagedAllocator) {
  DLManagedTensor *source = DeviceCopy(Values(4), {4});
  ASSERT_NE(source, nullptr);
  const int live = fake_gpu_get_stats()->live;
  fake_gpu_fail_next("malloc", FAKE_NOT_SUPPORTED);
  dlmap_exported out;
  dlmap_error err;
  ASSERT_EQ(CopyFour(source, true, DLMAP_DEVICE_CUDAMANAGED, true, reinterpret_cast<intptr_t>(stream_), &out, &err),
            DLMAP_OK)
      << err.message;
  EXPECT_STREQ(fake_gpu_get_stats()->last_device_sync, "malloc_managed");
  ASSERT_EQ(fake_gpu_synchronize_all(), 0);
  EXPECT_EQ(fake_gpu_values<float>(out.legacy->dl_tensor.data, 4), Values(4));
  out.legacy->deleter(out.legacy);
  EXPECT_STREQ(fake_gpu_get_stats()->last_device_sync, "free");
  EXPECT_EQ(fake_gpu_get_stats()->live, live);
  EXPECT_EQ(fake_gpu_peek_last_error(), 0) << "the pool's refusal was read, not left for the framework";
  source->deleter(source);
}
