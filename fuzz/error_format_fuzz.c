/* dlmap fuzz target — error formatting with hostile placeholder values: any status code (catalogue, unknown,
 * negative), argument lists with unknown placeholder names and argument types, NULL and long strings, NULL and
 * huge integer lists with negative counts, into output buffers of exactly `cap` bytes (0 and tiny included), plus
 * the other text writers (dtype names, valid widths, related errors) and the lookups by id. Invariants: the
 * output is NUL-terminated inside the buffer whenever cap > 0, the returned length is strlen of it, nothing is
 * written when cap is 0, and a truncated message is a prefix of the full one followed by "...". */
#include "fuzz/harness.h"

#define MAX_ARGS 12
#define MAX_CAP 2048
#define FULL_CAP 65536

/* A heap string of exactly len + 1 bytes (the text never contains NUL), or NULL. */
static char *fuzz_string(fuzz_input *in) {
  const uint8_t sel = fuzz_u8(in);
  if (sel < 16) return NULL;
  size_t len = sel < 200 ? (size_t)(sel % 24) : (size_t)fuzz_u16(in) % 3000;
  char *s = (char *)malloc(len + 1);
  for (size_t i = 0; i < len; i++) {
    uint8_t c = fuzz_u8(in);
    if (c == 0) c = (uint8_t)(i % 2 ? 0xC3 : 0xA9); /* exhausted input: keep some UTF-8 in play */
    s[i] = (char)c;
  }
  s[len] = '\0';
  return s;
}

typedef struct hostile_args {
  dlmap_arg args[MAX_ARGS];
  void *owned[2 * MAX_ARGS]; /* strings and lists to free */
  size_t n_owned;
} hostile_args;

static void fill_arg(fuzz_input *in, dlmap_arg *arg, hostile_args *h, size_t list_limit) {
  const uint8_t name_sel = fuzz_u8(in), type_sel = fuzz_u8(in);
  arg->name = name_sel < 230 ? (dlmap_placeholder)(name_sel % DLMAP_ARG_COUNT) : (dlmap_placeholder)(int32_t)fuzz_u32(in);
  arg->type = type_sel < 224 ? (dlmap_arg_type)(type_sel % 7) : (dlmap_arg_type)(int32_t)fuzz_u32(in);
  const int kind = fuzz_u8(in) % 5;
  switch (kind) {
    case 0: { /* a string, whatever the declared type says */
      char *s = fuzz_string(in);
      h->owned[h->n_owned++] = s;
      arg->value.s = s;
      break;
    }
    case 1: { /* a list of ints with a hostile count; items holds min(count, what a bounded writer can reach) */
      const uint8_t c = fuzz_u8(in);
      int32_t count = c < 128 ? (int32_t)(c % 20) : c < 160 ? -(int32_t)(c % 5) - 1
                                                            : (int32_t)fuzz_u32(in);
      if (c >= 250) count = c & 1 ? INT32_MAX : INT32_MIN;
      const bool null_items = (c % 17) == 3;
      size_t n = count > 0 ? (size_t)count : 0;
      if (n > list_limit) n = list_limit;
      int64_t *items = NULL;
      if (!null_items) {
        items = (int64_t *)malloc(n == 0 ? 1 : n * sizeof(int64_t)); /* 0 entries: any read is out of bounds */
        for (size_t i = 0; i < n; i++) {
          items[i] = fuzz_pick_i64(in, kFuzzInterestingI64, sizeof kFuzzInterestingI64 / sizeof kFuzzInterestingI64[0]);
        }
        h->owned[h->n_owned++] = items;
      }
      arg->value.list.items = items;
      arg->value.list.count = count;
      break;
    }
    case 2:
      arg->value.v.major = fuzz_u32(in);
      arg->value.v.minor = fuzz_u32(in);
      break;
    default:
      arg->value.u = (uint64_t)fuzz_pick_i64(in, kFuzzInterestingI64, sizeof kFuzzInterestingI64 / sizeof kFuzzInterestingI64[0]);
      break;
  }
  /* The API's contract: a str arg points at a NUL-terminated string or is NULL, an ints arg at `count` items or
   * is NULL; every other combination of name, type and value is fair game. */
  if (arg->type == DLMAP_ARG_TYPE_STR && kind != 0) arg->value.s = NULL;
  if (arg->type == DLMAP_ARG_TYPE_INTS && kind != 1) {
    arg->value.list.items = NULL; /* a hostile count on a NULL list */
    arg->value.list.count = (int32_t)fuzz_u32(in);
  }
}

/* Checks one bounded write: cap bytes at buf (cap 0: nothing), n returned. */
static void check_output(const char *buf, size_t cap, size_t n) {
  if (cap == 0) {
    FUZZ_CHECK(n == 0);
    return;
  }
  FUZZ_CHECK(n < cap);
  FUZZ_CHECK(buf[n] == '\0');
  FUZZ_CHECK(strlen(buf) == n);
}

static char *exact_buffer(size_t cap) {
  char *buf = (char *)malloc(cap == 0 ? 1 : cap);
  memset(buf, 'Z', cap == 0 ? 1 : cap);
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size};

  /* ---- the code, the buffer and the arguments ---- */
  const uint8_t code_sel = fuzz_u8(&in);
  int32_t code;
  if (code_sel < 200) {
    code = dlmap_error_at(code_sel % DLMAP_ERROR_COUNT)->code;
  } else {
    static const int64_t kCodes[] = {0, -1, 1, 100, 199, 600, 604, 65535, 65536, INT32_MAX, INT32_MIN, 700};
    code = (int32_t)fuzz_pick_i64(&in, kCodes, sizeof kCodes / sizeof kCodes[0]);
  }
  const uint8_t cap_sel = fuzz_u8(&in);
  const size_t cap = cap_sel < 128 ? (size_t)(cap_sel % 8) : cap_sel < 240 ? (size_t)cap_sel * 3
                                                                            : (size_t)fuzz_u16(&in) % MAX_CAP;
  const uint8_t nargs_sel = fuzz_u8(&in);
  const size_t nargs = nargs_sel % (MAX_ARGS + 1);
  const bool null_args = nargs_sel >= 250;
  /* A bounded writer stops reading a list once the buffer is full: each item prints at least one byte and each
   * separator one (a profile's packed style, "2,3") or two, so no writer into FULL_CAP bytes reads more than
   * FULL_CAP / 2 + 2 items. */
  const size_t list_limit = FULL_CAP / 2 + 4;
  hostile_args h;
  memset(&h, 0, sizeof h);
  for (size_t i = 0; i < nargs; i++) fill_arg(&in, &h.args[i], &h, list_limit);
  const dlmap_arg *args = null_args ? NULL : h.args;

  /* ---- dlmap_error_format: the full text, then the same into exactly cap bytes ---- */
  char *full = exact_buffer(FULL_CAP);
  const size_t full_len = dlmap_error_format(full, FULL_CAP, code, args, nargs);
  check_output(full, FULL_CAP, full_len);
  char *buf = exact_buffer(cap);
  const bool null_buf = cap == 0 && (cap_sel & 1);
  const size_t n = dlmap_error_format(null_buf ? NULL : buf, cap, code, args, nargs);
  check_output(buf, cap, n);
  if (cap == 0) FUZZ_CHECK(buf[0] == 'Z'); /* nothing written */
  if (cap > 0 && full_len < FULL_CAP - 1) {
    if (full_len < cap) {
      FUZZ_CHECK(n == full_len && memcmp(buf, full, n) == 0);
    } else if (cap >= 4) {
      FUZZ_CHECK(n >= 3 && memcmp(buf + n - 3, "...", 3) == 0);
      FUZZ_CHECK(memcmp(buf, full, n - 3) == 0); /* what precedes the ellipsis is the message's start */
    } else {
      FUZZ_CHECK(memcmp(buf, full, n) == 0);
    }
  }

  /* ---- dlmap_error_set: the same message in a dlmap_error, and NULL err ---- */
  dlmap_error err;
  memset(&err, 'Q', sizeof err);
  FUZZ_CHECK(dlmap_error_set(&err, code, args, nargs) == code);
  FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
  FUZZ_CHECK(err.code == code && err.id != NULL);
  const dlmap_error_info *info = dlmap_error_describe(code);
  FUZZ_CHECK(info != NULL && info->id != NULL);
  if (code == DLMAP_OK) {
    FUZZ_CHECK(err.message[0] == '\0'); /* success clears the error object */
  } else {
    FUZZ_CHECK(err.kind == info->kind && strcmp(err.id, info->id) == 0);
  }
  FUZZ_CHECK(dlmap_error_kind_name(err.kind) != NULL);
  FUZZ_CHECK(dlmap_error_set(NULL, code, args, nargs) == code);

  /* ---- related errors into exactly rcap slots ---- */
  const size_t rcap = fuzz_u8(&in) % 4;
  const dlmap_error_info **related = (const dlmap_error_info **)malloc(rcap == 0 ? 1 : rcap * sizeof *related);
  const size_t total = dlmap_error_related(code, rcap == 0 && (cap_sel & 2) ? NULL : related, rcap);
  for (size_t i = 0; i < total && i < rcap; i++) FUZZ_CHECK(related[i] != NULL && related[i]->id != NULL);
  free(related);

  /* ---- hostile enum values through the name functions ---- */
  const int32_t raw = (int32_t)fuzz_u32(&in);
  FUZZ_CHECK(dlmap_error_kind_name((dlmap_error_kind)raw) != NULL);
  dlmap_arg_type type;
  const bool known_placeholder = dlmap_placeholder_type((dlmap_placeholder)raw, &type);
  FUZZ_CHECK(known_placeholder == (dlmap_placeholder_name((dlmap_placeholder)raw) != NULL));
  FUZZ_CHECK(dlmap_memory_kind_name((dlmap_memory_kind)raw) != NULL || raw < 0 || raw >= DLMAP_MEMORY_KIND_COUNT);
  (void)dlmap_stream_convention_rule((dlmap_stream_convention)raw);
  (void)dlmap_platform_find((dlmap_platform)raw);
  (void)dlmap_device_type_name(raw);

  /* ---- the other bounded writers: dtype names and valid widths, into exactly cap bytes ---- */
  DLDataType dtype;
  dtype.code = fuzz_u8(&in);
  dtype.bits = fuzz_u8(&in);
  dtype.lanes = fuzz_u16(&in);
  char *dbuf = exact_buffer(cap);
  check_output(dbuf, cap, dlmap_dtype_format(dtype, dbuf, cap));
  check_output(dbuf, cap, dlmap_dtype_format_valid_bits(dtype.code, dbuf, cap));
  free(dbuf);
  const int32_t vstatus = dlmap_dtype_validate(dtype, &err);
  if (vstatus != DLMAP_OK) fuzz_check_error(&err, vstatus);
  dlmap_version v;
  v.major = fuzz_u32(&in) % 4;
  v.minor = fuzz_u32(&in) % 6;
  const int32_t rstatus = dlmap_check_representable(raw, dtype, fuzz_u64(&in), v, &err);
  if (rstatus != DLMAP_OK) fuzz_check_error(&err, rstatus);
  dlmap_stream_meaning meaning;
  const int32_t sstatus = dlmap_stream_classify(raw, (raw & 1) != 0, (int64_t)fuzz_u64(&in), &meaning, &err);
  if (sstatus != DLMAP_OK) fuzz_check_error(&err, sstatus);

  /* ---- lookup by id with an arbitrary string ---- */
  char *id = fuzz_string(&in);
  const dlmap_error_info *by_id = dlmap_error_find_by_id(id);
  if (by_id != NULL) FUZZ_CHECK(id != NULL && strcmp(by_id->id, id) == 0);
  free(id);

  free(buf);
  free(full);
  for (size_t i = 0; i < h.n_owned; i++) free(h.owned[i]);
  return 0;
}
