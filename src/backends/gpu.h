/* dlmap GPU backend — the one interface export and import use to reach CUDA or HIP device memory: loading
 * the vendor runtime the spec describes, devices, pointer queries, allocation, copies and stream waits.
 * Implemented once for every platform whose spec entry has a `runtime`: src/backends/gpu_loader.c loads the runtime,
 * src/backends/gpu.c holds the device operations (gpu_runtime.h is what the two share). */
#ifndef DLMAP_SRC_BACKENDS_GPU_H_
#define DLMAP_SRC_BACKENDS_GPU_H_

#include "src/internal.h"
#include "src/layout.h"

/* A loaded vendor runtime: static storage, loaded once per platform, never unloaded. */
typedef struct dlmap__gpu dlmap__gpu;

/* Loads a GPU platform's runtime once per process, thread-safe: the spec's library names (those the process
 * already loaded first), then the toolkit path this build detected, each with every symbol of the spec's table;
 * the first that starts with a device wins, else the first that loaded (the probe then reports why it cannot
 * start). NULL when no candidate loads; reason (cap bytes) then says why. *built: whether this build serves the
 * platform at all (may be NULL): every platform whose spec entry describes a runtime, toolkit or not. */
const dlmap__gpu *dlmap__gpu_load(dlmap_platform platform, bool *built, char *reason, size_t cap);

/* The runtime's device count (0 when the call failed) and the vendor status of that call (0: success), as
 * asked once when the runtime was loaded (runtimes enumerate devices once per process). */
int dlmap__gpu_device_count(const dlmap__gpu *gpu, int *count);

/* Whether the runtime started with at least one device (a runtime that loaded but cannot start is kept loaded, not
 * started, so that the probe can report its vendor's reason). */
bool dlmap__gpu_started(const dlmap__gpu *gpu);

/* The runtime's text and status number of the calling thread's last failed runtime or driver call ("invalid argument
 * (error 1)"), as its backend_call_failed error quoted it; "" before any. */
const char *dlmap__gpu_last_failure(void);

/* The vendor's text for a status of its runtime ("CUDA driver version is insufficient …"); never NULL. */
const char *dlmap__gpu_error_text(const dlmap__gpu *gpu, int status);

/* What dlmap_platform_probe reports for any platform but the CPU (out is cleared first): built, and available
 * with the device count, or the reason it is not (the vendor's text and the device_count symbol's status where the
 * runtime loaded but cannot start). dlmap_platform_probe answers the CPU itself; a
 * platform outside the spec or served by no backend gets its reason here. */
void dlmap__gpu_probe(dlmap_platform platform, dlmap_platform_status *out);

/* dlmap_platform_kernels_load: loads the strided-copy kernels on the device as the first layout copy would. */
bool dlmap__gpu_kernels_load(dlmap_platform platform, int32_t device_id);

/* dlmap_platform_runtime_symbol_at: the index-th entry point of the spec's runtime table for the platform. */
const char *dlmap__gpu_runtime_symbol_at(dlmap_platform platform, size_t index, const char **op);

/* The runtime serving `device`'s platform, started with at least one device. Error: platform_unavailable
 * with the probe's reason (the vendor's text where there is one). */
int32_t dlmap__gpu_acquire(const dlmap_device_info *device, const dlmap__gpu **out, dlmap_error *err);

/* Checks a device id against the runtime's device count. Error: device_id_out_of_range. */
int32_t dlmap__gpu_check_device(const dlmap__gpu *gpu, int32_t device_id, dlmap_error *err);

/* Where a pointer lives, as the runtime reports it. kind is DLMAP_MEMORY_KIND_COUNT when the runtime's
 * memory type is one the spec's layout does not list; memory the runtime does not know is host memory. */
typedef struct dlmap__gpu_pointer {
  dlmap_memory_kind kind;
  int32_t device;       /* the device the memory belongs to (device and managed memory) */
  void *device_pointer; /* the address a kernel uses (pinned memory may differ from the host address) */
} dlmap__gpu_pointer;

/* Asked with `device` current (HIP answers for device memory only on its own device; -1: the thread's current
 * device). Only the runtime's InvalidValue means "not its memory" (host); any other failed query is an error.
 * Errors: backend_call_failed (the query failed, or no layout of the spec applies to this runtime version). */
int32_t dlmap__gpu_locate(const dlmap__gpu *gpu, const void *pointer, int32_t device, dlmap__gpu_pointer *out,
                          dlmap_error *err);

/* Where the bytes lo … hi (inclusive: a tensor's lowest and highest byte) live. */
typedef struct dlmap__gpu_span {
  dlmap__gpu_pointer lo, hi; /* the runtime's word on each end (hi is lo's where one_allocation was decided by range) */
  bool one_allocation;       /* both ends lie in one allocation of lo's memory (the runtime's address range where it
                              * names lo's; else both ends of the same memory kind, and device for device-placed
                              * memory; unregistered host memory at both ends counts as one) */
} dlmap__gpu_span;

/* Locates lo and whether hi lies in lo's allocation, with `device` current (-1: the thread's current device), leaving
 * the thread's context as it was (a thread that had none gets none back, though the query may have made one current).
 * Errors: as dlmap__gpu_locate. */
int32_t dlmap__gpu_locate_span(const dlmap__gpu *gpu, const void *lo, const void *hi, int32_t device,
                               dlmap__gpu_span *out, dlmap_error *err);

/* How many platforms' runtimes dlmap has loaded (never decreases: runtimes are never unloaded). Read by every import
 * and export, so that with none loaded the device-claim checks cost one load and a branch. */
extern int dlmap__gpu_runtimes_loaded;
static inline bool dlmap__gpu_any_loaded(void) { return __atomic_load_n(&dlmap__gpu_runtimes_loaded, __ATOMIC_ACQUIRE) != 0; }

/* A stream argument that names no stream (dlmap_device_allocator's DLMAP_NO_STREAM): the synchronous pair serves. */
#define DLMAP__GPU_NO_STREAM DLMAP_NO_STREAM

/* Where a GPU buffer came from, and so where it goes back. */
typedef enum dlmap__gpu_source {
  DLMAP__GPU_SYNCHRONOUS = 0, /* the runtime's malloc (or pinned, managed allocation): its free waits for the device */
  DLMAP__GPU_POOL = 1,        /* the runtime's stream-ordered pool: freed on a stream, no wait */
  DLMAP__GPU_FRAMEWORK = 2    /* the caller's dlmap_device_allocator */
} dlmap__gpu_source;

/* A GPU buffer dlmap made, with what giving it back needs (the framework's allocator copied: the caller's struct need
 * not outlive the request). */
typedef struct dlmap__gpu_buffer {
  void *memory;
  size_t bytes;
  dlmap_memory_kind kind;
  int32_t device;
  int32_t device_type;
  dlmap__gpu_source source;
  dlmap_device_allocator framework;
} dlmap__gpu_buffer;

/* bytes (at least 1 are allocated) of device memory on `device` (of device_type), pinned host memory or managed memory,
 * as kind says, into *out. Device memory comes from `framework` where it is not NULL; else, where a stream is named (a
 * stream of `device` the memory is first used on), from the runtime's stream-ordered pool of the kind (device memory:
 * the stream-ordered pair; pinned and managed memory: the default pools) where the runtime has one; else from the
 * kind's synchronous allocator. The caller owns it and gives it back with dlmap__gpu_release.
 * Errors: backend_call_failed, out_of_memory (the framework's allocator returned NULL). */
int32_t dlmap__gpu_allocate(const dlmap__gpu *gpu, const dlmap__gpu_buffer *want, void *stream,
                            const dlmap_device_allocator *framework, dlmap__gpu_buffer *out, dlmap_error *err);

/* Whether memory of `kind` comes from a stream-ordered pool when a stream is named (device memory: the runtime's
 * stream-ordered pair; pinned and managed memory: its default pools, asked for here at first use). */
bool dlmap__gpu_pooled(const dlmap__gpu *gpu, dlmap_memory_kind kind);

/* Gives back what dlmap__gpu_allocate made (any thread, with its device current for the call; failures are ignored:
 * there is no one to tell): to the framework's release with `stream`; to the pool on `stream`, once the device has run
 * the work queued there before this call, without a wait; with no stream (DLMAP__GPU_NO_STREAM), or where the pool's
 * free fails (a stream destroyed since), by the synchronous free, which waits for the device: the one order that is
 * right whatever stream the holder used. */
void dlmap__gpu_release(const dlmap__gpu *gpu, const dlmap__gpu_buffer *buffer, void *stream);

/* Which allocator serves the runtime's device copies, and why ("stream-ordered: cudaMallocAsync/cudaFreeAsync (runtime
 * 12040; since 11020)", "synchronous: cudaMalloc/cudaFree (…)"): for dlmap_platform_allocator. */
const char *dlmap__gpu_allocator(const dlmap__gpu *gpu);

/* The handle the spec gives the platform's runtime for a default-stream meaning (legacy_default,
 * per_thread_default, default); 0 when it gives none. Needs no loaded runtime. */
int32_t dlmap__gpu_default_stream(dlmap_platform platform, dlmap_stream_meaning meaning, void **handle);

/* The platform's loaded runtime, for releasing from a deleter; NULL when it was never loaded. */
const dlmap__gpu *dlmap__gpu_loaded(dlmap_platform platform);

/* One side of a copy: where the memory is (HOST for any host memory the runtime may not know) and on which
 * device (device and managed memory). */
typedef struct dlmap__gpu_end {
  void *data;              /* the first element */
  dlmap_memory_kind kind;
  int32_t device;
  int32_t device_type;     /* the DLDeviceType of `device` */
  const dlmap_device_allocator *framework; /* where a buffer dlmap makes on this end's device comes from (NULL: the
                                            * runtime) */
} dlmap__gpu_end;

/* Copies a tensor of `layout` at src into compact row-major dst, enqueued on `stream` (a stream of `device`;
 * NULL: its default stream): one memset when src is one host element broadcast over the shape (every stride 0)
 * whose bytes are all alike, one copy when src is compact, 2-D copies where the layout is rows of equal pitch
 * (a few where one end is host memory; between GPU memories as many as it takes, while each copies enough rows),
 * otherwise staged through host memory (which waits for the stream). Returns once enqueued; the caller synchronises
 * before reading on the host. Errors: backend_call_failed, out_of_memory (staging). */
int32_t dlmap__gpu_copy(const dlmap__gpu *gpu, const dlmap__gpu_end *dst, const dlmap__gpu_end *src,
                        const dlmap__copy_layout *layout, int32_t device, void *stream, dlmap_error *err);

/* Waits on the host until `stream` of `device` is idle. Error: backend_call_failed. */
int32_t dlmap__gpu_synchronize(const dlmap__gpu *gpu, int32_t device, void *stream, dlmap_error *err);

/* The DLPack stream protocol for one producer stream: records an event on `producer` (a stream of `device`;
 * NULL: its default stream) and makes the consumer's stream (by its meaning; `stream` is the handle when the
 * meaning is DLMAP_STREAM_HANDLE) wait on it with consumer_device current (-1: `device`), so that a default-stream
 * handle names the consumer's device's stream; the host is not blocked. no_sync does nothing; host_sync waits on
 * the host for `producer`. Errors: stream_sync_failed (with the vendor's text), backend_call_failed (switching
 * devices). */
int32_t dlmap__gpu_stream_wait(const dlmap__gpu *gpu, int32_t device, void *producer, int32_t consumer_device,
                               dlmap_stream_meaning meaning, int64_t stream, dlmap_error *err);

#endif /* DLMAP_SRC_BACKENDS_GPU_H_ */
