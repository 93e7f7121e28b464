/* dlmap library — dlmap_check_export: the conformance checker for a C producer's export callback. It sends every
 * __dlpack__ argument combination, judges each answer by the spec's tables and this library's profile (the struct a
 * max_version gets, version gating, stream policy, read-only policy, error kinds), runs each deleter exactly once and
 * reports every violation as a row. A tensor's values (flags, strides, dtype, device type) and its stamped version's
 * range are judged by dlmap_check_tensor and dlmap_check_version (check_tensor.c), as the Python checker (python/check/producer.py) judges capsules' through the
 * module; the profile's part (struct, version gating, read-only, copies, streams) is judged here. */
#include "dlmap/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dlmap/profile.h"
#include "src/exchange.h"
#include "src/internal.h" /* DLMAP__STRUCT_READ */

/* Every producer rule, by id: this C checker and the Python one (python/check/producer.py, which reads this table
 * through the extension) report the same ids with the same text. The values they compare come from the spec. */
static const dlmap_check_rule_info kRules[] = {
    {"P-answer", "the callback answers with exactly one tensor or an error kind"},
    {"P-signature",
     "__dlpack__ accepts the keywords of the 2023.12 protocol (max_version, dl_device, copy); an old "
     "producer's TypeError makes consumers fall back to a legacy call"},
    {"P-raised", "the call must succeed when no rule of the spec or profile calls for an error"},
    {"P-no-error", "the call must raise when the spec or profile calls for an error"},
    {"P-error-kind", "an error has the exception kind the spec's catalogue (with the profile's overrides) gives it"},
    {"P-capsule", "__dlpack__ returns a PyCapsule named after its struct (the spec's abi.<struct>.capsule)"},
    {"P-version",
     "a versioned tensor's version is in the spec's versioned range and of no newer major than max_version; "
     "max_version=None and versions below the versioned range get the legacy struct"},
    {"P-struct", "the struct is the one the profile's export.max_version ranges give that max_version"},
    {"P-flags", "every flag bit set is a spec flag introduced in the tensor's version"},
    {"P-strides", "strides are not NULL for ndim != 0 from the version whose `requires` lists non_null_strides"},
    {"P-dtype", "the dtype is a spec code and width, with valid lanes, expressible in the tensor's version"},
    {"P-device",
     "the device type is a spec device type expressible in the tensor's version, and the tensor is on "
     "dl_device when given, else where __dlpack_device__ says"},
    {"P-copied", "copy=True makes a copy (new data, and IS_COPIED on a versioned tensor)"},
    {"P-not-copied", "copy=False shares the source's data and does not set IS_COPIED"},
    {"P-read-only",
     "a tensor sharing a read-only source's data has READ_ONLY, or, legacy, is refused when the "
     "profile's legacy_read_only is refuse (a copy may be writable)"},
    {"P-consistent", "every export of the same source has the shape and dtype of the plain __dlpack__() export"},
    {"P-deleter",
     "the deleter runs exactly once: once by the consumer that renamed the capsule (never again by the "
     "capsule), or once by the capsule's destructor when it is dropped unconsumed"},
    {"P-device-report", "__dlpack_device__() returns (device_type, device_id): a spec device type and an id >= 0"},
};

const dlmap_check_rule_info *dlmap_check_rule_at(size_t index) {
  return index < sizeof kRules / sizeof kRules[0] ? &kRules[index] : NULL;
}

const dlmap_check_rule_info *dlmap_check_rule_find(const char *id) {
  if (id == NULL) return NULL;
  for (size_t i = 0; i < sizeof kRules / sizeof kRules[0]; i++) {
    if (strcmp(kRules[i].id, id) == 0) return &kRules[i];
  }
  return NULL;
}

/* What one answer came back with, read once. */
typedef struct answer_view {
  bool tensor;
  dlmap_struct_kind kind;
  dlmap_version version;
  uint64_t flags;
  const DLTensor *t;
  uintptr_t address; /* data + byte_offset */
} answer_view;

/* The plain export's facts, for the copy and consistency rules. */
typedef struct baseline {
  bool known;
  uintptr_t address;
  DLDevice device;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[16];
} baseline;

typedef struct checker {
  const dlmap_check_source *source;
  dlmap_check_row *rows;
  size_t capacity;
  size_t count;
  char id[8];
  char sent[128];
  char got[128];
} checker;

static void report(checker *c, const char *rule, const char *format, ...) {
  if (c->count < c->capacity) {
    dlmap_check_row *row = &c->rows[c->count];
    va_list ap;
    snprintf(row->id, sizeof row->id, "%s", c->id);
    row->rule = rule;
    snprintf(row->sent, sizeof row->sent, "%s", c->sent);
    snprintf(row->got, sizeof row->got, "%s", c->got);
    va_start(ap, format);
    vsnprintf(row->detail, sizeof row->detail, format, ap);
    va_end(ap);
  }
  c->count++;
}

/* The exception kind the profile gives an error code. */
static const char *kind_of(int32_t code) {
  dlmap_error e;
  DLMAP_RAISE(&e, code);
  return dlmap_error_kind_name(e.kind);
}

static void describe_request(const dlmap_check_request *r, char *buf, size_t cap) {
  int n = snprintf(buf, cap, "__dlpack__(");
  const char *sep = "";
  if (r->has_max_version) {
    n += snprintf(buf + n, cap - (size_t)n, "max_version=(%u, %u)", (unsigned)r->max_version.major,
                  (unsigned)r->max_version.minor);
    sep = ", ";
  }
  if (r->has_dl_device) {
    n += snprintf(buf + n, cap - (size_t)n, "%sdl_device=(%d, %d)", sep, (int)r->dl_device_type,
                  (int)r->dl_device_id);
    sep = ", ";
  }
  if (r->copy != DLMAP_COPY_IF_NEEDED) {
    n += snprintf(buf + n, cap - (size_t)n, "%scopy=%s", sep, r->copy == DLMAP_COPY_ALWAYS ? "True" : "False");
    sep = ", ";
  }
  if (r->has_stream) n += snprintf(buf + n, cap - (size_t)n, "%sstream=%lld", sep, (long long)r->stream);
  snprintf(buf + n, cap - (size_t)n, ")");
}

/* Up to four error codes that may answer a request, and whether one must. */
typedef struct expectation {
  bool must_fail;
  int32_t codes[4];
  size_t n;
} expectation;

static void add_code(expectation *e, int32_t code) {
  if (e->n < sizeof e->codes / sizeof e->codes[0]) e->codes[e->n++] = code;
}

static expectation expect(const dlmap_check_request *r, const dlmap_check_source *s, dlmap_struct_kind *profile_struct) {
  expectation e = {false, {0}, 0};
  const dlmap_profile_info *profile = dlmap_profile_current();
  dlmap_error err;
  int32_t target = r->has_dl_device ? r->dl_device_type : s->device_type;
  *profile_struct = DLMAP_STRUCT_NONE;
  if (dlmap_profile_struct_lookup(r->has_max_version, r->max_version, profile_struct, &err) != DLMAP_OK) {
    e.must_fail = true;
    add_code(&e, err.code);
  }
  if (!r->has_max_version && s->read_only) *profile_struct = profile->absent_read_only_struct;
  if (r->has_dl_device && r->dl_device_type != s->device_type) {
    if (!dlmap_profile_device_policy(r->dl_device_type).export_target) {
      e.must_fail = true;
      add_code(&e, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE);
    } else {
      if (r->copy == DLMAP_COPY_NEVER) e.must_fail = true;
      add_code(&e, DLMAP_ERR_EXPORT_COPY_TO_DEVICE_FORBIDDEN);
      add_code(&e, DLMAP_ERR_PLATFORM_UNAVAILABLE);
      add_code(&e, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE);
    }
  }
  if (r->has_stream && profile->stream == DLMAP_STREAM_POLICY_NONE_ONLY) { /* every stream but None */
    e.must_fail = true;
    add_code(&e, DLMAP_ERR_STREAM_NOT_NONE);
  }
  if (r->has_stream && profile->stream == DLMAP_STREAM_POLICY_VALIDATE &&
      !(profile->stream_no_sync && dlmap__stream_value_no_sync(r->stream))) { /* export.stream_no_sync */
    dlmap_stream_meaning meaning;
    if (dlmap_stream_classify(target, true, r->stream, &meaning, NULL) != DLMAP_OK) { /* never OK with INVALID */
      e.must_fail = true;
      add_code(&e, DLMAP_ERR_STREAM_INVALID);
    }
  }
  if (s->read_only && r->copy != DLMAP_COPY_ALWAYS && *profile_struct == DLMAP_STRUCT_LEGACY &&
      !profile->legacy_drops_read_only) {
    e.must_fail = true;
    add_code(&e, DLMAP_ERR_READ_ONLY_NEEDS_VERSIONED);
  }
  return e;
}

/* The versioned struct's version against max_version; false when its major is one the checker cannot read (then only
 * the deleter may be touched). */
static bool judge_version(checker *c, const dlmap_check_request *r, const answer_view *a, dlmap_struct_kind wanted) {
  dlmap_check_problem outside;
  if (a->kind != DLMAP_STRUCT_VERSIONED) return true;
  if (!dlmap_check_version(a->version, &outside)) { /* the spec's range, judged as the Python checker judges it */
    report(c, outside.rule, "%s", outside.detail);
    return false;
  }
  /* A newer minor than max_version is the standard's recommended answer for a max_version of the producer's own
   * major (DLPack changes the struct only with the major): only a newer major is reported. */
  if ((!r->has_max_version && wanted != DLMAP_STRUCT_VERSIONED) ||
      (r->has_max_version && a->version.major > r->max_version.major)) {
    report(c, "P-version", "a versioned %u.%u tensor for this max_version", (unsigned)a->version.major,
           (unsigned)a->version.minor);
  }
  return true;
}

/* copy=True / copy=False against the IS_COPIED flag and the data's address, and a read-only source's shared data
 * against the READ_ONLY flag. */
static void judge_copy(checker *c, const dlmap_check_request *r, const answer_view *a, const baseline *base) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  const DLTensor *t = a->t;
  bool copied_flag = (a->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
  bool same_place = base->known && base->address != 0 && base->device.device_type == t->device.device_type &&
                    base->device.device_id == t->device.device_id;
  if (r->copy == DLMAP_COPY_ALWAYS) {
    if (a->kind == DLMAP_STRUCT_VERSIONED && !copied_flag && profile->flag_is_copied) { /* export.flag_is_copied */
      report(c, "P-copied", "IS_COPIED not set");
    }
    if (same_place && a->address == base->address) report(c, "P-copied", "the data is the source's");
  }
  if (r->copy == DLMAP_COPY_NEVER) {
    if (copied_flag) report(c, "P-not-copied", "IS_COPIED set");
    if (same_place && a->address != base->address) report(c, "P-not-copied", "the data is not the source's");
  }
  bool shared = r->copy != DLMAP_COPY_ALWAYS && !copied_flag && !(same_place && a->address != base->address);
  if (c->source->read_only && shared) {
    if (a->kind == DLMAP_STRUCT_VERSIONED && !(a->flags & DLPACK_FLAG_BITMASK_READ_ONLY)) {
      report(c, "P-read-only", "READ_ONLY not set");
    }
    if (a->kind == DLMAP_STRUCT_LEGACY && !profile->legacy_drops_read_only) {
      report(c, "P-read-only", "a legacy tensor, which cannot say read-only");
    }
  }
}

static void judge_tensor(checker *c, const dlmap_check_request *r, const answer_view *a, dlmap_struct_kind wanted,
                         const baseline *base) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  const DLTensor *t = a->t;
  if (!judge_version(c, r, a, wanted)) return;
  if (wanted != DLMAP_STRUCT_NONE && wanted != a->kind) {
    report(c, "P-struct", "the profile gives the %s struct", wanted == DLMAP_STRUCT_LEGACY ? "legacy" : "versioned");
  }
  /* The version the values must be expressible in: a versioned tensor's own; a legacy one's under the profile's
   * version gating, the newest legacy version (strict) or any version the spec lists (known). */
  dlmap_version legacy_newest = dlmap__legacy_newest();
  const dlmap_version *at = a->kind == DLMAP_STRUCT_VERSIONED        ? &a->version
                            : profile->gating == DLMAP_GATING_STRICT ? &legacy_newest
                                                                     : NULL;
  dlmap_check_problem problems[DLMAP_CHECK_TENSOR_PROBLEMS_MAX];
  size_t found = dlmap_check_tensor(t, a->flags, at, problems, DLMAP_CHECK_TENSOR_PROBLEMS_MAX);
  for (size_t i = 0; i < found; i++) report(c, problems[i].rule, "%s", problems[i].detail);
  int32_t want_type = r->has_dl_device ? r->dl_device_type : c->source->device_type;
  int32_t want_id = r->has_dl_device ? r->dl_device_id : c->source->device_id;
  if ((int32_t)t->device.device_type != want_type || t->device.device_id != want_id) {
    report(c, "P-device", "expected %s:%d", dlmap_device_type_name(want_type), (int)want_id); /* never NULL */
  }
  judge_copy(c, r, a, base);
  if (base->known) {
    bool same = t->ndim == base->ndim && t->dtype.code == base->dtype.code && t->dtype.bits == base->dtype.bits &&
                t->dtype.lanes == base->dtype.lanes;
    for (int32_t i = 0; same && i < t->ndim && i < 16; i++) same = t->shape != NULL && t->shape[i] == base->shape[i];
    if (!same) report(c, "P-consistent", "shape or dtype differs from the plain export's");
  }
}

/* The answer's tensor as the judges read it (a->tensor false: none). */
static void view_answer(const dlmap_check_answer *answer, answer_view *a) {
  memset(a, 0, sizeof *a);
  if (answer->legacy != NULL) {
    a->tensor = true;
    a->kind = DLMAP_STRUCT_LEGACY;
    a->t = &answer->legacy->dl_tensor;
  } else if (answer->versioned != NULL) {
    a->tensor = true;
    a->kind = DLMAP_STRUCT_VERSIONED;
    a->version.major = answer->versioned->version.major;
    a->version.minor = answer->versioned->version.minor;
    a->flags = answer->versioned->flags;
    a->t = &answer->versioned->dl_tensor;
  }
}

/* c->got: what came back, for the rows' text; a->address too where the tensor is readable. */
static void describe_answer(checker *c, const dlmap_check_answer *answer, answer_view *a, bool readable) {
  if (readable) {
    a->address = (uintptr_t)a->t->data + (uintptr_t)a->t->byte_offset;
    snprintf(c->got, sizeof c->got, "%s %u.%u %s:%d flags 0x%llx",
             a->kind == DLMAP_STRUCT_LEGACY ? "legacy" : "versioned", (unsigned)a->version.major,
             (unsigned)a->version.minor, dlmap_device_type_name(a->t->device.device_type) /* "unknown" outside */,
             (int)a->t->device.device_id,
             (unsigned long long)a->flags);
  } else if (a->tensor) {
    snprintf(c->got, sizeof c->got, "versioned %u.%u flags 0x%llx", (unsigned)a->version.major,
             (unsigned)a->version.minor, (unsigned long long)a->flags);
  } else {
    snprintf(c->got, sizeof c->got, "%s", answer->error_kind ? answer->error_kind : "nothing");
  }
}

/* An answer without a tensor: the error kind against the ones the profile's rules call for. */
static void judge_error(checker *c, const expectation *e, const char *error_kind) {
  bool matches = false;
  for (size_t i = 0; i < e->n; i++) matches = matches || strcmp(kind_of(e->codes[i]), error_kind) == 0;
  if (e->n == 0) {
    report(c, "P-raised", "no rule calls for an error");
  } else if (!matches) {
    report(c, "P-error-kind", "the profile gives %s", kind_of(e->codes[0]));
  }
}

/* The plain export's facts, where its tensor is readable and its shape can be kept. */
static void remember_base(baseline *base, const answer_view *a) {
  if (a->t->ndim < 0 || a->t->ndim > 16 || (a->t->ndim != 0 && a->t->shape == NULL)) return;
  base->known = true;
  base->address = a->address;
  base->device = a->t->device;
  base->dtype = a->t->dtype;
  base->ndim = a->t->ndim;
  for (int32_t i = 0; i < a->t->ndim; i++) base->shape[i] = a->t->shape[i];
}

/* Sends one request, judges the answer, runs the deleter once; fills `base` from the plain export. */
static void check_one(checker *c, dlmap_check_export_fn fn, void *context, const dlmap_check_request *r,
                      baseline *base, bool is_base) {
  dlmap_check_answer answer;
  answer_view a;
  dlmap_struct_kind wanted;
  expectation e = expect(r, c->source, &wanted);
  memset(&answer, 0, sizeof answer);
  describe_request(r, c->sent, sizeof c->sent);
  fn(context, r, &answer);
  view_answer(&answer, &a);
  /* A versioned tensor of a major this library cannot read may be only the ABI-stable head (version, manager_ctx,
   * deleter, flags): nothing past it (data, offset, device) is read before the major is known to be readable. */
  bool readable = a.tensor && (a.kind == DLMAP_STRUCT_LEGACY ||
                               dlmap_version_struct(a.version) == DLMAP_STRUCT_VERSIONED);
  describe_answer(c, &answer, &a, readable);
  if ((answer.legacy != NULL && answer.versioned != NULL) || (!a.tensor && answer.error_kind == NULL) ||
      (a.tensor && answer.error_kind != NULL)) {
    report(c, "P-answer", "expected exactly one tensor or an error kind");
  } else if (!a.tensor) {
    judge_error(c, &e, answer.error_kind);
  } else {
    if (e.must_fail) report(c, "P-no-error", "expected %s", kind_of(e.codes[0]));
    if (readable && is_base) remember_base(base, &a);
    judge_tensor(c, r, &a, wanted, base);
  }
  /* The checker owns every tensor it was given: one deleter run each. */
  if (answer.legacy != NULL && answer.legacy->deleter != NULL) answer.legacy->deleter(answer.legacy);
  if (answer.versioned != NULL && answer.versioned->deleter != NULL) answer.versioned->deleter(answer.versioned);
}

/* A device type to ask dl_device for: for host memory the first device-memory type whose platform has a backend,
 * else the first host type (the Python checker's Rules.other_device). -1 when the spec has none. */
static int32_t other_device(int32_t own) {
  const dlmap_device_info *mine = dlmap_device_type_find(own);
  bool want_device = mine == NULL || mine->memory == DLMAP_MEMORY_HOST;
  for (size_t i = 0; dlmap_device_type_at(i) != NULL; i++) {
    const dlmap_device_info *d = dlmap_device_type_at(i);
    const dlmap_platform_info *p = dlmap_platform_find(d->platform);
    if (d->value != own && p != NULL && p->backend != DLMAP_BACKEND_NONE &&
        d->memory == (want_device ? DLMAP_MEMORY_DEVICE : DLMAP_MEMORY_HOST)) {
      return d->value;
    }
  }
  return -1;
}

/* One session of requests to the producer: each is numbered P01, P02, … in the order sent. */
typedef struct session {
  checker c;
  baseline base;
  dlmap_check_export_fn fn;
  void *context;
  size_t sent;
} session;

static void send_request(session *s, const dlmap_check_request *r) {
  snprintf(s->c.id, sizeof s->c.id, "P%02u", (unsigned)++s->sent);
  check_one(&s->c, s->fn, s->context, r, &s->base, s->sent == 1);
}

/* Every max_version × dl_device × copy: max_version None, (0, 8), (1, 0), current, a future minor and the next major;
 * dl_device None, the source's own and another (where the spec has one); copy None, False, True (the Python checker's
 * order, which the row ids follow). The first, all None, is the plain export. */
static void send_version_rows(session *s) {
  const dlmap_check_source *source = s->c.source;
  dlmap_version current = dlmap_version_current();
  dlmap_version versions[] = {{0, 0}, {0, 8}, {1, 0}, current, {current.major, 99}, {current.major + 1, 0}};
  static const dlmap_copy_mode kCopies[] = {DLMAP_COPY_IF_NEEDED, DLMAP_COPY_NEVER, DLMAP_COPY_ALWAYS};
  int32_t other = other_device(source->device_type);
  for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
    for (int dev = 0; dev < 3; dev++) {
      if (dev == 2 && other < 0) continue;
      for (size_t copy = 0; copy < sizeof kCopies / sizeof kCopies[0]; copy++) {
        dlmap_check_request r;
        memset(&r, 0, sizeof r);
        r.has_max_version = v != 0;
        r.max_version = versions[v];
        r.has_dl_device = dev != 0;
        r.dl_device_type = dev == 1 ? source->device_type : other;
        r.dl_device_id = dev == 1 ? source->device_id : 0;
        r.copy = kCopies[copy];
        send_request(s, &r);
      }
    }
  }
}

/* A request with nothing set but copy=None's meaning (DLMAP_COPY_IF_NEEDED), for the rows that vary one argument. */
static dlmap_check_request if_needed_request(void) {
  dlmap_check_request r;
  memset(&r, 0, sizeof r);
  r.copy = DLMAP_COPY_IF_NEEDED;
  return r;
}

/* The newest listed version the profile refuses, when it refuses any. */
static void send_refused_row(session *s) {
  dlmap_version refused = {0, 0};
  dlmap_struct_kind kind;
  bool any_refused = false;
  const dlmap_version_info *listed;
  for (size_t i = 0; (listed = dlmap_version_at(i)) != NULL; i++) {
    if (dlmap_profile_struct_lookup(true, listed->version, &kind, NULL) != DLMAP_OK) {
      refused = listed->version;
      any_refused = true;
    }
  }
  if (!any_refused) return;
  dlmap_check_request r = if_needed_request();
  r.has_max_version = true;
  r.max_version = refused;
  send_request(s, &r);
}

/* Stream values: -2 (below every convention) … 3 (the first handle above CUDA's and ROCm's named values). */
static void send_stream_rows(session *s) {
  for (int64_t stream = -2; stream <= 3; stream++) {
    dlmap_check_request r = if_needed_request();
    r.has_stream = true;
    r.stream = stream;
    send_request(s, &r);
  }
}

int32_t dlmap_check_export(dlmap_check_export_fn fn, void *context, const dlmap_check_source *source,
                           dlmap_check_row *rows, size_t capacity, size_t *count, size_t *requests, dlmap_error *err) {
  if (fn == NULL || source == NULL || count == NULL) {
    const char *argument = fn == NULL ? "fn" : source == NULL ? "source" : "count";
    return dlmap_raise_invalid_argument(err, argument, "must not be NULL");
  }
  dlmap_check_source source_fields; /* fields the caller's struct_size does not have read as zero */
  if (DLMAP__STRUCT_READ(source, &source_fields, dlmap_check_source, DLMAP_CHECK_SOURCE_STRUCT_SIZE, "source", err) !=
      DLMAP_OK) {
    return DLMAP_ERR_INVALID_ARGUMENT;
  }
  session s;
  memset(&s, 0, sizeof s);
  s.c.source = &source_fields;
  s.c.rows = rows;
  s.c.capacity = rows != NULL ? capacity : 0;
  s.fn = fn;
  s.context = context;
  send_version_rows(&s);
  send_refused_row(&s);
  send_stream_rows(&s);
  *count = s.c.count;
  if (requests != NULL) *requests = s.sent;
  return DLMAP_OK;
}
