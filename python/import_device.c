/* dlmap Python binding — from_dlpack's device= argument, in the vocabulary the profile's import.device_names,
 * import.device_tuples and import.device_index give it (NumPy: None or "cpu" only; PyTorch: "cuda:1"). Nothing here
 * names a device or a peer: the names, whether a tuple is taken and whether a name carries an index are generated
 * from the profile. */
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

/* The profile's listed name the len bytes at name are (compared exactly), as its device type; false when it lists
 * none or not this one. */
static bool listed_name(const char *name, Py_ssize_t len, int32_t *type) {
  const dlmap_device_name *entry;
  for (size_t i = 0; (entry = dlmap_profile_device_name_at(i)) != NULL; i++) {
    if (strlen(entry->name) == (size_t)len && memcmp(entry->name, name, (size_t)len) == 0) {
      *type = entry->device_type;
      return true;
    }
  }
  return false;
}

/* import.device_index colon: a name ending in ":N" (N one to nine decimal digits) is device N; *name_len is then the
 * length before the colon. Anything else is left whole, device 0. */
static int32_t device_index(const char *text, Py_ssize_t len, Py_ssize_t *name_len) {
  *name_len = len;
  Py_ssize_t colon = len;
  while (colon > 0 && text[colon - 1] >= '0' && text[colon - 1] <= '9') colon--;
  if (!dlmap_profile_current()->device_index_colon || colon == len || len - colon > 9 || colon < 2 ||
      text[colon - 1] != ':') {
    return 0;
  }
  int32_t id = 0;
  for (Py_ssize_t i = colon; i < len; i++) id = id * 10 + (text[i] - '0');
  *name_len = colon - 1;
  return id;
}

/* A device name: first, one the profile's framework knows without a DLPack device type (import_device_without_type,
 * naming the string as passed); then listed by the profile (else import_device_not_understood), or, when it lists
 * none, any device type's name (else name_unknown); with import.device_index colon, a ":N" suffix is the device id. */
static int parse_name(PyObject *obj, bool listed, bool *has, int32_t *type, int32_t *id) {
  Py_ssize_t len, name_len;
  const char *text = PyUnicode_AsUTF8AndSize(obj, &len);
  if (text == NULL) return -1;
  const int32_t index = device_index(text, len, &name_len);
  if (dlmap_profile_device_name_without_type(text, (size_t)name_len)) {
    dlmap_py_raised(dlmap_raise_import_device_without_type(DLMAP_PY_ERR, text));
    return -1;
  }
  if (listed ? !listed_name(text, name_len, type) : !dlmap_device_type_parse(text, (size_t)name_len, type)) {
    if (listed) return not_understood(obj);
    dlmap_py_raised(dlmap_raise_name_unknown(DLMAP_PY_ERR, "device type", text));
    return -1;
  }
  *id = index;
  *has = true;
  return 0;
}

int dlmap_py_parse_import_device(PyObject *obj, bool *has, int32_t *type, int32_t *id) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  *has = false;
  if (obj == Py_None) return 0;
  if (PyUnicode_Check(obj)) return parse_name(obj, profile->device_names_listed, has, type, id);
  if (!profile->device_tuples) return not_understood(obj);
  /* a tuple, or the type error (which says names are taken too where the profile lists none) */
  return dlmap_py_parse_device(obj, "device", !profile->device_names_listed, NULL, has, type, id);
}
