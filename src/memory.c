/* dlmap core — memory: the default 64-byte-aligned allocator and the caller's allocator hook. The host copies that
 * fill what it allocates are src/host_copy.c's. */
#include <stdlib.h>
#include <string.h>

#include "src/memory.h"

/* malloc, aligned inside the block: glibc's aligned_alloc serves any alignment above malloc's own 16 bytes on a
 * slow path that bypasses its per-thread cache (about 600 instructions for a 192-byte export block against about
 * 100 for malloc and free, bench/). malloc's pointer is kept just below the aligned one, for release; an alignment of
 * at least a pointer's size leaves room for it. */
static void *default_allocate(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  if (size > SIZE_MAX - alignment) return NULL;
  char *raw = (char *)malloc(size + alignment);
  if (raw == NULL) return NULL;
  void **aligned = (void **)(void *)(((uintptr_t)raw + alignment) & ~(uintptr_t)(alignment - 1));
  aligned[-1] = raw;
  return aligned;
}

static void default_release(void *ctx, void *pointer) {
  (void)ctx;
  free(((void **)pointer)[-1]);
}

static const dlmap_allocator kDefaultAllocator = {default_allocate, default_release, NULL};

const dlmap_allocator *dlmap_allocator_default(void) { return &kDefaultAllocator; }

const dlmap_allocator *dlmap__allocator_or_default(const dlmap_allocator *allocator) {
  return allocator != NULL && allocator->allocate != NULL && allocator->release != NULL ? allocator
                                                                                        : &kDefaultAllocator;
}

bool dlmap__align_size(size_t size, size_t *out) {
  if (size > SIZE_MAX - (DLMAP_DATA_ALIGNMENT - 1)) return false;
  *out = (size + DLMAP_DATA_ALIGNMENT - 1) & ~(size_t)(DLMAP_DATA_ALIGNMENT - 1);
  return true;
}

void *dlmap__allocate(const dlmap_allocator *allocator, size_t size, size_t alignment) {
  size_t rounded;
  if (alignment < DLMAP_DATA_ALIGNMENT) alignment = DLMAP_DATA_ALIGNMENT;
  if (!dlmap__align_size(size == 0 ? 1 : size, &rounded)) return NULL;
  if (rounded % alignment != 0) { /* aligned_alloc wants a multiple of the alignment */
    if (rounded > SIZE_MAX - alignment) return NULL;
    rounded = (rounded + alignment - 1) / alignment * alignment;
  }
  allocator = dlmap__allocator_or_default(allocator);
  return allocator->allocate(allocator->ctx, rounded, alignment);
}

void dlmap__release(const dlmap_allocator *allocator, void *pointer) {
  if (pointer == NULL) return;
  allocator = dlmap__allocator_or_default(allocator);
  allocator->release(allocator->ctx, pointer);
}
