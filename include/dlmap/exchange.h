/* dlmap public API — exchanging tensors: export (to_dlpack / __dlpack__ / __dlpack_device__) and
 * import (from_dlpack), with the DLPack and Array API rules on versions, devices, copies, streams,
 * flags and ownership. Included by <dlmap/dlmap.h>; the same conventions apply (status + optional
 * dlmap_error, no allocation on error paths, static strings). */
#ifndef DLMAP_EXCHANGE_H_
#define DLMAP_EXCHANGE_H_

#ifndef DLMAP_DLMAP_H_
#error "include <dlmap/dlmap.h>, which includes this header"
#endif

#include <stddef.h> /* offsetof, for DLMAP_STRUCT_SIZE */
#include <string.h> /* memset, for the _default() initialisers */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory ------------------------------------------------------------------------------------- */

/* A framework's allocator for the blocks dlmap hands out (managed tensors and copies). allocate
 * returns memory aligned to `alignment` (a power of two) or NULL; release frees it and may be called
 * from any thread. NULL everywhere a dlmap_allocator is taken means malloc-based, 64-byte aligned. */
typedef struct dlmap_allocator {
  void *(*allocate)(void *ctx, size_t size, size_t alignment);
  void (*release)(void *ctx, void *pointer);
  void *ctx;
} dlmap_allocator;

/* The default allocator (malloc-based; any power-of-two alignment), for a framework that wraps it — to count
 * allocations, say — rather than writing its own. */
const dlmap_allocator *dlmap_allocator_default(void);

/* The stream argument of a dlmap_device_allocator call that names no stream: the allocation must be usable on any
 * stream at once, the release must not let the memory be reused before the device's queued work is done (the holder
 * named no stream: the protocol's -1, a consumer that synchronises itself). No runtime stream handle is -1. */
#define DLMAP_NO_STREAM ((void *)(intptr_t)-1)

/* A framework's allocator for device memory (issue 64): PyTorch's caching allocator, XLA's device allocator, a
 * stream-ordered pool. Where a request names one, every device buffer dlmap makes (a device copy, the compact buffer of
 * a strided device-to-host copy) comes from allocate, and goes back to release exactly once. Pinned and managed memory
 * still come from the runtime.
 * Both are called with device_id current (the runtime's current device, as dlmap leaves it after the call).
 *   allocate: bytes (at least 1) on device device_id of device_type (a DLDeviceType value), first used by work dlmap
 *             queues on `stream` (the runtime's cudaStream_t / hipStream_t of that device; DLMAP_NO_STREAM: any). NULL:
 *             out of memory (the export or import then fails with out_of_memory, nothing leaked).
 *   release:  gives back what allocate returned, with its bytes and device, once the work queued on `stream` before the
 *             call has run: the stream the holder named to dlmap, DLMAP_NO_STREAM where it named none. Never blocks
 *             in dlmap's name; may be called from any thread, with or without Python's GIL.
 * dlmap copies the struct: it need not outlive the call that named it. */
typedef struct dlmap_device_allocator {
  void *(*allocate)(void *ctx, size_t bytes, int32_t device_type, int32_t device_id, void *stream);
  void (*release)(void *ctx, void *pointer, size_t bytes, int32_t device_type, int32_t device_id, void *stream);
  void *ctx;
} dlmap_device_allocator;

/* Alignment of every buffer dlmap allocates for data (copies). */
#define DLMAP_DATA_ALIGNMENT 64

/* Whether dlmap may copy: the Array API's copy=None / True / False. */
typedef enum dlmap_copy_mode {
  DLMAP_COPY_IF_NEEDED = 0, /* copy=None: reuse the memory when possible, else copy */
  DLMAP_COPY_ALWAYS = 1,    /* copy=True: always a fresh copy */
  DLMAP_COPY_NEVER = 2      /* copy=False: never copy; an error when a copy is needed */
} dlmap_copy_mode;

/* ---- export ------------------------------------------------------------------------------------- */

/* Structs a caller fills in start with struct_size, PJRT's way: the offset of the end of the struct's last field in
 * the header the caller was built with (DLMAP_STRUCT_SIZE, not sizeof, which counts tail padding and would not grow
 * when a bool is added). Fields are only ever appended, so the size says which fields the caller has. The library
 * accepts every size it knows (this header's, each earlier layout's, and sizeof of the 0.2.0 layout, which 0.2.0's
 * _default() wrote) and reads the fields past a caller's struct_size as zero; a size it does not know (a newer
 * header's included) is invalid_argument, never a read past the caller's struct. Start from the _default() value
 * below, which sets struct_size to this header's DLMAP_*_STRUCT_SIZE and zeroes the rest. In an array of structs
 * (dlmap_stream_wait_batch) the element stride is struct_size rounded up to the struct's alignment. */
#define DLMAP_STRUCT_SIZE(type, last_field) \
  ((uint32_t)(offsetof(type, last_field) + sizeof(((type *)0)->last_field)))

/* A framework's array, as export sees it. dlmap reads it during dlmap_export only. */
typedef struct dlmap_array {
  uint32_t struct_size;    /* DLMAP_ARRAY_STRUCT_SIZE: start from dlmap_array_default() */
  void *data;              /* base pointer (or opaque handle on handle-based devices) */
  int32_t device_type;     /* DLDeviceType value */
  int32_t device_id;
  DLDataType dtype;
  int32_t ndim;
  const int64_t *shape;    /* ndim extents; may be NULL when ndim == 0 */
  const int64_t *strides;  /* ndim strides in elements; NULL means compact row-major */
  uint64_t byte_offset;    /* bytes from data to the first element; kept in a view (export.byte_offset fold: in data) */
  bool read_only;          /* the consumer must not write */
  bool subbyte_padded;     /* sub-byte elements are padded to a byte each (IS_SUBBYTE_TYPE_PADDED) */
  /* The owner keeps the data alive. On success dlmap takes this one reference and calls
   * release(owner) exactly once, when the consumer calls the managed tensor's deleter (from any
   * thread). On error the caller keeps it. release may be NULL. */
  void *owner;
  void (*release)(void *owner);
  /* GPU arrays: the framework's stream (cudaStream_t / hipStream_t of device_id) whose work last wrote the
   * data; NULL: the runtime's default stream. Export makes the consumer's stream wait for it (an event
   * recorded here, never a host wait unless the stream argument means host_sync) and enqueues copies on it. */
  void *producer_stream;
  /* Devices the array is sharded over (JAX's Sharding): above 1 the export is refused (to_dlpack_multi_device);
   * 0 and 1 mean one device. */
  int32_t num_shards;
} dlmap_array;

/* This header's size of dlmap_array (the end of its last field). */
#define DLMAP_ARRAY_STRUCT_SIZE DLMAP_STRUCT_SIZE(dlmap_array, num_shards)

/* An array with struct_size set, on the host (the spec's kDLCPU, device 0), and every other field zero (no data, no
 * owner). */
static inline dlmap_array dlmap_array_default(void) {
  dlmap_array array;
  memset(&array, 0, sizeof array);
  array.struct_size = DLMAP_ARRAY_STRUCT_SIZE;
  array.device_type = DLMAP_DEVICE_CPU;
  return array;
}

/* What the consumer asked for: __dlpack__(*, stream, max_version, dl_device, copy). */
typedef struct dlmap_export_request {
  uint32_t struct_size;     /* DLMAP_EXPORT_REQUEST_STRUCT_SIZE: start from dlmap_export_request_default() */
  bool has_max_version;     /* false: max_version=None, the consumer wants a legacy DLManagedTensor */
  dlmap_version max_version;
  bool has_dl_device;       /* false: dl_device=None, the array's own device */
  int32_t dl_device_type;
  int32_t dl_device_id;
  dlmap_copy_mode copy;
  bool has_stream;          /* false: stream=None */
  int64_t stream;           /* __dlpack__'s stream argument: the protocol's integer (dlmap_stream_handle maps it) */
  const dlmap_allocator *allocator; /* NULL: the default allocator */
  /* Check the stream but leave the consumer's wait to one dlmap_stream_wait_batch call over many exports
   * (out->stream says what it must do). Copies are still complete or ordered before the export returns. */
  bool defer_stream_sync;
  const dlmap_device_allocator *device_allocator; /* device copies' memory; NULL: the runtime's (stream-ordered) */
} dlmap_export_request;

#define DLMAP_EXPORT_REQUEST_STRUCT_SIZE DLMAP_STRUCT_SIZE(dlmap_export_request, device_allocator)

/* max_version=None, dl_device=None, copy=None, stream=None, the default allocator. */
static inline dlmap_export_request dlmap_export_request_default(void) {
  dlmap_export_request request;
  memset(&request, 0, sizeof request);
  request.struct_size = DLMAP_EXPORT_REQUEST_STRUCT_SIZE;
  return request;
}

/* The exported tensor: exactly one of the two pointers is set, per `structure`. The consumer owns it
 * and releases it by calling its deleter exactly once (from any thread). */
typedef struct dlmap_exported {
  dlmap_struct_kind structure;               /* DLMAP_STRUCT_LEGACY or DLMAP_STRUCT_VERSIONED */
  DLManagedTensor *legacy;
  struct DLManagedTensorVersioned *versioned;
  dlmap_version version;                     /* the version negotiated (stamped on a versioned tensor) */
  bool copied;                               /* dlmap made a copy (IS_COPIED on a versioned tensor) */
  dlmap_stream_meaning stream;               /* how the stream argument was honoured */
} dlmap_exported;

/* Exports array per request: one allocation holds the managed tensor, shape and strides (plus the
 * data when copied). Errors: the catalogue's version, device, dtype, shape, stream, copy and memory
 * errors; on error nothing was allocated, out is untouched and the caller still owns array->owner. */
int32_t dlmap_export(const dlmap_array *array, const dlmap_export_request *request, dlmap_exported *out,
                     dlmap_error *err);

/* The stream protocol for many exports at once (frameworks exchanging thousands of parameters per step):
 * for each distinct (platform, device_id, producer_stream) among the GPU arrays, one event recorded on the
 * producer's stream and one wait of the consumer's stream (stream/has_stream as __dlpack__ got them, read
 * by each array's device type; host_sync waits on the host once per producer stream instead). Host arrays
 * need nothing. dlmap reads the arrays during the call only. *waits (may be NULL) receives the number of
 * waits enqueued. Errors: stream_invalid, device_id_out_of_range, platform_unavailable, stream_sync_failed. */
int32_t dlmap_stream_wait_batch(const dlmap_array *arrays, size_t count, bool has_stream, int64_t stream,
                                size_t *waits, dlmap_error *err);

/* The runtime stream handle a consumer's `stream` argument names for a device type (has_stream false: None),
 * for dlmap_import_request.consumer_stream: a value the convention reads as a handle is that cudaStream_t / hipStream_t, a
 * default stream is the handle the spec gives its platform's runtime (CUDA: 1 the legacy default stream, 2 the
 * per-thread default stream; ROCm: 0 the null stream), and no_sync (-1) or a device type without streams gives
 * NULL (the runtime's default stream). Needs no runtime. Errors: device_type_unknown, stream_invalid. */
int32_t dlmap_stream_handle(int32_t device_type, bool has_stream, int64_t stream, void **handle, dlmap_error *err);

/* Where the runtime of a device type's platform says pointer lives (to check a producer's claim):
 * DLMAP_MEMORY_DEVICE or DLMAP_MEMORY_MANAGED with *device_id set, DLMAP_MEMORY_HOST_PINNED, or
 * DLMAP_MEMORY_HOST for memory the runtime does not know; DLMAP_MEMORY_KIND_COUNT for a memory type the
 * spec does not list. Errors: device_type_unknown, platform_unavailable (no GPU runtime here: CPU and
 * backend-less device types included), backend_call_failed. */
int32_t dlmap_memory_locate(int32_t device_type, const void *pointer, dlmap_memory_kind *kind, int32_t *device_id,
                            dlmap_error *err);

/* Where an array lives, as a framework describes it to __dlpack_device__. */
typedef struct dlmap_device_query {
  uint32_t struct_size;          /* DLMAP_DEVICE_QUERY_STRUCT_SIZE: start from dlmap_device_query_default() */
  const char *platform;          /* the framework's platform name: "cpu", "gpu", "tpu", "cuda", … */
  const char *platform_version;  /* for "gpu": the runtime's platform_version ("cuda 12.4", "rocm 6") */
  bool pinned_host;              /* the memory kind is pinned host memory */
  int32_t num_shards;            /* devices the array is sharded over (1 for a plain array) */
  bool has_local_hardware_id;    /* accelerator ordinal known (ignored for the cpu platform) */
  int32_t local_hardware_id;
} dlmap_device_query;

#define DLMAP_DEVICE_QUERY_STRUCT_SIZE DLMAP_STRUCT_SIZE(dlmap_device_query, local_hardware_id)

/* A query with struct_size set, for one device (num_shards 1), every other field zero (no platform yet). */
static inline dlmap_device_query dlmap_device_query_default(void) {
  dlmap_device_query query;
  memset(&query, 0, sizeof query);
  query.struct_size = DLMAP_DEVICE_QUERY_STRUCT_SIZE;
  query.num_shards = 1;
  return query;
}

/* __dlpack_device__: the (device type, device id) the array reports, by the profile's rules (the first whose
 * platform and memory kind match; "gpu" is resolved through platform_version). Errors: dlpack_sharded,
 * unknown_gpu_platform, no_local_hardware_id, a rule's error, the profile's error for an unmatched platform. */
int32_t dlmap_dlpack_device(const dlmap_device_query *query, int32_t *device_type, int32_t *device_id,
                            dlmap_error *err);


/* ---- import ------------------------------------------------------------------------------------- */

/* The largest ndim dlmap accepts (NumPy's maximum): a guard against reading far past shape and strides. */
#define DLMAP_MAX_NDIM 64

/* Which strides the caller can use without a copy. */
typedef enum dlmap_layout_policy {
  DLMAP_LAYOUT_ANY = 0,                 /* any strides: negative, zero (broadcast), gaps */
  DLMAP_LAYOUT_COMPACT_PERMUTATION = 1, /* a permutation of a compact layout (what XLA needs) */
  DLMAP_LAYOUT_ROW_MAJOR = 2            /* C-contiguous */
} dlmap_layout_policy;

/* What the consumer needs: from_dlpack(x, *, device, copy) plus its own constraints. The default (also what a NULL
 * request means): own device, copy only when needed, any layout, read-only acceptable, no alignment. */
typedef struct dlmap_import_request {
  uint32_t struct_size;     /* DLMAP_IMPORT_REQUEST_STRUCT_SIZE: start from dlmap_import_request_default() */
  bool has_device;          /* false: keep the tensor's device */
  int32_t device_type;      /* the target device (e.g. kDLCPU to read pinned/managed memory on the host) */
  int32_t device_id;
  dlmap_copy_mode copy;
  bool writable;            /* the caller will write: a READ_ONLY tensor needs a copy */
  dlmap_layout_policy layout;
  uint64_t alignment;       /* required alignment of the first element in bytes (power of two); 0: none */
  bool has_reported_device; /* __dlpack_device__ said otherwise than the tensor (PyTorch reports pinned */
  int32_t reported_device_type; /* tensors as kDLCUDAHost but stores kDLCPU): the report wins where a host-memory
                                 * tensor is reported as host_pinned memory; any other disagreement is
                                 * device_report_mismatch */
  const dlmap_allocator *allocator; /* for copies; NULL: the default allocator */
  /* GPU copies: the runtime handle (cudaStream_t / hipStream_t) of the consumer's stream the tensor is ready on, i.e.
   * the one it passed to __dlpack__ (dlmap_stream_handle turns that protocol integer into it); NULL: the runtime's
   * default stream. Copies run on it and are complete before the import returns, so the producer's tensor is
   * released only after its memory was read. Named as dlmap_array.producer_stream: a `*_stream` is a handle, a
   * plain `stream` (dlmap_export_request, dlmap_stream_wait_batch) the protocol's integer. */
  void *consumer_stream;
  /* Devices the result is to be placed on (JAX's from_dlpack device=Sharding): above 1 the import is refused
   * (from_dlpack_multi_device); 0 and 1 mean one device. */
  int32_t num_shards;
  const dlmap_device_allocator *device_allocator; /* device copies' memory; NULL: the runtime's (stream-ordered) */
} dlmap_import_request;

#define DLMAP_IMPORT_REQUEST_STRUCT_SIZE DLMAP_STRUCT_SIZE(dlmap_import_request, device_allocator)

static inline dlmap_import_request dlmap_import_request_default(void) {
  dlmap_import_request request;
  memset(&request, 0, sizeof request);
  request.struct_size = DLMAP_IMPORT_REQUEST_STRUCT_SIZE;
  return request;
}

/* An imported tensor: a view of the producer's memory or a copy dlmap owns. Keep the struct in place
 * until released: shape and strides may point into it. */
typedef struct dlmap_imported {
  DLTensor tensor;          /* strides are never NULL for ndim > 0 (compact ones are filled in) */
  bool read_only;           /* the producer marked the data READ_ONLY and dlmap did not copy */
  bool copied;              /* dlmap copied the data (the producer's tensor is already released) */
  bool subbyte_padded;      /* IS_SUBBYTE_TYPE_PADDED: each sub-byte element takes one byte (view or copy) */
  dlmap_version version;    /* the producer's version (a legacy tensor reports 0.0) */
  /* private: what dlmap_imported_release frees */
  void *managed_;
  bool versioned_;
  void *copy_;
  dlmap_allocator allocator_;
  void *gpu_copy_;          /* a copy in GPU memory (device, pinned or managed), given back where it came from: */
  int32_t gpu_platform_;
  int32_t gpu_memory_;
  int32_t gpu_source_;       /* the runtime's synchronous allocator, its stream-ordered pool, or gpu_allocator_ */
  size_t gpu_bytes_;
  void *gpu_release_stream_; /* the consumer's stream the copy was handed to: where it is released */
  dlmap_device_allocator gpu_allocator_;
  /* Last, and outside what import and release zero (512 bytes no one reads unless tensor.strides points here):
   * the strides dlmap fills in for a producer that sent none. */
  int64_t strides_[DLMAP_MAX_NDIM];
} dlmap_imported;

/* Imports a producer's tensor. dlmap takes ownership in every case: on success `out` holds it until
 * dlmap_imported_release; on every error dlmap has already called the tensor's deleter exactly once
 * (for an unknown major version that is the only field it touches). Errors: the catalogue's version,
 * device, dtype, shape, layout, alignment, read-only, copy and memory errors, and invalid_argument for
 * a request whose copy, layout or alignment (0 or a power of two) is out of range. */
int32_t dlmap_import_versioned(struct DLManagedTensorVersioned *tensor, const dlmap_import_request *request,
                               dlmap_imported *out, dlmap_error *err);

/* The same for a legacy DLManagedTensor (no version or flags: values are checked for being known to
 * the spec, not against a version, since producers such as JAX send float8 and kDLTPUHost this way). */
int32_t dlmap_import_legacy(DLManagedTensor *tensor, const dlmap_import_request *request, dlmap_imported *out,
                            dlmap_error *err);

/* Releases an imported tensor exactly once (calls the producer's deleter for a view, frees the copy);
 * any thread. Safe on a zeroed struct; afterwards every field up to strides_ is zero. */
void dlmap_imported_release(dlmap_imported *imported);

/* ---- prepared exchanges -------------------------------------------------------------------------
 * A framework exchanges the same few layouts over and over (a compiler hands over the same parameter shapes every
 * step). A plan runs every check of an export or import once, for a layout and a request; each exchange through it
 * then does only what differs per call (the addresses, the owner, the block). The results, errors and ownership are
 * exactly those of the unprepared call with the same arguments: where a call differs from the plan in anything the
 * checks read, or the plan's outcome depends on the address (a copy, a GPU placement, a stream to synchronise), the
 * planned call makes the unprepared one. A plan is read-only once made: any number of threads may use it at once. It
 * is allocated with the request's allocator and freed with the plan's _free function.
 * The unprepared calls keep one such plan per thread themselves (thread-local, nothing allocated): the plan of the
 * last view whose layout came twice in a row, which serves an unprepared call with the same array or tensor and
 * request, with the same results. */

typedef struct dlmap_export_plan dlmap_export_plan;

/* Checks array and request as dlmap_export would (array->data and byte_offset included: the data pointer must be
 * non-NULL where there are elements; owner and release are not read) and makes a plan for exporting arrays of that
 * layout. Errors: those dlmap_export gives for array and request, out_of_memory, invalid_argument. */
int32_t dlmap_export_plan_create(const dlmap_array *array, const dlmap_export_request *request,
                                 dlmap_export_plan **plan, dlmap_error *err);

/* dlmap_export of the plan's array with this data, owner and release, under the plan's request. */
int32_t dlmap_export_planned(const dlmap_export_plan *plan, void *data, void *owner, void (*release)(void *owner),
                             dlmap_exported *out, dlmap_error *err);

/* Frees a plan (NULL: nothing). Tensors exported through it do not need it. */
void dlmap_export_plan_free(dlmap_export_plan *plan);

typedef struct dlmap_import_plan dlmap_import_plan;

/* Checks a description of the tensors a consumer expects, as dlmap_import_versioned (versioned: with version and
 * flags) or dlmap_import_legacy would under request (layout->data is a representative address: the checks read it),
 * and makes a plan for importing them. Errors: those the import would give that description, out_of_memory,
 * invalid_argument. */
int32_t dlmap_import_plan_create(const DLTensor *layout, bool versioned, dlmap_version version, uint64_t flags,
                                 const dlmap_import_request *request, dlmap_import_plan **plan, dlmap_error *err);

/* dlmap_import_versioned / dlmap_import_legacy of tensor under the plan's request, with the same ownership rule: dlmap
 * owns the tensor in every case (a NULL plan is invalid_argument, the tensor released). A tensor that matches the
 * plan's description in every field but data and byte_offset, whose addresses pass the checks, is imported without
 * rerunning them. */
int32_t dlmap_import_versioned_planned(const dlmap_import_plan *plan, struct DLManagedTensorVersioned *tensor,
                                       dlmap_imported *out, dlmap_error *err);
int32_t dlmap_import_legacy_planned(const dlmap_import_plan *plan, DLManagedTensor *tensor, dlmap_imported *out,
                                    dlmap_error *err);

/* Frees a plan (NULL: nothing). Tensors imported through it do not need it. */
void dlmap_import_plan_free(dlmap_import_plan *plan);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLMAP_EXCHANGE_H_ */
