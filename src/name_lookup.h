/* dlmap core — the re2c matchers' private entry points (the public lookups are in dlmap.h). */
#ifndef DLMAP_SRC_NAME_LOOKUP_H_
#define DLMAP_SRC_NAME_LOOKUP_H_

#include <stddef.h>

/* The platform (a dlmap_platform) named by the first spec platform whose version word occurs in
 * text[0, len), or -1 when none does. */
int dlmap__platform_from_words(const char *text, size_t len);

/* The platform (a dlmap_platform) whose spec name or alias is exactly name[0, len), or -1 when none is. */
int dlmap__platform_from_name(const char *name, size_t len);

#endif /* DLMAP_SRC_NAME_LOOKUP_H_ */
