// dlmap GPU tests — gpu/check.sh's stream-ordering check (gpu/check_ordering.c) on the fake runtime's deferred
// streams: a seeded scheduler runs whichever stream may run, so the check meets every interleaving a fast GPU can
// produce. A check that reports races where dlmap ordered everything correctly (issue 18, defect 5) costs a device run;
// so does one that crashes when an export fails (defect 6).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"
#include "gpu/check_ordering.h"
#include "tests/gpu/fake_gpu_runtime.h"

// The fake runtime's entry points (tests/gpu/fake_cuda.yaml names them for dlmap; the check calls them directly).
extern "C" {
int fakeMalloc(void **ptr, size_t bytes);
int fakeFree(void *ptr);
int fakeEventCreateWithFlags(void **event, unsigned flags);
int fakeEventRecord(void *event, void *stream);
int fakeEventDestroy(void *event);
int fakeStreamWaitEvent(void *stream, void *event, unsigned flags);
int fakeStreamSynchronize(void *stream);
const char *fakeGetErrorString(int error);
}

namespace {

// ---- the check's device interface over the fake ------------------------------------------------------------------

struct FillArgs {
  unsigned *buf;
  size_t n;
  unsigned value;
};

struct CountArgs {
  const unsigned *buf;
  size_t n;
  unsigned value;
  unsigned long long *mismatches;
};

void Fill(void *arg) {
  const FillArgs *a = static_cast<const FillArgs *>(arg);
  for (size_t i = 0; i < a->n; i++) a->buf[i] = a->value;
}

void Count(void *arg) {
  const CountArgs *a = static_cast<const CountArgs *>(arg);
  for (size_t i = 0; i < a->n; i++) *a->mismatches += a->buf[i] != a->value;
}

check_device FakeDevice() {
  check_device d = {};
  d.device_type = DLMAP_DEVICE_CUDA;
  d.legacy_stream = reinterpret_cast<void *>(1);
  d.alloc = fakeMalloc;
  d.release = fakeFree;
  // The fake's device memory is sealed (the host faults on it, as on a GPU): the check's own host-side reads and
  // writes go through the fake's controls, and its "kernels" reach the memory through the fake's views.
  d.zero = [](void *p, size_t bytes) {
    const std::vector<char> zeros(bytes, 0);
    return fake_gpu_poke(p, zeros.data(), bytes);
  };
  d.to_host = [](void *dst, const void *src, size_t bytes) { return fake_gpu_peek(dst, src, bytes); };
  d.stream_create = [](void **s) {
    *s = fake_gpu_stream_create();
    return *s != nullptr ? 0 : static_cast<int>(FAKE_OUT_OF_MEMORY);
  };
  d.stream_destroy = [](void *s) {
    fake_gpu_stream_destroy(s);
    return 0;
  };
  d.stream_synchronize = fakeStreamSynchronize;
  d.device_synchronize = fake_gpu_synchronize_all;
  d.event_create = [](void **e) { return fakeEventCreateWithFlags(e, 2); };
  d.event_record = fakeEventRecord;
  d.stream_wait_event = [](void *s, void *e) { return fakeStreamWaitEvent(s, e, 0); };
  d.event_destroy = fakeEventDestroy;
  d.slow_fill = [](unsigned *buf, size_t n, unsigned value, void *stream) {
    const FillArgs args = {static_cast<unsigned *>(fake_gpu_kernel_view(buf, n * sizeof *buf)), n, value};
    return fake_gpu_launch(stream, Fill, &args, sizeof args);
  };
  d.count_mismatches = [](const unsigned *buf, size_t n, unsigned value, unsigned long long *mismatches,
                          void *stream) {
    const CountArgs args = {static_cast<const unsigned *>(fake_gpu_kernel_view(buf, n * sizeof *buf)), n, value,
                            static_cast<unsigned long long *>(fake_gpu_kernel_view(mismatches, sizeof *mismatches))};
    return fake_gpu_launch(stream, Count, &args, sizeof args);
  };
  d.error_text = fakeGetErrorString;
  return d;
}

constexpr size_t kN = 64;
constexpr int kIterations = 24;

class CheckOrdering : public ::testing::TestWithParam<unsigned> {  // the scheduler's seed
 protected:
  void SetUp() override {
    fake_gpu_reset(2);
    dlmap_platform_status status;
    dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
    ASSERT_TRUE(status.available) << status.reason;
    device_ = FakeDevice();
    ASSERT_EQ(fakeMalloc(reinterpret_cast<void **>(&buf_), kN * sizeof(unsigned)), 0);
    producer_ = fake_gpu_stream_create();
    consumer_ = fake_gpu_stream_create();
    fake_gpu_set_deferred(1, GetParam());
  }
  void TearDown() override {
    fake_gpu_set_deferred(0, 0);
    fake_gpu_stream_destroy(producer_);
    fake_gpu_stream_destroy(consumer_);
    fakeFree(buf_);
    EXPECT_EQ(fake_gpu_get_stats()->freed_in_flight, 0);
  }
  check_ordering_result Run(check_wait_mode mode) {
    check_ordering_result result;
    check_ordering_run(&device_, mode, buf_, kN, kIterations, producer_, consumer_, &result);
    return result;
  }
  check_device device_;
  unsigned *buf_ = nullptr;
  void *producer_ = nullptr, *consumer_ = nullptr;
};

// The control: without a wait the reader runs before the producer in some iterations, so the check can see a race.
TEST_P(CheckOrdering, TheControlWithoutAWaitRaces) {
  const check_ordering_result r = Run(CHECK_WAIT_NONE);
  EXPECT_EQ(r.failures, 0) << r.message;
  EXPECT_GT(r.raced, 0) << "the check cannot detect a missing wait";
}

// With dlmap's wait nothing races, in any interleaving: the reader of iteration i sees iteration i's value, never
// the next one's (the producer's next fill waits for the reader).
TEST_P(CheckOrdering, NoModeWithAWaitReportsARace) {
  for (check_wait_mode mode : {CHECK_WAIT_HANDLE, CHECK_WAIT_LEGACY, CHECK_WAIT_BATCH, CHECK_WAIT_IMPORT_COPY}) {
    const check_ordering_result r = Run(mode);
    EXPECT_EQ(r.failures, 0) << "mode " << mode << ": " << r.message;
    EXPECT_EQ(r.raced, 0) << "mode " << mode << ": false races reported";
    EXPECT_EQ(r.iterations, kIterations);
  }
}

// Stack garbage where a cleanup could read uninitialised exports: a crash instead of a lucky pass.
__attribute__((noinline)) void PaintStack() {
  volatile unsigned char junk[64 * 1024];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = 0xA5;
}

// A failed export is reported (the first failure's text) and the run goes on; nothing is released twice or from
// garbage, and nothing leaks.
TEST_P(CheckOrdering, AFailedExportIsReportedNotACrash) {
  const int live = fake_gpu_get_stats()->live;
  for (check_wait_mode mode : {CHECK_WAIT_HANDLE, CHECK_WAIT_BATCH, CHECK_WAIT_IMPORT_COPY}) {
    fake_gpu_fail_next("record", FAKE_INVALID_HANDLE);
    PaintStack();
    const check_ordering_result r = Run(mode);
    EXPECT_GE(r.failures, 1) << "mode " << mode;
    EXPECT_NE(std::string(r.message).find("fake error 400: invalid resource handle"), std::string::npos)
        << "mode " << mode << ": " << r.message;
    EXPECT_EQ(fake_gpu_get_stats()->live, live) << "mode " << mode;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, CheckOrdering, ::testing::Values(1u, 2u, 3u, 12345u));

}  // namespace
