/* dlmap Python binding — the DLPack 1.2+/1.3 C exchange API table (DLPackExchangeAPI), declared with DLPack's exact
 * layout when the DLPack header in use is older than 1.2 (Debian 12 ships 0.6), and checked at compile time.
 *
 * A producer type publishes one static table for the whole process as `type.__dlpack_c_exchange_api__`, a PyCapsule
 * named "dlpack_exchange_api" (DLPack 1.3; 1.2 used `__c_dlpack_exchange_api__` as a Python int). Every function
 * returns 0 on success and -1 on failure; the _no_sync functions perform no stream synchronisation. */
#ifndef DLMAP_PYTHON_DLPACK_EXCHANGE_API_H_
#define DLMAP_PYTHON_DLPACK_EXCHANGE_API_H_

#include <stddef.h>
#include <stdint.h>

#include "dlmap/dlpack_compat.h"

/* The capsule name of the table (DLPack 1.3), and the type attributes that publish it. */
#define DLMAP_EXCHANGE_API_CAPSULE_NAME "dlpack_exchange_api"
#define DLMAP_EXCHANGE_API_ATTRIBUTE "__dlpack_c_exchange_api__"         /* 1.3: a capsule */
#define DLMAP_EXCHANGE_API_ATTRIBUTE_1_2 "__c_dlpack_exchange_api__"     /* 1.2: an int address */

#if defined(DLPACK_MAJOR_VERSION) && (DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 2))
/* The DLPack header declares the table itself. */
#else

/* Allocates a new owning tensor like `prototype` (only its dtype, ndim, shape and device are read) into *out. On
 * failure calls SetError(error_ctx, kind, message) exactly once, with a Python exception class name as kind, and
 * returns -1. Needs no Python state. */
typedef int (*DLPackManagedTensorAllocator)(DLTensor *prototype, struct DLManagedTensorVersioned **out,
                                            void *error_ctx,
                                            void (*SetError)(void *error_ctx, const char *kind, const char *message));

/* Owning export of a framework object (a PyObject *; the caller holds the GIL). -1: a Python exception is set. */
typedef int (*DLPackManagedTensorFromPyObjectNoSync)(void *py_object, struct DLManagedTensorVersioned **out);

/* Wraps an owning tensor (ownership is stolen on every path) as a new framework object (a new reference). */
typedef int (*DLPackManagedTensorToPyObjectNoSync)(struct DLManagedTensorVersioned *tensor, void **out_py_object);

/* Non-owning fill of a caller-provided DLTensor, valid until control returns to the framework. May be NULL. */
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void *py_object, DLTensor *out);

/* The framework's current work stream for a device (NULL for the host, or the legacy default stream). */
typedef int (*DLPackCurrentWorkStream)(DLDeviceType device_type, int32_t device_id, void **out_current_stream);

/* The stable head of every table: its version (the consumer checks the major first) and the table for an older
 * major version, or NULL when the framework supports none. */
typedef struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  struct DLPackExchangeAPIHeader *prev_api;
} DLPackExchangeAPIHeader;

typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  DLPackManagedTensorAllocator managed_tensor_allocator;
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync;
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;
  DLPackCurrentWorkStream current_work_stream;
} DLPackExchangeAPI;

#endif

/* The layout of DLPack 1.3 on LP64 (reference §2.5): header 16 bytes, then five function pointers; 56 in all. */
#if UINTPTR_MAX == UINT64_MAX
DLMAP_STATIC_ASSERT(sizeof(DLPackExchangeAPIHeader) == 16, "DLPackExchangeAPIHeader is 16 bytes on LP64");
DLMAP_STATIC_ASSERT(offsetof(DLPackExchangeAPIHeader, prev_api) == 8, "DLPackExchangeAPIHeader layout");
DLMAP_STATIC_ASSERT(sizeof(DLPackExchangeAPI) == 56, "DLPackExchangeAPI is 56 bytes on LP64");
DLMAP_STATIC_ASSERT(offsetof(DLPackExchangeAPI, managed_tensor_allocator) == 16 &&
                        offsetof(DLPackExchangeAPI, managed_tensor_from_py_object_no_sync) == 24 &&
                        offsetof(DLPackExchangeAPI, managed_tensor_to_py_object_no_sync) == 32 &&
                        offsetof(DLPackExchangeAPI, dltensor_from_py_object_no_sync) == 40 &&
                        offsetof(DLPackExchangeAPI, current_work_stream) == 48,
                    "DLPackExchangeAPI layout");
#endif

#endif /* DLMAP_PYTHON_DLPACK_EXCHANGE_API_H_ */
