/* dlmap core — export's plans: export's steps (src/export.c) run once for a template array and request, and a view's
 * block kept as an image, which each export then copies, setting only what differs per call: the addresses inside the
 * block, the data, the owner. Prepared plans (dlmap_export_plan_create) are the caller's; the remembered plan is this
 * thread's, of the last layout an unprepared export made twice in a row. dlmap_export is here, so that an export the
 * remembered plan serves runs in one function without a call into the steps; the rest run them (src/export.c). */
#include <stddef.h>
#include <string.h>

#include "src/export.h"
#include "src/export_plan_cache.h"
#include "src/layout.h"
#include "src/memory.h"

struct dlmap_export_plan {
  dlmap_array array;            /* the template; shape and strides point into dims */
  dlmap_export_request request; /* allocator and device_allocator point at these copies (or are NULL) */
  dlmap_allocator allocator;
  dlmap_device_allocator device_allocator;
  dlmap__export_steps steps;        /* what negotiate … stamp decided */
  bool fast;                        /* a view the data pointer cannot change: planned exports copy the image */
  dlmap_exported out;               /* what a fast export reports (its tensor pointer set per call) */
  size_t header;                    /* the block's size */
  dlmap__export_block *image;       /* a fast plan's block as the steps leave it, inside this allocation */
  dlmap__managed_fields managed;    /* where the struct the request negotiated keeps its tensor and manager_ctx */
  bool dims_set;                    /* the tensor's shape and strides point into the block (ndim > 0 or scalar_dims) */
  int64_t dims[];                   /* shape[ndim] then strides[ndim] (when the template has strides) */
};

/* Whether the steps' outcome holds for any data pointer: a view on the array's own device with no stream to wait on
 * now. Such a plan serves an export from its image. */
static bool steps_fast(const dlmap__export_steps *steps, const dlmap_export_request *request) {
  return !steps->copy && steps->placement.kind == DLMAP__PLACE_VIEW &&
         (!steps->source_on_gpu || request->defer_stream_sync);
}

/* The size of a plan for ndim dimensions: its image (dlmap__export_header_size bytes) follows. Every caller's ndim was
 * checked (0 <= ndim <= DLMAP_MAX_NDIM, dlmap__check_shape) first: no overflow to report. */
#define PLAN_SIZE(ndim) DLMAP__ALIGN_UP(sizeof(dlmap_export_plan) + 2 * (size_t)(ndim) * sizeof(int64_t))
_Static_assert(PLAN_SIZE(DLMAP_MAX_NDIM) + DLMAP__EXPORT_HEADER_SIZE(DLMAP_MAX_NDIM) < SIZE_MAX / 2,
               "an export plan's size never overflows size_t");
static size_t plan_size_of(int32_t ndim) { return PLAN_SIZE(ndim); }

/* The template's block, written by the export's own steps; its addresses (shape, strides, manager_ctx) are the
 * image's, relocated per call. */
static void write_image(dlmap_export_plan *p) {
  memset(p->image, 0, p->header);
  dlmap__export_write_view(&p->array, &p->request, &p->steps, p->image, &p->out);
}

/* Fills the plan at p (plan_size bytes, then the image's header bytes where the steps are fast) from the caller's
 * structs as read and the steps they passed. The template keeps every byte of them as read (the reuse check compares
 * bytes), but for the fields it points at its own copies of (shape, strides, the allocators) and the per-call ones
 * (data, owner, release: NULL). The image is written by the steps, or copied from `made`, the block and result an
 * export just made with them (the addresses in it are relocated per call all the same). */
static void plan_fill(dlmap_export_plan *p, const dlmap_array *array, const dlmap_export_request *request,
                      const dlmap__export_steps *steps, size_t plan_size, size_t header,
                      const dlmap__export_block *made, const dlmap_exported *made_out) {
  const size_t ndim = (size_t)array->ndim; /* validate() bounded it by DLMAP_MAX_NDIM */
  memcpy(&p->array, array, sizeof *array); /* bytes, padding included: a struct assignment need not copy it */
  memcpy(&p->request, request, sizeof *request);
  p->allocator = *dlmap__allocator_or_default(request->allocator);
  p->request.allocator = request->allocator != NULL ? &p->allocator : NULL;
  if (request->device_allocator != NULL) p->device_allocator = *request->device_allocator;
  p->request.device_allocator = request->device_allocator != NULL ? &p->device_allocator : NULL;
  p->steps = *steps;
  p->fast = steps_fast(steps, request);
  p->header = header;
  p->image = p->fast ? (dlmap__export_block *)(void *)((char *)p + plan_size) : NULL;
  p->managed = dlmap__managed_fields_of[steps->structure];
  p->dims_set = ndim > 0 || dlmap_profile_current()->scalar_dims_empty;
  if (ndim > 0) memcpy(p->dims, array->shape, ndim * sizeof(int64_t));
  p->array.shape = ndim > 0 ? p->dims : NULL;
  if (array->strides != NULL && ndim > 0) {
    memcpy(p->dims + ndim, array->strides, ndim * sizeof(int64_t));
    p->array.strides = p->dims + ndim;
  }
  p->array.data = NULL; /* per call */
  p->array.owner = NULL;
  p->array.release = NULL;
  if (!p->fast) return;
  if (made == NULL) {
    write_image(p);
    return;
  }
  memcpy(p->image, made, header);
  p->out = *made_out;
}

/* The error of a failed block allocation, as the export raises it; out of line, so that the export's own frame stays
 * small. */
__attribute__((noinline, cold)) static int32_t image_out_of_memory(size_t bytes, dlmap_error *err) {
  return dlmap_raise_out_of_memory(err, bytes, "an export");
}

/* A fast plan's export: a new block holding the image, with this call's addresses and owner. */
static inline __attribute__((always_inline)) int32_t export_from_image(const dlmap_export_plan *plan, void *data,
                                                                        void *owner, void (*release)(void *owner),
                                                                        dlmap_exported *out, dlmap_error *err) {
  /* header is a multiple of the alignment (dlmap__align_size) and the plan's allocator resolved: dlmap__allocate would
   * ask the same */
  const dlmap_allocator *allocator = &plan->allocator;
  dlmap__export_block *block =
      (dlmap__export_block *)allocator->allocate(allocator->ctx, plan->header, DLMAP_DATA_ALIGNMENT);
  if (block == NULL) return image_out_of_memory(plan->header, err);
  memcpy(block, plan->image, plan->header);
  /* The managed tensor is the block's first member, whichever struct: its manager_ctx and out's one pointer are the
   * block. */
  void *const self = block;
  *out = plan->out;
  memcpy((char *)out + plan->managed.result, &self, sizeof self);
  memcpy((char *)block + plan->managed.manager_ctx, &self, sizeof self);
  DLTensor *tensor = (DLTensor *)(void *)((char *)block + plan->managed.tensor);
  if (plan->dims_set) { /* the image's pointers are the template's */
    tensor->shape = block->dims;
    tensor->strides = block->dims + plan->array.ndim;
  }
  /* The template's view kept its byte_offset, or folded it into data (export.byte_offset fold): the same here. */
  const uint64_t folded = plan->array.byte_offset - tensor->byte_offset;
  tensor->data = data != NULL ? (char *)data + folded : NULL;
  block->owner = owner;
  block->release = release;
  return DLMAP_OK;
}

/* ---- the last export's plan, per thread: an unprepared export whose array and request equal those of the fast
 * export this thread last remembered is served from that export's image (a layout is remembered when it comes twice
 * in a row). It lives in thread-local storage, allocated by nothing and freed by nothing; only exports of up to
 * kRememberedNdim dimensions are remembered. ---- */

enum { kRememberedNdim = 8 };
#define DLMAP__REMEMBERED_PLAN_BYTES                                                                \
  (sizeof(dlmap_export_plan) + sizeof(dlmap__export_block) + 4 * kRememberedNdim * sizeof(int64_t) + \
   2 * DLMAP_DATA_ALIGNMENT)
/* A union may hold a struct with a flexible array member; the bytes give its dims and image room. */
static _Thread_local union {
  dlmap_export_plan plan;
  unsigned char bytes[DLMAP__REMEMBERED_PLAN_BYTES];
} remembered; /* remembered.plan.array.struct_size is 0 until the first export is remembered */
_Static_assert(PLAN_SIZE(kRememberedNdim) + DLMAP__EXPORT_HEADER_SIZE(kRememberedNdim) <= sizeof remembered.bytes,
               "the remembered plan's storage holds a plan of kRememberedNdim dimensions and its image");
/* Set while an export is served from `remembered`: an allocator that exports on this thread from inside it must not
 * overwrite the plan being copied. */
static _Thread_local bool remembered_in_use;

/* ---- the reuse check. It compares the caller's structs as read with the template byte for byte, leaving out only
 * the fields named below: those that differ per call (data, owner, release) and those compared by what they point at
 * (shape and strides, the layout; the allocators, their functions and context). Every other byte up to the struct's
 * size is compared, padding included (a difference there only costs a full export), so a field added to either struct
 * later (fields are only ever appended: exchange.h) is compared without a change here, and a plan made without it is
 * never served for a call that sets it. tests/plan:remembered_fields_test changes every such byte. ---- */

/* Where a field ends: where the next may start. */
#define FIELD_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* Whether bytes [from, to) of a and b are equal. Constant bounds: GCC compares these spans inline, eight bytes a step,
 * where the result is only tested (joined with &&: joined with &, GCC 12 called memcmp for each; check the object
 * for memcmp calls after changing a span). */
static inline bool same_bytes(const void *a, const void *b, size_t from, size_t to) {
  return memcmp((const char *)a + from, (const char *)b + from, to - from) == 0;
}

/* The fields left out lie in this order (the spans below rely on it). */
_Static_assert(FIELD_END(dlmap_array, data) <= offsetof(dlmap_array, shape) &&
                   FIELD_END(dlmap_array, shape) == offsetof(dlmap_array, strides) &&
                   FIELD_END(dlmap_array, strides) <= offsetof(dlmap_array, owner) &&
                   FIELD_END(dlmap_array, owner) == offsetof(dlmap_array, release) &&
                   FIELD_END(dlmap_array, release) <= DLMAP_ARRAY_STRUCT_SIZE,
               "dlmap_array: data, shape and strides, owner and release, in this order");
_Static_assert(FIELD_END(dlmap_export_request, allocator) <= offsetof(dlmap_export_request, device_allocator) &&
                   FIELD_END(dlmap_export_request, device_allocator) <= DLMAP_EXPORT_REQUEST_STRUCT_SIZE,
               "dlmap_export_request: allocator, then device_allocator");

/* Every byte of the array up to its struct_size but data, shape, strides, owner and release. */
static inline __attribute__((always_inline)) bool same_array_bytes(const dlmap_array *a, const dlmap_array *t) {
  return same_bytes(a, t, 0, offsetof(dlmap_array, data)) &&
         same_bytes(a, t, FIELD_END(dlmap_array, data), offsetof(dlmap_array, shape)) &&
         same_bytes(a, t, FIELD_END(dlmap_array, strides), offsetof(dlmap_array, owner)) &&
         same_bytes(a, t, FIELD_END(dlmap_array, release), DLMAP_ARRAY_STRUCT_SIZE);
}

/* Every byte of the request up to its struct_size but the allocators. */
static inline __attribute__((always_inline)) bool same_request_bytes(const dlmap_export_request *r,
                                                                    const dlmap_export_request *q) {
  return same_bytes(r, q, 0, offsetof(dlmap_export_request, allocator)) &&
         same_bytes(r, q, FIELD_END(dlmap_export_request, allocator),
                    offsetof(dlmap_export_request, device_allocator)) &&
         same_bytes(r, q, FIELD_END(dlmap_export_request, device_allocator), DLMAP_EXPORT_REQUEST_STRUCT_SIZE);
}

/* Whether two allocators (of either kind: three pointers each, no padding) are the same functions and context. Field
 * by field: memcmp of the 24 bytes was a call into glibc on every export (GCC 12 does not expand it here). */
#define SAME_ALLOCATOR(a, b) ((a)->allocate == (b)->allocate && (a)->release == (b)->release && (a)->ctx == (b)->ctx)
_Static_assert(sizeof(dlmap_allocator) == 3 * sizeof(void *) && sizeof(dlmap_device_allocator) == 3 * sizeof(void *),
               "an allocator is its two functions and its context");

/* Whether the request's allocators are the template's: the same functions and context (NULL: the default allocator;
 * the device allocator's, the runtime's). */
static inline __attribute__((always_inline)) bool same_allocators(const dlmap_export_plan *p,
                                                                 const dlmap_export_request *r) {
  const dlmap_allocator *allocator = dlmap__allocator_or_default(r->allocator);
  const dlmap_device_allocator *d = r->device_allocator, *t = p->request.device_allocator;
  return SAME_ALLOCATOR(allocator, &p->allocator) && (d == NULL ? t == NULL : t != NULL && SAME_ALLOCATOR(d, t));
}

/* Whether array and request, as read from the caller, are the remembered plan's template (a NULL data with elements
 * is data_null, which the steps report). Inlined: a call of its own cost every export 4 instructions (bench/). */
static inline __attribute__((always_inline)) bool remembered_serves(const dlmap_export_plan *p, const dlmap_array *a,
                                                                   const dlmap_export_request *r) {
  const dlmap_array *t = &p->array;
  const size_t ndim = (size_t)t->ndim;
  /* The layout first, where a new array most often differs (a NULL shape is shape_null, which the steps report). A
   * template not yet remembered has struct_size 0, which no array read has: same_array_bytes refuses it. */
  if (a->ndim != t->ndim || (a->strides == NULL) != (t->strides == NULL) ||
      (ndim > 0 && (a->shape == NULL ||
                    !(t->strides != NULL ? dlmap__same_dims(a->shape, a->strides, t->shape, t->strides, ndim)
                                         : dlmap__same_dims(a->shape, a->shape, t->shape, t->shape, ndim))))) {
    return false;
  }
  return same_array_bytes(a, t) && same_request_bytes(r, &p->request) &&
         (a->data != NULL || p->steps.extent.count == 0) && same_allocators(p, r);
}

/* The fingerprint of the last fast export's layout that was not remembered. */
static _Thread_local uint64_t last_layout;

/* After a successful export of array and request (as read) by `steps` into `block`, handed out as *out: remembers its
 * plan, its image copied from the block, for this thread's next exports where the steps hold for any data pointer and
 * the layout is the one the thread's previous such export had (a plan too large for the storage is not kept). */
static void remember(const dlmap_array *array, const dlmap_export_request *request, const dlmap__export_steps *steps,
                     const dlmap__export_block *block, const dlmap_exported *out) {
  if (remembered_in_use || !steps_fast(steps, request) || array->ndim > kRememberedNdim) return;
  const uint64_t layout = dlmap__layout_fingerprint(array->ndim, array->shape, array->strides);
  if (layout != last_layout) {
    last_layout = layout;
    return;
  }
  /* ndim <= kRememberedNdim: the plan and its image fit remembered.bytes (the _Static_assert above) */
  plan_fill(&remembered.plan, array, request, steps, plan_size_of(array->ndim), dlmap__export_header_size(array->ndim),
            block, out);
}

/* dlmap__export_remembered, inlined into dlmap_export. */
static inline __attribute__((always_inline)) int32_t serve_remembered(const dlmap_array *array,
                                                                       const dlmap_export_request *request,
                                                                       dlmap_exported *out, dlmap_error *err) {
  if (remembered_in_use || !remembered_serves(&remembered.plan, array, request)) return DLMAP__EXPORT_NOT_REMEMBERED;
  remembered_in_use = true;
  const int32_t status = export_from_image(&remembered.plan, array->data, array->owner, array->release, out, err);
  remembered_in_use = false;
  return status;
}

int32_t dlmap__export_remembered(const dlmap_array *array, const dlmap_export_request *request, dlmap_exported *out,
                                 dlmap_error *err) {
  return serve_remembered(array, request, out, err);
}

int32_t dlmap_export(const dlmap_array *array, const dlmap_export_request *request, dlmap_exported *out,
                     dlmap_error *err) {
  dlmap_array array_fields;
  dlmap_export_request request_fields;
  int32_t status = dlmap__export_read_arguments(array, request, out, &array_fields, &request_fields, err);
  if (status != DLMAP_OK) return status;
  status = serve_remembered(&array_fields, &request_fields, out, err);
  if (status != DLMAP__EXPORT_NOT_REMEMBERED) return status;
  dlmap__export_steps steps;
  dlmap__export_block *block = NULL;
  status = dlmap__export_unplanned(&array_fields, &request_fields, &steps, &block, out, err);
  if (status == DLMAP_OK) remember(&array_fields, &request_fields, &steps, block, out);
  return status;
}

/* ---- prepared exports: the caller's plans ---- */

int32_t dlmap_export_plan_create(const dlmap_array *array, const dlmap_export_request *request,
                                 dlmap_export_plan **plan, dlmap_error *err) {
  if (plan == NULL) return dlmap__invalid_argument(err, "plan", "must not be NULL");
  dlmap_array array_fields;
  dlmap_export_request request_fields;
  dlmap_exported unused; /* read_arguments checks that out is not NULL; a plan hands nothing out */
  memset(&unused, 0, sizeof unused);
  int32_t status = dlmap__export_read_arguments(array, request, &unused, &array_fields, &request_fields, err);
  dlmap__export_steps steps;
  if (status == DLMAP_OK) status = dlmap__export_decide(&array_fields, &request_fields, &steps, err);
  if (status != DLMAP_OK) return status;
  /* decide() checked ndim (dlmap__check_shape): the sizes cannot overflow (the _Static_assert by PLAN_SIZE) */
  const size_t header = dlmap__export_header_size(array_fields.ndim), plan_size = plan_size_of(array_fields.ndim);
  const size_t size = plan_size + (steps_fast(&steps, &request_fields) ? header : 0);
  dlmap_export_plan *p = (dlmap_export_plan *)dlmap__allocate(request_fields.allocator, size, DLMAP_DATA_ALIGNMENT);
  if (p == NULL) return dlmap_raise_out_of_memory(err, size, "an export plan");
  plan_fill(p, &array_fields, &request_fields, &steps, plan_size, header, NULL, NULL);
  *plan = p;
  return DLMAP_OK;
}

int32_t dlmap_export_planned(const dlmap_export_plan *plan, void *data, void *owner, void (*release)(void *owner),
                             dlmap_exported *out, dlmap_error *err) {
  if (plan == NULL) return dlmap__invalid_argument(err, "plan", "must not be NULL");
  if (out == NULL) return dlmap__invalid_argument(err, "out", "must not be NULL");
  /* A plan whose steps depend on the data pointer, or a NULL pointer where there are elements (data_null): the
   * whole export, which gives the same result as ever. */
  if (!plan->fast || (data == NULL && plan->steps.extent.count > 0)) {
    dlmap_array array = plan->array;
    array.data = data;
    array.owner = owner;
    array.release = release;
    return dlmap_export(&array, &plan->request, out, err);
  }
  return export_from_image(plan, data, owner, release, out, err);
}

void dlmap_export_plan_free(dlmap_export_plan *plan) {
  if (plan == NULL) return;
  const dlmap_allocator allocator = plan->allocator; /* the plan holds the allocator it is freed with */
  dlmap__release(&allocator, plan);
}
