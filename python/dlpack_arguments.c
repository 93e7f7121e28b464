/* dlmap Python binding — __dlpack__'s max_version, dl_device and read_only as the profile's `arguments:` reads them
 * (codegen/profile_settings.py's arguments.* rows). The default readings are errors.c's parsers; the
 * others reproduce a peer's own reading, whose Python exceptions (an item's __index__, a subscript, a comparison)
 * propagate as that peer lets them. */
#include "python/binding.h"

/* A major read alone: a negative one is 0 under export.max_version.negative zero (else invalid_argument, as a pair's),
 * and one past uint32 is the newest there is (only the ranges' majors are compared with it). */
static int major_only(long long major, dlmap_version *out) {
  if (major < 0 && !dlmap_profile_current()->max_version_negative_zero) {
    dlmap_py_raised(dlmap_raise_invalid_argument(DLMAP_PY_ERR, "max_version",
                                                 "major and minor must be integers from 0 to 4294967295"));
    return -1;
  }
  out->major = major < 0 ? 0u : major > (long long)UINT32_MAX ? UINT32_MAX : (uint32_t)major;
  out->minor = 0;
  return 0;
}

/* subscript_major: max_version[0] compared by Python's < with each range's upper bound's major, in ascending order;
 * the version passed on is the start of the first range it is below (the generator keeps every bound's minor 0). */
static int subscript_major(PyObject *obj, dlmap_version *out) {
  PyObject *zero = PyLong_FromLong(0); /* one of CPython's cached small ints (-5 to 256): never NULL */
  PyObject *major = PyObject_GetItem(obj, zero);
  Py_DECREF(zero);
  if (major == NULL) return -1;
  dlmap_version from = {0, 0}, until;
  int status = 0;
  for (size_t i = 0; status == 0 && dlmap_profile_range_until_at(i, &until); i++) {
    PyObject *bound = PyLong_FromUnsignedLong(until.major);
    const int below = bound != NULL ? PyObject_RichCompareBool(major, bound, Py_LT) : -1;
    Py_XDECREF(bound);
    if (below != 0) status = below < 0 ? -1 : 1;
    if (below == 0) from = until;
  }
  Py_DECREF(major);
  if (status < 0) return -1;
  *out = from;
  return 0;
}

/* obj is never None: its one caller (array.c export_with) reads an absent max_version (None) itself. */
int dlmap_py_parse_export_max_version(PyObject *obj, bool *has, dlmap_version *out) {
  const dlmap_max_version_reading reading = dlmap_profile_current()->max_version_reading;
  if (reading == DLMAP_MAX_VERSION_PAIR) {
    return dlmap_py_parse_version(obj, "max_version", has, out);
  }
  *has = false;
  if (reading == DLMAP_MAX_VERSION_SUBSCRIPT_MAJOR) {
    if (subscript_major(obj, out) < 0) return -1;
    *has = true;
    return 0;
  }
  if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2) { /* tuple_major */
    dlmap_py_type_error("max_version", "a (major, minor) tuple or None", obj);
    return -1;
  }
  const long major = PyLong_AsLong(PyTuple_GET_ITEM(obj, 0)); /* a tuple's items cannot change while it is read */
  if (major == -1 && PyErr_Occurred()) return -1;
  if (major_only(major, out) < 0) return -1;
  *has = true;
  return 0;
}

int dlmap_py_parse_export_dl_device(PyObject *obj, bool *has, int32_t *type, int32_t *id) {
  if (!dlmap_profile_current()->dl_device_c_ints || !PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2) {
    return dlmap_py_parse_device(obj, "dl_device", false, NULL, has, type, id);
  }
  int t = 0, i = 0;
  *has = false;
  if (!PyArg_ParseTuple(obj, "ii", &t, &i)) return -1; /* Python's own texts for an item that is no C int */
  *type = t;
  *id = i;
  *has = true;
  return 0;
}

/* obj is never NULL: its one caller (array.c export_with) passes None for an absent read_only. */
int dlmap_py_parse_export_read_only(PyObject *obj, bool *read_only) {
  *read_only = false;
  if (obj == Py_None) return 0;
  const int truth = PyObject_IsTrue(obj);
  if (truth < 0) return -1;
  *read_only = truth != 0;
  return 0;
}
