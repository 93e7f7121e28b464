/* dlmap core — the profile in force: the generated policy rows (src/generated/profile.inc) as the tables export,
 * import, __dlpack_device__, the binding and the CLI read. Nothing here names a device type, version or kind. */
#include <string.h>

#include "src/internal.h"

/* The rows write ERROR as an error enumerator suffix, and OK where there is none. */
#define DLMAP_ERR_OK DLMAP_OK

/* profile.inc holds twelve kinds of rows; each table below defines the one macro it reads (the .inc gives the others
 * empty defaults and undefines them all at its end). The settings: one designated initialiser, a field a row. */
#define DLMAP_PROFILE_VERSION(major_, minor_) {.major = major_, .minor = minor_}
#define DLMAP_PROFILE_SETTING(field_, value_, ...) .field_ = value_,
static const dlmap_profile_info kProfile = {
#include "src/generated/profile.inc"
};
#undef DLMAP_PROFILE_VERSION

const dlmap_profile_info *dlmap_profile_current(void) { return &kProfile; }

/* ---- per device type, in the device table's order ---- */

#define DLMAP_PROFILE_DEVICE(value_, export_target_, export_source_, import_accepted_, ...) \
  {                                                                                      \
      .value = value_,                                                                   \
      .policy = {.export_target = export_target_,                                        \
                 .export_source = export_source_,                                        \
                 .import_accepted = import_accepted_},                                   \
  },
typedef struct device_row {
  int32_t value;
  dlmap_device_policy policy;
} device_row;
static const device_row kDevices[] = {
#include "src/generated/profile.inc"
};

dlmap_device_policy dlmap_profile_device_policy(int32_t device_type) {
  /* The rows follow the device table, so the entry's index in it is the row's. */
  const dlmap_device_info *device = dlmap_device_type_find(device_type);
  const dlmap_device_policy none = {false, false, false};
  if (device == NULL) return none;
  const size_t index = (size_t)(device - dlmap_device_type_at(0));
  return index < sizeof kDevices / sizeof kDevices[0] && kDevices[index].value == device_type ? kDevices[index].policy
                                                                                              : none;
}

/* ---- max_version ranges ---- */

typedef struct version_range {
  bool has_until;
  dlmap_version until;
  dlmap_struct_kind structure;
  int32_t error;
} version_range;
#define DLMAP_PROFILE_VERSION_RANGE(has_until_, until_major, until_minor, STRUCT, ERROR, ...) \
  {                                                                                       \
      .has_until = has_until_,                                                            \
      .until = {.major = until_major, .minor = until_minor},                              \
      .structure = DLMAP_STRUCT_##STRUCT,                                                 \
      .error = DLMAP_ERR_##ERROR,                                                         \
  },
static const version_range kRanges[] = {
#include "src/generated/profile.inc"
};

int32_t dlmap_profile_struct_lookup(bool has_max_version, dlmap_version max_version, dlmap_struct_kind *out,
                                 dlmap_error *err) {
  if (!has_max_version) {
    *out = kProfile.absent_struct;
    return DLMAP_OK;
  }
  dlmap_version from = {0, 0};
  for (size_t i = 0; i < sizeof kRanges / sizeof kRanges[0]; i++) {
    const version_range *range = &kRanges[i];
    if (range->has_until && dlmap_version_compare(max_version, range->until) >= 0) {
      from = range->until;
      continue;
    }
    if (range->error != DLMAP_OK) {
      return DLMAP_RAISE(err, range->error,
                         dlmap_arg_version(DLMAP_ARG_MIN_VERSION, range->has_until ? range->until : from),
                         dlmap_arg_version(DLMAP_ARG_MAX_VERSION, max_version));
    }
    *out = range->structure;
    return DLMAP_OK;
  }
  *out = kProfile.absent_struct; /* unreachable: the generator requires an open last range */
  return DLMAP_OK;
}

bool dlmap_profile_range_until_at(size_t index, dlmap_version *until) {
  if (index >= sizeof kRanges / sizeof kRanges[0] || !kRanges[index].has_until) return false;
  *until = kRanges[index].until;
  return true;
}

/* ---- __dlpack_device__ rules ---- */

#define DLMAP_PROFILE_DEVICE_RULE(PLATFORM, MEMORY, device_type_, ERROR, ...) \
  {                                                                     \
      .platform = DLMAP_PLATFORM_##PLATFORM,                            \
      .memory = DLMAP_MATCH_##MEMORY,                                   \
      .device_type = device_type_,                                      \
      .error = DLMAP_ERR_##ERROR,                                       \
  },
static const dlmap_device_rule kRules[] = {
#include "src/generated/profile.inc"
    {DLMAP_PLATFORM_COUNT, DLMAP_MATCH_ANY, -1, DLMAP_OK} /* sentinel: a profile may have no rules */
};

const dlmap_device_rule *dlmap_profile_device_rule_at(size_t index) {
  return index + 1 < sizeof kRules / sizeof kRules[0] ? &kRules[index] : NULL; /* the last row ends the list */
}

/* ---- which profile each error's kind, text and status word come from ---- */

#define DLMAP_PROFILE_ERROR_ORIGIN(ERROR, kind_, message_, status_, ...) \
  {                                                                     \
      .code = DLMAP_ERR_##ERROR,                                        \
      .origin = {.kind = kind_, .message = message_, .status = status_}, \
  },
typedef struct origin_row {
  int32_t code;
  dlmap_error_origin origin;
} origin_row;
static const origin_row kOrigins[] = {
#include "src/generated/profile.inc"
    {DLMAP_OK, {NULL, NULL, NULL}} /* sentinel: a profile may replace no error's text */
};

dlmap_error_origin dlmap_profile_error_origin(int32_t code) {
  size_t i = 0;
  while (i + 1 < sizeof kOrigins / sizeof kOrigins[0] && kOrigins[i].code != code) i++;
  return kOrigins[i].origin; /* the sentinel's: all NULL */
}

/* ---- import.dtypes and import.device_names ---- */

#define DLMAP_PROFILE_IMPORT_DTYPE(code_, bits_, lanes_, ...) {.code = code_, .bits = bits_, .lanes = lanes_},
typedef struct dtype_row {
  uint8_t code, bits;
  uint16_t lanes; /* the one lane count the dtype is imported with; 0: any (import.scalar's) */
} dtype_row;
static const dtype_row kImportDtypes[] = {
#include "src/generated/profile.inc"
    {0, 0, 0} /* sentinel: a profile may list none (bits 0 is never a width) */
};
#define IMPORT_DTYPE_END (sizeof kImportDtypes / sizeof kImportDtypes[0]) /* the sentinel's index + 1 */

/* The first field of a dtype that import.dtypes does not list, in the order a refusal is told: code, bits, lanes. */
typedef enum refused_field { REFUSED_NONE, REFUSED_CODE, REFUSED_BITS, REFUSED_LANES } refused_field;

static refused_field refusal(DLDataType dtype) {
  refused_field field = REFUSED_CODE;
  for (size_t i = 0; i + 1 < IMPORT_DTYPE_END; i++) {
    const dtype_row *row = &kImportDtypes[i];
    if (row->code != dtype.code) continue;
    if (row->bits != dtype.bits) {
      if (field == REFUSED_CODE) field = REFUSED_BITS;
      continue;
    }
    if (row->lanes == 0 || row->lanes == dtype.lanes) return REFUSED_NONE;
    field = REFUSED_LANES; /* one row per (code, bits): no other row can list it */
  }
  return field;
}

bool dlmap_profile_import_dtype_allowed(DLDataType dtype) {
  return !kProfile.import_dtypes_listed || refusal(dtype) == REFUSED_NONE;
}

bool dlmap_profile_import_lanes_listed(uint8_t code) {
  for (size_t i = 0; i + 1 < IMPORT_DTYPE_END; i++) {
    if (kImportDtypes[i].code == code && kImportDtypes[i].lanes != 0) return true;
  }
  return false;
}

#define DLMAP_PROFILE_IMPORT_CODE_NAME(code_, label_, ...) {.code = code_, .label = label_},
typedef struct code_name_row {
  uint8_t code;
  const char *label;
} code_name_row;
static const code_name_row kImportCodeNames[] = {
#include "src/generated/profile.inc"
    {0, NULL} /* sentinel: a profile may name no code its own way */
};

/* import.dtype_code_names' label for a code, else the spec's enumerator (a listed code always has one). */
static const char *code_label(uint8_t code) {
  for (size_t i = 0; i + 1 < sizeof kImportCodeNames / sizeof kImportCodeNames[0]; i++) {
    if (kImportCodeNames[i].code == code) return kImportCodeNames[i].label;
  }
  return dlmap_dtype_code_name(code);
}

int32_t dlmap_profile_import_dtype_refuse(DLDataType dtype, dlmap_error *err) {
  char name[64];
  dlmap_dtype_format(dtype, name, sizeof name);
  if (!kProfile.dtype_errors_per_field) return dlmap_raise_dtype_not_imported(err, name);
  switch (refusal(dtype)) {
    case REFUSED_CODE: return dlmap_raise_dtype_code_not_imported(err, dtype.code, name);
    case REFUSED_BITS:
      return dlmap_raise_dtype_bits_not_imported(err, code_label(dtype.code), dtype.bits, dtype.code, name);
    default:
      return dlmap_raise_dtype_lanes_not_imported(err, code_label(dtype.code), dtype.lanes, dtype.bits, name);
  }
}

#define DLMAP_PROFILE_ASK_RETRY_DROP(KEYWORD, ...) DLMAP_ASK_KEYWORD_##KEYWORD,
static const uint32_t kAskRetryDrops[] = {
#include "src/generated/profile.inc"
    0 /* sentinel: a profile may list no retry ladder */
};

uint32_t dlmap_profile_ask_retry_drop_at(size_t index) {
  return index + 1 < sizeof kAskRetryDrops / sizeof kAskRetryDrops[0] ? kAskRetryDrops[index] : 0;
}

#define DLMAP_PROFILE_ASK_ORDER(KEYWORD, ...) DLMAP_ASK_KEYWORD_##KEYWORD,
static const uint32_t kAskOrder[] = {
#include "src/generated/profile.inc"
};

uint32_t dlmap_profile_ask_keyword_at(size_t index) {
  return index < sizeof kAskOrder / sizeof kAskOrder[0] ? kAskOrder[index] : 0;
}

#define DLMAP_PROFILE_DEVICE_NAME(name_, device_type_, ...) {.name = name_, .device_type = device_type_},
static const dlmap_device_name kDeviceNames[] = {
#include "src/generated/profile.inc"
    {NULL, -1} /* sentinel: a profile may list none */
};

const dlmap_device_name *dlmap_profile_device_name_at(size_t index) {
  return index + 1 < sizeof kDeviceNames / sizeof kDeviceNames[0] ? &kDeviceNames[index] : NULL;
}

#define DLMAP_PROFILE_DEVICE_NAME_WITHOUT_TYPE(name_, ...) name_,
static const char *const kNamesWithoutType[] = {
#include "src/generated/profile.inc"
    NULL /* sentinel: a profile may list none */
};

bool dlmap_profile_device_name_without_type(const char *name, size_t len) {
  for (size_t i = 0; kNamesWithoutType[i] != NULL; i++) {
    if (strlen(kNamesWithoutType[i]) == len && memcmp(kNamesWithoutType[i], name, len) == 0) return true;
  }
  return false;
}

typedef struct device_text {
  int32_t device_type;
  const char *text;
} device_text;
#define DLMAP_PROFILE_DEVICE_TEXT(device_type_, text_, ...) {.device_type = device_type_, .text = text_},
static const device_text kDeviceTexts[] = {
#include "src/generated/profile.inc"
    {-1, NULL} /* sentinel: a profile may word none */
};

const char *dlmap_profile_device_text(int32_t device_type) {
  for (size_t i = 0; kDeviceTexts[i].text != NULL; i++) {
    if (kDeviceTexts[i].device_type == device_type) return kDeviceTexts[i].text;
  }
  return NULL;
}
