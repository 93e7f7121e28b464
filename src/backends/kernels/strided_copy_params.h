/* dlmap strided-copy kernels — the one parameter block every kernel of strided_copy.cu takes, shared by the kernel
 * source (compiled by clang into the committed PTX, or by a runtime compiler at first use) and the backend that
 * launches it (src/backends/gpu_kernels.c). Plain C types only: the runtime compilers see this file without any system header. */
#ifndef DLMAP_SRC_BACKENDS_KERNELS_STRIDED_COPY_PARAMS_H_
#define DLMAP_SRC_BACKENDS_KERNELS_STRIDED_COPY_PARAMS_H_

/* Dimensions a parameter block describes: every dimension of a DLPack tensor dlmap accepts (DLMAP_MAX_NDIM), plus the
 * one a wide element adds when it is copied in narrower units (gpu_kernels.c checks this at compile time). */
#define DLMAP_KERNEL_MAX_DIMS 66

/* The copy of a strided source into a compact row-major destination, in units (the element size the kernel's name
 * gives: 1, 2, 4, 8 or 16 bytes). Dimensions run innermost first; only those of extent > 1, merged where one is a
 * run of the next. dst index i's source unit is the sum over d of digit_d(i) * stride[d], with digit_d the d-th
 * mixed-radix digit of i over shape. The transposing kernels read dims 0 and 1 as a plane (dim 1 the source's
 * contiguous one) and dim 2, when ndim is 3, as planes one after another. */
typedef struct dlmap_copy_params {
  const void *src;
  void *dst;
  long long count; /* units of dst: the product of shape */
  long long ndim;
  long long shape[DLMAP_KERNEL_MAX_DIMS];
  long long stride[DLMAP_KERNEL_MAX_DIMS]; /* in units; 0 broadcasts; may be negative */
} dlmap_copy_params;

/* Threads per block of the gathering kernels; the transposing ones take TILE × ROWS threads and TILE × TILE tiles. */
#define DLMAP_KERNEL_BLOCK 256
#define DLMAP_KERNEL_TILE 32
#define DLMAP_KERNEL_TILE_ROWS 8

/* The kernels: one per shape and unit, named dlmap_<shape>_<unit> ("dlmap_transpose_u4"). This is the one list of
 * them: strided_copy.cu defines its kernels from it, the backend (gpu_kernels.c) its shapes and the names it asks the
 * module API for. Each X(...) takes the caller's extra arguments last.
 *   A shape: its enumerator suffix (DLMAP__KERNEL_<SHAPE>), its name, its threads per block:
 *     gather32   any layout, fewer than 2^31 units (32-bit indices)
 *     gather     any layout (64-bit indices)
 *     transpose  a plane (or planes) read along the destination's outer dimension, through shared-memory tiles
 *   A unit, by size (1 << its index bytes): its name and the type the kernel source moves it as. */
#define DLMAP_KERNEL_SHAPES(X, ...)                                                 \
  X(GATHER32, gather32, DLMAP_KERNEL_BLOCK, __VA_ARGS__)                           \
  X(GATHER, gather, DLMAP_KERNEL_BLOCK, __VA_ARGS__)                               \
  X(TRANSPOSE, transpose, DLMAP_KERNEL_TILE * DLMAP_KERNEL_TILE_ROWS, __VA_ARGS__)
#define DLMAP_KERNEL_UNITS(X, ...)          \
  X(u1, unsigned char, __VA_ARGS__)         \
  X(u2, unsigned short, __VA_ARGS__)        \
  X(u4, unsigned int, __VA_ARGS__)          \
  X(u8, unsigned long long, __VA_ARGS__)    \
  X(u16, dlmap_u128, __VA_ARGS__)

#endif /* DLMAP_SRC_BACKENDS_KERNELS_STRIDED_COPY_PARAMS_H_ */
