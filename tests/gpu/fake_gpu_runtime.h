/* dlmap GPU tests — a fake vendor runtime (libdlmap_fake_gpu.so): the entry points of the spec's runtime
 * table over memory of its own (device memory sealed from the host: see fake_gpu_peek), checking what a real
 * runtime checks (memcpy kinds against where memory lives, bounds of its allocations, events recorded on the
 * current device) and counting every call, so the GPU backend's copies and stream protocol run and are verified
 * on machines without a GPU.
 *
 * What it models of CUDA 12+: a current context per thread (none until set_device or the first call that needs
 * one, which initialises the primary context of the thread's runtime device) and, apart from it, the runtime's
 * per-thread device (0 until set_device; cudaGetDevice answers the current context's device when there is one, else
 * this one); the driver's cuCtxGetCurrent / cuCtxSetCurrent (which leave the runtime's device alone) and
 * cuDevicePrimaryCtxRetain; non-primary contexts a test makes; pinned memory the device cannot map (a NULL
 * devicePointer); a per-thread last error that each failed runtime call overwrites and only get_last_error
 * clears (the driver's calls leave it alone); default-stream handles that name a stream of the current device: NULL (the null stream, the
 * legacy one) and exactly the handles the spec's generated table lists; explicit streams only from
 * fake_gpu_stream_create: any other handle fails with FAKE_INVALID_HANDLE (a real runtime would dereference it);
 * and, in deferred mode, streams that run asynchronously: work is queued per stream and runs in an order a seeded
 * scheduler picks among the streams that may run (stream order, event waits), at stream_synchronize or
 * fake_gpu_synchronize_all. It counts every call and the stream handles each was given, and reports whatever memory
 * type a test chooses for any address (fake_gpu_report), so a test can prove a refused value reached no call. */
#ifndef DLMAP_TESTS_GPU_FAKE_GPU_RUNTIME_H_
#define DLMAP_TESTS_GPU_FAKE_GPU_RUNTIME_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Memory types the fake reports at byte 0 of its pointer attributes (CUDA 11's values). */
enum { FAKE_UNREGISTERED = 0, FAKE_HOST = 1, FAKE_DEVICE = 2, FAKE_MANAGED = 3 };

/* Error codes the fake returns (its error string is "fake error <code>: <what>"). */
enum {
  FAKE_INVALID_VALUE = 1,
  FAKE_OUT_OF_MEMORY = 2,
  FAKE_INSUFFICIENT_DRIVER = 35,
  FAKE_NO_DEVICE = 100,
  FAKE_INVALID_DEVICE = 101,
  FAKE_INVALID_CONTEXT = 201, /* the driver's CUDA_ERROR_INVALID_CONTEXT */
  FAKE_INVALID_HANDLE = 400,
  FAKE_NOT_FOUND = 500,       /* the driver's CUDA_ERROR_NOT_FOUND: no allocation holds the address */
  FAKE_ILLEGAL_ADDRESS = 700,
  FAKE_NOT_SUPPORTED = 801,   /* cudaErrorNotSupported: cudaMallocAsync on a device without a memory pool */
  FAKE_NO_TEXT = 998          /* a code the error-string entry point answers NULL for */
};

/* The most devices the fake models. */
#define FAKE_MAX_DEVICES 4

typedef struct fake_gpu_stats {
  int memcpy_calls;      /* memcpy_async */
  int memcpy_2d_calls;   /* memcpy_2d_async */
  int memset_calls;      /* memset_async */
  int kinds[5];          /* copies by memcpy kind: 1 H2D, 2 D2H, 3 D2D, 4 default */
  int events_created, events_recorded, events_destroyed;
  int waits;             /* stream_wait_event */
  int syncs;             /* stream_synchronize */
  int allocations, frees, live; /* live: allocations not yet freed */
  int set_device_calls;
  int freed_in_flight;   /* frees of memory that queued work still reads or writes (deferred mode) */
  int contexts_created[FAKE_MAX_DEVICES]; /* primary contexts initialised per device since the last reset */
  void *last_record_stream;
  int last_record_device;
  void *last_wait_stream;
  int last_wait_device;  /* the device current at the last stream_wait_event: the one a default handle names */
  void *last_sync_stream;
  void *last_memcpy_stream;
  int last_memcpy_device;
  int invalid_streams;   /* calls refused because their stream handle names no stream */
  int range_calls;       /* the driver's cuMemGetAddressRange */
  int legacy_copies, legacy_syncs; /* copies and memsets enqueued on, and synchronisations of, the legacy default stream */
  /* The stream-ordered pool (issue 64): malloc_async and free_async calls, and the frees that ran (a free runs when
   * its stream reaches it; the memory is then poisoned with 0xDD and kept mapped, so that queued work that still
   * reaches it is seen). */
  int pool_allocations, pool_frees_queued, pool_frees_run;
  int freed_accesses;    /* copies and memsets that ran on memory a stream-ordered free had already taken: skipped */
  int double_frees;      /* free or free_async of memory already freed or queued to be */
  void *last_free_async_stream; /* the stream the last free_async was queued on */
  /* Calls that synchronise the whole device on a real runtime (malloc, free, host and managed allocation and their
   * frees): an exchange must make none on the stream-ordered path; last_device_sync names the last one's entry
   * point. */
  int device_syncs;
  const char *last_device_sync;
} fake_gpu_stats;

/* Finishes queued work, forgets every count (allocations stay), leaves deferred mode, forgets which contexts exist
 * (as a fresh process would have none) and sets the device count the fake reports (0: no device). */
void fake_gpu_reset(int device_count);
const fake_gpu_stats *fake_gpu_get_stats(void);
/* The next call of the named op ("malloc" (any allocation), "free" (cudaFree), "free_async", "get_default",
 * "set_access", "memcpy" (1-D and 2-D), "memset", "event_create", "wait", "record", "sync", "attributes",
 * "get_device", "set_device", "runtime_version", and the driver's "retain", "range", "get_current" and "set_current")
 * fails with this code; "attributes" may fail with any code, InvalidValue or not. Failed runtime calls set the last
 * error, the driver's do not. */
void fake_gpu_fail_next(const char *op, int code);
/* The same for the call after `skip` more calls of op succeed. Up to four failures stay armed at once (more are
 * ignored); a reset disarms them all. */
void fake_gpu_fail_later(const char *op, int skip, int code);
/* Failures armed and not yet taken: 0 once every armed call has failed. */
int fake_gpu_armed(void);
/* The devices the default pinned pool was mapped for (set_access), one bit each: kept across resets, as a process
 * keeps its pools. */
int fake_gpu_pinned_pool_devices(void);
/* What cudaGetDevice answers the calling thread: its current context's device, else its runtime device. */
int fake_gpu_current_device(void);
/* Whether the calling thread has a current context, and which (NULL: none). */
int fake_gpu_has_context(void);
void *fake_gpu_current_context(void);
/* A non-primary context on device (as cuCtxCreate makes one, but not made current); NULL past the fake's limit. */
void *fake_gpu_context_create(int device);
/* The calling thread's runtime last error: set as a failed call of the framework's would leave it (unread), and read
 * without clearing it (cudaPeekAtLastError). */
void fake_gpu_set_last_error(int code);
int fake_gpu_peek_last_error(void);
/* Pointer attributes of pinned memory report a NULL devicePointer (the device cannot access it directly). */
void fake_gpu_pinned_unmapped(int on);
/* With no devices (fake_gpu_reset(0)), the device count succeeds with 0 instead of failing with FAKE_NO_DEVICE (as a
 * runtime that starts and finds no device). Kept across resets: a runtime asks for the count once, at its load. */
void fake_gpu_zero_devices_succeed(int on);
/* Until the next reset, pointer attributes are written in HIP's layout: isManaged (an int) at byte 24, and managed
 * memory reported as device memory with isManaged set. For specs whose managed_offset is 24. */
void fake_gpu_hip_attributes(int on);
/* HIP's behaviour: pointer attributes of device memory fail with InvalidValue unless its device is current. */
void fake_gpu_attributes_on_own_device_only(int on);

/* Calls of the runtime's entry points (every fake* symbol) since the last reset: 0 proves dlmap made none. */
int fake_gpu_calls(void);
/* How many entry point calls since the last reset were given this stream handle (recorded before it is checked). */
int fake_gpu_stream_calls(const void *handle);
/* From now until the next reset, pointer attributes of any address in [base, base + size) report memory type `type`
 * (FAKE_UNREGISTERED, FAKE_HOST pinned, FAKE_DEVICE, FAKE_MANAGED) on `device`, whatever the fake allocated there:
 * a test makes any pointer any memory. 0, or FAKE_OUT_OF_MEMORY past 16 regions. */
int fake_gpu_report(const void *base, size_t size, int type, int device);

/* Deferred mode: stream work is queued and runs later, in an order the seeded scheduler picks. */
void fake_gpu_set_deferred(int on, unsigned seed);
/* A "kernel": fn(arg) runs on the stream (a copy of arg_size ≤ 64 bytes is kept) in stream order. 0 or an error. */
int fake_gpu_launch(void *stream, void (*fn)(void *), const void *arg, size_t arg_size);
/* A fresh stream handle (an explicit stream, not a default one; the only explicit handles the fake accepts) and its
 * release. */
void *fake_gpu_stream_create(void);
void fake_gpu_stream_destroy(void *stream);
/* Runs every queued op; 0, or -1 when the queues cannot drain (a wait on an event that never completes). */
int fake_gpu_synchronize_all(void);
/* fake_gpu_get_stats()->freed_accesses, for callers without the struct (Python's ctypes). */
int fake_gpu_freed_accesses(void);
/* Work queued and not yet run that reads or writes memory (copies, memsets, kernels, waits): stream-ordered frees,
 * which touch nothing, are not counted. */
int fake_gpu_pending(void);
/* The stream handle of the last memcpy, the memsets and the host-to-device copies since the last reset (for ctypes
 * callers, which do not read the stats struct). */
void *fake_gpu_last_memcpy_stream(void);
int fake_gpu_memset_calls(void);
int fake_gpu_host_to_device_copies(void);

/* Where [p, p + n) lives among the fake's allocations: FAKE_DEVICE, FAKE_HOST (pinned), FAKE_MANAGED, FAKE_UNREGISTERED
 * (not the fake's), or -1 when it runs past the allocation it starts in; *device (may be NULL) its device. Not a call. */
int fake_gpu_memory_type(const void *p, size_t n, int *device);

/* Device memory is sealed: the addresses the fake's malloc hands out are PROT_NONE, and a host load or store through
 * them faults (SIGSEGV), as on a GPU. Pinned and managed memory stay host memory. These controls, which are not entry
 * points and count no call, let a test read or write the bytes of any of the fake's allocations, [p, p + n) inside
 * one, after finishing queued work (as after a device synchronisation): 0, or FAKE_INVALID_VALUE for memory that is
 * not the fake's. */
int fake_gpu_peek(void *dst, const void *src, size_t n);
int fake_gpu_poke(void *dst, const void *src, size_t n);
/* Where the fake itself (its kernel emulation) reaches [p, p + n) of one of its allocations: the read-write view of
 * device memory, p itself for pinned and managed memory; NULL for memory not the fake's or a range leaving it. */
void *fake_gpu_kernel_view(const void *p, size_t n);

/* ---- the module API and runtime compiler (fake_gpu_kernels.c): the strided-copy kernels run on host threads ------ */

typedef struct fake_gpu_kernel_stats {
  int ptx_loads;        /* module_load_data given the committed PTX (accepted or not) */
  int built_loads;      /* module_load_data given the fake compiler's output */
  int compiles;         /* compile_program calls */
  int functions;        /* module_get_function calls */
  int launches;         /* launch_kernel calls that ran a kernel */
  char last_kernel[32]; /* the name of the last kernel launched */
  void *last_stream;    /* its stream handle */
  int last_device;      /* the device current at the launch */
  unsigned grid, block_x, block_y;
} fake_gpu_kernel_stats;

/* Forgets counts and injected failures (fake_gpu_reset calls it); loaded modules stay, as in a process. */
void fake_gpu_kernels_reset(void);
const fake_gpu_kernel_stats *fake_gpu_kernel_get_stats(void);
/* From now until the next reset: module_load_data refuses PTX images with 222 (a driver older than the PTX ISA), or
 * every launch fails with FAKE_INVALID_VALUE; a name ("load", "function", "launch", and the compiler's "compile",
 * "code_size", "code") fails once with code. */
void fake_gpu_kernels_refuse_ptx(int on);
void fake_gpu_kernels_refuse_launches(int on);
void fake_gpu_kernels_fail_next(const char *op, int code);
/* The compiler's log of a failed build until the next reset: as written (FAKE_LOG_AS_WRITTEN), its size query
 * failing, empty (a size of 1: the terminator alone), or its read failing (FAKE_INVALID_VALUE). */
enum { FAKE_LOG_AS_WRITTEN = 0, FAKE_LOG_SIZE_FAILS = 1, FAKE_LOG_EMPTY = 2, FAKE_LOG_FAILS = 3 };
void fake_gpu_kernels_set_log(int mode);
/* The driver the fake models until the next reset (default 13000 and 90: CUDA 13.0's): what its driver_version entry
 * point (fakeDriverGetVersion) reports, and the highest PTX ISA (tenths) it loads; module_load_data refuses an image
 * whose ".version" is above it with 222 (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). "driver" fails that entry point once. */
void fake_gpu_kernels_set_driver(int driver_version, int isa_tenths);
/* The runtime compiler's release as the PTX ISA its builds declare (default 90); 0: create_program fails, as if no
 * compiler were installed. Until the next reset. */
void fake_gpu_kernels_set_compiler(int isa_tenths);
/* The contexts are destroyed and made anew at the same addresses (cudaDeviceReset): the functions of every module
 * loaded so far fail to launch with FAKE_INVALID_HANDLE. */
void fake_gpu_kernels_remake_contexts(void);

#ifdef __cplusplus
} /* extern "C" */

#include <vector>

/* count values of type T at a device address of the fake's, read through its view (a host read of the address itself
 * faults); empty when the range is not inside one of the fake's allocations. */
template <typename T = unsigned char>
std::vector<T> fake_gpu_values(const void *device, size_t count) {
  std::vector<T> out(count);
  if (fake_gpu_peek(out.data(), device, count * sizeof(T)) != 0) out.clear();
  return out;
}
#endif

#endif /* DLMAP_TESTS_GPU_FAKE_GPU_RUNTIME_H_ */
