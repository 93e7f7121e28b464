/* dlmap CLI — entry point: `dlmap devices | explain | spec check | demo | version`, usage text and exit codes. */
#include <string.h>

#include "tools/cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: %s <command> [arguments]\n"
          "\n"
          "commands:\n"
          "  devices                  the DLPack device types of this build's spec, and which platforms\n"
          "                           this build and machine can serve (and why not)\n"
          "  explain <what>           the spec's entry for a device type (value or name), platform, data\n"
          "                           type, or error (code or id), with the errors a user would meet\n"
          "                           (a name or number that is several says so; a prefix device:,\n"
          "                           platform:, dtype: or error: shows only that kind: error:201)\n"
          "  spec check [--on-default] FILE...\n"
          "                           validate spec files with the generator's messages; --on-default\n"
          "                           reads them as an overlay on the spec this CLI was built from;\n"
          "                           under `bazel run`, relative paths are from the calling directory\n"
          "  demo                     export a host array and import it back (versioned and legacy,\n"
          "                           layout policies), then show rejected requests and inputs\n"
          "  version, --version       this CLI's version, the DLPack version of its spec, and its profile\n"
          "  help                     this text\n"
          "\n"
          "exit status: 0 success, 1 failure (unknown name, invalid spec), 2 usage error\n",
          DLMAP_CLI_NAME);
}

static const char *g_argv0;

static int run_spec(int argc, char **argv) { return cli_spec(argc, argv, g_argv0); }

static int run_help(int argc, char **argv) {
  (void)argc, (void)argv;
  usage(stdout);
  return CLI_OK;
}

/* The commands and their spellings: dispatch, and the names "did you mean" offers for an unknown one. */
static const struct {
  const char *name;
  int (*run)(int argc, char **argv);
} kCommands[] = {
    {"devices", cli_devices}, {"explain", cli_explain}, {"spec", run_spec},   {"demo", cli_demo},
    {"version", cli_version}, {"--version", cli_version}, {"help", run_help}, {"--help", run_help},
    {"-h", run_help},
};

int main(int argc, char **argv) {
  g_argv0 = argv[0];
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *command = argv[1];
  const size_t count = sizeof kCommands / sizeof kCommands[0];
  for (size_t i = 0; i < count; i++) {
    if (strcmp(command, kCommands[i].name) == 0) return kCommands[i].run(argc - 2, argv + 2);
  }
  fprintf(stderr, "%s: unknown command '%s'; try: %s help\n", DLMAP_CLI_NAME, command, DLMAP_CLI_NAME);
  cli_suggestions near;
  cli_suggest_init(&near, command);
  for (size_t i = 0; i < count; i++) cli_suggest_consider(&near, kCommands[i].name, "");
  cli_suggest_print(stderr, &near);
  return CLI_USAGE;
}
