/* dlmap Python binding — dlmap.Array: a tensor dlmap allocated or imported, with __dlpack__ / __dlpack_device__
 * over dlmap_export, its properties, and the buffer protocol for host memory (read-only honoured). */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/binding.h"

/* ---- allocation ----------------------------------------------------------------------------------------------------- */

int32_t dlmap_py_allocate_tensor(int32_t ndim, const int64_t *shape, DLDataType dtype, int32_t device_type,
                                 int32_t device_id, const dlmap_device_allocator *device_allocator,
                                 dlmap_exported *out, dlmap_error *err) {
  /* dlmap allocates by exporting a copy (copy=True): the source is one zero element broadcast over the shape (all
   * strides 0), so the copy is a zero-filled compact tensor in one block that dlmap's deleter frees. Sub-byte and
   * very wide elements, which the strided copy does not serve, copy from a zeroed compact scratch buffer instead. */
  static const unsigned char zeros[256];
  int64_t strides[DLMAP_MAX_NDIM];
  dlmap_array array = dlmap_array_default();
  array.data = (void *)zeros; /* only read */
  array.device_type = DLMAP_DEVICE_CPU;
  array.dtype = dtype;
  array.ndim = ndim;
  array.shape = shape;
  const uint64_t element_bits = (uint64_t)dtype.bits * dtype.lanes;
  const bool ndim_ok = ndim >= 0 && ndim <= DLMAP_MAX_NDIM && (ndim == 0 || shape != NULL);
  void *scratch = NULL;
  if (ndim_ok && element_bits > 0 && element_bits % 8 == 0 && element_bits / 8 <= sizeof zeros) {
    memset(strides, 0, sizeof strides);
    array.strides = strides;
  } else if (ndim_ok && element_bits > 0) {
    uint64_t count = 1, bits = 0;
    bool sized = true;
    for (int32_t i = 0; i < ndim && sized; i++) {
      sized = shape[i] >= 0 && !__builtin_mul_overflow(count, (uint64_t)shape[i], &count);
    }
    /* Only for a size dlmap accepts (bits fit in int64): a wrapped or oversized count is export's size_overflow,
     * not a failed attempt to allocate 2^61 bytes of scratch. */
    if (sized && !__builtin_mul_overflow(count, element_bits, &bits) && bits <= (uint64_t)INT64_MAX) {
      scratch = calloc((size_t)(bits / 8) + 1, 1);
      if (scratch == NULL) {
        return dlmap_raise_out_of_memory(err, bits / 8 + 1, "a zero-filled source");
      }
      array.data = scratch;
    } /* otherwise dlmap_export reports the bad shape */
  }
  dlmap_export_request request = dlmap_export_request_default();
  request.has_max_version = true;
  request.max_version = dlmap_version_current();
  request.has_dl_device = true;
  request.dl_device_type = device_type;
  request.dl_device_id = device_id;
  request.copy = DLMAP_COPY_ALWAYS;
  request.allocator = &dlmap_py_allocator;
  request.device_allocator = device_allocator;
  const int32_t status = dlmap_export(&array, &request, out, err);
  free(scratch);
  /* A fresh tensor: nothing of the caller's was copied. */
  if (status == DLMAP_OK && out->structure == DLMAP_STRUCT_VERSIONED) out->versioned->flags &= ~DLMAP_FLAG_IS_COPIED;
  return status;
}

/* ---- construction and destruction ---------------------------------------------------------------------------------- */

/* The answer for each device type below 64, read from the spec's tables once (0: not yet; 1: no; 2: yes): every
 * import and export asks it once or twice, and two table lookups cost about 30 instructions each. */
static _Atomic(unsigned char) gpu_device_answers[64];

bool dlmap_py_gpu_device_type(int32_t device_type) {
  const bool small = device_type >= 0 && device_type < 64;
  const unsigned char known = small ? atomic_load_explicit(&gpu_device_answers[device_type], memory_order_relaxed) : 0;
  if (known != 0) return known == 2;
  const dlmap_device_info *device = dlmap_device_type_find(device_type);
  const bool gpu = device != NULL && dlmap_platform_find(device->platform)->backend == DLMAP_BACKEND_GPU;
  if (small) atomic_store_explicit(&gpu_device_answers[device_type], gpu ? 2 : 1, memory_order_relaxed);
  return gpu;
}

/* ---- imports that may wait on a GPU run without the GIL; the producer's deleter still runs with it ---------------- */

/* A stand-in for the producer's managed tensor: the same fields, and a deleter that calls the producer's only while the
 * GIL is held. dlmap imports the stand-in; a release that happens while the import runs without the GIL (an error, or
 * a copy that no longer needs the producer) is carried out once the GIL is back. Not every producer's deleter takes
 * the GIL itself (NumPy's did not before 1.25). */
typedef struct deferred_tensor {
  union {
    struct DLManagedTensorVersioned versioned;
    DLManagedTensor legacy;
  } stand_in; /* first: the stand-in's address is the struct's */
  void *producer;
  bool versioned;
  bool importing;        /* the import is running (without the GIL where it may wait on a GPU) */
  bool release_pending;  /* the stand-in was released meanwhile */
} deferred_tensor;

static void deferred_finish(deferred_tensor *d) {
  dlmap_py_delete_managed(d->producer, d->versioned);
  free(d);
}

static void deferred_release(deferred_tensor *d) {
  if (d->importing) {
    d->release_pending = true;
  } else {
    deferred_finish(d);
  }
}

static void deferred_versioned_deleter(struct DLManagedTensorVersioned *self) {
  deferred_release((deferred_tensor *)(void *)self);
}

static void deferred_legacy_deleter(DLManagedTensor *self) { deferred_release((deferred_tensor *)(void *)self); }

/* Whether importing the tensor may call the GPU backend (its device, the report or the target is GPU memory). */
static bool import_touches_gpu(void *managed, bool versioned, const dlmap_import_request *request) {
  const DLTensor *t;
  if (versioned) {
    const struct DLManagedTensorVersioned *v = (const struct DLManagedTensorVersioned *)managed;
    const dlmap_version version = {v->version.major, v->version.minor};
    if (dlmap_version_struct(version) != DLMAP_STRUCT_VERSIONED) return false; /* only the version may be read */
    t = &v->dl_tensor;
  } else {
    t = &((const DLManagedTensor *)managed)->dl_tensor;
  }
  return dlmap_py_gpu_device_type((int32_t)t->device.device_type) ||
         (request != NULL && request->has_device && dlmap_py_gpu_device_type(request->device_type)) ||
         (request != NULL && request->has_reported_device && dlmap_py_gpu_device_type(request->reported_device_type));
}

static int32_t import_managed(void *managed, bool versioned, const dlmap_import_request *request, dlmap_imported *out,
                              dlmap_error *err) {
  return versioned ? dlmap_import_versioned((struct DLManagedTensorVersioned *)managed, request, out, err)
                   : dlmap_import_legacy((DLManagedTensor *)managed, request, out, err);
}

/* import_managed with the GIL held: a refused import releases the tensor (a dlmap export's owner with it) here. */
static int32_t import_managed_held(void *managed, bool versioned, const dlmap_import_request *request,
                                   dlmap_imported *out, dlmap_error *err) {
  PyThreadState *before = dlmap_py_deleters_begin();
  const int32_t status = import_managed(managed, versioned, request, out, err);
  dlmap_py_deleters_end(before);
  return status;
}

/* A stand-in for managed (deferred_tensor), or NULL without memory. For a versioned tensor of a major version dlmap
 * does not know only the ABI-stable head is copied (the producer's struct may end there; import reads no more). */
static deferred_tensor *stand_in_for(void *managed, bool versioned) {
  deferred_tensor *d = calloc(1, sizeof *d);
  if (d == NULL) return NULL;
  d->producer = managed;
  d->versioned = versioned;
  if (versioned) {
    const struct DLManagedTensorVersioned *v = (const struct DLManagedTensorVersioned *)managed;
    const dlmap_version version = {v->version.major, v->version.minor};
    const bool known = dlmap_version_struct(version) == DLMAP_STRUCT_VERSIONED;
    memcpy(&d->stand_in.versioned, managed, known ? sizeof *v : offsetof(struct DLManagedTensorVersioned, dl_tensor));
    d->stand_in.versioned.deleter = deferred_versioned_deleter;
  } else {
    d->stand_in.legacy = *(DLManagedTensor *)managed;
    d->stand_in.legacy.deleter = deferred_legacy_deleter;
  }
  return d;
}

/* Imports check a tensor's device claim only against the GPU runtimes dlmap has loaded (src/device_claim.h); in a
 * process where only a framework loaded one (torch's libcudart, when torch is imported), dlmap adopts it here, so that
 * a host-side claim over device memory is refused before the host reads it (issue 48). Probing costs one
 * dlopen(RTLD_NOLOAD) per library name, more than an import: it is repeated only when the interpreter's module table
 * has changed size since the last probe (frameworks load their runtime when imported), so a process that imports
 * nothing new pays one comparison per import. A runtime loaded later without an import (lazily, on first use) is
 * adopted at the next change of sys.modules, or once dlmap loads it itself (any GPU exchange). The GIL guards the
 * size. */
static Py_ssize_t modules_at_last_probe = -1;

static void adopt_loaded_runtimes(void) {
  PyObject *modules = PyImport_GetModuleDict();
  const Py_ssize_t size = modules != NULL && PyDict_Check(modules) ? PyDict_GET_SIZE(modules) : 0;
  if (__builtin_expect(size == modules_at_last_probe, 1)) return;
  modules_at_last_probe = size;
  dlmap_platform_adopt_loaded();
}

PyObject *dlmap_py_import(void *managed, bool versioned, const dlmap_import_request *request, const char *via) {
  return dlmap_py_import_or_leave(managed, versioned, request, via, NULL);
}

/* The producer's flags an array keeps: only a known major version makes a versioned tensor's `flags` trustworthy
 * (dlmap_import_versioned rejects the others). */
static void producer_flags(const void *managed, bool versioned, bool *padded, bool *producer_copied) {
  *padded = *producer_copied = false;
  if (!versioned) return;
  const struct DLManagedTensorVersioned *t = (const struct DLManagedTensorVersioned *)managed;
  const dlmap_version version = {t->version.major, t->version.minor};
  if (dlmap_version_struct(version) == DLMAP_STRUCT_VERSIONED) {
    *padded = (t->flags & DLMAP_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0;
    *producer_copied = (t->flags & DLMAP_FLAG_IS_COPIED) != 0;
  }
}

/* The import through a stand-in: without the GIL where it touches a GPU. Refused with `left`: import released the
 * stand-in, never the producer's tensor, which is left to its owner (*left true). */
static int32_t import_through_stand_in(deferred_tensor *deferred, bool gpu, bool versioned,
                                       const dlmap_import_request *request, dlmap_py_array *self, bool *left,
                                       dlmap_error *err) {
  int32_t status;
  deferred->importing = true;
  if (gpu) {
    Py_BEGIN_ALLOW_THREADS
    status = import_managed(&deferred->stand_in, versioned, request, &self->imported, err);
    Py_END_ALLOW_THREADS
  } else {
    status = import_managed_held(&deferred->stand_in, versioned, request, &self->imported, err);
  }
  deferred->importing = false;
  if (status != DLMAP_OK && left != NULL) {
    *left = true;
    if (deferred->release_pending) free(deferred);
  } else if (deferred->release_pending) {
    deferred_finish(deferred);
  }
  return status;
}

/* The buffer protocol's shape and byte strides of the imported tensor (inline where they fit); false without memory. */
static bool fill_buffer_dims(dlmap_py_array *self) {
  const DLTensor *t = &self->imported.tensor;
  if (t->ndim <= 0) return true;
  self->buffer_dims = 2 * (size_t)t->ndim <= sizeof self->inline_dims / sizeof self->inline_dims[0]
                          ? self->inline_dims
                          : (Py_ssize_t *)PyMem_Malloc(2 * (size_t)t->ndim * sizeof(Py_ssize_t));
  if (self->buffer_dims == NULL) return false;
  const Py_ssize_t itemsize = (Py_ssize_t)((t->dtype.bits * (uint32_t)t->dtype.lanes) / 8);
  for (int32_t i = 0; i < t->ndim; i++) {
    self->buffer_dims[i] = (Py_ssize_t)t->shape[i];
    /* Import checks the strides of dimensions that step (extent > 1 in a tensor with elements); any other stride
     * addresses nothing and may be huge: where its byte stride does not fit, 0 says the same. */
    int64_t byte_stride;
    if (__builtin_mul_overflow(t->strides[i], (int64_t)itemsize, &byte_stride)) byte_stride = 0;
    self->buffer_dims[t->ndim + i] = (Py_ssize_t)byte_stride;
  }
  return true;
}

PyObject *dlmap_py_import_or_leave(void *managed, bool versioned, const dlmap_import_request *request, const char *via,
                                   bool *left) {
  adopt_loaded_runtimes();
  bool padded, producer_copied;
  producer_flags(managed, versioned, &padded, &producer_copied);
  dlmap_py_array *self = (dlmap_py_array *)dlmap_py_array_type.tp_alloc(&dlmap_py_array_type, 0);
  /* Import in place: the imported struct must not move once its strides may point into it. GPU work (runtime
   * start-up, copies, stream synchronisation) runs without the GIL, through a stand-in (without memory for one, with
   * the GIL); so does every import that may leave a refused tensor to its owner (without memory: nothing is taken). */
  const bool gpu = self != NULL && import_touches_gpu(managed, versioned, request);
  deferred_tensor *deferred = self != NULL && (gpu || left != NULL) ? stand_in_for(managed, versioned) : NULL;
  if (left != NULL && deferred == NULL) {
    *left = true;
    Py_XDECREF(self);
    return PyErr_NoMemory();
  }
  if (self == NULL) {
    dlmap_py_delete_managed(managed, versioned);
    return NULL;
  }
  dlmap_error err;
  /* Device copies take their memory from the framework's allocator where one is installed (a NULL request: the
   * defaults, as dlmap reads them). */
  dlmap_device_allocator storage;
  const dlmap_device_allocator *taken = gpu ? dlmap_py_device_allocator_take(&storage) : NULL;
  dlmap_import_request with;
  if (taken != NULL) {
    with = request != NULL ? *request : dlmap_import_request_default();
    with.device_allocator = taken;
    request = &with;
  }
  const int32_t status = deferred != NULL
                             ? import_through_stand_in(deferred, gpu, versioned, request, self, left, &err)
                             : import_managed_held(managed, versioned, request, &self->imported, &err);
  if (status != DLMAP_OK) {
    memset(&self->imported, 0, sizeof self->imported);
    Py_DECREF(self);
    dlmap_py_raise(&err);
    dlmap_py_device_allocator_done(taken);
    return NULL;
  }
  dlmap_py_device_allocator_done(taken);
  self->producer_stream = request != NULL ? request->consumer_stream : NULL;
  self->read_only = self->imported.read_only;
  self->source_read_only = self->imported.read_only;
  self->subbyte_padded = padded;
  self->producer_copied = producer_copied;
  self->via = via;
  if (!fill_buffer_dims(self)) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

/* Arrays come and go once per exchange, and each is larger than CPython's small-object allocator serves (the stride
 * scratch): a few dead ones are kept for the next (as CPython does for floats and tuples), which saves a malloc and a
 * free per from_dlpack. Only touched with the GIL held. */
#define DLMAP_PY_ARRAY_FREELIST 8
static PyObject *array_freelist[DLMAP_PY_ARRAY_FREELIST];
static int array_freelist_size;

static void array_free(PyObject *op) {
  if (array_freelist_size < DLMAP_PY_ARRAY_FREELIST) {
    array_freelist[array_freelist_size++] = op;
  } else {
    PyObject_Free(op);
  }
}

/* Releases a dead array: the producer's tensor, then the object's memory. */
static void array_finish(dlmap_py_array *self) {
  /* The producer's deleter may run Python code (NumPy's drops its array): keep any pending exception. */
#if PY_VERSION_HEX >= 0x030C0000
  PyObject *pending = PyErr_GetRaisedException();
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  PyThreadState *before = dlmap_py_deleters_begin();
  dlmap_imported_release(&self->imported);
  dlmap_py_deleters_end(before);
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(pending);
#else
  PyErr_Restore(type, value, traceback);
#endif
  if (self->buffer_dims != self->inline_dims) PyMem_Free(self->buffer_dims);
  dlmap_export_plan_free(self->export_plan.plan);
  array_free((PyObject *)self);
}

/* Releases run one after another, never one inside another (as CPython's trashcan does for containers): an array's
 * tensor may be an export of another array, whose last reference its deleter drops, and so on down a chain of
 * re-imports (`x = dlmap.from_dlpack(x)`, 100,000 times) that released recursively overflows the C stack. A dealloc
 * that starts while one of the same interpreter runs on this thread queues the dead array; the outer one releases
 * the queue in order (each tensor's deleter once, a link before the one it held). Per thread, so that another thread
 * taking the GIL meanwhile releases its own arrays; per interpreter, so that an array is released in its own. */
static _Thread_local struct release_queue {
  PyInterpreterState *interp; /* whose releases run on this thread now; NULL: none */
  dlmap_py_array *head, *tail;
} releasing;

static void array_dealloc(PyObject *op) {
  dlmap_py_array *self = (dlmap_py_array *)op;
  if (self->weakreflist != NULL) PyObject_ClearWeakRefs(op); /* now: weak references die with the object */
  self->release_next = NULL;
  struct release_queue *queue = &releasing; /* the thread's queue looked up once (a module's TLS costs a call) */
  if (queue->interp == self->interp) {
    if (queue->tail != NULL) {
      queue->tail->release_next = self;
    } else {
      queue->head = self;
    }
    queue->tail = self;
    return;
  }
  const struct release_queue outer = *queue; /* another interpreter's releases, entered from one of them */
  queue->interp = self->interp;
  queue->head = queue->tail = NULL;
  array_finish(self);
  while (queue->head != NULL) {
    dlmap_py_array *next = queue->head;
    queue->head = next->release_next;
    if (queue->head == NULL) queue->tail = NULL;
    array_finish(next);
  }
  *queue = outer;
}

/* ---- export ------------------------------------------------------------------------------------------------------- */

static bool host_accessible(int32_t device_type) {
  const dlmap_device_info *device = dlmap_device_type_find(device_type);
  return device != NULL && dlmap_memory_kind_host_accessible(device->memory);
}

/* ---- repeated exports of host arrays ---------------------------------------------------------------------------------
 * An Array's tensor never changes once imported (it was validated then), and neither do the profile and the spec: so
 * when a request that names neither a stream, a dl_device, a copy nor a deferred sync comes twice in a row with the
 * same readonly state, the array makes a dlmap_export_plan for it and exports through the plan while they stay the same
 * (the plan does the checks once; each export then only fills a block, bench/). Any other request and every GPU array
 * go through dlmap_export. */

/* Whether the request can be answered through a plan: the fields a request has, each compared (a new field takes the
 * unplanned path unless it is added here). */
static bool repeatable_request(const dlmap_export_request *r) {
  return !r->has_stream && !r->has_dl_device && r->copy != DLMAP_COPY_ALWAYS && !r->defer_stream_sync &&
         r->allocator == &dlmap_py_allocator;
}

static bool key_matches(const dlmap_py_array *self, const dlmap_export_request *r) {
  const struct dlmap_py_export_plan *e = &self->export_plan;
  return e->seen && e->read_only == self->read_only && e->copy == r->copy &&
         e->has_max_version == r->has_max_version &&
         (!r->has_max_version ||
          (e->max_version.major == r->max_version.major && e->max_version.minor == r->max_version.minor));
}

static uint64_t element_count(const DLTensor *t) {
  uint64_t count = 1;
  for (int32_t i = 0; i < t->ndim; i++) count *= (uint64_t)t->shape[i]; /* checked by dlmap on import */
  return count;
}

/* The array as dlmap_export sees it, owned by the export it is given to. */
static dlmap_array exported_array(dlmap_py_array *self) {
  const DLTensor *t = &self->imported.tensor;
  dlmap_array array = dlmap_array_default();
  array.data = t->data;
  array.byte_offset = t->byte_offset;
  if (t->data != NULL && t->byte_offset != 0 && host_accessible((int32_t)t->device.device_type) &&
      element_count(t) > 0) {
    /* Host memory is addressed directly: fold byte_offset into data, since consumers such as PyTorch before 2.6
     * ignore byte_offset. Handle-based devices keep it (their data must not be offset). Without elements the import
     * checked no address (none is read) and data + byte_offset may leave the address space: both are kept. */
    array.data = (char *)t->data + t->byte_offset;
    array.byte_offset = 0;
  }
  array.device_type = (int32_t)t->device.device_type;
  array.device_id = t->device.device_id;
  array.dtype = t->dtype;
  array.ndim = t->ndim;
  array.shape = t->shape;
  array.strides = t->strides;
  array.read_only = self->read_only;
  array.subbyte_padded = self->subbyte_padded;
  array.producer_stream = self->producer_stream;
  array.owner = self;
  array.release = dlmap_py_release_owner;
  return array;
}

/* After an unplanned export of a host array for a repeatable request: its key (the request's fields a plan answers,
 * the readonly state, the data pointer exported), replacing the plan of another key. */
static void key_record(dlmap_py_array *self, const dlmap_array *array, const dlmap_export_request *r) {
  struct dlmap_py_export_plan *e = &self->export_plan;
  dlmap_export_plan_free(e->plan);
  e->plan = NULL;
  e->seen = true;
  e->read_only = self->read_only;
  e->has_max_version = r->has_max_version;
  e->max_version = r->max_version;
  e->copy = r->copy;
  e->data = array->data;
}

/* The plan for a request whose key the last unplanned export recorded, made the second time the key comes (most arrays
 * are exported once: they never pay for a plan); NULL when there is none or it cannot be made (the export then goes
 * unplanned). */
static const dlmap_export_plan *plan_for(dlmap_py_array *self, const dlmap_export_request *r) {
  struct dlmap_py_export_plan *e = &self->export_plan;
  if (!repeatable_request(r) || !key_matches(self, r)) return NULL;
  if (e->plan == NULL) {
    const dlmap_array array = exported_array(self);
    (void)dlmap_export_plan_create(&array, r, &e->plan, NULL);
  }
  return e->plan;
}

/* The export's reference to the array and its count, taken before an export and dropped again when it fails. */
static int exported(dlmap_py_array *self, int32_t status, const dlmap_error *err) {
  if (status == DLMAP_OK) return 0;
  dlmap_py_count_export(-1);
  Py_DECREF(self);
  return dlmap_py_raise_int(err);
}

/* An export no plan serves: a GPU array, a request that names a stream, a dl_device, a copy or a deferred sync, or a
 * host array's first export for a request (recorded, so that the second makes the plan). Out of line: the planned
 * path's frame stays small. */
__attribute__((noinline)) static int export_unplanned(dlmap_py_array *self, const dlmap_export_request *request,
                                                      bool once_read_only, dlmap_exported *out) {
  dlmap_error err;
  dlmap_array array = exported_array(self);
  array.read_only = array.read_only || once_read_only;
  const bool gpu = dlmap_py_gpu_device_type(array.device_type) ||
                   (request->has_dl_device && dlmap_py_gpu_device_type(request->dl_device_type));
  /* GPU work runs without the GIL: dlmap_export touches no Python state (the owner's release, which does, runs only
   * from the exported tensor's deleter and takes the GIL itself; so does the framework's device allocator). */
  int32_t status;
  if (gpu) {
    dlmap_export_request with = *request;
    dlmap_device_allocator taken;
    with.device_allocator = dlmap_py_device_allocator_take(&taken);
    Py_BEGIN_ALLOW_THREADS
    status = dlmap_export(&array, &with, out, &err);
    Py_END_ALLOW_THREADS
    const int failed = exported(self, status, &err);
    dlmap_py_device_allocator_done(with.device_allocator);
    if (failed < 0) return -1;
    return 0;
  }
  status = dlmap_export(&array, request, out, &err);
  if (exported(self, status, &err) < 0) return -1;
  if (!gpu && !once_read_only && repeatable_request(request)) key_record(self, &array, request);
  return 0;
}

int dlmap_py_array_export(dlmap_py_array *self, const dlmap_export_request *request, bool read_only,
                          dlmap_exported *out) {
  /* A one-off read-only export of a writable array is not what the plan's key says: it goes unplanned. */
  bool once_read_only = read_only && !self->read_only;
  if (once_read_only && !request->has_max_version) {
    const dlmap_profile_info *profile = dlmap_profile_current();
    /* max_version=None gets a writable array's struct (absent), legacy where absent_read_only alone is versioned
     * (the generator allows no other difference), and a legacy tensor cannot say read-only: the profile's policy */
    if (profile->absent_struct != profile->absent_read_only_struct) {
      if (!profile->legacy_drops_read_only) {
        dlmap_py_raised(dlmap_raise_read_only_needs_versioned(DLMAP_PY_ERR));
        return -1;
      }
      once_read_only = false;
    }
  }
  const dlmap_export_plan *plan = once_read_only ? NULL : plan_for(self, request);
  dlmap_py_note_exporter();
  Py_INCREF(self); /* the export's reference, dropped by its deleter */
  dlmap_py_count_export(1);
  if (plan == NULL) return export_unplanned(self, request, once_read_only, out);
  dlmap_error err;
  return exported(self, dlmap_export_planned(plan, self->export_plan.data, self, dlmap_py_release_owner, out, &err),
                  &err);
}

/* The request of `x.__dlpack__()`: the defaults, through the module's counted allocator; every export starts from it. */
static const dlmap_export_request kPlainRequest = {.struct_size = DLMAP_EXPORT_REQUEST_STRUCT_SIZE,
                                                   .allocator = &dlmap_py_allocator};

/* __dlpack__'s arguments (None where not passed; read_only only under arguments.read_only) → the export. Inlined into
 * its two callers: the keyword path is what PyTorch's from_dlpack calls. */
__attribute__((always_inline)) static inline PyObject *export_with(PyObject *op, PyObject *stream,
                                                                   PyObject *max_version, PyObject *dl_device,
                                                                   PyObject *copy, PyObject *read_only_obj) {
  dlmap_export_request request = kPlainRequest;
  bool read_only = false;
  /* max_version's common spelling under the profile's pair reading is read inline; anything else, in full. */
  if (max_version != Py_None && dlmap_profile_current()->max_version_reading == DLMAP_MAX_VERSION_PAIR &&
      dlmap_py_small_pair(max_version, &request.max_version.major, &request.max_version.minor)) {
    request.has_max_version = true;
    max_version = Py_None;
  }
  if ((stream != Py_None && dlmap_py_parse_stream(stream, "stream", &request.has_stream, &request.stream) < 0) ||
      (max_version != Py_None &&
       dlmap_py_parse_export_max_version(max_version, &request.has_max_version, &request.max_version) < 0) ||
      (dl_device != Py_None && dlmap_py_parse_export_dl_device(dl_device, &request.has_dl_device,
                                                               &request.dl_device_type, &request.dl_device_id) < 0) ||
      (copy != Py_None && dlmap_py_parse_export_copy(copy, &request.copy) < 0) ||
      dlmap_py_parse_export_read_only(read_only_obj, &read_only) < 0) {
    return NULL;
  }
  dlmap_exported exported;
  if (dlmap_py_array_export((dlmap_py_array *)op, &request, read_only, &exported) < 0) return NULL;
  return dlmap_py_capsule_from_export(&exported);
}

static PyObject *array_dlpack(PyObject *op, PyObject *args, PyObject *kwargs) {
  static char *with_read_only[] = {"stream", "max_version", "dl_device", "copy", "read_only", NULL};
  static char *without_read_only[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None, *read_only = Py_None;
  /* read_only= is a keyword only under arguments.read_only; without it PyArg words the unknown keyword. */
  const bool takes_read_only = dlmap_profile_current()->read_only_argument;
  const dlmap_py_signature signature = {"__dlpack__", true, 0, 0,
                                        (const char *const *)(takes_read_only ? with_read_only : without_read_only)};
  if (dlmap_py_check_signature(&signature, PyTuple_GET_SIZE(args), kwargs) < 0) return NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, takes_read_only ? "|$OOOOO:__dlpack__" : "|$OOOO:__dlpack__",
                                   takes_read_only ? with_read_only : without_read_only, &stream, &max_version,
                                   &dl_device, &copy, &read_only)) {
    return NULL;
  }
  return export_with(op, stream, max_version, dl_device, copy, read_only);
}

/* __dlpack__ through METH_FASTCALL: the keywords are read from the call's own array, without the argument tuple,
 * keyword dict and format parsing of PyArg_ParseTupleAndKeywords (about half of a plain `x.__dlpack__()`, bench/).
 * Only a call spelled as the protocol spells it takes this path: keyword-only arguments, each named once by its
 * interned name (what a call site in Python source and dlmap's own consumer pass). Anything else (positional
 * arguments, an unknown or repeated keyword, a name that is an equal but distinct string) is handed to array_dlpack
 * as a tuple and a dict, so that its errors are PyArg's own, word for word. A call without arguments reads nothing
 * (array_dlpack_fast); the keywords are read out of line, so that its frame stays small. */
__attribute__((noinline)) static PyObject *array_dlpack_keywords(PyObject *op, PyObject *const *args,
                                                               Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *values[5] = {Py_None, Py_None, Py_None, Py_None, Py_None}; /* stream, max_version, dl_device, copy,
                                                                         * read_only */
  PyObject *const read_only = dlmap_profile_current()->read_only_argument ? dlmap_py_name.read_only : NULL;
  const Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
  bool fast = nargs == 0 && nkw <= 5;
  unsigned seen = 0;
  for (Py_ssize_t i = 0; fast && i < nkw; i++) {
    PyObject *name = PyTuple_GET_ITEM(kwnames, i);
    const int slot = name == dlmap_py_name.stream        ? 0
                     : name == dlmap_py_name.max_version ? 1
                     : name == dlmap_py_name.dl_device   ? 2
                     : name == dlmap_py_name.copy        ? 3
                     : name == read_only                 ? 4
                                                         : -1;
    fast = slot >= 0 && (seen & (1u << slot)) == 0;
    if (fast) {
      seen |= 1u << slot;
      values[slot] = args[nargs + i];
    }
  }
  if (!fast) return dlmap_py_call_with_keywords(array_dlpack, op, args, nargs, kwnames);
  return export_with(op, values[0], values[1], values[2], values[3], values[4]);
}

static PyObject *array_dlpack_fast(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  if (nargs != 0 || kwnames != NULL) return array_dlpack_keywords(op, args, nargs, kwnames); /* out of line */
  dlmap_exported exported; /* the protocol's plainest call: nothing to read */
  if (dlmap_py_array_export((dlmap_py_array *)op, &kPlainRequest, false, &exported) < 0) return NULL;
  return dlmap_py_capsule_from_export(&exported);
}

PyObject *dlmap_py_device_enum;

static PyObject *array_dlpack_device(PyObject *op, PyObject *unused) {
  (void)unused;
  const DLTensor *t = &((dlmap_py_array *)op)->imported.tensor;
  /* Built directly rather than by Py_BuildValue's format parser: consumers call this before every __dlpack__. */
  PyObject *type = PyLong_FromLong((long)t->device.device_type);
  if (type != NULL && dlmap_py_device_enum != NULL) Py_SETREF(type, PyObject_CallOneArg(dlmap_py_device_enum, type));
  PyObject *id = type != NULL ? PyLong_FromLong((long)t->device.device_id) : NULL;
  PyObject *pair = id != NULL ? PyTuple_Pack(2, type, id) : NULL;
  Py_XDECREF(type);
  Py_XDECREF(id);
  return pair;
}

/* ---- properties --------------------------------------------------------------------------------------------------- */

#define SELF ((dlmap_py_array *)op)
#define TENSOR (&((dlmap_py_array *)op)->imported.tensor)

static PyObject *int64_tuple(int32_t n, const int64_t *values) {
  PyObject *tuple = PyTuple_New(n);
  if (tuple == NULL) return NULL;
  for (int32_t i = 0; i < n; i++) {
    PyObject *item = PyLong_FromLongLong((long long)values[i]);
    if (item == NULL) {
      Py_DECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, item);
  }
  return tuple;
}

static PyObject *get_shape(PyObject *op, void *closure) {
  (void)closure;
  return int64_tuple(TENSOR->ndim, TENSOR->shape);
}

static PyObject *get_strides(PyObject *op, void *closure) {
  (void)closure;
  return int64_tuple(TENSOR->ndim, TENSOR->strides);
}

static PyObject *get_ndim(PyObject *op, void *closure) {
  (void)closure;
  return PyLong_FromLong(TENSOR->ndim);
}

static PyObject *get_dtype(PyObject *op, void *closure) {
  (void)closure;
  char name[64];
  dlmap_dtype_format(TENSOR->dtype, name, sizeof name);
  return PyUnicode_FromString(name);
}

static PyObject *get_device(PyObject *op, void *closure) {
  (void)closure;
  return array_dlpack_device(op, NULL);
}

static PyObject *get_nbytes(PyObject *op, void *closure) {
  (void)closure;
  const uint64_t element_bits = (uint64_t)TENSOR->dtype.bits * TENSOR->dtype.lanes;
  if (SELF->subbyte_padded && element_bits < 8) return PyLong_FromUnsignedLongLong(element_count(TENSOR));
  return PyLong_FromUnsignedLongLong((unsigned long long)((element_count(TENSOR) * element_bits + 7) / 8));
}

static PyObject *get_data_ptr(PyObject *op, void *closure) {
  (void)closure;
  return PyLong_FromUnsignedLongLong((unsigned long long)((uintptr_t)TENSOR->data + TENSOR->byte_offset));
}

static PyObject *get_byte_offset(PyObject *op, void *closure) {
  (void)closure;
  return PyLong_FromUnsignedLongLong((unsigned long long)TENSOR->byte_offset);
}

static PyObject *get_readonly(PyObject *op, void *closure) {
  (void)closure;
  return PyBool_FromLong(SELF->read_only);
}

static int set_readonly(PyObject *op, PyObject *value, void *closure) {
  (void)closure;
  if (value == NULL) {
    PyErr_SetString(PyExc_AttributeError, "cannot delete attribute 'readonly'");
    return -1;
  }
  if (!PyBool_Check(value)) {
    dlmap_py_type_error("readonly", "True or False", value);
    return -1;
  }
  if (value == Py_False && SELF->source_read_only) {
    dlmap_py_raised(dlmap_raise_invalid_argument(DLMAP_PY_ERR, "readonly",
                                                 "the producer marked the data read-only; use " DLMAP_PY_MODULE_NAME_STR
                                                 ".from_dlpack(x, copy=True) for a writable copy"));
    return -1;
  }
  SELF->read_only = value == Py_True;
  return 0;
}

static PyObject *get_copied(PyObject *op, void *closure) {
  (void)closure;
  return PyBool_FromLong(SELF->imported.copied || SELF->producer_copied); /* whoever made the copy */
}

static PyObject *get_version(PyObject *op, void *closure) {
  (void)closure;
  return Py_BuildValue("(II)", SELF->imported.version.major, SELF->imported.version.minor);
}

static PyObject *get_via(PyObject *op, void *closure) {
  (void)closure;
  return PyUnicode_FromString(SELF->via != NULL ? SELF->via : "unknown");
}

static PyGetSetDef array_getset[] = {
    {"shape", get_shape, NULL, "Extents, as a tuple of ints.", NULL},
    {"strides", get_strides, NULL, "Strides in elements (DLPack's unit, not bytes), as a tuple of ints.", NULL},
    {"ndim", get_ndim, NULL, "Number of dimensions.", NULL},
    {"dtype", get_dtype, NULL, "The spec's name of the data type (\"float32\", \"bool\", \"complex64\").", NULL},
    {"device", get_device, NULL, "(device_type, device_id), as __dlpack_device__ reports it.", NULL},
    {"nbytes", get_nbytes, NULL, "Bytes a compact copy of the data takes.", NULL},
    {"data_ptr", get_data_ptr, NULL, "Address of the first element (data + byte_offset), to check zero-copy.", NULL},
    {"byte_offset", get_byte_offset, NULL, "DLTensor.byte_offset as imported.", NULL},
    {"readonly", get_readonly, set_readonly,
     "Whether writes are refused (buffer protocol, exports). Can be set to True; set back to False only when the "
     "producer did not mark the data READ_ONLY.",
     NULL},
    {"copied", get_copied, NULL,
     "Whether the memory is a copy: dlmap copied on import, or the producer set IS_COPIED.", NULL},
    {"version", get_version, NULL, "The producer's DLPack version, (0, 0) for a legacy tensor.", NULL},
    {"via", get_via, NULL,
     "How the array was made: \"empty\", \"dltensor_versioned\", \"dltensor\", \"c_exchange_api\" or "
     "\"managed_tensor_to_py_object\".",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *array_repr(PyObject *op) {
  char dtype[64];
  dlmap_dtype_format(TENSOR->dtype, dtype, sizeof dtype);
  PyObject *shape = get_shape(op, NULL);
  if (shape == NULL) return NULL;
  PyObject *repr = PyUnicode_FromFormat(DLMAP_PY_MODULE_NAME_STR ".Array(shape=%R, dtype='%s', device=(%d, %d), readonly=%s)", shape,
                                        dtype, (int)TENSOR->device.device_type, (int)TENSOR->device.device_id,
                                        SELF->read_only ? "True" : "False");
  Py_DECREF(shape);
  return repr;
}

/* ---- buffer protocol ---------------------------------------------------------------------------------------------- */

/* The struct-module format of a dtype, or NULL when it has none. */
static const char *buffer_format(DLDataType dtype) {
  if (dtype.lanes != 1) return NULL;
  switch (dtype.code) {
    case DLMAP_DTYPE_INT:
      return dtype.bits == 8 ? "b" : dtype.bits == 16 ? "h" : dtype.bits == 32 ? "i" : dtype.bits == 64 ? "q" : NULL;
    case DLMAP_DTYPE_UINT:
      return dtype.bits == 8 ? "B" : dtype.bits == 16 ? "H" : dtype.bits == 32 ? "I" : dtype.bits == 64 ? "Q" : NULL;
    case DLMAP_DTYPE_FLOAT:
      return dtype.bits == 16 ? "e" : dtype.bits == 32 ? "f" : dtype.bits == 64 ? "d" : NULL;
    case DLMAP_DTYPE_COMPLEX:
      return dtype.bits == 64 ? "Zf" : dtype.bits == 128 ? "Zd" : NULL;
    case DLMAP_DTYPE_BOOL:
      return dtype.bits == 8 ? "?" : NULL;
    default:
      return NULL;
  }
}

static int buffer_not_implemented(const char *what) {
  dlmap_py_raised(dlmap_raise_not_implemented(DLMAP_PY_ERR, what));
  return -1;
}

static int buffer_refuse(Py_buffer *view, const char *message) {
  Py_CLEAR(view->obj);
  PyErr_SetString(PyExc_BufferError, message);
  return -1;
}

static int array_getbuffer(PyObject *op, Py_buffer *view, int flags) {
  static char empty_data[64]; /* what buf points at when a tensor with no elements has NULL data */
  const DLTensor *t = TENSOR;
  char what[160];
  view->obj = NULL; /* the buffer protocol's rule for every failure: the caller may read it */
  if (!host_accessible((int32_t)t->device.device_type)) {
    snprintf(what, sizeof what, "The buffer protocol on %s memory", dlmap_device_type_name((int32_t)t->device.device_type));
    return buffer_not_implemented(what);
  }
  const char *format = buffer_format(t->dtype);
  if (format == NULL) {
    char dtype[64];
    dlmap_dtype_format(t->dtype, dtype, sizeof dtype);
    snprintf(what, sizeof what, "The buffer protocol for dtype %s", dtype);
    return buffer_not_implemented(what);
  }
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && SELF->read_only) {
    PyErr_SetString(PyExc_BufferError, "Object is not writable."); /* CPython's own text for this refusal */
    return -1;
  }
  const Py_ssize_t itemsize = (Py_ssize_t)(t->dtype.bits / 8);
  const uint64_t count = element_count(t);
  /* data + byte_offset stays inside the address space only where there are elements (the import checks it then) */
  view->buf = t->data == NULL ? (void *)empty_data : count == 0 ? t->data : (void *)((char *)t->data + t->byte_offset);
  view->obj = Py_NewRef(op);
  view->len = (Py_ssize_t)count * itemsize;
  view->itemsize = itemsize;
  view->readonly = SELF->read_only;
  view->ndim = t->ndim;
  view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? (char *)format : NULL;
  view->shape = t->ndim > 0 ? SELF->buffer_dims : NULL;
  view->strides = t->ndim > 0 ? SELF->buffer_dims + t->ndim : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !PyBuffer_IsContiguous(view, 'C')) {
    return buffer_refuse(view, DLMAP_PY_MODULE_NAME_STR ".Array is not C-contiguous");
  }
  if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !PyBuffer_IsContiguous(view, 'F')) {
    return buffer_refuse(view, DLMAP_PY_MODULE_NAME_STR ".Array is not Fortran-contiguous");
  }
  if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !PyBuffer_IsContiguous(view, 'A')) {
    return buffer_refuse(view, DLMAP_PY_MODULE_NAME_STR ".Array is not contiguous");
  }
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
    if (!PyBuffer_IsContiguous(view, 'C')) return buffer_refuse(view, DLMAP_PY_MODULE_NAME_STR ".Array is not C-contiguous");
    view->strides = NULL;
  }
  if ((flags & PyBUF_ND) != PyBUF_ND) view->shape = NULL;
  return 0;
}

static PyBufferProcs array_as_buffer = {array_getbuffer, NULL};

/* tp_alloc: zeroes the object up to the imported tensor's stride scratch, which import writes only when it uses it
 * (PyType_GenericAlloc would clear those 512 bytes on every import). The type is neither GC-tracked nor subclassable. */
static PyObject *array_alloc(PyTypeObject *type, Py_ssize_t nitems) {
  (void)nitems;
  PyObject *op = array_freelist_size > 0 ? array_freelist[--array_freelist_size]
                                         : (PyObject *)PyObject_Malloc((size_t)type->tp_basicsize);
  if (op == NULL) return PyErr_NoMemory();
  memset(op, 0, offsetof(dlmap_py_array, imported) + offsetof(dlmap_imported, strides_));
  dlmap_py_array *self = (dlmap_py_array *)op;
  self->interp = PyInterpreterState_Get();
  self->interp_id = PyInterpreterState_GetID(self->interp);
  return PyObject_Init(op, type);
}

/* ---- the type ----------------------------------------------------------------------------------------------------- */

static PyMethodDef array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack_fast, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Exports the array as a DLPack capsule: \"dltensor_versioned\" when max_version >= (1, 0), else \"dltensor\"."},
    {"__dlpack_device__", array_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n(device_type, device_id) of the array."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject dlmap_py_array_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = DLMAP_PY_MODULE_NAME_STR ".Array",
    .tp_basicsize = sizeof(dlmap_py_array),
    .tp_dealloc = array_dealloc,
    .tp_repr = array_repr,
    .tp_as_buffer = &array_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An array dlmap allocated (" DLMAP_PY_MODULE_NAME_STR ".empty) or imported (" DLMAP_PY_MODULE_NAME_STR ".from_dlpack), exchangeable through "
              "DLPack.",
    .tp_weaklistoffset = offsetof(dlmap_py_array, weakreflist),
    .tp_methods = array_methods,
    .tp_getset = array_getset,
    .tp_alloc = array_alloc,
    .tp_free = PyObject_Del,
};
