// dlmap import tests — the host copy (src/host_copy.c) of elements too large for the tile buffer (over 16 KiB / 32
// columns = 512 bytes: float64 × 128 lanes is 1 KiB): a transposed plane of them is copied element by element, each a
// memcpy of its own, and every element lands where the row-major copy wants it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "dlmap/dlmap.h"

namespace {

int g_deleter_calls = 0;
void CountDeleter(DLManagedTensorVersioned *) { g_deleter_calls++; }

TEST(HostCopyLargeElements, ATransposedPlaneOfKibibyteElements) {
  const DLDataType kWide = {kDLFloat, 64, 128};  // 1024 bytes an element
  const size_t esize = 64 / 8 * 128;
  const int64_t rows = 5, cols = 3;  // the copy's shape; the source holds it transposed (column-major)
  std::vector<unsigned char> source(static_cast<size_t>(rows * cols) * esize);
  for (size_t i = 0; i < source.size(); i++) source[i] = static_cast<unsigned char>(i * 131 + (i >> 8) * 7 + 1);
  int64_t shape[2] = {rows, cols};
  int64_t strides[2] = {1, rows};  // elements
  DLManagedTensorVersioned tensor;
  std::memset(&tensor, 0, sizeof tensor);
  tensor.version = {DLMAP_ABI_CURRENT_MAJOR, DLMAP_ABI_CURRENT_MINOR};
  tensor.deleter = CountDeleter;
  tensor.dl_tensor.data = source.data();
  tensor.dl_tensor.device = {kDLCPU, 0};
  tensor.dl_tensor.ndim = 2;
  tensor.dl_tensor.dtype = kWide;
  tensor.dl_tensor.shape = shape;
  tensor.dl_tensor.strides = strides;
  dlmap_import_request request = dlmap_import_request_default();
  request.copy = DLMAP_COPY_ALWAYS;
  dlmap_imported out;
  dlmap_error err;
  ASSERT_EQ(dlmap_import_versioned(&tensor, &request, &out, &err), DLMAP_OK) << err.message;
  EXPECT_TRUE(out.copied);
  EXPECT_EQ(g_deleter_calls, 1) << "the source is released once copied";
  const auto *copy = static_cast<const unsigned char *>(out.tensor.data);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = 0; c < cols; c++) {
      const unsigned char *want = source.data() + static_cast<size_t>(r + c * rows) * esize;
      const unsigned char *got = copy + static_cast<size_t>(r * cols + c) * esize;
      EXPECT_EQ(std::memcmp(got, want, esize), 0) << "element (" << r << ", " << c << ")";
    }
  }
  dlmap_imported_release(&out);
}

}  // namespace
