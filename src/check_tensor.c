/* dlmap library — dlmap_check_tensor: the spec's judgement of one exported tensor's values (flags, strides, dtype,
 * device type, each in the tensor's version), and of a versioned tensor's stamped version (dlmap_check_version).
 * Conformance is judged here once: dlmap_check_export (check_export.c) reports these problems for a C producer, and
 * the Python checker (python/check/producer.py) for any Python producer, through the module's _judge_tensor
 * (python/conformance.c). What a profile decides (the struct a max_version gets, the version a legacy tensor is
 * judged in, read-only and stream policy) stays with each caller. The spec's flags and strides rule: versions.c. */
#include "dlmap/check.h"

#include <stdarg.h>
#include <stdio.h>

#include "src/internal.h"

/* The problem list being written: at most `capacity` kept, every one counted. */
typedef struct problem_list {
  dlmap_check_problem *problems;
  size_t capacity;
  size_t count;
} problem_list;

static void add(problem_list *list, const char *rule, const char *format, ...) {
  if (list->count < list->capacity) {
    dlmap_check_problem *p = &list->problems[list->count];
    va_list ap;
    p->rule = rule;
    va_start(ap, format);
    vsnprintf(p->detail, sizeof p->detail, format, ap);
    va_end(ap);
  }
  list->count++;
}

/* A version as the checkers' rows show it: "(1, 2)". */
typedef struct shown_version {
  char text[32];
} shown_version;

static shown_version show(dlmap_version v) {
  shown_version s;
  snprintf(s.text, sizeof s.text, "(%u, %u)", (unsigned)v.major, (unsigned)v.minor);
  return s;
}

/* P-flags: every set bit the spec does not know, or that is newer than the tensor's version. */
static void judge_flags(problem_list *list, uint64_t flags, const dlmap_version *version) {
  for (unsigned bit = 0; bit < 64; bit++) {
    if (!(flags >> bit & 1u)) continue;
    const char *name;
    dlmap_version introduced;
    if (!dlmap__flag_find(bit, &name, &introduced)) {
      add(list, "P-flags", "bit %u is not a flag the spec knows", bit);
    } else if (version != NULL && !dlmap__version_le(introduced, *version)) {
      add(list, "P-flags", "%s needs %s, the tensor is %s", name, show(introduced).text, show(*version).text);
    }
  }
}

/* P-dtype: the code, then the width, then the lanes, then the width's version. */
static void judge_dtype(problem_list *list, DLDataType dtype, const dlmap_version *version) {
  const dlmap_dtype_code_info *code = dlmap_dtype_code_find(dtype.code);
  dlmap_version introduced;
  if (code == NULL) {
    add(list, "P-dtype", "dtype code %u is not in the spec", (unsigned)dtype.code);
  } else if (!dlmap_dtype_width_valid(dtype.code, dtype.bits, &introduced)) {
    add(list, "P-dtype", "%s has no %u-bit width", code->name, (unsigned)dtype.bits);
  } else if (dtype.lanes < 1 || (!code->vector_lanes && dtype.lanes != 1)) {
    add(list, "P-dtype", "%s cannot have %u lanes", code->name, (unsigned)dtype.lanes);
  } else if (version != NULL && !dlmap__version_le(introduced, *version)) {
    add(list, "P-dtype", "%s %u-bit needs %s, the tensor is %s", code->name, (unsigned)dtype.bits,
        show(introduced).text, show(*version).text);
  }
}

bool dlmap_check_version(dlmap_version stamped, dlmap_check_problem *problem) {
  const dlmap_version from = dlmap__version(DLMAP_ABI_VERSIONED_FROM_MAJOR, DLMAP_ABI_VERSIONED_FROM_MINOR);
  const dlmap_version until = dlmap__version(DLMAP_ABI_VERSIONED_UNTIL_MAJOR, DLMAP_ABI_VERSIONED_UNTIL_MINOR);
  problem_list list = {problem, problem != NULL ? 1 : 0, 0};
  if (!dlmap__version_le(from, stamped) || dlmap__version_le(until, stamped)) {
    add(&list, "P-version", "%s is outside [%s, %s)", show(stamped).text, show(from).text, show(until).text);
  }
  return list.count == 0;
}

bool dlmap_check_device_type(int64_t device_type, const dlmap_version *version, dlmap_check_problem *problem) {
  const bool fits = device_type >= INT32_MIN && device_type <= INT32_MAX; /* DLDevice's field is 32 bits */
  const dlmap_device_info *device = fits ? dlmap_device_type_find((int32_t)device_type) : NULL;
  problem_list list = {problem, problem != NULL ? 1 : 0, 0};
  if (device == NULL) {
    add(&list, "P-device", "device type %lld is not in the spec", (long long)device_type);
  } else if (version != NULL && !dlmap__version_le(device->introduced, *version)) {
    add(&list, "P-device", "%s needs %s, the tensor is %s", device->name, show(device->introduced).text,
        show(*version).text);
  }
  return list.count == 0;
}

size_t dlmap_check_tensor(const DLTensor *tensor, uint64_t flags, const dlmap_version *version,
                          dlmap_check_problem *problems, size_t capacity) {
  problem_list list = {problems, problems != NULL ? capacity : 0, 0};
  dlmap_check_problem device;
  judge_flags(&list, flags, version);
  if (version != NULL && tensor->ndim != 0 && tensor->strides == NULL && dlmap__version_requires_non_null_strides(*version)) {
    add(&list, "P-strides", "NULL strides with ndim %d in %s", (int)tensor->ndim, show(*version).text);
  }
  judge_dtype(&list, tensor->dtype, version);
  if (!dlmap_check_device_type((int32_t)tensor->device.device_type, version, &device)) {
    add(&list, device.rule, "%s", device.detail);
  }
  return list.count;
}
