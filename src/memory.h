/* dlmap core — allocation through the caller's allocator (or the default one). */
#ifndef DLMAP_SRC_MEMORY_H_
#define DLMAP_SRC_MEMORY_H_

#include "src/internal.h"

/* The allocator to use: the caller's, or the malloc-based default. */
const dlmap_allocator *dlmap__allocator_or_default(const dlmap_allocator *allocator);

/* size bytes aligned to alignment (a power of two; at least DLMAP_DATA_ALIGNMENT is used), or NULL. */
void *dlmap__allocate(const dlmap_allocator *allocator, size_t size, size_t alignment);
void dlmap__release(const dlmap_allocator *allocator, void *pointer);

/* Rounds size up to a multiple of DLMAP_DATA_ALIGNMENT; false on overflow. */
bool dlmap__align_size(size_t size, size_t *out);

#endif /* DLMAP_SRC_MEMORY_H_ */
