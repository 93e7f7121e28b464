// dlmap import tests — src/layout.c's extent in bits: a negative stride whose lowest element lies exactly 2^63 bits
// before the first (int8, stride -2^60: -2^60 bytes, -2^63 bits) fits int64 as a product but leaves no room for the
// byte rounding, so the tensor is size_overflow, refused before any of its memory is read, its deleter run once.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "dlmap/dlmap.h"

namespace {

int g_deleted = 0;
void CountDeleter(DLManagedTensorVersioned *) { g_deleted++; }

TEST(ImportExtremeStride, ALowestBitAtInt64MinIsSizeOverflow) {
  int8_t data[2] = {1, 2};
  int64_t shape[1] = {2};
  int64_t strides[1] = {-(int64_t{1} << 60)};
  DLManagedTensorVersioned tensor;
  std::memset(&tensor, 0, sizeof tensor);
  tensor.version = {1, 0};
  tensor.deleter = CountDeleter;
  tensor.dl_tensor.data = data;
  tensor.dl_tensor.device = {kDLCPU, 0};
  tensor.dl_tensor.ndim = 1;
  tensor.dl_tensor.dtype = {kDLInt, 8, 1};
  tensor.dl_tensor.shape = shape;
  tensor.dl_tensor.strides = strides;
  dlmap_imported out;
  dlmap_error err;
  EXPECT_EQ(dlmap_import_versioned(&tensor, nullptr, &out, &err), DLMAP_ERR_SIZE_OVERFLOW);
  EXPECT_STREQ(err.id, "size_overflow");
  EXPECT_EQ(g_deleted, 1);
}

}  // namespace
