/* dlmap GPU backend — what the runtime loader (gpu_loader.c) and the device operations (gpu.c) share: the loaded
 * runtime, whose entry points and values are declared from the spec's generated rows, and the one lookup of the spec's
 * rows the operations make. Private to src/backends: the rest of dlmap sees dlmap__gpu through gpu.h only. */
#ifndef DLMAP_SRC_BACKENDS_GPU_RUNTIME_H_
#define DLMAP_SRC_BACKENDS_GPU_RUNTIME_H_

#include "src/backends/gpu.h"

/* The ops of the spec's symbol table, each with the C signature it is called with (codegen/runtime_interface.py
 * RUNTIME_SIGNATURES, generated as runtime_symbols.inc's DLMAP_RUNTIME_OP rows). Each returns the runtime's error
 * enum (0: success) unless its return type says otherwise. */
enum {
#define DLMAP_RUNTIME_OP(OP, ...) DLMAP__GPU_OP_##OP,
#include "src/generated/runtime_symbols.inc"
  DLMAP__GPU_OP_COUNT
};

/* Values of the runtime (spec: memcpy_kinds, flags, statuses, pointer_attributes offsets), named as the generator lists
 * them (runtime_values.inc's DLMAP_RUNTIME_VALUE_NAME rows). */
enum {
#define DLMAP_RUNTIME_VALUE_NAME(NAME, ...) DLMAP__GPU_VALUE_##NAME,
#include "src/generated/runtime_values.inc"
  DLMAP__GPU_VALUE_COUNT
};

/* The runtime's default pools of the memory kinds other than device memory (spec: runtime.stream_allocator.pools), and
 * each kind's pool: the location and allocation types it is asked for by, and whether it is mapped for every device. */
typedef struct dlmap__gpu_stream_pools_row {
  dlmap_platform platform;
  const char *get_default, *malloc_from_pool, *set_access;
  int from_version;    /* the oldest runtime_version that has the three */
  int device_location; /* a device's location type, in set_access's descriptors */
  int read_write;      /* the access flags that map a pool for a device */
} dlmap__gpu_stream_pools_row;

typedef struct dlmap__gpu_stream_pool_row {
  dlmap_platform platform;
  dlmap_memory_kind memory;
  int location, allocation;
  bool grant_devices;
} dlmap__gpu_stream_pool_row;

typedef struct dlmap__gpu_ops {
#define DLMAP_RUNTIME_OP(OP, op, R, ARGS, ...) R(*op) ARGS;
#include "src/generated/runtime_symbols.inc"
} dlmap__gpu_ops;

/* The driver's entry points beside the runtime's (codegen/runtime_interface.py RUNTIME_CONTEXT_SIGNATURES and
 * RUNTIME_ADDRESS_RANGE_SIGNATURE). */
typedef struct dlmap__gpu_driver_ops {
#define DLMAP_DRIVER_OP(OP, op, R, ARGS, ...) R(*op) ARGS;
#include "src/generated/runtime_contexts.inc"
} dlmap__gpu_driver_ops;

/* The stream-ordered allocator's entry points (codegen/runtime_interface.py STREAM_ALLOCATOR_SIGNATURES). */
typedef struct dlmap__gpu_stream_allocator_ops {
#define DLMAP_STREAM_ALLOCATOR_OP(OP, op, R, ARGS, ...) R(*op) ARGS;
#include "src/generated/runtime_contexts.inc"
} dlmap__gpu_stream_allocator_ops;

/* The default pools' entry points (codegen/runtime_interface.py STREAM_POOL_SIGNATURES). */
typedef struct dlmap__gpu_stream_pool_ops {
#define DLMAP_STREAM_POOL_OP(OP, op, R, ARGS, ...) R(*op) ARGS;
#include "src/generated/runtime_contexts.inc"
} dlmap__gpu_stream_pool_ops;

/* A loaded runtime (gpu.h's dlmap__gpu): written by the loader while it loads (under its lock, before the slot is
 * published), then only read, but for each memory kind's default pool, which the operations ask for once at the kind's
 * first allocation (pool_state, kind_pool). */
struct dlmap__gpu {
  dlmap_platform platform;
  const char *name;
  void *library; /* the runtime's dlopen handle (the kernels' module API where the spec names no other library) */
  dlmap__gpu_ops call;
  const char *symbol[DLMAP__GPU_OP_COUNT];
  int64_t value[DLMAP__GPU_VALUE_COUNT];
  bool has_value[DLMAP__GPU_VALUE_COUNT];
  bool has_stream[DLMAP_STREAM_INVALID + 1];
  int64_t stream[DLMAP_STREAM_INVALID + 1];
  int devices, devices_status; /* device_count's answer when the runtime was loaded */
  bool has_layout;      /* a pointer-attributes layout applies to this runtime version */
  int64_t layout;       /* its from_version */
  /* The driver's per-thread context (spec: runtime.context; NULL where the spec names none) and the allocation holding
   * an address (spec: runtime.address_range; NULL where it names none or the library lacks it). */
  dlmap__gpu_driver_ops driver;
  const char *context_set_symbol, *context_retain_symbol; /* for messages */
  int runtime_version;  /* runtime_version's answer; -1 where it failed */
  /* The stream-ordered pair where this runtime has it (NULL: device memory comes from malloc and goes back to free),
   * and which allocator serves device copies and why (dlmap_platform_allocator). */
  dlmap__gpu_stream_allocator_ops pool;
  const char *pool_malloc_symbol; /* for messages */
  int pool_not_supported; /* malloc_async's status on a device without a pool */
  /* The default pools of other memory kinds where this runtime has them (NULL ops: none): each kind's row, and its
   * pool once asked for at its first allocation (pool_state, read with acquire: 0 not yet, 1 kind_pool serves, -1 the
   * kind's synchronous allocator does; written once under gpu.c's g_pool_lock). */
  dlmap__gpu_stream_pool_ops pools;
  const dlmap__gpu_stream_pools_row *pools_row;
  const dlmap__gpu_stream_pool_row *kind_row[DLMAP_MEMORY_KIND_COUNT];
  int pool_state[DLMAP_MEMORY_KIND_COUNT];
  void *kind_pool[DLMAP_MEMORY_KIND_COUNT];
  char allocator[400];
};

/* The memory kind a memory-type value of pointer_attributes stands for in the runtime's layout (the spec's rows of
 * gpu->layout); DLMAP_MEMORY_KIND_COUNT when the layout does not list it. */
dlmap_memory_kind dlmap__gpu_memory_kind(const dlmap__gpu *gpu, int type);

#endif /* DLMAP_SRC_BACKENDS_GPU_RUNTIME_H_ */
