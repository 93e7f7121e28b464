/* dlmap Python binding — the `dlmap` extension module: dlmap.empty, dlmap.from_dlpack (C exchange API, then the
 * Python protocol with versioned-first negotiation) and the module itself. The counted allocator is allocator.c, the
 * testing hooks (dlmap._stats, …) testing_hooks.c, the conformance checker's functions (dlmap._judge_tensor, …)
 * conformance.c. */
#include <stdlib.h>
#include <string.h>

#include "python/binding.h"

/* ---- dlmap.empty --------------------------------------------------------------------------------------------------- */

/* shape: an int or a tuple or list of ints. -1 with the catalogue's exception. A list is read from a tuple copy:
 * an item's __index__ may run code that changes the list (or drops its items) while it is being read. */
static int parse_shape(PyObject *obj, int32_t *ndim, int64_t *shape) {
  if (PyIndex_Check(obj) && !PyBool_Check(obj)) {
    if (dlmap_py_parse_int64(obj, "shape", "an int or a tuple of ints", &shape[0]) < 0) return -1;
    *ndim = 1;
    return 0;
  }
  if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
    dlmap_py_type_error("shape", "an int or a tuple of ints", obj);
    return -1;
  }
  PyObject *items = PySequence_Tuple(obj); /* a tuple itself, or a snapshot holding references to the items */
  if (items == NULL) return -1;
  const Py_ssize_t n = PyTuple_GET_SIZE(items);
  int status = 0;
  if (n > DLMAP_MAX_NDIM) {
    dlmap_py_raised(dlmap_raise_ndim_too_large(DLMAP_PY_ERR, n, DLMAP_MAX_NDIM));
    status = -1;
  }
  for (Py_ssize_t i = 0; i < n && status == 0; i++) {
    if (dlmap_py_parse_int64(PyTuple_GET_ITEM(items, i), "shape", "an int or a tuple of ints", &shape[i]) < 0) {
      status = -1;
    }
  }
  Py_DECREF(items);
  if (status == 0) *ndim = (int32_t)n;
  return status;
}

static PyObject *empty(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  static char *kwlist[] = {"shape", "dtype", "device", NULL};
  PyObject *shape_obj, *dtype_obj = NULL, *device_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$O:empty", kwlist, &shape_obj, &dtype_obj, &device_obj)) {
    return NULL;
  }
  int32_t ndim = 0;
  int64_t shape[DLMAP_MAX_NDIM];
  if (parse_shape(shape_obj, &ndim, shape) < 0) return NULL;
  DLDataType dtype;
  const char *dtype_name = "float32";
  Py_ssize_t dtype_len = 7;
  if (dtype_obj != NULL) {
    if (!PyUnicode_Check(dtype_obj)) return dlmap_py_type_error("dtype", "a data type name (str)", dtype_obj);
    dtype_name = PyUnicode_AsUTF8AndSize(dtype_obj, &dtype_len);
    if (dtype_name == NULL) return NULL;
  }
  if (!dlmap_dtype_parse(dtype_name, (size_t)dtype_len, &dtype)) {
    return dlmap_py_raised(dlmap_raise_name_unknown(DLMAP_PY_ERR, "data type", dtype_name));
  }
  bool has_device;
  int32_t device_type = DLMAP_DEVICE_CPU, device_id = 0;
  if (dlmap_py_parse_device(device_obj, "device", true, NULL, &has_device, &device_type, &device_id) < 0) return NULL;
  dlmap_exported tensor;
  dlmap_error err;
  int32_t status;
  if (dlmap_py_gpu_device_type(device_type)) { /* allocating and filling GPU memory may block: without the GIL */
    dlmap_device_allocator storage;
    const dlmap_device_allocator *taken = dlmap_py_device_allocator_take(&storage);
    Py_BEGIN_ALLOW_THREADS
    status = dlmap_py_allocate_tensor(ndim, shape, dtype, device_type, device_id, taken, &tensor, &err);
    Py_END_ALLOW_THREADS
    if (status != DLMAP_OK) dlmap_py_raise(&err);
    dlmap_py_device_allocator_done(taken);
    if (status != DLMAP_OK) return NULL;
  } else {
    status = dlmap_py_allocate_tensor(ndim, shape, dtype, device_type, device_id, NULL, &tensor, &err);
    if (status != DLMAP_OK) return dlmap_py_raise(&err);
  }
  const bool versioned = tensor.structure == DLMAP_STRUCT_VERSIONED;
  return dlmap_py_import(versioned ? (void *)tensor.versioned : (void *)tensor.legacy, versioned, NULL, "empty");
}

/* ---- interned names ----------------------------------------------------------------------------------------------- */

dlmap_py_names dlmap_py_name;

int dlmap_py_names_init(void) {
  struct {
    PyObject **slot;
    const char *text;
  } const names[] = {
      {&dlmap_py_name.dlpack, "__dlpack__"},
      {&dlmap_py_name.dlpack_device, "__dlpack_device__"},
      {&dlmap_py_name.exchange_api, DLMAP_EXCHANGE_API_ATTRIBUTE},
      {&dlmap_py_name.exchange_api_1_2, DLMAP_EXCHANGE_API_ATTRIBUTE_1_2},
      {&dlmap_py_name.max_version, "max_version"},
      {&dlmap_py_name.stream, "stream"},
      {&dlmap_py_name.dl_device, "dl_device"},
      {&dlmap_py_name.copy, "copy"},
      {&dlmap_py_name.read_only, "read_only"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (*names[i].slot == NULL && (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL) return -1;
  }
  return 0;
}

/* ---- dlmap.from_dlpack -------------------------------------------------------------------------------------------- */

/* Whether a tensor from a producer's C table can be used as is: host memory needs no synchronisation; device memory
 * only when the caller asked for none (stream=-1) or producer and caller both use the legacy default stream, and
 * when no move to another device is asked for (the producer's Python path copies; dlmap has no GPU copy). */
static bool exchange_tensor_usable(const DLPackExchangeAPI *api, const struct DLManagedTensorVersioned *tensor,
                                   const dlmap_import_request *request, bool has_stream, int64_t stream) {
  const dlmap_version version = {tensor->version.major, tensor->version.minor};
  if (dlmap_version_struct(version) != DLMAP_STRUCT_VERSIONED) return true; /* import reports it */
  const DLDevice device = tensor->dl_tensor.device;
  const dlmap_device_info *info = dlmap_device_type_find((int32_t)device.device_type);
  if (info == NULL || info->stream == DLMAP_STREAM_CONVENTION_NONE) return true; /* import reports or serves it */
  if (request->has_device &&
      (request->device_type != (int32_t)device.device_type || request->device_id != device.device_id)) {
    return false;
  }
  if (has_stream) return stream == -1;
  /* A table that cannot say its current stream (a non-zero status, or 0 with a Python exception set) gives no ordering
   * to skip: the Python path asks the producer with the stream, and its exception is dropped. */
  void *current = NULL;
  if (api->current_work_stream == NULL ||
      api->current_work_stream(device.device_type, device.device_id, &current) != 0 || PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return current == NULL;
}

static PyObject *device_tuple(int32_t type, int32_t id) { return Py_BuildValue("(ii)", (int)type, (int)id); }

/* Whether versioned capsules are accepted: not under a profile that asks for legacy ones only (JAX's name check). */
static bool asked_versioned_ok(void) { return dlmap_profile_current()->request == DLMAP_REQUEST_VERSIONED_FIRST; }

/* The producer reports a device type the profile does not import from: the catalogue error, naming str(x). */
static PyObject *unsupported_source(PyObject *x, int32_t device_type) {
  PyObject *text = PyObject_Str(x);
  if (text == NULL) return NULL;
  const char *described = PyUnicode_AsUTF8(text);
  if (described == NULL) {
    Py_DECREF(text);
    return NULL;
  }
  dlmap_py_raised(dlmap_raise_import_unsupported_device_type(DLMAP_PY_ERR, device_type, described));
  Py_DECREF(text);
  return NULL;
}

/* Drops dlmap's reference to a capsule it renamed used_*; first, where restore_name is not NULL (import left the
 * tensor untaken), gives the capsule that name back, the very string it had, so that it is unconsumed again. An
 * exception pending (the refusal) is kept aside meanwhile: the capsule's destructor may run Python code. Returns
 * result. */
static PyObject *give_back_capsule(PyObject *capsule, const char *restore_name, PyObject *result) {
  PyObject *kind, *value, *traceback;
  PyErr_Fetch(&kind, &value, &traceback);
  /* Not checked: renaming a valid capsule (its pointer was read) cannot fail, and a name may be any string. */
  if (restore_name != NULL) (void)PyCapsule_SetName(capsule, restore_name);
  Py_DECREF(capsule);
  PyErr_Restore(kind, value, traceback);
  return result;
}

/* Takes a capsule from __dlpack__ (a new reference, consumed here) and imports it. */
static PyObject *consume_capsule(PyObject *capsule, bool asked_versioned, dlmap_import_request *request,
                                 bool producer_copied_if_flagged) {
  if (!PyCapsule_CheckExact(capsule)) {
    PyObject *result = dlmap_py_type_error("__dlpack__() result", "a DLPack capsule", capsule);
    Py_DECREF(capsule);
    return result;
  }
  const char *name = PyCapsule_GetName(capsule);
  bool versioned;
  if (name != NULL && strcmp(name, DLMAP_PY_CAPSULE_VERSIONED) == 0 && asked_versioned_ok()) {
    versioned = true;
  } else if (name != NULL && strcmp(name, DLMAP_PY_CAPSULE_LEGACY) == 0) {
    versioned = false;
  } else {
    /* The message is formatted before the capsule is released (name belongs to it) and raised after (its
     * destructor may run Python code, which must not find an exception pending). */
    dlmap_error err;
    dlmap_raise_capsule_consumed(&err, asked_versioned ? DLMAP_PY_CAPSULE_VERSIONED : DLMAP_PY_CAPSULE_LEGACY,
                                 name != NULL ? name : "NULL");
    Py_DECREF(capsule);
    return dlmap_py_raise(&err);
  }
  /* Neither call can fail, so neither is checked: the capsule is exact and its name was just matched (a capsule never
   * holds a NULL pointer: PyCapsule_New refuses one), and a valid capsule may take any name.
   * Renaming transfers ownership: from here dlmap calls the deleter exactly once, whatever happens — unless the
   * profile's import.refused_capsule is leave and import refuses the tensor without taking it: then the capsule gets
   * its own name back and stays its producer's (its destructor runs the deleter, as NumPy leaves it). */
  void *managed = PyCapsule_GetPointer(capsule, name);
  (void)PyCapsule_SetName(capsule, versioned ? DLMAP_PY_CAPSULE_VERSIONED_USED : DLMAP_PY_CAPSULE_LEGACY_USED);
  if (!dlmap_profile_current()->refused_capsule_left) Py_DECREF(capsule);
  /* copy=True was honoured by the producer: no second copy where its tensor says IS_COPIED, or under import.copy_trust
   * producer, whatever it says */
  if (producer_copied_if_flagged && dlmap_profile_current()->copy_trust_producer) {
    request->copy = DLMAP_COPY_IF_NEEDED;
  } else if (versioned && producer_copied_if_flagged) {
    const struct DLManagedTensorVersioned *t = (const struct DLManagedTensorVersioned *)managed;
    const dlmap_version version = {t->version.major, t->version.minor};
    if (dlmap_version_struct(version) == DLMAP_STRUCT_VERSIONED && (t->flags & DLMAP_FLAG_IS_COPIED) != 0) {
      request->copy = DLMAP_COPY_IF_NEEDED;
    }
  }
  const char *via = versioned ? "dltensor_versioned" : "dltensor";
  if (!dlmap_profile_current()->refused_capsule_left) return dlmap_py_import(managed, versioned, request, via);
  bool left = false;
  PyObject *result = dlmap_py_import_or_leave(managed, versioned, request, via, &left);
  return give_back_capsule(capsule, left ? name : NULL, result);
}

/* obj.name into *out (a new reference), or *out = NULL when obj has no such attribute: 0, or -1 with an exception. No
 * AttributeError is raised and cleared for a missing attribute. */
static int lookup_attr(PyObject *obj, PyObject *name, PyObject **out) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyObject_GetOptionalAttr(obj, name, out);
#else
  return _PyObject_LookupAttr(obj, name, out);
#endif
}

/* The max_version dlmap asks for (the profile's import.ask.max_version), and the keyword-name tuples of the common
 * calls, built once. */
static PyObject *current_max_version, *kw_stream;

/* Calls a __dlpack__ or __dlpack_device__ that lookup_methods found: bound, or (self != NULL) the type's method
 * descriptor, called with self first. args has a free slot before args[0] (PY_VECTORCALL_ARGUMENTS_OFFSET). */
static PyObject *call_method(PyObject *callable, PyObject *self, PyObject **args, Py_ssize_t nargs, PyObject *kwnames) {
  if (self == NULL) return PyObject_Vectorcall(callable, args, (size_t)nargs | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
  PyObject *saved = args[-1];
  args[-1] = self; /* no OFFSET flag: args[-2] is not ours to lend */
  PyObject *result = PyObject_Vectorcall(callable, args - 1, (size_t)(nargs + 1), kwnames);
  args[-1] = saved;
  return result;
}

/* The keyword-name tuple of a versioned call passing the keywords in `mask` (DLMAP_ASK_KEYWORD_* bits: max_version,
 * stream, dl_device, copy), in the profile's order (dlmap_profile_ask_keyword_at), built once per mask: a new
 * reference, or NULL with an exception. */
static PyObject *versioned_kwnames(uint32_t mask) {
  static PyObject *built[16];
  if (built[mask] != NULL) return Py_NewRef(built[mask]);
  PyObject *const names[4] = {dlmap_py_name.max_version, dlmap_py_name.stream, dlmap_py_name.dl_device,
                              dlmap_py_name.copy};
  PyObject *kwnames = PyTuple_New(__builtin_popcount(mask));
  if (kwnames == NULL) return NULL;
  Py_ssize_t n = 0;
  for (uint32_t bit, i = 0; (bit = dlmap_profile_ask_keyword_at(i)) != 0; i++) {
    if (mask & bit) PyTuple_SET_ITEM(kwnames, n++, Py_NewRef(names[__builtin_ctz(bit)]));
  }
  built[mask] = Py_NewRef(kwnames);
  return kwnames;
}

/* The versioned call, method(max_version=..., ...) through vectorcall (no dict per call): the profile's
 * import.ask.keywords are passed every time, None included; the others only when they carry a value (stream when
 * has_stream, dl_device when not NULL, copy when not None); none of the `dropped` ones (DLMAP_ASK_KEYWORD_* bits: a
 * retry of import.ask.retry's list); all in the profile's order. Default keywords: max_version and stream. *passed:
 * the keywords passed. */
static PyObject *call_dlpack(PyObject *method, PyObject *self, PyObject *stream_arg, bool has_stream,
                             PyObject *dl_device, PyObject *copy, uint32_t dropped, uint32_t *passed) {
  PyObject *const given[4] = {current_max_version, stream_arg, dl_device != NULL ? dl_device : Py_None, copy};
  const bool set[4] = {true, has_stream, dl_device != NULL, copy != Py_None};
  const uint32_t always = dlmap_profile_current()->ask_keywords;
  PyObject *values[5] = {NULL};
  uint32_t mask = 0;
  Py_ssize_t n = 0;
  for (uint32_t bit, i = 0; (bit = dlmap_profile_ask_keyword_at(i)) != 0; i++) {
    if (((always & bit) || set[__builtin_ctz(bit)]) && !(dropped & bit)) {
      mask |= bit;
      values[1 + n++] = given[__builtin_ctz(bit)];
    }
  }
  *passed = mask;
  if (mask == 0) return call_method(method, self, values + 1, 0, NULL);
  PyObject *kwnames = versioned_kwnames(mask);
  if (kwnames == NULL) return NULL;
  PyObject *result = call_method(method, self, values + 1, 0, kwnames);
  Py_DECREF(kwnames);
  return result;
}

/* x.__dlpack__ and x.__dlpack_device__ as attribute lookup finds them, as new references: 0, or 1 when either is
 * missing, or -1 with an exception (under a profile whose import.device_query is never, only __dlpack__ is looked up
 * and needed: *device_method stays NULL). Where attribute lookup would only bind a C method of x's type to x (the
 * generic getattr, no instance dict, the type's attribute a method descriptor: NumPy's ndarray), the descriptors
 * themselves are returned and *self = x, so that no bound method is made per call; otherwise *self = NULL and they are
 * bound.
 *
 * _PyType_Lookup answers with a borrowed reference, and a lookup can run Python code: a class dict holding a str
 * subclass key whose hash collides with the name compares it with its own __eq__, which may delete the attribute
 * found before, reassign __bases__ or __class__, or collect garbage. So the type and the first answer are held across
 * the second lookup, as `m = x.__dlpack__; d = x.__dlpack_device__` would hold them; and when that code replaced the
 * type's __getattribute__ (or x's class) meanwhile, attribute lookup proper answers instead. */
static int lookup_methods(PyObject *x, PyObject **method, PyObject **device_method, PyObject **self) {
  *method = *device_method = *self = NULL;
  const bool query = dlmap_profile_current()->device_query_first;
  PyTypeObject *type = Py_TYPE(x);
  if (type->tp_getattro == PyObject_GenericGetAttr && type->tp_dictoffset == 0) {
    Py_INCREF(type);
    PyObject *m = Py_XNewRef(_PyType_Lookup(type, dlmap_py_name.dlpack));
    const bool m_descriptor = m != NULL && Py_IS_TYPE(m, &PyMethodDescr_Type);
    PyObject *d = m_descriptor && query ? Py_XNewRef(_PyType_Lookup(type, dlmap_py_name.dlpack_device)) : NULL;
    const bool unchanged = Py_TYPE(x) == type && type->tp_getattro == PyObject_GenericGetAttr;
    Py_DECREF(type);
    if (unchanged && m_descriptor && (!query || (d != NULL && Py_IS_TYPE(d, &PyMethodDescr_Type)))) {
      *method = m;
      *device_method = d;
      *self = x;
      return 0;
    }
    Py_XDECREF(m);
    Py_XDECREF(d);
  }
  if (lookup_attr(x, dlmap_py_name.dlpack, method) < 0) return -1;
  if (*method == NULL ||
      (query && (lookup_attr(x, dlmap_py_name.dlpack_device, device_method) < 0 || *device_method == NULL))) {
    const bool failed = PyErr_Occurred() != NULL;
    Py_CLEAR(*method);
    return failed ? -1 : 1;
  }
  return 0;
}

static PyObject *from_dlpack_methods(PyObject *x, PyObject *method, PyObject *device_method, PyObject *self,
                                     dlmap_import_request *request_in, PyObject *copy_obj, bool has_stream,
                                     int64_t stream);

static PyObject *from_dlpack(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  /* The first parameter's name is the profile's (arguments.from_dlpack_object). */
  static char *kwlist[] = {"x", "device", "copy", "stream", NULL};
  static char *kwlist_no_stream[] = {"x", "device", "copy", NULL};
  kwlist[0] = kwlist_no_stream[0] = (char *)dlmap_profile_current()->from_dlpack_object;
  /* import.ask.stream false: no stream parameter, so stream= is an unexpected keyword */
  const bool stream_parameter = dlmap_profile_current()->ask_stream;
  const dlmap_py_signature signature = {"from_dlpack", false, 1, 1,
                                        (const char *const *)(stream_parameter ? kwlist : kwlist_no_stream)};
  if (dlmap_py_check_signature(&signature, PyTuple_GET_SIZE(args), kwargs) < 0) return NULL;
  PyObject *x, *device_obj = Py_None, *copy_obj = Py_None, *stream_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, stream_parameter ? "O|$OOO:from_dlpack" : "O|$OO:from_dlpack",
                                   stream_parameter ? kwlist : kwlist_no_stream, &x, &device_obj, &copy_obj,
                                   &stream_obj)) {
    return NULL;
  }
  /* import.capsule_arguments refuse: a bare capsule takes no device or copy; refused before either is read, the
   * capsule untouched (PyTorch's assert) */
  if (dlmap_profile_current()->capsule_arguments_refused && PyCapsule_CheckExact(x) &&
      (device_obj != Py_None || copy_obj != Py_None)) {
    return dlmap_py_raised(dlmap_raise_capsule_with_arguments(DLMAP_PY_ERR));
  }
  dlmap_import_request request = dlmap_import_request_default();
  request.allocator = &dlmap_py_allocator;
  bool has_stream;
  int64_t stream;
  if (dlmap_py_parse_import_device(device_obj, &request.has_device, &request.device_type, &request.device_id) < 0 ||
      dlmap_py_parse_copy(copy_obj, "copy", &request.copy) < 0 ||
      dlmap_py_parse_stream(stream_obj, "stream", &has_stream, &stream) < 0) {
    return NULL;
  }
  /* The producer gets copy as the protocol states it (a bool or None), whatever bool-like object the caller passed. */
  copy_obj = request.copy == DLMAP_COPY_ALWAYS ? Py_True : request.copy == DLMAP_COPY_NEVER ? Py_False : Py_None;
  PyObject *method, *device_method, *self;
  const int found = lookup_methods(x, &method, &device_method, &self);
  if (found != 0) {
    return found < 0 ? NULL
                     : dlmap_py_raised(dlmap_raise_from_dlpack_missing_methods(DLMAP_PY_ERR, Py_TYPE(x)->tp_name));
  }
  PyObject *result = from_dlpack_methods(x, method, device_method, self, &request, copy_obj, has_stream, stream);
  Py_DECREF(method);
  Py_XDECREF(device_method);
  return result;
}

/* from_dlpack through METH_FASTCALL: the common call, from_dlpack(x) alone, skips building the argument tuple and
 * PyArg_ParseTupleAndKeywords (about 300 instructions, bench/); any other call goes through from_dlpack as a tuple and
 * a dict, so that its parsing and errors are unchanged. */
static PyObject *from_dlpack_fast(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  if (nargs != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)) {
    return dlmap_py_call_with_keywords(from_dlpack, module, args, nargs, kwnames);
  }
  /* device, copy and stream are None: what from_dlpack's parsing makes of them. */
  PyObject *x = args[0];
  dlmap_import_request request = dlmap_import_request_default(); /* copy if needed */
  request.allocator = &dlmap_py_allocator;
  PyObject *method, *device_method, *self;
  const int found = lookup_methods(x, &method, &device_method, &self);
  if (found != 0) {
    return found < 0 ? NULL
                     : dlmap_py_raised(dlmap_raise_from_dlpack_missing_methods(DLMAP_PY_ERR, Py_TYPE(x)->tp_name));
  }
  PyObject *result = from_dlpack_methods(x, method, device_method, self, &request, Py_None, false, 0);
  Py_DECREF(method);
  Py_XDECREF(device_method);
  return result;
}

/* The consumer's stream for a tensor on device_type, read by the core's stream rules (stream=5 for a host tensor is
 * the catalogue's error, whichever path serves it): the runtime's handle into request->consumer_stream, on which a copy on
 * import runs (1 legacy, 2 per-thread, > 2 the consumer's own stream) after the work the producer ordered before it.
 * A status, the error in err: the caller raises it once nothing else (a producer's deleter) is left to run. */
static int32_t consumer_stream(int32_t device_type, bool has_stream, int64_t stream, dlmap_import_request *request,
                               dlmap_error *err) {
  return dlmap_stream_handle(device_type, has_stream, stream, &request->consumer_stream, err);
}

/* Step 1: the producer type's C exchange API, when it publishes one (it hands out versioned tensors: not for a
 * profile that asks for legacy capsules only). The imported array, or NULL with an exception, or NULL without one
 * when the path does not serve x (no table, a state of x the spec sends to __dlpack__, or the tensor needs
 * synchronisation or a move: it is released and the Python path asks the producer). The tensor belongs to dlmap from
 * the moment the table hands it out. */
static PyObject *from_exchange_api(PyObject *x, dlmap_import_request *request, bool has_stream, int64_t stream) {
  PyTypeObject *type = Py_TYPE(x);
  const DLPackExchangeAPI *api = dlmap_py_find_exchange_api(type);
  if (api == NULL || api->managed_tensor_from_py_object_no_sync == NULL) return NULL;
  /* States of x no DLPack tensor carries (a conjugate bit, ...): the table would hand them over unseen. Reading them
   * runs x's code, which may change x's class or the table its type publishes: the type is held (so its address
   * cannot name another type meanwhile) and the table is used only when both are still the ones found. */
  Py_INCREF(type);
  const int state = dlmap_py_producer_state(x, type);
  const bool unchanged = Py_TYPE(x) == type && dlmap_py_find_exchange_api(type) == api;
  Py_DECREF(type);
  if (state != 0 || !unchanged) return NULL; /* -1: the exception stands; else the Python path asks the producer */
  struct DLManagedTensorVersioned *tensor = NULL;
  if (api->managed_tensor_from_py_object_no_sync(x, &tensor) != 0 || tensor == NULL) {
    if (PyErr_Occurred()) return NULL;
    return dlmap_py_raised(dlmap_raise_backend_call_failed(DLMAP_PY_ERR, "the producer's C exchange API",
                                                           "managed_tensor_from_py_object_no_sync",
                                                           "it failed without setting an exception"));
  }
  /* Only the ABI-stable head (version, manager_ctx, deleter, flags) may be read before the major version is known: a
   * future major's tensor may end there, and import refuses it (its deleter, in the head, runs once). A device type
   * the spec does not know is import's to report too. */
  const dlmap_version version = {tensor->version.major, tensor->version.minor};
  const bool readable = dlmap_version_struct(version) == DLMAP_STRUCT_VERSIONED;
  const int32_t device_type = readable ? (int32_t)tensor->dl_tensor.device.device_type : 0;
  dlmap_error err;
  if (readable && dlmap_device_type_find(device_type) != NULL &&
      consumer_stream(device_type, has_stream, stream, request, &err) != DLMAP_OK) {
    dlmap_py_delete_managed(tensor, true); /* before raising: the deleter may run Python code */
    return dlmap_py_raise(&err);
  }
  if (exchange_tensor_usable(api, tensor, request, has_stream, stream)) {
    return dlmap_py_import(tensor, true, request, "c_exchange_api");
  }
  dlmap_py_delete_managed(tensor, true);
  return NULL;
}

/* Step 2: where the producer says the array lives, as a device type the profile imports from (else the catalogue's
 * error naming str(x), before the producer is asked for anything; under import.device_query capsule any type, whose
 * report is kept for the stream only; *accepted says whether the profile imports from it): 0, or -1 with an
 * exception. */
static int reported_device(PyObject *x, PyObject *device_method, PyObject *self, int32_t *device_type,
                           bool *accepted) {
  PyObject *no_args[1] = {NULL};
  PyObject *reported = call_method(device_method, self, no_args + 1, 0, NULL);
  if (reported == NULL) return -1;
  int32_t device_id;
  bool has_reported;
  const int parsed = dlmap_py_parse_device(reported, "__dlpack_device__() result", false,
                                           "a (device_type, device_id) tuple of ints", &has_reported, device_type,
                                           &device_id);
  Py_DECREF(reported);
  if (parsed < 0) return -1;
  *accepted = dlmap_profile_device_policy(*device_type).import_accepted;
  if (!*accepted && !dlmap_profile_current()->device_report_stream_only) {
    unsupported_source(x, *device_type);
    return -1;
  }
  return 0;
}

/* Step 3: a capsule from __dlpack__: versioned first (max_version, stream, and dl_device and copy when asked); an old
 * producer raises TypeError on the keywords and gets a plain call, where the profile's import.ask.retry allows one
 * (always, or only when dl_device and copy are None; else the TypeError propagates), or the retries its list makes,
 * each without one more keyword. *passed: the DLMAP_ASK_KEYWORD_* bits of the call that answered. */
static PyObject *ask_producer(PyObject *x, PyObject *method, PyObject *self, const dlmap_import_request *request,
                              PyObject *copy_obj, bool has_stream, int64_t stream, uint32_t *passed) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  const bool ask_versioned = profile->request == DLMAP_REQUEST_VERSIONED_FIRST;
  const bool may_retry = profile->ask_retry_any_type_error || (!request->has_device && copy_obj == Py_None);
  const bool ladder = dlmap_profile_ask_retry_drop_at(0) != 0;
  PyObject *stream_arg = has_stream ? PyLong_FromLongLong((long long)stream) : Py_NewRef(Py_None);
  if (stream_arg == NULL) return NULL;
  PyObject *capsule = NULL;
  *passed = 0;
  /* A type remembered as refusing max_version, or a Python function whose signature has no max_version (it would
   * raise TypeError before running): call it plainly, where that TypeError would get a plain retry (a retry list asks
   * every step, as its library does). */
  const bool remembered = ask_versioned && !ladder && may_retry && dlmap_py_legacy_only(x, method, self);
  bool versioned = ask_versioned && (ladder || !(may_retry && (remembered || dlmap_py_rejects_max_version(method))));
  if (versioned) {
    PyObject *dl_device = request->has_device ? device_tuple(request->device_type, request->device_id) : NULL;
    if (request->has_device && dl_device == NULL) {
      Py_DECREF(stream_arg);
      return NULL;
    }
    capsule = call_dlpack(method, self, stream_arg, has_stream, dl_device, copy_obj, 0, passed);
    uint32_t dropped = 0;
    for (size_t i = 0; capsule == NULL && ladder && PyErr_ExceptionMatches(PyExc_TypeError) &&
                       dlmap_profile_ask_retry_drop_at(i) != 0;
         i++) {
      PyErr_Clear();
      dropped |= dlmap_profile_ask_retry_drop_at(i);
      capsule = call_dlpack(method, self, stream_arg, has_stream, dl_device, copy_obj, dropped, passed);
    }
    Py_XDECREF(dl_device);
    if (capsule == NULL && !ladder && may_retry && PyErr_ExceptionMatches(PyExc_TypeError)) {
      dlmap_py_remember_legacy_only(x, method, self);
      PyErr_Clear();
      versioned = false;
    }
  }
  if (!versioned) {
    /* A plain __dlpack__() on the host; a stream is still passed to a device producer when one was given. A
     * legacy-only profile always passes stream= (None included), as JAX does. */
    PyObject *values[2] = {NULL, stream_arg};
    const bool with_stream = has_stream || !ask_versioned;
    *passed = with_stream ? DLMAP_ASK_KEYWORD_STREAM : 0;
    capsule = call_method(method, self, values + 1, 0, with_stream ? kw_stream : NULL);
    /* A remembered type's plain call refused with a TypeError: whatever changed, it is asked versioned next time. */
    if (remembered && capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
      dlmap_py_forget_legacy_only(Py_TYPE(x));
    }
  }
  Py_DECREF(stream_arg);
  return capsule;
}

/* Step 2 and the stream, where the profile's import.device_query is first: the reported device type (checked), and
 * the consumer's stream read by its convention (a type whose convention is `none` gets none under host_stream: none).
 * 0, or -1 with an exception. (Under device_query never there is no stream= (the generator requires ask.stream:
 * false), no report, and a copy on import runs on the default stream.) */
static int device_step(PyObject *x, PyObject *device_method, PyObject *self, dlmap_import_request *request,
                       bool *has_stream, int64_t stream, int32_t *device_type) {
  bool accepted;
  if (reported_device(x, device_method, self, device_type, &accepted) < 0) return -1;
  if (!accepted) { /* reported for the stream only: none */
    *has_stream = false;
    return 0;
  }
  if (dlmap_profile_current()->host_stream_none &&
      dlmap_device_type_find(*device_type)->stream == DLMAP_STREAM_CONVENTION_NONE) {
    *has_stream = false;
  }
  dlmap_error err;
  if (consumer_stream(*device_type, *has_stream, stream, request, &err) != DLMAP_OK) {
    dlmap_py_raise(&err);
    return -1;
  }
  return 0;
}

/* from_dlpack once x's __dlpack__ and __dlpack_device__ are in hand as lookup_methods found them (borrowed here):
 * the C exchange API, else the Python protocol (the reported device, the stream, the capsule), then import. What the
 * profile accepts, the stream rules and the tensor's checks are the core's; the binding asks them before it asks the
 * producer for anything it would refuse. */
static PyObject *from_dlpack_methods(PyObject *x, PyObject *method, PyObject *device_method, PyObject *self,
                                     dlmap_import_request *request_in, PyObject *copy_obj, bool has_stream,
                                     int64_t stream) {
  dlmap_import_request request = *request_in;
  const dlmap_profile_info *profile = dlmap_profile_current();
  /* A target the profile does not import onto is refused before the producer is asked for anything. */
  if (request.has_device && !dlmap_profile_device_policy(request.device_type).import_accepted) {
    return dlmap_py_raised(dlmap_raise_import_unsupported_target_device(DLMAP_PY_ERR, request.device_type));
  }
  if (profile->request == DLMAP_REQUEST_VERSIONED_FIRST) {
    PyObject *imported = from_exchange_api(x, &request, has_stream, stream);
    if (imported != NULL || PyErr_Occurred()) return imported;
    request = *request_in; /* the Python path starts afresh */
  }

  int32_t device_type = 0;
  if (profile->device_query_first &&
      device_step(x, device_method, self, &request, &has_stream, stream, &device_type) < 0) {
    return NULL;
  }
  uint32_t passed;
  PyObject *capsule = ask_producer(x, method, self, &request, copy_obj, has_stream, stream, &passed);
  if (capsule == NULL) return NULL;

  /* Step 4: import. The producer moved the data when it was given dl_device; otherwise import weighs its report
   * against the tensor (PyTorch reports pinned tensors as kDLCUDAHost but stores kDLCPU; other disagreements are
   * errors). */
  if (profile->device_query_first && !profile->device_report_stream_only &&
      !(passed & DLMAP_ASK_KEYWORD_DL_DEVICE)) {
    request.has_reported_device = true;
    request.reported_device_type = device_type;
  }
  const bool producer_copied = (passed & DLMAP_ASK_KEYWORD_COPY) && request.copy == DLMAP_COPY_ALWAYS;
  return consume_capsule(capsule, passed & DLMAP_ASK_KEYWORD_MAX_VERSION, &request, producer_copied);
}

/* ---- dlmap.profile ------------------------------------------------------------------------------------------------ */

static PyObject *profile_name(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  return PyUnicode_FromString(dlmap_profile_current()->name);
}

static PyObject *profile_models(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  return PyUnicode_FromString(dlmap_profile_current()->models);
}

/* ---- dlmap.platform_status ---------------------------------------------------------------------------------------- */

static PyObject *platform_status(PyObject *module, PyObject *arg) {
  (void)module;
  if (!PyUnicode_Check(arg)) return dlmap_py_type_error("platform", "a platform name (str)", arg);
  Py_ssize_t len;
  const char *name = PyUnicode_AsUTF8AndSize(arg, &len);
  if (name == NULL) return NULL;
  dlmap_platform platform;
  if (!dlmap_platform_parse(name, (size_t)len, &platform)) {
    return dlmap_py_raised(dlmap_raise_name_unknown(DLMAP_PY_ERR, "platform", name));
  }
  dlmap_platform_status status;
  Py_BEGIN_ALLOW_THREADS /* probing may load and start a GPU runtime */
  dlmap_platform_probe(platform, &status);
  Py_END_ALLOW_THREADS
  return Py_BuildValue("{s:s,s:O,s:O,s:i,s:s}", "platform", dlmap_platform_find(platform)->name, "built",
                       status.built ? Py_True : Py_False, "available", status.available ? Py_True : Py_False,
                       "device_count", (int)status.device_count, "reason", status.reason);
}

/* ---- the module --------------------------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    {"empty", (PyCFunction)(void (*)(void))empty, METH_VARARGS | METH_KEYWORDS,
     "empty(shape, dtype='float32', *, device=None)\n--\n\n"
     "A new zero-filled array allocated through dlmap (host memory; 64-byte aligned). dtype is a spec name such as "
     "\"float32\", \"int8\", \"bool\" or \"complex64\"."},
    {"from_dlpack", (PyCFunction)(void (*)(void))from_dlpack_fast, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(x, *, device=None, copy=None, stream=None)\n--\n\n"
     "Imports any DLPack producer, as the module's profile says: under array_api through its type's C exchange API "
     "when it publishes one, else through x.__dlpack__(max_version=..., stream=...), retried as a plain "
     "x.__dlpack__() when that raises TypeError; under jax through x.__dlpack__(stream=...) only, as JAX does. "
     "device: None, a device name or (device_type, device_id); copy: None, True or False; stream: the consumer's "
     "stream for device producers (must be None on the host)."},
    {"profile", profile_name, METH_NOARGS,
     "profile()\n--\n\nThe name of the profile this module was built with (\"jax\" by default, \"array_api\"): the "
     "exchange policy its __dlpack__ and from_dlpack follow (spec/profiles/<name>.yaml)."},
    {"profile_models", profile_models, METH_NOARGS,
     "profile_models()\n--\n\nThe peer releases the module's profile reproduces, as its `models:` key says "
     "(\"jax >= 0.11.1\", \"numpy >= 2.5\"): the differential tests compare a peer only with the profile that "
     "claims its release."},
    {"set_device_allocator", dlmap_py_set_device_allocator, METH_VARARGS,
     "set_device_allocator(allocate, release, /)\n--\n\n"
     "Installs a framework's device allocator for every device buffer the module's exchanges make (device copies and "
     "the compact buffers of strided device-to-host copies): allocate(nbytes, (device_type, device_id), stream) -> "
     "address (0: out of memory) and release(pointer, stream), stream being the runtime's handle as an int (-1: none "
     "named; release must then not let the memory be reused before the device's queued work is done). They may be "
     "called on any thread. set_device_allocator(None) goes back to the runtime's stream-ordered allocator; buffers "
     "always go back to the pair that made them. E.g. torch.cuda.caching_allocator_alloc / _delete."},
    {"platform_status", platform_status, METH_O,
     "platform_status(name, /)\n--\n\n"
     "Probes a platform (\"cpu\", \"cuda\", \"rocm\", …): {platform, built, available, device_count, reason}; reason "
     "is the vendor's text when it is not available."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    DLMAP_PY_MODULE_NAME_STR, /* the import name the build chose (binding.h) */
    "DLPack exchange through the dlmap C library: Array, empty and from_dlpack.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

/* dlpack_device.enum: enum.IntEnum("DLDeviceType", [(enumerator, value), …]) over the spec's device types. */
static PyObject *device_enum_new(void) {
  PyObject *members = PyList_New(0);
  for (size_t i = 0; members != NULL && dlmap_device_type_at(i) != NULL; i++) {
    const dlmap_device_info *d = dlmap_device_type_at(i);
    PyObject *member = Py_BuildValue("(si)", d->name, (int)d->value);
    if (member == NULL || PyList_Append(members, member) < 0) {
      Py_DECREF(members); /* not Py_CLEAR: members is not NULL here, the loop runs only while it is not */
      members = NULL;
    }
    Py_XDECREF(member);
  }
  PyObject *enum_module = members != NULL ? PyImport_ImportModule("enum") : NULL;
  PyObject *int_enum = enum_module != NULL ? PyObject_GetAttrString(enum_module, "IntEnum") : NULL;
  PyObject *result = int_enum != NULL ? PyObject_CallFunction(int_enum, "sO", "DLDeviceType", members) : NULL;
  Py_XDECREF(int_enum);
  Py_XDECREF(enum_module);
  Py_XDECREF(members);
  return result;
}

PyMODINIT_FUNC DLMAP_PY_INIT_FUNCTION(void) { /* PyInit_<module name> */
  if (PyType_Ready(&dlmap_py_array_type) < 0) return NULL;
  /* The exchange table lives for the whole process; the capsule is published on the type (DLPack 1.3), where the
   * profile hands out versioned tensors at all (the exchange API speaks only DLManagedTensorVersioned). */
  dlmap_struct_kind newest_struct = DLMAP_STRUCT_NONE;
  if (dlmap_profile_struct_lookup(true, dlmap_version_current(), &newest_struct, NULL) == DLMAP_OK &&
      newest_struct == DLMAP_STRUCT_VERSIONED) {
    PyObject *api = PyCapsule_New((void *)&dlmap_py_exchange_api, DLMAP_EXCHANGE_API_CAPSULE_NAME, NULL);
    if (api == NULL) return NULL;
    const int set = PyDict_SetItemString(dlmap_py_array_type.tp_dict, DLMAP_EXCHANGE_API_ATTRIBUTE, api);
    Py_DECREF(api);
    if (set < 0) return NULL;
    PyType_Modified(&dlmap_py_array_type);
  }

  if (dlmap_py_names_init() < 0 || dlmap_py_errors_init() < 0) return NULL;
  const dlmap_version asked = dlmap_profile_current()->ask_max_version;
  current_max_version = Py_BuildValue("(II)", asked.major, asked.minor);
  kw_stream = PyTuple_Pack(1, dlmap_py_name.stream);
  if (current_max_version == NULL || kw_stream == NULL) return NULL;

  PyObject *module = PyModule_Create(&module_def);
  if (module == NULL) return NULL;
  if (PyModule_AddFunctions(module, dlmap_py_testing_hooks) < 0 ||
      PyModule_AddFunctions(module, dlmap_py_python_allocation_failure) < 0 ||
      PyModule_AddFunctions(module, dlmap_py_conformance_functions) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  const dlmap_version current = dlmap_version_current();
  PyObject *version = Py_BuildValue("(II)", current.major, current.minor);
  const int added = version != NULL && PyModule_AddObjectRef(module, "DLPACK_VERSION", version) == 0 &&
                    PyModule_AddObjectRef(module, "Array", (PyObject *)&dlmap_py_array_type) == 0;
  Py_XDECREF(version);
  if (added && dlmap_profile_current()->dlpack_device_enum && dlmap_py_device_enum == NULL) {
    dlmap_py_device_enum = device_enum_new();
  }
  if (!added || (dlmap_profile_current()->dlpack_device_enum &&
                 (dlmap_py_device_enum == NULL ||
                  PyModule_AddObjectRef(module, "DLDeviceType", dlmap_py_device_enum) < 0))) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
