/* dlmap core — the host's data caches, read once and bounded, and the streaming decision of the host copies
 * (src/host_copy.c). The copies' speed comes from properties every x86-64 has (a small L1, a private L2, a shared
 * last level), sized from what the CPU reports instead of constants tuned on one machine. */
#include "src/host_caches.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

enum {
  KiB = 1024,
  MiB = 1024 * 1024,
};

/* The bounds (bytes). L1d: every x86-64 since 2003 has 32-64 KiB. L2: 256 KiB (older Intel) to 4 MiB (the largest
 * per-core L2 shipped). The L3 share caps at 8 MiB: above it no destination in cache is worth keeping there, and a VM
 * reporting an LLC the size of its RAM (320 MiB on the AMD EPYC VM of BENCHMARKS.md, 480 MiB on the Intel one) would
 * otherwise keep a 256 MiB copy from streaming. */
#define DLMAP_L1D_MIN ((int64_t)16 * KiB)
#define DLMAP_L1D_MAX ((int64_t)64 * KiB)
#define DLMAP_L1D_DEFAULT ((int64_t)32 * KiB)
#define DLMAP_L2_MIN ((int64_t)256 * KiB)
#define DLMAP_L2_MAX ((int64_t)4 * MiB)
#define DLMAP_L2_DEFAULT ((int64_t)1 * MiB)
#define DLMAP_L3_SHARE_MAX ((int64_t)8 * MiB)

static int64_t clamp_or(int64_t read, int64_t low, int64_t high, int64_t unknown) {
  if (read <= 0) return unknown;
  return read < low ? low : read > high ? high : read;
}

dlmap__host_caches dlmap__host_caches_bound(int64_t l1d_read, int64_t l2_read, int64_t l3_read, int64_t cpus_read) {
  dlmap__host_caches c;
  c.l1d = clamp_or(l1d_read, DLMAP_L1D_MIN, DLMAP_L1D_MAX, DLMAP_L1D_DEFAULT);
  c.l2 = clamp_or(l2_read, DLMAP_L2_MIN, DLMAP_L2_MAX, DLMAP_L2_DEFAULT);
  const int64_t cpus = cpus_read > 0 ? cpus_read : 1;
  /* No L3 reported: the cap (the copy streams only what would not fit a typical share anyway). At least L2: a
   * share below the private cache would stream what L2 holds. */
  c.l3_share = clamp_or(l3_read > 0 ? l3_read / cpus : 0, c.l2, DLMAP_L3_SHARE_MAX, DLMAP_L3_SHARE_MAX);
  return c;
}

static dlmap__host_caches g_caches;
static pthread_once_t g_caches_once = PTHREAD_ONCE_INIT;

static void read_caches(void) {
  g_caches = dlmap__host_caches_bound(sysconf(_SC_LEVEL1_DCACHE_SIZE), sysconf(_SC_LEVEL2_CACHE_SIZE),
                                      sysconf(_SC_LEVEL3_CACHE_SIZE), sysconf(_SC_NPROCESSORS_ONLN));
}

const dlmap__host_caches *dlmap__host_caches_read(void) {
  pthread_once(&g_caches_once, read_caches);
  return &g_caches;
}

bool dlmap__stream_destination(const dlmap__host_caches *caches, int64_t destination_bytes) {
  return destination_bytes >= caches->l3_share;
}

int dlmap__host_caches_describe(char *text, size_t capacity) {
  const dlmap__host_caches *c = dlmap__host_caches_read();
  return snprintf(text, capacity,
                  "read L1d %ld KiB, L2 %ld KiB, L3 %ld KiB over %ld CPUs; bounded L1d %lld KiB, L2 %lld KiB, "
                  "L3 share %lld KiB; streaming stores from the L3 share",
                  sysconf(_SC_LEVEL1_DCACHE_SIZE) / KiB, sysconf(_SC_LEVEL2_CACHE_SIZE) / KiB,
                  sysconf(_SC_LEVEL3_CACHE_SIZE) / KiB, sysconf(_SC_NPROCESSORS_ONLN), (long long)(c->l1d / KiB),
                  (long long)(c->l2 / KiB), (long long)(c->l3_share / KiB));
}
