/* dlmap GPU backend — the strided-copy kernels (src/backends/kernels/): planning a copy in the kernels' terms, and
 * loading and launching them through the module API the spec's runtime.kernels names. The backend (gpu.c) asks for a
 * kernel where a layout copy stays on one device; when none can run it takes its memcpy path, and the reason is kept
 * for `dlmap devices` (dlmap_platform_kernels). */
#ifndef DLMAP_SRC_BACKENDS_GPU_KERNELS_H_
#define DLMAP_SRC_BACKENDS_GPU_KERNELS_H_

#include "src/backends/kernels/strided_copy_params.h"
#include "src/internal.h"
#include "src/layout.h"

/* Which kernel runs a plan: the shapes of strided_copy_params.h's DLMAP_KERNEL_SHAPES (GATHER32, GATHER, TRANSPOSE). */
typedef enum dlmap__kernel_shape {
#define DLMAP__KERNEL_SHAPE(SHAPE, ...) DLMAP__KERNEL_##SHAPE,
  DLMAP_KERNEL_SHAPES(DLMAP__KERNEL_SHAPE, ~)
#undef DLMAP__KERNEL_SHAPE
  DLMAP__KERNEL_SHAPE_COUNT
} dlmap__kernel_shape;

typedef struct dlmap__kernel_plan {
  dlmap_copy_params params;
  dlmap__kernel_shape shape;
  int unit_log2; /* the unit is 1 << unit_log2 bytes: 0…4 */
} dlmap__kernel_plan;

/* Plans the copy of a tensor of `layout` at src into compact row-major memory at dst, in the widest unit of at most 16
 * bytes that divides the element size, both addresses and every stride in bytes. False when the layout is compact
 * (one memcpy copies it). */
bool dlmap__kernel_plan_copy(const void *src, void *dst, const dlmap__copy_layout *layout, dlmap__kernel_plan *plan);

/* The kernel's name for a plan ("dlmap_transpose_u4"), for messages and tests. */
const char *dlmap__kernel_name(const dlmap__kernel_plan *plan);

/* Launches the plan on `stream` of the current device. `runtime_library`: the dlopen handle of the platform's runtime
 * (the module API's library where the spec names none); `key`: what identifies the current device's code images
 * (the driver's current context, else the device), under which the kernels are loaded at first use (the committed
 * PTX, else the runtime compiler's build of the source). 0 when launched; otherwise nonzero, why (cap bytes) says why,
 * and the platform's kernel status keeps it: the caller copies another way. */
int dlmap__kernels_launch(dlmap_platform platform, void *runtime_library, void *key, const dlmap__kernel_plan *plan,
                          void *stream, char *why, size_t cap);

/* Whether the platform's module API is its runtime's own library (the spec names no other): then a failed load or
 * launch also set the runtime's last error, which the caller clears. */
bool dlmap__kernels_in_runtime(dlmap_platform platform);

/* Loads the kernels for `key` as the first launch would, launching nothing; true when they are usable. */
bool dlmap__kernels_prepare(dlmap_platform platform, void *runtime_library, void *key);

/* dlmap_platform_kernels: how the platform's kernels loaded and how long it took, or why not (gpu_kernels.c). */
size_t dlmap__kernels_status(dlmap_platform platform, char *text, size_t cap);

/* dlmap_platform_driver: the driver's release and whether it JIT-compiles the kernels' PTX (gpu_driver.c). */
size_t dlmap__kernels_driver(dlmap_platform platform, char *text, size_t cap);

#endif /* DLMAP_SRC_BACKENDS_GPU_KERNELS_H_ */
