/* dlmap GPU backend — the driver's release and whether it JIT-compiles the strided-copy kernels' PTX: the answer of
 * the spec's runtime.kernels.ptx.driver_version entry point against its release → PTX ISA table and the PTX's floor
 * (src/generated/runtime_kernels.inc). Only compares rows: which release loads what is the spec's data. */
#include <dlfcn.h>
#include <string.h>

#include "src/backends/gpu_kernels.h"

/* Where a platform's kernels load PTX, by platform: the library holding the driver's entry points (the module API's).
 * Never NULL for a platform with a PTX floor: spec.py requires runtime.kernels.library where ptx applies. The last
 * element only keeps the initializer non-empty for a spec without kernels. */
static const char *const kLibraries[DLMAP_PLATFORM_COUNT + 1] = {
#define DLMAP_RUNTIME_KERNELS(PLATFORM, library_, load, function, launch, ptx, ...) \
  [DLMAP_PLATFORM_##PLATFORM] = (ptx) ? library_ : NULL,
#include "src/generated/runtime_kernels.inc"
    [DLMAP_PLATFORM_COUNT] = NULL};

/* The PTX's floor. */
typedef struct ptx_floor {
  dlmap_platform platform;
  const char *symbol; /* f(int *version) */
  int isa;            /* tenths: 70 is ISA 7.0 */
  const char *isa_text, *target;
} ptx_floor;

static const ptx_floor kFloors[] = {
#define DLMAP_RUNTIME_KERNEL_PTX(PLATFORM, symbol_, isa_, isa_text_, target_, ...) \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .symbol = symbol_, .isa = isa_, .isa_text = isa_text_, .target = target_},
#include "src/generated/runtime_kernels.inc"
    {DLMAP_PLATFORM_COUNT, NULL, 0, NULL, NULL}};

/* One release: its driver's driver_version value and the highest PTX ISA it JIT-compiles (oldest first). */
typedef struct release_isa {
  dlmap_platform platform;
  const char *release;
  int driver_version, isa;
  const char *isa_text;
} release_isa;

static const release_isa kReleases[] = {
#define DLMAP_RUNTIME_KERNEL_DRIVER_ISA(PLATFORM, release_, driver_version_, isa_, isa_text_, ...)                 \
  {.platform = DLMAP_PLATFORM_##PLATFORM, .release = release_, .driver_version = driver_version_, .isa = isa_, \
   .isa_text = isa_text_},
#include "src/generated/runtime_kernels.inc"
    {DLMAP_PLATFORM_COUNT, NULL, 0, 0, NULL}};

typedef int (*driver_version_fn)(int *version);

static const ptx_floor *floor_of(dlmap_platform platform) {
  for (const ptx_floor *f = kFloors; f->symbol != NULL; f++) {
    if (f->platform == platform) return f;
  }
  return NULL;
}

/* Asks the driver for its release: true with *version, else false with the reason written. The library is the
 * module API's (kLibraries has one for every platform with a floor); it stays loaded: it is the driver the runtime
 * uses. */
static bool ask_driver(dlmap_platform platform, const ptx_floor *floor, dlmap__writer *w, int *version) {
  const char *library = kLibraries[platform];
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == NULL) handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  void *address = handle != NULL ? dlsym(handle, floor->symbol) : NULL;
  if (address == NULL) {
    const char *error = dlerror();
    dlmap__put_str(w, handle == NULL ? "driver unknown: cannot load " : "driver unknown: ");
    dlmap__put_str(w, library);
    dlmap__put_str(w, handle == NULL ? ": " : " lacks ");
    dlmap__put_str(w, handle == NULL ? (error != NULL ? error : "dlopen failed") : floor->symbol);
    return false;
  }
  driver_version_fn query;
  memcpy(&query, &address, sizeof query);
  const int status = query(version);
  if (status != 0) {
    dlmap__put_str(w, "driver unknown: ");
    dlmap__put_str(w, library);
    dlmap__put_str(w, ": ");
    dlmap__put_str(w, floor->symbol);
    dlmap__put_str(w, " failed (error ");
    dlmap__put_int(w, status);
    dlmap__put_str(w, ")");
    return false;
  }
  return true;
}

/* " (ISA 7.0, sm_75)": what the kernels' PTX declares at most. */
static void put_floor(dlmap__writer *w, const ptx_floor *floor) {
  dlmap__put_str(w, " (ISA ");
  dlmap__put_str(w, floor->isa_text);
  dlmap__put_str(w, ", ");
  dlmap__put_str(w, floor->target);
  dlmap__put_str(w, ")");
}

/* What the release table says of the driver's version. */
static void describe(dlmap__writer *w, dlmap_platform platform, const ptx_floor *floor, int version) {
  const release_isa *at = NULL, *first = NULL, *oldest_loading = NULL;
  for (const release_isa *r = kReleases; r->release != NULL; r++) {
    if (r->platform != platform) continue;
    if (first == NULL) first = r;
    if (r->driver_version <= version) at = r;
    if (oldest_loading == NULL && r->isa >= floor->isa) oldest_loading = r;
  }
  const char *name = dlmap__platform_info(platform)->name;
  dlmap__put_str(w, "driver ");
  dlmap__put_int(w, version);
  if (at == NULL) {
    dlmap__put_str(w, ", older than ");
    dlmap__put_str(w, name);
    dlmap__put_str(w, " ");
    dlmap__put_str(w, first->release);
    dlmap__put_str(w, " (the oldest release the spec lists): not known to JIT-compile the kernels' PTX");
    put_floor(w, floor);
    return;
  }
  dlmap__put_str(w, " (");
  dlmap__put_str(w, name);
  dlmap__put_str(w, " ");
  dlmap__put_str(w, at->release);
  dlmap__put_str(w, at->driver_version == version ? "" : " or newer");
  dlmap__put_str(w, "): JIT-compiles PTX up to ISA ");
  dlmap__put_str(w, at->isa_text);
  dlmap__put_str(w, at->driver_version == version ? "" : " at least"); /* a release the table does not list yet */
  dlmap__put_str(w, at->isa >= floor->isa ? "; the kernels' PTX" : "; too old for the kernels' PTX");
  put_floor(w, floor);
  if (at->isa >= floor->isa) {
    dlmap__put_str(w, " loads");
  } else {
    dlmap__put_str(w, ", which ");
    dlmap__put_str(w, name);
    dlmap__put_str(w, " ");
    dlmap__put_str(w, oldest_loading->release); /* the generator checked that some release loads it */
    dlmap__put_str(w, "'s driver or newer loads");
  }
}

size_t dlmap__kernels_driver(dlmap_platform platform, char *text, size_t cap) {
  dlmap__writer w;
  dlmap__writer_init(&w, text, cap);
  const ptx_floor *floor = (unsigned)platform < (unsigned)DLMAP_PLATFORM_COUNT ? floor_of(platform) : NULL;
  int version = 0;
  if (floor == NULL) {
    dlmap__put_str(&w, "none: the spec gives this platform's kernels no PTX");
  } else if (ask_driver(platform, floor, &w, &version)) {
    describe(&w, platform, floor, version);
  }
  return dlmap__writer_finish(&w);
}
