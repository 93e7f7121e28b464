/* dlmap CLI — every name `dlmap explain` accepts, read from the generated tables (device types with their earlier
 * spellings and aliases, platforms with their aliases, data type names, error ids), for "did you mean". */
#include "tools/cli.h"

static void each(cli_suggestions *s, const char *const *names, const char *kind) {
  for (size_t i = 0; names != NULL && names[i] != NULL; i++) cli_suggest_consider(s, names[i], kind);
}

void cli_suggest_spec_names(cli_suggestions *s) {
  const dlmap_device_info *d;
  for (size_t i = 0; (d = dlmap_device_type_at(i)) != NULL; i++) {
    cli_suggest_consider(s, d->name, "device type");
    each(s, d->spellings, "device type");
    each(s, d->aliases, "device type");
  }
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) {
    const dlmap_platform_info *platform = dlmap_platform_find((dlmap_platform)p);
    cli_suggest_consider(s, platform->name, "platform");
    each(s, platform->aliases, "platform");
  }
  /* Data type names are per (code, bits): every width the spec gives a name. */
  const dlmap_dtype_code_info *code;
  for (size_t i = 0; (code = dlmap_dtype_code_at(i)) != NULL; i++) {
    for (unsigned bits = 1; bits <= 255; bits++) {
      const char *name = dlmap_dtype_width_name(code->code, (uint8_t)bits);
      if (name != NULL) cli_suggest_consider(s, name, "data type");
    }
  }
  const dlmap_error_info *e;
  for (size_t i = 0; (e = dlmap_error_at(i)) != NULL; i++) cli_suggest_consider(s, e->id, "error");
}
