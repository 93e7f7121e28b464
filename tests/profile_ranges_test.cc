// dlmap tests — dlmap_profile_range_until_at (src/profile.c): the profile's max_version ranges' upper bounds, in
// ascending order, then false; false too for any index past the table (the public contract: "false past the last
// bounded range"), with *until left as it was. Built once per profile library (tests/BUILD): their ranges differ.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "dlmap/dlmap.h"
#include "dlmap/profile.h"

namespace {

TEST(ProfileRanges, BoundsAscendThenFalseForEveryLaterIndex) {
  dlmap_version until = {0, 0}, previous = {0, 0};
  size_t bounded = 0;
  for (; dlmap_profile_range_until_at(bounded, &until); bounded++) {
    ASSERT_LT(bounded, size_t{64}) << "no end to the bounded ranges";
    if (bounded > 0) {
      EXPECT_GT(dlmap_version_compare(until, previous), 0) << "range " << bounded;
    }
    previous = until;
  }
  // Past the last bounded range: the open last range, past the table's end, and far past it.
  for (const size_t index : {bounded, bounded + 1, bounded + 2, size_t{1000}, SIZE_MAX}) {
    dlmap_version left = {77, 88};
    EXPECT_FALSE(dlmap_profile_range_until_at(index, &left)) << "index " << index;
    EXPECT_EQ(left.major, 77u) << "index " << index;
    EXPECT_EQ(left.minor, 88u) << "index " << index;
  }
}

}  // namespace
