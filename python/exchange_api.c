/* dlmap Python binding — the DLPack 1.3 C exchange API: the static table dlmap.Array's type publishes as
 * __dlpack_c_exchange_api__ (producer side), and the lookup of a producer type's table (consumer side). */
#include <string.h>

#include "python/binding.h"

/* Tables a prev_api chain may hold before the search gives up (DLPack has one major so far). */
#define DLMAP_PY_EXCHANGE_API_MAX_CHAIN 16

static int allocator(DLTensor *prototype, struct DLManagedTensorVersioned **out, void *error_ctx,
                     void (*set_error)(void *error_ctx, const char *kind, const char *message)) {
  /* No Python state here: callers may not hold the GIL. */
  dlmap_error err;
  int32_t status;
  if (prototype == NULL || out == NULL) {
    status = dlmap_raise_invalid_argument(&err, prototype == NULL ? "prototype" : "out", "must not be NULL");
  } else {
    /* Published only where the profile hands out versioned tensors (PyInit_dlmap), so this one is versioned. */
    dlmap_exported tensor;
    status = dlmap_py_allocate_tensor(prototype->ndim, prototype->shape, prototype->dtype,
                                      (int32_t)prototype->device.device_type, prototype->device.device_id,
                                      NULL /* no GIL here to read the installed one: the runtime's */, &tensor, &err);
    if (status == DLMAP_OK) *out = tensor.versioned;
  }
  if (status == DLMAP_OK) return 0;
  if (set_error != NULL) set_error(error_ctx, dlmap_error_kind_name(err.kind), err.message);
  return -1;
}

static dlmap_py_array *as_array(void *py_object, const char *argument) {
  PyObject *obj = (PyObject *)py_object;
  if (obj == NULL || !PyObject_TypeCheck(obj, &dlmap_py_array_type)) {
    dlmap_py_type_error(argument, "a " DLMAP_PY_MODULE_NAME_STR ".Array", obj != NULL ? obj : Py_None);
    return NULL;
  }
  return (dlmap_py_array *)obj;
}

static int from_py_object(void *py_object, struct DLManagedTensorVersioned **out) {
  dlmap_py_array *array = as_array(py_object, "py_object");
  if (array == NULL) return -1;
  dlmap_export_request request = dlmap_export_request_default();
  request.has_max_version = true;
  request.max_version = dlmap_version_current();
  request.copy = DLMAP_COPY_IF_NEEDED;
  request.allocator = &dlmap_py_allocator;
  /* No synchronisation: -1 where the device type takes streams; None (the only value) on the host. */
  dlmap_stream_meaning meaning;
  if (dlmap_stream_classify((int32_t)array->imported.tensor.device.device_type, true, -1, &meaning, NULL) == DLMAP_OK) {
    request.has_stream = true;
    request.stream = -1;
  }
  dlmap_exported exported;
  if (dlmap_py_array_export(array, &request, false, &exported) < 0) return -1;
  *out = exported.versioned;
  return 0;
}

static int to_py_object(struct DLManagedTensorVersioned *tensor, void **out_py_object) {
  if (tensor == NULL) {
    dlmap_py_raised(dlmap_raise_invalid_argument(DLMAP_PY_ERR, "tensor", "must not be NULL"));
    return -1;
  }
  PyObject *array = dlmap_py_import(tensor, true, NULL, "managed_tensor_to_py_object");
  if (array == NULL) return -1;
  *out_py_object = array;
  return 0;
}

static int dltensor_from_py_object(void *py_object, DLTensor *out) {
  dlmap_py_array *array = as_array(py_object, "py_object");
  if (array == NULL) return -1;
  if (array->read_only) {
    /* A bare DLTensor has no flags: a consumer could write to it. */
    dlmap_error err;
    dlmap_raise_read_only_needs_versioned(&err);
    return dlmap_py_raise_int(&err);
  }
  *out = array->imported.tensor; /* shape and strides point into the array, valid while it lives */
  return 0;
}

static int current_work_stream(DLDeviceType device_type, int32_t device_id, void **out_current_stream) {
  (void)device_type;
  (void)device_id;
  /* dlmap launches no work: its arrays are ready on the legacy default stream, and the host has none. */
  if (out_current_stream != NULL) *out_current_stream = NULL;
  return 0;
}

const DLPackExchangeAPI dlmap_py_exchange_api = {
    {{DLMAP_ABI_CURRENT_MAJOR, DLMAP_ABI_CURRENT_MINOR}, NULL},
    allocator,
    from_py_object,
    to_py_object,
    dltensor_from_py_object,
    current_work_stream,
};

/* The 1.2 integer form: the table's address as an int, trusted only where Python code cannot have put it. Any class
 * statement can set an int attribute (`__c_dlpack_exchange_api__ = 8`), so the int counts only when the type that
 * holds it in its MRO is not a heap type (a C extension's static type). A forged capsule, by contrast, needs C.
 *
 * Each dict lookup can run Python code (a str subclass key whose hash collides with the name compares itself with its
 * own __eq__), and that code can reassign __bases__, which replaces and frees type->tp_mro: the walk holds the MRO
 * tuple it started with (and so each base in it), and the value found. */
static const DLPackExchangeAPIHeader *integer_form(PyTypeObject *type) {
  /* Not checked: the type of an object is ready, and a ready type's MRO is a tuple (CPython checks what mro()
   * returns), and each base in it is ready, its dict never NULL. */
  PyObject *mro = Py_NewRef(type->tp_mro);
  const DLPackExchangeAPIHeader *header = NULL;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
    PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i); /* held by mro */
#if PY_VERSION_HEX >= 0x030C0000
    /* Since 3.12 a static builtin type's tp_dict is NULL (its dict is per interpreter): ask for it. */
    PyObject *dict = PyType_GetDict(base); /* new reference */
#else
    PyObject *dict = Py_NewRef(base->tp_dict);
#endif
    PyObject *value = Py_XNewRef(PyDict_GetItemWithError(dict, dlmap_py_name.exchange_api_1_2));
    Py_DECREF(dict);
    if (value == NULL) {
      if (PyErr_Occurred()) PyErr_Clear();
      continue;
    }
    /* The first definition along the MRO is the one attribute lookup finds: it alone decides. */
    if ((base->tp_flags & Py_TPFLAGS_HEAPTYPE) == 0 && PyLong_Check(value)) {
      header = (const DLPackExchangeAPIHeader *)PyLong_AsVoidPtr(value);
      if (header == NULL && PyErr_Occurred()) PyErr_Clear();
    }
    Py_DECREF(value);
    break;
  }
  Py_DECREF(mro);
  return header;
}

/* The attribute on the type or a base, from the type's attribute cache: a borrowed reference, and no AttributeError to
 * raise and clear when it is missing (most producers publish no table). */
static const DLPackExchangeAPI *find_exchange_api(PyTypeObject *type);

/* The answer per type, remembered with the type's version tag: CPython gives a type a new tag whenever its own or a
 * base's attributes change (the tag its attribute cache is keyed on), and never reuses one, so a (type, tag) pair
 * names one state of one type, even after the type is freed and its address reused. No reference is held.
 *
 * The lookup can run Python code (see integer_form) that changes the type, after which the type may already carry a
 * new tag: an answer is remembered only under the tag the type had before the lookup began, and only when the type
 * still has it afterwards. (A type without a tag yet gets one from the lookup's _PyType_Lookup; the next call then
 * finds it and remembers.) The type is held while that code runs: it could drop x's class (x.__class__ = ...). */
#define DLMAP_PY_API_CACHE 4
static struct {
  PyTypeObject *type;
  unsigned int tag;
  const DLPackExchangeAPI *api;
} api_cache[DLMAP_PY_API_CACHE];
static unsigned api_cache_next;

const DLPackExchangeAPI *dlmap_py_find_exchange_api(PyTypeObject *type) {
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
  const unsigned int tag = dlmap_py_type_version_tag(type);
  if (tag != 0) {
    for (unsigned i = 0; i < DLMAP_PY_API_CACHE; i++) {
      if (api_cache[i].type == type && api_cache[i].tag == tag) return api_cache[i].api;
    }
  }
  Py_INCREF(type);
  const DLPackExchangeAPI *api = find_exchange_api(type);
  if (tag != 0 && dlmap_py_type_version_tag(type) == tag) {
    const unsigned slot = api_cache_next++ % DLMAP_PY_API_CACHE;
    api_cache[slot].type = type;
    api_cache[slot].tag = tag;
    api_cache[slot].api = api;
  }
  Py_DECREF(type);
  return api;
#else
  Py_INCREF(type);
  const DLPackExchangeAPI *api = find_exchange_api(type);
  Py_DECREF(type);
  return api;
#endif
}

static const DLPackExchangeAPI *find_exchange_api(PyTypeObject *type) {
  const DLPackExchangeAPIHeader *header = NULL;
  PyObject *attr = _PyType_Lookup(type, dlmap_py_name.exchange_api);
  if (attr != NULL && PyCapsule_IsValid(attr, DLMAP_EXCHANGE_API_CAPSULE_NAME)) {
    header = (const DLPackExchangeAPIHeader *)PyCapsule_GetPointer(attr, DLMAP_EXCHANGE_API_CAPSULE_NAME);
  }
  if (header == NULL) header = integer_form(type);
  /* The consumer checks the major before reading further; older majors chain through prev_api. The walk is bounded:
   * a chain that loops (or is longer than any real one, one table per major) ends the search. */
  for (int hops = 0; header != NULL && hops < DLMAP_PY_EXCHANGE_API_MAX_CHAIN; header = header->prev_api, hops++) {
    if (header->version.major == DLMAP_ABI_CURRENT_MAJOR) return (const DLPackExchangeAPI *)header;
  }
  return NULL;
}
