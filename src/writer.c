/* dlmap core — bounded text writing into caller memory, for messages and names (never allocates). */
#include <string.h>

#include "src/internal.h"

void dlmap__writer_init(dlmap__writer *w, char *buf, size_t cap) {
  w->buf = buf;
  w->cap = cap;
  w->len = 0;
  w->truncated = false;
  if (cap > 0) buf[0] = '\0';
}

void dlmap__put_bytes(dlmap__writer *w, const char *text, size_t n) {
  size_t room = w->cap > w->len ? w->cap - w->len - 1 : 0; /* keep one byte for the NUL */
  if (w->cap == 0) {
    w->truncated = w->truncated || n > 0;
    return;
  }
  if (n > room) {
    n = room;
    w->truncated = true;
  }
  memcpy(w->buf + w->len, text, n);
  w->len += n;
  w->buf[w->len] = '\0';
}

void dlmap__put_str(dlmap__writer *w, const char *text) {
  if (text == NULL) text = "(null)";
  dlmap__put_bytes(w, text, strlen(text));
}

void dlmap__put_uint(dlmap__writer *w, uint64_t value) {
  char digits[20];
  size_t n = 0;
  do {
    digits[sizeof digits - 1 - n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value != 0);
  dlmap__put_bytes(w, digits + sizeof digits - n, n);
}

void dlmap__put_int(dlmap__writer *w, int64_t value) {
  if (value < 0) {
    dlmap__put_bytes(w, "-", 1);
    /* negate in unsigned arithmetic: well defined for INT64_MIN */
    dlmap__put_uint(w, (uint64_t)0 - (uint64_t)value);
  } else {
    dlmap__put_uint(w, (uint64_t)value);
  }
}

void dlmap__put_hex(dlmap__writer *w, uint64_t value) {
  static const char hex[] = "0123456789abcdef";
  char digits[18];
  size_t n = 0;
  do {
    digits[sizeof digits - 1 - n++] = hex[value & 15u];
    value >>= 4;
  } while (value != 0);
  digits[sizeof digits - 1 - n++] = 'x';
  digits[sizeof digits - 1 - n++] = '0';
  dlmap__put_bytes(w, digits + sizeof digits - n, n);
}

void dlmap__put_version(dlmap__writer *w, dlmap_version v) {
  dlmap__put_uint(w, v.major);
  dlmap__put_bytes(w, ".", 1);
  dlmap__put_uint(w, v.minor);
}

size_t dlmap__writer_finish(dlmap__writer *w) {
  if (w->truncated && w->cap >= 4) {
    /* back up to a UTF-8 boundary so the ellipsis never splits a character */
    size_t end = w->len < 3 ? 0 : w->len - 3;
    while (end > 0 && ((unsigned char)w->buf[end] & 0xC0u) == 0x80u) end--;
    memcpy(w->buf + end, "...", 4);
    w->len = end + 3;
  }
  return w->len;
}
