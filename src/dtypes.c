/* dlmap core — DLPack data types from the spec: code info, valid widths, validation with the exact
 * catalogue error, and readable names. */
#include "src/internal.h"

static const dlmap_dtype_code_info kCodes[] = {
#define DLMAP_DTYPE_CODE(value, ENUM, name_, major_, minor_, upstream_main_, LANES, doc_, ...) \
  {                                                                                        \
      .code = value,                                                                       \
      .name = name_,                                                                       \
      .introduced = {.major = major_, .minor = minor_},                                    \
      .vector_lanes = DLMAP_LANES_##LANES,                                                 \
      .doc = doc_,                                                                         \
      .upstream_main = upstream_main_,                                                     \
  },
#define DLMAP_LANES_VECTOR true
#define DLMAP_LANES_SCALAR false
#include "src/generated/dtype_codes.inc"
#undef DLMAP_LANES_VECTOR
#undef DLMAP_LANES_SCALAR
#undef DLMAP_DTYPE_CODE
};

typedef struct width_row {
  uint8_t code;
  uint8_t bits;
  const char *name; /* NULL when unnamed */
  dlmap_version introduced;
} width_row;

static const width_row kWidths[] = {
#define DLMAP_DTYPE_WIDTH(code_, bits_, name_, major_, minor_, ...) \
  {.code = code_, .bits = bits_, .name = name_, .introduced = {.major = major_, .minor = minor_}},
#include "src/generated/dtype_widths.inc"
#undef DLMAP_DTYPE_WIDTH
    {.code = 0, .bits = 0, .name = NULL, .introduced = {0, 0}} /* sentinel: bits 0 is never valid */
};

/* code → index in kCodes, or -1; built at compile time from the generated list. */
static int code_index(uint8_t code) {
  enum {
#define DLMAP_DTYPE_CODE(value, ENUM, ...) CODE_INDEX_##ENUM,
#include "src/generated/dtype_codes.inc"
#undef DLMAP_DTYPE_CODE
    CODE_INDEX_END
  };
  switch (code) {
#define DLMAP_DTYPE_CODE(value, ENUM, ...) \
  case value:                              \
    return CODE_INDEX_##ENUM;
#include "src/generated/dtype_codes.inc"
#undef DLMAP_DTYPE_CODE
    default:
      return -1;
  }
}

/* (code, bits) → its row in kWidths, or NULL: a switch built at compile time from the generated list, like
 * code_index (every dtype check goes through here, three times per export or import). */
static const width_row *find_width(uint8_t code, uint8_t bits) {
  enum {
#define DLMAP_DTYPE_WIDTH(code, bits, ...) WIDTH_INDEX_##code##_##bits,
#include "src/generated/dtype_widths.inc"
#undef DLMAP_DTYPE_WIDTH
    WIDTH_INDEX_END
  };
  if (bits == 0) return NULL;
  switch ((unsigned)code << 8 | bits) {
#define DLMAP_DTYPE_WIDTH(code, bits, ...)       \
  case (unsigned)(code) << 8 | (unsigned)(bits): \
    return &kWidths[WIDTH_INDEX_##code##_##bits];
#include "src/generated/dtype_widths.inc"
#undef DLMAP_DTYPE_WIDTH
    default:
      return NULL;
  }
}

const dlmap_dtype_code_info *dlmap_dtype_code_find(uint8_t code) {
  int index = code_index(code);
  return index < 0 ? NULL : &kCodes[index];
}

const char *dlmap_dtype_code_name(uint8_t code) {
  const dlmap_dtype_code_info *info = dlmap_dtype_code_find(code);
  return info != NULL ? info->name : NULL;
}

const dlmap_dtype_code_info *dlmap_dtype_code_at(size_t index) {
  return index < sizeof kCodes / sizeof kCodes[0] ? &kCodes[index] : NULL;
}

bool dlmap_dtype_width_valid(uint8_t code, uint8_t bits, dlmap_version *introduced) {
  const width_row *width = find_width(code, bits);
  if (width != NULL && introduced != NULL) *introduced = width->introduced;
  return width != NULL;
}

size_t dlmap_dtype_format_valid_bits(uint8_t code, char *buf, size_t cap) {
  dlmap__writer w;
  size_t n = 0;
  dlmap__writer_init(&w, buf, cap);
  for (size_t i = 0; i < sizeof kWidths / sizeof kWidths[0]; i++) {
    if (kWidths[i].code != code || kWidths[i].bits == 0) continue;
    if (n++ > 0) dlmap__put_str(&w, ", ");
    dlmap__put_uint(&w, kWidths[i].bits);
  }
  if (n == 0) dlmap__put_str(&w, "none");
  return dlmap__writer_finish(&w);
}

int32_t dlmap_dtype_validate(DLDataType dtype, dlmap_error *err) {
  const dlmap_dtype_code_info *code = dlmap_dtype_code_find(dtype.code);
  if (code == NULL) {
    return dlmap_raise_dtype_code_unknown(err, dtype.code);
  }
  if (find_width(dtype.code, dtype.bits) == NULL) {
    char valid[128];
    dlmap_dtype_format_valid_bits(dtype.code, valid, sizeof valid);
    return dlmap_raise_dtype_bits_invalid(err, code->name, dtype.bits, valid);
  }
  if (dtype.lanes == 0 || (dtype.lanes > 1 && !code->vector_lanes)) {
    return dlmap_raise_dtype_lanes_invalid(err, code->name, dtype.lanes);
  }
  return DLMAP_OK;
}

const char *dlmap_dtype_width_name(uint8_t code, uint8_t bits) {
  const width_row *width = find_width(code, bits);
  return width != NULL ? width->name : NULL;
}

size_t dlmap_dtype_format(DLDataType dtype, char *buf, size_t cap) {
  dlmap__writer w;
  const char *name = dlmap_dtype_width_name(dtype.code, dtype.bits);
  dlmap__writer_init(&w, buf, cap);
  if (name != NULL && dtype.lanes >= 1) {
    dlmap__put_str(&w, name);
    if (dtype.lanes > 1) {
      dlmap__put_str(&w, "x");
      dlmap__put_uint(&w, dtype.lanes);
    }
  } else {
    dlmap__put_str(&w, "(code ");
    dlmap__put_uint(&w, dtype.code);
    dlmap__put_str(&w, ", bits ");
    dlmap__put_uint(&w, dtype.bits);
    dlmap__put_str(&w, ", lanes ");
    dlmap__put_uint(&w, dtype.lanes);
    dlmap__put_str(&w, ")");
  }
  return dlmap__writer_finish(&w);
}
