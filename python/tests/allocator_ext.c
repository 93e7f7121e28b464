/* dlmap Python binding tests — a tiny extension of its own over the module's counted allocator (python/allocator.c)
 * and the block memory under it (python/block_cache.c), compiled from the same sources, that lets allocator_test.py
 * call them as the dlmap_allocator contract (include/dlmap/exchange.h) allows any caller to: any size, any power-of-two
 * alignment, and release of NULL. Addresses travel as ints. */
#include "python/binding.h"

/* allocate(size, alignment, /): dlmap_py_allocator.allocate's block as an address, or None for NULL. */
static PyObject *allocate(PyObject *self, PyObject *args) {
  (void)self;
  unsigned long long size, alignment;
  if (!PyArg_ParseTuple(args, "KK:allocate", &size, &alignment)) return NULL;
  void *block = dlmap_py_allocator.allocate(dlmap_py_allocator.ctx, (size_t)size, (size_t)alignment);
  if (block == NULL) Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)block);
}

/* release(address, /): dlmap_py_allocator.release of that address (0: NULL). */
static PyObject *release(PyObject *self, PyObject *arg) {
  (void)self;
  const unsigned long long address = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return NULL;
  dlmap_py_allocator.release(dlmap_py_allocator.ctx, (void *)(uintptr_t)address);
  Py_RETURN_NONE;
}

/* block_release(address, /): block_cache.c's release of that address, under the counted allocator (0: NULL). */
static PyObject *block_release(PyObject *self, PyObject *arg) {
  (void)self;
  const unsigned long long address = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return NULL;
  dlmap_py_block_release((void *)(uintptr_t)address);
  Py_RETURN_NONE;
}

/* counts(): (live, total) allocations the counted allocator has seen. */
static PyObject *counts(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  const dlmap_py_allocation_stats stats = dlmap_py_allocations();
  return Py_BuildValue("(LL)", stats.live, stats.total);
}

static PyMethodDef methods[] = {
    {"allocate", allocate, METH_VARARGS, NULL},
    {"release", release, METH_O, NULL},
    {"block_release", block_release, METH_O, NULL},
    {"counts", counts, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "dlmap_allocator_ext", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_dlmap_allocator_ext(void) { return PyModule_Create(&module_def); }
