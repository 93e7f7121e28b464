/* dlmap core — re2c skeleton for the name lookups; the rules come from the spec (generated *.re.inc).
 *
 * Each matcher reads a (pointer, length) string through re2c's generic API and never reads past its
 * end; a rule matches only when it consumed the whole input. Built with -W -Werror, so two spec names
 * that collide (a shadowed rule) fail the build. */
#include <stddef.h>
#include <stdint.h>

#include "src/internal.h"
#include "src/name_lookup.h"

/*!re2c
  re2c:api = custom;
  re2c:api:style = free-form;
  re2c:define:YYCTYPE = "unsigned char";
  re2c:define:YYPEEK = "(cur < lim ? (unsigned char)*cur : 0)";
  re2c:define:YYSKIP = "++cur;";
  re2c:define:YYBACKUP = "mar = cur;";
  re2c:define:YYRESTORE = "cur = mar;";
  re2c:define:YYLESSTHAN = "cur >= lim";
  re2c:yyfill:enable = 0;
  re2c:eof = 0;
*/

/* A whole-input match: the rule fired and nothing is left over. */
#define DLMAP_FOUND(value) return cur == lim ? (*out = (value), 1) : 0

static int match_device(const char *cur, const char *lim, int64_t *out) {
  const char *mar;
  (void)mar;
  /*!local:re2c
    !include "device_names.re.inc";
    * { return 0; }
    $ { return 0; }
  */
}

static int match_platform(const char *cur, const char *lim, int64_t *out) {
  const char *mar;
  (void)mar;
  /*!local:re2c
    !include "platform_names.re.inc";
    * { return 0; }
    $ { return 0; }
  */
}

#define DLMAP_DTYPE_KEY(code, bits) ((int64_t)(code) << 8 | (int64_t)(bits))

static int match_dtype(const char *cur, const char *lim, int64_t *out) {
  const char *mar;
  (void)mar;
  /*!local:re2c
    !include "dtype_names.re.inc";
    * { return 0; }
    $ { return 0; }
  */
}

#undef DLMAP_FOUND
/* A word match anywhere: the rule fired at this position, whatever follows. */
#define DLMAP_FOUND(value) return (*out = (value), 1)

static int match_word(const char *cur, const char *lim, int64_t *out) {
  const char *mar;
  (void)mar;
  /*!local:re2c
    !include "platform_words.re.inc";
    * { return 0; }
    $ { return 0; }
  */
}

bool dlmap_device_type_parse(const char *name, size_t len, int32_t *out) {
  int64_t value;
  if (name == NULL || !match_device(name, name + len, &value)) return false;
  *out = (int32_t)value;
  return true;
}

int dlmap__platform_from_name(const char *name, size_t len) {
  int64_t value;
  return name != NULL && match_platform(name, name + len, &value) ? (int)value : -1;
}

bool dlmap_dtype_parse(const char *name, size_t len, DLDataType *out) {
  int64_t key;
  if (name == NULL || !match_dtype(name, name + len, &key)) return false;
  out->code = (uint8_t)(key >> 8);
  out->bits = (uint8_t)(key & 0xff);
  out->lanes = 1;
  return true;
}

int dlmap__platform_from_words(const char *text, size_t len) {
  /* Collect every platform whose word occurs, then return the first in spec order: JAX tests
   * "cuda", then "rocm", then "oneapi" in platform_version, and the spec lists them in that order. */
  uint64_t seen = 0;
  for (size_t i = 0; i < len; i++) {
    int64_t platform;
    if (match_word(text + i, text + len, &platform) && platform < 64) seen |= UINT64_C(1) << platform;
  }
  for (int platform = 0; platform < DLMAP_PLATFORM_COUNT && platform < 64; platform++) {
    if (seen & (UINT64_C(1) << platform)) return platform;
  }
  return -1;
}
