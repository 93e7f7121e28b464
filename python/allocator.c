/* dlmap Python binding — the allocator every export and import of the module passes to dlmap: 64-byte aligned blocks
 * (block_cache.c), counted, and able to fail on demand, so the tests can see leaks and exercise out-of-memory paths
 * (testing_hooks.c reads and steers it). The counts are of the blocks dlmap asked for and gave back, whether or not
 * block_cache.c keeps a spare. */
#include <stdatomic.h>

#include "python/binding.h"

static atomic_llong total_allocations; /* live: total less released (one atomic add per allocation, one per release) */
static atomic_llong released_allocations;
atomic_llong dlmap_py_live_exports;
static atomic_llong failures_requested; /* the next N allocations fail (testing the out-of-memory paths) */
static atomic_llong allocations_without_gil; /* testing: allocations made while the thread held no GIL, */
static atomic_bool watching_gil;            /* counted only while a test watches (PyGILState_Check costs about
                                             * 30 instructions, a tenth of an export's own, on Python 3.11) */

static void *counted_allocate(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  long long pending = atomic_load(&failures_requested);
  while (pending > 0) {
    if (atomic_compare_exchange_weak(&failures_requested, &pending, pending - 1)) return NULL;
  }
  if (atomic_load_explicit(&watching_gil, memory_order_relaxed) && !PyGILState_Check()) { /* safe without the GIL */
    atomic_fetch_add(&allocations_without_gil, 1);
  }
  void *pointer = dlmap_py_block_allocate(size, alignment);
  if (pointer != NULL) {
    atomic_fetch_add(&total_allocations, 1);
  }
  return pointer;
}

static void counted_release(void *ctx, void *pointer) {
  (void)ctx;
  if (pointer == NULL) return;
  dlmap_py_block_release(pointer);
  atomic_fetch_add(&released_allocations, 1);
}

const dlmap_allocator dlmap_py_allocator = {counted_allocate, counted_release, NULL};

dlmap_py_allocation_stats dlmap_py_allocations(void) {
  const long long released = atomic_load(&released_allocations); /* first: live never reads below the truth */
  const long long total = atomic_load(&total_allocations);
  dlmap_py_allocation_stats stats = {total - released, total, atomic_load(&dlmap_py_live_exports),
                                     atomic_load(&allocations_without_gil)};
  return stats;
}

void dlmap_py_fail_next_allocations(long long n) { atomic_store(&failures_requested, n > 0 ? n : 0); }

void dlmap_py_watch_gil(bool watch) { atomic_store(&watching_gil, watch); }
