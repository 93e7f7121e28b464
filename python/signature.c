/* dlmap Python binding — a call to __dlpack__ or from_dlpack that binds wrongly, in the profile's words
 * (arguments.signature_errors catalogue: argument_positional_count, argument_keyword_unknown, argument_missing,
 * argument_given_twice). Under builtin nothing is checked here, and CPython's parser words the error. */
#include <stdio.h>

#include "python/binding.h"

/* The catalogue error raised (dlmap_py_raised) as a parse failure. */
static int refused(int32_t code) {
  dlmap_py_raised(code);
  return -1;
}

static Py_ssize_t parameter_index(const dlmap_py_signature *sig, PyObject *key) {
  for (Py_ssize_t i = 0; sig->names[i] != NULL; i++) {
    if (PyUnicode_CompareWithASCIIString(key, sig->names[i]) == 0) return i;
  }
  return -1;
}

int dlmap_py_check_signature(const dlmap_py_signature *sig, Py_ssize_t nargs, PyObject *kwargs) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  if (!profile->signature_errors_catalogue) return 0;
  /* A method worded as a Python class's counts self among its positional arguments (arguments.method_owner). */
  const bool owned = sig->method && profile->method_owner != NULL;
  char function[160];
  snprintf(function, sizeof function, "%s%s%s", owned ? profile->method_owner : "", owned ? "." : "", sig->function);
  if (nargs > sig->positional) {
    return refused(dlmap_raise_argument_positional_count(DLMAP_PY_ERR, function,
                                                                        sig->positional + owned, nargs + owned));
  }
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (kwargs != NULL && PyDict_Next(kwargs, &pos, &key, &value)) {
    if (!PyUnicode_Check(key)) continue; /* CPython's own "keywords must be strings" */
    const Py_ssize_t index = parameter_index(sig, key);
    if (index >= 0 && index >= nargs) continue;
    /* The name as UTF-8, a lone surrogate escaped (a keyword can be any str), held until the message is written. */
    PyObject *utf8 = PyUnicode_AsEncodedString(key, "utf-8", "backslashreplace");
    if (utf8 == NULL) return -1;
    const char *name = PyBytes_AS_STRING(utf8);
    const int32_t code = index < 0 ? dlmap_raise_argument_keyword_unknown(DLMAP_PY_ERR, function, name)
                                   : dlmap_raise_argument_given_twice(DLMAP_PY_ERR, function, name, index);
    Py_DECREF(utf8);
    return refused(code);
  }
  for (Py_ssize_t i = nargs; i < sig->required; i++) {
    PyObject *given = NULL;
    PyObject *wanted = kwargs != NULL ? PyUnicode_FromString(sig->names[i]) : NULL;
    if (kwargs != NULL && wanted == NULL) return -1;
    given = wanted != NULL ? PyDict_GetItemWithError(kwargs, wanted) : NULL;
    Py_XDECREF(wanted);
    if (given == NULL && PyErr_Occurred()) return -1;
    if (given == NULL) {
      return refused(dlmap_raise_argument_missing(DLMAP_PY_ERR, function, sig->names[i], i));
    }
  }
  return 0;
}
