/* dlmap Python binding — the type error of a bad argument, and the parsing of the protocol's Python arguments into
 * dlmap requests. Raising a catalogue error as its kind's exception is exceptions.c (public: dlmap_python.h). */
#include "python/binding.h"

#include <string.h>

/* The arguments whose type error is one of its own in the catalogue (argument_type_<argument>), so that a profile's
 * `errors:` can give each its own kind and text (and __dlpack__'s result, argument_type_dlpack_result); every other
 * argument's is argument_type_invalid. The same words. */
typedef int32_t (*type_error_raise)(dlmap_error *err, const char *argument, const char *expected, const char *got);
static const struct {
  const char *argument;
  type_error_raise raise;
} kTypeErrors[] = {
    {"max_version", dlmap_raise_argument_type_max_version},
    {"dl_device", dlmap_raise_argument_type_dl_device},
    {"copy", dlmap_raise_argument_type_copy},
    {"stream", dlmap_raise_argument_type_stream},
    {"__dlpack__() result", dlmap_raise_argument_type_dlpack_result},
};

PyObject *dlmap_py_type_error(const char *argument, const char *expected, PyObject *got) {
  type_error_raise raise = dlmap_raise_argument_type_invalid;
  for (size_t i = 0; i < sizeof kTypeErrors / sizeof kTypeErrors[0]; i++) {
    if (strcmp(kTypeErrors[i].argument, argument) == 0) raise = kTypeErrors[i].raise;
  }
  return dlmap_py_raised(raise(DLMAP_PY_ERR, argument, expected, Py_TYPE(got)->tp_name));
}

/* The arguments whose tuple of the wrong length is an error of its own (argument_length_<argument>), so that a profile
 * can tell it from a wrong type; every other argument's is its type error. The same words. */
typedef int32_t (*length_error_raise)(dlmap_error *err, const char *argument, const char *expected, const char *got,
                                      int64_t items);
static const struct {
  const char *argument;
  length_error_raise raise;
} kLengthErrors[] = {
    {"dl_device", dlmap_raise_argument_length_dl_device},
};

/* Not a (a, b) pair of ints: a tuple of another length is argument_length_<argument> where the catalogue has one, else
 * (and for any other value) the argument's type error. */
static void pair_error(const char *argument, const char *expected, PyObject *got) {
  if (PyTuple_Check(got) && PyTuple_GET_SIZE(got) != 2) {
    for (size_t i = 0; i < sizeof kLengthErrors / sizeof kLengthErrors[0]; i++) {
      if (strcmp(kLengthErrors[i].argument, argument) == 0) {
        dlmap_py_raised(kLengthErrors[i].raise(DLMAP_PY_ERR, argument, expected, Py_TYPE(got)->tp_name,
                                               (int64_t)PyTuple_GET_SIZE(got)));
        return;
      }
    }
  }
  dlmap_py_type_error(argument, expected, got);
}

static int invalid_value(const char *argument, const char *reason) {
  dlmap_py_raised(dlmap_raise_invalid_argument(DLMAP_PY_ERR, argument, reason));
  return -1;
}

/* An integer argument: int or anything with __index__ (IntEnum, NumPy integers), but not bool. 1: set; 0: not an
 * integer (nothing raised); -1: does not fit in int64 (raised). */
static int as_int64(PyObject *obj, const char *argument, int64_t *out) {
  if (PyLong_CheckExact(obj)) { /* the common case, read without PyNumber_Index's new reference */
    int overflow = 0;
    /* Of an exact int it only reports overflow, in the flag: it raises nothing (no __index__ to call). */
    const long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow != 0) return invalid_value(argument, "the value does not fit in a 64-bit integer");
    *out = (int64_t)value;
    return 1;
  }
  if (PyBool_Check(obj) || !PyIndex_Check(obj)) return 0;
  PyObject *index = PyNumber_Index(obj); /* an exact int (Python 3.10 on): read as above, raising nothing */
  if (index == NULL) return -1;
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (overflow != 0) return invalid_value(argument, "the value does not fit in a 64-bit integer");
  *out = (int64_t)value;
  return 1;
}

int dlmap_py_parse_int64(PyObject *obj, const char *argument, const char *expected, int64_t *out) {
  const int status = as_int64(obj, argument, out);
  if (status == 0) {
    dlmap_py_type_error(argument, expected, obj);
    return -1;
  }
  return status < 0 ? -1 : 0;
}

/* A (a, b) tuple of integers. 1: parsed; 0: not such a tuple (nothing raised); -1: raised. */
static int as_int_pair(PyObject *obj, const char *argument, int64_t *a, int64_t *b) {
  if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2) return 0;
  int status = as_int64(PyTuple_GET_ITEM(obj, 0), argument, a);
  if (status != 1) return status;
  return as_int64(PyTuple_GET_ITEM(obj, 1), argument, b);
}

int dlmap_py_parse_stream(PyObject *obj, const char *argument, bool *has, int64_t *value) {
  *has = false;
  *value = 0;
  if (obj == Py_None) return 0;
  const int status = as_int64(obj, argument, value);
  if (status == 0) {
    dlmap_py_type_error(argument, "an int or None", obj);
    return -1;
  }
  if (status < 0) return -1;
  *has = true;
  return 0;
}

int dlmap_py_parse_version(PyObject *obj, const char *argument, bool *has, dlmap_version *out) {
  *has = false;
  if (obj == NULL || obj == Py_None) return 0;
  /* The protocol's own spelling first: an exact tuple of two small exact ints (nothing in it can run code while it is
   * read), read inline. Anything else, larger and negative parts included, takes the general reading below. */
  if (dlmap_py_small_pair(obj, &out->major, &out->minor)) {
    *has = true;
    return 0;
  }
  int64_t major = 0, minor = 0;
  /* A list is read from a tuple copy: an item's __index__ could change the list while it is read. */
  PyObject *pair = PyList_Check(obj) ? PyList_AsTuple(obj) : Py_NewRef(obj);
  if (pair == NULL) return -1;
  const int status = as_int_pair(pair, argument, &major, &minor);
  Py_DECREF(pair);
  if (status == 0) {
    dlmap_py_type_error(argument, "a (major, minor) tuple or list of ints, or None", obj);
    return -1;
  }
  if (status < 0) return -1;
  /* export.max_version.negative zero: a negative part reads as 0 and the profile's ranges decide */
  if (dlmap_profile_current()->max_version_negative_zero) {
    major = major < 0 ? 0 : major;
    minor = minor < 0 ? 0 : minor;
  }
  if (major < 0 || minor < 0 || major > UINT32_MAX || minor > UINT32_MAX) {
    return invalid_value(argument, "major and minor must be integers from 0 to 4294967295");
  }
  out->major = (uint32_t)major;
  out->minor = (uint32_t)minor;
  *has = true;
  return 0;
}

int dlmap_py_parse_device(PyObject *obj, const char *argument, bool accept_names, const char *expected, bool *has,
                          int32_t *type, int32_t *id) {
  *has = false;
  if (obj == Py_None && expected == NULL) return 0;
  if (accept_names && PyUnicode_Check(obj)) {
    Py_ssize_t len;
    const char *name = PyUnicode_AsUTF8AndSize(obj, &len);
    if (name == NULL) return -1;
    if (!dlmap_device_type_parse(name, (size_t)len, type)) {
      dlmap_py_raised(dlmap_raise_name_unknown(DLMAP_PY_ERR, "device type", name));
      return -1;
    }
    *id = 0;
    *has = true;
    return 0;
  }
  uint32_t small_type, small_id; /* the common spelling, read inline */
  if (dlmap_py_small_pair(obj, &small_type, &small_id)) {
    *type = (int32_t)small_type;
    *id = (int32_t)small_id;
    *has = true;
    return 0;
  }
  int64_t t = 0, i = 0;
  const int status = as_int_pair(obj, argument, &t, &i);
  if (status == 0) {
    if (expected == NULL) {
      expected = accept_names ? "None, a device name or a (device_type, device_id) tuple of ints"
                              : "a (device_type, device_id) tuple of ints or None";
    }
    pair_error(argument, expected, obj);
    return -1;
  }
  if (status < 0) return -1;
  if (t < INT32_MIN || t > INT32_MAX || i < INT32_MIN || i > INT32_MAX) {
    return invalid_value(argument, "device_type and device_id must fit in 32-bit integers");
  }
  *type = (int32_t)t;
  *id = (int32_t)i;
  *has = true;
  return 0;
}

/* obj.name as a new reference, or NULL with nothing raised when obj has no such attribute (-1 in *failed when
 * looking it up raised anything else). */
static PyObject *optional_attr(PyObject *obj, const char *name, bool *failed) {
  PyObject *value = PyObject_GetAttrString(obj, name);
  if (value == NULL) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
      PyErr_Clear();
    } else {
      *failed = true;
    }
  }
  return value;
}

/* Whether obj is a boolean scalar of an array library (numpy.bool_, a 0-d NumPy bool array): ndim 0 and a dtype
 * whose kind is 'b', the array protocol's mark of booleans. 1: yes; 0: no (nothing raised); -1: raised. Python ints
 * and strings never are: copy=1 or copy="yes" is a mistake, not a request. */
static int is_bool_scalar(PyObject *obj) {
  if (PyLong_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj)) return 0;
  bool failed = false;
  int result = 0;
  PyObject *ndim = optional_attr(obj, "ndim", &failed);
  PyObject *dtype = ndim != NULL ? optional_attr(obj, "dtype", &failed) : NULL;
  PyObject *kind = dtype != NULL ? optional_attr(dtype, "kind", &failed) : NULL;
  if (kind != NULL && PyUnicode_Check(kind) && PyUnicode_CompareWithASCIIString(kind, "b") == 0 && PyLong_Check(ndim)) {
    const long n = PyLong_AsLong(ndim);
    if (n == -1 && PyErr_Occurred()) failed = true;
    result = n == 0;
  }
  Py_XDECREF(ndim);
  Py_XDECREF(dtype);
  Py_XDECREF(kind);
  return failed ? -1 : result;
}

int dlmap_py_parse_copy(PyObject *obj, const char *argument, dlmap_copy_mode *out) {
  if (obj == Py_None) {
    *out = DLMAP_COPY_IF_NEEDED;
  } else if (obj == Py_True) {
    *out = DLMAP_COPY_ALWAYS;
  } else if (obj == Py_False) {
    *out = DLMAP_COPY_NEVER;
  } else {
    /* What Python callers pass as well: NumPy's own bool (copy=np.bool_(True), often the result of a comparison). */
    const int scalar = is_bool_scalar(obj);
    if (scalar == 0) {
      dlmap_py_type_error(argument, "True, False, None or a boolean scalar (numpy.bool_)", obj);
      return -1;
    }
    const int truth = scalar < 0 ? -1 : PyObject_IsTrue(obj);
    if (truth < 0) return -1;
    *out = truth ? DLMAP_COPY_ALWAYS : DLMAP_COPY_NEVER;
  }
  return 0;
}

int dlmap_py_parse_export_copy(PyObject *obj, dlmap_copy_mode *out) {
  if (!dlmap_profile_current()->copy_argument_truth || obj == Py_None || PyUnicode_Check(obj)) {
    return dlmap_py_parse_copy(obj, "copy", out);
  }
  const int truth = PyObject_IsTrue(obj);
  if (truth < 0) return -1;
  *out = truth ? DLMAP_COPY_ALWAYS : DLMAP_COPY_NEVER;
  return 0;
}

PyObject *dlmap_py_call_with_keywords(PyCFunctionWithKeywords fn, PyObject *self, PyObject *const *args,
                                      Py_ssize_t nargs, PyObject *kwnames) {
  const Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject *tuple = PyTuple_New(nargs);
  PyObject *dict = nkw > 0 ? PyDict_New() : NULL;
  PyObject *result = NULL;
  if (tuple != NULL && (nkw == 0 || dict != NULL)) {
    for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    int ok = 0;
    for (Py_ssize_t i = 0; i < nkw && ok == 0; i++)
      ok = PyDict_SetItem(dict, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]);
    if (ok == 0) result = fn(self, tuple, dict);
  }
  Py_XDECREF(tuple);
  Py_XDECREF(dict);
  return result;
}
