/* dlmap GPU check — can the driver start a toolkit's CUDA runtime? gpu/check.sh runs this (gcc, no CUDA headers: the
 * runtime and driver are dlopen'ed) for each toolkit it finds, and builds the check against the first whose runtime
 * starts with a device. One line out, for the script:
 *   status=<cudaGetDeviceCount's status> devices=<n> runtime=<cudaRuntimeGetVersion> driver=<cuDriverGetVersion,
 *   0: no libcuda.so.1> arch=<compute capability of device 0, e.g. 90> text=<the runtime's text for the status>
 * Usage: check_probe /path/to/libcudart.so.N */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*int_out_fn)(int *);
typedef const char *(*text_fn)(int);
typedef int (*attribute_fn)(int *value, int attribute, int device);

/* cudaDevAttrComputeCapabilityMajor / Minor (driver_types.h). */
enum { kComputeMajor = 75, kComputeMinor = 76 };

static void *symbol(void *handle, const char *name) { return handle != NULL ? dlsym(handle, name) : NULL; }

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s /path/to/libcudart.so.N\n", argv[0]);
    return 2;
  }
  int driver = 0;
  void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  int_out_fn driver_version;
  *(void **)&driver_version = symbol(libcuda, "cuDriverGetVersion");
  if (driver_version == NULL || driver_version(&driver) != 0) driver = 0;
  void *runtime = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (runtime == NULL) {
    printf("status=-1 devices=0 runtime=0 driver=%d arch=0 text=cannot load %s: %s\n", driver, argv[1], dlerror());
    return 0;
  }
  int_out_fn device_count, runtime_version;
  text_fn error_string;
  attribute_fn attribute;
  *(void **)&device_count = symbol(runtime, "cudaGetDeviceCount");
  *(void **)&runtime_version = symbol(runtime, "cudaRuntimeGetVersion");
  *(void **)&error_string = symbol(runtime, "cudaGetErrorString");
  *(void **)&attribute = symbol(runtime, "cudaDeviceGetAttribute");
  if (device_count == NULL || runtime_version == NULL || error_string == NULL || attribute == NULL) {
    printf("status=-1 devices=0 runtime=0 driver=%d arch=0 text=%s lacks the CUDA runtime's entry points\n", driver,
           argv[1]);
    return 0;
  }
  int devices = 0, version = 0, major = 0, minor = 0;
  const int status = device_count(&devices);
  if (status != 0) devices = 0;
  runtime_version(&version);
  if (status == 0 && devices > 0) {
    attribute(&major, kComputeMajor, 0);
    attribute(&minor, kComputeMinor, 0);
  }
  printf("status=%d devices=%d runtime=%d driver=%d arch=%d text=%s\n", status, devices, version, driver,
         major * 10 + minor, error_string(status));
  return 0;
}
