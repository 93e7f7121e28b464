/* dlmap Python binding — catalogue errors raised as Python exceptions: the class from the error's kind (by the name
 * the generated table gives it), the text from the catalogue. Public for any extension over a dlmap library:
 * dlmap_python.h. */
#include <string.h>

#include "python/dlmap_python.h"

/* The builtin exception class of each kind, by the name the catalogue gives it ("BufferError" → BufferError), and at
 * DLMAP_KIND_COUNT the class of the unknown-code fallback; strong references, resolved once by dlmap_py_errors_init.
 * They come from the builtins module itself, not from the calling frame's __builtins__: code run by
 * exec(code, {"__builtins__": {...}}) may have replaced those with impostors (whose constructors run Python code
 * that may even free the class while dlmap raises it). A name that the module does not map to an exception class
 * defined in C (not a heap type, which any class statement makes) gives RuntimeError. */
static PyObject *kind_classes[DLMAP_KIND_COUNT + 1];

int dlmap_py_errors_init(void) {
  if (kind_classes[0] != NULL) return 0;
  PyObject *builtins = PyImport_ImportModuleLevel("builtins", NULL, NULL, NULL, 0); /* sys.modules: no __import__ */
  if (builtins == NULL) return -1;
  for (int kind = 0; kind <= (int)DLMAP_KIND_COUNT; kind++) {
    PyObject *cls = PyObject_GetAttrString(builtins, dlmap_error_kind_name((dlmap_error_kind)kind));
    if (cls == NULL) PyErr_Clear();
    if (cls == NULL || !PyExceptionClass_Check(cls) || (((PyTypeObject *)cls)->tp_flags & Py_TPFLAGS_HEAPTYPE) != 0) {
      Py_XDECREF(cls);
      cls = Py_NewRef(PyExc_RuntimeError);
    }
    kind_classes[kind] = cls;
  }
  Py_DECREF(builtins);
  return 0;
}

PyObject *dlmap_py_exception_type(dlmap_error_kind kind) {
  /* Resolved on first use when the extension's PyInit did not: a failure to resolve leaves RuntimeError. */
  if (kind_classes[0] == NULL && dlmap_py_errors_init() < 0) PyErr_Clear();
  PyObject *cls = kind_classes[(unsigned)kind < (unsigned)DLMAP_KIND_COUNT ? (unsigned)kind : (unsigned)DLMAP_KIND_COUNT];
  return cls != NULL ? cls : PyExc_RuntimeError;
}

PyObject *dlmap_py_raise(const dlmap_error *err) {
  PyObject *cls = dlmap_py_exception_type(err->kind);
  /* A truncated message may end inside a UTF-8 sequence: replace rather than fail. */
  PyObject *message = PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message), "replace");
  if (message == NULL) return NULL;
  PyObject *exc = PyObject_CallOneArg(cls, message);
  Py_DECREF(message);
  if (exc == NULL) return NULL;
  /* The stable id and code let callers tell errors apart without parsing the text. */
  PyObject *id = PyUnicode_FromString(err->id != NULL ? err->id : "unknown");
  PyObject *code = PyLong_FromLong((long)err->code);
  if (id == NULL || code == NULL || PyObject_SetAttrString(exc, "dlmap_id", id) < 0 ||
      PyObject_SetAttrString(exc, "dlmap_code", code) < 0) {
    PyErr_Clear(); /* the exception itself still carries class and message */
  }
  Py_XDECREF(id);
  Py_XDECREF(code);
  PyErr_SetObject(cls, exc);
  Py_DECREF(exc);
  return NULL;
}

int dlmap_py_raise_int(const dlmap_error *err) {
  dlmap_py_raise(err);
  return -1;
}

/* One per thread: a typed raise fills it and dlmap_py_raised raises it in the same expression, with nothing between
 * that could raise another (and threads never share it). */
static _Thread_local dlmap_error error_slot;

dlmap_error *dlmap_py_error_slot(void) { return &error_slot; }

PyObject *dlmap_py_raised(int32_t code) {
  (void)code; /* the slot holds the error whose code this is */
  return dlmap_py_raise(&error_slot);
}

PyObject *dlmap_py_raise_code(int32_t code, const dlmap_arg *args, size_t nargs) {
  dlmap_error err;
  dlmap_error_set(&err, code, args, nargs);
  return dlmap_py_raise(&err);
}
