/* dlmap CLI — entry point: `dlmap devices | explain | spec check`, usage text and exit codes. */
#include <string.h>

#include "tools/cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: dlmap <command> [arguments]\n"
          "\n"
          "commands:\n"
          "  devices                  the DLPack device types of this build's spec, and which platforms\n"
          "                           this build and machine can serve (and why not)\n"
          "  explain <what>           the spec's entry for a device type (value or name), platform, data\n"
          "                           type, or error (code or id), with the errors a user would meet\n"
          "  spec check [--on-default] FILE...\n"
          "                           validate spec files with the generator's messages; --on-default\n"
          "                           reads them as an overlay on the default spec\n"
          "  demo                     export a host array and import it back (versioned and legacy,\n"
          "                           layout policies), then show rejected requests and inputs\n"
          "  version, --version       this CLI's version, the DLPack version of its spec, and its profile\n"
          "  help                     this text\n"
          "\n"
          "exit status: 0 success, 1 failure (unknown name, invalid spec), 2 usage error\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *command = argv[1];
  if (strcmp(command, "devices") == 0) return cli_devices(argc - 2, argv + 2);
  if (strcmp(command, "explain") == 0) return cli_explain(argc - 2, argv + 2);
  if (strcmp(command, "demo") == 0) return cli_demo(argc - 2, argv + 2);
  if (strcmp(command, "spec") == 0) return cli_spec(argc - 2, argv + 2, argv[0]);
  if (strcmp(command, "version") == 0 || strcmp(command, "--version") == 0) return cli_version(argc - 2, argv + 2);
  if (strcmp(command, "help") == 0 || strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  fprintf(stderr, "dlmap: unknown command '%s'\n\n", command);
  usage(stderr);
  return CLI_USAGE;
}
