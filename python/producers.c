/* dlmap Python binding — what from_dlpack can know about a producer's __dlpack__ before calling it: whether a
 * Python function's signature can take max_version at all (PyTorch < 2.1, any pre-2023 producer written in Python). */
#include "python/binding.h"

/* Code objects already read, with their answer: a code object is immutable, so its answer never changes. Each entry
 * holds a reference, so that its address cannot be reused by another code object while it is remembered. A few
 * producer types are in use at any time; when the table is full, entries are replaced in turn. */
#define DLMAP_PY_CODE_CACHE 8
static struct {
  PyObject *code;
  bool rejects;
} code_cache[DLMAP_PY_CODE_CACHE];
static unsigned code_cache_next;

/* Whether binding the keyword max_version to this code fails ("got an unexpected keyword argument"): it has no
 * **kwargs and no parameter of that name that a keyword may fill (positional-only ones may not). -1 with an exception
 * when an attribute cannot be read. */
static int code_rejects_max_version(PyObject *code) {
  PyObject *flags = PyObject_GetAttrString(code, "co_flags");
  PyObject *argcount = flags != NULL ? PyObject_GetAttrString(code, "co_argcount") : NULL;
  PyObject *posonly = argcount != NULL ? PyObject_GetAttrString(code, "co_posonlyargcount") : NULL;
  PyObject *kwonly = posonly != NULL ? PyObject_GetAttrString(code, "co_kwonlyargcount") : NULL;
  PyObject *names = kwonly != NULL ? PyObject_GetAttrString(code, "co_varnames") : NULL;
  int result = -1;
  if (names != NULL && PyTuple_Check(names)) {
    const long f = PyLong_AsLong(flags);
    const Py_ssize_t first = PyLong_AsSsize_t(posonly);
    const Py_ssize_t end = PyLong_AsSsize_t(argcount) + PyLong_AsSsize_t(kwonly);
    if (!PyErr_Occurred()) {
      result = (f & CO_VARKEYWORDS) == 0;
      for (Py_ssize_t i = first; i < end && i < PyTuple_GET_SIZE(names) && result == 1; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        if (PyUnicode_Check(name) && PyUnicode_Compare(name, dlmap_py_name.max_version) == 0) result = 0;
      }
    }
  }
  Py_XDECREF(flags);
  Py_XDECREF(argcount);
  Py_XDECREF(posonly);
  Py_XDECREF(kwonly);
  Py_XDECREF(names);
  return result;
}

bool dlmap_py_rejects_max_version(PyObject *method) {
  /* Exact types only: a bound method of a plain Python function is bound by the function's code object alone. */
  if (!PyMethod_Check(method)) return false;
  PyObject *function = PyMethod_GET_FUNCTION(method);
  if (!PyFunction_Check(function)) return false;
  PyObject *code = PyFunction_GET_CODE(function); /* read on every call: __code__ may be reassigned */
  for (unsigned i = 0; i < DLMAP_PY_CODE_CACHE; i++) {
    if (code_cache[i].code == code) return code_cache[i].rejects;
  }
  Py_INCREF(code); /* the code object could otherwise die while its attributes are read */
  const int rejects = code_rejects_max_version(code);
  if (rejects < 0) {
    PyErr_Clear(); /* unreadable: ask the producer as before */
    Py_DECREF(code);
    return false;
  }
  const unsigned slot = code_cache_next++ % DLMAP_PY_CODE_CACHE;
  PyObject *evicted = code_cache[slot].code;
  code_cache[slot].code = code; /* the reference taken above */
  code_cache[slot].rejects = rejects == 1;
  Py_XDECREF(evicted);
  return rejects == 1;
}
