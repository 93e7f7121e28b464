/* dlmap core — the error catalogue: lookup by code and id, related errors, and message formatting into
 * caller memory. Formatting walks the pre-compiled template (placeholder = byte 1, or byte 2 when styled, byte 3 for
 * a version's major only, 4 and 5 for an int's plural words, 6 for a device's profile text, then index + 1); nothing
 * here allocates. */
#include <string.h>

#include "src/internal.h"

static const dlmap_error_info kErrors[] = {
#define DLMAP_ERROR(ENUM, code_, id_, KIND, template_text, compiled, mask, meaning_, when_, fix_, ...) \
  {                                                                                                   \
      .code = code_,                                                                                  \
      .id = id_,                                                                                      \
      .kind = DLMAP_KIND_##KIND,                                                                      \
      .message_template = template_text,                                                              \
      .meaning = meaning_,                                                                            \
      .when = when_,                                                                                  \
      .fix = fix_,                                                                                    \
      .args_mask = mask,                                                                              \
  },
#include "src/generated/errors.inc"
#undef DLMAP_ERROR
};

/* The compiled templates, in the same order as kErrors. */
static const char *const kCompiled[] = {
#define DLMAP_ERROR(ENUM, code, id, KIND, template_text, compiled, ...) compiled,
#include "src/generated/errors.inc"
#undef DLMAP_ERROR
};

static const dlmap_error_info kUnknown = {
    .code = -1,
    .id = "unknown",
    .kind = DLMAP_KIND_COUNT,
    .message_template = "unknown dlmap status code",
    .meaning = "The code is not in this build's catalogue.",
    .when = "A status from another build or a corrupted value reached the catalogue.",
    .fix = "Check which dlmap build produced it.",
    .args_mask = 0,
};

typedef struct related_row {
  int32_t code;
  int32_t related;
} related_row;

static const related_row kRelated[] = {
#define DLMAP_ERROR_RELATED(ENUM, RELATED, ...) {.code = DLMAP_ERR_##ENUM, .related = DLMAP_ERR_##RELATED},
#include "src/generated/error_related.inc"
#undef DLMAP_ERROR_RELATED
    {0, 0} /* sentinel: a spec may relate no errors; code 0 is never an error */
};

/* Indexed by the kind's public value (spec `value:`). */
static const char *const kKindNames[DLMAP_KIND_COUNT] = {
#define DLMAP_EXCEPTION_KIND(ENUM, name, ...) [DLMAP_KIND_##ENUM] = name,
#include "src/generated/exception_kinds.inc"
#undef DLMAP_EXCEPTION_KIND
};

typedef struct placeholder_row {
  const char *name;
  dlmap_arg_type type;
} placeholder_row;

/* Indexed by the placeholder's public value (spec `value:`), which is also its bit in an error's args_mask and, plus
 * one, the byte after a marker in a compiled template. */
static const placeholder_row kPlaceholders[DLMAP_ARG_COUNT] = {
#define DLMAP_PLACEHOLDER(ENUM, name_, TYPE, ...) [DLMAP_ARG_##ENUM] = {.name = name_, .type = DLMAP_ARG_TYPE_##TYPE},
#include "src/generated/placeholders.inc"
#undef DLMAP_PLACEHOLDER
};

/* Index of a code in kErrors, or -1. The switch compiles to a jump table or binary search. */
static int error_index(int32_t code) {
  enum {
#define DLMAP_ERROR(ENUM, ...) INDEX_##ENUM,
#include "src/generated/errors.inc"
#undef DLMAP_ERROR
  };
  switch (code) {
#define DLMAP_ERROR(ENUM, code, ...) \
  case code:                         \
    return INDEX_##ENUM;
#include "src/generated/errors.inc"
#undef DLMAP_ERROR
    default:
      return -1;
  }
}

const dlmap_error_info *dlmap_error_describe(int32_t code) {
  int index = error_index(code);
  return index < 0 ? &kUnknown : &kErrors[index];
}

const dlmap_error_info *dlmap_error_find_by_id(const char *id) {
  if (id == NULL) return NULL;
  for (size_t i = 0; i < sizeof kErrors / sizeof kErrors[0]; i++) {
    if (strcmp(kErrors[i].id, id) == 0) return &kErrors[i];
  }
  return NULL;
}

const dlmap_error_info *dlmap_error_at(size_t index) {
  return index < sizeof kErrors / sizeof kErrors[0] ? &kErrors[index] : NULL;
}

size_t dlmap_error_related(int32_t code, const dlmap_error_info **out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < sizeof kRelated / sizeof kRelated[0]; i++) {
    if (kRelated[i].code != code || code == DLMAP_OK) continue;
    if (n < cap && out != NULL) out[n] = dlmap_error_describe(kRelated[i].related);
    n++;
  }
  return n;
}

const char *dlmap_error_kind_name(dlmap_error_kind kind) {
  return (unsigned)kind < (unsigned)DLMAP_KIND_COUNT ? kKindNames[kind] : "RuntimeError";
}

const char *dlmap_placeholder_name(dlmap_placeholder name) {
  return (unsigned)name < (unsigned)DLMAP_ARG_COUNT ? kPlaceholders[name].name : NULL;
}

bool dlmap_placeholder_type(dlmap_placeholder name, dlmap_arg_type *out) {
  if ((unsigned)name >= (unsigned)DLMAP_ARG_COUNT) return false;
  if (out != NULL) *out = kPlaceholders[name].type;
  return true;
}

/* The bytes that mark a placeholder in a compiled template, as the generator writes them (placeholders.inc's
 * DLMAP_STYLE_MARKER rows). A marker is the template's byte before the index: MARKER_PLAIN, or the placeholder's style:
 * MARKER_TUPLE / MARKER_PACKED its type's style (a version as "(0, 5)", ints without spaces); MARKER_MAJOR a version's
 * major only ({version:major} prints 2); MARKER_S and MARKER_WAS an int's plural words alone ({takes:s}: "s" unless
 * 1; {given:was}: "was" for 1, else "were"); MARKER_TEXT a device's profile text ({device:text}). */
enum {
#define DLMAP_STYLE_MARKER(STYLE, byte, ...) MARKER_##STYLE = byte,
#include "src/generated/placeholders.inc"
#undef DLMAP_STYLE_MARKER
};
/* {x:tuple} and {x:packed} are one marker, the type's style (a version as a tuple, ints packed): one compare tests it. */
_Static_assert(MARKER_TUPLE == MARKER_PACKED, "the tuple and packed styles share the type-style marker");

static const char kMarkers[] = {
#define DLMAP_STYLE_MARKER(STYLE, byte, ...) (char)(byte),
#include "src/generated/placeholders.inc"
#undef DLMAP_STYLE_MARKER
    '\0'};

/* A device: (kDLCUDA, 0); styled ({device:tuple}) its numbers, (2, 0); {device:text} the profile's device_texts entry
 * for its type with {id} replaced by the id, where the profile has one (else the first form). */
static void put_device(dlmap__writer *w, DLDevice device, char marker) {
  const char *text = marker == MARKER_TEXT ? dlmap_profile_device_text((int32_t)device.device_type) : NULL;
  if (text != NULL) {
    for (const char *id; (id = strstr(text, "{id}")) != NULL; text = id + 4) {
      dlmap__put_bytes(w, text, (size_t)(id - text));
      dlmap__put_int(w, device.device_id);
    }
    dlmap__put_str(w, text);
    return;
  }
  dlmap__put_str(w, "(");
  if (marker == MARKER_TUPLE) {
    dlmap__put_int(w, (int64_t)device.device_type);
  } else {
    dlmap__put_str(w, dlmap_device_type_name((int32_t)device.device_type));
  }
  dlmap__put_str(w, ", ");
  dlmap__put_int(w, device.device_id);
  dlmap__put_str(w, ")");
}

static void put_arg(dlmap__writer *w, const dlmap_arg *arg, char marker) {
  const bool styled = marker == MARKER_TUPLE; /* or MARKER_PACKED, the same byte */
  if ((marker == MARKER_S || marker == MARKER_WAS) && arg->type == DLMAP_ARG_TYPE_INT) {
    const bool one = arg->value.i == 1;
    if (marker == MARKER_WAS) dlmap__put_str(w, one ? "was" : "were");
    if (marker == MARKER_S && !one) dlmap__put_bytes(w, "s", 1);
    return;
  }
  if (marker == MARKER_MAJOR && arg->type == DLMAP_ARG_TYPE_VERSION) {
    dlmap__put_uint(w, arg->value.v.major);
    return;
  }
  if (styled && arg->type == DLMAP_ARG_TYPE_VERSION) {
    dlmap__put_bytes(w, "(", 1);
    dlmap__put_uint(w, arg->value.v.major);
    dlmap__put_bytes(w, ", ", 2);
    dlmap__put_uint(w, arg->value.v.minor);
    dlmap__put_bytes(w, ")", 1);
    return;
  }
  switch (arg->type) {
    case DLMAP_ARG_TYPE_INT:
      dlmap__put_int(w, arg->value.i);
      return;
    case DLMAP_ARG_TYPE_UINT:
      dlmap__put_uint(w, arg->value.u);
      return;
    case DLMAP_ARG_TYPE_HEX:
      dlmap__put_hex(w, arg->value.u);
      return;
    case DLMAP_ARG_TYPE_PTR:
      dlmap__put_hex(w, (uint64_t)(uintptr_t)arg->value.p);
      return;
    case DLMAP_ARG_TYPE_STR:
      dlmap__put_str(w, arg->value.s);
      return;
    case DLMAP_ARG_TYPE_VERSION:
      dlmap__put_version(w, arg->value.v);
      return;
    case DLMAP_ARG_TYPE_DEVICE:
      put_device(w, arg->value.d, marker);
      return;
    case DLMAP_ARG_TYPE_INTS:
      if (arg->value.list.items == NULL) {
        dlmap__put_str(w, NULL);
        return;
      }
      for (int32_t i = 0; i < arg->value.list.count && !w->truncated; i++) {
        if (i > 0) dlmap__put_bytes(w, ", ", styled ? 1 : 2);
        dlmap__put_int(w, arg->value.list.items[i]);
      }
      return;
  }
  dlmap__put_str(w, "(bad argument type)");
}

size_t dlmap_error_format(char *buf, size_t cap, int32_t code, const dlmap_arg *args, size_t nargs) {
  dlmap__writer w;
  int index = error_index(code);
  dlmap__writer_init(&w, buf, cap);
  if (index < 0) {
    dlmap__put_str(&w, "unknown dlmap status code ");
    dlmap__put_int(&w, code);
    return dlmap__writer_finish(&w);
  }
  for (const char *p = kCompiled[index]; *p != '\0' && !w.truncated;) {
    const char *mark = strpbrk(p, kMarkers);
    if (mark == NULL) {
      dlmap__put_str(&w, p);
      break;
    }
    dlmap__put_bytes(&w, p, (size_t)(mark - p));
    const int placeholder = (unsigned char)mark[1] - 1;
    const dlmap_arg *arg = NULL;
    for (size_t i = 0; args != NULL && i < nargs; i++) {
      if ((int)args[i].name == placeholder) arg = &args[i];
    }
    if (arg != NULL) {
      put_arg(&w, arg, mark[0]);
    } else { /* a value the caller did not supply shows as its {name}, never as garbage */
      dlmap__put_bytes(&w, "{", 1);
      dlmap__put_str(&w, kPlaceholders[placeholder].name);
      dlmap__put_bytes(&w, "}", 1);
    }
    p = mark + 2;
  }
  return dlmap__writer_finish(&w);
}

int32_t dlmap_error_set(dlmap_error *err, int32_t code, const dlmap_arg *args, size_t nargs) {
  if (err != NULL && code == DLMAP_OK) { /* success clears the error object */
    err->code = DLMAP_OK;
    err->kind = DLMAP_KIND_COUNT;
    err->id = "ok";
    err->message[0] = '\0';
  } else if (err != NULL) {
    const dlmap_error_info *info = dlmap_error_describe(code);
    err->code = code;
    err->kind = info->kind;
    err->id = info->id;
    dlmap_error_format(err->message, sizeof err->message, code, args, nargs);
  }
  return code;
}
