/* dlmap core — what export's steps (src/export.c) share with its plans (src/export_plan_cache.c): the block an export
 * hands out, what the steps decide, where each managed-tensor struct keeps its fields, and the steps a plan replays
 * once to write a view's block as its image. */
#ifndef DLMAP_SRC_EXPORT_H_
#define DLMAP_SRC_EXPORT_H_

#include <stddef.h>

#include "src/internal.h"
#include "src/memory.h"
#include "src/placement.h"
#include "src/transfer.h"

/* What a block's release does on a GPU (src/export.c), where it has GPU work to do. */
struct dlmap__export_gpu_record;

/* One allocation per export. The managed tensor comes first, so the deleter's argument is the block. The fixed part
 * is kept within 128 bytes: with the dims of 8 dimensions a view's block is then 256 bytes, which a prepared export
 * copies from its image in one short memcpy (bench/: 320 bytes took glibc's longer loop). */
typedef struct dlmap__export_block {
  union {
    DLManagedTensor legacy;
    struct DLManagedTensorVersioned versioned;
  } tensor;
  /* the allocator's release and context, copied: the caller's allocator struct need not outlive the export */
  void (*free_block)(void *ctx, void *block);
  void *allocator_ctx;
  void *owner;
  void (*release)(void *owner);
  struct dlmap__export_gpu_record *gpu; /* after the dims, where the release has GPU work to do; else NULL */
  int64_t dims[];                       /* shape[ndim] then strides[ndim]; a host copy or the GPU record follows at
                                         * an aligned offset */
} dlmap__export_block;
_Static_assert(offsetof(dlmap__export_block, dims) <= 128, "an export block's fixed part fits 128 bytes");

/* Where the managed-tensor struct of one kind (dlmap_struct_kind) keeps what export writes in every block, as offsets
 * into the block, and where dlmap_exported points at it: one table, so that the steps and the plans write either
 * struct by the same code. */
typedef struct dlmap__managed_fields {
  size_t tensor;      /* the DLTensor */
  size_t manager_ctx; /* the block itself */
  size_t result;      /* the offset in dlmap_exported of the pointer to the managed tensor (legacy or versioned) */
} dlmap__managed_fields;

/* Indexed by dlmap_struct_kind (DLMAP_STRUCT_LEGACY, DLMAP_STRUCT_VERSIONED). */
extern const dlmap__managed_fields dlmap__managed_fields_of[3];

/* What the steps decide, in the order they decide it; the block is made only once every check has passed. */
typedef struct dlmap__export_steps {
  dlmap_struct_kind structure; /* 1. negotiate */
  dlmap_version version;
  const dlmap_device_info *source; /* 2. validate */
  dlmap__extent extent;            /* of the storage (padded sub-byte elements are bytes) */
  const dlmap_device_info *target; /* 3. target */
  int32_t target_id;
  dlmap_stream_meaning stream; /* 4. stream */
  dlmap__placement placement;  /* 5. place */
  bool copy, source_on_gpu;
  bool fold_byte_offset; /* a view's byte_offset goes into data (profile export.byte_offset fold, data an address) */
  dlmap__transfer transfer;
  uint64_t flags; /* 6. stamp */
} dlmap__export_steps;

/* A caller's padding bytes are indeterminate (a struct built field by field, not from its _default()), and the plan
 * cache compares the structs as read byte for byte: the read copies' padding is zeroed, so that no comparison reads
 * an undefined byte (valgrind) and equal fields compare equal. Where the compiler lacks the builtin (clang 14), a
 * padding difference only costs a full export. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
#define DLMAP__CLEAR_PADDING(object) __builtin_clear_padding(object)
#endif
#endif
#ifndef DLMAP__CLEAR_PADDING
#define DLMAP__CLEAR_PADDING(object) ((void)(object))
#endif

/* The caller's structs as this header lays them out, in *array_fields and *request_fields: fields its struct_size does
 * not have read as zero, padding zeroed. Always inlined: every export reads both, and with the padding stores GCC 12
 * stopped inlining it, which cost a served export 31 instructions (bench/: 487 -> 456; 442 without the stores). */
static inline __attribute__((always_inline)) int32_t dlmap__export_read_arguments(
    const dlmap_array *array, const dlmap_export_request *request, const dlmap_exported *out,
    dlmap_array *array_fields, dlmap_export_request *request_fields, dlmap_error *err) {
  if (array == NULL) return dlmap__invalid_argument(err, "array", "must not be NULL");
  if (request == NULL) return dlmap__invalid_argument(err, "request", "must not be NULL");
  if (out == NULL) return dlmap__invalid_argument(err, "out", "must not be NULL");
  int32_t status = DLMAP__STRUCT_READ(array, array_fields, dlmap_array, DLMAP_ARRAY_STRUCT_SIZE, "array", err);
  if (status == DLMAP_OK) status = DLMAP__STRUCT_READ(request, request_fields, dlmap_export_request,
                                                        DLMAP_EXPORT_REQUEST_STRUCT_SIZE, "request", err);
  if (status != DLMAP_OK) return status;
  DLMAP__CLEAR_PADDING(array_fields);
  DLMAP__CLEAR_PADDING(request_fields);
  return dlmap__check_copy_mode(request_fields->copy, err);
}

/* size rounded up to DLMAP_DATA_ALIGNMENT (dlmap__align_size without its overflow check: for sizes bounded below). */
#define DLMAP__ALIGN_UP(size) (((size) + DLMAP_DATA_ALIGNMENT - 1) & ~(size_t)(DLMAP_DATA_ALIGNMENT - 1))

/* The size of an export block's header for ndim dimensions (the fixed part and the dims, aligned: a copy or the GPU
 * record follows). Every export checks 0 <= ndim <= DLMAP_MAX_NDIM (dlmap__check_shape) before it sizes a block, and
 * the largest header is far from SIZE_MAX: no overflow to report. */
#define DLMAP__EXPORT_HEADER_SIZE(ndim) \
  DLMAP__ALIGN_UP(sizeof(dlmap__export_block) + 2 * (size_t)(ndim) * sizeof(int64_t))
_Static_assert(DLMAP__EXPORT_HEADER_SIZE(DLMAP_MAX_NDIM) < SIZE_MAX / 2, "an export header never overflows size_t");
static inline size_t dlmap__export_header_size(int32_t ndim) { return DLMAP__EXPORT_HEADER_SIZE(ndim); }

/* Steps 1-6: every check and decision an export makes before it allocates (the array and request as read). */
int32_t dlmap__export_decide(const dlmap_array *array, const dlmap_export_request *request, dlmap__export_steps *steps,
                             dlmap_error *err);

/* The export of array and request (as read) by the steps, without a plan: on success *out as dlmap_export gives it,
 * the steps' decisions in *steps and the block handed out in *made (the plan cache remembers them). On error nothing
 * is left allocated and the array's owner is still the caller's. */
int32_t dlmap__export_unplanned(const dlmap_array *array, const dlmap_export_request *request,
                                dlmap__export_steps *steps, dlmap__export_block **made, dlmap_exported *out,
                                dlmap_error *err);

/* A view's block and result as an export whose steps are `steps` writes them, into the zeroed block (header bytes),
 * with the array's data, owner and release (a plan's image: NULL, relocated per call). For steps whose view makes no
 * stream wait (a plan's fast steps): nothing can fail. */
void dlmap__export_write_view(const dlmap_array *array, const dlmap_export_request *request,
                              const dlmap__export_steps *steps, dlmap__export_block *block, dlmap_exported *out);

#endif /* DLMAP_SRC_EXPORT_H_ */
