/* dlmap Python binding — DLPack capsules as the protocol states them ("dltensor" / "dltensor_versioned", renamed
 * "used_…" by the consumer), their destructors, and the release of Python owners from any thread. */
#include "python/binding.h"

/* Whether the interpreter is shutting down (PyGILState_Ensure from a foreign thread is unsafe then). */
static int interpreter_finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/* Whether this thread holds the GIL: its own thread state is the one running. Unlike PyGILState_Check, never true
 * merely because the check is disabled (which CPython does once a subinterpreter exists). */
static bool thread_holds_gil(void) {
  PyThreadState *mine = PyGILState_GetThisThreadState();
#if PY_VERSION_HEX >= 0x030D0000
  return mine != NULL && mine == PyThreadState_GetUnchecked();
#else
  return mine != NULL && mine == _PyThreadState_UncheckedGet();
#endif
}

void dlmap_py_release_owner(void *owner) {
  dlmap_py_count_export(-1);
  /* NumPy's rule: after Py_Finalize, or from another thread while it runs, leak rather than crash. */
  if (owner == NULL || !Py_IsInitialized()) return;
  if (thread_holds_gil()) { /* the common case (a capsule dropped in Python): no GIL state to save and restore */
    Py_DECREF((PyObject *)owner);
    return;
  }
  if (!PyGILState_Check() && interpreter_finalizing()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF((PyObject *)owner);
  PyGILState_Release(state);
}

/* The destructor of an unconsumed capsule calls the deleter; a consumed one (renamed used_…) belongs to the
 * consumer. Any exception pending when the capsule dies (it may die during unwinding) is preserved. */
static void destroy_capsule(PyObject *capsule, const char *name, const char *used_name, bool versioned) {
  /* A capsule still carrying the very name string it was made with is unconsumed: no string compare needed. */
  const char *current = PyCapsule_GetName(capsule);
  if (current != name && PyCapsule_IsValid(capsule, used_name)) return;
#if PY_VERSION_HEX >= 0x030C0000
  PyObject *pending = PyErr_GetRaisedException();
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  void *managed = PyCapsule_GetPointer(capsule, name);
  if (managed == NULL) {
    /* Renamed to something else: nobody can know who owns it. Report it, but never with the dying capsule as the
     * context object: the unraisable hook would take a reference to it and destroy it a second time. */
    PyObject *context = PyUnicode_FromString("the destructor of a dlmap DLPack capsule");
    PyErr_WriteUnraisable(context);
    Py_XDECREF(context);
  } else if (versioned) {
    struct DLManagedTensorVersioned *tensor = (struct DLManagedTensorVersioned *)managed;
    if (tensor->deleter != NULL) tensor->deleter(tensor);
  } else {
    DLManagedTensor *tensor = (DLManagedTensor *)managed;
    if (tensor->deleter != NULL) tensor->deleter(tensor);
  }
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(pending);
#else
  PyErr_Restore(type, value, traceback);
#endif
}

static void destroy_legacy_capsule(PyObject *capsule) {
  destroy_capsule(capsule, DLMAP_PY_CAPSULE_LEGACY, DLMAP_PY_CAPSULE_LEGACY_USED, false);
}

static void destroy_versioned_capsule(PyObject *capsule) {
  destroy_capsule(capsule, DLMAP_PY_CAPSULE_VERSIONED, DLMAP_PY_CAPSULE_VERSIONED_USED, true);
}

PyObject *dlmap_py_capsule_from_export(const dlmap_exported *exported) {
  PyObject *capsule;
  if (exported->structure == DLMAP_STRUCT_VERSIONED) {
    capsule = PyCapsule_New(exported->versioned, DLMAP_PY_CAPSULE_VERSIONED, destroy_versioned_capsule);
    if (capsule == NULL) exported->versioned->deleter(exported->versioned);
  } else {
    capsule = PyCapsule_New(exported->legacy, DLMAP_PY_CAPSULE_LEGACY, destroy_legacy_capsule);
    if (capsule == NULL) exported->legacy->deleter(exported->legacy);
  }
  return capsule;
}
