/* dlmap GPU check tests — a stand-in libcuda.so.1 for //gpu:check_toolkit_test: a driver that supports CUDA DRIVER
 * (cuDriverGetVersion's answer, e.g. 12040 for 12.4). */
int cuDriverGetVersion(int *version) {
  *version = DRIVER;
  return 0;
}
