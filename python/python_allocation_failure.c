/* dlmap Python binding — the testing hook dlmap._call_failing_python_allocation(n, callable, *args, **kwargs): calls
 * callable with Python's own allocator failing its n-th allocation (PyMem_* and PyObject_*, counted from 1), so that
 * the tests reach what the binding does when a C-API call runs out of memory (a tuple, a string, an exception, an
 * object that cannot be made), which dlmap._fail_allocations (dlmap's own counted allocator) cannot. One allocation
 * fails, then Python's allocator works again: what the binding does next (raise MemoryError, clean up) runs as it
 * would. Returns (failed, result, exception): whether the n-th allocation came, and what the call returned or raised. */
#include "python/binding.h"

/* The allocators this hook wraps, as they were when it was called (the debug hooks included where Python has them),
 * and the countdown; all touched with the GIL held, as the MEM and OBJ domains are. */
static PyMemAllocatorEx wrapped_mem, wrapped_obj;
static long long countdown; /* allocations left before the failing one; below 1: none fails */
static bool failed;

static bool fail_this_one(void) {
  if (countdown < 1) return false;
  if (--countdown > 0) return false;
  failed = true;
  return true;
}

static void *failing_malloc(void *ctx, size_t size) {
  const PyMemAllocatorEx *inner = (const PyMemAllocatorEx *)ctx;
  return fail_this_one() ? NULL : inner->malloc(inner->ctx, size);
}

static void *failing_calloc(void *ctx, size_t count, size_t size) {
  const PyMemAllocatorEx *inner = (const PyMemAllocatorEx *)ctx;
  return fail_this_one() ? NULL : inner->calloc(inner->ctx, count, size);
}

static void *failing_realloc(void *ctx, void *block, size_t size) {
  const PyMemAllocatorEx *inner = (const PyMemAllocatorEx *)ctx;
  return fail_this_one() ? NULL : inner->realloc(inner->ctx, block, size);
}

static void passing_free(void *ctx, void *block) {
  const PyMemAllocatorEx *inner = (const PyMemAllocatorEx *)ctx;
  inner->free(inner->ctx, block);
}

/* The exception being raised, normalised, taken out of the error indicator (with its traceback). */
static PyObject *take_raised(void) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (traceback != NULL && value != NULL) PyException_SetTraceback(value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return value;
#endif
}

static PyObject *call_failing_python_allocation(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  const Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs < 2) {
    PyErr_SetString(PyExc_TypeError, "_call_failing_python_allocation(n, callable, *args, **kwargs)");
    return NULL;
  }
  const long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(args, 0));
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (n < 1) {
    PyErr_SetString(PyExc_ValueError, "_call_failing_python_allocation: n counts from 1");
    return NULL;
  }
  if (countdown > 0) {
    PyErr_SetString(PyExc_RuntimeError, "_call_failing_python_allocation: already failing an allocation");
    return NULL;
  }
  PyObject *callable = PyTuple_GET_ITEM(args, 1);
  PyObject *call_args = PyTuple_GetSlice(args, 2, nargs);
  if (call_args == NULL) return NULL;

  PyMem_GetAllocator(PYMEM_DOMAIN_MEM, &wrapped_mem);
  PyMem_GetAllocator(PYMEM_DOMAIN_OBJ, &wrapped_obj);
  PyMemAllocatorEx mem = {&wrapped_mem, failing_malloc, failing_calloc, failing_realloc, passing_free};
  PyMemAllocatorEx obj = {&wrapped_obj, failing_malloc, failing_calloc, failing_realloc, passing_free};
  countdown = n;
  failed = false;
  PyMem_SetAllocator(PYMEM_DOMAIN_MEM, &mem);
  PyMem_SetAllocator(PYMEM_DOMAIN_OBJ, &obj);
  PyObject *result = PyObject_Call(callable, call_args, kwargs);
  PyMem_SetAllocator(PYMEM_DOMAIN_MEM, &wrapped_mem);
  PyMem_SetAllocator(PYMEM_DOMAIN_OBJ, &wrapped_obj);
  countdown = 0;
  Py_DECREF(call_args);

  PyObject *raised = NULL;
  if (result == NULL) {
    raised = take_raised();
    if (raised == NULL) return NULL;
  }
  return Py_BuildValue("(ONN)", failed ? Py_True : Py_False, result != NULL ? result : Py_NewRef(Py_None),
                       raised != NULL ? raised : Py_NewRef(Py_None));
}

PyMethodDef dlmap_py_python_allocation_failure[] = {
    {"_call_failing_python_allocation", (PyCFunction)(void (*)(void))call_failing_python_allocation,
     METH_VARARGS | METH_KEYWORDS,
     "_call_failing_python_allocation(n, callable, *args, **kwargs)\n--\n\nTesting hook: calls callable with "
     "Python's allocator (PyMem and PyObject) failing its n-th allocation, and returns (failed, result, exception)."},
    {NULL, NULL, 0, NULL},
};
