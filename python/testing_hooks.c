/* dlmap Python binding — the testing hooks, module functions whose names start with "_": dlmap._stats,
 * dlmap._watch_gil, dlmap._fail_allocations, dlmap._call_deleter_on_thread, dlmap._call_deleter_at_exit,
 * dlmap._guarded_capsule_destructor and dlmap._counts_references. They read and steer the counted allocator, run a deleter where the GIL-taking path is
 * exercised, give producers written with ctypes a capsule destructor that keeps a pending exception, and say whether
 * this module's reference counting shows in sys.gettotalrefcount; no public function depends on them. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/binding.h"

static PyObject *stats(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  const dlmap_py_allocation_stats counts = dlmap_py_allocations();
  return Py_BuildValue("{s:L,s:L,s:L,s:n,s:L}", "live_allocations", counts.live, "total_allocations", counts.total,
                       "live_exports", counts.live_exports, "legacy_only_types", dlmap_py_legacy_only_type_count(),
                       "allocations_without_gil", counts.without_gil);
}

static PyObject *watch_gil(PyObject *module, PyObject *arg) {
  (void)module;
  const int watch = PyObject_IsTrue(arg);
  if (watch < 0) return NULL;
  dlmap_py_watch_gil(watch != 0);
  Py_RETURN_NONE;
}

static PyObject *fail_allocations(PyObject *module, PyObject *arg) {
  (void)module;
  const long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  dlmap_py_fail_next_allocations(n);
  Py_RETURN_NONE;
}

typedef struct deleter_call {
  void *managed;
  bool versioned;
} deleter_call;

static void *run_deleter(void *arg) {
  deleter_call *call = (deleter_call *)arg;
  dlmap_managed_tensor_delete(call->managed, call->versioned);
  return NULL;
}

/* Consumes an unconsumed capsule and calls its deleter on a new native thread that has never held the GIL, while
 * this thread waits with the GIL released: the deleter must take the GIL itself. */
static PyObject *call_deleter_on_thread(PyObject *module, PyObject *capsule) {
  (void)module;
  deleter_call call = {NULL, false};
  if (PyCapsule_IsValid(capsule, DLMAP_PY_CAPSULE_VERSIONED)) {
    call.managed = PyCapsule_GetPointer(capsule, DLMAP_PY_CAPSULE_VERSIONED);
    call.versioned = true;
    (void)PyCapsule_SetName(capsule, DLMAP_PY_CAPSULE_VERSIONED_USED); /* a valid capsule: renaming cannot fail */
  } else if (PyCapsule_IsValid(capsule, DLMAP_PY_CAPSULE_LEGACY)) {
    call.managed = PyCapsule_GetPointer(capsule, DLMAP_PY_CAPSULE_LEGACY);
    (void)PyCapsule_SetName(capsule, DLMAP_PY_CAPSULE_LEGACY_USED); /* as above */
  } else {
    const char *got = PyCapsule_CheckExact(capsule) && PyCapsule_GetName(capsule) ? PyCapsule_GetName(capsule) : "NULL";
    return dlmap_py_raised(dlmap_raise_capsule_consumed(DLMAP_PY_ERR, DLMAP_PY_CAPSULE_VERSIONED, got));
  }
  pthread_t thread;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = pthread_create(&thread, NULL, run_deleter, &call);
  if (rc == 0) pthread_join(thread, NULL);
  Py_END_ALLOW_THREADS
  if (rc != 0) {
    run_deleter(&call); /* no thread: still release exactly once */
    return PyErr_Format(PyExc_RuntimeError, "pthread_create failed (%d)", rc);
  }
  Py_RETURN_NONE;
}

/* Deleters to run once the interpreter has finalised (the checker's shutdown row, python/check/deleter_calls.py): a
 * C atexit handler runs after Py_FinalizeEx, when the process exits normally, as a framework's static destructors do.
 * Each returns, or the process dies in it; the line on stderr after each says it returned. */
#define DLMAP_PY_AT_EXIT_MAX 8
static struct {
  void (*deleter)(void *);
  void *managed;
} at_exit[DLMAP_PY_AT_EXIT_MAX];
static int at_exit_count;

static void run_at_exit(void) {
  static const char returned[] = "dlmap: a deleter returned at exit\n";
  for (int i = 0; i < at_exit_count; i++) {
    at_exit[i].deleter(at_exit[i].managed);
    if (write(STDERR_FILENO, returned, sizeof returned - 1) < 0) continue; /* nothing to tell if stderr is gone */
  }
}

static PyObject *call_deleter_at_exit(PyObject *module, PyObject *args) {
  (void)module;
  unsigned long long deleter, managed;
  if (!PyArg_ParseTuple(args, "KK:_call_deleter_at_exit", &deleter, &managed)) return NULL;
  if (deleter == 0 || at_exit_count == DLMAP_PY_AT_EXIT_MAX) {
    return dlmap_py_raised(dlmap_raise_invalid_argument(DLMAP_PY_ERR, "deleter",
                                                        deleter == 0 ? "must not be NULL" : "too many at exit"));
  }
  if (at_exit_count == 0 && atexit(run_at_exit) != 0) return PyErr_Format(PyExc_RuntimeError, "atexit failed");
  const uintptr_t address = (uintptr_t)deleter;
  memcpy(&at_exit[at_exit_count].deleter, &address, sizeof address); /* no object-to-function pointer cast in ISO C */
  at_exit[at_exit_count].managed = (void *)(uintptr_t)managed;
  at_exit_count++;
  Py_RETURN_NONE;
}

/* A capsule destructor for DLPack producers written in Python (the checker's crafted ones): it calls the callable held
 * in the capsule's context (one reference, released here) with the capsule's address. A consumer may drop a capsule
 * with its exception set, which a ctypes callback cannot survive (Python >= 3.12 turns the pending exception into
 * SystemError and loses it), so the exception is kept around the call, as DLPack's reference destructor does. */
static void guarded_capsule_destructor(PyObject *capsule) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject *callback = (PyObject *)PyCapsule_GetContext(capsule);
  if (callback != NULL) {
    PyObject *result = PyObject_CallFunction(callback, "K", (unsigned long long)(uintptr_t)capsule);
    if (result == NULL) PyErr_WriteUnraisable(callback);
    Py_XDECREF(result);
    Py_DECREF(callback);
  }
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
}

static PyObject *guarded_destructor_address(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  const PyCapsule_Destructor destructor = guarded_capsule_destructor;
  uintptr_t address;
  _Static_assert(sizeof address == sizeof destructor, "a function pointer fits a uintptr_t");
  memcpy(&address, &destructor, sizeof address); /* ISO C has no function-to-object pointer cast */
  return PyLong_FromUnsignedLongLong((unsigned long long)address);
}

/* Whether this module was compiled for Python's debug build (Py_REF_DEBUG): only then do its Py_INCREF and Py_DECREF
 * count in sys.gettotalrefcount. A module compiled for the release interpreter imports into the debug one as well, but
 * each object it drops last leaves the total one higher, so the tests' reference-count check needs this to be true. */
static PyObject *counts_references(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
#ifdef Py_REF_DEBUG
  Py_RETURN_TRUE;
#else
  Py_RETURN_FALSE;
#endif
}

PyMethodDef dlmap_py_testing_hooks[] = {
    {"_stats", stats, METH_NOARGS,
     "_stats()\n--\n\nTesting hook: live and total allocations through dlmap, live exports, how many producer types "
     "from_dlpack remembers as legacy-only, and how many allocations were made by a thread without the GIL (while "
     "_watch_gil is on)."},
    {"_watch_gil", watch_gil, METH_O,
     "_watch_gil(flag)\n--\n\nTesting hook: whether allocations made by a thread without the GIL are counted (off by "
     "default: the check costs every export)."},
    {"_fail_allocations", fail_allocations, METH_O,
     "_fail_allocations(n)\n--\n\nTesting hook: the next n allocations through dlmap fail."},
    {"_call_deleter_on_thread", call_deleter_on_thread, METH_O,
     "_call_deleter_on_thread(capsule)\n--\n\nTesting hook: consumes the capsule and runs its deleter on a new native "
     "thread without the GIL."},
    {"_call_deleter_at_exit", call_deleter_at_exit, METH_VARARGS,
     "_call_deleter_at_exit(deleter, managed)\n--\n\nTesting hook: calls the deleter at that address with the managed "
     "tensor at that address once the interpreter has finalised (a C atexit handler), then writes \"dlmap: a deleter "
     "returned at exit\" to stderr."},
    {"_guarded_capsule_destructor", guarded_destructor_address, METH_NOARGS,
     "_guarded_capsule_destructor()\n--\n\nTesting hook: the address of a PyCapsule destructor that calls the callable "
     "in the capsule's context with the capsule's address, keeping any pending exception (for producers written with "
     "ctypes)."},
    {"_counts_references", counts_references, METH_NOARGS,
     "_counts_references()\n--\n\nTesting hook: whether this module was compiled for Python's debug build, so that its "
     "reference counting shows in sys.gettotalrefcount."},
    {NULL, NULL, 0, NULL},
};
