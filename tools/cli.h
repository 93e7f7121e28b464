/* dlmap CLI — the subcommands and the few helpers they share. */
#ifndef DLMAP_TOOLS_CLI_H_
#define DLMAP_TOOLS_CLI_H_

#include <stdio.h>

#include "dlmap/dlmap.h"

/* Exit codes: what a C command-line user expects. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

int cli_devices(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_spec(int argc, char **argv, const char *argv0);
int cli_demo(int argc, char **argv);

/* Prints text word-wrapped at 100 columns, each line starting with indent. */
void cli_wrap(FILE *out, const char *indent, const char *text);

/* Prints a catalogue page; when message is not NULL it is shown instead of the template. */
void cli_print_error_page(FILE *out, const dlmap_error_info *info, const char *message);

#endif /* DLMAP_TOOLS_CLI_H_ */
