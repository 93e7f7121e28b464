/* dlmap CLI — `dlmap --version`: this library's version, the DLPack version of the spec it was generated from, and
 * the profile in force and the peer releases it reproduces. */
#include "tools/cli.h"

#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

int cli_version(int argc, char **argv) {
  (void)argv;
  if (argc != 0) {
    fprintf(stderr, "usage: %s --version\n", DLMAP_CLI_NAME);
    return CLI_USAGE;
  }
  /* The header's version (what the CLI was compiled against) and the linked library's (they are one build here). */
  printf("%s %s\n", DLMAP_CLI_NAME,
         CLI_STR(DLMAP_VERSION_MAJOR) "." CLI_STR(DLMAP_VERSION_MINOR) "." CLI_STR(DLMAP_VERSION_PATCH));
  printf("  library: dlmap %s\n", dlmap_version_string());
  printf("  spec:    DLPack %u.%u\n", DLMAP_ABI_CURRENT_MAJOR, DLMAP_ABI_CURRENT_MINOR); /* the generated header's */
  printf("  profile: %s\n", dlmap_profile_current()->name);
  printf("  models:  %s\n", dlmap_profile_current()->models); /* the peer releases the profile reproduces */
  return CLI_OK;
}
