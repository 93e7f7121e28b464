/* dlmap core — the host's data caches as the CPU reports them, bounded, and the copy decisions keyed to them. */
#ifndef DLMAP_SRC_HOST_CACHES_H_
#define DLMAP_SRC_HOST_CACHES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The cache sizes the host copies are sized from (bytes, after the bounds of dlmap__host_caches_bound), and the
 * destination sizes from which they write through non-temporal (streaming) stores. */
typedef struct dlmap__host_caches {
  int64_t l1d;      /* one core's L1 data cache: the transpose tile's working set */
  int64_t l2;       /* one core's L2 */
  int64_t l3_share; /* the last-level cache over the online CPUs, capped (a VM may report one the size of its RAM);
                     * copies whose destination reaches it stream their stores */
} dlmap__host_caches;

/* The bounds: a size the CPU did not report (≤ 0) or reported out of range is replaced or clamped, so that a VM's
 * nonsense cannot turn streaming off (an LLC the size of RAM) or on for every copy (an L2 of a few bytes). A pure
 * function of what was read, for the tests. */
dlmap__host_caches dlmap__host_caches_bound(int64_t l1d_read, int64_t l2_read, int64_t l3_read, int64_t cpus_read);

/* The host's, read once (sysconf, which glibc answers from cpuid leaf 4 or 0x8000001D), bounded. */
const dlmap__host_caches *dlmap__host_caches_read(void);

/* Whether a copy writing destination_bytes in all should stream its stores: where the destination would not stay
 * in this core's share of the last-level cache anyway. */
bool dlmap__stream_destination(const dlmap__host_caches *caches, int64_t destination_bytes);

/* The sizes read and the thresholds, as one line of text ("L1d 32 KiB, L2 1024 KiB, ..."), for bench/. Returns
 * what snprintf returns. */
int dlmap__host_caches_describe(char *text, size_t capacity);

#endif /* DLMAP_SRC_HOST_CACHES_H_ */
