/* dlmap public API — the DLPack ABI as dlmap sees it: the user's <dlpack/dlpack.h>, completed to 1.x.
 *
 * dlmap builds against whatever DLPack header the build finds. Headers older than 1.0 (Debian 12
 * ships 0.6) lack the versioned structures and flag macros; this file then declares them with the
 * exact DLPack 1.x layout, and the asserts below check sizes and offsets at compile time, so a
 * DLManagedTensorVersioned built here is byte-identical to one built against a 1.3 header.
 *
 * Device type and dtype code values beyond the header's enums are not added to DLPack's enums:
 * dlmap passes device types as int32_t and codes as uint8_t, and names them in
 * <dlmap/generated/dlmap_spec.h> (DLMAP_DEVICE_*, DLMAP_DTYPE_*).
 */
#ifndef DLMAP_DLPACK_COMPAT_H_
#define DLMAP_DLPACK_COMPAT_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DLPACK_MAJOR_VERSION
/* A pre-1.0 header: declare what DLPack 1.0 added, with its layout. */
#define DLMAP_DLPACK_COMPAT_DECLARED 1

/* The DLPack ABI version of a managed tensor (DLPack 1.0+). */
typedef struct {
  uint32_t major; /* a different major: the consumer may only call the deleter */
  uint32_t minor; /* minor bumps only add enumeration values */
} DLPackVersion;

/* A managed tensor with version and flags (DLPack 1.0+). Ownership: the consumer owns it once handed
 * over and releases it by calling deleter(self) exactly once; deleter may be NULL. */
struct DLManagedTensorVersioned {
  DLPackVersion version;  /* checked before any other field */
  void *manager_ctx;      /* producer-private */
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;         /* DLPACK_FLAG_BITMASK_* */
  DLTensor dl_tensor;     /* last, unlike DLManagedTensor */
};
#endif

/* The flag bits, each where the header lacks it: 1.0 defines the first two, 1.1 added the third. */
#ifndef DLPACK_FLAG_BITMASK_READ_ONLY
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_COPIED
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2)
#endif

/* DLPack 1.0 and 1.1 declare only the struct tag; 1.2+ also a typedef. dlmap spells the tag. */
typedef struct DLManagedTensorVersioned dlmap_managed_versioned;

/* Compile-time proof that the structures match DLPack's ABI (x86-64 / LP64 values from the spec). */
#if defined(__cplusplus)
#define DLMAP_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define DLMAP_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
#if (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L) || defined(__cplusplus)
DLMAP_STATIC_ASSERT(sizeof(DLPackVersion) == 8, "DLPackVersion is 8 bytes");
DLMAP_STATIC_ASSERT(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
DLMAP_STATIC_ASSERT(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
DLMAP_STATIC_ASSERT(offsetof(DLDataType, bits) == 1 && offsetof(DLDataType, lanes) == 2, "DLDataType layout");
#if UINTPTR_MAX == UINT64_MAX
DLMAP_STATIC_ASSERT(sizeof(DLTensor) == 48, "DLTensor is 48 bytes on LP64");
DLMAP_STATIC_ASSERT(offsetof(DLTensor, device) == 8 && offsetof(DLTensor, ndim) == 16 &&
                        offsetof(DLTensor, dtype) == 20 && offsetof(DLTensor, shape) == 24 &&
                        offsetof(DLTensor, strides) == 32 && offsetof(DLTensor, byte_offset) == 40,
                    "DLTensor layout");
DLMAP_STATIC_ASSERT(sizeof(DLManagedTensor) == 64, "DLManagedTensor is 64 bytes on LP64");
DLMAP_STATIC_ASSERT(offsetof(DLManagedTensor, manager_ctx) == 48 && offsetof(DLManagedTensor, deleter) == 56,
                    "DLManagedTensor layout");
DLMAP_STATIC_ASSERT(sizeof(struct DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned is 80 bytes on LP64");
DLMAP_STATIC_ASSERT(offsetof(struct DLManagedTensorVersioned, manager_ctx) == 8 &&
                        offsetof(struct DLManagedTensorVersioned, deleter) == 16 &&
                        offsetof(struct DLManagedTensorVersioned, flags) == 24 &&
                        offsetof(struct DLManagedTensorVersioned, dl_tensor) == 32,
                    "DLManagedTensorVersioned layout");
#endif
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLMAP_DLPACK_COMPAT_H_ */
