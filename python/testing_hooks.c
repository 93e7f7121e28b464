/* dlmap Python binding — the testing hooks, module functions whose names start with "_": dlmap._stats,
 * dlmap._fail_allocations and dlmap._call_deleter_on_thread. They read and steer the counted allocator and run a
 * deleter where the GIL-taking path is exercised; no public function depends on them. */
#include <pthread.h>

#include "python/binding.h"

static PyObject *stats(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  const dlmap_py_allocation_stats counts = dlmap_py_allocations();
  return Py_BuildValue("{s:L,s:L,s:L,s:n,s:L}", "live_allocations", counts.live, "total_allocations", counts.total,
                       "live_exports", counts.live_exports, "legacy_only_types", dlmap_py_legacy_only_type_count(),
                       "allocations_without_gil", counts.without_gil);
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
  if (call->versioned) {
    dlmap_py_call_deleter((struct DLManagedTensorVersioned *)call->managed);
  } else {
    DLManagedTensor *t = (DLManagedTensor *)call->managed;
    if (t->deleter != NULL) t->deleter(t);
  }
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
    if (PyCapsule_SetName(capsule, DLMAP_PY_CAPSULE_VERSIONED_USED) < 0) return NULL;
  } else if (PyCapsule_IsValid(capsule, DLMAP_PY_CAPSULE_LEGACY)) {
    call.managed = PyCapsule_GetPointer(capsule, DLMAP_PY_CAPSULE_LEGACY);
    if (PyCapsule_SetName(capsule, DLMAP_PY_CAPSULE_LEGACY_USED) < 0) return NULL;
  } else {
    return DLMAP_PY_RAISE(DLMAP_ERR_CAPSULE_CONSUMED, dlmap_arg_str(DLMAP_ARG_EXPECTED, DLMAP_PY_CAPSULE_VERSIONED),
                          dlmap_arg_str(DLMAP_ARG_GOT, PyCapsule_CheckExact(capsule) && PyCapsule_GetName(capsule)
                                                           ? PyCapsule_GetName(capsule)
                                                           : "NULL"));
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

PyMethodDef dlmap_py_testing_hooks[] = {
    {"_stats", stats, METH_NOARGS,
     "_stats()\n--\n\nTesting hook: live and total allocations through dlmap, live exports, how many producer types "
     "from_dlpack remembers as legacy-only, and how many allocations were made by a thread without the GIL."},
    {"_fail_allocations", fail_allocations, METH_O,
     "_fail_allocations(n)\n--\n\nTesting hook: the next n allocations through dlmap fail."},
    {"_call_deleter_on_thread", call_deleter_on_thread, METH_O,
     "_call_deleter_on_thread(capsule)\n--\n\nTesting hook: consumes the capsule and runs its deleter on a new native "
     "thread without the GIL."},
    {NULL, NULL, 0, NULL},
};
