/* dlmap CLI — `dlmap explain <what>`: a device type (value or any spelling), platform, data type or
 * error (code or id), printed from the spec's tables with the errors a user would meet. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

static void print_list(const char *label, const char *const *items) {
  if (items[0] == NULL) return;
  printf("  %-16s", label);
  for (size_t i = 0; items[i] != NULL; i++) printf("%s%s", i ? ", " : "", items[i]);
  printf("\n");
}

/* The DLPack version that introduced a value, and whether only DLPack's main branch has it. */
static void print_since(dlmap_version introduced, bool upstream_main) {
  printf("  %-16s%u.%u", "since DLPack:", introduced.major, introduced.minor);
  if (upstream_main) {
    printf(" (on DLPack's main branch after the v%u.%u tag: the %u.%u release lacks it)", introduced.major,
           introduced.minor, introduced.major, introduced.minor);
  }
  printf("\n");
}

static void explain_profile(const dlmap_device_info *d, const dlmap_platform_info *platform,
                            const dlmap_platform_status *status);

/* The device entry, whether this machine serves it, and what the profile in force does with it. */
static void explain_device(const dlmap_device_info *d) {
  const dlmap_platform_info *platform = dlmap_platform_find(d->platform);
  dlmap_platform_status status;
  dlmap_platform_probe(d->platform, &status);

  printf("Device type %d: %s\n", d->value, d->name);
  cli_wrap(stdout, "  ", d->doc);
  print_list("earlier names:", d->spellings);
  print_list("aliases:", d->aliases);
  if (d->vendor) printf("  %-16s%s\n", "since DLPack:", "none: a vendor extension, in no DLPack release");
  else print_since(d->introduced, d->upstream_main);
  printf("  %-16s%s (%s)\n", "platform:", platform->name,
         platform->backend == DLMAP_BACKEND_NONE ? "no dlmap backend" : platform->backend == DLMAP_BACKEND_CPU
                                                                          ? "cpu backend"
                                                                          : "gpu backend");
  printf("  %-16s%s (%s)\n", "memory:", dlmap_memory_kind_name(d->memory),
         dlmap_memory_kind_host_accessible(d->memory) ? "host-accessible" : "needs a copy to reach the host");
  printf("  %-16s%s: %s\n", "stream:", dlmap_stream_convention_name(d->stream),
         dlmap_stream_convention_rule(d->stream));
  if (d->note[0] != '\0') cli_wrap(stdout, "  note: ", d->note);

  if (status.available) {
    printf("  %-16savailable (%d device%s)\n", "this machine:", status.device_count,
           status.device_count == 1 ? "" : "s");
  } else {
    printf("  %-16snot available: %s\n", "this machine:", status.reason);
  }
  explain_profile(d, platform, &status);
}

/* What the profile in force does with a device type in each direction, and the error each refusal raises. */
static void explain_profile(const dlmap_device_info *d, const dlmap_platform_info *platform,
                            const dlmap_platform_status *status) {
  const dlmap_device_policy policy = dlmap_profile_device_policy(d->value);
  printf("\nUnder profile %s:\n", dlmap_profile_current()->name);
  printf("  %-30s%s\n", "export to it (dl_device):",
         policy.export_target ? "accepted" : "refused (export_unsupported_device_type)");
  if (policy.export_target) printf("  %-30splatform %s\n", "  maps to:", platform->name);
  printf("  %-30s%s\n", "export an array on it:", policy.export_source ? "accepted" : "refused (source_not_exchangeable)");
  printf("  %-30s%s\n", "import a tensor on it:",
         policy.import_accepted ? "accepted" : "refused (import_unsupported_device_type)");
  printf("  %-30s", "__dlpack_device__ reports it:");
  int rules = 0;
  const dlmap_device_rule *rule;
  for (size_t i = 0; (rule = dlmap_profile_device_rule_at(i)) != NULL; i++) {
    if (rule->device_type != d->value) continue;
    printf("%sfor platform %s%s", rules++ ? "; " : "", dlmap_platform_find(rule->platform)->name,
           rule->memory == DLMAP_MATCH_PINNED ? " in pinned host memory"
           : rule->memory == DLMAP_MATCH_UNPINNED ? " outside pinned host memory" : "");
  }
  printf("%s\n", rules ? "" : "never");
  if ((policy.export_target || policy.import_accepted) && !status->available) {
    printf("  %-30sneeds platform %s, which is not available here: %s\n", "a copy or move:", platform->name,
           status->reason);
  }

  dlmap_error err;
  if (!policy.export_target) {
    dlmap_raise_export_unsupported_device_type(&err, d->value);
    printf("\nExporting to it (__dlpack__ with dl_device=(%d, 0)) raises %s:\n", d->value, dlmap_error_kind_name(err.kind));
    cli_print_error_page(stdout, dlmap_error_describe(err.code), err.message);
  }
  if (!policy.export_source) {
    const DLDevice device = {(DLDeviceType)d->value, 0};
    dlmap_raise_source_not_exchangeable(&err, device);
    printf("\nExporting an array on it (__dlpack__) raises %s:\n", dlmap_error_kind_name(err.kind));
    cli_print_error_page(stdout, dlmap_error_describe(err.code), err.message);
  }
  if (!policy.import_accepted) {
    char array[64];
    snprintf(array, sizeof array, "a %s tensor", d->name);
    dlmap_raise_import_unsupported_device_type(&err, d->value, array);
    printf("\nImporting a tensor on it (from_dlpack) raises %s:\n", dlmap_error_kind_name(err.kind));
    cli_print_error_page(stdout, dlmap_error_describe(err.code), err.message);
  }
}

static void explain_platform(dlmap_platform p) {
  const dlmap_platform_info *platform = dlmap_platform_find(p);
  dlmap_platform_status status;
  dlmap_platform_probe(p, &status);
  printf("Platform %s\n", platform->name);
  cli_wrap(stdout, "  ", platform->doc);
  print_list("aliases:", platform->aliases);
  print_list("version words:", platform->version_words);
  print_list("runtime:", platform->libraries);
  printf("  %-16s", "device types:");
  int shown = 0;
  for (size_t i = 0; dlmap_device_type_at(i) != NULL; i++) {
    const dlmap_device_info *d = dlmap_device_type_at(i);
    if (d->platform == p) printf("%s%s (%d)", shown++ ? ", " : "", d->name, d->value);
  }
  printf("%s\n", shown ? "" : "none");
  if (status.available) {
    printf("  %-16savailable (%d device%s)\n", "this machine:", status.device_count,
           status.device_count == 1 ? "" : "s");
  } else {
    printf("  %-16s%s: %s\n", "this machine:", status.built ? "built, not available" : "not served", status.reason);
  }
}

static void explain_dtype(DLDataType dtype) {
  const dlmap_dtype_code_info *code = dlmap_dtype_code_find(dtype.code);
  char name[64], valid[128];
  dlmap_version since = code->introduced;
  dlmap_dtype_width_valid(dtype.code, dtype.bits, &since);
  dlmap_dtype_format(dtype, name, sizeof name);
  dlmap_dtype_format_valid_bits(dtype.code, valid, sizeof valid);
  printf("Data type %s: code %u (%s), bits %u, lanes %u\n", name, dtype.code, code->name, dtype.bits, dtype.lanes);
  cli_wrap(stdout, "  ", code->doc);
  print_since(since, code->upstream_main);
  printf("  %-16s%s\n", "widths of code:", valid);
  printf("  %-16s%s\n", "lanes:", code->vector_lanes ? "1 or more (vectors allowed)" : "exactly 1");
  if (dtype.bits < 8) printf("  %-16s%s\n", "storage:", "sub-byte: packed, or padded with IS_SUBBYTE_TYPE_PADDED");
}

/* A whole-string decimal integer. */
static bool parse_int(const char *text, long long *out) {
  char *end;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0) return false;
  *out = value;
  return true;
}

/* The kinds of entry `explain` finds, and the qualifier (`explain device:201`) that asks for one kind only. */
typedef enum { KIND_DEVICE, KIND_PLATFORM, KIND_DTYPE, KIND_ERROR, KIND_COUNT } entry_kind;
static const char *const kQualifiers[KIND_COUNT] = {"device", "platform", "dtype", "error"};

/* One entry a name or number matched. */
typedef struct match {
  entry_kind kind;
  const dlmap_device_info *device;
  dlmap_platform platform;
  DLDataType dtype;
  const dlmap_error_info *error;
} match;

/* What a match is, for the line that lists several: "device type 201 (kDLAcmeNPU)". */
static void print_match_label(const match *m) {
  char name[64];
  switch (m->kind) {
    case KIND_DEVICE:
      printf("device type %d (%s)", m->device->value, m->device->name);
      break;
    case KIND_PLATFORM:
      printf("platform %s", dlmap_platform_find(m->platform)->name);
      break;
    case KIND_DTYPE:
      dlmap_dtype_format(m->dtype, name, sizeof name);
      printf("data type %s", name);
      break;
    case KIND_ERROR:
    case KIND_COUNT:
      printf("error code %d (%s)", m->error->code, m->error->id);
      break;
  }
}

static void print_match(const match *m) {
  switch (m->kind) {
    case KIND_DEVICE:
      explain_device(m->device);
      break;
    case KIND_PLATFORM:
      explain_platform(m->platform);
      break;
    case KIND_DTYPE:
      explain_dtype(m->dtype);
      break;
    case KIND_ERROR:
    case KIND_COUNT:
      cli_print_error_page(stdout, m->error, NULL);
      break;
  }
}

static int usage(void) {
  fprintf(stderr,
          "usage: %s explain [device:|platform:|dtype:|error:]<device type value or name | platform | data type | "
          "error code or id>\n",
          DLMAP_CLI_NAME);
  return CLI_USAGE;
}

int cli_explain(int argc, char **argv) {
  if (argc != 1) return usage();
  const char *what = argv[0];
  /* An optional qualifier: only entries of that kind. */
  int only = -1;
  const char *colon = strchr(what, ':');
  if (colon != NULL) {
    for (int k = 0; k < KIND_COUNT; k++) {
      if (strlen(kQualifiers[k]) == (size_t)(colon - what) && strncmp(what, kQualifiers[k], (size_t)(colon - what)) == 0) {
        only = k;
      }
    }
    if (only < 0) {
      fprintf(stderr, "%s: unknown qualifier '%.*s' in '%s'; use device:, platform:, dtype: or error:\n",
              DLMAP_CLI_NAME, (int)(colon - what), what, what);
      return usage();
    }
    what = colon + 1;
  }
#define WANTS(k) (only < 0 || only == (k))
  const size_t len = strlen(what);
  match found[KIND_COUNT];
  int count = 0;
  long long number = 0;
  int32_t device_type;
  dlmap_platform platform;
  DLDataType dtype;

  const bool numeric = parse_int(what, &number);
  const bool in_range = numeric && number >= INT32_MIN && number <= INT32_MAX;
  if (numeric) {
    if (WANTS(KIND_DEVICE) && in_range && dlmap_device_type_find((int32_t)number) != NULL) {
      found[count++] = (match){.kind = KIND_DEVICE, .device = dlmap_device_type_find((int32_t)number)};
    }
    const dlmap_error_info *info = dlmap_error_describe(in_range ? (int32_t)number : -1);
    if (WANTS(KIND_ERROR) && info->code > 0) found[count++] = (match){.kind = KIND_ERROR, .error = info};
  } else {
    if (WANTS(KIND_DEVICE) && dlmap_device_type_parse(what, len, &device_type)) {
      found[count++] = (match){.kind = KIND_DEVICE, .device = dlmap_device_type_find(device_type)};
    }
    if (WANTS(KIND_PLATFORM) && dlmap_platform_parse(what, len, &platform)) {
      found[count++] = (match){.kind = KIND_PLATFORM, .platform = platform};
    }
    if (WANTS(KIND_DTYPE) && dlmap_dtype_parse(what, len, &dtype)) {
      found[count++] = (match){.kind = KIND_DTYPE, .dtype = dtype};
    }
    const dlmap_error_info *info = dlmap_error_find_by_id(what);
    if (WANTS(KIND_ERROR) && info != NULL) found[count++] = (match){.kind = KIND_ERROR, .error = info};
  }
#undef WANTS

  if (count > 1) {
    /* Say what the bare word matched, and how to ask for one of them. */
    printf("'%s' is ", what);
    for (int i = 0; i < count; i++) {
      printf("%s", i == 0 ? "" : i + 1 == count ? " and " : ", ");
      print_match_label(&found[i]);
    }
    printf("; `%s explain %s:%s` shows one.\n\n", DLMAP_CLI_NAME, kQualifiers[found[0].kind], what);
  }
  for (int i = 0; i < count; i++) {
    if (i > 0) printf("\n");
    print_match(&found[i]);
  }
  if (count > 0) return CLI_OK;

  if (in_range && (only < 0 || only == KIND_DEVICE)) {
    /* An unknown value is what a producer from a newer DLPack would send: show what dlmap says. */
    dlmap_error err;
    dlmap_device_type_lookup((int32_t)number, NULL, &err);
    printf("%d is neither a device type nor an error code of this build's spec.\n\n", (int)number);
    printf("As a device type it is rejected with %s:\n", dlmap_error_kind_name(err.kind));
    cli_print_error_page(stdout, dlmap_error_describe(err.code), err.message);
    return CLI_FAILED;
  }
  dlmap_error err;
  dlmap_raise_name_unknown(&err, "device type, platform, data type or error", what);
  /* The catalogue's text, without the Python exception kind the binding would raise it as. */
  fprintf(stderr, "%s: %s\n", DLMAP_CLI_NAME, err.message);
  cli_suggestions near;
  cli_suggest_init(&near, what);
  cli_suggest_spec_names(&near);
  cli_suggest_print(stderr, &near);
  return CLI_FAILED;
}
