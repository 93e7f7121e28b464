/* dlmap GPU tests — the fake's module API and runtime compiler (part of libdlmap_fake_gpu.so): loads the committed PTX
 * (checking that it defines each kernel asked for) or the fake compiler's build of the kernel source, and runs a
 * launched strided-copy kernel on the host, in stream order, after checking what a GPU would fault on: the block shape
 * the kernel was built for, a stream the runtime knows, and source and destination inside device or managed memory. */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/backends/kernels/strided_copy_params.h"
#include "tests/gpu/fake_gpu_runtime.h"

#define FAKE_UNSUPPORTED_PTX_VERSION 222 /* CUDA_ERROR_UNSUPPORTED_PTX_VERSION */
#define FAKE_NOT_FOUND 500               /* CUDA_ERROR_NOT_FOUND */
#define FAKE_BUILT_MAGIC "FAKE-BUILT\n"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_gpu_kernel_stats g_stats;
static int g_refuse_ptx, g_refuse_launches;
static int g_log_mode; /* fake_gpu_kernels_set_log */
/* The driver the fake models: what its driver_version entry point reports and the highest PTX ISA it JIT-compiles
 * (tenths: 90 is ISA 9.0); the runtime compiler's release, as the ISA of the PTX it writes (0: it fails to start). */
static int g_driver_version = 13000, g_driver_isa = 90, g_compiler_isa = 90;
static int g_generation; /* raised when the contexts are made anew: older modules' functions no longer launch */
static char g_fail_op[16];
static int g_fail_code;

/* Modules and functions live as long as the process, as a driver keeps them: each is chained to the ones made before
 * (under g_lock), so a module dlmap loads again after fake_gpu_kernels_remake_contexts is not a leak. */
typedef struct fake_module {
  const char *text; /* the PTX, or the compiler's build (the parameter header and kernel source after the magic) */
  int built;
  struct fake_module *older;
} fake_module;

typedef struct fake_function {
  char name[32];
  int transpose;
  size_t unit;
  int generation; /* of the contexts its module was loaded in */
  struct fake_function *older;
} fake_function;

static fake_module *g_modules;
static fake_function *g_functions;

static int injected(const char *op) {
  pthread_mutex_lock(&g_lock);
  int code = 0;
  if (g_fail_op[0] != '\0' && strcmp(g_fail_op, op) == 0) {
    g_fail_op[0] = '\0';
    code = g_fail_code;
  }
  pthread_mutex_unlock(&g_lock);
  return code;
}

void fake_gpu_kernels_reset(void) {
  pthread_mutex_lock(&g_lock);
  memset(&g_stats, 0, sizeof g_stats);
  g_stats.last_device = -1;
  g_refuse_ptx = g_refuse_launches = g_log_mode = 0;
  g_driver_version = 13000;
  g_driver_isa = g_compiler_isa = 90;
  g_fail_op[0] = '\0';
  pthread_mutex_unlock(&g_lock);
}

const fake_gpu_kernel_stats *fake_gpu_kernel_get_stats(void) { return &g_stats; }
void fake_gpu_kernels_refuse_ptx(int on) { g_refuse_ptx = on; }
void fake_gpu_kernels_refuse_launches(int on) { g_refuse_launches = on; }
void fake_gpu_kernels_set_log(int mode) { g_log_mode = mode; }

void fake_gpu_kernels_set_driver(int driver_version, int isa_tenths) {
  pthread_mutex_lock(&g_lock);
  g_driver_version = driver_version;
  g_driver_isa = isa_tenths;
  pthread_mutex_unlock(&g_lock);
}

void fake_gpu_kernels_set_compiler(int isa_tenths) {
  pthread_mutex_lock(&g_lock);
  g_compiler_isa = isa_tenths;
  pthread_mutex_unlock(&g_lock);
}

/* The driver's cuDriverGetVersion. */
int fakeDriverGetVersion(int *version) {
  if (version == NULL) return FAKE_INVALID_VALUE;
  const int code = injected("driver");
  if (code != 0) return code;
  pthread_mutex_lock(&g_lock);
  *version = g_driver_version;
  pthread_mutex_unlock(&g_lock);
  return 0;
}

/* The image's PTX ISA in tenths, from its ".version M.N" line (a build states its compiler's the same way); -1: none. */
static int image_isa(const char *text) {
  const char *line = strstr(text, "\n.version ");
  if (line == NULL) return -1;
  char *end;
  const long major = strtol(line + 10, &end, 10);
  if (*end != '.' || end[1] < '0' || end[1] > '9') return -1;
  return (int)major * 10 + (end[1] - '0');
}

void fake_gpu_kernels_remake_contexts(void) {
  pthread_mutex_lock(&g_lock);
  g_generation++;
  pthread_mutex_unlock(&g_lock);
}

void fake_gpu_kernels_fail_next(const char *op, int code) {
  pthread_mutex_lock(&g_lock);
  strncpy(g_fail_op, op, sizeof g_fail_op - 1);
  g_fail_code = code;
  pthread_mutex_unlock(&g_lock);
}

/* ---- the module API (cuModuleLoadData, cuModuleGetFunction, cuLaunchKernel) ------------------------------------- */

int fakeModuleLoadData(void **module, const void *image) {
  const char *text = (const char *)image;
  const int built = strncmp(text, FAKE_BUILT_MAGIC, strlen(FAKE_BUILT_MAGIC)) == 0;
  const int ptx = strncmp(text, "//", 2) == 0 && strstr(text, ".visible .entry dlmap_") != NULL;
  pthread_mutex_lock(&g_lock);
  if (built) g_stats.built_loads++;
  if (ptx) g_stats.ptx_loads++;
  pthread_mutex_unlock(&g_lock);
  const int code = injected("load");
  if (code != 0) return code;
  if (!built && !ptx) return FAKE_INVALID_VALUE; /* not an image */
  if (ptx && g_refuse_ptx) return FAKE_UNSUPPORTED_PTX_VERSION;
  /* As a driver does: PTX of an ISA newer than its own release is refused, a build's as the PTX it carries. */
  pthread_mutex_lock(&g_lock);
  const int isa = image_isa(text), driver_isa = g_driver_isa;
  pthread_mutex_unlock(&g_lock);
  if (isa < 0) return FAKE_INVALID_VALUE; /* PTX states its ISA */
  if (isa > driver_isa) return FAKE_UNSUPPORTED_PTX_VERSION;
  fake_module *m = (fake_module *)malloc(sizeof *m);
  if (m == NULL) return FAKE_OUT_OF_MEMORY;
  m->built = built;
  m->text = built ? strdup(text) : text; /* the PTX is the library's static image; a build is freed after loading */
  pthread_mutex_lock(&g_lock);
  m->older = g_modules;
  g_modules = m;
  pthread_mutex_unlock(&g_lock);
  *module = m;
  return 0;
}

/* Whether the module defines the kernel dlmap_<shape>_<unit>: the PTX's entry, or (a build: the parameter header, then
 * the source) the source expanding the header's lists of kernels and the header listing both the shape
 * (X(SHAPE, shape, …)) and the unit (X(unit, …)). */
static int defines(const fake_module *m, const char *name) {
  char needle[64];
  if (!m->built) {
    strcpy(needle, ".visible .entry ");
    strncat(needle, name, 40);
    strcat(needle, "(");
    return strstr(m->text, needle) != NULL;
  }
  const char *unit = strrchr(name, '_');
  if (strncmp(name, "dlmap_", 6) != 0 || unit == NULL || unit - name - 6 > 20) return 0;
  if (strstr(m->text, "DLMAP_KERNEL_UNITS(DLMAP_KERNELS_OF_UNIT") == NULL) return 0;
  strcpy(needle, ", ");
  strncat(needle, name + 6, (size_t)(unit - name - 6));
  strcat(needle, ", ");
  if (strstr(m->text, needle) == NULL) return 0;
  strcpy(needle, "X(");
  strncat(needle, unit + 1, 8);
  strcat(needle, ", ");
  return strstr(m->text, needle) != NULL;
}

int fakeModuleGetFunction(void **function, void *module, const char *name) {
  pthread_mutex_lock(&g_lock);
  g_stats.functions++;
  pthread_mutex_unlock(&g_lock);
  const int code = injected("function");
  if (code != 0) return code;
  if (module == NULL || name == NULL || strlen(name) >= sizeof(((fake_function *)0)->name)) return FAKE_INVALID_VALUE;
  if (!defines((const fake_module *)module, name)) return FAKE_NOT_FOUND;
  const char *unit = strrchr(name, 'u');
  fake_function *f = (fake_function *)calloc(1, sizeof *f);
  if (f == NULL) return FAKE_OUT_OF_MEMORY;
  strcpy(f->name, name);
  f->transpose = strncmp(name, "dlmap_transpose_", 16) == 0;
  f->unit = (size_t)strtoul(unit + 1, NULL, 10);
  pthread_mutex_lock(&g_lock);
  f->generation = g_generation;
  f->older = g_functions;
  g_functions = f;
  pthread_mutex_unlock(&g_lock);
  *function = f;
  return 0;
}

typedef struct job {
  dlmap_copy_params p;
  size_t unit;
} job;

/* The kernel's work, as strided_copy_params.h defines it: destination unit i from the source unit at the sum of i's
 * mixed-radix digits times the strides (the transposing kernels compute the same map). */
static void run_copy(void *arg) {
  job *j;
  memcpy(&j, arg, sizeof j);
  const char *src = (const char *)j->p.src;
  char *dst = (char *)j->p.dst;
  for (long long i = 0; i < j->p.count; i++) {
    long long rest = i, offset = 0;
    for (long long d = 0; d < j->p.ndim; d++) {
      offset += rest % j->p.shape[d] * j->p.stride[d];
      rest /= j->p.shape[d];
    }
    memcpy(dst + i * (long long)j->unit, src + offset * (long long)j->unit, j->unit);
  }
  free(j);
}

/* Device or managed memory of the current device (managed: any), [p, p + n) inside one allocation. */
static int reachable(const void *p, size_t n) {
  int device;
  const int type = fake_gpu_memory_type(p, n, &device);
  return type == FAKE_MANAGED || (type == FAKE_DEVICE && device == fake_gpu_current_device());
}

int fakeLaunchKernel(void *function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                     unsigned block_y, unsigned block_z, unsigned shared_bytes, void *stream, void **params,
                     void **extra) {
  const int code = injected("launch");
  if (code != 0) return code;
  if (g_refuse_launches) return FAKE_INVALID_VALUE;
  const fake_function *f = (const fake_function *)function;
  pthread_mutex_lock(&g_lock);
  const int stale = f != NULL && f->generation != g_generation;
  pthread_mutex_unlock(&g_lock);
  if (stale) return FAKE_INVALID_HANDLE; /* its module went with the context it was loaded in */
  if (f == NULL || params == NULL || params[0] == NULL || extra != NULL || shared_bytes != 0) return FAKE_INVALID_VALUE;
  const unsigned want_x = f->transpose ? DLMAP_KERNEL_TILE : DLMAP_KERNEL_BLOCK;
  const unsigned want_y = f->transpose ? DLMAP_KERNEL_TILE_ROWS : 1;
  if (block_x != want_x || block_y != want_y || block_z != 1 || grid_x == 0 || grid_y != 1 || grid_z != 1) {
    return FAKE_INVALID_VALUE; /* the kernels are built for these shapes */
  }
  const dlmap_copy_params *p = (const dlmap_copy_params *)params[0];
  if (p->ndim < 1 || p->ndim > DLMAP_KERNEL_MAX_DIMS || (f->transpose && p->ndim > 3)) return FAKE_INVALID_VALUE;
  long long count = 1, lo = 0, hi = 0;
  for (long long d = 0; d < p->ndim; d++) {
    if (p->shape[d] < 1) return FAKE_INVALID_VALUE;
    count *= p->shape[d];
    const long long reach = (p->shape[d] - 1) * p->stride[d];
    if (reach < 0) lo += reach;
    else hi += reach;
  }
  if (count != p->count) return FAKE_INVALID_VALUE;
  /* A GPU faults on memory it cannot reach: checked here, before anything runs. */
  if (((uintptr_t)p->src | (uintptr_t)p->dst) % f->unit != 0 ||
      !reachable((const char *)p->src + lo * (long long)f->unit, (size_t)(hi - lo + 1) * f->unit) ||
      !reachable(p->dst, (size_t)count * f->unit)) {
    return FAKE_ILLEGAL_ADDRESS;
  }
  job *j = (job *)malloc(sizeof *j);
  if (j == NULL) return FAKE_OUT_OF_MEMORY;
  j->p = *p;
  j->unit = f->unit;
  /* The kernel reads and writes the device's memory through the fake's read-write views, as a GPU reaches its own
   * memory: its host thread never touches the sealed addresses. The range checked above is the one translated (the
   * source's lowest byte, where negative strides start it below src). */
  const long long low = lo * (long long)f->unit;
  j->p.src = (const char *)fake_gpu_kernel_view((const char *)p->src + low, (size_t)(hi - lo + 1) * f->unit) - low;
  j->p.dst = fake_gpu_kernel_view(p->dst, (size_t)count * f->unit);
  const int rc = fake_gpu_launch(stream, run_copy, &j, sizeof j);
  if (rc != 0) {
    free(j);
    return rc;
  }
  pthread_mutex_lock(&g_lock);
  g_stats.launches++;
  strcpy(g_stats.last_kernel, f->name);
  g_stats.last_stream = stream;
  g_stats.last_device = fake_gpu_current_device();
  g_stats.grid = grid_x;
  g_stats.block_x = block_x;
  g_stats.block_y = block_y;
  pthread_mutex_unlock(&g_lock);
  return 0;
}

/* ---- the runtime compiler (NVRTC's, HIPRTC's entry points): its "build" is the header and source after a magic line */

typedef struct fake_program {
  char *source;
  char *header;     /* the text supplied for the source's one include, or NULL */
  int header_given; /* the source's one include was supplied by name */
  char *built;
  const char *log;
} fake_program;

int fakertcCreateProgram(void **program, const char *source, const char *name, int headers,
                         const char *const *header_texts, const char *const *header_names) {
  (void)name;
  if (program == NULL || source == NULL) return FAKE_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  const int absent = g_compiler_isa == 0;
  pthread_mutex_unlock(&g_lock);
  if (absent) return FAKE_NOT_FOUND; /* fake_gpu_kernels_set_compiler(0): as if no compiler were installed */
  fake_program *p = (fake_program *)calloc(1, sizeof *p);
  if (p == NULL) return FAKE_OUT_OF_MEMORY;
  p->source = strdup(source);
  for (int i = 0; i < headers && !p->header_given; i++) {
    p->header_given = strcmp(header_names[i], "strided_copy_params.h") == 0 &&
                      strstr(header_texts[i], "typedef struct dlmap_copy_params") != NULL;
    if (p->header_given) p->header = strdup(header_texts[i]);
  }
  *program = p;
  return 0;
}

int fakertcCompileProgram(void *program, int options, const char *const *option_texts) {
  (void)options;
  (void)option_texts;
  fake_program *p = (fake_program *)program;
  pthread_mutex_lock(&g_lock);
  g_stats.compiles++;
  pthread_mutex_unlock(&g_lock);
  const int code = injected("compile");
  if (code != 0) {
    p->log = "strided_copy.cu(1): error: the fake compiler was told to fail";
    return code;
  }
  if (!p->header_given || strstr(p->source, "#include \"strided_copy_params.h\"") == NULL) {
    p->log = "strided_copy.cu: catastrophic error: cannot open source file \"strided_copy_params.h\"";
    return 6; /* NVRTC_ERROR_COMPILATION */
  }
  /* The build states its compiler's PTX ISA, as NVRTC's PTX does (".version 9.0" from CUDA 13's). */
  char version[32];
  pthread_mutex_lock(&g_lock);
  snprintf(version, sizeof version, ".version %d.%d\n", g_compiler_isa / 10, g_compiler_isa % 10);
  pthread_mutex_unlock(&g_lock);
  if (p->header == NULL) return FAKE_OUT_OF_MEMORY;
  /* The build: what the compiler read, the header where the source includes it. */
  p->built = (char *)malloc(strlen(FAKE_BUILT_MAGIC) + strlen(version) + strlen(p->header) + strlen(p->source) + 1);
  if (p->built == NULL) return FAKE_OUT_OF_MEMORY;
  strcpy(p->built, FAKE_BUILT_MAGIC);
  strcat(p->built, version);
  strcat(p->built, p->header);
  strcat(p->built, p->source);
  return 0;
}

int fakertcGetCodeSize(void *program, size_t *bytes) {
  const fake_program *p = (const fake_program *)program;
  const int code = injected("code_size");
  if (code != 0) return code;
  if (p->built == NULL) return FAKE_INVALID_VALUE;
  *bytes = strlen(p->built) + 1;
  return 0;
}

int fakertcGetCode(void *program, char *image) {
  const fake_program *p = (const fake_program *)program;
  const int code = injected("code");
  if (code != 0) return code;
  if (p->built == NULL) return FAKE_INVALID_VALUE;
  strcpy(image, p->built);
  return 0;
}

int fakertcDestroyProgram(void **program) {
  fake_program *p = (fake_program *)*program;
  free(p->source);
  free(p->header);
  free(p->built);
  free(p);
  *program = NULL;
  return 0;
}

int fakertcGetProgramLogSize(void *program, size_t *bytes) {
  const fake_program *p = (const fake_program *)program;
  if (g_log_mode == FAKE_LOG_SIZE_FAILS) return FAKE_INVALID_VALUE;
  *bytes = p->log != NULL && g_log_mode != FAKE_LOG_EMPTY ? strlen(p->log) + 1 : 1;
  return 0;
}

int fakertcGetProgramLog(void *program, char *text) {
  const fake_program *p = (const fake_program *)program;
  if (g_log_mode == FAKE_LOG_FAILS) return FAKE_INVALID_VALUE;
  strcpy(text, p->log != NULL ? p->log : "");
  return 0;
}
