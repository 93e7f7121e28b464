/* dlmap core — device types from the spec: info for any int32_t value, memory kinds, and how each
 * device type's stream convention classifies a `stream` argument. */
#include "src/internal.h"

/* Per-device NULL-terminated name lists, one array per entry of the generated list. */
#define DLMAP_DEVICE_TYPE(value, ENUM, spellings, aliases, ...)                  \
  static const char *const kSpellings_##ENUM[] = {DLMAP_UNPAREN spellings NULL}; \
  static const char *const kAliases_##ENUM[] = {DLMAP_UNPAREN aliases NULL};
#include "src/generated/device_types.inc"
#undef DLMAP_DEVICE_TYPE

static const dlmap_device_info kDevices[] = {
#define DLMAP_DEVICE_TYPE(value, ENUM, spellings, aliases, name, PLATFORM, MEMORY, STREAM, major, minor, \
                          upstream_main, doc, note, vendor, ...)                                         \
  {value,                                                                                                \
   name,                                                                                                 \
   kSpellings_##ENUM,                                                                                    \
   kAliases_##ENUM,                                                                                      \
   DLMAP_PLATFORM_##PLATFORM,                                                                            \
   DLMAP_MEMORY_##MEMORY,                                                                                \
   DLMAP_STREAM_CONVENTION_##STREAM,                                                                     \
   {major, minor},                                                                                       \
   doc,                                                                                                  \
   note,                                                                                                 \
   upstream_main,                                                                                        \
   vendor},
#include "src/generated/device_types.inc"
#undef DLMAP_DEVICE_TYPE
};

typedef struct memory_row {
  const char *name;
  bool host_accessible;
} memory_row;

static const memory_row kMemoryKinds[] = {
#define DLMAP_MEMORY_KIND(ENUM, name, host_accessible, ...) {name, host_accessible},
#include "src/generated/memory_kinds.inc"
#undef DLMAP_MEMORY_KIND
};

typedef struct convention_row {
  const char *name;
  dlmap_stream_meaning absent;
  bool has_handles;
  int64_t handles_above;
  const char *rule;
} convention_row;

static const convention_row kConventions[] = {
#define DLMAP_STREAM_CONVENTION(ENUM, name, ABSENT, has_handles, handles_above, rule, ...) \
  {name, DLMAP_STREAM_##ABSENT, has_handles, handles_above, rule},
#include "src/generated/stream_conventions.inc"
#undef DLMAP_STREAM_CONVENTION
};

typedef struct stream_value_row {
  dlmap_stream_convention convention;
  int64_t value;
  dlmap_stream_meaning meaning;
} stream_value_row;

static const stream_value_row kStreamValues[] = {
#define DLMAP_STREAM_VALUE(CONVENTION, value, MEANING, ...) \
  {DLMAP_STREAM_CONVENTION_##CONVENTION, value, DLMAP_STREAM_##MEANING},
#include "src/generated/stream_values.inc"
#undef DLMAP_STREAM_VALUE
    {DLMAP_STREAM_CONVENTION_COUNT, 0, DLMAP_STREAM_INVALID} /* sentinel: a spec may list no values */
};

/* Index of each entry in kDevices. */
enum {
#define DLMAP_DEVICE_TYPE(value, ENUM, ...) DEVICE_INDEX_##ENUM,
#include "src/generated/device_types.inc"
#undef DLMAP_DEVICE_TYPE
  DEVICE_INDEX_END
};

const dlmap_device_info *dlmap_device_type_find(int32_t device_type) {
  /* The values are DLPack's and sparse (no 5 or 6; vendors add large ones): a switch, not an index. */
  switch (device_type) {
#define DLMAP_DEVICE_TYPE(value, ENUM, ...) \
  case value:                               \
    return &kDevices[DEVICE_INDEX_##ENUM];
#include "src/generated/device_types.inc"
#undef DLMAP_DEVICE_TYPE
    default:
      return NULL;
  }
}

int32_t dlmap_device_type_lookup(int32_t device_type, const dlmap_device_info **out, dlmap_error *err) {
  const dlmap_device_info *info = dlmap_device_type_find(device_type);
  if (out != NULL) *out = info;
  if (info == NULL) {
    return dlmap_raise_device_type_unknown(err, device_type);
  }
  return DLMAP_OK;
}

const dlmap_device_info *dlmap_device_type_at(size_t index) {
  return index < sizeof kDevices / sizeof kDevices[0] ? &kDevices[index] : NULL;
}

const char *dlmap_device_type_name(int32_t device_type) {
  const dlmap_device_info *info = dlmap_device_type_find(device_type);
  return info != NULL ? info->name : "unknown";
}

const char *dlmap_memory_kind_name(dlmap_memory_kind kind) {
  return (unsigned)kind < (unsigned)DLMAP_MEMORY_KIND_COUNT ? kMemoryKinds[kind].name : NULL;
}

bool dlmap_memory_kind_host_accessible(dlmap_memory_kind kind) {
  return (unsigned)kind < (unsigned)DLMAP_MEMORY_KIND_COUNT && kMemoryKinds[kind].host_accessible;
}

const char *dlmap_stream_convention_name(dlmap_stream_convention convention) {
  return (unsigned)convention < (unsigned)DLMAP_STREAM_CONVENTION_COUNT ? kConventions[convention].name : NULL;
}

const char *dlmap_stream_convention_rule(dlmap_stream_convention convention) {
  return (unsigned)convention < (unsigned)DLMAP_STREAM_CONVENTION_COUNT ? kConventions[convention].rule : NULL;
}

int32_t dlmap_stream_classify(int32_t device_type, bool has_stream, int64_t stream, dlmap_stream_meaning *out,
                              dlmap_error *err) {
  const dlmap_device_info *info;
  int32_t status = dlmap_device_type_lookup(device_type, &info, err);
  if (status != DLMAP_OK) return status;
  const convention_row *convention = &kConventions[info->stream];
  dlmap_stream_meaning meaning = DLMAP_STREAM_INVALID;
  if (!has_stream) {
    meaning = convention->absent;
  } else if (convention->has_handles && stream > convention->handles_above) {
    meaning = DLMAP_STREAM_HANDLE;
  } else {
    for (size_t i = 0; i < sizeof kStreamValues / sizeof kStreamValues[0]; i++) {
      if (kStreamValues[i].convention == info->stream && kStreamValues[i].value == stream) {
        meaning = kStreamValues[i].meaning;
      }
    }
  }
  if (meaning == DLMAP_STREAM_INVALID) {
    return dlmap_raise_stream_invalid(err, stream, info->name, device_type, convention->rule);
  }
  if (out != NULL) *out = meaning;
  return DLMAP_OK;
}
