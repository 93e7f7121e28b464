/* dlmap GPU backend — the strided-copy kernels: plans a layout copy in units, loads the kernels' code image into the
 * current context at first use (the committed PTX through the module API the spec names, else the runtime compiler's
 * build of the same source) and launches them on the consumer's stream. Everything vendor-specific is the spec's
 * runtime.kernels row: which library, which entry points, whether PTX applies, which compiler. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/backends/gpu_kernels.h"
#include "src/generated/strided_copy_image.inc" /* made at build time from the committed PTX (codegen/kernel_image.py) */

_Static_assert(DLMAP_KERNEL_MAX_DIMS >= DLMAP_MAX_NDIM + 1, "a parameter block holds every dimension and the unit's");

/* ---- planning ------------------------------------------------------------------------------------------------- */

bool dlmap__kernel_plan_copy(const void *src, void *dst, const dlmap__copy_layout *layout, dlmap__kernel_plan *plan) {
  const int64_t element_bytes = (int64_t)layout->element_bytes;
  if (element_bytes == 0 || dlmap__copy_layout_compact(layout)) return false; /* compact: one memcpy */
  /* The widest unit dividing every byte quantity the kernel reads at (negative strides too: two's complement keeps the
   * low bits of a multiple). */
  const uint64_t bits = layout->align_bits | (uint64_t)(uintptr_t)src | (uint64_t)(uintptr_t)dst;
  int log2 = 4;
  while (log2 > 0 && (bits & ((UINT64_C(1) << log2) - 1)) != 0) log2--;
  const int64_t per_element = element_bytes >> log2;
  dlmap_copy_params *p = &plan->params;
  memset(p, 0, sizeof *p);
  p->src = src;
  p->dst = dst;
  /* Dimensions innermost first, in units: the element's units, then the layout's (merged already); the innermost
   * one continues the element's units when it steps one element. */
  int k = 0;
  int64_t count = per_element;
  if (per_element > 1) {
    p->shape[0] = per_element;
    p->stride[k++] = 1;
  }
  for (int32_t i = 0; i < layout->ndim; i++) {
    const dlmap__copy_dim *d = &layout->dims[i];
    count *= d->extent;
    if (i == 0 && k == 1 && d->src_step == element_bytes) {
      p->shape[0] *= d->extent;
    } else {
      p->shape[k] = d->extent;
      p->stride[k++] = d->src_step / (INT64_C(1) << log2); /* exact: log2 divides align_bits */
    }
  }
  /* A contiguous innermost run moves in wider units where its length, both addresses and the other strides allow
   * (rows of a wider buffer as 16-byte loads and stores): fewer, wider memory transactions and index computations. */
  if (p->stride[0] == 1) {
    const int64_t unit = INT64_C(1) << log2, run = p->shape[0] * unit; /* bytes */
    const uint64_t addresses = (uint64_t)(uintptr_t)src | (uint64_t)(uintptr_t)dst;
    int64_t wide = 16;
    for (; wide > unit; wide /= 2) {
      bool fits = run % wide == 0 && (addresses & (uint64_t)(wide - 1)) == 0;
      for (int d = 1; d < k && fits; d++) fits = p->stride[d] * unit % wide == 0;
      if (fits) break;
    }
    if (wide > unit) {
      p->shape[0] = run / wide;
      for (int d = 1; d < k; d++) p->stride[d] = p->stride[d] * unit / wide;
      count /= wide / unit;
      while ((INT64_C(1) << log2) < wide) log2++;
    }
  }
  p->ndim = k;
  p->count = count;
  plan->unit_log2 = log2;
  /* A transposed plane: the source runs along the destination's outer dimension. */
  if ((k == 2 || k == 3) && p->stride[1] == 1) {
    plan->shape = DLMAP__KERNEL_TRANSPOSE;
  } else {
    plan->shape = count < (INT64_C(1) << 31) ? DLMAP__KERNEL_GATHER32 : DLMAP__KERNEL_GATHER;
  }
  return true;
}

#define KERNEL_ONE_UNIT(...) +1
#define KERNEL_UNITS (0 DLMAP_KERNEL_UNITS(KERNEL_ONE_UNIT, ~))
#define KERNEL_COUNT (DLMAP__KERNEL_SHAPE_COUNT * KERNEL_UNITS)
_Static_assert(KERNEL_UNITS == 5, "a plan's unit_log2 (0…4: 1…16 bytes) indexes the kernels' units");

/* The kernels of strided_copy.cu, by shape then unit, named from strided_copy_params.h's lists as the source names
 * them: dlmap_<shape>_<unit>. */
static const char *const kKernelNames[KERNEL_COUNT] = {
#define KERNEL_NAME(unit, T, shape) "dlmap_" #shape "_" #unit,
#define KERNEL_NAMES_OF_SHAPE(SHAPE, shape, ...) DLMAP_KERNEL_UNITS(KERNEL_NAME, shape)
    DLMAP_KERNEL_SHAPES(KERNEL_NAMES_OF_SHAPE, ~)
#undef KERNEL_NAMES_OF_SHAPE
#undef KERNEL_NAME
};

static int kernel_index(const dlmap__kernel_plan *plan) { return (int)plan->shape * KERNEL_UNITS + plan->unit_log2; }

const char *dlmap__kernel_name(const dlmap__kernel_plan *plan) { return kKernelNames[kernel_index(plan)]; }

/* ---- the spec's rows ------------------------------------------------------------------------------------------ */

typedef struct kernels_row {
  dlmap_platform platform;
  const char *library, *load, *function, *launch;
  bool ptx;
} kernels_row;

static const kernels_row kKernels[] = {
#define DLMAP_RUNTIME_KERNELS(PLATFORM, library_, load_, function_, launch_, ptx_, ...)                         \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .library = library_, .load = load_, .function = function_, .launch = launch_, \
   .ptx = ptx_},
#include "src/generated/runtime_kernels.inc"
    {DLMAP_PLATFORM_COUNT, NULL, NULL, NULL, NULL, false}};

#define DLMAP_RUNTIME_KERNEL_COMPILER(PLATFORM, libraries, ...) \
  static const char *const kCompilerLibraries_##PLATFORM[] = {DLMAP_UNPAREN libraries NULL};
#include "src/generated/runtime_kernels.inc"

/* The launch statuses that mean the module went with its context (spec: runtime.kernels.module_lost). */
typedef struct module_lost_row {
  dlmap_platform platform;
  int status;
} module_lost_row;

static const module_lost_row kModuleLost[] = {
#define DLMAP_RUNTIME_KERNEL_MODULE_LOST(PLATFORM, status_, ...) {.platform = DLMAP_PLATFORM_##PLATFORM, .status = status_},
#include "src/generated/runtime_kernels.inc"
#undef DLMAP_RUNTIME_KERNEL_MODULE_LOST
    {DLMAP_PLATFORM_COUNT, 0}};

static bool module_lost(dlmap_platform platform, int status) {
  for (const module_lost_row *row = kModuleLost; row->platform != DLMAP_PLATFORM_COUNT; row++) {
    if (row->platform == platform && row->status == status) return true;
  }
  return false;
}

/* The runtime compiler's entry points, in the order of every compiler row's symbols (the generated
 * DLMAP_KERNEL_COMPILER_OP rows: codegen/runtime_interface.py KERNEL_COMPILER_SIGNATURES). */
enum {
#define DLMAP_KERNEL_COMPILER_OP(OP, ...) CC_##OP,
#include "src/generated/runtime_kernels.inc"
  CC_OPS
};

typedef struct compiler_row {
  dlmap_platform platform;
  const char *const *libraries;
  const char *symbols[CC_OPS];
} compiler_row;

static const compiler_row kCompilers[] = {
#define DLMAP_RUNTIME_KERNEL_COMPILER(PLATFORM, libraries_, symbols_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM,                                  \
   .libraries = kCompilerLibraries_##PLATFORM,                             \
   .symbols = {DLMAP_UNPAREN symbols_}},
#include "src/generated/runtime_kernels.inc"
    {DLMAP_PLATFORM_COUNT, NULL, {NULL}}};

/* ---- the loaded state ----------------------------------------------------------------------------------------- */

/* The module API's and the compiler's entry points, as the generated signatures type them (codegen/runtime_interface.py
 * KERNEL_SIGNATURES, KERNEL_COMPILER_SIGNATURES): module_load_data_fn, …, create_program_fn, …, log_fn. */
#define DLMAP_KERNEL_OP(OP, op, R, ARGS, ...) typedef R(*op##_fn) ARGS;
#define DLMAP_KERNEL_COMPILER_OP(OP, op, R, ARGS, ...) typedef R(*op##_fn) ARGS;
#include "src/generated/runtime_kernels.inc"

/* A runtime compiler's entry points, resolved. */
typedef struct compiler_api {
#define DLMAP_KERNEL_COMPILER_OP(OP, op, ...) op##_fn op;
#include "src/generated/runtime_kernels.inc"
} compiler_api;

/* The code images loaded so far: one per context (or device), each with every kernel's function, or the reason it
 * could not load (not retried: the driver or compiler gives the same answer again). An image whose kernels launched
 * and then fail with a status the spec's module_lost lists is loaded once more and the launch retried: its context was
 * destroyed, perhaps with a new one made at the same address (cudaDeviceReset), which left the key the same and the
 * functions dangling. Any other failure (an illegal address, a launch the device refuses) is that copy's own and
 * reloads nothing. At most KERNEL_MAX_RELOADS reloads per platform, so a loss that a reload does not cure costs no
 * more loads. */
#define KERNEL_MAX_IMAGES 64
#define KERNEL_MAX_RELOADS 16

typedef struct kernel_image {
  void *key;
  bool usable;
  bool launched; /* a launch of its kernels has succeeded */
  void *module;  /* loaded for the life of the process, as the runtime keeps its own */
  void *functions[KERNEL_COUNT];
} kernel_image;

typedef struct kernel_state {
  int resolved; /* 0: not yet; 1: the module API resolved; -1: unusable (status says why) */
  module_load_data_fn load;
  module_get_function_fn function;
  launch_kernel_fn launch;
  kernel_image images[KERNEL_MAX_IMAGES];
  int image_count;
  int reloads; /* images loaded again after a launch failure */
  char status[320];
} kernel_state;

static kernel_state g_states[DLMAP_PLATFORM_COUNT];
static pthread_mutex_t g_kernel_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_status(kernel_state *state, const char *a, const char *b, const char *c, const char *d) {
  dlmap__writer w;
  dlmap__writer_init(&w, state->status, sizeof state->status);
  const char *parts[] = {a, b, c, d};
  for (int i = 0; i < 4; i++) {
    if (parts[i] != NULL) dlmap__put_str(&w, parts[i]);
  }
  dlmap__writer_finish(&w);
}

static size_t copy_text(char *out, size_t cap, const char *text) {
  dlmap__writer w;
  dlmap__writer_init(&w, out, cap);
  dlmap__put_str(&w, text);
  return dlmap__writer_finish(&w);
}

static const kernels_row *kernels_of(dlmap_platform platform) {
  for (const kernels_row *row = kKernels; row->load != NULL; row++) {
    if (row->platform == platform) return row;
  }
  return NULL;
}

static const compiler_row *compiler_of(dlmap_platform platform) {
  for (const compiler_row *row = kCompilers; row->libraries != NULL; row++) {
    if (row->platform == platform) return row;
  }
  return NULL;
}

/* Resolves the module API (under g_kernel_lock). */
static void resolve_api(kernel_state *state, const kernels_row *row, void *runtime_library) {
  void *handle = runtime_library;
  if (row->library != NULL) {
    handle = dlopen(row->library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle == NULL) handle = dlopen(row->library, RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == NULL) {
    const char *error = dlerror();
    set_status(state, "not used: cannot load ", row->library, ": ", error != NULL ? error : "dlopen failed");
    state->resolved = -1;
    return;
  }
  void *load = dlsym(handle, row->load), *function = dlsym(handle, row->function), *launch = dlsym(handle, row->launch);
  if (load == NULL || function == NULL || launch == NULL) {
    set_status(state, "not used: the library lacks ", load == NULL ? row->load : function == NULL ? row->function : row->launch,
               NULL, NULL);
    state->resolved = -1;
    return; /* the library stays loaded: it may be the driver the runtime uses */
  }
  memcpy(&state->load, &load, sizeof load);
  memcpy(&state->function, &function, sizeof function);
  memcpy(&state->launch, &launch, sizeof launch);
  state->resolved = 1;
  set_status(state, "not loaded yet: the first layout copy on the device loads them", NULL, NULL, NULL);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void put_ms(dlmap__writer *w, double ms) {
  dlmap__put_int(w, (int64_t)ms);
  dlmap__put_str(w, ".");
  dlmap__put_int(w, (int64_t)(ms * 10) % 10);
  dlmap__put_str(w, " ms");
}

/* A failed entry point of the module API or compiler: "cuModuleLoadData failed (error 222)". */
static void put_failure(dlmap__writer *w, const char *symbol, int status) {
  dlmap__put_str(w, symbol);
  dlmap__put_str(w, " failed (error ");
  dlmap__put_int(w, status);
  dlmap__put_str(w, ")");
}

/* Opens the first of the compiler's libraries that loads; NULL with the reason written to w. */
static void *open_compiler(const compiler_row *row, const char **library, dlmap__writer *w) {
  void *handle = NULL;
  char first_error[160] = ""; /* dlerror's text of the first name that did not load (its buffer is reused) */
  for (const char *const *name = row->libraries; *name != NULL; name++) {
    handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
    *library = *name;
    if (handle != NULL) break;
    const char *error = dlerror();
    if (first_error[0] == '\0') copy_text(first_error, sizeof first_error, error != NULL ? error : *name);
  }
  if (handle == NULL) { /* first_error is set: spec.py requires at least one library */
    dlmap__put_str(w, "no runtime compiler: ");
    dlmap__put_str(w, first_error);
  }
  return handle;
}

/* Resolves every entry point of the compiler row in handle; false with the one it lacks written to w (the library is
 * kept loaded: closing a library that may have run is not safe). */
static bool resolve_compiler(const compiler_row *row, void *handle, const char *library, compiler_api *api,
                             dlmap__writer *w) {
  void *address[CC_OPS];
  for (int op = 0; op < CC_OPS; op++) {
    address[op] = dlsym(handle, row->symbols[op]);
    if (address[op] == NULL) {
      dlmap__put_str(w, library);
      dlmap__put_str(w, " lacks ");
      dlmap__put_str(w, row->symbols[op]);
      return false;
    }
  }
#define DLMAP_KERNEL_COMPILER_OP(OP, op, ...) memcpy(&api->op, &address[CC_##OP], sizeof api->op);
#include "src/generated/runtime_kernels.inc"
  return true;
}

/* The compiler's first words on why a compile failed, after its failure. */
static void put_compile_log(const compiler_api *api, void *program, dlmap__writer *w) {
  size_t bytes = 0;
  if (api->log_size(program, &bytes) == 0 && bytes > 1) {
    char *text = (char *)malloc(bytes);
    if (text != NULL && api->log(program, text) == 0) {
      text[bytes - 1] = '\0';
      dlmap__put_str(w, ": ");
      dlmap__put_str(w, text);
    }
    free(text);
  }
}

/* Compiles the kernel source with a resolved compiler: the image (malloc'ed), or NULL with the reason written to w. */
static char *build_image(const compiler_row *row, const compiler_api *api, dlmap__writer *w) {
  const char *header_texts[] = {(const char *)kKernelHeader};
  const char *header_names[] = {kKernelHeaderName};
  void *program = NULL;
  int status = api->create_program(&program, (const char *)kKernelSource, "strided_copy.cu", 1, header_texts,
                                   header_names);
  if (status != 0) {
    put_failure(w, row->symbols[CC_CREATE_PROGRAM], status);
    return NULL;
  }
  char *image = NULL;
  size_t bytes = 0;
  if ((status = api->compile_program(program, 0, NULL)) != 0) {
    put_failure(w, row->symbols[CC_COMPILE_PROGRAM], status);
    put_compile_log(api, program, w);
  } else if ((status = api->code_size(program, &bytes)) != 0 || bytes == 0) {
    put_failure(w, row->symbols[CC_CODE_SIZE], status);
  } else if ((image = (char *)malloc(bytes)) == NULL) {
    dlmap__put_str(w, "out of memory for the compiled kernels");
  } else if ((status = api->code(program, image)) != 0) {
    put_failure(w, row->symbols[CC_CODE], status);
    free(image);
    image = NULL;
  }
  api->destroy_program(&program);
  return image;
}

/* Builds the kernel source with the platform's runtime compiler for the current device; the image (malloc'ed) or
 * NULL with the reason written to w. */
static char *compile_source(const compiler_row *row, dlmap__writer *w) {
  const char *library = NULL;
  void *handle = open_compiler(row, &library, w);
  compiler_api api;
  if (handle == NULL || !resolve_compiler(row, handle, library, &api, w)) return NULL;
  char *image = build_image(row, &api, w);
  if (image != NULL) {
    dlmap__put_str(w, "built by ");
    dlmap__put_str(w, library);
    dlmap__put_str(w, " and ");
  }
  return image;
}

/* Loads the kernels into the current context as `image` (under g_kernel_lock): the PTX first where the spec says it
 * applies, else (or when the module API refuses it) the compiler's build. Records the outcome in the state's status. */
static void load_image(kernel_state *state, dlmap_platform platform, const kernels_row *row, kernel_image *image,
                       void *key) {
  memset(image, 0, sizeof *image);
  image->key = key;
  const double start = now_ms();
  char text[sizeof state->status];
  dlmap__writer w;
  dlmap__writer_init(&w, text, sizeof text);
  void **module = &image->module;
  int status = -1;
  if (row->ptx) {
    status = state->load(module, kKernelPtx);
    if (status == 0) {
      dlmap__put_str(&w, "the committed PTX through ");
    } else {
      dlmap__put_str(&w, "the PTX was refused: ");
      put_failure(&w, row->load, status);
      if (compiler_of(platform) != NULL) dlmap__put_str(&w, "; ");
    }
  }
  const compiler_row *compiler = compiler_of(platform);
  if (status != 0 && compiler != NULL) {
    char *built = compile_source(compiler, &w);
    if (built != NULL) {
      status = state->load(module, built);
      free(built);
      if (status != 0) put_failure(&w, row->load, status);
    }
  }
  if (status == 0) {
    for (int i = 0; i < KERNEL_COUNT && status == 0; i++) {
      status = state->function(&image->functions[i], *module, kKernelNames[i]);
      if (status != 0) {
        dlmap__put_str(&w, "; ");
        put_failure(&w, row->function, status);
        dlmap__put_str(&w, " for ");
        dlmap__put_str(&w, kKernelNames[i]);
      }
    }
  }
  image->usable = status == 0;
  dlmap__writer_finish(&w);
  if (image->usable) {
    dlmap__writer_init(&w, state->status, sizeof state->status);
    dlmap__put_str(&w, "loaded: ");
    dlmap__put_str(&w, text);
    dlmap__put_str(&w, row->load);
    dlmap__put_str(&w, " in ");
    put_ms(&w, now_ms() - start);
    dlmap__put_str(&w, " (the first use in this context)");
    dlmap__writer_finish(&w);
  } else {
    set_status(state, "not used: ", text, "; layout copies take the memcpy path", NULL);
  }
}

/* The kernel image of `key` (under g_kernel_lock), loaded now if it was not: NULL when the module API is unusable or
 * the table of images is full. */
static kernel_image *image_for(kernel_state *state, dlmap_platform platform, const kernels_row *row,
                               void *runtime_library, void *key) {
  if (state->resolved == 0) resolve_api(state, row, runtime_library);
  if (state->resolved != 1) return NULL;
  for (int i = 0; i < state->image_count; i++) {
    if (state->images[i].key == key) return &state->images[i];
  }
  if (state->image_count == KERNEL_MAX_IMAGES) return NULL; /* beyond, copies take the memcpy path */
  kernel_image *image = &state->images[state->image_count++];
  load_image(state, platform, row, image, key);
  return image;
}

bool dlmap__kernels_in_runtime(dlmap_platform platform) {
  const kernels_row *row = kernels_of(platform);
  return row != NULL && row->library == NULL;
}

bool dlmap__kernels_prepare(dlmap_platform platform, void *runtime_library, void *key) {
  const kernels_row *row = kernels_of(platform);
  if (row == NULL) return false;
  pthread_mutex_lock(&g_kernel_lock);
  const kernel_image *image = image_for(&g_states[platform], platform, row, runtime_library, key);
  const bool usable = image != NULL && image->usable;
  pthread_mutex_unlock(&g_kernel_lock);
  return usable;
}

/* Launches the planned copy's kernel with the grid and block it was built for: the module API's status. */
static int launch_planned(launch_kernel_fn launch, void *function, const dlmap__kernel_plan *plan, void *stream) {
  const int64_t count = plan->params.count;
  unsigned grid, block_x = DLMAP_KERNEL_BLOCK, block_y = 1;
  if (plan->shape == DLMAP__KERNEL_TRANSPOSE) {
    const int64_t tiles = (plan->params.shape[0] + DLMAP_KERNEL_TILE - 1) / DLMAP_KERNEL_TILE *
                          ((plan->params.shape[1] + DLMAP_KERNEL_TILE - 1) / DLMAP_KERNEL_TILE) *
                          (plan->params.ndim > 2 ? plan->params.shape[2] : 1);
    grid = (unsigned)(tiles < (1 << 20) ? tiles : (1 << 20));
    block_x = DLMAP_KERNEL_TILE;
    block_y = DLMAP_KERNEL_TILE_ROWS;
  } else {
    const int64_t blocks = (count + DLMAP_KERNEL_BLOCK - 1) / DLMAP_KERNEL_BLOCK;
    grid = (unsigned)(blocks < (1 << 20) ? blocks : (1 << 20));
  }
  dlmap_copy_params params = plan->params;
  void *args[] = {&params};
  return launch(function, grid, 1, 1, block_x, block_y, 1, 0, stream, args, NULL);
}

int dlmap__kernels_launch(dlmap_platform platform, void *runtime_library, void *key, const dlmap__kernel_plan *plan,
                          void *stream, char *why, size_t cap) {
  const kernels_row *row = kernels_of(platform);
  if (row == NULL) {
    copy_text(why, cap, "the spec names no kernels for this platform");
    return -1;
  }
  kernel_state *state = &g_states[platform];
  pthread_mutex_lock(&g_kernel_lock);
  kernel_image *image = image_for(state, platform, row, runtime_library, key);
  for (int attempt = 0;; attempt++) {
    void *function = image != NULL && image->usable ? image->functions[kernel_index(plan)] : NULL;
    if (function == NULL) {
      copy_text(why, cap, image == NULL && state->resolved == 1 ? "too many contexts hold the kernels" : state->status);
      pthread_mutex_unlock(&g_kernel_lock);
      return -1;
    }
    const bool launched_before = image->launched;
    launch_kernel_fn launch = state->launch;
    pthread_mutex_unlock(&g_kernel_lock);

    const int status = launch_planned(launch, function, plan, stream);
    if (status == 0 && launched_before) return 0;
    pthread_mutex_lock(&g_kernel_lock);
    if (status == 0) {
      image->launched = true;
      pthread_mutex_unlock(&g_kernel_lock);
      return 0;
    }
    if (attempt == 0 && image->functions[kernel_index(plan)] != function) continue; /* another thread reloaded it */
    if (attempt == 0 && launched_before && module_lost(platform, status) && state->reloads < KERNEL_MAX_RELOADS) {
      state->reloads++;
      load_image(state, platform, row, image, key);
      continue;
    }
    dlmap__writer w;
    dlmap__writer_init(&w, why, cap);
    put_failure(&w, row->launch, status);
    dlmap__put_str(&w, " for ");
    dlmap__put_str(&w, kKernelNames[kernel_index(plan)]);
    dlmap__writer_finish(&w);
    set_status(state, "launch failed: ", why, "; that copy took the memcpy path", NULL);
    pthread_mutex_unlock(&g_kernel_lock);
    return -1;
  }
}

size_t dlmap__kernels_status(dlmap_platform platform, char *text, size_t cap) {
  const char *status = "none: the spec names no kernels for this platform";
  char copy[sizeof g_states[0].status];
  if ((unsigned)platform < (unsigned)DLMAP_PLATFORM_COUNT && kernels_of(platform) != NULL) {
    pthread_mutex_lock(&g_kernel_lock);
    memcpy(copy, g_states[platform].status, sizeof copy);
    pthread_mutex_unlock(&g_kernel_lock);
    status = copy[0] != '\0' ? copy : "not loaded yet: the first layout copy on the device loads them";
  }
  return copy_text(text, cap, status);
}
