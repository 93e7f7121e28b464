/* dlmap GPU check — the program gpu/check.sh builds and runs on an NVIDIA machine: dlmap's GPU backend against
 * the CUDA runtime itself. Round trips and every copy direction over many layouts, verified byte for byte with
 * plain cudaMemcpy; the stream protocol under a slow producer kernel, with a control run that proves the test
 * catches a missing wait; pinned and managed memory without copies; copy bandwidth next to cudaMemcpy; the
 * per-call cost of export and import on device tensors with and without stream synchronisation.
 * Exit status: 0 all passed, 1 a check failed, 2 no usable CUDA device. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlmap/dlmap.h"

/* gpu/check_kernels.cu */
int check_slow_fill(unsigned *buf, size_t n, unsigned value, long long spin, cudaStream_t stream);
int check_count_mismatches(const unsigned *buf, size_t n, unsigned value, unsigned long long *mismatches,
                           cudaStream_t stream);
int check_sum_floats(const float *buf, size_t n, double *out, cudaStream_t stream);
int check_scale_floats(float *buf, size_t n, float factor, cudaStream_t stream);

static int g_checks, g_failures;

static void check(bool ok, const char *format, ...) {
  g_checks++;
  if (ok) return;
  g_failures++;
  va_list args;
  va_start(args, format);
  fprintf(stdout, "  FAIL ");
  vfprintf(stdout, format, args);
  fprintf(stdout, "\n");
  va_end(args);
}

#define CUDA(call)                                                                                     \
  do {                                                                                                 \
    const cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                           \
      fprintf(stdout, "  FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));     \
      exit(1);                                                                                         \
    }                                                                                                  \
  } while (0)

#define DLMAP(call)                                                                                    \
  do {                                                                                                 \
    if ((call) != DLMAP_OK) {                                                                          \
      fprintf(stdout, "  FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, err.message);                \
      g_failures++;                                                                                    \
    }                                                                                                  \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void release(dlmap_exported *out) {
  if (out->versioned != NULL) out->versioned->deleter(out->versioned);
  if (out->legacy != NULL) out->legacy->deleter(out->legacy);
  memset(out, 0, sizeof *out);
}

static DLTensor *tensor_of(dlmap_exported *out) {
  return out->versioned != NULL ? &out->versioned->dl_tensor : &out->legacy->dl_tensor;
}

/* ---- layouts --------------------------------------------------------------------------------------- */

typedef struct layout {
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[3], strides[3];
  int64_t offset;   /* elements from the buffer's start to the first element */
  int64_t buffer;   /* elements in the buffer */
} layout;

static const layout kLayouts[] = {
    {"compact 64 MiB", {kDLUInt, 32, 1}, 1, {16 << 20}, {1}, 0, 16 << 20},
    {"rows of a wider buffer", {kDLUInt, 32, 1}, 2, {1000, 1000}, {1024, 1}, 0, 1000 * 1024},
    {"small transpose (2-D copies)", {kDLUInt, 32, 1}, 2, {6, 4}, {1, 6}, 0, 24},
    {"large transpose (staged)", {kDLUInt, 32, 1}, 2, {512, 256}, {1, 512}, 0, 512 * 256},
    {"3-D with gaps", {kDLFloat, 64, 1}, 3, {8, 100, 64}, {8000, 80, 1}, 0, 64000},
    {"negative strides", {kDLUInt, 32, 1}, 2, {300, 200}, {-200, -1}, 300 * 200 - 1, 300 * 200},
    {"broadcast (stride 0)", {kDLUInt, 32, 1}, 2, {1000, 64}, {0, 1}, 0, 64},
    {"bytes, inner stride 3", {kDLUInt, 8, 1}, 1, {100001}, {3}, 0, 300003},
    {"scalar", {kDLFloat, 32, 1}, 0, {0}, {0}, 0, 1},
    {"empty", {kDLFloat, 32, 1}, 2, {0, 7}, {7, 1}, 0, 1},
    {"packed int4", {kDLInt, 4, 1}, 1, {1001}, {1}, 0, 1001},
};

static size_t element_bits(const layout *l) { return (size_t)l->dtype.bits * l->dtype.lanes; }

static size_t buffer_bytes(const layout *l) { return ((size_t)l->buffer * element_bits(l) + 7) / 8; }

static int64_t count_of(const layout *l) {
  int64_t n = 1;
  for (int32_t d = 0; d < l->ndim; d++) n *= l->shape[d];
  return n;
}

static size_t compact_bytes(const layout *l) { return ((size_t)count_of(l) * element_bits(l) + 7) / 8; }

/* The compact bytes a copy of the layout over buffer must hold, by a plain index walk. */
static void expected_bytes(const layout *l, const unsigned char *buffer, unsigned char *out) {
  if (element_bits(l) % 8 != 0) { /* packed sub-byte data is compact: its bytes */
    memcpy(out, buffer, compact_bytes(l));
    return;
  }
  const size_t eb = element_bits(l) / 8;
  const int64_t n = count_of(l);
  int64_t index[3] = {0, 0, 0};
  for (int64_t k = 0; k < n; k++) {
    int64_t at = l->offset;
    for (int32_t d = 0; d < l->ndim; d++) at += index[d] * l->strides[d];
    memcpy(out + (size_t)k * eb, buffer + (size_t)at * eb, eb);
    for (int32_t d = l->ndim - 1; d >= 0; d--) {
      if (++index[d] < l->shape[d]) break;
      index[d] = 0;
    }
  }
}

static dlmap_array array_of(const layout *l, void *data, int32_t device_type, int32_t device_id) {
  dlmap_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.device_type = device_type;
  a.device_id = device_id;
  a.dtype = l->dtype;
  a.ndim = l->ndim;
  a.shape = l->shape;
  a.strides = l->ndim > 0 ? l->strides : NULL;
  a.byte_offset = (uint64_t)l->offset * (element_bits(l) / 8 > 0 ? element_bits(l) / 8 : 1);
  return a;
}

/* What a tensor holds, read with plain cudaMemcpy (device, pinned, managed or host memory alike). */
static bool holds(DLTensor *t, const unsigned char *want, size_t bytes) {
  if (bytes == 0) return true;
  unsigned char *got = (unsigned char *)malloc(bytes);
  CUDA(cudaDeviceSynchronize());
  CUDA(cudaMemcpy(got, (const char *)t->data + t->byte_offset, bytes, cudaMemcpyDefault));
  const bool same = memcmp(got, want, bytes) == 0;
  free(got);
  return same;
}

/* One copy through dlmap_export: array (on its device) to (type, id), copy=True, the consumer on the legacy
 * default stream where the target takes a stream. */
static bool export_copy(const dlmap_array *array, int32_t type, int32_t id, dlmap_exported *out, dlmap_error *err) {
  dlmap_export_request request;
  memset(&request, 0, sizeof request);
  request.has_max_version = true;
  request.max_version.major = 1;
  request.max_version.minor = 3;
  request.has_dl_device = true;
  request.dl_device_type = type;
  request.dl_device_id = id;
  request.copy = DLMAP_COPY_ALWAYS;
  request.has_stream = type == DLMAP_DEVICE_CUDA || type == DLMAP_DEVICE_CUDAMANAGED;
  request.stream = 1;
  return dlmap_export(array, &request, out, err) == DLMAP_OK;
}

static void check_copies(int devices) {
  printf("copies: every direction over %zu layouts, verified with cudaMemcpy\n", sizeof kLayouts / sizeof kLayouts[0]);
  const struct {
    const char *name;
    int32_t type;
    int32_t id;
  } targets[] = {{"host", DLMAP_DEVICE_CPU, 0},
                 {"device", DLMAP_DEVICE_CUDA, 0},
                 {"pinned", DLMAP_DEVICE_CUDAHOST, 0},
                 {"managed", DLMAP_DEVICE_CUDAMANAGED, 0},
                 {"device 1", DLMAP_DEVICE_CUDA, 1}};
  for (size_t i = 0; i < sizeof kLayouts / sizeof kLayouts[0]; i++) {
    const layout *l = &kLayouts[i];
    const size_t bytes = buffer_bytes(l), want_bytes = compact_bytes(l);
    unsigned char *host = (unsigned char *)malloc(bytes + 1), *want = (unsigned char *)malloc(want_bytes + 1);
    for (size_t b = 0; b < bytes; b++) host[b] = (unsigned char)(b * 131u + (b >> 8) * 7u + 1u);
    expected_bytes(l, host, want);
    void *device = NULL;
    CUDA(cudaMalloc(&device, bytes + 1));
    CUDA(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
    const struct {
      const char *name;
      dlmap_array array;
    } sources[] = {{"host", array_of(l, host, DLMAP_DEVICE_CPU, 0)}, {"device", array_of(l, device, DLMAP_DEVICE_CUDA, 0)}};
    int ok = 0, run = 0;
    for (size_t s = 0; s < 2; s++) {
      for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        if (targets[t].id >= devices) continue;
        if (s == 0 && targets[t].type == DLMAP_DEVICE_CPU) continue; /* the CPU backend's, tested elsewhere */
        dlmap_exported out;
        dlmap_error err;
        run++;
        if (!export_copy(&sources[s].array, targets[t].type, targets[t].id, &out, &err)) {
          check(false, "%s: %s -> %s: %s", l->name, sources[s].name, targets[t].name, err.message);
          continue;
        }
        const bool same = holds(tensor_of(&out), want, want_bytes);
        check(same, "%s: %s -> %s: bytes differ", l->name, sources[s].name, targets[t].name);
        ok += same;
        release(&out);
      }
    }
    /* from_dlpack: the device buffer as a producer's tensor, imported to the host and copied on the device. */
    for (int target = 0; target < 2; target++) {
      DLManagedTensor managed;
      memset(&managed, 0, sizeof managed);
      managed.dl_tensor.data = device;
      managed.dl_tensor.device.device_type = kDLCUDA;
      managed.dl_tensor.ndim = l->ndim;
      managed.dl_tensor.dtype = l->dtype;
      managed.dl_tensor.shape = (int64_t *)l->shape;
      managed.dl_tensor.strides = l->ndim > 0 ? (int64_t *)l->strides : NULL;
      managed.dl_tensor.byte_offset = sources[1].array.byte_offset;
      dlmap_import_request want_request;
      memset(&want_request, 0, sizeof want_request);
      want_request.copy = DLMAP_COPY_ALWAYS;
      want_request.has_device = target == 0;
      want_request.device_type = DLMAP_DEVICE_CPU;
      dlmap_imported imported;
      dlmap_error err;
      run++;
      if (dlmap_import_legacy(&managed, &want_request, &imported, &err) != DLMAP_OK) {
        check(false, "%s: import device -> %s: %s", l->name, target == 0 ? "host" : "device", err.message);
        continue;
      }
      const bool same = holds(&imported.tensor, want, want_bytes);
      check(same, "%s: import device -> %s: bytes differ", l->name, target == 0 ? "host" : "device");
      ok += same;
      dlmap_imported_release(&imported);
    }
    printf("  %-30s %2d/%2d directions ok\n", l->name, ok, run);
    CUDA(cudaFree(device));
    free(host);
    free(want);
  }
}

/* ---- the stream protocol --------------------------------------------------------------------------- */

#define ORDER_N (1u << 22)
#define ORDER_ITERATIONS 300
#define ORDER_SPIN 200000LL /* clock cycles each producer block waits before writing (~0.1 ms) */

typedef enum { WAIT_DLMAP, WAIT_NONE, WAIT_BATCH, WAIT_LEGACY, WAIT_IMPORT_COPY } wait_mode;

/* Iterations whose consumer saw anything but the value the producer wrote in that iteration. */
static int ordering_run(wait_mode mode, unsigned *buf, cudaStream_t producer, cudaStream_t consumer) {
  unsigned long long *mismatches = NULL, counts[ORDER_ITERATIONS];
  CUDA(cudaMalloc((void **)&mismatches, sizeof counts));
  CUDA(cudaMemset(mismatches, 0, sizeof counts));
  const int64_t shape[1] = {ORDER_N};
  dlmap_array arrays[64];
  for (int i = 0; i < 64; i++) {
    memset(&arrays[i], 0, sizeof arrays[i]);
    arrays[i].data = buf;
    arrays[i].device_type = DLMAP_DEVICE_CUDA;
    arrays[i].dtype.code = kDLUInt;
    arrays[i].dtype.bits = 32;
    arrays[i].dtype.lanes = 1;
    arrays[i].ndim = 1;
    arrays[i].shape = shape;
    arrays[i].producer_stream = producer;
  }
  cudaStream_t reader = mode == WAIT_LEGACY ? cudaStreamLegacy : consumer;
  for (unsigned it = 0; it < ORDER_ITERATIONS; it++) {
    const unsigned value = 0x1000u + it;
    CUDA((cudaError_t)check_slow_fill(buf, ORDER_N, value, ORDER_SPIN, producer));
    dlmap_export_request request;
    memset(&request, 0, sizeof request);
    request.has_stream = mode != WAIT_LEGACY; /* None: the legacy default stream */
    request.stream = mode == WAIT_NONE ? -1 : (int64_t)(intptr_t)consumer;
    request.defer_stream_sync = mode == WAIT_BATCH;
    dlmap_exported out[64];
    dlmap_error err;
    const int exports = mode == WAIT_BATCH ? 64 : 1;
    for (int e = 0; e < exports; e++) DLMAP(dlmap_export(&arrays[e], &request, &out[e], &err));
    if (mode == WAIT_BATCH) {
      size_t waits = 0;
      DLMAP(dlmap_stream_wait_batch(arrays, 64, true, (int64_t)(intptr_t)consumer, &waits, &err));
      if (it == 0) check(waits == 1, "batch of 64 exports: %zu waits, want 1", waits);
    }
    const unsigned *read = buf;
    dlmap_imported copy;
    memset(&copy, 0, sizeof copy);
    if (mode == WAIT_IMPORT_COPY) { /* from_dlpack(copy=True) on the consumer's stream, after the wait */
      dlmap_import_request want;
      memset(&want, 0, sizeof want);
      want.copy = DLMAP_COPY_ALWAYS;
      want.stream = consumer;
      DLMAP(dlmap_import_legacy(out[0].legacy, &want, &copy, &err));
      read = (const unsigned *)copy.tensor.data;
      memset(&out[0], 0, sizeof out[0]); /* import owns it now */
    }
    CUDA((cudaError_t)check_count_mismatches(read, ORDER_N, value, mismatches + it, reader));
    if (mode == WAIT_IMPORT_COPY) {
      CUDA(cudaStreamSynchronize(reader));
      dlmap_imported_release(&copy);
    }
    for (int e = 0; e < exports; e++) release(&out[e]);
  }
  CUDA(cudaDeviceSynchronize());
  CUDA(cudaMemcpy(counts, mismatches, sizeof counts, cudaMemcpyDeviceToHost));
  CUDA(cudaFree(mismatches));
  int raced = 0;
  for (int it = 0; it < ORDER_ITERATIONS; it++) raced += counts[it] != 0;
  return raced;
}

static void check_stream_ordering(void) {
  printf("stream ordering: a slow kernel writes on the producer stream, the consumer stream reads (%d iterations)\n",
         ORDER_ITERATIONS);
  unsigned *buf = NULL;
  CUDA(cudaMalloc((void **)&buf, ORDER_N * sizeof(unsigned)));
  cudaStream_t producer, consumer;
  CUDA(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  CUDA(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  const int control = ordering_run(WAIT_NONE, buf, producer, consumer);
  printf("  control, stream=-1 (no wait):   %3d/%d iterations raced%s\n", control, ORDER_ITERATIONS,
         control > 0 ? " (the test detects a missing wait)" : "  WARNING: no race provoked; the test is not sensitive");
  const struct {
    const char *name;
    wait_mode mode;
  } modes[] = {{"stream=<consumer handle>", WAIT_DLMAP},
               {"stream=None (legacy default)", WAIT_LEGACY},
               {"batch: 64 exports, 1 wait", WAIT_BATCH},
               {"import copy=True on consumer", WAIT_IMPORT_COPY}};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    const int raced = ordering_run(modes[m].mode, buf, producer, consumer);
    printf("  %-32s %3d/%d iterations raced\n", modes[m].name, raced, ORDER_ITERATIONS);
    check(raced == 0, "%s: the consumer read before the producer finished in %d iterations", modes[m].name, raced);
  }
  CUDA(cudaStreamDestroy(producer));
  CUDA(cudaStreamDestroy(consumer));
  CUDA(cudaFree(buf));
}

/* ---- pinned and managed memory without copies ------------------------------------------------------ */

static double device_sum(const float *data, size_t n) {
  double *out = NULL, sum = 0;
  CUDA(cudaMalloc((void **)&out, sizeof *out));
  CUDA(cudaMemset(out, 0, sizeof *out));
  CUDA((cudaError_t)check_sum_floats(data, n, out, 0));
  CUDA(cudaMemcpy(&sum, out, sizeof sum, cudaMemcpyDeviceToHost));
  CUDA(cudaFree(out));
  return sum;
}

static void check_zero_copy(void) {
  printf("zero-copy: pinned and managed memory read by the host and the GPU in place\n");
  const size_t n = 1 << 20;
  double host_sum = 0;
  float *pinned = NULL, *managed = NULL, *device = NULL;
  CUDA(cudaHostAlloc((void **)&pinned, n * sizeof(float), cudaHostAllocPortable));
  CUDA(cudaMallocManaged((void **)&managed, n * sizeof(float), cudaMemAttachGlobal));
  CUDA(cudaMalloc((void **)&device, sizeof(float)));
  for (size_t i = 0; i < n; i++) {
    pinned[i] = managed[i] = (float)(i % 1000);
    host_sum += (double)(i % 1000);
  }
  dlmap_error err;
  dlmap_memory_kind kind;
  int32_t on = -1;
  DLMAP(dlmap_memory_locate(DLMAP_DEVICE_CUDA, pinned, &kind, NULL, &err));
  check(kind == DLMAP_MEMORY_HOST_PINNED, "cudaHostAlloc memory located as %s", dlmap_memory_kind_name(kind));
  DLMAP(dlmap_memory_locate(DLMAP_DEVICE_CUDA, managed, &kind, NULL, &err));
  check(kind == DLMAP_MEMORY_MANAGED, "cudaMallocManaged memory located as %s", dlmap_memory_kind_name(kind));
  DLMAP(dlmap_memory_locate(DLMAP_DEVICE_CUDA, device, &kind, &on, &err));
  check(kind == DLMAP_MEMORY_DEVICE && on == 0, "cudaMalloc memory located as %s on %d", dlmap_memory_kind_name(kind), on);
  DLMAP(dlmap_memory_locate(DLMAP_DEVICE_CUDA, &n, &kind, NULL, &err));
  check(kind == DLMAP_MEMORY_HOST, "a stack address located as %s", dlmap_memory_kind_name(kind));

  const int64_t shape[1] = {(int64_t)n};
  const struct {
    const char *name;
    float *data;
    int32_t type;
  } cases[] = {{"pinned (kDLCUDAHost)", pinned, DLMAP_DEVICE_CUDAHOST}, {"managed (kDLCUDAManaged)", managed, DLMAP_DEVICE_CUDAMANAGED}};
  for (size_t c = 0; c < 2; c++) {
    /* import: from_dlpack(x, device=cuda:0, copy=False) */
    DLManagedTensor tensor;
    memset(&tensor, 0, sizeof tensor);
    tensor.dl_tensor.data = cases[c].data;
    tensor.dl_tensor.device.device_type = (DLDeviceType)cases[c].type;
    tensor.dl_tensor.ndim = 1;
    tensor.dl_tensor.dtype.code = kDLFloat;
    tensor.dl_tensor.dtype.bits = 32;
    tensor.dl_tensor.dtype.lanes = 1;
    tensor.dl_tensor.shape = (int64_t *)shape;
    dlmap_import_request want;
    memset(&want, 0, sizeof want);
    want.has_device = true;
    want.device_type = DLMAP_DEVICE_CUDA;
    want.copy = DLMAP_COPY_NEVER;
    dlmap_imported view;
    if (dlmap_import_legacy(&tensor, &want, &view, &err) != DLMAP_OK) {
      check(false, "%s: import to the GPU without a copy: %s", cases[c].name, err.message);
      continue;
    }
    const double sum = device_sum((const float *)view.tensor.data, n);
    check(!view.copied && sum == host_sum, "%s: GPU sum %.0f, host %.0f", cases[c].name, sum, host_sum);
    dlmap_imported_release(&view);

    /* export: __dlpack__(dl_device=cuda:0, copy=False), the GPU writes, the host reads in place */
    dlmap_array array;
    memset(&array, 0, sizeof array);
    array.data = cases[c].data;
    array.device_type = cases[c].type;
    array.dtype = tensor.dl_tensor.dtype;
    array.ndim = 1;
    array.shape = shape;
    dlmap_export_request request;
    memset(&request, 0, sizeof request);
    request.has_dl_device = true;
    request.dl_device_type = DLMAP_DEVICE_CUDA;
    request.copy = DLMAP_COPY_NEVER;
    dlmap_exported out;
    if (dlmap_export(&array, &request, &out, &err) != DLMAP_OK) {
      check(false, "%s: export to the GPU without a copy: %s", cases[c].name, err.message);
      continue;
    }
    CUDA((cudaError_t)check_scale_floats((float *)tensor_of(&out)->data, n, 2.0f, 0));
    CUDA(cudaDeviceSynchronize());
    release(&out);
    request.dl_device_type = DLMAP_DEVICE_CPU; /* and back to the host: a view again */
    memset(&out, 0, sizeof out);
    DLMAP(dlmap_export(&array, &request, &out, &err));
    bool doubled = out.legacy != NULL;
    for (size_t i = 0; doubled && i < n; i++) doubled = ((const float *)tensor_of(&out)->data)[i] == 2.0f * (float)(i % 1000);
    check(doubled, "%s: the host does not see the GPU's writes in place", cases[c].name);
    if (out.legacy != NULL) release(&out);
    printf("  %-26s GPU reads and writes it in place: %s\n", cases[c].name, doubled ? "ok" : "FAIL");
  }
  CUDA(cudaFreeHost(pinned));
  CUDA(cudaFree(managed));
  CUDA(cudaFree(device));
}

/* ---- bandwidth ------------------------------------------------------------------------------------- */

typedef struct fixed_block {
  void *memory;
  size_t size;
} fixed_block;

/* An allocator handing out one preallocated pinned block: D2H copies land in the same memory for both sides. */
static void *fixed_allocate(void *ctx, size_t size, size_t alignment) {
  fixed_block *block = (fixed_block *)ctx;
  (void)alignment;
  return size <= block->size ? block->memory : NULL;
}

static void fixed_release(void *ctx, void *pointer) {
  (void)ctx;
  (void)pointer;
}

static void check_bandwidth(void) {
  printf("bandwidth: dlmap copies next to cudaMemcpy of the same size, best of 5; to the GPU both sides include\n"
         "  cudaMalloc of the destination (dlmap allocates its copy), to the host both copy into the same pinned block\n");
  printf("  %-6s %9s %12s %14s %7s\n", "copy", "size", "dlmap GB/s", "cudaMemcpy GB/s", "ratio");
  const size_t sizes[] = {4u << 20, 64u << 20, 512u << 20};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    const size_t bytes = sizes[s];
    void *pinned = NULL, *device = NULL;
    CUDA(cudaHostAlloc(&pinned, bytes + (1 << 20), cudaHostAllocPortable));
    CUDA(cudaMalloc(&device, bytes));
    memset(pinned, 7, bytes);
    CUDA(cudaMemcpy(device, pinned, bytes, cudaMemcpyHostToDevice));
    const int64_t shape[1] = {(int64_t)bytes};
    for (int direction = 0; direction < 3; direction++) {
      const char *name = direction == 0 ? "H2D" : direction == 1 ? "D2H" : "D2D";
      double best_dlmap = 1e30, best_cuda = 1e30;
      for (int rep = 0; rep < 5; rep++) {
        dlmap_array array;
        memset(&array, 0, sizeof array);
        array.data = direction == 0 ? pinned : device;
        array.device_type = direction == 0 ? DLMAP_DEVICE_CPU : DLMAP_DEVICE_CUDA;
        array.dtype.code = kDLUInt;
        array.dtype.bits = 8;
        array.dtype.lanes = 1;
        array.ndim = 1;
        array.shape = shape;
        fixed_block block = {(char *)pinned, bytes + (1 << 20)};
        const dlmap_allocator hook = {fixed_allocate, fixed_release, &block};
        dlmap_export_request request;
        memset(&request, 0, sizeof request);
        request.has_dl_device = true;
        request.dl_device_type = direction == 1 ? DLMAP_DEVICE_CPU : DLMAP_DEVICE_CUDA;
        request.copy = DLMAP_COPY_ALWAYS;
        request.has_stream = direction != 1;
        request.stream = 1;
        request.allocator = direction == 1 ? &hook : NULL;
        dlmap_exported out;
        dlmap_error err;
        CUDA(cudaDeviceSynchronize());
        double t0 = now();
        const int32_t status = dlmap_export(&array, &request, &out, &err);
        CUDA(cudaDeviceSynchronize());
        double t1 = now();
        if (status != DLMAP_OK) {
          check(false, "bandwidth %s %zu: %s", name, bytes, err.message);
          break;
        }
        release(&out);
        if (t1 - t0 < best_dlmap) best_dlmap = t1 - t0;
        const enum cudaMemcpyKind kind = direction == 0 ? cudaMemcpyHostToDevice
                                         : direction == 1 ? cudaMemcpyDeviceToHost
                                                          : cudaMemcpyDeviceToDevice;
        const void *src = direction == 0 ? pinned : device;
        void *dst = pinned;
        CUDA(cudaDeviceSynchronize());
        t0 = now();
        if (direction != 1) CUDA(cudaMalloc(&dst, bytes));
        CUDA(cudaMemcpy(dst, src, bytes, kind));
        CUDA(cudaDeviceSynchronize());
        t1 = now();
        if (direction != 1) CUDA(cudaFree(dst));
        if (t1 - t0 < best_cuda) best_cuda = t1 - t0;
      }
      const double dlmap_gbs = (double)bytes / best_dlmap / 1e9, cuda_gbs = (double)bytes / best_cuda / 1e9;
      const double ratio = dlmap_gbs / cuda_gbs;
      printf("  %-6s %6zu MiB %12.1f %14.1f %7.2f%s\n", name, bytes >> 20, dlmap_gbs, cuda_gbs, ratio,
             ratio < 0.8 && bytes >= (64u << 20) ? "  (slow)" : "");
      if (bytes >= (64u << 20)) check(ratio >= 0.25, "%s %zu MiB at %.2f of cudaMemcpy's bandwidth", name, bytes >> 20, ratio);
    }
    CUDA(cudaFreeHost(pinned));
    CUDA(cudaFree(device));
  }
}

/* ---- exchange cost on device tensors ------------------------------------------------------------ */

/* Export + release and import-as-view of a 2-D float32 device tensor, per call: without synchronisation
 * (stream -1), with the consumer-stream wait (an event recorded on the producer stream, one wait), and
 * with None (the legacy default stream). Printed for BENCHMARKS.md; no pass mark beyond "no error". */
static void check_exchange_cost(void) {
  enum { kCalls = 20000 };
  const int64_t shape[2] = {256, 256};
  float *data = NULL;
  CUDA(cudaMalloc((void **)&data, 256 * 256 * sizeof(float)));
  cudaStream_t producer, consumer;
  CUDA(cudaStreamCreate(&producer));
  CUDA(cudaStreamCreate(&consumer));
  dlmap_array array;
  memset(&array, 0, sizeof array);
  array.data = data;
  array.device_type = DLMAP_DEVICE_CUDA;
  array.dtype.code = DLMAP_DTYPE_FLOAT;
  array.dtype.bits = 32;
  array.dtype.lanes = 1;
  array.ndim = 2;
  array.shape = shape;
  array.producer_stream = producer;
  const struct {
    const char *name;
    bool has_stream;
    int64_t stream;
  } modes[] = {{"stream=-1 (no sync)", true, -1},
               {"stream=consumer (event + wait)", true, (int64_t)(intptr_t)consumer},
               {"stream=None (legacy default)", false, 0}};
  printf("exchange cost on a 256x256 float32 device tensor, %d calls each:\n", kCalls);
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    dlmap_export_request request;
    memset(&request, 0, sizeof request);
    request.has_max_version = true;
    request.max_version.major = 1;
    request.max_version.minor = 3;
    request.has_stream = modes[m].has_stream;
    request.stream = modes[m].stream;
    dlmap_exported out;
    dlmap_error err;
    int failed = 0;
    double start = now();
    for (int i = 0; i < kCalls && !failed; i++) {
      if (dlmap_export(&array, &request, &out, &err) != DLMAP_OK) {
        check(false, "export %s: %s", modes[m].name, err.message);
        failed = 1;
      } else {
        release(&out);
      }
    }
    const double export_ns = (now() - start) * 1e9 / kCalls;
    double import_ns = 0;
    if (!failed) {
      start = now();
      for (int i = 0; i < kCalls && !failed; i++) {
        dlmap_imported view;
        DLMAP(dlmap_export(&array, &request, &out, &err));
        if (dlmap_import_versioned(out.versioned, NULL, &view, &err) != DLMAP_OK) {
          check(false, "import %s: %s", modes[m].name, err.message);
          failed = 1;
        } else {
          dlmap_imported_release(&view);
        }
      }
      import_ns = (now() - start) * 1e9 / kCalls - export_ns;
    }
    check(!failed, "exchange cost %s", modes[m].name);
    printf("  %-32s export + release %8.0f ns   import view + release %8.0f ns\n", modes[m].name, export_ns,
           import_ns);
  }
  CUDA(cudaStreamSynchronize(consumer));
  CUDA(cudaStreamDestroy(producer));
  CUDA(cudaStreamDestroy(consumer));
  CUDA(cudaFree(data));
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  if (!status.available) {
    fprintf(stderr, "gpu/check: no usable CUDA device here: %s\n", status.reason);
    return 2;
  }
  struct cudaDeviceProp prop;
  CUDA(cudaGetDeviceProperties(&prop, 0));
  int runtime = 0, driver = 0;
  CUDA(cudaRuntimeGetVersion(&runtime));
  CUDA(cudaDriverGetVersion(&driver));
  printf("dlmap GPU check: %d CUDA device(s); device 0: %s (sm_%d%d), runtime %d, driver %d\n", status.device_count,
         prop.name, prop.major, prop.minor, runtime, driver);
  const double start = now();
  check_copies(status.device_count);
  check_stream_ordering();
  check_zero_copy();
  check_bandwidth();
  check_exchange_cost();
  printf("%d checks, %d failed (%.1f s)\n", g_checks, g_failures, now() - start);
  puts(g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}
