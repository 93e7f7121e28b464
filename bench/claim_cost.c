/* dlmap benchmarks — what the device-claim check costs an import (issues 48 and 56), side by side in one run: the same
 * imports before and after dlmap loads a GPU runtime, and the runtime calls each makes. The runtime is the fake of
 * tests/gpu (its pointer query and address range walk a table under a lock), so the figures are dlmap's own cost plus
 * a cheap stand-in for the driver's: on a GPU machine each counted call costs what the driver's query costs
 * (gpu/check.sh measures it). Before the load the check is one load and a branch.
 *
 *   bazel run //bench:claim_cost        (-c opt, as .bazelrc sets; plain C, no Google Benchmark)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlmap/dlmap.h"
#include "tests/gpu/fake_gpu_runtime.h"

int fakeMalloc(void **ptr, size_t bytes); /* the fake's cudaMalloc */

enum { kCalls = 200000, kRepetitions = 7 };

static void keep(struct DLManagedTensorVersioned *self) { (void)self; } /* the tensor outlives every import */

static struct DLManagedTensorVersioned tensor_at(void *data, DLDeviceType type, int64_t *shape) {
  struct DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.deleter = keep;
  m.dl_tensor.data = data;
  m.dl_tensor.device.device_type = type;
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
  m.dl_tensor.shape = shape;
  return m;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One import and release of m, planned when plan is not NULL; exits on a refusal (a benchmark of errors is wrong). */
static void import_once(struct DLManagedTensorVersioned *m, const dlmap_import_plan *plan) {
  dlmap_imported out;
  dlmap_error err;
  const int32_t status = plan != NULL ? dlmap_import_versioned_planned(plan, m, &out, &err)
                                      : dlmap_import_versioned(m, NULL, &out, &err);
  if (status != DLMAP_OK) {
    fprintf(stderr, "claim_cost: import refused: %s\n", err.message);
    exit(1);
  }
  dlmap_imported_release(&out);
}

typedef struct figure {
  double ns;    /* median over the repetitions, per import */
  double calls; /* runtime calls per import */
} figure;

static figure measure(struct DLManagedTensorVersioned *m, const dlmap_import_plan *plan) {
  double samples[kRepetitions];
  const int calls_before = fake_gpu_calls();
  for (int r = 0; r < kRepetitions; r++) {
    const double start = now_ns();
    for (int i = 0; i < kCalls; i++) import_once(m, plan);
    samples[r] = (now_ns() - start) / kCalls;
  }
  qsort(samples, kRepetitions, sizeof samples[0], by_value);
  return (figure){samples[kRepetitions / 2], (double)(fake_gpu_calls() - calls_before) / (kCalls * kRepetitions)};
}

int main(void) {
  static float host[4];
  int64_t shape[1] = {4};
  struct DLManagedTensorVersioned host_tensor = tensor_at(host, kDLCPU, shape);
  dlmap_import_plan *plan = NULL;
  dlmap_error err;
  if (dlmap_import_plan_create(&host_tensor.dl_tensor, true, (dlmap_version){1, 0}, 0, NULL, &plan, &err) != DLMAP_OK) {
    fprintf(stderr, "claim_cost: %s\n", err.message);
    return 1;
  }
  const figure view_before = measure(&host_tensor, NULL), planned_before = measure(&host_tensor, plan);

  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status); /* dlmap loads the (fake) runtime: claims are checked from now */
  void *device = NULL;
  if (!status.available || fakeMalloc(&device, sizeof host) != 0) {
    fprintf(stderr, "claim_cost: the fake runtime did not load: %s\n", status.reason);
    return 1;
  }
  const figure view_after = measure(&host_tensor, NULL), planned_after = measure(&host_tensor, plan);
  struct DLManagedTensorVersioned device_tensor = tensor_at(device, kDLCUDA, shape);
  const figure device_view = measure(&device_tensor, NULL);

  printf("| import of 4 float32, + release | no runtime loaded (ns) | runtime loaded (ns) | ratio | runtime calls |\n");
  printf("|---|---:|---:|---:|---:|\n");
  printf("| host view (kDLCPU) | %.1f | %.1f | %.2fx | %.2f |\n", view_before.ns, view_after.ns,
         view_after.ns / view_before.ns, view_after.calls);
  printf("| prepared host view | %.1f | %.1f | %.2fx | %.2f |\n", planned_before.ns, planned_after.ns,
         planned_after.ns / planned_before.ns, planned_after.calls);
  printf("| device view (kDLCUDA) | — | %.1f | — | %.2f |\n", device_view.ns, device_view.calls);
  dlmap_import_plan_free(plan);
  return 0;
}
