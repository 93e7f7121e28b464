// dlmap GPU tests — what device_test.cc and fake_runtime_test.cc both build their exchanges from: host values whose
// every misplaced element shows, host arrays, the export requests most tests make, and what a compact copy must hold.
#ifndef DLMAP_TESTS_GPU_DEVICE_TEST_SUPPORT_H_
#define DLMAP_TESTS_GPU_DEVICE_TEST_SUPPORT_H_

#include <cstdint>
#include <vector>

#include "dlmap/dlmap.h"

namespace dlmap_gpu_test {

const DLDataType kFloat32 = {kDLFloat, 32, 1};

// Host values: element i is 1000 + i, so every misplaced element shows.
inline std::vector<float> Values(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = 1000.0f + static_cast<float>(i);
  return v;
}

inline dlmap_array HostArray(float *data, const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                      uint64_t byte_offset = 0) {
  dlmap_array a = dlmap_array_default();
  a.data = data;
  a.device_type = DLMAP_DEVICE_CPU;
  a.dtype = kFloat32;
  a.ndim = static_cast<int32_t>(shape.size());
  a.shape = shape.data();
  a.strides = strides.empty() ? nullptr : strides.data();
  a.byte_offset = byte_offset;
  return a;
}

// A float32 view of device memory on (kDLCUDA, id): a device tensor's data with its own shape and strides.
inline dlmap_array DeviceArray(void *data, int32_t id, const std::vector<int64_t> &shape,
                               const std::vector<int64_t> &strides) {
  dlmap_array a = dlmap_array_default();
  a.data = data;
  a.device_type = DLMAP_DEVICE_CUDA;
  a.device_id = id;
  a.dtype = kFloat32;
  a.ndim = static_cast<int32_t>(shape.size());
  a.shape = shape.data();
  a.strides = strides.data();
  return a;
}

// __dlpack__(dl_device=(type, id)): what most tests ask of an export.
inline dlmap_export_request ExportTo(int32_t type, int32_t id = 0) {
  dlmap_export_request request = dlmap_export_request_default();
  request.has_dl_device = true;
  request.dl_device_type = type;
  request.dl_device_id = id;
  return request;
}

// The same with max_version=(1, 3): a versioned tensor.
inline dlmap_export_request VersionedExportTo(int32_t type, int32_t id = 0) {
  dlmap_export_request request = ExportTo(type, id);
  request.has_max_version = true;
  request.max_version = {1, 3};
  return request;
}

// The elements of a strided host view, in row-major order (what a compact copy must hold).
inline std::vector<float> Expected(const float *first, const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
  std::vector<float> out;
  std::vector<int64_t> index(shape.size(), 0);
  int64_t count = 1;
  for (int64_t n : shape) count *= n;
  for (int64_t k = 0; k < count; k++) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); d++) offset += index[d] * strides[d];
    out.push_back(first[offset]);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace dlmap_gpu_test

#endif  // DLMAP_TESTS_GPU_DEVICE_TEST_SUPPORT_H_
