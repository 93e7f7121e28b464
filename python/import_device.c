/* dlmap Python binding — from_dlpack's device= argument, in the vocabulary the profile's import.device_names and
 * import.device_tuples give it (NumPy: None or "cpu" only). Nothing here names a device or a peer: the names and
 * whether a tuple is taken are generated from the profile. */
#include <string.h>

#include "python/binding.h"

/* import_device_not_understood, with str(obj) as the caller passed it and str(type(obj)) (a profile's text shows
 * either). */
static int not_understood(PyObject *obj) {
  PyObject *text = PyObject_Str(obj);
  PyObject *type_text = text != NULL ? PyObject_Str((PyObject *)Py_TYPE(obj)) : NULL;
  const char *shown = type_text != NULL ? PyUnicode_AsUTF8(text) : NULL;
  const char *type_shown = shown != NULL ? PyUnicode_AsUTF8(type_text) : NULL;
  if (type_shown != NULL) dlmap_py_raised(dlmap_raise_import_device_not_understood(DLMAP_PY_ERR, shown, type_shown));
  Py_XDECREF(text);
  Py_XDECREF(type_text);
  return -1;
}

/* The profile's listed name obj is (compared exactly), as its device type; false when it lists none or not obj. */
static bool listed_name(PyObject *obj, int32_t *type, bool *failed) {
  Py_ssize_t len;
  const char *name = PyUnicode_AsUTF8AndSize(obj, &len);
  if (name == NULL) {
    *failed = true;
    return false;
  }
  const dlmap_device_name *entry;
  for (size_t i = 0; (entry = dlmap_profile_device_name_at(i)) != NULL; i++) {
    if (strlen(entry->name) == (size_t)len && memcmp(entry->name, name, (size_t)len) == 0) {
      *type = entry->device_type;
      return true;
    }
  }
  return false;
}

int dlmap_py_parse_import_device(PyObject *obj, bool *has, int32_t *type, int32_t *id) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  *has = false;
  if (obj == NULL || obj == Py_None) return 0;
  if (PyUnicode_Check(obj) && profile->device_names_listed) {
    bool failed = false;
    if (!listed_name(obj, type, &failed)) return failed ? -1 : not_understood(obj);
    *id = 0;
    *has = true;
    return 0;
  }
  if (!PyUnicode_Check(obj) && !profile->device_tuples) return not_understood(obj);
  return dlmap_py_parse_device(obj, "device", !profile->device_names_listed, NULL, has, type, id);
}
