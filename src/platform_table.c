/* dlmap core — the spec's platform rows (src/generated/platforms.inc) as dlmap_platform_info, for the public
 * platform functions (platforms.c) and the GPU backend below them, which reads them without calling dlmap.h. */
#include "src/internal.h"

#define DLMAP_PLATFORM(ENUM, aliases, words, libraries, ...)                 \
  static const char *const kAliases_##ENUM[] = {DLMAP_UNPAREN aliases NULL}; \
  static const char *const kWords_##ENUM[] = {DLMAP_UNPAREN words NULL};     \
  static const char *const kLibraries_##ENUM[] = {DLMAP_UNPAREN libraries NULL};
#include "src/generated/platforms.inc"
#undef DLMAP_PLATFORM

/* Indexed by the platform's public value (spec `value:`), not by its place in the list. */
const dlmap_platform_info dlmap__platforms[DLMAP_PLATFORM_COUNT] = {
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
