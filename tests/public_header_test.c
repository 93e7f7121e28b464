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
