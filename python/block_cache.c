/* dlmap Python binding — the memory under the module's counted allocator (allocator.c): malloc, aligned inside the
 * block, with one spare block per size class of up to 1 KiB kept for reuse. A Python exchange makes and frees one
 * small block per export (the managed tensor, shape and strides) and often on different threads, so the spare is
 * handed over with one atomic exchange, where malloc and free cost about 130 instructions a pair (bench/).
 *
 * Every block carries, just below the pointer handed out, the malloc pointer it lies in and its size class (0: not
 * cached). Under AddressSanitizer nothing is kept, so that it still sees every use of a freed block. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "python/binding.h"

enum { kClassBytes = 64, kClasses = 16 };

typedef struct block_header {
  void *raw;    /* what malloc returned */
  size_t klass; /* 1..kClasses: the block holds klass * kClassBytes bytes and may be kept; 0: freed when released */
} block_header;

#if defined(__SANITIZE_ADDRESS__)
#define DLMAP_PY_KEEP_SPARES 0
#else
#define DLMAP_PY_KEEP_SPARES 1
#endif

static _Atomic(void *) spares[kClasses];

void *dlmap_py_block_allocate(size_t size, size_t alignment) {
  if (alignment < kClassBytes) alignment = kClassBytes;
  size_t klass = 0;
  if (alignment == kClassBytes && size > 0 && size <= (size_t)kClasses * kClassBytes) {
    klass = (size + kClassBytes - 1) / kClassBytes;
    void *spare =
        DLMAP_PY_KEEP_SPARES ? atomic_exchange_explicit(&spares[klass - 1], NULL, memory_order_acquire) : NULL;
    if (spare != NULL) return spare;
    size = klass * kClassBytes; /* the whole class: any request of the class fits when the block is reused */
  }
  if (size > SIZE_MAX - alignment - sizeof(block_header)) return NULL;
  char *raw = (char *)malloc(size + alignment + sizeof(block_header));
  if (raw == NULL) return NULL;
  const uintptr_t first = (uintptr_t)raw + sizeof(block_header);
  char *block = raw + ((first + alignment - 1) / alignment * alignment - (uintptr_t)raw);
  const block_header header = {raw, klass};
  memcpy(block - sizeof header, &header, sizeof header);
  return block;
}

void dlmap_py_block_release(void *block) {
  if (block == NULL) return;
  block_header header;
  memcpy(&header, (char *)block - sizeof header, sizeof header);
  if (DLMAP_PY_KEEP_SPARES && header.klass != 0) {
    void *empty = NULL;
    if (atomic_compare_exchange_strong_explicit(&spares[header.klass - 1], &empty, block, memory_order_release,
                                                memory_order_relaxed)) {
      return;
    }
  }
  free(header.raw);
}
