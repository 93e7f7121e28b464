/* dlmap core — the first step of an unprepared export (dlmap_export, src/export_plan_cache.c): this thread's
 * remembered plan, where it serves. Public types only: a test drives the reuse check through it
 * (tests/plan:remembered_fields_test). */
#ifndef DLMAP_SRC_EXPORT_PLAN_CACHE_H_
#define DLMAP_SRC_EXPORT_PLAN_CACHE_H_

#include "dlmap/dlmap.h"

/* What dlmap__export_remembered returns where the remembered plan does not serve: never a dlmap_status. */
enum { DLMAP__EXPORT_NOT_REMEMBERED = -1 };

/* The export of array and request (as read: dlmap__export_read_arguments) from this thread's remembered plan, where
 * it serves them (dlmap_export's first step, inlined there): equal in every byte but the per-call fields (data, owner,
 * release) and those compared by what they point at (shape and strides, the allocators). Its status then (DLMAP_OK,
 * or out_of_memory), with *out as dlmap_export gives it; else DLMAP__EXPORT_NOT_REMEMBERED, with nothing done. */
int32_t dlmap__export_remembered(const dlmap_array *array, const dlmap_export_request *request, dlmap_exported *out,
                                 dlmap_error *err);

#endif /* DLMAP_SRC_EXPORT_PLAN_CACHE_H_ */
