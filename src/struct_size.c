/* dlmap core — the layouts of the public structs a caller fills, one row per size a caller may write. When a field is
 * appended to one, add a row {its new DLMAP_STRUCT_SIZE, the same}; keep every row (each is a released header). */
#include "src/struct_size.h"

#include "src/internal.h"

/* PJRT_CHECK_STRUCT_SIZE's check, for every struct of the list (struct_size.h): the struct's size in the header, the
 * end of the field its macro names, rounded up to the struct's alignment, is its sizeof. So only tail padding follows
 * that field: a field appended without moving the macro to it fails the build (unless it fits the old tail padding;
 * tests/abi pins every released size by hand). */
#define CHECK_STRUCT_SIZE(type, size)                                        \
  _Static_assert(sizeof(type) == DLMAP__SIZEOF_LAYOUT(size, _Alignof(type)), \
                 #size " does not name the last field of " #type);
DLMAP__CALLER_STRUCTS(CHECK_STRUCT_SIZE)
#undef CHECK_STRUCT_SIZE

/* Each struct's layouts, from its header size (DLMAP_*_STRUCT_SIZE). 0.2.0 callers wrote sizeof (the same fields, plus
 * tail padding); from 0.3.0 on DLMAP_STRUCT_SIZE of the last field. LAYOUTS_SINCE_0_2 lists both for a struct whose
 * 0.2.0 layout ends where `size` does. */
#define LAYOUTS_SINCE_0_2(type, size)                                                                                \
  static const dlmap__layout kLayouts_##type[] = {                                                                   \
      {DLMAP__SIZEOF_LAYOUT(size, _Alignof(type)), size},                                                            \
      {size, size},                                                                                                  \
  };                                                                                                                 \
  const dlmap__layouts dlmap__layouts_##type = {kLayouts_##type, sizeof kLayouts_##type / sizeof kLayouts_##type[0]}

/* The same for a struct that gained fields since: `first` is where its fields ended then (the macro's old value),
 * `size` where they end now. */
#define LAYOUTS_SINCE_0_2_GROWN(type, first, size)                                                                   \
  static const dlmap__layout kLayouts_##type[] = {                                                                   \
      {DLMAP__SIZEOF_LAYOUT(first, _Alignof(type)), first},                                                          \
      {first, first},                                                                                                \
      {size, size},                                                                                                  \
  };                                                                                                                 \
  const dlmap__layouts dlmap__layouts_##type = {kLayouts_##type, sizeof kLayouts_##type / sizeof kLayouts_##type[0]}

/* A struct that had no struct_size before 0.3.0: one layout. */
#define LAYOUTS_SINCE_0_3(type, size)                            \
  static const dlmap__layout kLayouts_##type[] = {{size, size}}; \
  const dlmap__layouts dlmap__layouts_##type = {kLayouts_##type, 1}

LAYOUTS_SINCE_0_2(dlmap_array, DLMAP_ARRAY_STRUCT_SIZE);
/* device_allocator appended to both requests (issue 64) */
LAYOUTS_SINCE_0_2_GROWN(dlmap_export_request, DLMAP_STRUCT_SIZE(dlmap_export_request, defer_stream_sync),
                        DLMAP_EXPORT_REQUEST_STRUCT_SIZE);
LAYOUTS_SINCE_0_2_GROWN(dlmap_import_request, DLMAP_STRUCT_SIZE(dlmap_import_request, num_shards),
                        DLMAP_IMPORT_REQUEST_STRUCT_SIZE);
LAYOUTS_SINCE_0_2(dlmap_check_source, DLMAP_CHECK_SOURCE_STRUCT_SIZE);
LAYOUTS_SINCE_0_3(dlmap_device_query, DLMAP_DEVICE_QUERY_STRUCT_SIZE);

int32_t dlmap__struct_read_or_raise(const void *caller, void *copy, size_t copy_size, const dlmap__layouts *known,
                                    const char *argument, const char *reason, dlmap_error *err) {
  return dlmap__struct_read(caller, copy, copy_size, known) ? DLMAP_OK : dlmap__invalid_argument(err, argument, reason);
}
