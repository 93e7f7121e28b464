/* dlmap core — __dlpack_device__: the (device type, device id) an array reports, by JAX's rules but
 * driven by the spec (the device type whose platform matches and whose memory kind fits). */
#include <string.h>

#include "src/internal.h"

int32_t dlmap_dlpack_device(const dlmap_device_query *query, int32_t *device_type, int32_t *device_id,
                            dlmap_error *err) {
  if (query == NULL || query->platform == NULL || device_type == NULL || device_id == NULL) {
    const dlmap_arg args[] = {dlmap_arg_str(DLMAP_ARG_ARGUMENT, "query"),
                              dlmap_arg_str(DLMAP_ARG_REASON, "query, its platform and both outputs must not be NULL")};
    return dlmap_error_set(err, DLMAP_ERR_INVALID_ARGUMENT, args, 2);
  }
  if (query->num_shards > 1) return dlmap_error_set(err, DLMAP_ERR_DLPACK_SHARDED, NULL, 0);

  /* JAX's generic "gpu" platform is told apart by the runtime's platform_version string. */
  dlmap_platform platform;
  if (strcmp(query->platform, "gpu") == 0) {
    int32_t status = dlmap_platform_from_version(query->platform_version, &platform, err);
    if (status != DLMAP_OK) return status;
  } else if (!dlmap_platform_from_name(query->platform, strlen(query->platform), &platform)) {
    const dlmap_arg arg = dlmap_arg_str(DLMAP_ARG_PLATFORM, query->platform);
    return dlmap_error_set(err, DLMAP_ERR_PLATFORM_NOT_EXCHANGEABLE, &arg, 1);
  }

  const bool host = dlmap_platform_get(platform)->backend == DLMAP_BACKEND_CPU;
  const dlmap_memory_kind wanted = host ? DLMAP_MEMORY_HOST : query->pinned_host ? DLMAP_MEMORY_HOST_PINNED
                                                                                 : DLMAP_MEMORY_DEVICE;
  const dlmap_device_info *found = NULL;
  for (size_t i = 0; found == NULL && dlmap_device_type_at(i) != NULL; i++) {
    const dlmap_device_info *d = dlmap_device_type_at(i);
    if (d->platform == platform && d->memory == wanted) found = d;
  }
  if (found == NULL) {
    const dlmap_arg arg = dlmap_arg_str(DLMAP_ARG_PLATFORM, dlmap_platform_get(platform)->name);
    return dlmap_error_set(err, DLMAP_ERR_PLATFORM_NOT_EXCHANGEABLE, &arg, 1);
  }
  if (!host && !query->has_local_hardware_id) return dlmap_error_set(err, DLMAP_ERR_NO_LOCAL_HARDWARE_ID, NULL, 0);
  *device_type = found->value;
  *device_id = host ? 0 : query->local_hardware_id;
  return DLMAP_OK;
}
