// Test support: calls into dlmap from C with arbitrary int values for enum parameters (defined in C, undefined
// behaviour in C++ for values outside an enumeration's range), so C++ tests can check the library's range guards.
#ifndef DLMAP_TESTS_C_CALLERS_H_
#define DLMAP_TESTS_C_CALLERS_H_

#include <stdbool.h>

#include "dlmap/dlmap.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *c_error_kind_name(int kind);
const char *c_placeholder_name(int placeholder);
/* dlmap_placeholder_type with the type written as an int; *out untouched when it returns false. */
bool c_placeholder_type(int placeholder, int *out);
const char *c_memory_kind_name(int kind);
bool c_memory_kind_host_accessible(int kind);
const char *c_stream_convention_name(int convention);
const char *c_stream_convention_rule(int convention);
const dlmap_platform_info *c_platform_get(int platform);
void c_platform_probe(int platform, dlmap_platform_status *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLMAP_TESTS_C_CALLERS_H_ */
