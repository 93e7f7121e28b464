/* dlmap Python binding tests — a tiny extension of its own over a dlmap library that raises dlmap's errors through the
 * public helpers (python/dlmap_python.h) only, as a downstream binding would: raise_test.py checks what it raises
 * against the spec. Its PyInit does not call dlmap_py_errors_init, so the classes resolve on first use. */
#include "python/dlmap_python.h"

/* raise_code(code, /): raises catalogue error `code` (no arguments: its placeholders print as missing). */
static PyObject *raise_code(PyObject *self, PyObject *arg) {
  (void)self;
  const long code = PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred()) return NULL;
  return dlmap_py_raise_code((int32_t)code, NULL, 0);
}

/* exception_type(kind, /): the class dlmap_py_exception_type gives a kind's value (any int). */
static PyObject *exception_type(PyObject *self, PyObject *arg) {
  (void)self;
  const long kind = PyLong_AsLong(arg);
  if (kind == -1 && PyErr_Occurred()) return NULL;
  return Py_NewRef(dlmap_py_exception_type((dlmap_error_kind)kind));
}

/* kind_count(): DLMAP_KIND_COUNT, the value of the unknown-code fallback's kind. */
static PyObject *kind_count(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong((long)DLMAP_KIND_COUNT);
}

/* errors_init(): what dlmap_py_errors_init returns (0: the classes are resolved; it may be called again). */
static PyObject *errors_init(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong((long)dlmap_py_errors_init());
}

static PyMethodDef methods[] = {
    {"raise_code", raise_code, METH_O, NULL},
    {"exception_type", exception_type, METH_O, NULL},
    {"kind_count", kind_count, METH_NOARGS, NULL},
    {"errors_init", errors_init, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "dlmap_raise_ext", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_dlmap_raise_ext(void) { return PyModule_Create(&module_def); }
