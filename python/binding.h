/* dlmap Python binding — declarations shared by the extension's C files (module, Array type, capsules, exchange API). */
#ifndef DLMAP_PYTHON_BINDING_H_
#define DLMAP_PYTHON_BINDING_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dlmap/dlmap.h"
#include "python/dlmap_python.h"
#include "python/dlpack_exchange_api.h"

/* ---- capsule names (static strings, as the protocol requires) ------------------------------------------------------ */

#define DLMAP_PY_CAPSULE_LEGACY "dltensor"
#define DLMAP_PY_CAPSULE_LEGACY_USED "used_dltensor"
#define DLMAP_PY_CAPSULE_VERSIONED "dltensor_versioned"
#define DLMAP_PY_CAPSULE_VERSIONED_USED "used_dltensor_versioned"

/* ---- the module's name ------------------------------------------------------------------------------------------- */

/* The import name, chosen by the build (dlmap_python_module's module_name: -DDLMAP_PY_MODULE_NAME=acme_dlmap), so that
 * modules over different specs import side by side: the init function is PyInit_<name> and every name the module
 * shows (the module, its Array type, messages that name them) carries it. */
#ifndef DLMAP_PY_MODULE_NAME
#define DLMAP_PY_MODULE_NAME dlmap
#endif
#define DLMAP_PY_STR_(x) #x
#define DLMAP_PY_STR(x) DLMAP_PY_STR_(x)
#define DLMAP_PY_PASTE_(a, b) a##b
#define DLMAP_PY_PASTE(a, b) DLMAP_PY_PASTE_(a, b)
/* The name as a string literal ("dlmap"), and its init function (PyInit_dlmap). */
#define DLMAP_PY_MODULE_NAME_STR DLMAP_PY_STR(DLMAP_PY_MODULE_NAME)
#define DLMAP_PY_INIT_FUNCTION DLMAP_PY_PASTE(PyInit_, DLMAP_PY_MODULE_NAME)

/* ---- dlmap.Array ---------------------------------------------------------------------------------------------------- */

/* An array over a tensor dlmap imported (a view of a producer's memory, a copy, or a block dlmap allocated). The
 * object owns `imported` and releases it exactly once when it dies; `imported` never moves (its strides may point
 * into itself). */
typedef struct dlmap_py_array {
  PyObject_HEAD
  bool read_only;          /* writes are refused: the buffer protocol and every export honour it */
  bool source_read_only;   /* the producer marked the data READ_ONLY: read_only cannot be cleared */
  bool subbyte_padded;     /* sub-byte elements are padded (IS_SUBBYTE_TYPE_PADDED) */
  bool producer_copied;    /* the producer's tensor said IS_COPIED: its memory is already a copy */
  const char *via;         /* how the array was made (static text): "empty", "dltensor", "dltensor_versioned", ... */
  void *producer_stream;   /* the stream its GPU data is ordered on: the consumer stream it was imported on (a copy is
                            * freed there; NULL: the null stream), which every export makes its consumer wait for and
                            * every view's release makes wait for the consumer (issue 64) */
  Py_ssize_t *buffer_dims; /* ndim extents, then ndim byte strides, for the buffer protocol; NULL when ndim is 0 */
  PyObject *weakreflist;
  /* The interpreter the array was made in, by address and id (ids are never reused): a release from another thread
   * or interpreter enters this one (capsule.c). */
  PyInterpreterState *interp;
  int64_t interp_id;
  struct dlmap_py_array *release_next; /* once dead: the next array whose release waits (array.c's array_dealloc) */
  /* This host array's last repeatable export request and state (array.c), and its plan once it came twice. */
  struct dlmap_py_export_plan {
    bool seen;               /* the fields below hold a request */
    dlmap_export_plan *plan; /* NULL: none (yet) */
    bool read_only;
    bool has_max_version;
    dlmap_version max_version;
    dlmap_copy_mode copy;
    void *data;              /* the data pointer the array exports (byte_offset folded in on the host) */
  } export_plan;
  Py_ssize_t inline_dims[2 * 8]; /* buffer_dims for ndim <= 8, without an allocation */
  /* Last: its stride scratch (512 bytes) is outside what the Array's allocation zeroes, as import and release leave it. */
  dlmap_imported imported;
} dlmap_py_array;

extern PyTypeObject dlmap_py_array_type;

/* dlpack_device.enum: the module's DLDeviceType IntEnum, whose members __dlpack_device__ answers; NULL where the
 * profile answers plain ints. */
extern PyObject *dlmap_py_device_enum;

/* Imports a producer's managed tensor (a DLManagedTensorVersioned when versioned, else a DLManagedTensor) into a new
 * Array. Ownership of the tensor passes in on every path: on failure its deleter has run and NULL is returned with
 * the catalogue's exception set. `via` (static text) records how the array was made. */
PyObject *dlmap_py_import(void *managed, bool versioned, const dlmap_import_request *request, const char *via);
/* dlmap_py_import, except that when left is not NULL a tensor the import refuses (or cannot take, without memory) is
 * not released: *left = true, NULL with the exception, and the caller still owns managed (import.refused_capsule
 * leave). A tensor that is taken is released exactly once, as by dlmap_py_import. */
PyObject *dlmap_py_import_or_leave(void *managed, bool versioned, const dlmap_import_request *request, const char *via,
                                   bool *left);

/* Exports the array per request into *out, as read-only this once where read_only is true (__dlpack__'s read_only=);
 * the export holds a reference to the array until its deleter runs. -1 with the catalogue's exception set on failure
 * (nothing allocated, no reference taken). */
int dlmap_py_array_export(dlmap_py_array *self, const dlmap_export_request *request, bool read_only,
                          dlmap_exported *out);

/* Whether memory of this device type is served by the GPU backend, whose calls may block (runtime start-up, copies,
 * stream synchronisation): the binding releases the GIL around them. */
bool dlmap_py_gpu_device_type(int32_t device_type);

/* Allocates a zero-filled managed tensor of the given dtype, shape and device through dlmap (one block: struct,
 * shape, strides, data; 64-byte aligned data), in the struct the profile answers the current version with
 * (out->structure). Never touches Python state. */
int32_t dlmap_py_allocate_tensor(int32_t ndim, const int64_t *shape, DLDataType dtype, int32_t device_type,
                                 int32_t device_id, const dlmap_device_allocator *device_allocator,
                                 dlmap_exported *out, dlmap_error *err);

/* ---- capsules and owners ------------------------------------------------------------------------------------------ */

/* Wraps an exported tensor in a new "dltensor" / "dltensor_versioned" capsule whose destructor calls the deleter only
 * while the capsule is unconsumed. On failure the tensor's deleter has run and NULL is returned. */
PyObject *dlmap_py_capsule_from_export(const dlmap_exported *exported);

/* dlmap_array.release for Python owners (`owner` is a dlmap.Array): drops one reference from any thread, in the
 * array's own interpreter (taking its GIL when this thread does not hold it; leaks rather than touching a finalizing
 * or finished interpreter). */
void dlmap_py_release_owner(void *owner);

/* Runs fn(arg) holding the GIL of interp (whose id is interp_id) from any thread, in any state a deleter may run in:
 * at once where this thread is attached to interp, else by attaching to it (detaching from another interpreter
 * meanwhile); not at all where that interpreter is finalizing or gone, or after Py_Finalize (NumPy's rule: leak rather
 * than crash). */
void dlmap_py_run_in_interpreter(PyInterpreterState *interp, int64_t interp_id, void (*fn)(void *), void *arg);

/* ---- the framework's device allocator (device_allocator.c) ------------------------------------------------------ */

/* dlmap.set_device_allocator(allocate, release) / (None). */
PyObject *dlmap_py_set_device_allocator(PyObject *module, PyObject *args);

/* The installed device allocator for one exchange, in *storage (NULL where none is installed: the runtime's serves),
 * held until dlmap_py_device_allocator_done, which the exchange calls with the GIL held once it returned (and raised,
 * if it failed: an out_of_memory the allocator caused is then chained to what the allocator raised). */
const dlmap_device_allocator *dlmap_py_device_allocator_take(dlmap_device_allocator *storage);
void dlmap_py_device_allocator_done(const dlmap_device_allocator *taken);

/* Brackets dlmap code that holds the GIL and may run the deleters of dlmap's own exports (a capsule's destructor, an
 * array's release, an import that refuses): on Python 3.11 the owner's release cannot otherwise tell, without reading
 * another thread's memory, that a thread state which is not the thread's first (a sub-interpreter's) is attached
 * here. Free on 3.12 and later, where the attached thread state is thread-local. */
#if PY_VERSION_HEX >= 0x030C0000
static inline PyThreadState *dlmap_py_deleters_begin(void) { return NULL; }
static inline void dlmap_py_deleters_end(PyThreadState *before) { (void)before; }
static inline void dlmap_py_note_exporter(void) {}
#else
/* Called with the GIL held by every export that hands a deleter out (a capsule, the C exchange API): on Python 3.11 it
 * notes the attached thread state when it is not the thread's first (a sub-interpreter's), so that a consumer that
 * runs the deleter later on this thread, holding that GIL, is recognised (issue 65: NumPy's from_dlpack inside a
 * sub-interpreter deadlocked). The note is forgotten when that thread state is cleared (capsule.c). */
void dlmap_py_note_exporter_slow(PyThreadState *current);
static inline void dlmap_py_note_exporter(void) {
  PyThreadState *current = _PyThreadState_UncheckedGet();
  if (current != PyGILState_GetThisThreadState()) dlmap_py_note_exporter_slow(current);
}
extern _Thread_local PyThreadState *dlmap_py_attached_here;
static inline PyThreadState *dlmap_py_deleters_begin(void) {
  PyThreadState *before = dlmap_py_attached_here;
  dlmap_py_attached_here = _PyThreadState_UncheckedGet();
  return before;
}
static inline void dlmap_py_deleters_end(PyThreadState *before) { dlmap_py_attached_here = before; }
#endif

/* A type's version tag, or 0 when it has no valid one (the exchange-API cache and the remembered legacy producers are
 * valid while it holds). From CPython 3.13 the flag is never set (a tag of 0 is the invalid one, and a modified type
 * gets 0): reading the flag there made every call miss the cache. */
static inline unsigned int dlmap_py_type_version_tag(const PyTypeObject *type) {
#if PY_VERSION_HEX >= 0x030D0000
  return type->tp_version_tag;
#elif defined(Py_TPFLAGS_VALID_VERSION_TAG)
  return (type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) != 0 ? type->tp_version_tag : 0;
#else
  (void)type;
  return 0;
#endif
}

/* dlmap_managed_tensor_delete, from dlmap code that holds the GIL (bracketed as above). */
void dlmap_py_delete_managed(void *managed, bool versioned);

/* ---- errors ------------------------------------------------------------------------------------------------------- */

/* dlmap_py_raise, dlmap_py_raise_code, DLMAP_PY_RAISE, dlmap_py_exception_type and dlmap_py_errors_init (called
 * once by the module's PyInit_): the public helpers of dlmap_python.h (exceptions.c). */

/* argument_type_invalid: "{argument} must be {expected}, got {got}", got being the type name of `got`. */
PyObject *dlmap_py_type_error(const char *argument, const char *expected, PyObject *got);

/* ---- argument parsing (Python values → dlmap requests); -1 with the catalogue's exception on a bad value ------------ */
/* obj is never NULL for the parsers of stream, device and copy: callers pass PyArg's Py_None default, or a value they
 * hold. */

/* An int or anything with __index__ (not bool) that fits in int64; its __index__ may run any code. Anything else: the
 * argument's type error, saying it must be `expected`. */
int dlmap_py_parse_int64(PyObject *obj, const char *argument, const char *expected, int64_t *out);
int dlmap_py_parse_stream(PyObject *obj, const char *argument, bool *has, int64_t *value);
int dlmap_py_parse_version(PyObject *obj, const char *argument, bool *has, dlmap_version *out);

/* A pair as the protocol spells its versions and devices, an exact tuple of two exact ints each from 0 to 2^30 - 1,
 * read without a call (PyTorch passes max_version on every import; every producer's __dlpack_device__ answers one):
 * true and both set, else false (nothing raised; the general reading then reads it). CPython's compact ints say their
 * value inline: 3.12's PyUnstable_Long_CompactValue, 3.11's one digit of 30 bits. */
static inline bool dlmap_py_small_uint(PyObject *obj, uint32_t *out) {
  if (!PyLong_CheckExact(obj)) return false;
#if PY_VERSION_HEX >= 0x030C0000
  const PyLongObject *value = (const PyLongObject *)obj;
  if (!PyUnstable_Long_IsCompact(value)) return false;
  const Py_ssize_t small = PyUnstable_Long_CompactValue(value);
  if (small < 0) return false;
  *out = (uint32_t)small; /* compact: below 2^30 */
#else
  const Py_ssize_t digits = Py_SIZE(obj); /* the sign and the number of 30-bit digits */
  if (digits < 0 || digits > 1) return false;
  *out = digits == 0 ? 0 : (uint32_t)((const PyLongObject *)obj)->ob_digit[0];
#endif
  return true;
}

static inline bool dlmap_py_small_pair(PyObject *obj, uint32_t *first, uint32_t *second) {
  return PyTuple_CheckExact(obj) && PyTuple_GET_SIZE(obj) == 2 &&
         dlmap_py_small_uint(PyTuple_GET_ITEM(obj, 0), first) && dlmap_py_small_uint(PyTuple_GET_ITEM(obj, 1), second);
}

/* device: None, a (device_type, device_id) tuple of ints, or (accept_names) a device type name with id 0. A non-NULL
 * `expected` makes a value required (None is a type error) and is the type error's description of it. */
int dlmap_py_parse_device(PyObject *obj, const char *argument, bool accept_names, const char *expected, bool *has,
                          int32_t *type, int32_t *id);
/* from_dlpack's device (python/import_device.c): None; a name the profile's import.device_names lists (any device type
 * name when it lists none) with id 0; a (device_type, device_id) tuple unless import.device_tuples is false. Other
 * values: import_device_not_understood with their str(), or dlmap_py_parse_device's errors. */
int dlmap_py_parse_import_device(PyObject *obj, bool *has, int32_t *type, int32_t *id);
int dlmap_py_parse_copy(PyObject *obj, const char *argument, dlmap_copy_mode *out);
/* __dlpack__'s copy: dlmap_py_parse_copy, or under export.copy_argument truth any object but a str by its truth value
 * (an exception its __bool__ raises propagates). */
int dlmap_py_parse_export_copy(PyObject *obj, dlmap_copy_mode *out);
/* __dlpack__'s max_version, dl_device and read_only as the profile's `arguments:` reads them (dlpack_arguments.c):
 * by default dlmap_py_parse_version and dlmap_py_parse_device; read_only by its truth value (None: false). */
int dlmap_py_parse_export_max_version(PyObject *obj, bool *has, dlmap_version *out);
int dlmap_py_parse_export_dl_device(PyObject *obj, bool *has, int32_t *type, int32_t *id);
int dlmap_py_parse_export_read_only(PyObject *obj, bool *read_only);

/* The parameters of __dlpack__ or from_dlpack as their signature errors name them (signature.c). */
typedef struct dlmap_py_signature {
  const char *function;     /* "__dlpack__", "from_dlpack" */
  bool method;              /* an Array method: worded as arguments.method_owner's, self counted */
  Py_ssize_t positional;    /* how many parameters, the first ones, may be given by position */
  Py_ssize_t required;      /* how many of those a call must give (by position or keyword) */
  const char *const *names; /* every parameter's name, in order, NULL-terminated */
} dlmap_py_signature;
/* Under arguments.signature_errors catalogue: -1 with argument_positional_count, argument_keyword_unknown,
 * argument_given_twice or argument_missing (in that order of checks) when a call of nargs positional arguments and
 * kwargs (a dict or NULL) does not bind to sig; else (and always under builtin) 0, for CPython's parser to bind. */
int dlmap_py_check_signature(const dlmap_py_signature *sig, Py_ssize_t nargs, PyObject *kwargs);

/* Calls a METH_VARARGS | METH_KEYWORDS implementation with a METH_FASTCALL call's arguments, as a tuple and a dict: the
 * route of the fast entry points for the calls they do not read themselves, so that parsing and errors stay fn's. */
PyObject *dlmap_py_call_with_keywords(PyCFunctionWithKeywords fn, PyObject *self, PyObject *const *args,
                                      Py_ssize_t nargs, PyObject *kwnames);

/* ---- memory accounting -------------------------------------------------------------------------------------------- */

/* The allocator every export and import of the binding passes to dlmap: 64-byte aligned, counted, and able to fail on
 * demand (dlmap._fail_allocations) to exercise the out-of-memory paths. */
extern const dlmap_allocator dlmap_py_allocator;

/* Live exports (tensors handed out that still hold a reference to their Array): counted inline, as every export and
 * its release do. */
extern atomic_llong dlmap_py_live_exports;
static inline void dlmap_py_count_export(int delta) { atomic_fetch_add(&dlmap_py_live_exports, delta); }

/* The memory under dlmap_py_allocator (block_cache.c): blocks of `alignment` (at least 64 bytes), small ones reused. */
void *dlmap_py_block_allocate(size_t size, size_t alignment);
void dlmap_py_block_release(void *block);

/* What the counted allocator has seen (testing_hooks.c's dlmap._stats), making its next n allocations fail, and
 * whether it counts the allocations made without the GIL (dlmap._watch_gil). */
typedef struct dlmap_py_allocation_stats {
  long long live, total, live_exports, without_gil;
} dlmap_py_allocation_stats;
dlmap_py_allocation_stats dlmap_py_allocations(void);
void dlmap_py_fail_next_allocations(long long n);
void dlmap_py_watch_gil(bool watch);

/* ---- module.c, for the testing hooks and the checker's functions -------------------------------------------------- */

/* dlmap._stats, dlmap._fail_allocations, dlmap._call_deleter_on_thread, … (testing_hooks.c). */
extern PyMethodDef dlmap_py_testing_hooks[];

/* dlmap._call_failing_python_allocation (python_allocation_failure.c). */
extern PyMethodDef dlmap_py_python_allocation_failure[];

/* dlmap._check_rules, dlmap._judge_tensor, _judge_version, _judge_device_type: the checker's (conformance.c). */
extern PyMethodDef dlmap_py_conformance_functions[];

/* ---- interned names ----------------------------------------------------------------------------------------------- */

/* Attribute and keyword names, interned once by PyInit_dlmap so that the per-call paths build no strings. */
typedef struct dlmap_py_names {
  PyObject *dlpack;           /* "__dlpack__" */
  PyObject *dlpack_device;    /* "__dlpack_device__" */
  PyObject *exchange_api;     /* DLMAP_EXCHANGE_API_ATTRIBUTE (1.3) */
  PyObject *exchange_api_1_2; /* DLMAP_EXCHANGE_API_ATTRIBUTE_1_2 */
  PyObject *max_version, *stream, *dl_device, *copy, *read_only;
} dlmap_py_names;
extern dlmap_py_names dlmap_py_name;
int dlmap_py_names_init(void); /* -1 with an exception set */

/* ---- producers ---------------------------------------------------------------------------------------------------- */

/* Whether `method` (a producer's bound __dlpack__) is a Python function whose signature cannot take the keyword
 * max_version, so that a versioned call could only raise TypeError while binding its arguments, before any of its
 * code runs: from_dlpack calls it plainly instead of raising and catching that TypeError on every call. Decided from
 * the function's current code object (remembered per code object, which is immutable); false for anything else. */
bool dlmap_py_rejects_max_version(PyObject *method);

/* Producer types remembered as refusing max_version (producers.c): a bounded table, each entry holding its type, valid
 * while the type's attributes are unchanged (its version tag) and for a bounded number of calls, then asked again.
 * dlmap_py_legacy_only: whether x's type is remembered and `method` (as lookup_methods found it: bound, or the type's
 * descriptor with self == x) is the type's own __dlpack__, counting the call. dlmap_py_remember_legacy_only: called
 * with the TypeError of a versioned call pending (left pending): remembers the type where the refusal is the keyword's
 * own and the method's binding raised it, no Python frame of the producer having run; forgets it otherwise.
 * dlmap_py_forget_legacy_only: after any other TypeError of a plain call. */
bool dlmap_py_legacy_only(PyObject *x, PyObject *method, PyObject *self);
void dlmap_py_remember_legacy_only(PyObject *x, PyObject *method, PyObject *self);
void dlmap_py_forget_legacy_only(PyTypeObject *type);
/* How many producer types from_dlpack remembers as legacy-only (for dlmap._stats). */
Py_ssize_t dlmap_py_legacy_only_type_count(void);

/* ---- the C exchange API ------------------------------------------------------------------------------------------- */

extern const DLPackExchangeAPI dlmap_py_exchange_api;

/* The table a producer type publishes for DLPack major 1 (the 1.3 capsule or the 1.2 int), or NULL when it publishes
 * none (no exception is left set). */
const DLPackExchangeAPI *dlmap_py_find_exchange_api(PyTypeObject *type);

/* Reads on x, a producer of type `type` that publishes a C exchange table, the states no DLPack tensor carries
 * (spec/versions.yaml exchange_api.producer_states; python/producer_states.c): 0 when none holds (the table may be
 * used), 1 when one holds whose answer is the producer's __dlpack__ (or one could not be read; no exception is left
 * set), -1 with an exception (a state the spec refuses, or one that raised other than an Exception). Runs the
 * producer's Python code, which may change x and its type: the caller holds the type and looks again afterwards. */
int dlmap_py_producer_state(PyObject *x, PyTypeObject *type);

#endif /* DLMAP_PYTHON_BINDING_H_ */
