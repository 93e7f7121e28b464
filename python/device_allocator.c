/* dlmap Python binding — the framework's device allocator (issue 64): dlmap.set_device_allocator(allocate, release)
 * installs two callables that then serve every device buffer the module's exchanges make (device copies, the compact
 * buffer of a strided device-to-host copy), so that the memory comes from the framework's pool, e.g.
 *
 *   dlmap.set_device_allocator(
 *       lambda nbytes, device, stream: torch.cuda.caching_allocator_alloc(nbytes, device[1], stream),
 *       lambda pointer, stream: torch.cuda.caching_allocator_delete(pointer))
 *
 * allocate(nbytes, (device_type, device_id), stream) returns the address as an int (0: out of memory, which the
 * exchange raises as the catalogue's out_of_memory, chained to whatever the callable raised); release(pointer, stream)
 * gives one back. stream is the runtime's handle as an int, -1 where none is named. Each buffer keeps the pair it came
 * from: installing another pair later, or none, sends it back to its own release. */
#include <stdatomic.h>

#include "python/binding.h"

/* An installed pair: the callables, the interpreter they belong to, and a count of who holds it (the module while it
 * is installed, an exchange in flight, each buffer it allocated). The count is atomic: buffers go back from any
 * thread. */
typedef struct installation {
  atomic_long holders;
  PyObject *allocate, *release;
  PyInterpreterState *interp;
  int64_t interp_id;
} installation;

/* The installed pair (NULL: the runtime's allocator serves), read and written with the GIL held. */
static installation *g_installed;

static void free_installation(void *arg) {
  installation *inst = (installation *)arg;
  Py_DECREF(inst->allocate);
  Py_DECREF(inst->release);
  PyMem_Free(inst); /* run with the GIL of the interpreter that allocated it (dlmap_py_run_in_interpreter) */
}

static void hold(installation *inst) { atomic_fetch_add(&inst->holders, 1); }

/* Drops one hold from any thread; the last one frees the pair in its interpreter (leaked if that is gone). */
static void unhold(installation *inst) {
  if (atomic_fetch_sub(&inst->holders, 1) == 1) {
    dlmap_py_run_in_interpreter(inst->interp, inst->interp_id, free_installation, inst);
  }
}

/* What allocate raised (or the TypeError for what it returned), for the exchange to chain to its out_of_memory: this
 * thread's last failed allocation; taken by dlmap_py_device_allocator_done. */
static _Thread_local PyObject *t_failure;

static PyObject *stream_int(void *stream) {
  return PyLong_FromLongLong(stream == DLMAP_NO_STREAM ? -1 : (long long)(intptr_t)stream);
}

typedef struct allocate_call {
  installation *inst;
  size_t bytes;
  int32_t device_type, device_id;
  void *stream;
  void *result;
} allocate_call;

static void call_allocate(void *arg) {
  allocate_call *c = (allocate_call *)arg;
  PyObject *stream = stream_int(c->stream);
  PyObject *got = stream == NULL ? NULL
                                 : PyObject_CallFunction(c->inst->allocate, "n(ii)O", (Py_ssize_t)c->bytes,
                                                         (int)c->device_type, (int)c->device_id, stream);
  Py_XDECREF(stream);
  if (got != NULL && !PyLong_Check(got)) {
    PyErr_Format(PyExc_TypeError, "the device allocator's allocate must return the address as an int, not %.100s",
                 Py_TYPE(got)->tp_name);
  } else if (got != NULL) {
    /* 0: out of memory; a negative or too large int raises OverflowError */
    const unsigned long long address = PyLong_AsUnsignedLongLong(got);
    if (address > UINTPTR_MAX) {
      PyErr_SetString(PyExc_OverflowError, "the device allocator's address does not fit a pointer");
    } else if (!PyErr_Occurred()) {
      c->result = (void *)(uintptr_t)address;
    }
  }
  Py_XDECREF(got);
  if (PyErr_Occurred()) {
    c->result = NULL;
    Py_CLEAR(t_failure);
#if PY_VERSION_HEX >= 0x030C0000
    t_failure = PyErr_GetRaisedException();
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != NULL && value != NULL) PyException_SetTraceback(value, traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    t_failure = value;
#endif
  }
}

static void *py_allocate(void *ctx, size_t bytes, int32_t device_type, int32_t device_id, void *stream) {
  allocate_call c = {(installation *)ctx, bytes, device_type, device_id, stream, NULL};
  dlmap_py_run_in_interpreter(c.inst->interp, c.inst->interp_id, call_allocate, &c);
  if (c.result != NULL) hold(c.inst); /* the buffer's: its release goes to this pair */
  return c.result;
}

typedef struct release_call {
  installation *inst;
  void *pointer, *stream;
} release_call;

/* release(pointer, stream) with the GIL held: an exception pending meanwhile (a buffer may go back while one unwinds)
 * is kept; one the callable raises has no one to go to but the unraisable hook. */
static void call_release(void *arg) {
  release_call *c = (release_call *)arg;
#if PY_VERSION_HEX >= 0x030C0000
  PyObject *pending = PyErr_GetRaisedException();
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  PyObject *stream = stream_int(c->stream);
  PyObject *pointer = PyLong_FromVoidPtr(c->pointer);
  PyObject *got = stream != NULL && pointer != NULL
                      ? PyObject_CallFunctionObjArgs(c->inst->release, pointer, stream, NULL)
                      : NULL;
  if (got == NULL) PyErr_WriteUnraisable(c->inst->release);
  Py_XDECREF(got);
  Py_XDECREF(pointer);
  Py_XDECREF(stream);
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(pending);
#else
  PyErr_Restore(type, value, traceback);
#endif
}

static void py_release(void *ctx, void *pointer, size_t bytes, int32_t device_type, int32_t device_id, void *stream) {
  (void)bytes;
  (void)device_type;
  (void)device_id;
  release_call c = {(installation *)ctx, pointer, stream};
  dlmap_py_run_in_interpreter(c.inst->interp, c.inst->interp_id, call_release, &c);
  unhold(c.inst);
}

const dlmap_device_allocator *dlmap_py_device_allocator_take(dlmap_device_allocator *storage) {
  if (g_installed == NULL) return NULL;
  hold(g_installed);
  *storage = (dlmap_device_allocator){py_allocate, py_release, g_installed};
  return storage;
}

void dlmap_py_device_allocator_done(const dlmap_device_allocator *taken) {
  if (taken == NULL) return;
  PyObject *failure = t_failure;
  t_failure = NULL;
  if (failure != NULL && PyErr_Occurred()) { /* the exchange's out_of_memory, because of what allocate raised */
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *raised = PyErr_GetRaisedException();
    PyException_SetCause(raised, failure); /* steals failure */
    PyErr_SetRaisedException(raised);
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value != NULL) {
      PyException_SetCause(value, failure); /* steals failure */
    } else {
      Py_DECREF(failure);
    }
    PyErr_Restore(type, value, traceback);
#endif
  } else {
    Py_XDECREF(failure);
  }
  unhold((installation *)taken->ctx);
}

PyObject *dlmap_py_set_device_allocator(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *allocate, *release = Py_None;
  if (!PyArg_ParseTuple(args, "O|O:set_device_allocator", &allocate, &release)) return NULL;
  installation *inst = NULL;
  if (allocate != Py_None || release != Py_None) {
    if (!PyCallable_Check(allocate) || !PyCallable_Check(release)) {
      return dlmap_py_raised(dlmap_raise_invalid_argument(
          DLMAP_PY_ERR, "set_device_allocator",
          "takes two callables, allocate(nbytes, device, stream) -> int and release(pointer, stream), or None"));
    }
    inst = PyMem_Malloc(sizeof *inst);
    if (inst == NULL) return PyErr_NoMemory();
    atomic_init(&inst->holders, 1); /* the module's, while installed */
    inst->allocate = Py_NewRef(allocate);
    inst->release = Py_NewRef(release);
    inst->interp = PyInterpreterState_Get();
    inst->interp_id = PyInterpreterState_GetID(inst->interp);
  }
  installation *before = g_installed;
  g_installed = inst;
  if (before != NULL) unhold(before); /* its buffers still go back to it */
  Py_RETURN_NONE;
}
