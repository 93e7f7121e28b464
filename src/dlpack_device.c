/* dlmap core — __dlpack_device__: the (device type, device id) an array reports, by the profile's rules (platform
 * and memory kind → device type or error; JAX's generic "gpu" platform told apart by its platform_version). */
#include <string.h>

#include "src/internal.h"

int32_t dlmap_dlpack_device(const dlmap_device_query *query, int32_t *device_type, int32_t *device_id,
                            dlmap_error *err) {
  if (query == NULL || query->platform == NULL || device_type == NULL || device_id == NULL) {
    return dlmap_raise_invalid_argument(err, "query", "query, its platform and both outputs must not be NULL");
  }
  dlmap_device_query query_fields; /* fields the caller's struct_size does not have read as zero */
  if (DLMAP__STRUCT_READ(query, &query_fields, dlmap_device_query, DLMAP_DEVICE_QUERY_STRUCT_SIZE, "query", err) !=
      DLMAP_OK) {
    return DLMAP_ERR_INVALID_ARGUMENT;
  }
  query = &query_fields;
  if (query->num_shards > 1) return dlmap_raise_dlpack_sharded(err);

  /* JAX's generic "gpu" platform is told apart by the runtime's platform_version string. */
  dlmap_platform platform;
  if (strcmp(query->platform, "gpu") == 0) {
    int32_t status = dlmap_platform_lookup_by_version(query->platform_version, &platform, err);
    if (status != DLMAP_OK) return status;
  } else if (!dlmap_platform_parse(query->platform, strlen(query->platform), &platform)) {
    return DLMAP_RAISE(err, dlmap_profile_current()->dlpack_device_otherwise,
                       dlmap_arg_str(DLMAP_ARG_PLATFORM, query->platform));
  }

  /* The profile's rules, first match wins: a device type, or that platform's error. */
  const dlmap_device_rule *rule = NULL;
  bool matched = false;
  for (size_t i = 0; !matched && (rule = dlmap_profile_device_rule_at(i)) != NULL; i++) {
    matched = rule->platform == platform &&
              (rule->memory == DLMAP_MATCH_ANY || (rule->memory == DLMAP_MATCH_PINNED) == query->pinned_host);
  }
  if (!matched) { /* named as the caller named it, as JAX prints its platform */
    return DLMAP_RAISE(err, dlmap_profile_current()->dlpack_device_otherwise,
                       dlmap_arg_str(DLMAP_ARG_PLATFORM, query->platform));
  }
  if (rule->error != DLMAP_OK) {
    return DLMAP_RAISE(err, rule->error, dlmap_arg_str(DLMAP_ARG_PLATFORM, dlmap_platform_find(platform)->name));
  }
  const dlmap_device_info *found = dlmap_device_type_find(rule->device_type);
  /* The host is one device: its id is 0 whatever the query says. */
  const bool host = dlmap_platform_find(found->platform)->backend == DLMAP_BACKEND_CPU;
  if (!host && !query->has_local_hardware_id) return dlmap_raise_no_local_hardware_id(err);
  *device_type = found->value;
  *device_id = host ? 0 : query->local_hardware_id;
  return DLMAP_OK;
}
