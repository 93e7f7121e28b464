/* dlmap CLI — "did you mean": the edit distance between what was typed and a known name, and the closest names.
 * Callers feed it names taken from the generated tables (cli_names.c) or the CLI's own command list. */
#include <string.h>

#include "tools/cli.h"

static char fold(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

/* Optimal string alignment distance (insertions, deletions, substitutions, adjacent transpositions), ignoring
 * ASCII case: the spec's lookups ignore case for some names, and a typo in case alone is still a near miss.
 * Names longer than CLI_SUGGEST_MAX_LEN are never close ((size_t)-1). */
size_t cli_edit_distance(const char *a, const char *b) {
  const size_t n = strlen(a), m = strlen(b);
  if (n > CLI_SUGGEST_MAX_LEN || m > CLI_SUGGEST_MAX_LEN) return (size_t)-1;
  size_t table[CLI_SUGGEST_MAX_LEN + 1][CLI_SUGGEST_MAX_LEN + 1];
  for (size_t i = 0; i <= n; i++) table[i][0] = i;
  for (size_t j = 0; j <= m; j++) table[0][j] = j;
  for (size_t i = 1; i <= n; i++) {
    for (size_t j = 1; j <= m; j++) {
      const size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
      size_t best = table[i - 1][j] + 1;
      if (table[i][j - 1] + 1 < best) best = table[i][j - 1] + 1;
      if (table[i - 1][j - 1] + cost < best) best = table[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
          table[i - 2][j - 2] + 1 < best) {
        best = table[i - 2][j - 2] + 1;
      }
      table[i][j] = best;
    }
  }
  return table[n][m];
}

/* Close enough to suggest: a third of the typed length, at least 1 and at most 3 edits. */
static size_t threshold(const char *typed) {
  size_t limit = strlen(typed) / 3;
  return limit < 1 ? 1 : limit > 3 ? 3 : limit;
}

void cli_suggest_init(cli_suggestions *s, const char *typed) {
  memset(s, 0, sizeof *s);
  s->typed = typed;
  s->distance = threshold(typed) + 1;
}

void cli_suggest_consider(cli_suggestions *s, const char *name, const char *kind) {
  const size_t d = cli_edit_distance(s->typed, name);
  if (d == 0 || d > s->distance) return; /* an exact match is no suggestion (it matched, or is another case) */
  if (d < s->distance) {
    s->count = 0;
    s->distance = d;
  }
  for (size_t i = 0; i < s->count; i++) {
    if (strcmp(s->names[i], name) == 0 && strcmp(s->kinds[i], kind) == 0) return;
  }
  if (s->count < CLI_SUGGEST_MAX) {
    s->names[s->count] = name;
    s->kinds[s->count] = kind;
    s->count++;
  }
}

void cli_suggest_print(FILE *out, const cli_suggestions *s) {
  if (s->count == 0) return;
  fprintf(out, "%s: did you mean ", DLMAP_CLI_NAME);
  for (size_t i = 0; i < s->count; i++) {
    fprintf(out, "%s%s", i == 0 ? "" : i + 1 == s->count ? " or " : ", ", s->names[i]);
    if (s->kinds[i][0] != '\0') fprintf(out, " (%s)", s->kinds[i]);
  }
  fprintf(out, "?\n");
}
