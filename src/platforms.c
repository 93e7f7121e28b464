/* dlmap core — every public dlmap_platform_* function: the spec's platform info, which platform a name or a runtime's
 * platform_version string names (the generated re2c scanner in name_lookup.re), and whether this build and machine
 * can serve a platform. A GPU platform's vendor runtime is loaded by the GPU backend (dlopen; libraries and entry
 * points from the spec) and the vendor's own error text is the reason when it cannot start, so one build runs on
 * machines with or without a driver. The backend sits below this file: it reads the platform rows through
 * dlmap__platform_info (platform_table.c) and never calls these functions. */
#include <dlfcn.h>
#include <string.h>

#include "src/backends/gpu.h"
#include "src/backends/gpu_kernels.h"
#include "src/name_lookup.h"

const dlmap_platform_info *dlmap_platform_find(dlmap_platform platform) { return dlmap__platform_info(platform); }

const char *dlmap_platform_name(dlmap_platform platform) {
  const dlmap_platform_info *info = dlmap__platform_info(platform);
  return info != NULL ? info->name : NULL;
}

bool dlmap_platform_parse(const char *name, size_t len, dlmap_platform *out) {
  const int found = dlmap__platform_from_name(name, len);
  if (found < 0) return false;
  *out = (dlmap_platform)found;
  return true;
}

int32_t dlmap_platform_lookup_by_version(const char *platform_version, dlmap_platform *out, dlmap_error *err) {
  if (platform_version != NULL) {
    int found = dlmap__platform_from_words(platform_version, strlen(platform_version));
    if (found >= 0) {
      if (out != NULL) *out = (dlmap_platform)found;
      return DLMAP_OK;
    }
  }
  return dlmap_raise_unknown_gpu_platform(err, platform_version);
}

/* The CPU serves itself; every other platform is the GPU backend's to answer, which also gives the reason for a
 * platform no backend serves (dlmap__gpu_load), so that its exchanges and this probe say the same. */
void dlmap_platform_probe(dlmap_platform platform, dlmap_platform_status *out) {
  const dlmap_platform_info *info = dlmap__platform_info(platform);
  if (info != NULL && info->backend == DLMAP_BACKEND_CPU) {
    memset(out, 0, sizeof *out);
    out->built = out->available = true;
    out->device_count = 1;
    return;
  }
  dlmap__gpu_probe(platform, out);
}

void dlmap_platform_adopt_loaded(void) {
  for (int p = 0; p < (int)DLMAP_PLATFORM_COUNT; p++) {
    const dlmap_platform_info *info = dlmap__platform_info((dlmap_platform)p);
    if (info == NULL || info->backend != DLMAP_BACKEND_GPU || dlmap__gpu_loaded((dlmap_platform)p) != NULL) continue;
    for (const char *const *lib = info->libraries; lib != NULL && *lib != NULL; lib++) {
      void *handle = dlopen(*lib, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (handle == NULL) continue;
      dlclose(handle); /* the process holds its own reference: the library stays */
      char reason[256];
      (void)dlmap__gpu_load((dlmap_platform)p, NULL, reason, sizeof reason); /* tries the loaded names first */
      break;
    }
  }
}

const char *dlmap_platform_runtime_symbol_at(dlmap_platform platform, size_t index, const char **op) {
  return dlmap__gpu_runtime_symbol_at(platform, index, op);
}

size_t dlmap_platform_kernels(dlmap_platform platform, char *text, size_t cap) {
  return dlmap__kernels_status(platform, text, cap);
}

bool dlmap_platform_kernels_load(dlmap_platform platform, int32_t device_id) {
  return dlmap__gpu_kernels_load(platform, device_id);
}

size_t dlmap_platform_driver(dlmap_platform platform, char *text, size_t cap) {
  return dlmap__kernels_driver(platform, text, cap);
}

size_t dlmap_platform_allocator(dlmap_platform platform, char *text, size_t cap) {
  const dlmap_platform_info *info = dlmap_platform_find(platform);
  const bool gpu_platform = info != NULL && info->backend == DLMAP_BACKEND_GPU;
  const dlmap__gpu *gpu = gpu_platform ? dlmap__gpu_loaded(platform) : NULL;
  const char *allocator = gpu != NULL ? dlmap__gpu_allocator(gpu) : ""; /* "" until the runtime started */
  dlmap__writer w;
  dlmap__writer_init(&w, text, cap);
  dlmap__put_str(&w, allocator[0] != '\0' ? allocator
                     : gpu_platform        ? "none: the runtime is not loaded and started"
                                           : "none: the platform has no GPU runtime");
  return dlmap__writer_finish(&w);
}
