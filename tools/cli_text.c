/* dlmap CLI — text layout shared by the subcommands: word wrapping and the catalogue page. */
#include <string.h>

#include "tools/cli.h"

void cli_wrap(FILE *out, const char *indent, const char *text) {
  const size_t width = 100, lead = strlen(indent);
  size_t column = 0;
  while (*text != '\0') {
    while (*text == ' ') text++;
    size_t word = strcspn(text, " ");
    if (word == 0) break;
    if (column > 0 && column + 1 + word > width) {
      fputc('\n', out);
      column = 0;
    }
    if (column == 0) {
      fputs(indent, out);
      column = lead;
    } else {
      fputc(' ', out);
      column++;
    }
    fwrite(text, 1, word, out);
    column += word;
    text += word;
  }
  if (column > 0) fputc('\n', out);
}

void cli_print_error_page(FILE *out, const dlmap_error_info *info, const char *message) {
  char status[96];
  size_t n = 0;
  for (const char *p = info->id; *p != '\0' && n + 1 < sizeof status; p++) {
    status[n++] = (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : *p;
  }
  status[n] = '\0';
  fprintf(out, "Error %s (code %d, %s, C status DLMAP_ERR_%s)\n", info->id, info->code,
          dlmap_error_kind_name(info->kind), status);
  fprintf(out, "  Message:\n");
  /* the message stays on one line, so it can be searched for verbatim */
  fprintf(out, "    %s\n", message != NULL ? message : info->message_template);
  const char *text_from = dlmap_profile_error_origin(info->code).message; /* NULL: the catalogue's own text */
  if (text_from != NULL) fprintf(out, "  text: from profile %s\n", text_from);
  fprintf(out, "  What it means:\n");
  cli_wrap(out, "    ", info->meaning);
  fprintf(out, "  When it happens:\n");
  cli_wrap(out, "    ", info->when);
  fprintf(out, "  How to fix it:\n");
  cli_wrap(out, "    ", info->fix);
  const dlmap_error_info *related[16];
  size_t count = dlmap_error_related(info->code, related, 16);
  if (count > 16) count = 16;
  if (count > 0) {
    fprintf(out, "  Related errors:");
    for (size_t i = 0; i < count; i++) fprintf(out, "%s %s (%d)", i ? "," : "", related[i]->id, related[i]->code);
    fprintf(out, "\n");
  }
}
