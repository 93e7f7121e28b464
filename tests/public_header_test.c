/* Public-header compile test in pure C (built as -std=c99 and -std=c11, -pedantic -Wall -Wextra -Werror): includes
 * <dlmap/dlmap.h>, checks the DLPack ABI layout at compile time and calls a few functions. */
#include <dlmap/dlpack_compat.h> /* self-contained on its own */
#include <dlmap/dlmap.h>
#include <dlmap/dlmap.h> /* include guards */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "generated/spec_facts.h" /* the spec's current version, read from the YAML */

/* A compile-time assertion that works in C99 (no _Static_assert there). */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define CHECK_LAYOUT(cond, name) _Static_assert(cond, #name)
#else
#define CHECK_LAYOUT(cond, name) typedef char check_##name[(cond) ? 1 : -1]
#endif

/* DLPack structures (x86-64 / LP64; reference §2.5). */
CHECK_LAYOUT(sizeof(DLPackVersion) == 8, version_size);
CHECK_LAYOUT(offsetof(DLPackVersion, major) == 0 && offsetof(DLPackVersion, minor) == 4, version_layout);
CHECK_LAYOUT(sizeof(DLDevice) == 8, device_size);
CHECK_LAYOUT(offsetof(DLDevice, device_type) == 0 && offsetof(DLDevice, device_id) == 4, device_layout);
CHECK_LAYOUT(sizeof(DLDataType) == 4, dtype_size);
CHECK_LAYOUT(offsetof(DLDataType, code) == 0 && offsetof(DLDataType, bits) == 1 && offsetof(DLDataType, lanes) == 2,
             dtype_layout);
#if UINTPTR_MAX == UINT64_MAX
CHECK_LAYOUT(sizeof(DLTensor) == 48, tensor_size);
CHECK_LAYOUT(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, device) == 8 && offsetof(DLTensor, ndim) == 16 &&
                 offsetof(DLTensor, dtype) == 20 && offsetof(DLTensor, shape) == 24 &&
                 offsetof(DLTensor, strides) == 32 && offsetof(DLTensor, byte_offset) == 40,
             tensor_layout);
CHECK_LAYOUT(sizeof(DLManagedTensor) == 64, managed_size);
CHECK_LAYOUT(offsetof(DLManagedTensor, dl_tensor) == 0 && offsetof(DLManagedTensor, manager_ctx) == 48 &&
                 offsetof(DLManagedTensor, deleter) == 56,
             managed_layout);
CHECK_LAYOUT(sizeof(struct DLManagedTensorVersioned) == 80, versioned_size);
CHECK_LAYOUT(offsetof(struct DLManagedTensorVersioned, version) == 0, versioned_version);
CHECK_LAYOUT(offsetof(struct DLManagedTensorVersioned, manager_ctx) == 8, versioned_manager_ctx);
CHECK_LAYOUT(offsetof(struct DLManagedTensorVersioned, deleter) == 16, versioned_deleter);
CHECK_LAYOUT(offsetof(struct DLManagedTensorVersioned, flags) == 24, versioned_flags);
CHECK_LAYOUT(offsetof(struct DLManagedTensorVersioned, dl_tensor) == 32, versioned_dl_tensor);
/* Absolute offsets of the embedded tensor's fields. */
CHECK_LAYOUT(offsetof(struct DLManagedTensorVersioned, dl_tensor.data) == 32 &&
                 offsetof(struct DLManagedTensorVersioned, dl_tensor.device) == 40 &&
                 offsetof(struct DLManagedTensorVersioned, dl_tensor.ndim) == 48 &&
                 offsetof(struct DLManagedTensorVersioned, dl_tensor.dtype) == 52 &&
                 offsetof(struct DLManagedTensorVersioned, dl_tensor.shape) == 56 &&
                 offsetof(struct DLManagedTensorVersioned, dl_tensor.strides) == 64 &&
                 offsetof(struct DLManagedTensorVersioned, dl_tensor.byte_offset) == 72,
             versioned_tensor_fields);
CHECK_LAYOUT(sizeof(dlmap_managed_versioned) == 80, managed_versioned_typedef);
#endif

/* dlmap's own types. */
CHECK_LAYOUT(sizeof(dlmap_version) == sizeof(DLPackVersion) && offsetof(dlmap_version, minor) == 4, dlmap_version);
CHECK_LAYOUT(DLMAP_MESSAGE_CAPACITY == 512, message_capacity);
CHECK_LAYOUT(sizeof(((dlmap_error *)0)->message) == DLMAP_MESSAGE_CAPACITY, error_message);
CHECK_LAYOUT(DLPACK_FLAG_BITMASK_READ_ONLY == 1 && DLPACK_FLAG_BITMASK_IS_COPIED == 2 &&
                 DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED == 4,
             flag_bits);
CHECK_LAYOUT(DLMAP_OK == 0 && DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE == 201, status_codes);
CHECK_LAYOUT(DLMAP_DEVICE_CUDA == 2 && DLMAP_DEVICE_ONEAPI == 14 && DLMAP_DTYPE_BOOL == 6, enumerators);

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    failures++;
  }
}

static void deleter(struct DLManagedTensorVersioned *self) { (void)self; }

int main(void) {
  const dlmap_device_info *cuda = dlmap_device_type_find(DLMAP_DEVICE_CUDA);
  expect(cuda != NULL && strcmp(cuda->name, "kDLCUDA") == 0, "kDLCUDA by value");
  expect(dlmap_device_type_find(5) == NULL, "no device type 5");

  int32_t value = 0;
  expect(dlmap_device_type_parse("kGPU", 4, &value) && value == 2, "kGPU by name");

  DLDataType dtype;
  expect(dlmap_dtype_parse("bfloat16", 8, &dtype) && dtype.code == 4 && dtype.bits == 16 && dtype.lanes == 1,
         "bfloat16 by name");
  expect(dlmap_dtype_validate(dtype, NULL) == DLMAP_OK, "bfloat16 validates");

  dlmap_version current = dlmap_version_current();
  expect(current.major == SPEC_FACTS_CURRENT_MAJOR && current.minor == SPEC_FACTS_CURRENT_MINOR,
         "current version " SPEC_FACTS_CURRENT_TEXT);

  dlmap_error err;
  dlmap_arg arg = dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 200);
  expect(dlmap_error_set(&err, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, &arg, 1) == 201, "error_set returns code");
  expect(strcmp(err.message,
                "The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: "
                "200)") == 0,
         "seed message");
  expect(strcmp(dlmap_error_kind_name(err.kind), "BufferError") == 0, "BufferError");

  /* DLMAP_RAISE counts its arguments (none, one, several) under strict C99 / C11. */
  expect(DLMAP_RAISE(&err, DLMAP_ERR_NO_LOCAL_HARDWARE_ID) == DLMAP_ERR_NO_LOCAL_HARDWARE_ID, "RAISE, no arguments");
  expect(strchr(err.message, '{') == NULL, "RAISE, no arguments: nothing left unfilled");
  expect(DLMAP_RAISE(&err, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 200)) ==
             201,
         "RAISE, one argument");
  expect(strstr(err.message, "(DLDeviceType: 200)") != NULL, "RAISE, one argument: filled");
  DLMAP_RAISE(&err, DLMAP_ERR_NDIM_TOO_LARGE, dlmap_arg_int(DLMAP_ARG_NDIM, 70), dlmap_arg_int(DLMAP_ARG_MAX_NDIM, 64));
  expect(strstr(err.message, "70") != NULL && strstr(err.message, "64") != NULL, "RAISE, two arguments: both filled");

  /* The library's own version: the header's numbers, and the linked library reports the same. */
  {
    char header_version[32];
    snprintf(header_version, sizeof header_version, "%d.%d.%d", DLMAP_VERSION_MAJOR, DLMAP_VERSION_MINOR,
             DLMAP_VERSION_PATCH);
    expect(strcmp(dlmap_version_string(), header_version) == 0, "dlmap_version_string() matches DLMAP_VERSION_*");
  }

  /* struct_size: the _default() values carry this header's size; any other size is invalid_argument, and import
   * still releases the producer's tensor. */
  {
    dlmap_array array = dlmap_array_default();
    dlmap_export_request request = dlmap_export_request_default();
    dlmap_import_request want = dlmap_import_request_default();
    expect(array.struct_size == DLMAP_ARRAY_STRUCT_SIZE && request.struct_size == DLMAP_EXPORT_REQUEST_STRUCT_SIZE &&
               want.struct_size == DLMAP_IMPORT_REQUEST_STRUCT_SIZE && array.data == NULL &&
               request.copy == DLMAP_COPY_IF_NEEDED,
           "_default(): struct_size set, the rest zero");
    float value = 1.0f;
    array.data = &value;
    array.device_type = DLMAP_DEVICE_CPU;
    array.dtype.code = kDLFloat;
    array.dtype.bits = 32;
    array.dtype.lanes = 1;
    dlmap_exported out;
    const uint32_t wrong_sizes[] = {0, (uint32_t)sizeof array - 8, (uint32_t)sizeof array + 8};
    for (size_t i = 0; i < sizeof wrong_sizes / sizeof wrong_sizes[0]; i++) {
      dlmap_array stale = array;
      stale.struct_size = wrong_sizes[i];
      expect(dlmap_export(&stale, &request, &out, &err) == DLMAP_ERR_INVALID_ARGUMENT &&
                 strstr(err.message, "array->struct_size") != NULL,
             "export: a wrong array struct_size is invalid_argument");
      dlmap_export_request stale_request = request;
      stale_request.struct_size = wrong_sizes[i];
      expect(dlmap_export(&array, &stale_request, &out, &err) == DLMAP_ERR_INVALID_ARGUMENT &&
                 strstr(err.message, "request->struct_size") != NULL,
             "export: a wrong request struct_size is invalid_argument");
      expect(dlmap_stream_wait_batch(&stale, 1, false, 0, NULL, &err) == DLMAP_ERR_INVALID_ARGUMENT,
             "stream_wait_batch: a wrong array struct_size is invalid_argument");
    }
    request.has_max_version = true;
    request.max_version = dlmap_version_current();
    const int32_t exported = dlmap_export(&array, &request, &out, &err);
    if (exported != DLMAP_OK) fprintf(stderr, "%s\n", err.message);
    expect(exported == DLMAP_OK, "export with the default structs");
    dlmap_imported imported;
    want.struct_size = 0;
    if (out.structure == DLMAP_STRUCT_VERSIONED) {
      expect(dlmap_import_versioned(out.versioned, &want, &imported, &err) == DLMAP_ERR_INVALID_ARGUMENT,
             "import: a wrong request struct_size is invalid_argument (the tensor is released: LSan/valgrind see it)");
    } else {
      expect(dlmap_import_legacy(out.legacy, &want, &imported, &err) == DLMAP_ERR_INVALID_ARGUMENT,
             "import: a wrong request struct_size is invalid_argument (the tensor is released: LSan/valgrind see it)");
    }
  }

  /* dlmap_array_default() is "host, no data, no owner": the spec's host device type (the one the name "host" looks up,
   * host memory on the cpu platform), id 0, so that a host array needs only its data, dtype and shape (issue 23: it
   * left device_type 0, which names no device type). */
  {
    const dlmap_array array = dlmap_array_default();
    int32_t host = -1;
    for (size_t i = 0; i < SPEC_FACTS_DEVICE_TYPE_COUNT; i++) {
      const spec_facts_device_type *f = &spec_facts_device_types[i];
      for (size_t n = 0; f->names[n] != NULL; n++) {
        if (strcmp(f->names[n], "host") == 0 && strcmp(f->memory, "host") == 0 && strcmp(f->platform, "cpu") == 0) {
          host = f->value;
        }
      }
    }
    expect(host >= 0, "the spec names a host device type (alias host, memory host, platform cpu)");
    expect(array.device_type == host && array.device_id == 0, "_default(): the host device type, id 0");
    float value = 2.0f;
    dlmap_array scalar = dlmap_array_default();
    scalar.data = &value;
    scalar.dtype.code = kDLFloat;
    scalar.dtype.bits = 32;
    scalar.dtype.lanes = 1;
    dlmap_export_request request = dlmap_export_request_default();
    request.has_max_version = true;
    request.max_version = dlmap_version_current();
    dlmap_exported out;
    dlmap_error err;
    const int32_t status = dlmap_export(&scalar, &request, &out, &err);
    if (status != DLMAP_OK) fprintf(stderr, "%s\n", err.message);
    expect(status == DLMAP_OK, "export of a default array given only data and dtype");
    if (status == DLMAP_OK) {
      const DLTensor *t = out.structure == DLMAP_STRUCT_VERSIONED ? &out.versioned->dl_tensor : &out.legacy->dl_tensor;
      expect((int32_t)t->device.device_type == host && t->device.device_id == 0 && t->data == &value,
             "the default array exports as a view of host memory");
      if (out.structure == DLMAP_STRUCT_VERSIONED) {
        out.versioned->deleter(out.versioned);
      } else {
        out.legacy->deleter(out.legacy);
      }
    }
  }

  {
    const int64_t shape[] = {2, 3};
    dlmap_arg args[2];
    char buf[128];
    args[0] = dlmap_arg_ints(DLMAP_ARG_SHAPE, shape, 2);
    args[1] = dlmap_arg_ints(DLMAP_ARG_STRIDES, NULL, 0);
    dlmap_error_format(buf, sizeof buf, DLMAP_ERR_SIZE_OVERFLOW, args, 2);
    expect(strcmp(buf, "The DLPack tensor's element count or byte extent overflows (shape [2, 3], strides [(null)])") ==
               0,
           "ints argument");
  }

  {
    dlmap_stream_meaning meaning = DLMAP_STREAM_INVALID;
    expect(dlmap_stream_classify(DLMAP_DEVICE_CUDA, true, 2, &meaning, NULL) == DLMAP_OK &&
               meaning == DLMAP_STREAM_PER_THREAD_DEFAULT,
           "CUDA stream 2");
  }

  {
    /* The versioned struct is usable from C with the 1.x field names. */
    int64_t shape[1] = {4};
    float data[4] = {0, 1, 2, 3};
    dlmap_managed_versioned tensor;
    memset(&tensor, 0, sizeof tensor);
    tensor.version.major = current.major;
    tensor.version.minor = current.minor;
    tensor.deleter = deleter;
    tensor.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    tensor.dl_tensor.data = data;
    tensor.dl_tensor.device.device_type = kDLCPU;
    tensor.dl_tensor.ndim = 1;
    tensor.dl_tensor.dtype.code = kDLFloat;
    tensor.dl_tensor.dtype.bits = 32;
    tensor.dl_tensor.dtype.lanes = 1;
    tensor.dl_tensor.shape = shape;
    expect(dlmap_check_representable((int32_t)tensor.dl_tensor.device.device_type, tensor.dl_tensor.dtype,
                                     tensor.flags, current, NULL) == DLMAP_OK,
           "representable in the current version");
    tensor.deleter(&tensor);
  }

  if (failures == 0) printf("public header test (C, __STDC_VERSION__ %ld): OK\n", (long)__STDC_VERSION__);
  return failures == 0 ? 0 : 1;
}
