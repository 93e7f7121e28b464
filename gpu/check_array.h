/* dlmap GPU check — the dlmap_array the checks export: one constructor, so each check names only what differs. */
#ifndef DLMAP_GPU_CHECK_ARRAY_H_
#define DLMAP_GPU_CHECK_ARRAY_H_

#include "dlmap/dlmap.h"

/* An array of `dtype` at data on device_type's device 0; strides NULL: compact. */
static inline dlmap_array check_array(void *data, int32_t device_type, DLDataType dtype, int32_t ndim,
                                      const int64_t *shape, const int64_t *strides) {
  dlmap_array a = dlmap_array_default();
  a.data = data;
  a.device_type = device_type;
  a.dtype = dtype;
  a.ndim = ndim;
  a.shape = shape;
  a.strides = strides;
  return a;
}

/* The dtypes the checks use. */
static const DLDataType kCheckFloat32 = {kDLFloat, 32, 1};
static const DLDataType kCheckUInt8 = {kDLUInt, 8, 1};

#endif /* DLMAP_GPU_CHECK_ARRAY_H_ */
