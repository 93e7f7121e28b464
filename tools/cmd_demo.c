/* dlmap CLI — `dlmap demo`: a round trip under the profile in force: export a host array (with and without
 * max_version), import it back zero-copy, import a transposed view under each layout policy, and show the
 * errors for rejected inputs — with the deleter and owner-release counts that prove ownership. */
#include <string.h>

#include "tools/cli.h"

static int releases; /* how many times the demo array's owner was released */
static int deletes;  /* how many times a hand-made tensor's deleter ran */

static void release_owner(void *owner) {
  (void)owner;
  releases++;
}

static void count_delete(struct DLManagedTensorVersioned *self) {
  (void)self;
  deletes++;
}

static void show_error(const char *what, int32_t status, const dlmap_error *err) {
  if (status == DLMAP_OK) {
    printf("  %-44s unexpectedly succeeded\n", what);
  } else {
    printf("  %-44s %s [%s]: %s\n", what, dlmap_error_kind_name(err->kind), err->id, err->message);
  }
}

/* Imports an export, whichever struct the profile in force answered with. */
static int32_t import_exported(const dlmap_exported *exported, const dlmap_import_request *request,
                               dlmap_imported *out, dlmap_error *err) {
  return exported->structure == DLMAP_STRUCT_VERSIONED ? dlmap_import_versioned(exported->versioned, request, out, err)
                                                       : dlmap_import_legacy(exported->legacy, request, out, err);
}

static void release_exported(const dlmap_exported *exported) {
  if (exported->structure == DLMAP_STRUCT_VERSIONED) {
    exported->versioned->deleter(exported->versioned);
  } else {
    exported->legacy->deleter(exported->legacy);
  }
}

/* A request whose outcome is the profile's choice: its error, or that it was accepted (and the export released). */
static void show_outcome(const char *what, int32_t status, const dlmap_exported *exported, const dlmap_error *err) {
  if (status != DLMAP_OK) {
    show_error(what, status, err);
    return;
  }
  printf("  %-44s accepted under profile %s\n", what, dlmap_profile_current()->name);
  release_exported(exported);
}

static void show_tensor(const char *label, const DLTensor *t) {
  printf("  %-10s device (%d, %d), dtype (%u, %u, %u), shape [", label, (int)t->device.device_type,
         t->device.device_id, t->dtype.code, t->dtype.bits, t->dtype.lanes);
  for (int i = 0; i < t->ndim; i++) printf("%s%lld", i ? ", " : "", (long long)t->shape[i]);
  printf("], strides [");
  for (int i = 0; i < t->ndim; i++) printf("%s%lld", i ? ", " : "", (long long)t->strides[i]);
  printf("], data %p + %llu\n", t->data, (unsigned long long)t->byte_offset);
}

int cli_demo(int argc, char **argv) {
  (void)argv;
  if (argc != 0) {
    fprintf(stderr, "usage: %s demo\n", DLMAP_CLI_NAME);
    return CLI_USAGE;
  }
  float values[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3};
  dlmap_array array = dlmap_array_default();
  array.data = values;
  array.device_type = DLMAP_DEVICE_CPU;
  array.dtype.code = DLMAP_DTYPE_FLOAT;
  array.dtype.bits = 32;
  array.dtype.lanes = 1;
  array.ndim = 2;
  array.shape = shape;
  array.release = release_owner;
  int failures = 0;
  dlmap_error err;

  printf("Profile %s\n\n", dlmap_profile_current()->name);
  printf("1. Export a 2x3 float32 host array with max_version=(1, 3), import it back\n");
  dlmap_export_request request = dlmap_export_request_default();
  request.has_max_version = true;
  request.max_version.major = 1;
  request.max_version.minor = 3;
  dlmap_exported exported;
  int32_t status = dlmap_export(&array, &request, &exported, &err);
  if (status != DLMAP_OK) {
    show_error("export", status, &err);
    return CLI_FAILED;
  }
  if (exported.structure == DLMAP_STRUCT_VERSIONED) {
    printf("  exported   DLManagedTensorVersioned %u.%u, flags 0x%llx\n", exported.versioned->version.major,
           exported.versioned->version.minor, (unsigned long long)exported.versioned->flags);
    show_tensor("tensor", &exported.versioned->dl_tensor);
  } else {
    printf("  exported   DLManagedTensor (the profile answers every max_version with a legacy tensor)\n");
    show_tensor("tensor", &exported.legacy->dl_tensor);
  }
  dlmap_imported imported;
  status = import_exported(&exported, NULL, &imported, &err);
  if (status != DLMAP_OK) {
    show_error("import", status, &err);
    return CLI_FAILED;
  }
  show_tensor("imported", &imported.tensor);
  const float *seen = (const float *)imported.tensor.data;
  printf("  zero-copy: %s; values %g %g %g %g %g %g\n", imported.tensor.data == (void *)values ? "yes" : "NO",
         seen[0], seen[1], seen[2], seen[3], seen[4], seen[5]);
  failures += imported.tensor.data != (void *)values || imported.copied;
  dlmap_imported_release(&imported);
  printf("  released:  owner released %d time(s)\n\n", releases);
  failures += releases != 1;

  printf("2. The same with no max_version: a legacy DLManagedTensor\n");
  request.has_max_version = false;
  status = dlmap_export(&array, &request, &exported, &err);
  if (status == DLMAP_OK) status = dlmap_import_legacy(exported.legacy, NULL, &imported, &err);
  if (status != DLMAP_OK) {
    show_error("legacy round trip", status, &err);
    return CLI_FAILED;
  }
  printf("  legacy round trip: zero-copy %s\n", imported.tensor.data == (void *)values ? "yes" : "NO");
  dlmap_imported_release(&imported);
  printf("  released:  owner released %d time(s) in all\n\n", releases);
  failures += releases != 2;

  printf("3. A transposed view (3x2, strides [1, 3]) under each import layout policy\n");
  const int64_t t_shape[2] = {3, 2}, t_strides[2] = {1, 3};
  array.shape = t_shape;
  array.strides = t_strides;
  request.has_max_version = true;
  const struct {
    dlmap_layout_policy layout;
    dlmap_copy_mode copy;
    const char *label;
  } cases[] = {{DLMAP_LAYOUT_COMPACT_PERMUTATION, DLMAP_COPY_NEVER, "permutation of compact, copy=False"},
               {DLMAP_LAYOUT_ROW_MAJOR, DLMAP_COPY_IF_NEEDED, "row-major, copy=None"},
               {DLMAP_LAYOUT_ROW_MAJOR, DLMAP_COPY_NEVER, "row-major, copy=False"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dlmap_import_request import_request = dlmap_import_request_default();
    import_request.layout = cases[i].layout;
    import_request.copy = cases[i].copy;
    status = dlmap_export(&array, &request, &exported, &err);
    if (status == DLMAP_OK) status = import_exported(&exported, &import_request, &imported, &err);
    if (status != DLMAP_OK) {
      show_error(cases[i].label, status, &err);
      continue;
    }
    const float *v = (const float *)imported.tensor.data;
    printf("  %-44s %s, strides [%lld, %lld], values %g %g %g %g %g %g\n", cases[i].label,
           imported.copied ? "copied" : "zero-copy view", (long long)imported.tensor.strides[0],
           (long long)imported.tensor.strides[1], v[0], v[1], v[2], v[3], v[4], v[5]);
    dlmap_imported_release(&imported);
  }
  printf("  released:  owner released %d time(s) in all\n\n", releases);
  failures += releases != 5;

  printf("4. Rejected requests and inputs (the catalogue's errors)\n");
  array.shape = shape;
  array.strides = NULL;
  request.has_dl_device = true;
  request.dl_device_type = DLMAP_DEVICE_OPENCL;
  show_error("export with dl_device=(kDLOpenCL, 0)", dlmap_export(&array, &request, &exported, &err), &err);
  request.has_dl_device = false;
  request.has_stream = true;
  request.stream = 7;
  int accepted = releases;
  show_outcome("export from the host with stream=7", dlmap_export(&array, &request, &exported, &err), &exported, &err);
  request.has_stream = false;
  request.has_max_version = false;
  array.read_only = true;
  show_outcome("read-only array, no max_version", dlmap_export(&array, &request, &exported, &err), &exported, &err);
  accepted = releases - accepted; /* the profile's acceptances, each released once */
  request.has_max_version = true;
  request.max_version.major = 0;
  request.max_version.minor = 4;
  show_error("max_version=(0, 4)", dlmap_export(&array, &request, &exported, &err), &err);

  int64_t bad_shape[1] = {-3};
  struct DLManagedTensorVersioned crafted;
  memset(&crafted, 0, sizeof crafted);
  crafted.version.major = 1;
  crafted.deleter = count_delete;
  crafted.dl_tensor.device.device_type = kDLCPU;
  crafted.dl_tensor.dtype.code = kDLFloat;
  crafted.dl_tensor.dtype.bits = 32;
  crafted.dl_tensor.dtype.lanes = 1;
  crafted.dl_tensor.ndim = 1;
  crafted.dl_tensor.shape = bad_shape;
  crafted.dl_tensor.data = values;
  show_error("import of a tensor with shape [-3]", dlmap_import_versioned(&crafted, NULL, &imported, &err), &err);
  crafted.version.major = 2;
  show_error("import of a DLPack 2.0 tensor", dlmap_import_versioned(&crafted, NULL, &imported, &err), &err);
  printf("  the rejected tensors' deleter ran %d time(s) (once each); the owner was released %d time(s)\n",
         deletes, releases);
  failures += deletes != 2 || releases != 5 + accepted;
  printf("\n%s\n", failures == 0 ? "demo OK" : "demo FAILED");
  return failures == 0 ? CLI_OK : CLI_FAILED;
}
