/* dlmap GPU check — the stream-ordering check of gpu/check.sh, written against a small device interface so that the
 * same code runs on an NVIDIA GPU (gpu/check_main.c: the CUDA runtime and gpu/check_kernels.cu) and on the fake
 * runtime's deferred streams (tests/gpu/check_ordering_test.cc), where a scheduler decides which stream runs next.
 *
 * Each iteration a slow kernel fills a buffer with that iteration's value on the producer stream, dlmap makes the
 * consumer wait (as a mode says), and a reader kernel on the consumer stream counts elements that differ. An
 * iteration "raced" when its reader saw anything else: the wait was missing or wrong. */
#ifndef DLMAP_GPU_CHECK_ORDERING_H_
#define DLMAP_GPU_CHECK_ORDERING_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The device calls the check needs; each returns 0 or the runtime's error code. */
typedef struct check_device {
  int32_t device_type;  /* the DLPack device type of the device's memory (kDLCUDA) */
  void *legacy_stream;  /* the runtime's handle of the legacy default stream (cudaStreamLegacy) */
  int (*alloc)(void **pointer, size_t bytes);
  int (*release)(void *pointer);
  int (*zero)(void *pointer, size_t bytes);                        /* synchronous */
  int (*to_host)(void *dst, const void *src, size_t bytes);        /* synchronous, after all queued work */
  int (*stream_create)(void **stream);                             /* a non-blocking stream */
  int (*stream_destroy)(void *stream);
  int (*stream_synchronize)(void *stream);
  int (*device_synchronize)(void);
  int (*event_create)(void **event);                               /* without timing */
  int (*event_record)(void *event, void *stream);
  int (*stream_wait_event)(void *stream, void *event);
  int (*event_destroy)(void *event);
  /* value into buf[0, n) after a delay long enough that an unordered reader sees the old values */
  int (*slow_fill)(unsigned *buf, size_t n, unsigned value, void *stream);
  /* *mismatches += the elements of buf[0, n) that differ from value */
  int (*count_mismatches)(const unsigned *buf, size_t n, unsigned value, unsigned long long *mismatches, void *stream);
  const char *(*error_text)(int status);
} check_device;

/* How the consumer is made to wait for the producer. */
typedef enum check_wait_mode {
  CHECK_WAIT_NONE,        /* stream=-1: no wait (the control: this must race, or the check cannot see a race) */
  CHECK_WAIT_HANDLE,      /* stream=<consumer's handle> */
  CHECK_WAIT_LEGACY,      /* stream=None: the legacy default stream reads */
  CHECK_WAIT_BATCH,       /* 64 deferred exports, one dlmap_stream_wait_batch */
  CHECK_WAIT_IMPORT_COPY  /* from_dlpack(copy=True) on the consumer's stream, after the wait */
} check_wait_mode;

typedef struct check_ordering_result {
  int iterations;
  int raced;          /* iterations whose reader saw anything but that iteration's value */
  int failures;       /* dlmap or device calls that failed; the first one's text is in message */
  char message[256];
} check_ordering_result;

/* One run of `iterations` (at most CHECK_ORDERING_MAX_ITERATIONS) over buf (n unsigned ints of device memory). */
#define CHECK_ORDERING_MAX_ITERATIONS 1024
void check_ordering_run(const check_device *device, check_wait_mode mode, unsigned *buf, size_t n, int iterations,
                        void *producer, void *consumer, check_ordering_result *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLMAP_GPU_CHECK_ORDERING_H_ */
