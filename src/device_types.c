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
#define DLMAP_DEVICE_TYPE(value_, ENUM, spellings_, aliases_, name_, PLATFORM, MEMORY, STREAM, major_, minor_, \
                          upstream_main_, doc_, note_, vendor_, ...)                                        \
  {                                                                                                         \
      .value = value_,                                                                                      \
      .name = name_,                                                                                        \
      .spellings = kSpellings_##ENUM,                                                                       \
      .aliases = kAliases_##ENUM,                                                                           \
      .platform = DLMAP_PLATFORM_##PLATFORM,                                                                \
      .memory = DLMAP_MEMORY_##MEMORY,                                                                      \
      .stream = DLMAP_STREAM_CONVENTION_##STREAM,                                                           \
      .introduced = {.major = major_, .minor = minor_},                                                     \
      .doc = doc_,                                                                                          \
      .note = note_,                                                                                        \
      .upstream_main = upstream_main_,                                                                      \
      .vendor = vendor_,                                                                                    \
  },
#include "src/generated/device_types.inc"
#undef DLMAP_DEVICE_TYPE
};

typedef struct memory_row {
  const char *name;
  bool host_accessible;
} memory_row;

/* Indexed by the kind's public value (spec `value:`), not by its place in the list. */
static const memory_row kMemoryKinds[DLMAP_MEMORY_KIND_COUNT] = {
#define DLMAP_MEMORY_KIND(ENUM, name_, host_accessible_, ...) \
  [DLMAP_MEMORY_##ENUM] = {.name = name_, .host_accessible = host_accessible_},
#include "src/generated/memory_kinds.inc"
#undef DLMAP_MEMORY_KIND
};

typedef struct convention_row {
  const char *name;
  dlmap_stream_meaning absent;
  bool has_handles;
  int64_t handles_above;
  int64_t handles_from; /* the least integer that can be a handle: one above handles_above and below it names none */
  const char *rule;
} convention_row;

/* Indexed by the convention's public value (spec `value:`). */
static const convention_row kConventions[DLMAP_STREAM_CONVENTION_COUNT] = {
#define DLMAP_STREAM_CONVENTION(ENUM, name_, ABSENT, has_handles_, handles_above_, rule_, handles_from_, ...) \
  [DLMAP_STREAM_CONVENTION_##ENUM] = {                                                                      \
      .name = name_,                                                                                        \
      .absent = DLMAP_STREAM_##ABSENT,                                                                      \
      .has_handles = has_handles_,                                                                          \
      .handles_above = handles_above_,                                                                      \
      .handles_from = handles_from_,                                                                        \
      .rule = rule_,                                                                                        \
  },
#include "src/generated/stream_conventions.inc"
#undef DLMAP_STREAM_CONVENTION
};

typedef struct stream_value_row {
  dlmap_stream_convention convention;
  int64_t value;
  dlmap_stream_meaning meaning;
} stream_value_row;

static const stream_value_row kStreamValues[] = {
#define DLMAP_STREAM_VALUE(CONVENTION, value_, MEANING, ...) \
  {.convention = DLMAP_STREAM_CONVENTION_##CONVENTION, .value = value_, .meaning = DLMAP_STREAM_##MEANING},
#include "src/generated/stream_values.inc"
#undef DLMAP_STREAM_VALUE
    {.convention = DLMAP_STREAM_CONVENTION_COUNT, .value = 0, .meaning = DLMAP_STREAM_INVALID} /* sentinel: a spec may list no values */
};

bool dlmap__stream_value_no_sync(int64_t stream) {
  for (size_t i = 0; i < sizeof kStreamValues / sizeof kStreamValues[0]; i++) {
    if (kStreamValues[i].meaning == DLMAP_STREAM_NO_SYNC && kStreamValues[i].value == stream) return true;
  }
  return false;
}

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
    /* Where handles are read, an integer below the least a handle can be (spec: handles_from) is an invented handle
     * that a runtime would dereference: refused here, before any runtime call sees it. */
    if (stream < convention->handles_from) {
      return dlmap_raise_stream_not_a_handle(err, stream, info->name, device_type, convention->handles_from);
    }
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
