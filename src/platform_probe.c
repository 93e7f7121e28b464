/* dlmap core — can this build and machine serve a platform? A GPU platform's vendor runtime is loaded by
 * the GPU backend (dlopen; libraries and entry points from the spec) and the vendor's own error text is
 * the reason when it cannot start, so one build runs on machines with or without a driver. */
#include <dlfcn.h>
#include <string.h>

#include "src/backends/gpu.h"

static void set_reason(dlmap_platform_status *out, const char *a, const char *b, const char *c) {
  dlmap__writer w;
  dlmap__writer_init(&w, out->reason, sizeof out->reason);
  dlmap__put_str(&w, a);
  if (b != NULL) dlmap__put_str(&w, b);
  if (c != NULL) dlmap__put_str(&w, c);
  dlmap__writer_finish(&w);
}

void dlmap_platform_probe(dlmap_platform platform, dlmap_platform_status *out) {
  const dlmap_platform_info *info = dlmap_platform_find(platform);
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
  /* The GPU backend loads the runtime once (library, every symbol of the spec's table, the device count). */
  const dlmap__gpu *gpu = dlmap__gpu_load(platform, &out->built, out->reason, sizeof out->reason);
  if (gpu == NULL) return;
  int count;
  const int rc = dlmap__gpu_device_count(gpu, &count);
  if (rc != 0) {
    dlmap__writer w;
    dlmap__writer_init(&w, out->reason, sizeof out->reason);
    dlmap__put_str(&w, dlmap__gpu_error_text(gpu, rc));
    dlmap__put_str(&w, " (");
    dlmap__put_str(&w, dlmap__gpu_device_count_symbol(gpu));
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

void dlmap_platform_adopt_loaded(void) {
  for (int p = 0; p < (int)DLMAP_PLATFORM_COUNT; p++) {
    const dlmap_platform_info *info = dlmap_platform_find((dlmap_platform)p);
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
