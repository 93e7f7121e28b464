// dlmap export tests — export.dl_device.host_id: zero (the NumPy profile, src/export.c): dl_device=(kDLCPU, id) with
// id != 0 is export_host_id_not_zero, except where it names the array's own device (a host array that says it is on
// id 1 is exported where it is, as dl_device=None would, its tensor saying host 0 like every NumPy tensor).
#include <gtest/gtest.h>

#include <cstdint>

#include "dlmap/dlmap.h"
#include "dlmap/profile.h"

namespace {

float g_data[4] = {1, 2, 3, 4};
int64_t g_shape[1] = {4};

dlmap_array HostArray(int32_t device_id) {
  dlmap_array a = dlmap_array_default();
  a.data = g_data;
  a.device_type = DLMAP_DEVICE_CPU;
  a.device_id = device_id;
  a.dtype = {DLMAP_DTYPE_FLOAT, 32, 1};
  a.ndim = 1;
  a.shape = g_shape;
  return a;
}

dlmap_export_request To(int32_t type, int32_t id) {
  dlmap_export_request r = dlmap_export_request_default();
  r.has_dl_device = true;
  r.dl_device_type = type;
  r.dl_device_id = id;
  return r;
}

TEST(ExportHostId, OnlyTheArraysOwnHostDeviceMayBeNonZero) {
  ASSERT_TRUE(dlmap_profile_current()->host_id_zero);
  dlmap_exported out;
  dlmap_error err;
  const dlmap_array on0 = HostArray(0);
  const dlmap_export_request to1 = To(DLMAP_DEVICE_CPU, 1);
  EXPECT_EQ(dlmap_export(&on0, &to1, &out, &err), DLMAP_ERR_EXPORT_HOST_ID_NOT_ZERO);
  EXPECT_STREQ(err.id, "export_host_id_not_zero");

  const dlmap_array on1 = HostArray(1);  // its own device: exported where it is
  ASSERT_EQ(dlmap_export(&on1, &to1, &out, &err), DLMAP_OK) << err.message;
  const DLTensor &t = out.structure == DLMAP_STRUCT_VERSIONED ? out.versioned->dl_tensor : out.legacy->dl_tensor;
  EXPECT_EQ(t.data, static_cast<void *>(g_data));
  EXPECT_EQ(t.device.device_id, 0);  // host_id zero: the tensor says host 0, as NumPy's do
  if (out.structure == DLMAP_STRUCT_VERSIONED) {
    out.versioned->deleter(out.versioned);
  } else {
    out.legacy->deleter(out.legacy);
  }
}

}  // namespace
