/* dlmap GPU check tests — a stand-in libcudart for //gpu:check_toolkit_test: just the entry points gpu/check_probe.c
 * calls, answering as a runtime of version VERSION does on a driver that lets it start (STATUS 0, one sm_90 device)
 * or not (STATUS 35, cudaErrorInsufficientDriver). */
#ifndef STATUS
#error "build with -DSTATUS=<cudaGetDeviceCount's status> -DVERSION=<cudaRuntimeGetVersion's answer>"
#endif

int cudaGetDeviceCount(int *count) {
  if (STATUS == 0) *count = 1;
  return STATUS;
}

int cudaRuntimeGetVersion(int *version) {
  *version = VERSION;
  return 0;
}

const char *cudaGetErrorString(int status) {
  return status == 35 ? "CUDA driver version is insufficient for CUDA runtime version" : "no error";
}

int cudaDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 75 ? 9 : 0; /* compute capability 9.0 */
  return 0;
}
