/* dlmap GPU tests — the fake vendor runtime behind tests/gpu/fake_cuda.yaml: host memory that the fake
 * calls "device", "pinned" or "managed", with the checks a real runtime makes and a count of every call. */
#include "tests/gpu/fake_gpu_runtime.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_ALLOCATIONS 4096
#define FAKE_EVENT_MAGIC 0x45564e54

typedef struct allocation {
  char *base;
  size_t size;
  int type;   /* FAKE_DEVICE, FAKE_HOST (pinned) or FAKE_MANAGED */
  int device;
} allocation;

typedef struct event {
  int magic;
  int device;
  int recorded;
} event;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static allocation g_allocations[FAKE_MAX_ALLOCATIONS];
static fake_gpu_stats g_stats;
static int g_device_count = 2;
static int g_last_error;
static char g_fail_op[32];
static int g_fail_code;
static _Thread_local int t_device;

void fake_gpu_reset(int device_count) {
  pthread_mutex_lock(&g_lock);
  const int live = g_stats.live;
  memset(&g_stats, 0, sizeof g_stats);
  g_stats.live = live;
  g_device_count = device_count;
  g_last_error = 0;
  g_fail_op[0] = '\0';
  pthread_mutex_unlock(&g_lock);
}

const fake_gpu_stats *fake_gpu_get_stats(void) { return &g_stats; }

void fake_gpu_fail_next(const char *op, int code) {
  pthread_mutex_lock(&g_lock);
  strncpy(g_fail_op, op, sizeof g_fail_op - 1);
  g_fail_code = code;
  pthread_mutex_unlock(&g_lock);
}

int fake_gpu_current_device(void) { return t_device; }

/* Under g_lock: the injected failure for op, if any (consumed), else 0. */
static int injected(const char *op) {
  if (g_fail_op[0] != '\0' && strcmp(g_fail_op, op) == 0) {
    g_fail_op[0] = '\0';
    return g_fail_code;
  }
  return 0;
}

static int fail(int code) {
  g_last_error = code;
  return code;
}

/* Under g_lock: the allocation containing [p, p + n), NULL when p is in none; *overrun when p is in one
 * but the range leaves it. */
static allocation *find(const void *p, size_t n, int *overrun) {
  const char *c = (const char *)p;
  *overrun = 0;
  for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
    allocation *a = &g_allocations[i];
    if (a->base == NULL || c < a->base || c >= a->base + (a->size ? a->size : 1)) continue;
    *overrun = (size_t)(c - a->base) + n > a->size;
    return a;
  }
  return NULL;
}

static int type_of(const void *p, size_t n, int *overrun) {
  const allocation *a = find(p, n, overrun);
  return a != NULL ? a->type : FAKE_UNREGISTERED;
}

int fakeGetDeviceCount(int *count) {
  if (g_device_count <= 0) return fail(100);
  *count = g_device_count;
  return 0;
}

const char *fakeGetErrorString(int error) {
  switch (error) {
    case 0: return "no error";
    case FAKE_INVALID_VALUE: return "fake error 1: invalid value";
    case FAKE_OUT_OF_MEMORY: return "fake error 2: out of memory";
    case 100: return "fake error 100: no device";
    case FAKE_INVALID_DEVICE: return "fake error 101: invalid device ordinal";
    case FAKE_INVALID_HANDLE: return "fake error 400: invalid resource handle";
    default: return "fake error: unknown";
  }
}

int fakeGetLastError(void) {
  pthread_mutex_lock(&g_lock);
  const int error = g_last_error;
  g_last_error = 0;
  pthread_mutex_unlock(&g_lock);
  return error;
}

int fakeRuntimeGetVersion(int *version) {
  *version = 12040;
  return 0;
}

int fakeGetDevice(int *device) {
  *device = t_device;
  return 0;
}

int fakeSetDevice(int device) {
  pthread_mutex_lock(&g_lock);
  g_stats.set_device_calls++;
  const int rc = device < 0 || device >= g_device_count ? fail(FAKE_INVALID_DEVICE) : 0;
  pthread_mutex_unlock(&g_lock);
  if (rc == 0) t_device = device;
  return rc;
}

static int allocate(void **ptr, size_t bytes, int type) {
  pthread_mutex_lock(&g_lock);
  int rc = injected("malloc");
  if (rc != 0) {
    pthread_mutex_unlock(&g_lock);
    return fail(rc);
  }
  rc = FAKE_OUT_OF_MEMORY;
  for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
    if (g_allocations[i].base != NULL) continue;
    char *base = (char *)malloc(bytes ? bytes : 1);
    if (base == NULL) break;
    memset(base, 0xCD, bytes); /* fresh device memory is not zero */
    g_allocations[i] = (allocation){base, bytes, type, t_device};
    *ptr = base;
    g_stats.allocations++;
    g_stats.live++;
    rc = 0;
    break;
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

static int release(void *ptr, int pinned) {
  if (ptr == NULL) return 0;
  pthread_mutex_lock(&g_lock);
  int rc = FAKE_INVALID_VALUE;
  for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
    allocation *a = &g_allocations[i];
    if (a->base != (char *)ptr || (a->type == FAKE_HOST) != pinned) continue;
    free(a->base);
    memset(a, 0, sizeof *a);
    g_stats.frees++;
    g_stats.live--;
    rc = 0;
    break;
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeMalloc(void **ptr, size_t bytes) { return allocate(ptr, bytes, FAKE_DEVICE); }
int fakeFree(void *ptr) { return release(ptr, 0); }
int fakeHostAlloc(void **ptr, size_t bytes, unsigned flags) {
  if (flags != 1) return fail(FAKE_INVALID_VALUE); /* the spec's malloc_host flag (portable) */
  return allocate(ptr, bytes, FAKE_HOST);
}
int fakeFreeHost(void *ptr) { return release(ptr, 1); }
int fakeMallocManaged(void **ptr, size_t bytes, unsigned flags) {
  if (flags != 1) return fail(FAKE_INVALID_VALUE); /* attach global */
  return allocate(ptr, bytes, FAKE_MANAGED);
}

/* Under g_lock: whether a copy of kind between these memory types is what the runtime accepts. */
static int kind_ok(int kind, int dst, int src) {
  switch (kind) {
    case 1: return dst == FAKE_DEVICE && src != FAKE_DEVICE;
    case 2: return src == FAKE_DEVICE && dst != FAKE_DEVICE;
    case 3: return src == FAKE_DEVICE && dst == FAKE_DEVICE;
    case 4: return 1;
    default: return 0;
  }
}

int fakeMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream) {
  (void)stream;
  pthread_mutex_lock(&g_lock);
  g_stats.memcpy_calls++;
  int rc = injected("memcpy");
  int dst_over, src_over;
  const int dst_type = type_of(dst, bytes, &dst_over), src_type = type_of(src, bytes, &src_over);
  if (rc == 0 && (dst_over || src_over || !kind_ok(kind, dst_type, src_type))) rc = FAKE_INVALID_VALUE;
  if (rc == 0) {
    if (kind >= 1 && kind <= 4) g_stats.kinds[kind]++;
    memmove(dst, src, bytes);
  } else {
    fail(rc);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, int kind,
                      void *stream) {
  (void)stream;
  pthread_mutex_lock(&g_lock);
  g_stats.memcpy_2d_calls++;
  int rc = injected("memcpy");
  if (width > dpitch || width > spitch) rc = FAKE_INVALID_VALUE;
  for (size_t row = 0; rc == 0 && row < height; row++) {
    int dst_over, src_over;
    char *to = (char *)dst + row * dpitch;
    const char *from = (const char *)src + row * spitch;
    const int dst_type = type_of(to, width, &dst_over), src_type = type_of(from, width, &src_over);
    if (dst_over || src_over || !kind_ok(kind, dst_type, src_type)) rc = FAKE_INVALID_VALUE;
  }
  if (rc == 0) {
    if (kind >= 1 && kind <= 4) g_stats.kinds[kind]++;
    for (size_t row = 0; row < height; row++) memmove((char *)dst + row * dpitch, (const char *)src + row * spitch, width);
  } else {
    fail(rc);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeEventCreateWithFlags(void **out, unsigned flags) {
  if (flags != 2) return fail(FAKE_INVALID_VALUE); /* dlmap asks for events without timing */
  event *e = (event *)calloc(1, sizeof *e);
  if (e == NULL) return fail(FAKE_OUT_OF_MEMORY);
  e->magic = FAKE_EVENT_MAGIC;
  e->device = t_device;
  pthread_mutex_lock(&g_lock);
  g_stats.events_created++;
  pthread_mutex_unlock(&g_lock);
  *out = e;
  return 0;
}

int fakeEventRecord(void *handle, void *stream) {
  event *e = (event *)handle;
  pthread_mutex_lock(&g_lock);
  int rc = injected("record");
  /* A real runtime records only on a stream of the event's device, the current one. */
  if (rc == 0 && (e == NULL || e->magic != FAKE_EVENT_MAGIC || e->device != t_device)) rc = FAKE_INVALID_HANDLE;
  if (rc == 0) {
    e->recorded = 1;
    g_stats.events_recorded++;
    g_stats.last_record_stream = stream;
    g_stats.last_record_device = t_device;
  } else {
    fail(rc);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeEventDestroy(void *handle) {
  event *e = (event *)handle;
  if (e == NULL || e->magic != FAKE_EVENT_MAGIC) return fail(FAKE_INVALID_HANDLE);
  e->magic = 0;
  free(e);
  pthread_mutex_lock(&g_lock);
  g_stats.events_destroyed++;
  pthread_mutex_unlock(&g_lock);
  return 0;
}

int fakeStreamWaitEvent(void *stream, void *handle, unsigned flags) {
  const event *e = (const event *)handle;
  pthread_mutex_lock(&g_lock);
  int rc = injected("wait");
  if (rc == 0 && (flags != 0 || e == NULL || e->magic != FAKE_EVENT_MAGIC || !e->recorded)) rc = FAKE_INVALID_HANDLE;
  if (rc == 0) {
    g_stats.waits++;
    g_stats.last_wait_stream = stream;
  } else {
    fail(rc);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeStreamSynchronize(void *stream) {
  pthread_mutex_lock(&g_lock);
  g_stats.syncs++;
  g_stats.last_sync_stream = stream;
  pthread_mutex_unlock(&g_lock);
  return 0;
}

/* CUDA 11's cudaPointerAttributes: {int type; int device; void *devicePointer; void *hostPointer}. */
int fakePointerGetAttributes(void *attributes, const void *ptr) {
  struct {
    int type;
    int device;
    void *device_pointer;
    void *host_pointer;
  } out = {FAKE_UNREGISTERED, -2, NULL, (void *)(uintptr_t)ptr};
  pthread_mutex_lock(&g_lock);
  int overrun;
  const allocation *a = find(ptr, 0, &overrun);
  if (a != NULL) {
    out.type = a->type;
    out.device = a->device;
    out.device_pointer = (void *)(uintptr_t)ptr;
    out.host_pointer = a->type == FAKE_DEVICE ? NULL : (void *)(uintptr_t)ptr;
  }
  pthread_mutex_unlock(&g_lock);
  memcpy(attributes, &out, sizeof out);
  return 0;
}
