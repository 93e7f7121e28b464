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
 * **kwargs and no parameter of that name that a keyword may fill (positional-only ones may not). The counts and flags
 * are the code object's own C fields; its names come as a new tuple (PyCode_GetVarnames, co_varnames): -1 with an
 * exception when there is no memory for it. */
static int code_rejects_max_version(PyCodeObject *code) {
  PyObject *names = PyCode_GetVarnames(code);
  if (names == NULL) return -1;
  int result = (code->co_flags & CO_VARKEYWORDS) == 0;
  const Py_ssize_t end = (Py_ssize_t)code->co_argcount + code->co_kwonlyargcount;
  for (Py_ssize_t i = code->co_posonlyargcount; i < end && i < PyTuple_GET_SIZE(names) && result == 1; i++) {
    /* str == str never fails; any other item (none: the code constructor admits only str) compares unequal */
    if (PyObject_RichCompareBool(PyTuple_GET_ITEM(names, i), dlmap_py_name.max_version, Py_EQ) > 0) result = 0;
  }
  Py_DECREF(names);
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
  const int rejects = code_rejects_max_version((PyCodeObject *)code);
  if (rejects < 0) {
    PyErr_Clear(); /* no memory for its names: ask the producer as before */
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

/* ---- producer types that refuse max_version ------------------------------------------------------------------------
 * A type whose __dlpack__ refused the keyword (NumPy < 2's ndarray, a C or Cython producer, a subclass of one) gets the
 * plain call directly, without a TypeError raised and caught per call. Remembered only where every instance answers
 * alike: the method is the type's own (not an instance attribute), and the refusal came from the type (an immutable
 * one, whose methods cannot change) or from binding the call's arguments (no Python frame of the producer ran: code
 * that raises it itself may decide per instance). Each entry holds a reference to its type, so that a freed heap
 * type's address cannot name another type while it is remembered; it is valid while the type's version tag is the
 * one seen (assigning any attribute of the type or of a base, __dlpack__ included, changes it), and for
 * DLMAP_PY_LEGACY_REASK calls: then the type is asked versioned again (a C producer may change what it accepts
 * without its type changing), one TypeError per that many calls. A few producer types are in use at any time; when
 * the table is full, entries are replaced in turn. */
#define DLMAP_PY_LEGACY_TYPES 8
#define DLMAP_PY_LEGACY_REASK 1024
static struct {
  PyTypeObject *type;
  unsigned int tag;
  unsigned calls;
} legacy_types[DLMAP_PY_LEGACY_TYPES];
static unsigned legacy_types_next;

/* Whether `method` is what x's type's __dlpack__ makes for x: the type's descriptor itself (self == x), a bound
 * method of the type's function, a C method bound to x from the type's method descriptor, or the type's callable
 * attribute itself where it is no descriptor. The type is held while it is looked up (a lookup can run Python
 * code). */
static bool method_is_the_types(PyObject *x, PyObject *method, PyObject *self) {
  if (self != NULL) return self == x;
  PyTypeObject *type = Py_TYPE(x);
  Py_INCREF(type);
  PyObject *attr = _PyType_Lookup(type, dlmap_py_name.dlpack);
  bool same = false;
  if (attr != NULL && PyMethod_Check(method) && PyMethod_GET_SELF(method) == x) {
    same = PyMethod_GET_FUNCTION(method) == attr;
  } else if (attr != NULL && PyCFunction_Check(method) && PyCFunction_GET_SELF(method) == x &&
             Py_IS_TYPE(attr, &PyMethodDescr_Type)) {
    same = ((PyMethodDescrObject *)attr)->d_method == ((PyCFunctionObject *)method)->m_ml;
  } else if (attr != NULL && method == attr) {
    same = Py_TYPE(attr)->tp_descr_get == NULL; /* a callable that no instance binds: every instance gets it */
  }
  same = same && Py_TYPE(x) == type;
  Py_DECREF(type);
  return same;
}

static int legacy_slot(const PyTypeObject *type) {
  for (int i = 0; i < DLMAP_PY_LEGACY_TYPES; i++) {
    if (legacy_types[i].type == type) return i;
  }
  return -1;
}

/* Empties slot i; the type's reference is dropped last, any pending exception put aside meanwhile (the type's
 * deallocation may run Python code). */
static void legacy_clear(int i) {
  PyTypeObject *type = legacy_types[i].type;
  legacy_types[i].type = NULL;
  PyObject *kind, *value, *traceback;
  PyErr_Fetch(&kind, &value, &traceback);
  Py_XDECREF(type);
  PyErr_Restore(kind, value, traceback);
}

bool dlmap_py_legacy_only(PyObject *x, PyObject *method, PyObject *self) {
  const int i = legacy_slot(Py_TYPE(x));
  if (i < 0) return false;
  const unsigned int tag = dlmap_py_type_version_tag(Py_TYPE(x));
  if (tag == 0 || tag != legacy_types[i].tag || ++legacy_types[i].calls > DLMAP_PY_LEGACY_REASK) {
    legacy_clear(i); /* the type changed, or its time is up: asked versioned again */
    return false;
  }
  return method_is_the_types(x, method, self);
}

void dlmap_py_forget_legacy_only(PyTypeObject *type) {
  const int i = legacy_slot(type);
  if (i >= 0) legacy_clear(i);
}

/* Whether a versioned call's TypeError (value, traceback) is the keyword's refusal that the type itself makes (see
 * above): its text names the keyword as unexpected, and the type is immutable or no Python frame added itself to the
 * traceback. Runs the exception's __str__ (Python code); called with no exception pending, leaves none. */
static bool refusal_is_the_types(PyTypeObject *type, PyObject *value, PyObject *traceback) {
  const bool immutable = (type->tp_flags & Py_TPFLAGS_IMMUTABLETYPE) != 0;
  PyObject *text = value != NULL && (immutable || traceback == NULL) ? PyObject_Str(value) : NULL;
  const char *message = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
  const bool refusal = message != NULL && strstr(message, "unexpected keyword argument 'max_version'") != NULL;
  PyErr_Clear();
  Py_XDECREF(text);
  return refusal;
}

void dlmap_py_remember_legacy_only(PyObject *x, PyObject *method, PyObject *self) {
  PyTypeObject *type = Py_TYPE(x);
  Py_INCREF(type); /* held while Python code runs: x's class may be reassigned meanwhile */
  PyObject *kind, *value, *traceback;
  PyErr_Fetch(&kind, &value, &traceback); /* the TypeError, put aside while its text is read and types looked up */
  const bool remember = refusal_is_the_types(type, value, traceback) && Py_TYPE(x) == type &&
                        method_is_the_types(x, method, self);
  const unsigned int tag = dlmap_py_type_version_tag(type);
  const int found = legacy_slot(type);
  if (remember && tag != 0 && found < 0) {
    const int slot = (int)(legacy_types_next++ % DLMAP_PY_LEGACY_TYPES);
    /* The evicted type's reference goes without running code: a class is in reference cycles (its __mro__ holds
     * it), so only the garbage collector frees one, never this decref; the slot stays empty and this type unlisted. */
    legacy_clear(slot);
    legacy_types[slot].type = (PyTypeObject *)Py_NewRef(type);
    legacy_types[slot].tag = tag;
    legacy_types[slot].calls = 0;
  } else if (!remember && found >= 0) {
    legacy_clear(found);
  }
  Py_DECREF(type);
  PyErr_Restore(kind, value, traceback);
}

Py_ssize_t dlmap_py_legacy_only_type_count(void) {
  Py_ssize_t n = 0;
  for (int i = 0; i < DLMAP_PY_LEGACY_TYPES; i++) n += legacy_types[i].type != NULL;
  return n;
}
