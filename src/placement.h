/* dlmap core — placement: the one place that says whether a device type is served in a direction (reading the
 * profile's device table) and how an exchange's data reaches the device its result must live on (a view, a view
 * of host-accessible memory from the host or from a GPU, or a copy). Export and import both call it and keep only
 * their own steps. */
#ifndef DLMAP_SRC_PLACEMENT_H_
#define DLMAP_SRC_PLACEMENT_H_

#include "src/internal.h"

/* Whether the profile exports an array that lives on device_type (__dlpack__ on it). */
bool dlmap__export_accepts_source(int32_t device_type);

/* Whether the profile lets dl_device name device_type for an array on source_type (a profile may always allow the
 * array's own device type). */
bool dlmap__export_accepts_target(int32_t device_type, int32_t source_type);

/* Whether the profile imports a tensor on device_type, or copies one onto it (from_dlpack's device=). */
bool dlmap__import_accepts(int32_t device_type);

/* Whether the device type's platform is served by the CPU backend: the host, which is one device whatever its id. */
bool dlmap__on_host(const dlmap_device_info *device);

/* Whether data is a plain address (so byte_offset and alignment mean bytes in memory): host-accessible memory and
 * the GPU backends' device memory. OpenCL buffers, Metal buffers and the like are handles. */
bool dlmap__direct_address(const dlmap_device_info *device);

typedef enum dlmap__placement_kind {
  DLMAP__PLACE_VIEW,      /* the data already lives on the target: hand out the producer's memory */
  DLMAP__PLACE_HOST_VIEW, /* host-accessible memory (pinned, managed) read from the host without a copy */
  DLMAP__PLACE_GPU_VIEW,  /* pinned or managed memory read by a GPU of its platform at gpu_view_data */
  DLMAP__PLACE_COPY       /* a copy: forced by the caller, or the only way to reach the target */
} dlmap__placement_kind;

typedef struct dlmap__placement {
  dlmap__placement_kind kind;
  bool moves;          /* no view of any kind reaches the target: the data must move to another memory */
  void *gpu_view_data; /* DLMAP__PLACE_GPU_VIEW: the address the target device uses */
} dlmap__placement;

/* How data of device source_id of `source`, whose first element is at `first`, byte_offset bytes past the tensor's
 * data pointer, reaches device target_id of `target`: the runtime is asked about the first element, never the data
 * pointer (which may lie outside the memory), and a GPU view's gpu_view_data is the target's address of the data
 * pointer. copy_forced (copy=True) makes it a copy and skips asking the GPU runtime about a zero-copy view. Never
 * fails: whether a copy is allowed and possible is the caller's next step. */
dlmap__placement dlmap__place(const dlmap_device_info *source, int32_t source_id, const void *first,
                              uint64_t byte_offset, const dlmap_device_info *target, int32_t target_id,
                              bool copy_forced);

#endif /* DLMAP_SRC_PLACEMENT_H_ */
