/* dlmap core — the layouts of the public structs a caller fills, one row per size a caller may write. When a field is
 * appended to one, add a row {its new DLMAP_STRUCT_SIZE, the same}; keep every row (each is a released header). */
#include "src/struct_size.h"

#include "src/internal.h"

/* 0.2.0 callers wrote sizeof (the same fields, plus tail padding); from 0.3.0 on DLMAP_STRUCT_SIZE of the last
 * field. The macro lists both for a struct whose 0.2.0 layout ends at `last`. */
#define LAYOUTS_SINCE_0_2(type, last)                                                          \
  static const dlmap__layout kLayouts_##type[] = {                                             \
      {DLMAP__SIZEOF_LAYOUT(DLMAP_STRUCT_SIZE(type, last), _Alignof(type)), DLMAP_STRUCT_SIZE(type, last)}, \
      {DLMAP_STRUCT_SIZE(type, last), DLMAP_STRUCT_SIZE(type, last)},                          \
  };                                                                                           \
  const dlmap__layouts dlmap__layouts_##type = {kLayouts_##type, sizeof kLayouts_##type / sizeof kLayouts_##type[0]}

/* A struct that had no struct_size before 0.3.0: one layout. */
#define LAYOUTS_SINCE_0_3(type, last)                                                                             \
  static const dlmap__layout kLayouts_##type[] = {{DLMAP_STRUCT_SIZE(type, last), DLMAP_STRUCT_SIZE(type, last)}}; \
  const dlmap__layouts dlmap__layouts_##type = {kLayouts_##type, 1}

LAYOUTS_SINCE_0_2(dlmap_array, num_shards);
LAYOUTS_SINCE_0_2(dlmap_export_request, defer_stream_sync);
LAYOUTS_SINCE_0_2(dlmap_import_request, num_shards);
LAYOUTS_SINCE_0_2(dlmap_check_source, read_only);
LAYOUTS_SINCE_0_3(dlmap_device_query, local_hardware_id);

int32_t dlmap__struct_read_or_raise(const void *caller, void *copy, size_t copy_size, const dlmap__layouts *known,
                                    const char *argument, const char *reason, dlmap_error *err) {
  return dlmap__struct_read(caller, copy, copy_size, known) ? DLMAP_OK : dlmap__invalid_argument(err, argument, reason);
}
