/* dlmap core — DLPack versions from the spec: comparison, the struct each version uses, and whether a
 * device type, dtype or flag word can be expressed in a given version. */
#include "src/internal.h"

static const dlmap_version_info kVersions[] = {
#define DLMAP_VERSION(major_, minor_, STRUCT, note_, ...) \
  {.version = {.major = major_, .minor = minor_}, .structure = DLMAP_STRUCT_##STRUCT, .note = note_},
#include "src/generated/versions.inc"
#undef DLMAP_VERSION
};

typedef struct flag_row {
  uint64_t bit;
  const char *name;
  dlmap_version introduced;
} flag_row;

static const flag_row kFlags[] = {
#define DLMAP_FLAG_ROW(NAME, bit_, major_, minor_, ...) \
  {.bit = UINT64_C(1) << (bit_), .name = #NAME, .introduced = {.major = major_, .minor = minor_}},
#include "src/generated/flags.inc"
#undef DLMAP_FLAG_ROW
};

/* Every listed version with whether its `requires` names non_null_strides, oldest first. */
typedef struct strides_rule_row {
  dlmap_version version;
  bool non_null_strides;
} strides_rule_row;

static const strides_rule_row kStridesRule[] = {
#define DLMAP_VERSION(major_, minor_, STRUCT, note_, non_null_strides_, ...) \
  {.version = {.major = major_, .minor = minor_}, .non_null_strides = (non_null_strides_)},
#include "src/generated/versions.inc"
#undef DLMAP_VERSION
};

bool dlmap__version_requires_non_null_strides(dlmap_version v) {
  for (size_t i = 0; i < sizeof kStridesRule / sizeof kStridesRule[0]; i++) {
    if (kStridesRule[i].non_null_strides && dlmap__version_le(kStridesRule[i].version, v)) return true;
  }
  return false;
}

bool dlmap__flag_find(unsigned bit, const char **name, dlmap_version *introduced) {
  /* bit < 64: its one caller (check_tensor.c's judge_flags) walks the bits of a uint64_t */
  for (size_t i = 0; i < sizeof kFlags / sizeof kFlags[0]; i++) {
    if (kFlags[i].bit == UINT64_C(1) << bit) {
      *name = kFlags[i].name;
      *introduced = kFlags[i].introduced;
      return true;
    }
  }
  return false;
}

int dlmap_version_compare(dlmap_version a, dlmap_version b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  return 0;
}

bool dlmap_version_is_known(dlmap_version v) {
  for (size_t i = 0; i < sizeof kVersions / sizeof kVersions[0]; i++) {
    if (dlmap_version_compare(kVersions[i].version, v) == 0) return true;
  }
  return false;
}

dlmap_struct_kind dlmap_version_struct(dlmap_version v) {
  /* A switch over the listed versions rather than a walk of kVersions: import asks this of every tensor. */
  switch ((uint64_t)v.major << 32 | v.minor) {
#define DLMAP_VERSION(major, minor, STRUCT, ...)    \
  case (uint64_t)(major) << 32 | (uint64_t)(minor): \
    return DLMAP_STRUCT_##STRUCT;
#include "src/generated/versions.inc"
#undef DLMAP_VERSION
    default:
      break;
  }
  /* A newer minor of a major dlmap reads as versioned (minor bumps only add enum values). */
  const dlmap_version from = dlmap__version(DLMAP_ABI_VERSIONED_FROM_MAJOR, DLMAP_ABI_VERSIONED_FROM_MINOR);
  const dlmap_version until = dlmap__version(DLMAP_ABI_VERSIONED_UNTIL_MAJOR, DLMAP_ABI_VERSIONED_UNTIL_MINOR);
  if (dlmap__version_le(from, v) && dlmap_version_compare(v, until) < 0) return DLMAP_STRUCT_VERSIONED;
  return DLMAP_STRUCT_NONE;
}

dlmap_version dlmap_version_current(void) {
  return dlmap__version(DLMAP_ABI_CURRENT_MAJOR, DLMAP_ABI_CURRENT_MINOR);
}

#define DLMAP_STRINGIFY_(x) #x
#define DLMAP_STRINGIFY(x) DLMAP_STRINGIFY_(x)
const char *dlmap_version_string(void) {
  return DLMAP_STRINGIFY(DLMAP_VERSION_MAJOR) "." DLMAP_STRINGIFY(DLMAP_VERSION_MINOR) "." DLMAP_STRINGIFY(
      DLMAP_VERSION_PATCH);
}

const dlmap_version_info *dlmap_version_at(size_t index) {
  return index < sizeof kVersions / sizeof kVersions[0] ? &kVersions[index] : NULL;
}

bool dlmap_device_type_in_version(int32_t device_type, dlmap_version v) {
  const dlmap_device_info *info = dlmap_device_type_find(device_type);
  return info != NULL && dlmap__version_le(info->introduced, v);
}

bool dlmap_dtype_in_version(DLDataType dtype, dlmap_version v) {
  dlmap_version introduced;
  const dlmap_dtype_code_info *code = dlmap_dtype_code_find(dtype.code);
  return code != NULL && dlmap__version_le(code->introduced, v) &&
         dlmap_dtype_width_valid(dtype.code, dtype.bits, &introduced) && dlmap__version_le(introduced, v);
}

/* The first set bit of flags that is unknown or too new for v, as its row (NULL: unknown bit). */
static bool first_bad_flag(uint64_t flags, dlmap_version v, const flag_row **bad) {
  for (size_t i = 0; i < sizeof kFlags / sizeof kFlags[0]; i++) {
    if ((flags & kFlags[i].bit) && !dlmap__version_le(kFlags[i].introduced, v)) {
      *bad = &kFlags[i];
      return true;
    }
  }
  *bad = NULL;
  return (flags & ~DLMAP_FLAGS_KNOWN) != 0;
}

bool dlmap_flags_in_version(uint64_t flags, dlmap_version v) {
  const flag_row *bad;
  return !first_bad_flag(flags, v, &bad);
}

static int32_t check_in_version(const dlmap_device_info *device, DLDataType dtype, bool validate_dtype,
                                uint64_t flags, dlmap_version v, dlmap_error *err);

int32_t dlmap_check_representable(int32_t device_type, DLDataType dtype, uint64_t flags, dlmap_version v,
                                  dlmap_error *err) {
  const dlmap_device_info *device;
  int32_t status = dlmap_device_type_lookup(device_type, &device, err);
  if (status != DLMAP_OK) return status;
  return check_in_version(device, dtype, true, flags, v, err);
}

int32_t dlmap__check_in_version(const dlmap_device_info *device, DLDataType dtype, uint64_t flags, dlmap_version v,
                                dlmap_error *err) {
  return check_in_version(device, dtype, false, flags, v, err);
}

/* The device type, then the dtype (validated first when validate_dtype), then the flags. */
static int32_t check_in_version(const dlmap_device_info *device, DLDataType dtype, bool validate_dtype,
                                uint64_t flags, dlmap_version v, dlmap_error *err) {
  if (!dlmap__version_le(device->introduced, v)) {
    return dlmap_raise_device_type_not_in_version(err, device->name, device->value, v, device->introduced);
  }
  if (validate_dtype) {
    const int32_t status = dlmap_dtype_validate(dtype, err);
    if (status != DLMAP_OK) return status;
  }
  if (!dlmap_dtype_in_version(dtype, v)) {
    char name[64];
    dlmap_version introduced = dlmap_dtype_code_find(dtype.code)->introduced, width;
    if (dlmap_dtype_width_valid(dtype.code, dtype.bits, &width) && dlmap__version_le(introduced, width)) {
      introduced = width;
    }
    dlmap_dtype_format(dtype, name, sizeof name);
    return dlmap_raise_dtype_not_in_version(err, name, v, introduced);
  }
  const flag_row *bad;
  if (first_bad_flag(flags, v, &bad)) {
    if (bad != NULL) {
      return dlmap_raise_flag_not_in_version(err, bad->name, v, bad->introduced);
    }
    return dlmap_raise_flags_unknown(err, flags, flags & ~DLMAP_FLAGS_KNOWN);
  }
  return DLMAP_OK;
}
