/* dlmap core — platforms from the spec: their info, and which platform a runtime's platform_version
 * string names (the words are matched by the generated re2c scanner in name_lookup.re). */
#include <string.h>

#include "src/internal.h"
#include "src/name_lookup.h"

#define DLMAP_PLATFORM(ENUM, aliases, words, libraries, ...)                 \
  static const char *const kAliases_##ENUM[] = {DLMAP_UNPAREN aliases NULL}; \
  static const char *const kWords_##ENUM[] = {DLMAP_UNPAREN words NULL};     \
  static const char *const kLibraries_##ENUM[] = {DLMAP_UNPAREN libraries NULL};
#include "src/generated/platforms.inc"
#undef DLMAP_PLATFORM

/* Indexed by the platform's public value (spec `value:`), not by its place in the list. */
static const dlmap_platform_info kPlatforms[DLMAP_PLATFORM_COUNT] = {
#define DLMAP_PLATFORM(ENUM, aliases_, words_, libraries_, name_, BACKEND, doc_, device_count, error_string, ...) \
  [DLMAP_PLATFORM_##ENUM] = {                                                                                \
      .platform = DLMAP_PLATFORM_##ENUM,                                                                     \
      .name = name_,                                                                                         \
      .backend = DLMAP_BACKEND_##BACKEND,                                                                    \
      .doc = doc_,                                                                                           \
      .aliases = kAliases_##ENUM,                                                                            \
      .version_words = kWords_##ENUM,                                                                        \
      .libraries = kLibraries_##ENUM,                                                                        \
      .device_count_symbol = device_count,                                                                   \
      .error_string_symbol = error_string,                                                                   \
  },
#include "src/generated/platforms.inc"
#undef DLMAP_PLATFORM
};

const dlmap_platform_info *dlmap_platform_find(dlmap_platform platform) {
  if ((unsigned)platform >= (unsigned)DLMAP_PLATFORM_COUNT) return NULL;
  return &kPlatforms[platform];
}

const char *dlmap_platform_name(dlmap_platform platform) {
  const dlmap_platform_info *info = dlmap_platform_find(platform);
  return info != NULL ? info->name : NULL;
}

int32_t dlmap_platform_lookup_by_version(const char *platform_version, dlmap_platform *out, dlmap_error *err) {
  if (platform_version != NULL) {
    int found = dlmap__platform_from_words(platform_version, strlen(platform_version));
    if (found >= 0) {
      if (out != NULL) *out = (dlmap_platform)found;
      return DLMAP_OK;
    }
  }
  return dlmap_raise_unknown_gpu_platform(err, platform_version);
}
