// dlmap host caches (src/host_caches.c): the cache sizes the host copies are sized from, bounded against what a VM
// may report, and the streaming decision as a pure function of (sizes read, destination size).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

extern "C" {
#include "src/host_caches.h"
}

namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;

TEST(HostCaches, PlausibleSizesAreKept) {
  // AMD EPYC Zen 4, one core's share of 32 MiB over 8 CPUs.
  const dlmap__host_caches c = dlmap__host_caches_bound(32 * kKiB, 1 * kMiB, 32 * kMiB, 8);
  EXPECT_EQ(32 * kKiB, c.l1d);
  EXPECT_EQ(1 * kMiB, c.l2);
  EXPECT_EQ(4 * kMiB, c.l3_share);
  EXPECT_TRUE(dlmap__stream_destination(&c, 4 * kMiB));
  EXPECT_FALSE(dlmap__stream_destination(&c, 4 * kMiB - 1));
}

TEST(HostCaches, AnLlcTheSizeOfRamStillStreamsLargeCopies) {
  // The Intel Xeon VM of issue 58 (480 MiB L3 over 2 vCPUs) and this AMD EPYC VM (sysconf: 320 MiB).
  for (int64_t l3 : {480 * kMiB, 320 * kMiB, int64_t{1} << 40}) {
    const dlmap__host_caches c = dlmap__host_caches_bound(48 * kKiB, 2 * kMiB, l3, 2);
    EXPECT_LE(c.l3_share, 8 * kMiB) << l3;
    EXPECT_TRUE(dlmap__stream_destination(&c, 256 * kMiB)) << l3;
    EXPECT_TRUE(dlmap__stream_destination(&c, 16 * kMiB)) << l3;
    EXPECT_FALSE(dlmap__stream_destination(&c, 2 * kMiB)) << l3;  // fits the share: stays in cache
  }
}

TEST(HostCaches, NonsenseSizesAreBounded) {
  // Nothing reported (sysconf's 0 or -1), a few bytes, or far too much: the bounds, never zero thresholds.
  for (int64_t bad : {int64_t{-1}, int64_t{0}, int64_t{64}, int64_t{1} << 50}) {
    const dlmap__host_caches c = dlmap__host_caches_bound(bad, bad, bad, bad);
    EXPECT_GE(c.l1d, 16 * kKiB) << bad;
    EXPECT_LE(c.l1d, 64 * kKiB) << bad;
    EXPECT_GE(c.l2, 256 * kKiB) << bad;
    EXPECT_LE(c.l2, 4 * kMiB) << bad;
    EXPECT_GE(c.l3_share, c.l2) << bad;
    EXPECT_LE(c.l3_share, 8 * kMiB) << bad;
    EXPECT_FALSE(dlmap__stream_destination(&c, 64 * kKiB)) << bad;  // a small copy stays in cache
    EXPECT_TRUE(dlmap__stream_destination(&c, 256 * kMiB)) << bad;  // a huge one streams
  }
}

TEST(HostCaches, TheShareIsAtLeastL2) {
  // Many CPUs over a small L3: the share never drops below the private L2 (that would stream what L2 holds).
  const dlmap__host_caches c = dlmap__host_caches_bound(32 * kKiB, 2 * kMiB, 16 * kMiB, 64);
  EXPECT_EQ(2 * kMiB, c.l3_share);
  EXPECT_FALSE(dlmap__stream_destination(&c, 2 * kMiB - 1));
  EXPECT_TRUE(dlmap__stream_destination(&c, 2 * kMiB));
}

TEST(HostCaches, TheHostsOwnAreReadOnceAndBounded) {
  const dlmap__host_caches *c = dlmap__host_caches_read();
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(c, dlmap__host_caches_read());
  EXPECT_GE(c->l2, 256 * kKiB);
  EXPECT_LE(c->l3_share, 8 * kMiB);
  char text[512];
  EXPECT_GT(dlmap__host_caches_describe(text, sizeof text), 0);
  EXPECT_NE(nullptr, std::strstr(text, "L2"));
}

}  // namespace
