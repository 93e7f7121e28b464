/* dlmap core — a tensor's device claim against its memory (issues 48, 56): the device id against the platform's device
 * count, and what the platform's runtime says of the bytes the tensor reaches against the device type, for every import
 * (views and planned imports included) and export. Only where dlmap has loaded a GPU runtime: with none, one load and a
 * branch, and no runtime call. */
#ifndef DLMAP_SRC_DEVICE_CLAIM_H_
#define DLMAP_SRC_DEVICE_CLAIM_H_

#include "src/backends/gpu.h"
#include "src/layout.h"

/* Where a runtime is loaded (callers test dlmap__gpu_any_loaded first: with none, nothing is asked), checks that
 * device `device_id` of `device` holds the bytes of a tensor at data + byte_offset whose layout has `extent` and stays
 * inside the address space (the caller checked; data NULL: a handle, or no address to ask about), where the loaded
 * runtimes can say: the id below the device's platform's device count (device_id_out_of_range), then the claims the
 * profile's import.device_claims lists over the tensor's lowest and highest byte (device_claim_device_memory,
 * device_claim_host_memory, device_claim_wrong_device, and device_claim_outside_allocation: both in the allocation of
 * the lowest). A failed pointer query is backend_call_failed. */
int32_t dlmap__device_claim_check_tensor(const dlmap_device_info *device, int32_t device_id, const void *data,
                                         uint64_t byte_offset, const dlmap__extent *extent, dlmap_error *err);

/* The device id alone (exports: the array's own id and a GPU target's), where the platform's runtime is loaded. */
int32_t dlmap__device_id_check(const dlmap_device_info *device, int32_t device_id, dlmap_error *err);

#endif /* DLMAP_SRC_DEVICE_CLAIM_H_ */
