# dlmap codegen — the GPU backend's C interface with a vendor runtime: its entry points and values, written once.
"""The C side of a spec's runtime tables (platforms[i].runtime), which no YAML can change.

The entry points the GPU backend calls, each with the C signature it is called with, and the names of the runtime's
values it passes or reads. spec.py checks a spec's runtime table against these lists; emit.py writes them as the
signature rows (DLMAP_RUNTIME_OP, DLMAP_DRIVER_OP, DLMAP_STREAM_ALLOCATOR_OP, DLMAP_STREAM_POOL_OP, DLMAP_KERNEL_OP,
DLMAP_KERNEL_COMPILER_OP) and the value-name rows (DLMAP_RUNTIME_VALUE_NAME) from which the C declares its function
pointers and its enum of values, so the C restates none of them.
"""

# The vendor runtime's ops the backend calls, each with the C signature it is called with (return type, parameters):
# the generator emits them as runtime_symbols.inc's DLMAP_RUNTIME_OP rows, from which src/backends/gpu_runtime.h
# declares its function pointers; each returns the runtime's error enum (0: success) unless its return type says
# otherwise.
RUNTIME_SIGNATURES = (
    ("device_count", "int", "int *count"),
    ("error_string", "const char *", "int error"),  # returns text, not an error
    ("get_last_error", "int", "void"),  # reads and clears the sticky error
    ("runtime_version", "int", "int *version"),  # selects pointer_attributes.layouts
    ("get_device", "int", "int *device"),
    ("set_device", "int", "int device"),
    ("malloc", "int", "void **ptr, size_t bytes"),  # device memory
    ("free", "int", "void *ptr"),
    ("malloc_host", "int", "void **ptr, size_t bytes, unsigned flags"),  # pinned host memory
    ("free_host", "int", "void *ptr"),
    ("malloc_managed", "int", "void **ptr, size_t bytes, unsigned flags"),  # managed memory
    ("memcpy_async", "int", "void *dst, const void *src, size_t bytes, int kind, void *stream"),
    ("memcpy_2d_async", "int",
     "void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, int kind, void *stream"),
    ("memset_async", "int", "void *dst, int value, size_t bytes, void *stream"),
    ("event_create", "int", "void **event, unsigned flags"),
    ("event_record", "int", "void *event, void *stream"),
    ("event_destroy", "int", "void *event"),
    ("stream_wait_event", "int", "void *stream, void *event, unsigned flags"),
    ("stream_synchronize", "int", "void *stream"),
    ("pointer_attributes", "int", "void *attributes, const void *ptr"),
)
RUNTIME_SYMBOLS = tuple(op for op, _, _ in RUNTIME_SIGNATURES)
# The memcpy directions and flags the backend passes, and the stream meanings that name a runtime's default streams.
MEMCPY_KINDS = ("host_to_device", "device_to_host", "device_to_device", "default")
RUNTIME_FLAGS = ("event_disable_timing", "malloc_host", "malloc_managed")
DEFAULT_STREAMS = ("legacy_default", "per_thread_default", "default")
# Values of the runtime's error enum the backend gives a meaning to: invalid_value is what pointer_attributes
# returns for memory the runtime does not know (CUDA before 11, HIP 5); every other failure is an error.
RUNTIME_STATUSES = ("invalid_value",)
# The driver's context entry points (runtime.context) and its address-range entry point (runtime.address_range), with
# the C signature each is called with, each returning the driver's error enum (0: success): the generator emits them as
# runtime_contexts.inc's DLMAP_DRIVER_OP rows, from which src/backends/gpu_runtime.h declares its function pointers.
RUNTIME_CONTEXT_SIGNATURES = (
    ("get_current", "int", "void **context"),
    ("set_current", "int", "void *context"),
    ("retain_primary", "int", "void **context, int device"),
)
RUNTIME_CONTEXT_OPS = tuple(op for op, _, _ in RUNTIME_CONTEXT_SIGNATURES)
RUNTIME_ADDRESS_RANGE_SIGNATURE = ("address_range", "int", "void **base, size_t *bytes, const void *pointer")
# The runtime's stream-ordered allocator (runtime.stream_allocator), in the runtime's own library, each returning the
# runtime's error enum: runtime_contexts.inc's DLMAP_STREAM_ALLOCATOR_OP rows.
STREAM_ALLOCATOR_SIGNATURES = (
    ("malloc_async", "int", "void **pointer, size_t bytes, void *stream"),
    ("free_async", "int", "void *pointer, void *stream"),
)
STREAM_ALLOCATOR_OPS = tuple(op for op, _, _ in STREAM_ALLOCATOR_SIGNATURES)
# The runtime's default pools (runtime.stream_allocator.pools), in the runtime's own library: runtime_contexts.inc's
# DLMAP_STREAM_POOL_OP rows. A location is {int type; int id}; an access descriptor {location; int flags}.
STREAM_POOL_SIGNATURES = (
    ("get_default", "int", "void **pool, const void *location, int allocation_type"),
    ("malloc_from_pool", "int", "void **pointer, size_t bytes, void *pool, void *stream"),
    ("set_access", "int", "void *pool, const void *descriptors, size_t count"),
)
STREAM_POOL_OPS = tuple(op for op, _, _ in STREAM_POOL_SIGNATURES)
# The module API the strided-copy kernels are loaded and launched through (runtime.kernels), each returning the
# library's error enum (0: success), and the runtime compiler's entry points (runtime.kernels.compiler), each
# returning the compiler's status enum (0: success), with their C signatures: the generator emits them as
# runtime_kernels.inc's DLMAP_KERNEL_OP and DLMAP_KERNEL_COMPILER_OP rows, which src/backends/gpu_kernels.c declares
# its function pointers and its table of the compiler's entry points from.
KERNEL_SIGNATURES = (
    ("module_load_data", "int", "void **module, const void *image"),  # a code image into the current context
    ("module_get_function", "int", "void **function, void *module, const char *name"),
    ("launch_kernel", "int", "void *function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x, "
     "unsigned block_y, unsigned block_z, unsigned shared_bytes, void *stream, void **params, void **extra"),
)
KERNEL_COMPILER_SIGNATURES = (
    ("create_program", "int", "void **program, const char *source, const char *name, int headers, "
     "const char *const *header_texts, const char *const *header_names"),
    ("compile_program", "int", "void *program, int options, const char *const *option_texts"),
    ("code_size", "int", "void *program, size_t *bytes"),  # the compiled image's size
    ("code", "int", "void *program, char *image"),
    ("destroy_program", "int", "void **program"),
    ("log_size", "int", "void *program, size_t *bytes"),
    ("log", "int", "void *program, char *text"),
)
KERNEL_OPS = tuple(op for op, _, _ in KERNEL_SIGNATURES)
KERNEL_COMPILER_OPS = tuple(op for op, _, _ in KERNEL_COMPILER_SIGNATURES)
# Bytes dlmap gives the pointer_attributes call to write into; every field must lie inside.
POINTER_ATTRIBUTES_BYTES = 256

# The runtime's values the backend passes or reads, group by group: the runtime table's key that holds them (also the
# spec.Runtime field), the prefix of their names in the DLMAP_RUNTIME_VALUE rows, and the names the key may have.
RUNTIME_VALUE_GROUPS = (
    ("memcpy_kinds", "MEMCPY_", MEMCPY_KINDS),
    ("flags", "FLAG_", RUNTIME_FLAGS),
    ("statuses", "STATUS_", RUNTIME_STATUSES),
)
# The fields the backend reads from what pointer_attributes writes, each a byte offset under
# runtime.pointer_attributes (also the spec.PointerAttributes field): the field's size in bytes (it must lie inside
# POINTER_ATTRIBUTES_BYTES, after the memory type in bytes 0-3) and whether every runtime table must give it.
POINTER_ATTRIBUTE_FIELDS = (
    ("device_offset", 4, True),          # int: the device the memory belongs to
    ("device_pointer_offset", 8, True),  # void *: the address a kernel uses
    ("managed_offset", 4, False),        # int: nonzero for managed memory
)
# Every name a DLMAP_RUNTIME_VALUE row may have, in the order the rows give them: each group's prefixed names, then
# each pointer field's key. The backend's enum of values (DLMAP__GPU_VALUE_*) is made of exactly these.
RUNTIME_VALUE_NAMES = tuple([prefix + name.upper() for _, prefix, names in RUNTIME_VALUE_GROUPS for name in names] +
                            [key.upper() for key, _, _ in POINTER_ATTRIBUTE_FIELDS])
