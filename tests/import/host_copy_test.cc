// dlmap host copies (src/host_copy.c) through the public import API with copy=True: every path of the strided →
// compact copy — runs, the tiled transpose with its SIMD blocks and remainders, the strided element loops and their
// step-2 shuffles, broadcasts, negative steps, several tiles and odd sizes — byte for byte against a reference
// gather. //tests/import:host_copy_sse2_test and :host_copy_avx_test run the same cases with DLMAP_HOST_COPY_SIMD=sse2
// and =avx (the baseline paths and the AVX ones, on a CPU that also has AVX and AVX-512).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dlmap/dlmap.h"

namespace {

int g_deleter_calls = 0;
void CountDeleter(DLManagedTensorVersioned *) { g_deleter_calls++; }

struct Case {
  std::string name;
  size_t element_bytes;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // elements
};

// Where element `index` (row-major over shape) lies in the source, in elements from the origin.
int64_t SourceOffset(const Case &c, uint64_t index) {
  int64_t offset = 0;
  for (size_t d = c.shape.size(); d-- > 0;) {
    const auto extent = static_cast<uint64_t>(c.shape[d]);
    offset += static_cast<int64_t>(index % extent) * c.strides[d];
    index /= extent;
  }
  return offset;
}

void CheckCopy(const Case &c) {
  SCOPED_TRACE(c.name);
  uint64_t count = 1;
  int64_t lo = 0, hi = 0;  // the source's lowest and highest element offsets
  for (size_t d = 0; d < c.shape.size(); d++) {
    count *= static_cast<uint64_t>(c.shape[d]);
    const int64_t step = (c.shape[d] - 1) * c.strides[d];
    (step < 0 ? lo : hi) += step;
  }
  // A source holding exactly the elements the strides reach (ASan and valgrind see any read outside it); byte i
  // of the buffer is a pattern of i, so every element differs from its neighbours.
  const size_t esize = c.element_bytes;
  std::vector<unsigned char> buffer(static_cast<size_t>(hi - lo + 1) * esize);
  for (size_t i = 0; i < buffer.size(); i++) buffer[i] = static_cast<unsigned char>(i * 131 + (i >> 8) * 7 + 1);
  const unsigned char *origin = buffer.data() - lo * static_cast<int64_t>(esize);

  DLManagedTensorVersioned tensor;
  memset(&tensor, 0, sizeof tensor);
  tensor.version = {DLMAP_ABI_CURRENT_MAJOR, DLMAP_ABI_CURRENT_MINOR};
  tensor.deleter = CountDeleter;
  tensor.dl_tensor.data = buffer.data();
  tensor.dl_tensor.byte_offset = static_cast<uint64_t>(-lo) * esize;
  tensor.dl_tensor.device = {kDLCPU, 0};
  tensor.dl_tensor.ndim = static_cast<int32_t>(c.shape.size());
  // Every element size: unsigned integers of 1 to 8 bytes, complex128 for 16.
  tensor.dl_tensor.dtype = esize <= 8 ? DLDataType{kDLUInt, static_cast<uint8_t>(esize * 8), 1}
                                      : DLDataType{kDLComplex, 128, 1};
  std::vector<int64_t> shape = c.shape, strides = c.strides;
  tensor.dl_tensor.shape = shape.data();
  tensor.dl_tensor.strides = strides.data();

  dlmap_import_request request = dlmap_import_request_default();
  request.copy = DLMAP_COPY_ALWAYS;
  dlmap_imported out;
  dlmap_error err;
  const int calls_before = g_deleter_calls;
  ASSERT_EQ(DLMAP_OK, dlmap_import_versioned(&tensor, &request, &out, &err)) << err.message;
  EXPECT_TRUE(out.copied);
  EXPECT_EQ(calls_before + 1, g_deleter_calls) << "the source is released once copied";

  const auto *copy = static_cast<const unsigned char *>(out.tensor.data);
  uint64_t first_bad = count;
  for (uint64_t i = 0; i < count && first_bad == count; i++) {
    if (memcmp(copy + i * esize, origin + SourceOffset(c, i) * static_cast<int64_t>(esize), esize) != 0) {
      first_bad = i;
    }
  }
  EXPECT_EQ(count, first_bad) << "element " << first_bad << " of " << count << " differs";
  dlmap_imported_release(&out);
}

std::string Name(const char *kind, size_t esize, const std::vector<int64_t> &shape) {
  std::string name = std::string(kind) + "_e" + std::to_string(esize);
  for (int64_t extent : shape) name += "_" + std::to_string(extent);
  return name;
}

// Sizes around the SIMD blocks (2, 4, 8), the tile (32 columns; 16 KiB of rows) and beyond it.
const int64_t kExtents[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 32, 33, 65, 130};
const size_t kElementBytes[] = {1, 2, 4, 8, 16};

TEST(HostCopy, TransposedPlanes) {
  for (size_t esize : kElementBytes) {
    for (int64_t rows : kExtents) {
      for (int64_t cols : kExtents) {
        // The transpose of a compact cols × rows array: rows step 1 element, columns step `rows`.
        CheckCopy({Name("transposed", esize, {rows, cols}), esize, {rows, cols}, {1, rows}});
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(HostCopy, TransposedPlanesLargerThanSeveralTiles) {
  for (size_t esize : kElementBytes) {
    CheckCopy({Name("transposed", esize, {515, 300}), esize, {515, 300}, {1, 515}});
    CheckCopy({Name("transposed", esize, {300, 515}), esize, {300, 515}, {1, 300}});
  }
}

TEST(HostCopy, TransposedWithPaddedPitchAndNegativeSteps) {
  for (size_t esize : kElementBytes) {
    // A transposed crop (the source pitch larger than its rows), and a transposed view read backwards.
    CheckCopy({Name("transposed_pitch", esize, {37, 41}), esize, {37, 41}, {1, 40}});
    CheckCopy({Name("transposed_reversed", esize, {37, 41}), esize, {37, 41}, {-1, -37}});
    CheckCopy({Name("transposed_reversed_columns", esize, {37, 41}), esize, {37, 41}, {1, -37}});
  }
}

TEST(HostCopy, BatchesOfTransposedPlanes) {
  for (size_t esize : kElementBytes) {
    // [batch, rows, cols] with each plane transposed, and a permutation (2, 0, 1) of a compact layout.
    CheckCopy({Name("batch_transposed", esize, {3, 19, 12}), esize, {3, 19, 12}, {19 * 12, 1, 19}});
    CheckCopy({Name("permuted", esize, {5, 6, 7}), esize, {5, 6, 7}, {1, 35, 5}});
  }
}

TEST(HostCopy, StridedRunsBroadcastsAndCrops) {
  for (size_t esize : kElementBytes) {
    for (int64_t n : kExtents) {
      CheckCopy({Name("step2", esize, {3, n}), esize, {3, n}, {2 * n + 1, 2}});
      CheckCopy({Name("step3", esize, {2, n}), esize, {2, n}, {3 * n, 3}});
      CheckCopy({Name("step_minus2", esize, {n}), esize, {n}, {-2}});
      CheckCopy({Name("broadcast_rows", esize, {4, n}), esize, {4, n}, {0, 1}});
      CheckCopy({Name("broadcast_all", esize, {n, 3}), esize, {n, 3}, {0, 0}});
      CheckCopy({Name("crop", esize, {5, n}), esize, {5, n}, {n + 3, 1}});
      if (HasFatalFailure()) return;
    }
  }
}

TEST(HostCopy, SizeOneDimensionsAndFusedRuns) {
  for (size_t esize : kElementBytes) {
    // Size-1 dimensions with any stride, and dimensions that continue each other (fused into one run).
    CheckCopy({Name("ones", esize, {1, 7, 1, 9}), esize, {1, 7, 1, 9}, {12345, 1, -99, 7}});
    CheckCopy({Name("fused_step2", esize, {4, 6}), esize, {4, 6}, {12, 2}});
    CheckCopy({Name("eight_dims", esize, {2, 1, 3, 2, 1, 2, 3, 2}), esize, {2, 1, 3, 2, 1, 2, 3, 2},
               {1, 5, 2, 6, 7, 12, 24, 72}});
  }
}

}  // namespace

// Destinations of about 1 MiB, which stay in cache (below the L3 share: src/host_caches.c): the AVX-512 transpose's
// 128-element tiles prefetch the next tile, and the step-2 gather runs to its last elements: extents that end tiles,
// 16×16 blocks and the gather's last elements short, the last tile row and column partial.
TEST(HostCopy, MebibyteDestinations) {
  for (size_t esize : {size_t{4}, size_t{8}}) {
    const int64_t rows = static_cast<int64_t>((1u << 20) / esize / 700) + 37, cols = 700;  // > 1 MiB out
    CheckCopy({Name("mib_transposed_odd", esize, {rows, cols - 9}), esize, {rows, cols - 9}, {1, rows}});
    CheckCopy({Name("mib_transposed", esize, {rows - 5, cols}), esize, {rows - 5, cols}, {1, rows - 5}});
    CheckCopy({Name("mib_transposed_reversed_columns", esize, {rows, cols}), esize, {rows, cols}, {1, -rows}});
    const int64_t n = static_cast<int64_t>((1u << 20) / esize) + 13;
    CheckCopy({Name("mib_step2", esize, {n}), esize, {n}, {2}});
  }
}

// Destinations past the L3 share (at most 8 MiB: src/host_caches.c) leave the AVX-512 transpose, the tiles and the
// step-2 gathers through non-temporal stores (the tiles where destination rows are 16-byte multiples): extents that
// end tiles, SIMD blocks and the gather's last elements short.
TEST(HostCopy, LargeDestinationsStreamed) {
  for (size_t esize : {size_t{1}, size_t{4}, size_t{8}}) {
    const int64_t rows = static_cast<int64_t>((8u << 20) / esize / 1040) + 3, cols = 1040;  // > 8 MiB out
    // Rows of 1027 elements, not a multiple of 16 bytes: streamed (its rows counted for its own width, > 8 MiB out),
    // the AVX-512 transpose and the tiles keep to plain stores.
    const int64_t odd_rows = static_cast<int64_t>((8u << 20) / esize / (cols - 13)) + 3;
    CheckCopy({Name("large_transposed_odd", esize, {odd_rows, cols - 13}), esize, {odd_rows, cols - 13},
               {1, odd_rows}});
    CheckCopy({Name("large_transposed", esize, {rows, cols}), esize, {rows, cols}, {1, rows}});
    CheckCopy({Name("large_transposed_reversed", esize, {rows, cols}), esize, {rows, cols}, {-1, -rows}});
    // Three transposed planes of odd size: the second and third start off the 64-byte (and for 1-byte elements the
    // 16-byte) boundary streaming stores need, and take plain ones.
    const int64_t plane_cols = 1001, plane_rows = static_cast<int64_t>((8u << 20) / esize / 3 / 1001) + 3;
    CheckCopy({Name("large_transposed_planes", esize, {3, plane_rows, plane_cols}), esize,
               {3, plane_rows, plane_cols}, {plane_rows * plane_cols, 1, plane_rows}});
    const int64_t n = static_cast<int64_t>((8u << 20) / esize) + 13;
    CheckCopy({Name("large_step2", esize, {n}), esize, {n}, {2}});
    CheckCopy({Name("large_step2_rows", esize, {3, n / 3}), esize, {3, n / 3}, {2 * (n / 3) + 5, 2}});
  }
}

// Rows of a destination that stays in cache, around the length from which they are copied by src/host_copy.c's own
// AVX-512 loop (1 KiB) and its 256-byte step, each row starting at another offset in its line.
TEST(HostCopy, CropsOfLongRows) {
  for (size_t esize : {size_t{1}, size_t{4}, size_t{8}}) {
    for (int64_t row_bytes : {int64_t{1016}, int64_t{1024}, int64_t{1032}, int64_t{1277}, int64_t{4096 + 7}}) {
      const int64_t cols = row_bytes / static_cast<int64_t>(esize);
      CheckCopy({Name("crop_long_rows", esize, {5, cols}), esize, {5, cols}, {cols + 3, 1}});
      CheckCopy({Name("crop_long_rows_reversed", esize, {4, cols}), esize, {4, cols}, {-(cols + 1), 1}});
    }
  }
}

// Long contiguous rows of a destination past the L3 share (at most 8 MiB: src/host_caches.c) are streamed whole
// line by whole line, with a plain head and tail: rows whose length is not a multiple of the line, so that each row
// starts at another offset in its line, rows just past the streamed length and rows just short of it.
TEST(HostCopy, LargeDestinationsStreamedRows) {
  for (size_t esize : {size_t{1}, size_t{4}, size_t{8}}) {
    for (int64_t row_bytes : {int64_t{2047}, int64_t{2048}, int64_t{2049}, int64_t{5000}, int64_t{65536 + 24}}) {
      const int64_t cols = row_bytes / static_cast<int64_t>(esize);
      const int64_t rows = static_cast<int64_t>((8u << 20) / esize) / cols + 3;  // > 8 MiB out
      CheckCopy({Name("large_rows", esize, {rows, cols}), esize, {rows, cols}, {cols + 5, 1}});
      CheckCopy({Name("large_rows_reversed", esize, {rows, cols}), esize, {rows, cols}, {-(cols + 1), 1}});
    }
  }
}
