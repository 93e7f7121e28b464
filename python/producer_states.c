/* dlmap Python binding — the producer object states a DLPack tensor cannot carry (spec/versions.yaml,
 * exchange_api.producer_states), read on a producer before its type's C exchange table is called.
 *
 * A table's managed_tensor_from_py_object_no_sync may skip the checks the producer's own __dlpack__ makes (PyTorch's
 * hands out a conjugate-bit view with its stored, unconjugated values): the tensor it returns looks ordinary, so the
 * states are read on the object itself, from the generated table; nothing here names a producer or an attribute. */
#include <string.h>

#include "python/binding.h"

typedef enum { STATE_ASK_PRODUCER, STATE_REFUSE } state_action;

static const struct producer_state {
  const char *attribute; /* NULL ends the table */
  bool call;             /* a method called with no arguments; else the attribute's value */
  const char *other_than; /* holds when str(result) differs from it; NULL: holds when the result is true */
  state_action action;
  const char *doc;
} states[] = {
#define DLMAP_PRODUCER_STATE(attribute, call, other_than, ACTION, doc, ...) \
  {attribute, call, other_than, STATE_##ACTION, doc},
#include "src/generated/producer_states.inc"
    {NULL, false, NULL, STATE_ASK_PRODUCER, NULL},
};

#define STATE_COUNT (sizeof states / sizeof states[0] - 1)

/* The attribute names, interned once (the binding keeps one interpreter's state in statics, as dlmap_py_name). */
static PyObject *state_names[STATE_COUNT + 1];

static PyObject *state_name(size_t i) {
  if (state_names[i] == NULL) state_names[i] = PyUnicode_InternFromString(states[i].attribute);
  return state_names[i];
}

/* Whether state i holds on x: 1 or 0, or -1 with an exception (the producer's own code raised, or memory ran out). */
static int state_holds(PyObject *x, size_t i) {
  PyObject *result = PyObject_GetAttr(x, state_name(i));
  if (result != NULL && states[i].call) Py_SETREF(result, PyObject_CallNoArgs(result));
  if (result == NULL) return -1;
  int holds;
  if (states[i].other_than != NULL) {
    PyObject *text = PyObject_Str(result);
    holds = text == NULL ? -1 : PyUnicode_CompareWithASCIIString(text, states[i].other_than) != 0;
    Py_XDECREF(text);
  } else {
    holds = PyObject_IsTrue(result); /* may run the result's __bool__ */
  }
  Py_DECREF(result);
  return holds;
}

int dlmap_py_producer_state(PyObject *x, PyTypeObject *type) {
  for (size_t i = 0; i < STATE_COUNT; i++) {
    /* The state exists only where the type or a base defines the attribute: found in the type's attribute cache,
     * without running Python code, so a producer that has none of them costs no call. */
    if (state_name(i) == NULL) return -1;
    if (_PyType_Lookup(type, state_names[i]) == NULL) continue;
    const int holds = state_holds(x, i);
    if (holds < 0) {
      /* A state that cannot be read (its attribute, call, __bool__ or __str__ raised an Exception) counts as
       * holding with ask_producer: the error is cleared and __dlpack__, the producer's own protocol, answers (and
       * raises again where the object is truly broken). KeyboardInterrupt, SystemExit and the like propagate. */
      if (!PyErr_ExceptionMatches(PyExc_Exception)) return -1;
      PyErr_Clear();
      return 1;
    }
    if (holds == 0) continue;
    if (states[i].action == STATE_REFUSE) {
      dlmap_py_raised(dlmap_raise_from_dlpack_producer_state(DLMAP_PY_ERR, states[i].attribute, states[i].doc));
      return -1;
    }
    return 1;
  }
  return 0;
}
