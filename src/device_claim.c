/* dlmap core — a tensor's device claim against its memory (issues 48, 56): a producer that names a host-side device
 * type for memory only a GPU can read makes the host's first read of the view fault, one that names device memory for
 * a host address sends a runtime the wrong memory, a device id past the device count or other than the memory's
 * orders work on the wrong device, and a layout that runs past its allocation makes a GPU fault later (the context
 * then unusable for the process). The claim is judged where the bytes are: the tensor's lowest and highest byte
 * (data + byte_offset and the layout's extent), never the base pointer alone. The platform's runtime says which: its
 * pointer query and address range (dlmap__gpu_locate_span), asked only where dlmap has loaded that runtime. Which claims are checked is the profile's import.device_claims. */
#include "src/device_claim.h"

/* The bytes a tensor reaches: its lowest and its highest (inclusive). */
typedef struct claim_span {
  const void *lo, *hi;
} claim_span;

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

/* The tensor's bytes ran past the memory that holds its lowest byte. */
static int32_t outside_allocation(const dlmap_device_info *device, int32_t device_id, dlmap_platform platform,
                                  const claim_span *span, dlmap_error *err) {
  return dlmap_raise_device_claim_outside_allocation(err, dlmap__device(device->value, device_id),
                                                     dlmap_platform_find(platform)->name, span->lo,
                                                     (uint64_t)((uintptr_t)span->hi - (uintptr_t)span->lo) + 1);
}

/* A host-side claim (the device type's memory is host-accessible): no loaded runtime may call either end of the memory
 * device-only, and memory a runtime allocated (pinned, managed) must hold every byte. Each loaded runtime is asked on
 * the thread's current device, its context left as it was. */
static int32_t check_host_claim(const dlmap_device_info *device, int32_t device_id, const claim_span *span,
                                dlmap_error *err) {
  for (int p = 0; p < (int)DLMAP_PLATFORM_COUNT; p++) {
    const dlmap__gpu *gpu = loaded_runtime((dlmap_platform)p);
    if (gpu == NULL) continue;
    dlmap__gpu_span where;
    const int32_t status = dlmap__gpu_locate_span(gpu, span->lo, span->hi, -1, &where, err);
    if (status != DLMAP_OK) return status;
    const dlmap__gpu_pointer *ends[2] = {&where.lo, &where.hi};
    const void *addresses[2] = {span->lo, span->hi};
    for (int i = 0; i < 2; i++) {
      if (ends[i]->kind != DLMAP_MEMORY_KIND_COUNT && !dlmap_memory_kind_host_accessible(ends[i]->kind)) {
        return dlmap_raise_device_claim_device_memory(err, dlmap__device(device->value, device_id),
                                                      dlmap_platform_find((dlmap_platform)p)->name, addresses[i],
                                                      ends[i]->device);
      }
    }
    if (!where.one_allocation) return outside_allocation(device, device_id, (dlmap_platform)p, span, err);
  }
  return DLMAP_OK;
}

/* A device-memory claim: its platform's runtime, asked with the claimed device current (HIP describes device memory
 * only on its own device), must know the memory, place device or managed memory on the claimed device, and hold every
 * byte in the allocation of the lowest. */
static int32_t check_device_claim(const dlmap_device_info *device, const dlmap__gpu *gpu, int32_t device_id,
                                  const claim_span *span, uint32_t claims, dlmap_error *err) {
  dlmap__gpu_span where;
  const int32_t status = dlmap__gpu_locate_span(gpu, span->lo, span->hi, device_id, &where, err);
  if (status != DLMAP_OK) return status;
  const char *platform = dlmap_platform_find(device->platform)->name;
  if ((claims & DLMAP_DEVICE_CLAIM_DEVICE_TYPES) && where.lo.kind == DLMAP_MEMORY_HOST) {
    return dlmap_raise_device_claim_host_memory(err, dlmap__device(device->value, device_id), platform, span->lo);
  }
  const bool placed = where.lo.kind == DLMAP_MEMORY_DEVICE || where.lo.kind == DLMAP_MEMORY_MANAGED;
  if ((claims & DLMAP_DEVICE_CLAIM_DEVICE_ID) && placed && where.lo.device != device_id) {
    return dlmap_raise_device_claim_wrong_device(err, dlmap__device(device->value, device_id), platform, span->lo,
                                                 where.lo.device);
  }
  if ((claims & DLMAP_DEVICE_CLAIM_DEVICE_TYPES) && !where.one_allocation) {
    return outside_allocation(device, device_id, device->platform, span, err);
  }
  return DLMAP_OK;
}

/* The device id, then the claims over span (NULL: no memory to ask about). */
static int32_t check_loaded(const dlmap_device_info *device, int32_t device_id, const claim_span *span,
                            dlmap_error *err) {
  const dlmap__gpu *own = loaded_runtime(device->platform);
  if (own != NULL) {
    const int32_t status = dlmap__gpu_check_device(own, device_id, err);
    if (status != DLMAP_OK) return status;
  }
  const uint32_t claims = dlmap_profile_current()->device_claims;
  if (span == NULL) return DLMAP_OK; /* no memory to ask about */
  if (dlmap_memory_kind_host_accessible(device->memory)) {
    return (claims & DLMAP_DEVICE_CLAIM_HOST_TYPES) ? check_host_claim(device, device_id, span, err) : DLMAP_OK;
  }
  const uint32_t device_claims = claims & (DLMAP_DEVICE_CLAIM_DEVICE_TYPES | DLMAP_DEVICE_CLAIM_DEVICE_ID);
  return own != NULL && device_claims != 0 ? check_device_claim(device, own, device_id, span, device_claims, err)
                                           : DLMAP_OK;
}

int32_t dlmap__device_claim_check_tensor(const dlmap_device_info *device, int32_t device_id, const void *data,
                                         uint64_t byte_offset, const dlmap__extent *extent, dlmap_error *err) {
  if (data == NULL || extent->count == 0) {
    return check_loaded(device, device_id, NULL, err); /* no memory to ask about */
  }
  const uintptr_t first = (uintptr_t)data + (uintptr_t)byte_offset;
  const claim_span span = {(const void *)(first - (uintptr_t)-extent->lo_bytes),
                                  (const void *)(first + (uintptr_t)extent->hi_bytes - 1)};
  return check_loaded(device, device_id, &span, err);
}
