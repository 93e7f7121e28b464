/* dlmap core — a tensor's device claim against its memory (issue 48): the device id against the platform's device
 * count, and what the platform's runtime says of the data pointer against the device type, for every import (views
 * and planned imports included) and export. Only where dlmap has loaded a GPU runtime: with none, one load and a
 * branch, and no runtime call. */
#ifndef DLMAP_SRC_DEVICE_CLAIM_H_
#define DLMAP_SRC_DEVICE_CLAIM_H_

#include "src/backends/gpu.h"

/* The checks, where a runtime is loaded (dlmap__device_claim_check). */
int32_t dlmap__device_claim_check_loaded(const dlmap_device_info *device, int32_t device_id, const void *data,
                                         bool has_elements, dlmap_error *err);

/* Checks that device `device_id` of `device` holds the memory at data (has_elements: the tensor reaches memory), where
 * the runtimes dlmap has loaded can say: the id below the device's platform's device count (device_id_out_of_range),
 * then the claims the profile's import.device_claims lists (device_claim_device_memory, device_claim_host_memory,
 * device_claim_wrong_device). A failed pointer query is backend_call_failed. With no runtime loaded: DLMAP_OK. */
static inline int32_t dlmap__device_claim_check(const dlmap_device_info *device, int32_t device_id, const void *data,
                                                bool has_elements, dlmap_error *err) {
  if (__builtin_expect(!dlmap__gpu_any_loaded(), 1)) return DLMAP_OK;
  return dlmap__device_claim_check_loaded(device, device_id, data, has_elements, err);
}

/* The device id alone (exports: the array's own id and a GPU target's), where the platform's runtime is loaded. */
int32_t dlmap__device_id_check(const dlmap_device_info *device, int32_t device_id, dlmap_error *err);

#endif /* DLMAP_SRC_DEVICE_CLAIM_H_ */
