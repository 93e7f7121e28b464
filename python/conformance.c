/* dlmap Python binding — what the conformance checker (python/check, `dlmap.check`) asks of the library: the producer
 * rules' table (dlmap._check_rules) and the spec's judgement of a tensor's values and version (dlmap._judge_tensor,
 * dlmap._judge_version, dlmap._judge_device_type), so that Python and C (dlmap_check_export) judge a tensor once,
 * by the same code (src/check_tensor.c). The module the checker ships is always this one, built from the spec the
 * checker reads. */
#include <string.h>

#include "dlmap/check.h"
#include "python/binding.h"

/* dlmap._check_rules(): {id: text} of the producer rules, from the library's table, for the Python checker. */
static PyObject *check_rules(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  PyObject *rules = PyDict_New();
  const dlmap_check_rule_info *rule;
  for (size_t i = 0; rules != NULL && (rule = dlmap_check_rule_at(i)) != NULL; i++) {
    PyObject *text = PyUnicode_FromString(rule->text);
    if (text == NULL || PyDict_SetItemString(rules, rule->id, text) < 0) {
      Py_DECREF(rules); /* not Py_CLEAR: rules is not NULL here, the loop runs only while it is not */
      rules = NULL;
    }
    Py_XDECREF(text);
  }
  return rules;
}

/* A version argument: None (*has false) or a (major, minor) tuple of ints. 0, or -1 with an exception. */
static int parse_version(PyObject *arg, dlmap_version *out, bool *has) {
  unsigned int major, minor;
  *has = arg != Py_None;
  if (!*has) return 0;
  if (!PyTuple_Check(arg) || !PyArg_ParseTuple(arg, "II", &major, &minor)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "version must be None or (major, minor)");
    return -1;
  }
  out->major = major;
  out->minor = minor;
  return 0;
}

/* dlmap._judge_tensor(device_type, (code, bits, lanes), ndim, strides_null, flags, version): dlmap_check_tensor's
 * problems, [(rule, detail), …]. */
static PyObject *judge_tensor(PyObject *module, PyObject *args) {
  int device_type, code, bits, lanes, ndim, strides_null;
  unsigned long long flags;
  PyObject *version_arg;
  dlmap_version version;
  bool has_version;
  (void)module;
  if (!PyArg_ParseTuple(args, "i(iii)ipKO", &device_type, &code, &bits, &lanes, &ndim, &strides_null, &flags,
                        &version_arg) ||
      parse_version(version_arg, &version, &has_version) < 0) {
    return NULL;
  }
  if (code < 0 || code > UINT8_MAX || bits < 0 || bits > UINT8_MAX || lanes < 0 || lanes > UINT16_MAX) {
    return PyErr_Format(PyExc_ValueError, "dtype (%d, %d, %d) does not fit DLDataType", code, bits, lanes);
  }
  /* Only the fields dlmap_check_tensor reads: strides is a non-NULL placeholder unless strides_null. */
  int64_t placeholder = 0;
  DLTensor tensor;
  memset(&tensor, 0, sizeof tensor);
  tensor.device.device_type = (DLDeviceType)device_type;
  tensor.dtype.code = (uint8_t)code;
  tensor.dtype.bits = (uint8_t)bits;
  tensor.dtype.lanes = (uint16_t)lanes;
  tensor.ndim = ndim;
  tensor.strides = strides_null ? NULL : &placeholder;
  dlmap_check_problem problems[DLMAP_CHECK_TENSOR_PROBLEMS_MAX];
  size_t found = dlmap_check_tensor(&tensor, (uint64_t)flags, has_version ? &version : NULL, problems,
                                    DLMAP_CHECK_TENSOR_PROBLEMS_MAX);
  PyObject *list = PyList_New((Py_ssize_t)found);
  for (size_t i = 0; list != NULL && i < found; i++) {
    PyObject *item = Py_BuildValue("(ss)", problems[i].rule, problems[i].detail);
    if (item == NULL) {
      Py_DECREF(list); /* not Py_CLEAR: list is not NULL here, the loop runs only while it is not */
      list = NULL;
    } else {
      PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
  }
  return list;
}

/* dlmap._judge_device_type(device_type, version=None): dlmap_check_device_type's problem text, or None. */
static PyObject *judge_device_type(PyObject *module, PyObject *args) {
  long long device_type;
  PyObject *version_arg = Py_None;
  dlmap_version version;
  bool has_version;
  dlmap_check_problem problem;
  (void)module;
  if (!PyArg_ParseTuple(args, "L|O", &device_type, &version_arg) ||
      parse_version(version_arg, &version, &has_version) < 0) {
    return NULL;
  }
  if (dlmap_check_device_type(device_type, has_version ? &version : NULL, &problem)) Py_RETURN_NONE;
  return PyUnicode_FromString(problem.detail);
}

/* dlmap._judge_version((major, minor)): dlmap_check_version's problem text for a versioned tensor, or None. */
static PyObject *judge_version(PyObject *module, PyObject *arg) {
  dlmap_version version;
  bool has_version;
  dlmap_check_problem problem;
  (void)module;
  if (parse_version(arg, &version, &has_version) < 0) return NULL;
  if (!has_version) return PyErr_Format(PyExc_TypeError, "version must be (major, minor)");
  if (dlmap_check_version(version, &problem)) Py_RETURN_NONE;
  return PyUnicode_FromString(problem.detail);
}

PyMethodDef dlmap_py_conformance_functions[] = {
    {"_check_rules", check_rules, METH_NOARGS,
     "_check_rules()\n--\n\nThe conformance checker's producer rules, {id: text}, from the library's table "
     "(dlmap.check reads them from here)."},
    {"_judge_tensor", judge_tensor, METH_VARARGS,
     "_judge_tensor(device_type, dtype, ndim, strides_null, flags, version)\n--\n\n"
     "The spec's judgement of an exported tensor's values (dlmap_check_tensor, as dlmap_check_export applies it): "
     "[(rule, detail), ...] for its flags, strides, dtype (code, bits, lanes) and device type, each in `version` "
     "((major, minor), or None: any version the spec lists). For dlmap.check."},
    {"_judge_version", judge_version, METH_O,
     "_judge_version(version)\n--\n\n"
     "Why a versioned tensor's stamped (major, minor) is outside the spec's versioned range, or None "
     "(dlmap_check_version). For dlmap.check."},
    {"_judge_device_type", judge_device_type, METH_VARARGS,
     "_judge_device_type(device_type, version=None)\n--\n\n"
     "Why device_type is not a spec device type (expressible in version), or None (dlmap_check_device_type). For "
     "dlmap.check."},
    {NULL, NULL, 0, NULL},
};
