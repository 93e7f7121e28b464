/* dlmap core — can this build and machine serve a platform? Loads a GPU platform's vendor runtime with
 * dlopen (libraries and entry points from the spec) and reports the vendor's own error text, so one
 * build runs on machines with or without a driver. */
#include <dlfcn.h>
#include <string.h>

#include "dlmap_config.h"
#include "src/internal.h"

typedef int (*device_count_fn)(int *count);
typedef const char *(*error_string_fn)(int error);

static void set_reason(dlmap_platform_status *out, const char *a, const char *b, const char *c) {
  dlmap__writer w;
  dlmap__writer_init(&w, out->reason, sizeof out->reason);
  dlmap__put_str(&w, a);
  if (b != NULL) dlmap__put_str(&w, b);
  if (c != NULL) dlmap__put_str(&w, c);
  dlmap__writer_finish(&w);
}

/* Whether this build compiled the platform's GPU support, and the absolute runtime path it found. */
static bool gpu_built(const char *name, const char **absolute, const char **missing) {
  if (strcmp(name, "cuda") == 0) {
    *absolute = DLMAP_CUDA_LIBDIR "/" DLMAP_CUDART_SONAME;
    *missing = "this build has no CUDA support: no CUDA toolkit was found when it was configured "
               "(install one, then run `bazel sync --configure`)";
    return DLMAP_HAS_CUDA;
  }
  if (strcmp(name, "rocm") == 0) {
    *absolute = DLMAP_ROCM_LIBDIR "/" DLMAP_AMDHIP_SONAME;
    *missing = "this build has no ROCm support: no HIP runtime was found when it was configured "
               "(apt-get install libamdhip64-dev, then run `bazel sync --configure`)";
    return DLMAP_HAS_ROCM;
  }
  *absolute = "";
  *missing = "this build has no backend for this GPU platform";
  return false;
}

static void *open_runtime(const dlmap_platform_info *info, const char *absolute, char *error, size_t cap) {
  void *handle = NULL;
  for (const char *const *lib = info->libraries; *lib != NULL && handle == NULL; lib++) {
    handle = dlopen(*lib, RTLD_NOW | RTLD_LOCAL);
  }
  /* Then the toolkit path found at configure time: dlopen by name depends on ld.so.cache. */
  const size_t n = strlen(absolute);
  if (handle == NULL && n > 1 && absolute[0] == '/' && absolute[n - 1] != '/') {
    handle = dlopen(absolute, RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == NULL) {
    dlmap__writer w;
    const char *why = dlerror();
    dlmap__writer_init(&w, error, cap);
    dlmap__put_str(&w, why != NULL ? why : "not found");
    dlmap__writer_finish(&w);
  }
  return handle;
}

void dlmap_platform_probe(dlmap_platform platform, dlmap_platform_status *out) {
  const dlmap_platform_info *info = dlmap_platform_get(platform);
  memset(out, 0, sizeof *out);
  if (info == NULL) {
    set_reason(out, "not a platform of this build's spec", NULL, NULL);
    return;
  }
  if (info->backend == DLMAP_BACKEND_CPU) {
    out->built = out->available = true;
    out->device_count = 1;
    return;
  }
  if (info->backend == DLMAP_BACKEND_NONE) {
    set_reason(out, "no dlmap backend serves this platform", NULL, NULL);
    return;
  }
  const char *absolute, *missing;
  if (!gpu_built(info->name, &absolute, &missing) || info->device_count_symbol == NULL) {
    set_reason(out, missing, NULL, NULL);
    return;
  }
  out->built = true;
  char error[200];
  void *handle = open_runtime(info, absolute, error, sizeof error);
  if (handle == NULL) {
    set_reason(out, "cannot load the runtime: ", error, NULL);
    return;
  }
  /* The runtime stays loaded: vendor runtimes do not support being unloaded and reloaded. */
  device_count_fn count_fn;
  error_string_fn string_fn;
  *(void **)&count_fn = dlsym(handle, info->device_count_symbol);
  *(void **)&string_fn = dlsym(handle, info->error_string_symbol);
  if (count_fn == NULL) {
    set_reason(out, "the runtime lacks ", info->device_count_symbol, NULL);
    return;
  }
  int count = 0; /* runtimes do not always write the count on error */
  int rc = count_fn(&count);
  if (rc != 0) {
    dlmap__writer w;
    const char *text = string_fn != NULL ? string_fn(rc) : NULL;
    dlmap__writer_init(&w, out->reason, sizeof out->reason);
    dlmap__put_str(&w, text != NULL ? text : "unknown error");
    dlmap__put_str(&w, " (");
    dlmap__put_str(&w, info->device_count_symbol);
    dlmap__put_str(&w, " returned ");
    dlmap__put_int(&w, rc);
    dlmap__put_str(&w, ")");
    dlmap__writer_finish(&w);
    return;
  }
  if (count <= 0) {
    set_reason(out, "the runtime reports no devices", NULL, NULL);
    return;
  }
  out->available = true;
  out->device_count = count;
}
