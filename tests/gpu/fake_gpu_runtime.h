/* dlmap GPU tests — a fake vendor runtime (libdlmap_fake_gpu.so): the entry points of the spec's runtime
 * table over host memory, checking what a real runtime checks (memcpy kinds against where memory lives,
 * bounds of its allocations, events recorded on the current device) and counting every call, so the GPU
 * backend's copies and stream protocol run and are verified on machines without a GPU. */
#ifndef DLMAP_TESTS_GPU_FAKE_GPU_RUNTIME_H_
#define DLMAP_TESTS_GPU_FAKE_GPU_RUNTIME_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Memory types the fake reports at byte 0 of its pointer attributes (CUDA 11's values). */
enum { FAKE_UNREGISTERED = 0, FAKE_HOST = 1, FAKE_DEVICE = 2, FAKE_MANAGED = 3 };

/* Error codes the fake returns (its error string is "fake error <code>: <what>"). */
enum { FAKE_INVALID_VALUE = 1, FAKE_OUT_OF_MEMORY = 2, FAKE_INVALID_DEVICE = 101, FAKE_INVALID_HANDLE = 400 };

typedef struct fake_gpu_stats {
  int memcpy_calls;      /* memcpy_async */
  int memcpy_2d_calls;   /* memcpy_2d_async */
  int kinds[5];          /* copies by memcpy kind: 1 H2D, 2 D2H, 3 D2D, 4 default */
  int events_created, events_recorded, events_destroyed;
  int waits;             /* stream_wait_event */
  int syncs;             /* stream_synchronize */
  int allocations, frees, live; /* live: allocations not yet freed */
  int set_device_calls;
  void *last_record_stream;
  int last_record_device;
  void *last_wait_stream;
  void *last_sync_stream;
} fake_gpu_stats;

/* Forgets every count (allocations stay) and sets the device count the fake reports (0: no device). */
void fake_gpu_reset(int device_count);
const fake_gpu_stats *fake_gpu_get_stats(void);
/* The next call of the named op ("malloc", "memcpy", "wait", "record") fails with this code. */
void fake_gpu_fail_next(const char *op, int code);
/* The fake's current device of the calling thread. */
int fake_gpu_current_device(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLMAP_TESTS_GPU_FAKE_GPU_RUNTIME_H_ */
