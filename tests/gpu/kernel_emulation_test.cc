// dlmap GPU tests — the strided-copy kernels' own code (src/backends/kernels/strided_copy.cu) run on the host: each
// launched block is a set of OS threads, one per GPU thread, that meet at __syncthreads() on a barrier, so the tiled
// transposes' two phases run as on a GPU. Small grids force the grid-stride loops to wrap. Every kernel of every unit
// against a reference gather, on layouts gpu_kernels.c hands them (the plan is made by dlmap__kernel_plan_copy itself).
#include <pthread.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

// ---- what nvcc gives a kernel, for a host build ------------------------------------------------------------------
struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};
thread_local Dim3 threadIdx, blockIdx;
Dim3 blockDim, gridDim;
pthread_barrier_t g_block_barrier;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static  // one block runs at a time: a static array is that block's shared memory
inline void __syncthreads() { pthread_barrier_wait(&g_block_barrier); }

#include "src/backends/kernels/strided_copy_params.h"
#include "tests/gpu/strided_copy_cu.inc"  // strided_copy.cu without its #include of the parameter block

extern "C" {
#include "src/backends/gpu_kernels.h"
}

namespace {

using Kernel = void (*)(const dlmap_copy_params);

// Runs `kernel` over grid blocks of block_x × block_y threads, one block after another.
void Launch(Kernel kernel, const dlmap_copy_params &p, unsigned grid, unsigned block_x, unsigned block_y) {
  gridDim = {grid, 1, 1};
  blockDim = {block_x, block_y, 1};
  for (unsigned b = 0; b < grid; b++) {
    pthread_barrier_init(&g_block_barrier, nullptr, block_x * block_y);
    std::vector<std::thread> threads;
    for (unsigned y = 0; y < block_y; y++) {
      for (unsigned x = 0; x < block_x; x++) {
        threads.emplace_back([=] {
          blockIdx = {b, 0, 0};
          threadIdx = {x, y, 0};
          kernel(p);
        });
      }
    }
    for (std::thread &t : threads) t.join();
    pthread_barrier_destroy(&g_block_barrier);
  }
}

Kernel ByName(const std::string &name) {
#define ENTRY(N) {"dlmap_gather32_" #N, dlmap_gather32_##N}, {"dlmap_gather_" #N, dlmap_gather_##N}, \
                 {"dlmap_transpose_" #N, dlmap_transpose_##N}
  const std::vector<std::pair<std::string, Kernel>> all = {ENTRY(u1), ENTRY(u2), ENTRY(u4), ENTRY(u8), ENTRY(u16)};
#undef ENTRY
  for (const auto &entry : all) {
    if (entry.first == name) return entry.second;
  }
  return nullptr;
}

struct Case {
  const char *what;
  size_t element_bytes;
  std::vector<int64_t> shape, strides;  // DLPack order, elements
  int64_t first_byte;
};

TEST(KernelEmulation, EveryShapeAndUnitCopiesLikeTheReference) {
  const std::vector<Case> cases = {
      {"transposed, ragged tiles", 4, {37, 45}, {1, 37}, 0},
      {"batch of transposes", 2, {3, 33, 35}, {33 * 35, 1, 33}, 0},
      {"bytes transposed", 1, {40, 70}, {1, 40}, 0},
      {"doubles transposed", 8, {31, 9}, {1, 31}, 0},
      {"complex128 transposed", 16, {7, 34}, {1, 7}, 0},
      {"rows of a wider buffer", 4, {20, 30}, {33, 1}, 0},
      {"rows in 16-byte units", 4, {20, 32}, {36, 1}, 0},
      {"rows in 16-byte units, reversed", 4, {20, 32}, {-36, 1}, 4 * 36 * 19},
      {"step 2", 2, {1000}, {2}, 0},
      {"broadcast", 8, {6, 50}, {0, 1}, 0},
      {"negative strides", 4, {9, 11}, {-11, -1}, 4 * 98},
      {"four dimensions", 1, {2, 3, 4, 5}, {1, 2, 6, 24}, 0},
      {"16-byte elements at 8 bytes", 16, {5, 4}, {5, 1}, 8},
  };
  for (const Case &c : cases) {
    int64_t lo = 0, hi = 0, count = 1;
    for (size_t d = 0; d < c.shape.size(); d++) {
      const int64_t reach = (c.shape[d] - 1) * c.strides[d];
      (reach < 0 ? lo : hi) += reach;
      count *= c.shape[d];
    }
    alignas(16) static unsigned char source[1 << 16];
    alignas(16) static unsigned char out[1 << 16], want[1 << 16];
    ASSERT_LE(static_cast<size_t>((hi - lo + 1)) * c.element_bytes + c.first_byte, sizeof source) << c.what;
    for (size_t i = 0; i < sizeof source; i++) source[i] = static_cast<unsigned char>(i * 13 % 251);
    const unsigned char *first = source + c.first_byte;
    for (int64_t k = 0; k < count; k++) {  // the reference: row-major walk
      int64_t rest = k, offset = 0;
      for (size_t d = c.shape.size(); d-- > 0;) {
        offset += rest % c.shape[d] * c.strides[d];
        rest /= c.shape[d];
      }
      std::memcpy(want + k * c.element_bytes, first + offset * static_cast<int64_t>(c.element_bytes), c.element_bytes);
    }
    // The layout as the copy path makes it: the shape check's extent, then the copy layout.
    const int32_t ndim = static_cast<int32_t>(c.shape.size());
    const DLDataType bytes_type = {kDLUInt, static_cast<uint8_t>(c.element_bytes * 8), 1};
    dlmap__extent extent;
    ASSERT_EQ(dlmap__check_shape(ndim, c.shape.data(), c.strides.data(), bytes_type, &extent, nullptr), DLMAP_OK)
        << c.what;
    dlmap__copy_layout layout;
    dlmap__copy_layout_make(ndim, c.shape.data(), c.strides.data(), &extent, &layout);
    dlmap__kernel_plan plan;
    ASSERT_TRUE(dlmap__kernel_plan_copy(first, out, &layout, &plan)) << c.what;
    const std::string name = dlmap__kernel_name(&plan);
    // Each plan through its own kernel, and (same map) through both gathers: all three must agree.
    std::vector<std::string> names = {name};
    const std::string unit = name.substr(name.rfind('_'));
    if (name.find("transpose") != std::string::npos) names.push_back("dlmap_gather32" + unit);
    names.push_back("dlmap_gather" + unit);
    for (const std::string &run : names) {
      std::memset(out, 0xEE, sizeof out);
      const bool tiled = run.find("transpose") != std::string::npos;
      // Few threads (each is an OS thread here), so every loop over tiles or elements wraps: one block of the
      // transposes' fixed shape, two small blocks of a gather (which takes any block size).
      Launch(ByName(run), plan.params, tiled ? 1 : 2, tiled ? DLMAP_KERNEL_TILE : 8, tiled ? DLMAP_KERNEL_TILE_ROWS : 1);
      const size_t bytes = static_cast<size_t>(count) * c.element_bytes;
      EXPECT_EQ(std::memcmp(out, want, bytes), 0) << c.what << " through " << run;
      EXPECT_EQ(out[bytes], 0xEE) << c.what << " through " << run << ": wrote past the destination";
    }
  }
}

}  // namespace
