/* dlmap core — reading the structs a caller fills (exchange.h, check.h) by their struct_size, PJRT's way: each known
 * size names a layout, the library copies that layout's fields and reads every later field as zero. Header-only
 * reading (dlmap__struct_read) so that a test can play a newer library reading an older caller's struct. */
#ifndef DLMAP_SRC_STRUCT_SIZE_H_
#define DLMAP_SRC_STRUCT_SIZE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dlmap/check.h"
#include "dlmap/dlmap.h"

/* One layout of a public struct: the struct_size its callers write, and where its fields end (what the library may
 * read of such a caller's struct). */
typedef struct dlmap__layout {
  uint32_t struct_size;
  uint32_t fields_end;
} dlmap__layout;

/* Every layout the library knows of one struct. */
typedef struct dlmap__layouts {
  const dlmap__layout *layout;
  size_t count;
} dlmap__layouts;

/* sizeof a layout whose fields end at `end` in a struct aligned to `alignment`: the struct_size 0.2.0's _default()
 * wrote (sizeof, tail padding included). */
#define DLMAP__SIZEOF_LAYOUT(end, alignment) ((uint32_t)(((end) + (alignment)-1) / (alignment) * (alignment)))

/* Copies the caller's struct into *copy (copy_size bytes: the library's sizeof): the bytes of the fields its
 * struct_size says it has, zero for the rest. False, with *copy untouched, for a size no known layout has. */
static inline bool dlmap__struct_read(const void *caller, void *copy, size_t copy_size, const dlmap__layouts *known) {
  uint32_t size;
  memcpy(&size, caller, sizeof size);
  for (size_t i = 0; i < known->count; i++) {
    if (known->layout[i].struct_size != size) continue;
    const size_t fields = known->layout[i].fields_end < copy_size ? known->layout[i].fields_end : copy_size;
    memset(copy, 0, copy_size);
    memcpy(copy, caller, fields);
    return true;
  }
  return false;
}

/* The element stride of a caller's array of structs: its struct_size rounded up to the struct's alignment (sizeof in
 * the caller's header, as long as fields are only appended and none is more aligned than the struct already is). */
static inline size_t dlmap__struct_stride(uint32_t struct_size, size_t alignment) {
  return ((size_t)struct_size + alignment - 1) / alignment * alignment;
}

/* Every public struct a caller fills (each starts with struct_size), with this header's size of it: the one list of
 * them. Each size macro names the struct's last field, beside the struct in the public header (exchange.h, check.h),
 * and nowhere else: src/struct_size.c checks at compile time that the named field is the last one, PJRT's way, and
 * defines each struct's layouts; tests/abi walks the list. A public struct that starts with struct_size gets a row. */
#define DLMAP__CALLER_STRUCTS(X)                             \
  X(dlmap_array, DLMAP_ARRAY_STRUCT_SIZE)                    \
  X(dlmap_export_request, DLMAP_EXPORT_REQUEST_STRUCT_SIZE)  \
  X(dlmap_import_request, DLMAP_IMPORT_REQUEST_STRUCT_SIZE)  \
  X(dlmap_device_query, DLMAP_DEVICE_QUERY_STRUCT_SIZE)      \
  X(dlmap_check_source, DLMAP_CHECK_SOURCE_STRUCT_SIZE)

/* The layouts the library knows of each of them (src/struct_size.c): dlmap__layouts_<type>. */
#define DLMAP__DECLARE_LAYOUTS(type, size) extern const dlmap__layouts dlmap__layouts_##type;
DLMAP__CALLER_STRUCTS(DLMAP__DECLARE_LAYOUTS)
#undef DLMAP__DECLARE_LAYOUTS

/* dlmap__struct_read, or invalid_argument ("{argument} is not a size ..."). */
int32_t dlmap__struct_read_or_raise(const void *caller, void *copy, size_t copy_size, const dlmap__layouts *known,
                                    const char *argument, const char *reason, dlmap_error *err);

/* dlmap__struct_read_or_raise, with the common case inline: a caller built with this header wrote `current` (its
 * type's DLMAP_*_STRUCT_SIZE, a constant), and its fields are copied as one block (what follows `current` in *copy is
 * tail padding, never read). The out-of-line path, its memset and its search of the layouts cost about 40
 * instructions per struct, per export and import (bench/). */
static inline int32_t dlmap__struct_read_current(const void *caller, void *copy, size_t copy_size, uint32_t current,
                                                 const dlmap__layouts *known, const char *argument, const char *reason,
                                                 dlmap_error *err) {
  uint32_t size;
  memcpy(&size, caller, sizeof size);
  if (size == current && current <= copy_size) {
    memcpy(copy, caller, current);
    return DLMAP_OK;
  }
  return dlmap__struct_read_or_raise(caller, copy, copy_size, known, argument, reason, err);
}

/* Reads the caller's `type` at `caller` into *copy, which the library then uses in its place; current: the type's
 * DLMAP_*_STRUCT_SIZE. */
#define DLMAP__STRUCT_READ(caller, copy, type, current, argument, err)                                              \
  dlmap__struct_read_current((caller), (copy), sizeof *(copy), (current), &dlmap__layouts_##type,                   \
                             argument "->struct_size",                                                              \
                             "is not a size of " #type " this library knows: start from " #type "_default()", (err))

#endif /* DLMAP_SRC_STRUCT_SIZE_H_ */
