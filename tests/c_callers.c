/* Test support: C callers passing arbitrary int values as dlmap enum arguments (see c_callers.h). */
#include "tests/c_callers.h"

const char *c_error_kind_name(int kind) { return dlmap_error_kind_name((dlmap_error_kind)kind); }

const char *c_placeholder_name(int placeholder) { return dlmap_placeholder_name((dlmap_placeholder)placeholder); }

bool c_placeholder_type(int placeholder, int *out) {
  dlmap_arg_type type;
  if (!dlmap_placeholder_type((dlmap_placeholder)placeholder, &type)) return false;
  *out = (int)type;
  return true;
}

const char *c_memory_kind_name(int kind) { return dlmap_memory_kind_name((dlmap_memory_kind)kind); }

bool c_memory_kind_host_accessible(int kind) { return dlmap_memory_kind_host_accessible((dlmap_memory_kind)kind); }

const char *c_stream_convention_name(int convention) {
  return dlmap_stream_convention_name((dlmap_stream_convention)convention);
}

const char *c_stream_convention_rule(int convention) {
  return dlmap_stream_convention_rule((dlmap_stream_convention)convention);
}

const dlmap_platform_info *c_platform_get(int platform) { return dlmap_platform_find((dlmap_platform)platform); }

void c_platform_probe(int platform, dlmap_platform_status *out) { dlmap_platform_probe((dlmap_platform)platform, out); }
