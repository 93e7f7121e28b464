/* dlmap core — helpers shared between the hand-written source files (dlmap__ prefix; not public). */
#ifndef DLMAP_SRC_INTERNAL_H_
#define DLMAP_SRC_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dlmap/dlmap.h"

/* Removes one level of parentheses: the generated lists are written ("a", "b", ). */
#define DLMAP_UNPAREN(...) __VA_ARGS__

/* A bounded text writer over caller memory: never writes past cap, always NUL-terminates when cap > 0,
 * and remembers whether anything was cut. */
typedef struct dlmap__writer {
  char *buf;
  size_t cap;
  size_t len;
  bool truncated;
} dlmap__writer;

void dlmap__writer_init(dlmap__writer *w, char *buf, size_t cap);
void dlmap__put_bytes(dlmap__writer *w, const char *text, size_t n);
void dlmap__put_str(dlmap__writer *w, const char *text);
void dlmap__put_int(dlmap__writer *w, int64_t value);
void dlmap__put_uint(dlmap__writer *w, uint64_t value);
void dlmap__put_hex(dlmap__writer *w, uint64_t value);
void dlmap__put_version(dlmap__writer *w, dlmap_version v);
/* Replaces the last bytes with "..." when anything was cut; returns the final length. */
size_t dlmap__writer_finish(dlmap__writer *w);

/* invalid_argument ("{argument} {reason}"): a caller passed a value the API does not take. */
static inline int32_t dlmap__invalid_argument(dlmap_error *err, const char *argument, const char *reason) {
  return dlmap_raise_invalid_argument(err, argument, reason);
}

/* The spec's platform rows, indexed by the platform's value (src/platform_table.c), and the row of a platform, NULL out
 * of range: what dlmap_platform_find returns, for the GPU backend, which sits below the public platform functions
 * (src/platforms.c) and never calls them. Inline: the exchange paths look platforms up on every call. */
extern const dlmap_platform_info dlmap__platforms[DLMAP_PLATFORM_COUNT];
static inline const dlmap_platform_info *dlmap__platform_info(dlmap_platform platform) {
  return (unsigned)platform < (unsigned)DLMAP_PLATFORM_COUNT ? &dlmap__platforms[platform] : NULL;
}

/* A caller's struct, read by its struct_size (DLMAP__STRUCT_READ): src/struct_size.h. */
#include "src/struct_size.h"

/* A dlmap_copy_mode field: one of the three values, else invalid_argument. */
static inline int32_t dlmap__check_copy_mode(int32_t copy, dlmap_error *err) {
  if (copy == DLMAP_COPY_IF_NEEDED || copy == DLMAP_COPY_ALWAYS || copy == DLMAP_COPY_NEVER) return DLMAP_OK;
  return dlmap__invalid_argument(err, "copy", "must be DLMAP_COPY_IF_NEEDED, DLMAP_COPY_ALWAYS or DLMAP_COPY_NEVER");
}

/* A device type and id as a message's device placeholder (dlmap_arg_device) takes them. */
static inline DLDevice dlmap__device(int32_t device_type, int32_t device_id) {
  DLDevice device;
  device.device_type = (DLDeviceType)device_type;
  device.device_id = device_id;
  return device;
}

/* Whether some stream convention of the spec reads this stream value as no_sync (DLPack's -1): what
 * export.stream_no_sync accepts on every device type. */
bool dlmap__stream_value_no_sync(int64_t stream);

static inline dlmap_version dlmap__version(uint32_t major, uint32_t minor) {
  dlmap_version v;
  v.major = major;
  v.minor = minor;
  return v;
}

/* a <= b */
static inline bool dlmap__version_le(dlmap_version a, dlmap_version b) {
  return a.major < b.major || (a.major == b.major && a.minor <= b.minor);
}

/* Whether a tensor of version v must have non-NULL strides when ndim != 0: a listed version at or below v names
 * non_null_strides in its `requires` (src/versions.c). */
bool dlmap__version_requires_non_null_strides(dlmap_version v);

/* The spec's flag of this bit (0-63): its name and the version that introduced it; false for a bit it does not list. */
bool dlmap__flag_find(unsigned bit, const char **name, dlmap_version *introduced);

/* dlmap_check_representable for a device already looked up and a dtype already validated (export and import
 * have done both, so they skip the second lookup and validation). */
int32_t dlmap__check_in_version(const dlmap_device_info *device, DLDataType dtype, uint64_t flags, dlmap_version v,
                                dlmap_error *err);

#endif /* DLMAP_SRC_INTERNAL_H_ */
