/* dlmap CLI — `dlmap devices`: the spec's device types, which platforms this build and machine can serve (probed
 * now) and why not, and what the profile in force does with each device type. */
#include <string.h>

#include "tools/cli.h"

static const char *backend_name(dlmap_backend backend) {
  switch (backend) {
    case DLMAP_BACKEND_CPU:
      return "cpu backend";
    case DLMAP_BACKEND_GPU:
      return "gpu backend";
    case DLMAP_BACKEND_NONE:
      break;
  }
  return "no backend";
}

/* One word for the device table: can dlmap exchange this device type here? */
static const char *serving(const dlmap_platform_status *status, const dlmap_platform_info *platform) {
  if (status->available) return "yes";
  if (platform->backend == DLMAP_BACKEND_NONE) return "no: no backend";
  return status->built ? "no: see platform" : "no: not built";
}

static const char *yes_no(bool value) { return value ? "yes" : "no"; }

int cli_devices(int argc, char **argv) {
  (void)argv;
  if (argc != 0) {
    fprintf(stderr, "usage: %s devices\n", DLMAP_CLI_NAME);
    return CLI_USAGE;
  }
  dlmap_platform_status status[DLMAP_PLATFORM_COUNT];
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) dlmap_platform_probe((dlmap_platform)p, &status[p]);

  const dlmap_version current = dlmap_version_current();
  const dlmap_profile_info *profile = dlmap_profile_current();
  printf("DLPack device types (spec: DLPack %u.%u, %d types; profile %s)\n\n", current.major, current.minor,
         DLMAP_DEVICE_TYPE_COUNT, profile->name);
  printf("%5s  %-15s %-8s %-12s %-7s %-6s %-16s %s\n", "value", "enumerator", "platform", "memory", "stream", "since",
         "served here", "profile: dl_device / export from / import");
  int upstream_main = 0, vendor = 0;
  for (size_t i = 0; dlmap_device_type_at(i) != NULL; i++) {
    const dlmap_device_info *d = dlmap_device_type_at(i);
    const dlmap_platform_info *platform = dlmap_platform_find(d->platform);
    char since[16];
    snprintf(since, sizeof since, "%u.%u%s", d->introduced.major, d->introduced.minor, d->upstream_main ? "*" : "");
    if (d->vendor) snprintf(since, sizeof since, "vendor"); /* in no DLPack release */
    upstream_main += d->upstream_main;
    vendor += d->vendor;
    const dlmap_device_policy policy = dlmap_profile_device_policy(d->value);
    printf("%5d  %-15s %-8s %-12s %-7s %-6s %-16s %-3s / %-3s / %s\n", d->value, d->name, platform->name,
           dlmap_memory_kind_name(d->memory), dlmap_stream_convention_name(d->stream), since,
           serving(&status[d->platform], platform), yes_no(policy.export_target), yes_no(policy.export_source),
           yes_no(policy.import_accepted));
  }
  if (upstream_main) printf("    * on DLPack's main branch after that version's tag: the release itself lacks it\n");
  if (vendor) printf("    vendor: a vendor extension, in no DLPack release\n");

  printf("\nPlatforms on this build and machine\n\n");
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) {
    const dlmap_platform_info *platform = dlmap_platform_find((dlmap_platform)p);
    char state[320];
    if (status[p].available) {
      snprintf(state, sizeof state, "available (%d device%s)", status[p].device_count,
               status[p].device_count == 1 ? "" : "s");
    } else {
      snprintf(state, sizeof state, "%s: %s", status[p].built ? "built, not available" : "not served",
               status[p].reason);
    }
    printf("  %-8s %-12s %s\n", platform->name, backend_name(platform->backend), state);
    /* Where its kernels load PTX, the driver's release and whether it JIT-compiles the PTX: also where the runtime
     * did not start (a runtime newer than the driver), which the driver's release explains. */
    char driver[400];
    dlmap_platform_driver((dlmap_platform)p, driver, sizeof driver);
    if (status[p].built && strncmp(driver, "none:", 5) != 0) printf("  %-8s %-12s %s\n", "", "", driver);
    /* Where it serves, the platform's strided-copy kernels (if the spec gives it any), loaded now on device 0: how and
     * how fast (the first-use cost), or why layout copies take the memcpy path. */
    if (status[p].available && platform->backend == DLMAP_BACKEND_GPU) { /* where device copies take their memory */
      char allocator[240];
      dlmap_platform_allocator((dlmap_platform)p, allocator, sizeof allocator);
      printf("  %-8s %-12s allocator %s\n", "", "", allocator);
    }
    char kernels[400];
    dlmap_platform_kernels((dlmap_platform)p, kernels, sizeof kernels);
    if (!status[p].available || strncmp(kernels, "none:", 5) == 0) continue;
    dlmap_platform_kernels_load((dlmap_platform)p, 0);
    dlmap_platform_kernels((dlmap_platform)p, kernels, sizeof kernels);
    printf("  %-8s %-12s kernels %s\n", "", "", kernels);
  }
  printf("\nProfile %s\n\n", profile->name);
  cli_wrap(stdout, "  ", profile->doc);
  printf("\n  __dlpack_device__ (first match wins):\n");
  const dlmap_device_rule *rule;
  for (size_t i = 0; (rule = dlmap_profile_device_rule_at(i)) != NULL; i++) {
    printf("    %-8s %-22s -> %s\n", dlmap_platform_find(rule->platform)->name,
           rule->memory == DLMAP_MATCH_PINNED ? "pinned host memory" : rule->memory == DLMAP_MATCH_UNPINNED ? "other memory"
                                                                                                            : "any memory",
           rule->error == DLMAP_OK ? dlmap_device_type_name(rule->device_type) : dlmap_error_describe(rule->error)->id);
  }
  printf("    %-31s -> %s\n", "any other platform", dlmap_error_describe(profile->dlpack_device_otherwise)->id);
  printf("\n`dlmap explain <value or name>` shows one entry and the errors its exchange can raise.\n");
  return CLI_OK;
}
