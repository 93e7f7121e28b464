/* dlmap GPU tests — the fake vendor runtime behind tests/gpu/fake_cuda.yaml: memory that the fake calls "device",
 * "pinned" or "managed", with the checks a real runtime makes, a count of every call, per-thread contexts and devices,
 * and streams whose work can be deferred and run in a scheduler's order. Device memory is sealed (issue 63): the
 * address handed out is a PROT_NONE view of a memfd, so a host load or store through it faults as it would on a GPU;
 * the fake's own copies, memsets and kernels reach the bytes through a second, read-write view of the same file. */
#define _GNU_SOURCE /* memfd_create */
#include "tests/gpu/fake_gpu_runtime.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_ALLOCATIONS 4096
#define FAKE_MAX_STREAMS 256
#define FAKE_MAX_CONTEXTS 16 /* non-primary contexts (fake_gpu_context_create) */
#define FAKE_EVENT_MAGIC 0x45564e54
/* allocate()'s stream for cudaMallocAsync on the null stream (its NULL means the synchronous cudaMalloc) */
#define FAKE_NULL_STREAM ((void *)(uintptr_t)-2)
#define FAKE_STREAM_MAGIC 0x5354524d

typedef struct allocation {
  char *base;  /* the address handed out: sealed (PROT_NONE) for device memory */
  char *view;  /* where the fake itself reads and writes the bytes: base, or device memory's read-write view */
  size_t size;
  size_t mapped; /* device memory: the bytes each view maps (whole pages); 0 for malloc'd pinned and managed memory */
  int type;   /* FAKE_DEVICE, FAKE_HOST (pinned) or FAKE_MANAGED */
  int device;
  int freeing;  /* a stream-ordered free of it is queued */
  int freed;    /* that free ran: the bytes are poisoned and kept mapped so that late accesses are seen (retired) */
  int pooled;   /* from a pool (malloc_async, malloc_from_pool): given back by free_async, or by free */
  uint64_t retired_at;
} allocation;

/* One queued op of a stream. */
enum { OP_COPY, OP_KERNEL, OP_WAIT, OP_SET, OP_FREE };
typedef struct op {
  int kind;
  char *dst; /* OP_COPY: height rows of width bytes, pitches apart; OP_SET: width bytes set to value; OP_FREE: the
              * allocation a stream-ordered free gives back */
  int value;
  const char *src;
  size_t width, height, dpitch, spitch;
  void (*fn)(void *); /* OP_KERNEL */
  unsigned char arg[64];
  int wait_stream;    /* OP_WAIT: runs once that stream has run wait_count ops */
  uint64_t wait_count;
} op;

/* A stream: a default stream of a device (handle 1: legacy, also the null stream 0; 2: per-thread) or an explicit
 * one (device -1). Queued ops run in order; `done` counts the ops run so far. */
typedef struct stream {
  int used;
  int device;
  uintptr_t handle;
  op *ops;
  size_t head, count, cap;
  uint64_t enqueued, done;
} stream;

typedef struct event {
  int magic;
  int device;
  int recorded;
  int stream;      /* what the last record captured: that stream's first `count` ops */
  uint64_t count;
} event;

typedef struct explicit_stream {
  int magic;
} explicit_stream;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static allocation g_allocations[FAKE_MAX_ALLOCATIONS];
static stream g_streams[FAKE_MAX_STREAMS];
static fake_gpu_stats g_stats;
static int g_device_count = 2;
/* Armed failures (fake_gpu_fail_later): up to FAKE_MAX_ARMED at once, on different ops or the same one. */
#define FAKE_MAX_ARMED 4
typedef struct armed_failure {
  char op[32];  /* "" : free slot */
  int code;
  int skip;     /* calls of op that still succeed before this failure */
} armed_failure;
static armed_failure g_armed[FAKE_MAX_ARMED];
static int g_own_device_only;
static int g_deferred;
static uint32_t g_random = 1;
static int g_unmapped_pinned;
static int g_hip_attributes; /* fake_gpu_hip_attributes */
static int g_zero_devices_succeed; /* fake_gpu_zero_devices_succeed */
static void *g_created[FAKE_MAX_STREAMS]; /* live handles of fake_gpu_stream_create */
static int g_context_devices[FAKE_MAX_CONTEXTS], g_contexts; /* devices of the non-primary contexts made so far */
/* A context handle: (device + 1) for a device's primary context, FAKE_MAX_DEVICES + 1 + i for non-primary context i;
 * 0 (NULL): none. The runtime's per-thread device is separate: set_device sets it, the driver's cuCtxSetCurrent does
 * not, and cudaGetDevice answers the current context's device when there is one, else it. */
static _Thread_local uintptr_t t_context;
static _Thread_local int t_device;
/* The runtime's last error, per thread as CUDA keeps it: each failed runtime call overwrites it, it stays until
 * get_last_error reads it, and the driver's entry points never touch it. */
static _Thread_local int t_last_error;

/* The spec's default-stream handles of the platform this fake serves (fake_cuda.yaml overrides cuda's runtime), from
 * the generated table the library under test is built with, so the fake accepts exactly the documented constants. */
typedef struct default_stream {
  const char *platform, *meaning;
  uintptr_t handle;
} default_stream;

static const default_stream kDefaultStreams[] = {
#define DLMAP_RUNTIME_STREAM(PLATFORM, MEANING, handle, ...) {#PLATFORM, #MEANING, (uintptr_t)(handle)},
#include "src/generated/runtime_streams.inc"
#undef DLMAP_RUNTIME_STREAM
};
#define FAKE_PLATFORM "CUDA"

/* Every entry point's calls since the last reset (atomic: some entry points take no lock). */
static int g_calls;
static void count_call(void) { __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED); }

/* The stream handles entry points were given since the last reset, with how many calls gave each. */
#define FAKE_MAX_SEEN 64
static struct {
  uintptr_t handle;
  int calls;
} g_seen[FAKE_MAX_SEEN];

/* Regions whose pointer attributes the test chose (fake_gpu_report): they win over the allocations. */
#define FAKE_MAX_REPORTS 16
static struct {
  const char *base;
  size_t size;
  int type, device;
} g_reports[FAKE_MAX_REPORTS];

/* ---- helpers (under g_lock unless said) ------------------------------------------------------------------------- */

/* The index of the test's report holding p, -1 when none does. */
static int report_of(const void *p) {
  const char *c = (const char *)p;
  for (int i = 0; i < FAKE_MAX_REPORTS; i++) {
    if (g_reports[i].base != NULL && c >= g_reports[i].base && c < g_reports[i].base + g_reports[i].size) return i;
  }
  return -1;
}

/* The code of the armed failure this call of op takes (the first armed with no calls left to skip), else 0; every
 * other failure armed on op counts the call. */
static int injected(const char *op) {
  int code = 0;
  for (int i = 0; i < FAKE_MAX_ARMED; i++) {
    armed_failure *a = &g_armed[i];
    if (a->op[0] == '\0' || strcmp(a->op, op) != 0) continue;
    if (a->skip > 0) {
      a->skip--;
    } else if (code == 0) {
      a->op[0] = '\0';
      code = a->code;
    }
  }
  return code;
}

static int fail(int code) {
  t_last_error = code;
  return code;
}

/* The device of a valid context handle. */
static int context_device(uintptr_t context) {
  return context <= FAKE_MAX_DEVICES ? (int)context - 1 : g_context_devices[context - FAKE_MAX_DEVICES - 1];
}

static int valid_context(uintptr_t context) {
  return context <= FAKE_MAX_DEVICES || context - FAKE_MAX_DEVICES - 1 < (uintptr_t)g_contexts;
}

/* The thread's context, made as the runtime makes it for a call that needs one: the primary context of the thread's
 * runtime device. */
static void need_context(void) {
  if (t_context != 0) return;
  t_context = (uintptr_t)t_device + 1;
  g_stats.contexts_created[t_device]++;
}

/* What cudaGetDevice answers: the current context's device, else the runtime's per-thread device. */
static int current_device(void) { return t_context != 0 ? context_device(t_context) : t_device; }

/* The spec's handle for a default-stream meaning of this fake's platform (0 when it lists none). */
static uintptr_t spec_stream(const char *meaning) {
  for (size_t i = 0; i < sizeof kDefaultStreams / sizeof kDefaultStreams[0]; i++) {
    if (strcmp(kDefaultStreams[i].platform, FAKE_PLATFORM) == 0 && strcmp(kDefaultStreams[i].meaning, meaning) == 0) {
      return kDefaultStreams[i].handle;
    }
  }
  return 0;
}

/* Whether a handle is one of the spec's default-stream handles of this platform. */
static int documented_stream(uintptr_t handle) {
  for (size_t i = 0; i < sizeof kDefaultStreams / sizeof kDefaultStreams[0]; i++) {
    if (strcmp(kDefaultStreams[i].platform, FAKE_PLATFORM) == 0 && kDefaultStreams[i].handle == handle) return 1;
  }
  return 0;
}

static int created_stream(uintptr_t handle) {
  for (int i = 0; i < FAKE_MAX_STREAMS; i++) {
    if (g_created[i] != NULL && (uintptr_t)g_created[i] == handle) return 1;
  }
  return 0;
}

static uint32_t next_random(void) {
  g_random ^= g_random << 13;
  g_random ^= g_random >> 17;
  g_random ^= g_random << 5;
  return g_random;
}

/* The allocation containing [p, p + n), NULL when p is in none; *overrun when p is in one but the range leaves it. */
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

/* Where the fake itself reaches p: the read-write view of the device allocation holding it, else p (pinned, managed
 * and host memory are the host's). */
static char *view_of(const void *p) {
  int overrun;
  const allocation *a = find(p, 0, &overrun);
  return a != NULL ? a->view + ((const char *)p - a->base) : (char *)(uintptr_t)p;
}

static int type_of(const void *p, size_t n, int *overrun) {
  const allocation *a = find(p, n, overrun);
  return a != NULL ? a->type : FAKE_UNREGISTERED;
}

/* The stream a handle names for the calling thread: NULL (the null stream, the legacy default one) and the spec's
 * default-stream handles are the current device's; a handle of fake_gpu_stream_create is that explicit stream; any
 * other value is no stream (a real runtime would dereference it): -FAKE_INVALID_HANDLE. -FAKE_OUT_OF_MEMORY when the
 * table is full. */
static int resolve(void *handle) {
  uintptr_t h = (uintptr_t)handle;
  for (int i = 0; i < FAKE_MAX_SEEN; i++) { /* remembered before anything is checked: the test asks what was sent */
    if (g_seen[i].calls == 0 || g_seen[i].handle == h) {
      g_seen[i].handle = h;
      g_seen[i].calls++;
      break;
    }
  }
  int device = -1;
  if (h == 0 || documented_stream(h)) {
    need_context();
    device = current_device();
    if (h == 0) h = spec_stream("LEGACY_DEFAULT");
  } else if (!created_stream(h)) {
    g_stats.invalid_streams++;
    return -FAKE_INVALID_HANDLE;
  }
  int free_slot = -1;
  for (int i = 0; i < FAKE_MAX_STREAMS; i++) {
    if (g_streams[i].used && g_streams[i].handle == h && g_streams[i].device == device) return i;
    if (!g_streams[i].used && free_slot < 0) free_slot = i;
  }
  if (free_slot < 0) return -FAKE_OUT_OF_MEMORY;
  stream *s = &g_streams[free_slot];
  memset(s, 0, sizeof *s);
  s->used = 1;
  s->device = device;
  s->handle = h;
  return free_slot;
}

/* Remembers a handle an entry point was given without resolving it (fakeStreamWaitEvent checks the event first). */
static void note_stream(void *handle) {
  for (int i = 0; i < FAKE_MAX_SEEN; i++) {
    if (g_seen[i].calls == 0 || g_seen[i].handle == (uintptr_t)handle) {
      g_seen[i].handle = (uintptr_t)handle;
      g_seen[i].calls++;
      return;
    }
  }
}

static int push(int index, const op *o) {
  stream *s = &g_streams[index];
  if (s->count == s->cap) {
    const size_t cap = s->cap ? 2 * s->cap : 64;
    op *grown = (op *)malloc(cap * sizeof *grown);
    if (grown == NULL) return FAKE_OUT_OF_MEMORY;
    for (size_t i = 0; i < s->count; i++) grown[i] = s->ops[(s->head + i) % (s->cap ? s->cap : 1)];
    free(s->ops);
    s->ops = grown;
    s->head = 0;
    s->cap = cap;
  }
  s->ops[(s->head + s->count) % s->cap] = *o;
  s->count++;
  s->enqueued++;
  return 0;
}

/* Whether a queued copy or memset reaches memory a stream-ordered free already took. */
static int touches_freed(const op *o) {
  int overrun;
  for (size_t row = 0; row < (o->kind == OP_COPY ? o->height : 1); row++) {
    const allocation *d = find(o->dst + row * o->dpitch, 0, &overrun);
    const allocation *c = o->kind == OP_COPY ? find(o->src + row * o->spitch, 0, &overrun) : NULL;
    if ((d != NULL && d->freed) || (c != NULL && c->freed)) return 1;
  }
  return 0;
}

/* The allocations stream-ordered frees took, kept mapped and poisoned so that late accesses are counted; beyond this
 * many the oldest is unmapped. */
#define FAKE_RETIRED_KEPT 64
static uint64_t g_retirements;

static void unmap(allocation *a);

/* Runs a stream-ordered free: the memory is poisoned and retired (no longer live, no longer the runtime's to hand
 * out by this address until it is unmapped). */
static void retire(const char *base) {
  allocation *oldest = NULL;
  int retired = 0;
  for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
    allocation *a = &g_allocations[i];
    if (a->base == base && !a->freed) {
      memset(a->view, 0xDD, a->size);
      a->freed = 1;
      a->retired_at = ++g_retirements;
      g_stats.pool_frees_run++;
      g_stats.frees++;
      g_stats.live--;
    }
    if (a->base != NULL && a->freed) {
      retired++;
      if (oldest == NULL || a->retired_at < oldest->retired_at) oldest = a;
    }
  }
  if (retired > FAKE_RETIRED_KEPT) {
    unmap(oldest);
    memset(oldest, 0, sizeof *oldest);
  }
}

static int ready(const stream *s) {
  if (!s->used || s->count == 0) return 0;
  const op *o = &s->ops[s->head];
  return o->kind != OP_WAIT || g_streams[o->wait_stream].done >= o->wait_count;
}

static void execute(stream *s) {
  const op *o = &s->ops[s->head];
  if ((o->kind == OP_COPY || o->kind == OP_SET) && touches_freed(o)) {
    g_stats.freed_accesses++; /* the finding; on a GPU it would read or write memory the pool handed out again */
  } else if (o->kind == OP_COPY) { /* each row through the views of the allocations it was checked against */
    for (size_t row = 0; row < o->height; row++) {
      memmove(view_of(o->dst + row * o->dpitch), view_of(o->src + row * o->spitch), o->width);
    }
  } else if (o->kind == OP_SET) {
    memset(view_of(o->dst), o->value, o->width);
  } else if (o->kind == OP_FREE) {
    retire(o->dst);
  } else if (o->kind == OP_KERNEL) {
    op copy = *o; /* the kernel may not touch the queue, but its argument must outlive the slot */
    copy.fn(copy.arg);
  }
  s->head = (s->head + 1) % s->cap;
  s->count--;
  s->done++;
}

static int pending_ops(void) {
  int n = 0;
  for (int i = 0; i < FAKE_MAX_STREAMS; i++) n += g_streams[i].used ? (int)g_streams[i].count : 0;
  return n;
}

/* Runs queued ops until stream `target` is empty (-1: every stream), picking among the streams that may run: the
 * first in immediate mode, a random one in deferred mode. 0, or -1 when nothing may run but work is left. */
static int run(int target) {
  for (;;) {
    if (target >= 0 ? g_streams[target].count == 0 : pending_ops() == 0) return 0;
    int candidates[FAKE_MAX_STREAMS], n = 0;
    for (int i = 0; i < FAKE_MAX_STREAMS; i++) {
      if (ready(&g_streams[i])) candidates[n++] = i;
    }
    if (n == 0) return -1;
    const int pick = g_deferred ? candidates[next_random() % (uint32_t)n] : candidates[0];
    execute(&g_streams[pick]);
  }
}

/* Queues an op on the stream a handle names; in immediate mode it runs now. */
static int enqueue(void *handle, const op *o) {
  const int index = resolve(handle);
  if (index < 0) return -index;
  int rc = push(index, o);
  if (rc == 0 && !g_deferred && run(-1) != 0) rc = FAKE_INVALID_HANDLE;
  return rc;
}

/* Whether queued work reads or writes [base, base + size). */
static int in_flight(const char *base, size_t size) {
  for (int i = 0; i < FAKE_MAX_STREAMS; i++) {
    const stream *s = &g_streams[i];
    for (size_t k = 0; s->used && k < s->count; k++) {
      const op *o = &s->ops[(s->head + k) % s->cap];
      if (o->kind == OP_SET && o->dst < base + size && o->dst + o->width > base) return 1;
      if (o->kind != OP_COPY || o->height == 0) continue;
      const size_t span_d = (o->height - 1) * o->dpitch + o->width, span_s = (o->height - 1) * o->spitch + o->width;
      if ((o->dst < base + size && o->dst + span_d > base) || (o->src < base + size && o->src + span_s > base)) return 1;
    }
  }
  return 0;
}

/* ---- the test's controls ------------------------------------------------------------------------------------------ */

void fake_gpu_reset(int device_count) {
  pthread_mutex_lock(&g_lock);
  run(-1);
  const int live = g_stats.live;
  memset(&g_stats, 0, sizeof g_stats);
  g_stats.live = live;
  g_stats.last_wait_device = g_stats.last_record_device = g_stats.last_memcpy_device = -1;
  g_device_count = device_count;
  t_last_error = 0; /* the calling thread's */
  memset(g_armed, 0, sizeof g_armed);
  g_own_device_only = 0;
  g_unmapped_pinned = 0;
  g_hip_attributes = 0;
  g_deferred = 0;
  memset(g_seen, 0, sizeof g_seen);
  memset(g_reports, 0, sizeof g_reports);
  __atomic_store_n(&g_calls, 0, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&g_lock);
  fake_gpu_kernels_reset();
}

int fake_gpu_calls(void) { return __atomic_load_n(&g_calls, __ATOMIC_RELAXED); }

int fake_gpu_stream_calls(const void *handle) {
  pthread_mutex_lock(&g_lock);
  int calls = 0;
  for (int i = 0; i < FAKE_MAX_SEEN; i++) {
    if (g_seen[i].calls > 0 && g_seen[i].handle == (uintptr_t)handle) calls = g_seen[i].calls;
  }
  pthread_mutex_unlock(&g_lock);
  return calls;
}

int fake_gpu_report(const void *base, size_t size, int type, int device) {
  pthread_mutex_lock(&g_lock);
  int rc = FAKE_OUT_OF_MEMORY;
  for (int i = 0; i < FAKE_MAX_REPORTS && rc != 0; i++) {
    if (g_reports[i].base != NULL) continue;
    g_reports[i].base = (const char *)base;
    g_reports[i].size = size;
    g_reports[i].type = type;
    g_reports[i].device = device;
    rc = 0;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

const fake_gpu_stats *fake_gpu_get_stats(void) { return &g_stats; }

int fake_gpu_memory_type(const void *p, size_t n, int *device) {
  pthread_mutex_lock(&g_lock);
  int overrun;
  const allocation *a = find(p, n, &overrun);
  const int type = a == NULL ? FAKE_UNREGISTERED : overrun ? -1 : a->type;
  if (device != NULL) *device = a != NULL ? a->device : -1;
  pthread_mutex_unlock(&g_lock);
  return type;
}

void *fake_gpu_kernel_view(const void *p, size_t n) {
  pthread_mutex_lock(&g_lock);
  int overrun;
  const allocation *a = find(p, n, &overrun);
  void *view = a == NULL || overrun ? NULL : a->view + ((const char *)p - a->base);
  pthread_mutex_unlock(&g_lock);
  return view;
}

int fake_gpu_peek(void *dst, const void *src, size_t n) {
  void *from = fake_gpu_kernel_view(src, n);
  if (from == NULL) return FAKE_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  run(-1); /* what queued work writes is there first, as after a device synchronisation */
  memcpy(dst, from, n);
  pthread_mutex_unlock(&g_lock);
  return 0;
}

int fake_gpu_poke(void *dst, const void *src, size_t n) {
  void *to = fake_gpu_kernel_view(dst, n);
  if (to == NULL) return FAKE_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  run(-1);
  memcpy(to, src, n);
  pthread_mutex_unlock(&g_lock);
  return 0;
}

void fake_gpu_fail_next(const char *op, int code) { fake_gpu_fail_later(op, 0, code); }

void fake_gpu_fail_later(const char *op, int skip, int code) {
  pthread_mutex_lock(&g_lock);
  for (int i = 0; i < FAKE_MAX_ARMED; i++) {
    armed_failure *a = &g_armed[i];
    if (a->op[0] != '\0') continue;
    strncpy(a->op, op, sizeof a->op - 1);
    a->code = code;
    a->skip = skip;
    break;
  }
  pthread_mutex_unlock(&g_lock);
}

int fake_gpu_armed(void) {
  pthread_mutex_lock(&g_lock);
  int n = 0;
  for (int i = 0; i < FAKE_MAX_ARMED; i++) n += g_armed[i].op[0] != '\0';
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* injected(op) for entry points that do not hold g_lock. */
static int injected_unlocked(const char *op) {
  pthread_mutex_lock(&g_lock);
  const int rc = injected(op);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fake_gpu_current_device(void) { return current_device(); }

int fake_gpu_has_context(void) { return t_context != 0; }

void *fake_gpu_current_context(void) { return (void *)t_context; }

void *fake_gpu_context_create(int device) {
  pthread_mutex_lock(&g_lock);
  void *context = NULL;
  if (device >= 0 && device < FAKE_MAX_DEVICES && g_contexts < FAKE_MAX_CONTEXTS) {
    g_context_devices[g_contexts] = device;
    context = (void *)(uintptr_t)(FAKE_MAX_DEVICES + 1 + g_contexts++);
  }
  pthread_mutex_unlock(&g_lock);
  return context;
}

void fake_gpu_set_last_error(int code) { t_last_error = code; }

int fake_gpu_peek_last_error(void) { return t_last_error; }

void fake_gpu_zero_devices_succeed(int on) {
  pthread_mutex_lock(&g_lock);
  g_zero_devices_succeed = on;
  pthread_mutex_unlock(&g_lock);
}

void fake_gpu_hip_attributes(int on) {
  pthread_mutex_lock(&g_lock);
  g_hip_attributes = on;
  pthread_mutex_unlock(&g_lock);
}

void fake_gpu_pinned_unmapped(int on) {
  pthread_mutex_lock(&g_lock);
  g_unmapped_pinned = on;
  pthread_mutex_unlock(&g_lock);
}

void fake_gpu_attributes_on_own_device_only(int on) {
  pthread_mutex_lock(&g_lock);
  g_own_device_only = on;
  pthread_mutex_unlock(&g_lock);
}

void fake_gpu_set_deferred(int on, unsigned seed) {
  pthread_mutex_lock(&g_lock);
  if (!on) run(-1);
  g_deferred = on;
  g_random = seed != 0 ? seed : 1;
  pthread_mutex_unlock(&g_lock);
}

int fake_gpu_launch(void *stream_handle, void (*fn)(void *), const void *arg, size_t arg_size) {
  if (fn == NULL || arg_size > sizeof(((op *)0)->arg)) return FAKE_INVALID_VALUE;
  op o;
  memset(&o, 0, sizeof o);
  o.kind = OP_KERNEL;
  o.fn = fn;
  memcpy(o.arg, arg, arg_size);
  pthread_mutex_lock(&g_lock);
  need_context();
  const int rc = enqueue(stream_handle, &o);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

void *fake_gpu_stream_create(void) {
  explicit_stream *s = (explicit_stream *)calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->magic = FAKE_STREAM_MAGIC;
  pthread_mutex_lock(&g_lock);
  int slot = 0;
  while (slot < FAKE_MAX_STREAMS && g_created[slot] != NULL) slot++;
  if (slot < FAKE_MAX_STREAMS) g_created[slot] = s;
  pthread_mutex_unlock(&g_lock);
  if (slot == FAKE_MAX_STREAMS) {
    free(s);
    return NULL;
  }
  return s;
}

void fake_gpu_stream_destroy(void *handle) {
  pthread_mutex_lock(&g_lock);
  for (int i = 0; i < FAKE_MAX_STREAMS; i++) {
    stream *s = &g_streams[i];
    if (!s->used || s->handle != (uintptr_t)handle || s->device != -1) continue;
    run(i); /* a destroyed stream's work still completes */
    free(s->ops);
    memset(s, 0, sizeof *s);
  }
  for (int i = 0; i < FAKE_MAX_STREAMS; i++) {
    if (g_created[i] == handle) g_created[i] = NULL;
  }
  pthread_mutex_unlock(&g_lock);
  free(handle);
}

int fake_gpu_synchronize_all(void) {
  pthread_mutex_lock(&g_lock);
  const int rc = run(-1);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fake_gpu_freed_accesses(void) {
  pthread_mutex_lock(&g_lock);
  const int n = g_stats.freed_accesses;
  pthread_mutex_unlock(&g_lock);
  return n;
}

int fake_gpu_pending(void) {
  pthread_mutex_lock(&g_lock);
  int n = 0;
  for (int i = 0; i < FAKE_MAX_STREAMS; i++) {
    const stream *s = &g_streams[i];
    for (size_t k = 0; s->used && k < s->count; k++) n += s->ops[(s->head + k) % s->cap].kind != OP_FREE;
  }
  pthread_mutex_unlock(&g_lock);
  return n;
}

void *fake_gpu_last_memcpy_stream(void) {
  pthread_mutex_lock(&g_lock);
  void *stream_handle = g_stats.last_memcpy_stream;
  pthread_mutex_unlock(&g_lock);
  return stream_handle;
}

int fake_gpu_memset_calls(void) {
  pthread_mutex_lock(&g_lock);
  const int n = g_stats.memset_calls;
  pthread_mutex_unlock(&g_lock);
  return n;
}

int fake_gpu_host_to_device_copies(void) {
  pthread_mutex_lock(&g_lock);
  const int n = g_stats.kinds[1];
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* ---- the runtime's entry points ------------------------------------------------------------------------------------ */

int fakeGetDeviceCount(int *count) {
  count_call();
  if (g_device_count <= 0 && g_zero_devices_succeed) {
    *count = 0;
    return 0;
  }
  if (g_device_count <= 0) return fail(FAKE_NO_DEVICE);
  *count = g_device_count;
  return 0;
}

const char *fakeGetErrorString(int error) {
  count_call();
  switch (error) {
    case 0: return "no error";
    case FAKE_INVALID_VALUE: return "fake error 1: invalid value";
    case FAKE_OUT_OF_MEMORY: return "fake error 2: out of memory";
    case FAKE_INSUFFICIENT_DRIVER: return "fake error 35: the driver is older than this runtime";
    case FAKE_NO_DEVICE: return "fake error 100: no device";
    case FAKE_INVALID_DEVICE: return "fake error 101: invalid device ordinal";
    case FAKE_INVALID_HANDLE: return "fake error 400: invalid resource handle";
    case FAKE_ILLEGAL_ADDRESS: return "fake error 700: an illegal memory access was encountered";
    case FAKE_NOT_SUPPORTED: return "fake error 801: operation not supported";
    case FAKE_NO_TEXT: return NULL; /* a runtime with no text for a code (HIP's hipGetErrorString may answer NULL) */
    default: return "fake error: unknown";
  }
}

int fakeGetLastError(void) {
  count_call();
  const int error = t_last_error;
  t_last_error = 0;
  return error;
}

int fakeRuntimeGetVersion(int *version) {
  count_call();
  const int rc = injected_unlocked("runtime_version");
  if (rc != 0) return fail(rc);
  *version = 12040;
  return 0;
}

int fakeGetDevice(int *device) {
  count_call();
  const int rc = injected_unlocked("get_device");
  if (rc != 0) return fail(rc);
  *device = current_device();
  return 0;
}

/* As cudaSetDevice since CUDA 12: sets the thread's runtime device, initialises its primary context and makes that
 * current. */
int fakeSetDevice(int device) {
  count_call();
  pthread_mutex_lock(&g_lock);
  g_stats.set_device_calls++;
  const int injected_rc = injected("set_device");
  const int rc = injected_rc != 0 ? fail(injected_rc) : device < 0 || device >= g_device_count || device >= FAKE_MAX_DEVICES ? fail(FAKE_INVALID_DEVICE) : 0;
  if (rc == 0) {
    g_stats.contexts_created[device]++;
    t_device = device;
    t_context = (uintptr_t)device + 1;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* The driver's cuCtxGetCurrent / cuCtxSetCurrent (NULL: none). Neither touches the runtime's per-thread device. */
int fakeCtxGetCurrent(void **context) {
  count_call();
  const int rc = injected_unlocked("get_current");
  if (rc != 0) return rc; /* a driver call: the runtime's last error stays */
  *context = (void *)t_context;
  return 0;
}

int fakeCtxSetCurrent(void *context) {
  count_call();
  pthread_mutex_lock(&g_lock);
  const int rc = injected("set_current");
  const int ok = valid_context((uintptr_t)context);
  pthread_mutex_unlock(&g_lock);
  if (rc != 0) return rc;
  if (!ok) return FAKE_INVALID_CONTEXT;
  t_context = (uintptr_t)context;
  return 0;
}

/* The driver's cuDevicePrimaryCtxRetain: the device's primary context (initialised if it was not), not made current. */
int fakeDevicePrimaryCtxRetain(void **context, int device) {
  count_call();
  pthread_mutex_lock(&g_lock);
  int rc = injected("retain");
  if (rc == 0 && (device < 0 || device >= g_device_count || device >= FAKE_MAX_DEVICES)) rc = FAKE_INVALID_DEVICE;
  if (rc == 0) {
    g_stats.contexts_created[device]++;
    *context = (void *)((uintptr_t)device + 1);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* Device memory: one memfd mapped twice, the address handed out PROT_NONE and the fake's view read-write (the
 * descriptor is closed at once: the mappings keep the file). 0, or -1 without memory or descriptors.
 * DLMAP_FAKE_GPU_UNSEALED=1 leaves the address handed out readable and writable, as the fake was before issue 63: only
 * planted_host_read_test sets it, to show what a host read of device memory did then (nothing visible). */
static int map_sealed(size_t bytes, char **sealed, char **view, size_t *mapped) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  *mapped = (bytes + page - 1) / page * page;
  if (*mapped == 0) *mapped = page;
  const int fd = memfd_create("fake-gpu-device-memory", MFD_CLOEXEC);
  if (fd < 0) return -1;
  void *s = MAP_FAILED, *v = MAP_FAILED;
  if (ftruncate(fd, (off_t)*mapped) == 0) {
    const char *unsealed = getenv("DLMAP_FAKE_GPU_UNSEALED");
    const int prot = unsealed != NULL && strcmp(unsealed, "1") == 0 ? PROT_READ | PROT_WRITE : PROT_NONE;
    s = mmap(NULL, *mapped, prot, MAP_SHARED, fd, 0);
    v = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);
  if (s == MAP_FAILED || v == MAP_FAILED) {
    if (s != MAP_FAILED) munmap(s, *mapped);
    if (v != MAP_FAILED) munmap(v, *mapped);
    return -1;
  }
  *sealed = (char *)s;
  *view = (char *)v;
  return 0;
}

static void unmap(allocation *a) {
  if (a->mapped == 0) {
    free(a->base);
    return;
  }
  munmap(a->base, a->mapped);
  munmap(a->view, a->mapped);
}

/* A call that synchronises the whole device on a real runtime (under g_lock). */
static void note_device_sync(const char *what) {
  g_stats.device_syncs++;
  g_stats.last_device_sync = what;
}

static int allocate(void **ptr, size_t bytes, int type, void *stream_handle) {
  pthread_mutex_lock(&g_lock);
  need_context();
  int rc = injected("malloc");
  if (rc == 0 && stream_handle != NULL) {
    const int index = resolve(stream_handle == FAKE_NULL_STREAM ? NULL : stream_handle);
    if (index < 0) rc = -index;
  }
  if (stream_handle == NULL) note_device_sync(type == FAKE_DEVICE ? "malloc" : type == FAKE_HOST ? "malloc_host"
                                                                                                 : "malloc_managed");
  if (rc != 0) {
    pthread_mutex_unlock(&g_lock);
    return fail(rc);
  }
  rc = FAKE_OUT_OF_MEMORY;
  for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
    if (g_allocations[i].base != NULL) continue;
    char *base, *view;
    size_t mapped = 0;
    if (type == FAKE_DEVICE) {
      if (map_sealed(bytes, &base, &view, &mapped) != 0) break;
    } else {
      base = view = (char *)malloc(bytes ? bytes : 1);
      if (base == NULL) break;
    }
    memset(view, 0xCD, bytes); /* fresh device memory is not zero */
    g_allocations[i] = (allocation){base, view, bytes, mapped, type, current_device(), 0, 0, stream_handle != NULL, 0};
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
  need_context();
  int rc = FAKE_INVALID_VALUE;
  note_device_sync(pinned ? "free_host" : "free");
  for (int i = 0; i < FAKE_MAX_ALLOCATIONS; i++) {
    allocation *a = &g_allocations[i];
    /* pool memory of any kind goes back by free (CUDA's cudaFree), never by the host free */
    if (a->base != (char *)ptr || (a->pooled ? pinned : (a->type == FAKE_HOST) != pinned)) continue;
    if (a->freeing || a->freed) {
      g_stats.double_frees++;
      break;
    }
    if (in_flight(a->base, a->size ? a->size : 1)) g_stats.freed_in_flight++;
    run(-1); /* so that the queued work does not touch freed memory: the count above is the finding */
    unmap(a);
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

int fakeMalloc(void **ptr, size_t bytes) {
  count_call();
  return allocate(ptr, bytes, FAKE_DEVICE, NULL);
}

/* cudaMallocAsync: device memory from the pool, usable by work queued on the stream from now on. A fresh mapping each
 * time: reuse is modelled by what retire() keeps out of reach until the free's stream position has run. */
int fakeMallocAsync(void **ptr, size_t bytes, void *stream_handle) {
  count_call();
  const int rc = allocate(ptr, bytes, FAKE_DEVICE, stream_handle != NULL ? stream_handle : FAKE_NULL_STREAM);
  if (rc == 0) {
    pthread_mutex_lock(&g_lock);
    g_stats.pool_allocations++;
    pthread_mutex_unlock(&g_lock);
  }
  return rc;
}

/* cudaFreeAsync: queued on the stream; the memory is freed (poisoned, retired) when the stream reaches it. */
int fakeFreeAsync(void *ptr, void *stream_handle) {
  count_call();
  if (ptr == NULL) return 0;
  pthread_mutex_lock(&g_lock);
  need_context();
  int rc = injected("free_async"), overrun;
  allocation *a = rc == 0 ? find(ptr, 0, &overrun) : NULL;
  if (rc == 0 && (a == NULL || a->base != (char *)ptr || !a->pooled)) rc = FAKE_INVALID_VALUE;
  if (rc == 0 && (a->freeing || a->freed)) {
    g_stats.double_frees++;
    rc = FAKE_INVALID_VALUE;
  }
  if (rc == 0) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_FREE;
    o.dst = a->base;
    a->freeing = 1;
    rc = enqueue(stream_handle, &o);
    if (rc == 0) {
      g_stats.pool_frees_queued++;
      g_stats.last_free_async_stream = stream_handle;
    } else {
      a->freeing = 0;
    }
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}
/* cudaMemGetDefaultMemPool: the fake's default pools of pinned host memory (location host 2, allocation pinned 1) and
 * managed memory (location none 0, allocation managed 2); a location is {int type; int id}. */
static char g_pinned_pool, g_managed_pool;
static int g_pinned_pool_devices;
int fake_gpu_pinned_pool_devices(void) {
  pthread_mutex_lock(&g_lock);
  const int devices = g_pinned_pool_devices;
  pthread_mutex_unlock(&g_lock);
  return devices;
}
int fakeMemGetDefaultMemPool(void **pool, const void *location, int allocation_type) {
  count_call();
  pthread_mutex_lock(&g_lock);
  int rc = injected("get_default");
  int where[2];
  memcpy(where, location, sizeof where);
  if (rc == 0 && where[0] == 2 && allocation_type == 1) {
    *pool = &g_pinned_pool;
  } else if (rc == 0 && where[0] == 0 && allocation_type == 2) {
    *pool = &g_managed_pool;
  } else if (rc == 0) {
    rc = FAKE_INVALID_VALUE;
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* cudaMemPoolSetAccess: descriptors {location {type, id}; flags}; the pinned pool's memory is reachable from a device
 * only once it was granted (read-write 3) for it. */
int fakeMemPoolSetAccess(void *pool, const void *descriptors, size_t count) {
  count_call();
  pthread_mutex_lock(&g_lock);
  int rc = injected("set_access");
  for (size_t i = 0; rc == 0 && i < count; i++) {
    int d[3];
    memcpy(d, (const char *)descriptors + i * sizeof d, sizeof d);
    if (pool != &g_pinned_pool || d[0] != 1 || d[1] < 0 || d[1] >= g_device_count || d[2] != 3) {
      rc = FAKE_INVALID_VALUE;
    } else {
      g_pinned_pool_devices |= 1 << d[1];
    }
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* cudaMallocFromPoolAsync: pinned or managed memory from that default pool, on the stream. */
int fakeMallocFromPoolAsync(void **ptr, size_t bytes, void *pool, void *stream_handle) {
  count_call();
  const int type = pool == &g_pinned_pool ? FAKE_HOST : pool == &g_managed_pool ? FAKE_MANAGED : -1;
  if (type < 0) return fail(FAKE_INVALID_VALUE);
  const int rc = allocate(ptr, bytes, type, stream_handle != NULL ? stream_handle : FAKE_NULL_STREAM);
  if (rc == 0) {
    pthread_mutex_lock(&g_lock);
    g_stats.pool_allocations++;
    pthread_mutex_unlock(&g_lock);
  }
  return rc;
}

int fakeFree(void *ptr) {
  count_call();
  const int rc = injected_unlocked("free");
  if (rc != 0) return fail(rc); /* the memory stays allocated, as after a refused free */
  return release(ptr, 0);
}
int fakeHostAlloc(void **ptr, size_t bytes, unsigned flags) {
  count_call();
  if (flags != 1) return fail(FAKE_INVALID_VALUE); /* the spec's malloc_host flag (portable) */
  return allocate(ptr, bytes, FAKE_HOST, NULL);
}
int fakeFreeHost(void *ptr) {
  count_call();
  return release(ptr, 1);
}
int fakeMallocManaged(void **ptr, size_t bytes, unsigned flags) {
  count_call();
  if (flags != 1) return fail(FAKE_INVALID_VALUE); /* attach global */
  return allocate(ptr, bytes, FAKE_MANAGED, NULL);
}

/* Whether a copy of kind between these memory types is what the runtime accepts. */
static int kind_ok(int kind, int dst, int src) {
  switch (kind) {
    case 1: return dst == FAKE_DEVICE && src != FAKE_DEVICE;
    case 2: return src == FAKE_DEVICE && dst != FAKE_DEVICE;
    case 3: return src == FAKE_DEVICE && dst == FAKE_DEVICE;
    case 4: return 1;
    default: return 0;
  }
}

/* Whether a handle names the legacy default stream (NULL, the null stream, is it too). */
static int legacy_stream(void *handle) { return handle == NULL || (uintptr_t)handle == spec_stream("LEGACY_DEFAULT"); }

static void note_copy(int kind, void *stream_handle) {
  if (legacy_stream(stream_handle)) g_stats.legacy_copies++;
  if (kind >= 1 && kind <= 4) g_stats.kinds[kind]++;
  g_stats.last_memcpy_stream = stream_handle;
  g_stats.last_memcpy_device = current_device();
}

int fakeMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream_handle) {
  count_call();
  pthread_mutex_lock(&g_lock);
  need_context();
  g_stats.memcpy_calls++;
  int rc = injected("memcpy");
  int dst_over, src_over;
  const int dst_type = type_of(dst, bytes, &dst_over), src_type = type_of(src, bytes, &src_over);
  if (rc == 0 && (dst_over || src_over || !kind_ok(kind, dst_type, src_type))) rc = FAKE_INVALID_VALUE;
  if (rc == 0) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_COPY;
    o.dst = (char *)dst;
    o.src = (const char *)src;
    o.width = o.dpitch = o.spitch = bytes;
    o.height = 1;
    rc = enqueue(stream_handle, &o);
    if (rc == 0) note_copy(kind, stream_handle);
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, int kind,
                      void *stream_handle) {
  count_call();
  pthread_mutex_lock(&g_lock);
  need_context();
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
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_COPY;
    o.dst = (char *)dst;
    o.src = (const char *)src;
    o.width = width;
    o.height = height;
    o.dpitch = dpitch;
    o.spitch = spitch;
    rc = enqueue(stream_handle, &o);
    if (rc == 0) note_copy(kind, stream_handle);
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* cudaMemsetAsync: device or managed memory only (a real runtime reaches pinned memory too, which dlmap never fills);
 * counted apart from copies, and with them when it runs on the legacy default stream. */
int fakeMemsetAsync(void *dst, int value, size_t bytes, void *stream_handle) {
  count_call();
  pthread_mutex_lock(&g_lock);
  need_context();
  g_stats.memset_calls++;
  int rc = injected("memset");
  int over;
  const int type = type_of(dst, bytes, &over);
  if (rc == 0 && (over || (type != FAKE_DEVICE && type != FAKE_MANAGED))) rc = FAKE_INVALID_VALUE;
  if (rc == 0) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_SET;
    o.dst = (char *)dst;
    o.value = value;
    o.width = bytes;
    o.height = 1;
    rc = enqueue(stream_handle, &o);
    if (rc == 0 && legacy_stream(stream_handle)) g_stats.legacy_copies++;
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeEventCreateWithFlags(void **out, unsigned flags) {
  count_call();
  if (flags != 2) return fail(FAKE_INVALID_VALUE); /* dlmap asks for events without timing */
  const int rc = injected_unlocked("event_create");
  if (rc != 0) return fail(rc);
  event *e = (event *)calloc(1, sizeof *e);
  if (e == NULL) return fail(FAKE_OUT_OF_MEMORY);
  pthread_mutex_lock(&g_lock);
  need_context();
  e->magic = FAKE_EVENT_MAGIC;
  e->device = current_device();
  g_stats.events_created++;
  pthread_mutex_unlock(&g_lock);
  *out = e;
  return 0;
}

int fakeEventRecord(void *handle, void *stream_handle) {
  count_call();
  event *e = (event *)handle;
  pthread_mutex_lock(&g_lock);
  need_context();
  int rc = injected("record");
  /* A real runtime records only on a stream of the event's device, the current one. */
  if (rc == 0 && (e == NULL || e->magic != FAKE_EVENT_MAGIC || e->device != current_device())) rc = FAKE_INVALID_HANDLE;
  const int index = rc == 0 ? resolve(stream_handle) : -1;
  if (rc == 0 && index < 0) rc = -index;
  if (rc == 0) {
    e->recorded = 1;
    e->stream = index;
    e->count = g_streams[index].enqueued;
    g_stats.events_recorded++;
    g_stats.last_record_stream = stream_handle;
    g_stats.last_record_device = current_device();
  } else {
    fail(rc);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeEventDestroy(void *handle) {
  count_call();
  event *e = (event *)handle;
  if (e == NULL || e->magic != FAKE_EVENT_MAGIC) return fail(FAKE_INVALID_HANDLE);
  e->magic = 0;
  free(e);
  pthread_mutex_lock(&g_lock);
  g_stats.events_destroyed++;
  pthread_mutex_unlock(&g_lock);
  return 0;
}

int fakeStreamWaitEvent(void *stream_handle, void *handle, unsigned flags) {
  count_call();
  const event *e = (const event *)handle;
  pthread_mutex_lock(&g_lock);
  need_context();
  note_stream(stream_handle);
  int rc = injected("wait");
  if (rc == 0 && (flags != 0 || e == NULL || e->magic != FAKE_EVENT_MAGIC || !e->recorded)) rc = FAKE_INVALID_HANDLE;
  if (rc == 0) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_WAIT;
    o.wait_stream = e->stream;
    o.wait_count = e->count;
    rc = enqueue(stream_handle, &o);
  }
  if (rc == 0) {
    g_stats.waits++;
    g_stats.last_wait_stream = stream_handle;
    g_stats.last_wait_device = current_device();
  } else {
    fail(rc);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int fakeStreamSynchronize(void *stream_handle) {
  count_call();
  pthread_mutex_lock(&g_lock);
  need_context();
  g_stats.syncs++;
  if (legacy_stream(stream_handle)) g_stats.legacy_syncs++;
  g_stats.last_sync_stream = stream_handle;
  int rc = injected("sync");
  if (rc == 0) {
    const int index = resolve(stream_handle);
    rc = index < 0 ? -index : run(index) != 0 ? FAKE_INVALID_HANDLE : 0;
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* The driver's cuMemGetAddressRange_v2: the allocation holding ptr (a test's report counts as one, as in pointer
 * attributes), CUDA_ERROR_NOT_FOUND for an address none holds, CUDA_ERROR_INVALID_CONTEXT on a thread with no context.
 * A driver call: the runtime's last error stays as it was. */
int fakeMemGetAddressRange(void **base, size_t *bytes, const void *ptr) {
  count_call();
  pthread_mutex_lock(&g_lock);
  g_stats.range_calls++;
  int rc = t_context == 0 ? FAKE_INVALID_CONTEXT : injected("range");
  const char *found = NULL;
  size_t size = 0;
  const int report = rc == 0 ? report_of(ptr) : -1;
  if (report >= 0) {
    found = g_reports[report].base;
    size = g_reports[report].size;
  }
  int overrun;
  const allocation *a = rc == 0 && found == NULL ? find(ptr, 0, &overrun) : NULL;
  if (a != NULL) {
    found = a->base;
    size = a->size;
  }
  if (rc == 0 && found == NULL) rc = FAKE_NOT_FOUND;
  pthread_mutex_unlock(&g_lock);
  if (rc == 0) {
    *base = (void *)(uintptr_t)found;
    *bytes = size;
  }
  return rc;
}

/* CUDA 11's cudaPointerAttributes: {int type; int device; void *devicePointer; void *hostPointer}. */
int fakePointerGetAttributes(void *attributes, const void *ptr) {
  count_call();
  struct {
    int type;
    int device;
    void *device_pointer;
    void *host_pointer;
  } out = {FAKE_UNREGISTERED, -2, NULL, (void *)(uintptr_t)ptr};
  pthread_mutex_lock(&g_lock);
  need_context();
  int rc = injected("attributes");
  int overrun;
  const allocation *a = rc == 0 ? find(ptr, 0, &overrun) : NULL;
  const int report = rc == 0 ? report_of(ptr) : -1;
  if (report >= 0) { /* the test's report, not the allocation */
    out.type = g_reports[report].type;
    out.device = g_reports[report].device;
    out.device_pointer = out.type == FAKE_UNREGISTERED ? NULL : (void *)(uintptr_t)ptr;
  } else if (a != NULL && g_own_device_only && a->type == FAKE_DEVICE && a->device != current_device()) {
    rc = FAKE_INVALID_VALUE; /* HIP: device memory of another device is not this device's to describe */
  } else if (a != NULL) {
    out.type = a->type;
    out.device = a->device;
    /* Pinned memory the current device cannot access directly (CUDA's header: devicePointer NULL). */
    const int unmapped = g_unmapped_pinned && a->type == FAKE_HOST;
    out.device_pointer = unmapped ? NULL : (void *)(uintptr_t)ptr;
    out.host_pointer = a->type == FAKE_DEVICE ? NULL : (void *)(uintptr_t)ptr;
  }
  if (rc != 0) fail(rc);
  pthread_mutex_unlock(&g_lock);
  if (rc == 0 && g_hip_attributes) {
    /* HIP's hipPointerAttribute_t: the same first fields, then isManaged at byte 24; managed memory is device memory
     * with isManaged set (no memory type of its own in this layout). */
    struct {
      int type;
      int device;
      void *device_pointer;
      void *host_pointer;
      int is_managed;
      unsigned allocation_flags;
    } hip = {out.type == FAKE_MANAGED ? FAKE_DEVICE : out.type, out.device, out.device_pointer, out.host_pointer,
             out.type == FAKE_MANAGED, 0};
    memcpy(attributes, &hip, sizeof hip);
  } else if (rc == 0) {
    memcpy(attributes, &out, sizeof out);
  }
  return rc;
}
