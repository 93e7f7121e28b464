/* dlmap GPU tests — a second fake runtime (libdlmap_fake_gpu_too_new.so) with the fake's entry points that cannot
 * start: every call fails with 35, as a CUDA 13 runtime does on a driver older than R580. tests/gpu/fake_cuda.yaml
 * lists it before libdlmap_fake_gpu.so, so the backend must move on to the next soname instead of keeping a runtime
 * that can never serve. Built with -Bsymbolic: its entry points never bind to the other fake's namesakes. */
#include <stddef.h>

#define TOO_NEW 35 /* cudaErrorInsufficientDriver */

static int g_start_attempts;

/* How often the backend asked this runtime for its devices (it must have tried, then given up). */
int fake_too_new_start_attempts(void) { return g_start_attempts; }

int fakeGetDeviceCount(int *count) {
  (void)count; /* like the real runtimes, the count is not written on error */
  g_start_attempts++;
  return TOO_NEW;
}
const char *fakeGetErrorString(int error) {
  return error == TOO_NEW ? "fake error 35: the driver is older than this runtime" : "fake error: unknown";
}
int fakeGetLastError(void) { return TOO_NEW; }
int fakeRuntimeGetVersion(int *version) {
  *version = 13000;
  return 0;
}
int fakeGetDevice(int *device) { (void)device; return TOO_NEW; }
int fakeSetDevice(int device) { (void)device; return TOO_NEW; }
int fakeMalloc(void **ptr, size_t bytes) { (void)ptr; (void)bytes; return TOO_NEW; }
int fakeFree(void *ptr) { (void)ptr; return TOO_NEW; }
int fakeHostAlloc(void **ptr, size_t bytes, unsigned flags) { (void)ptr; (void)bytes; (void)flags; return TOO_NEW; }
int fakeFreeHost(void *ptr) { (void)ptr; return TOO_NEW; }
int fakeMallocManaged(void **ptr, size_t bytes, unsigned flags) { (void)ptr; (void)bytes; (void)flags; return TOO_NEW; }
int fakeMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream) {
  (void)dst; (void)src; (void)bytes; (void)kind; (void)stream;
  return TOO_NEW;
}
int fakeMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, int kind,
                      void *stream) {
  (void)dst; (void)dpitch; (void)src; (void)spitch; (void)width; (void)height; (void)kind; (void)stream;
  return TOO_NEW;
}
int fakeMemsetAsync(void *dst, int value, size_t bytes, void *stream) {
  (void)dst; (void)value; (void)bytes; (void)stream;
  return TOO_NEW;
}
int fakeEventCreateWithFlags(void **event, unsigned flags) { (void)event; (void)flags; return TOO_NEW; }
int fakeEventRecord(void *event, void *stream) { (void)event; (void)stream; return TOO_NEW; }
int fakeEventDestroy(void *event) { (void)event; return TOO_NEW; }
int fakeStreamWaitEvent(void *stream, void *event, unsigned flags) { (void)stream; (void)event; (void)flags; return TOO_NEW; }
int fakeStreamSynchronize(void *stream) { (void)stream; return TOO_NEW; }
int fakePointerGetAttributes(void *attributes, const void *ptr) { (void)attributes; (void)ptr; return TOO_NEW; }
