/* dlmap CI drill — end-to-end host exchange of the named device types through the library it is linked with: for
 * each, an array in host memory on that type is exported to a consumer of the current version (in whichever struct the
 * profile answers) and imported back as the same device type with the same values, and a kDLCPU array is exported to
 * it with dl_device. The suite runs it on kDLCPU; tools/drill/drill.sh adds the device type variant f makes
 * exchangeable. usage: host_exchange_check NAME...   (device type names as the name lookup takes them) */
#include <stdio.h>
#include <string.h>

#include "dlmap/dlmap.h"

#define ROWS 2
#define COLS 3

static int failures;

static void fail(const char *name, const char *what, const dlmap_error *err) {
  fprintf(stderr, "FAIL %s: %s%s%s\n", name, what, err != NULL ? ": " : "", err != NULL ? err->message : "");
  failures++;
}

/* Imports an exported tensor with an all-default request and checks its device type and values, then releases it. */
static void import_back(const char *name, const char *what, dlmap_exported *out, int32_t type, const float *want) {
  dlmap_import_request request = dlmap_import_request_default();
  dlmap_imported imported;
  dlmap_error err;
  const int32_t status = out->structure == DLMAP_STRUCT_VERSIONED
                             ? dlmap_import_versioned(out->versioned, &request, &imported, &err)
                             : dlmap_import_legacy(out->legacy, &request, &imported, &err);
  if (status != DLMAP_OK) {
    fail(name, what, &err);
    return;
  }
  const DLTensor *t = &imported.tensor;
  if (t->device.device_type != (DLDeviceType)type) fail(name, what, NULL);
  if (t->ndim != 2 || t->shape[0] != ROWS || t->shape[1] != COLS) fail(name, "imported shape", NULL);
  if (memcmp((const char *)t->data + t->byte_offset, want, sizeof(float) * ROWS * COLS) != 0) {
    fail(name, "imported values", NULL);
  }
  dlmap_imported_release(&imported);
}

/* Exports `array` per `request`, checks the exported device type, and imports it back. */
static void round_trip(const char *name, const char *what, const dlmap_array *array,
                       const dlmap_export_request *request, int32_t type, const float *want) {
  dlmap_exported out;
  dlmap_error err;
  if (dlmap_export(array, request, &out, &err) != DLMAP_OK) {
    fail(name, what, &err);
    return;
  }
  const DLTensor *t = out.structure == DLMAP_STRUCT_VERSIONED ? &out.versioned->dl_tensor : &out.legacy->dl_tensor;
  if (t->device.device_type != (DLDeviceType)type) fail(name, "exported device type", NULL);
  import_back(name, what, &out, type, want);
}

static void check(const char *name) {
  const int failures_before = failures;
  int32_t type;
  if (!dlmap_device_type_parse(name, strlen(name), &type)) {
    fail(name, "not a device type name of this build's spec", NULL);
    return;
  }
  const dlmap_device_info *info = dlmap_device_type_find(type);
  if (!dlmap_memory_kind_host_accessible(info->memory)) {
    fail(name, "not in host-accessible memory", NULL);
    return;
  }
  float values[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) values[i] = 0.5f + (float)i;
  const int64_t shape[2] = {ROWS, COLS};
  dlmap_array array = dlmap_array_default();
  array.data = values;
  array.device_type = type;
  array.dtype = (DLDataType){DLMAP_DTYPE_FLOAT, 32, 1};
  array.ndim = 2;
  array.shape = shape;

  /* A consumer of the current version: the struct is the profile's answer to it (a legacy tensor from max_version
   * None cannot carry a device type newer than the legacy ABI under strict version gating). */
  dlmap_export_request request = dlmap_export_request_default();
  request.has_max_version = true;
  request.max_version = dlmap_version_current();
  round_trip(name, "export, import", &array, &request, type, values);

  /* A host array exported to the device type (__dlpack__(dl_device=(type, 0))). */
  array.device_type = DLMAP_DEVICE_CPU;
  request.has_dl_device = true;
  request.dl_device_type = type;
  round_trip(name, "export from kDLCPU with dl_device, import", &array, &request, type, values);
  if (failures == failures_before) printf("PASS %s (%d): exported and imported in host memory under profile %s\n", name, type,
                            dlmap_profile_current()->name);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: host_exchange_check DEVICE_TYPE_NAME...\n");
    return 2;
  }
  for (int i = 1; i < argc; i++) check(argv[i]);
  return failures == 0 ? 0 : 1;
}
