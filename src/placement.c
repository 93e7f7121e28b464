/* dlmap core — placement: which device types each direction serves, and view or copy (see placement.h). */
#include "src/placement.h"

#include "src/transfer.h"

bool dlmap__export_accepts_source(int32_t device_type) {
  return dlmap_profile_device_policy(device_type).export_source;
}

bool dlmap__export_accepts_target(int32_t device_type, int32_t source_type) {
  return dlmap_profile_device_policy(device_type).export_target ||
         (dlmap_profile_current()->dl_device_own_type && device_type == source_type);
}

bool dlmap__import_accepts(int32_t device_type) { return dlmap_profile_device_policy(device_type).import_accepted; }

bool dlmap__on_host(const dlmap_device_info *device) {
  return dlmap_platform_find(device->platform)->backend == DLMAP_BACKEND_CPU;
}

bool dlmap__direct_address(const dlmap_device_info *device) {
  return dlmap_memory_kind_host_accessible(device->memory) ||
         dlmap_platform_find(device->platform)->backend != DLMAP_BACKEND_NONE;
}

dlmap__placement dlmap__place(const dlmap_device_info *source, int32_t source_id, const void *first,
                              uint64_t byte_offset, const dlmap_device_info *target, int32_t target_id,
                              bool copy_forced) {
  dlmap__placement placement = {DLMAP__PLACE_COPY, false, NULL};
  const bool same_device = target == source && (dlmap__on_host(target) || target_id == source_id);
  const bool host_view = !same_device && dlmap__on_host(target) && dlmap_memory_kind_host_accessible(source->memory);
  const bool gpu_view = !same_device && !host_view && !copy_forced &&
                        dlmap__gpu_zero_copy(source, target, target_id, first, byte_offset, &placement.gpu_view_data);
  placement.moves = !same_device && !host_view && !gpu_view;
  if (!copy_forced && !placement.moves) {
    placement.kind = same_device ? DLMAP__PLACE_VIEW : host_view ? DLMAP__PLACE_HOST_VIEW : DLMAP__PLACE_GPU_VIEW;
  }
  return placement;
}
