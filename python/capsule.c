/* dlmap Python binding — DLPack capsules as the protocol states them ("dltensor" / "dltensor_versioned", renamed
 * "used_…" by the consumer), their destructors, and the release of Python owners from any thread. */
#include <stdatomic.h>
#include <string.h>

#include "python/binding.h"

/* Whether the main interpreter is shutting down (PyGILState_Ensure from a foreign thread is unsafe then). */
static int interpreter_finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/* The thread state attached on this thread (this thread holds its interpreter's GIL), or NULL. Unlike PyGILState_Check
 * and PyGILState_GetThisThreadState, which speak of one thread state per thread (its first on 3.11), this is right
 * inside a sub-interpreter too. */
#if PY_VERSION_HEX < 0x030C0000
_Thread_local PyThreadState *dlmap_py_attached_here;

/* The thread state this thread last exported under (dlmap_py_note_exporter), valid while the epoch it was noted in is
 * the current one. Every noted thread state carries a guard in its dict; the guard dies when the thread state is
 * cleared (always before it is freed) and starts a new epoch, so that a freed thread state whose address another
 * thread's new one reuses is never taken for this thread's. */
static _Thread_local PyThreadState *noted_exporter;
static _Thread_local unsigned long noted_epoch;
static _Atomic unsigned long exporter_epoch = 1;

static const char kExporterGuard[] = "dlmap exporter note";

static void end_exporter_epoch(PyObject *guard) {
  (void)guard;
  atomic_fetch_add(&exporter_epoch, 1);
}

void dlmap_py_note_exporter_slow(PyThreadState *current) {
  if (current == noted_exporter && noted_epoch == atomic_load(&exporter_epoch)) return;
  PyObject *dict = PyThreadState_GetDict(); /* the attached thread state's, never NULL while one is attached */
  if (dict == NULL) return;
  /* The epoch is read before the guard exists: a guard dying meanwhile ends it, and the note is then simply stale. */
  unsigned long epoch = atomic_load(&exporter_epoch);
  PyObject *guard = PyDict_GetItemString(dict, kExporterGuard); /* borrowed; already there when noted before */
  if (guard == NULL) {
    guard = PyCapsule_New((void *)kExporterGuard, kExporterGuard, end_exporter_epoch);
    int failed = guard == NULL || PyDict_SetItemString(dict, kExporterGuard, guard) < 0;
    Py_XDECREF(guard);
    if (failed) { /* no memory: no note, and a deleter run holding this GIL may then wait for it, as before */
      PyErr_Clear();
      return;
    }
  }
  noted_exporter = current;
  noted_epoch = epoch;
}
#endif

static PyThreadState *attached_thread_state(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked(); /* thread-local */
#elif PY_VERSION_HEX >= 0x030C0000
  return _PyThreadState_UncheckedGet(); /* thread-local */
#else
  /* 3.11: the runtime's current thread state is the one of whichever thread holds the GIL (one GIL for all
   * interpreters). It is this thread's when it is the thread's first (PyGILState's) or the one dlmap's own code noted
   * while holding the GIL (dlmap_py_deleters_begin), or the one it last exported under while its epoch lasts
   * (dlmap_py_note_exporter); each stays current while this thread looks, as only this thread can detach it. Any
   * other belongs to a thread that may free it at any moment: it is compared, never read. */
  PyThreadState *current = _PyThreadState_UncheckedGet();
  if (current == NULL) return NULL;
  /* PyGILState's first: it answers the common case (the thread's first thread state, whoever deletes the tensor)
   * with one pthread_getspecific, where the module's own thread-local costs a __tls_get_addr call besides (bench/) */
  if (current == PyGILState_GetThisThreadState() || current == dlmap_py_attached_here) return current;
  return current == noted_exporter && noted_epoch == atomic_load(&exporter_epoch) ? current : NULL;
#endif
}

void dlmap_py_delete_managed(void *managed, bool versioned) {
  PyThreadState *before = dlmap_py_deleters_begin();
  dlmap_managed_tensor_delete(managed, versioned);
  dlmap_py_deleters_end(before);
}

/* Whether an interpreter (by address and id, ids are never reused) still exists. */
static bool interpreter_alive(PyInterpreterState *interp, int64_t id) {
  for (PyInterpreterState *i = PyInterpreterState_Head(); i != NULL; i = PyInterpreterState_Next(i)) {
    if (i == interp) return PyInterpreterState_GetID(i) == id;
  }
  return false;
}

/* Runs fn(arg) from a thread that is not attached to `interp`: attached to another one (its thread state is detached
 * meanwhile, releasing that interpreter's GIL, and attached again after) or to none. The main interpreter is entered
 * through the thread's own PyGILState thread state (as NumPy's deleters do); a sub-interpreter through a thread state
 * made for this call. An interpreter that is finalizing or gone is not touched: fn does not run, and what it would
 * have released leaks (NumPy's rule). Out of line: the common release's frame stays small. */
__attribute__((noinline)) static void run_elsewhere(PyInterpreterState *interp, int64_t interp_id,
                                                    PyThreadState *attached, void (*fn)(void *), void *arg) {
  PyInterpreterState *main_interp = PyInterpreterState_Main();
  if (interp == main_interp ? interpreter_finalizing() : !interpreter_alive(interp, interp_id)) return;
  PyThreadState *saved = attached != NULL ? PyEval_SaveThread() : NULL;
  PyThreadState *own = PyGILState_GetThisThreadState();
  if (interp == main_interp && (own == NULL || PyThreadState_GetInterpreter(own) == main_interp)) {
    PyGILState_STATE state = PyGILState_Ensure();
    fn(arg);
    PyGILState_Release(state);
  } else {
    PyThreadState *borrowed = PyThreadState_New(interp);
    if (borrowed != NULL) { /* without memory for a thread state: leak rather than use another interpreter's */
      PyEval_RestoreThread(borrowed);
      fn(arg);
      PyThreadState_Clear(borrowed);
      PyThreadState_DeleteCurrent();
    }
  }
  if (saved != NULL) PyEval_RestoreThread(saved);
}

void dlmap_py_run_in_interpreter(PyInterpreterState *interp, int64_t interp_id, void (*fn)(void *), void *arg) {
  PyThreadState *attached = attached_thread_state(); /* NULL after Py_Finalize: no thread state is attached then */
  if (attached != NULL && PyThreadState_GetInterpreter(attached) == interp) {
    fn(arg);
    return;
  }
  if (!Py_IsInitialized()) return; /* after Py_Finalize: leak rather than crash */
  run_elsewhere(interp, interp_id, attached, fn, arg);
}

static void drop_reference(void *object) { Py_DECREF((PyObject *)object); }

void dlmap_py_release_owner(void *owner) {
  dlmap_py_count_export(-1);
  if (owner == NULL) return;
  dlmap_py_array *array = (dlmap_py_array *)owner;
  PyThreadState *attached = attached_thread_state(); /* NULL after Py_Finalize: no thread state is attached then */
  if (attached != NULL && PyThreadState_GetInterpreter(attached) == array->interp) {
    /* the common case (a capsule dropped in Python, in any interpreter): the GIL is this thread's, so the interpreter
     * still runs its code (even while finalizing, as for every other object it drops then) */
    Py_DECREF(owner);
    return;
  }
  /* NumPy's rule: after Py_Finalize, or from another thread while it runs, leak rather than crash. */
  if (!Py_IsInitialized()) return;
  run_elsewhere(array->interp, array->interp_id, attached, drop_reference, array);
}

/* The tensor of a capsule not renamed used_…: deleted, or, renamed to something else (nobody can know who owns it),
 * reported as unraisable, never with the dying capsule as the context object (the unraisable hook would take a
 * reference to it and destroy it a second time). */
static void release_capsule_tensor(PyObject *capsule, const char *name, bool versioned) {
  void *managed = PyCapsule_GetPointer(capsule, name);
  if (managed == NULL) {
    PyObject *context = PyUnicode_FromString("the destructor of a dlmap DLPack capsule");
    PyErr_WriteUnraisable(context);
    Py_XDECREF(context);
  } else {
    dlmap_py_delete_managed(managed, versioned);
  }
}

/* The destructor of an unconsumed capsule calls the deleter; a consumed one (renamed used_…) belongs to the
 * consumer. Any exception pending when the capsule dies (it may die during unwinding) is preserved. */
static inline __attribute__((always_inline)) void destroy_capsule(PyObject *capsule, const char *name,
                                                                   const char *used_name, bool versioned) {
  /* A capsule still carrying the very name string it was made with is unconsumed: no string compare needed. Renamed,
   * it is consumed when its name is the used one (the capsule is valid: it is being destroyed, its pointer was set). */
  const char *current = PyCapsule_GetName(capsule);
  if (current != name && current != NULL && strcmp(current, used_name) == 0) return;
  if (!PyErr_Occurred()) { /* the common case: nothing to preserve (and nothing the deleter may raise is kept) */
    release_capsule_tensor(capsule, name, versioned);
    if (PyErr_Occurred()) PyErr_Clear();
    return;
  }
#if PY_VERSION_HEX >= 0x030C0000
  PyObject *pending = PyErr_GetRaisedException();
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  release_capsule_tensor(capsule, name, versioned);
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
    if (capsule == NULL) dlmap_py_delete_managed(exported->versioned, true);
  } else {
    capsule = PyCapsule_New(exported->legacy, DLMAP_PY_CAPSULE_LEGACY, destroy_legacy_capsule);
    if (capsule == NULL) dlmap_py_delete_managed(exported->legacy, false);
  }
  return capsule;
}
