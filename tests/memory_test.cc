// dlmap tests — src/memory.c: the allocator a call uses (the caller's only when it has both functions), the sizes and
// alignments dlmap__allocate asks it for (rounded up to DLMAP_DATA_ALIGNMENT, refused without asking on overflow), and
// dlmap__release, which never passes NULL on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

#include "dlmap/dlmap.h"

extern "C" {
#include "src/memory.h"
}

namespace {

// An allocator that records what it was asked and hands out aligned_alloc's memory.
struct Recorder {
  int allocations = 0;
  int releases = 0;
  size_t size = 0;
  size_t alignment = 0;
};

void *RecordAllocate(void *ctx, size_t size, size_t alignment) {
  Recorder *r = static_cast<Recorder *>(ctx);
  r->allocations++;
  r->size = size;
  r->alignment = alignment;
  return std::aligned_alloc(alignment, size);
}

void RecordRelease(void *ctx, void *pointer) {
  static_cast<Recorder *>(ctx)->releases++;
  std::free(pointer);
}

TEST(Memory, OnlyAnAllocatorWithBothFunctionsIsUsed) {
  Recorder r;
  const dlmap_allocator complete = {RecordAllocate, RecordRelease, &r};
  const dlmap_allocator no_allocate = {nullptr, RecordRelease, &r};
  const dlmap_allocator no_release = {RecordAllocate, nullptr, &r};
  EXPECT_EQ(dlmap__allocator_or_default(&complete), &complete);
  EXPECT_EQ(dlmap__allocator_or_default(nullptr), dlmap_allocator_default());
  EXPECT_EQ(dlmap__allocator_or_default(&no_allocate), dlmap_allocator_default());
  EXPECT_EQ(dlmap__allocator_or_default(&no_release), dlmap_allocator_default());
  void *p = dlmap__allocate(&no_release, 10, DLMAP_DATA_ALIGNMENT);  // the default's memory, freed by the default
  ASSERT_NE(p, nullptr);
  dlmap__release(&no_release, p);
  EXPECT_EQ(r.allocations, 0);
  EXPECT_EQ(r.releases, 0);
}

TEST(Memory, AlignSizeRoundsUpAndRefusesOverflow) {
  size_t out = 0;
  ASSERT_TRUE(dlmap__align_size(1, &out));
  EXPECT_EQ(out, static_cast<size_t>(DLMAP_DATA_ALIGNMENT));
  const size_t largest = SIZE_MAX - (DLMAP_DATA_ALIGNMENT - 1);  // the largest multiple of the alignment
  ASSERT_TRUE(dlmap__align_size(largest, &out));
  EXPECT_EQ(out, largest);
  out = 7;
  EXPECT_FALSE(dlmap__align_size(largest + 1, &out));
  EXPECT_FALSE(dlmap__align_size(SIZE_MAX, &out));
  EXPECT_EQ(out, 7u);  // untouched on overflow
}

TEST(Memory, AllocateAsksForWholeAlignedBlocks) {
  Recorder r;
  const dlmap_allocator recorder = {RecordAllocate, RecordRelease, &r};
  void *small = dlmap__allocate(&recorder, 10, 8);  // below DLMAP_DATA_ALIGNMENT: that alignment is used
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(r.alignment, static_cast<size_t>(DLMAP_DATA_ALIGNMENT));
  EXPECT_EQ(r.size, static_cast<size_t>(DLMAP_DATA_ALIGNMENT));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % DLMAP_DATA_ALIGNMENT, 0u);
  dlmap__release(&recorder, small);

  void *empty = dlmap__allocate(&recorder, 0, DLMAP_DATA_ALIGNMENT);  // zero bytes: one block, never NULL
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(r.size, static_cast<size_t>(DLMAP_DATA_ALIGNMENT));
  dlmap__release(&recorder, empty);

  void *wide = dlmap__allocate(&recorder, 100, 256);  // a multiple of the larger alignment (aligned_alloc's rule)
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(r.alignment, 256u);
  EXPECT_EQ(r.size, 256u);
  dlmap__release(&recorder, wide);
  EXPECT_EQ(r.allocations, 3);
  EXPECT_EQ(r.releases, 3);
}

TEST(Memory, AllocateRefusesSizesThatOverflowWithoutAsking) {
  Recorder r;
  const dlmap_allocator recorder = {RecordAllocate, RecordRelease, &r};
  EXPECT_EQ(dlmap__allocate(&recorder, SIZE_MAX, DLMAP_DATA_ALIGNMENT), nullptr);  // rounding to 64 overflows
  const size_t largest = SIZE_MAX - (DLMAP_DATA_ALIGNMENT - 1);
  EXPECT_EQ(dlmap__allocate(&recorder, largest, 2 * DLMAP_DATA_ALIGNMENT), nullptr);  // rounding to 128 overflows
  EXPECT_EQ(r.allocations, 0);
}

TEST(Memory, ReleasingNullAsksNothing) {
  Recorder r;
  const dlmap_allocator recorder = {RecordAllocate, RecordRelease, &r};
  dlmap__release(&recorder, nullptr);
  dlmap__release(nullptr, nullptr);
  EXPECT_EQ(r.releases, 0);
}

}  // namespace
