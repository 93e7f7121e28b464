/* dlmap core — memory: the default 64-byte-aligned allocator, the caller's allocator hook, and the
 * host (CPU backend) copy from any strides to compact row-major. */
#include <stdlib.h>
#include <string.h>

#include "src/layout.h"
#include "src/memory.h"

static void *default_allocate(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  return aligned_alloc(alignment, size); /* size is a multiple of the alignment (dlmap__align_size) */
}

static void default_release(void *ctx, void *pointer) {
  (void)ctx;
  free(pointer);
}

static const dlmap_allocator kDefaultAllocator = {default_allocate, default_release, NULL};

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

/* Copies one element of a small power-of-two size with a fixed-size memcpy the compiler inlines. */
static void copy_element(char *dst, const char *src, size_t n) {
  switch (n) {
    case 1: memcpy(dst, src, 1); return;
    case 2: memcpy(dst, src, 2); return;
    case 4: memcpy(dst, src, 4); return;
    case 8: memcpy(dst, src, 8); return;
    case 16: memcpy(dst, src, 16); return;
    default: memcpy(dst, src, n); return;
  }
}

void dlmap__copy_to_compact(void *dst, const void *src, int32_t ndim, const int64_t *shape, const int64_t *strides,
                            size_t element_bytes) {
  uint64_t count = 1;
  for (int32_t i = 0; i < ndim; i++) count *= (uint64_t)shape[i];
  if (count == 0) return;
  if (strides == NULL || dlmap__is_row_major(ndim, shape, strides)) {
    memcpy(dst, src, (size_t)count * element_bytes);
    return;
  }
  /* Walk every index with an odometer over the outer dimensions, tracking the byte offset as an
   * integer (an intermediate position may lie outside the buffer); the innermost dimension is one
   * memcpy when its stride is 1, else a strided loop. */
  const int32_t inner = ndim - 1;
  /* Byte steps per dimension. A size-1 dimension is never stepped and may carry any stride, even one
   * whose byte step overflows (validation ignores it), so its step is 0. The others fit with room to
   * spare: the extent check bounded (extent - 1) × stride × bits. */
  int64_t step[DLMAP_MAX_NDIM];
  for (int32_t i = 0; i < ndim; i++) step[i] = shape[i] > 1 ? strides[i] * (int64_t)element_bytes : 0;
  const size_t run = (size_t)shape[inner];
  const int64_t inner_step = step[inner];
  int64_t index[DLMAP_MAX_NDIM] = {0};
  int64_t offset = 0;
  const char *base = (const char *)src;
  char *out = (char *)dst;
  for (;;) {
    if (strides[inner] == 1) {
      memcpy(out, base + offset, run * element_bytes);
      out += run * element_bytes;
    } else {
      int64_t at = offset;
      for (size_t j = 0; j < run; j++, at += inner_step, out += element_bytes) copy_element(out, base + at, element_bytes);
    }
    int32_t d = inner - 1;
    for (; d >= 0; d--) {
      offset += step[d];
      if (++index[d] < shape[d]) break;
      offset -= shape[d] * step[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}
