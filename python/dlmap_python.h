/* dlmap Python binding — the public C helpers for raising dlmap's errors as Python exceptions, for any CPython
 * extension built over a dlmap library (dlmap's own module uses them too).
 *
 * The exception class of an error is the one its kind names in the spec (spec/errors.yaml `exception_kinds`, a
 * profile may change an error's kind); the text is the catalogue's (or the profile's). Nothing here names a kind:
 * the class is looked up by the name the generated table gives (dlmap_error_kind_name), in the builtins module.
 *
 * Use: add //python:exceptions_srcs (this header and exceptions.c) to your extension's srcs, depend on your
 * dlmap_library() and on Python's headers, and call dlmap_py_errors_init() from your PyInit_ function (the lookups
 * resolve lazily otherwise). Every function needs the GIL. python/README.md, "Raising dlmap errors from C". */
#ifndef DLMAP_PYTHON_DLMAP_PYTHON_H_
#define DLMAP_PYTHON_DLMAP_PYTHON_H_

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <stddef.h>
#include <stdint.h>

#include "dlmap/dlmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Resolves each kind's exception class from the builtins module, once: 0, or -1 with an exception set. A kind whose
 * name is not a builtin exception class defined in C gives RuntimeError. */
int dlmap_py_errors_init(void);

/* The exception class (a borrowed reference) of `kind`; DLMAP_KIND_COUNT, or any value out of range, is the
 * unknown-code fallback's (RuntimeError). Never NULL and never raises. */
PyObject *dlmap_py_exception_type(dlmap_error_kind kind);

/* Raises err as the class its kind names, with the catalogue's message and the attributes dlmap_id (the error's
 * stable id) and dlmap_code. Returns NULL (dlmap_py_raise_int: -1), to be returned from the caller. */
PyObject *dlmap_py_raise(const dlmap_error *err);
int dlmap_py_raise_int(const dlmap_error *err);

/* Raises catalogue error `code` with the given args (dlmap_error_set). Returns NULL. */
PyObject *dlmap_py_raise_code(int32_t code, const dlmap_arg *args, size_t nargs);

/* DLMAP_PY_RAISE(code, arg...): raises the catalogue error with its arguments counted (see DLMAP_RAISE); NULL. For a
 * code chosen at run time; a known error is raised typed, below. */
#define DLMAP_PY_RAISE(...) dlmap_py_raise_code(DLMAP_CODE_AND_ARGS(__VA_ARGS__))

/* Raising a known error typed by the spec (see DLMAP_RAISE in dlmap.h), in one expression:
 *   return dlmap_py_raised(dlmap_raise_ndim_too_large(DLMAP_PY_ERR, n, DLMAP_MAX_NDIM));
 * DLMAP_PY_ERR is the calling thread's own error object (dlmap_py_error_slot); dlmap_py_raised raises what it holds
 * and returns NULL. The typed call runs first, so the slot holds this error when it is raised. */
dlmap_error *dlmap_py_error_slot(void);
PyObject *dlmap_py_raised(int32_t code);
#define DLMAP_PY_ERR dlmap_py_error_slot()

#ifdef __cplusplus
}
#endif

#endif /* DLMAP_PYTHON_DLMAP_PYTHON_H_ */
