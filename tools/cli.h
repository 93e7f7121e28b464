/* dlmap CLI — the subcommands and the few helpers they share. */
#ifndef DLMAP_TOOLS_CLI_H_
#define DLMAP_TOOLS_CLI_H_

#include <stdio.h>

#include "dlmap/dlmap.h"

/* Exit codes: what a C command-line user expects. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* The name the CLI calls itself in usage, help and errors: the Bazel target it was built as (dlmap_cli() passes
 * it); "dlmap" when built otherwise. */
#ifndef DLMAP_CLI_NAME
#define DLMAP_CLI_NAME "dlmap"
#endif

int cli_devices(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_spec(int argc, char **argv, const char *argv0);
int cli_demo(int argc, char **argv);
int cli_version(int argc, char **argv);

/* Prints text word-wrapped at 100 columns, each line starting with indent. */
void cli_wrap(FILE *out, const char *indent, const char *text);

/* Prints a catalogue page; when message is not NULL it is shown instead of the template. */
void cli_print_error_page(FILE *out, const dlmap_error_info *info, const char *message);

/* "Did you mean" (cli_suggest.c): the closest known names to what was typed, within a few edits. */
enum { CLI_SUGGEST_MAX = 4, CLI_SUGGEST_MAX_LEN = 64 };
typedef struct cli_suggestions {
  const char *typed;
  size_t distance;                     /* of the names kept; the threshold + 1 while none is */
  size_t count;
  const char *names[CLI_SUGGEST_MAX];  /* static strings: table entries or literals */
  const char *kinds[CLI_SUGGEST_MAX];  /* "device type", "platform", …; "" for none */
} cli_suggestions;

size_t cli_edit_distance(const char *a, const char *b);
void cli_suggest_init(cli_suggestions *s, const char *typed);
void cli_suggest_consider(cli_suggestions *s, const char *name, const char *kind);
/* Prints "dlmap: did you mean X (kind) or Y (kind)?" and a newline; nothing when no name was close. */
void cli_suggest_print(FILE *out, const cli_suggestions *s);

/* Considers every name `explain` accepts, from the generated tables (cli_names.c). */
void cli_suggest_spec_names(cli_suggestions *s);

#endif /* DLMAP_TOOLS_CLI_H_ */
