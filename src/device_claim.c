/* dlmap core — a tensor's device claim against its memory (issue 48): a producer that names a host-side device type
 * for memory only a GPU can read makes the host's first read of the view fault, one that names device memory for a
 * host address sends a runtime the wrong memory, and a device id past the device count or other than the memory's
 * orders work on the wrong device. The platform's runtime says which: its pointer query (dlmap__gpu_locate), asked
 * only where dlmap has loaded that runtime. Which claims are checked is the profile's import.device_claims. */
#include "src/device_claim.h"

/* The platform's runtime when its backend is the GPU one and dlmap has loaded and started it, else NULL (a runtime that
 * cannot start has no memory to describe: the exchange's own steps report the platform unavailable). */
static const dlmap__gpu *loaded_runtime(dlmap_platform platform) {
  const dlmap_platform_info *info = dlmap_platform_find(platform);
  const dlmap__gpu *gpu = info != NULL && info->backend == DLMAP_BACKEND_GPU ? dlmap__gpu_loaded(platform) : NULL;
  return gpu != NULL && dlmap__gpu_started(gpu) ? gpu : NULL;
}

int32_t dlmap__device_id_check(const dlmap_device_info *device, int32_t device_id, dlmap_error *err) {
  if (!dlmap__gpu_any_loaded()) return DLMAP_OK;
  const dlmap__gpu *gpu = loaded_runtime(device->platform);
  return gpu != NULL ? dlmap__gpu_check_device(gpu, device_id, err) : DLMAP_OK;
}

/* A host-side claim (the device type's memory is host-accessible): no loaded runtime may call the memory device-only.
 * Each loaded runtime is asked on the thread's current device, its context left as it was. */
static int32_t check_host_claim(const dlmap_device_info *device, int32_t device_id, const void *data,
                                dlmap_error *err) {
  for (int p = 0; p < (int)DLMAP_PLATFORM_COUNT; p++) {
    const dlmap__gpu *gpu = loaded_runtime((dlmap_platform)p);
    if (gpu == NULL) continue;
    dlmap__gpu_pointer where;
    const int32_t status = dlmap__gpu_locate_keeping_context(gpu, data, &where, err);
    if (status != DLMAP_OK) return status;
    if (where.kind != DLMAP_MEMORY_KIND_COUNT && !dlmap_memory_kind_host_accessible(where.kind)) {
      return dlmap_raise_device_claim_device_memory(err, dlmap__device(device->value, device_id),
                                                    dlmap_platform_find((dlmap_platform)p)->name, data, where.device);
    }
  }
  return DLMAP_OK;
}

/* A device-memory claim: its platform's runtime, asked with the claimed device current (HIP describes device memory
 * only on its own device), must know the memory, and place device or managed memory on the claimed device. */
static int32_t check_device_claim(const dlmap_device_info *device, const dlmap__gpu *gpu, int32_t device_id,
                                  const void *data, uint32_t claims, dlmap_error *err) {
  dlmap__gpu_pointer where;
  const int32_t status = dlmap__gpu_locate(gpu, data, device_id, &where, err);
  if (status != DLMAP_OK) return status;
  const char *platform = dlmap_platform_find(device->platform)->name;
  if ((claims & DLMAP_DEVICE_CLAIM_DEVICE_TYPES) && where.kind == DLMAP_MEMORY_HOST) {
    return dlmap_raise_device_claim_host_memory(err, dlmap__device(device->value, device_id), platform, data);
  }
  const bool placed = where.kind == DLMAP_MEMORY_DEVICE || where.kind == DLMAP_MEMORY_MANAGED;
  if ((claims & DLMAP_DEVICE_CLAIM_DEVICE_ID) && placed && where.device != device_id) {
    return dlmap_raise_device_claim_wrong_device(err, dlmap__device(device->value, device_id), platform, data,
                                                 where.device);
  }
  return DLMAP_OK;
}

int32_t dlmap__device_claim_check_loaded(const dlmap_device_info *device, int32_t device_id, const void *data,
                                         bool has_elements, dlmap_error *err) {
  const dlmap__gpu *own = loaded_runtime(device->platform);
  if (own != NULL) {
    const int32_t status = dlmap__gpu_check_device(own, device_id, err);
    if (status != DLMAP_OK) return status;
  }
  const uint32_t claims = dlmap_profile_current()->device_claims;
  if (data == NULL || !has_elements) return DLMAP_OK; /* no memory to ask about */
  if (dlmap_memory_kind_host_accessible(device->memory)) {
    return (claims & DLMAP_DEVICE_CLAIM_HOST_TYPES) ? check_host_claim(device, device_id, data, err) : DLMAP_OK;
  }
  const uint32_t device_claims = claims & (DLMAP_DEVICE_CLAIM_DEVICE_TYPES | DLMAP_DEVICE_CLAIM_DEVICE_ID);
  return own != NULL && device_claims != 0 ? check_device_claim(device, own, device_id, data, device_claims, err)
                                           : DLMAP_OK;
}
