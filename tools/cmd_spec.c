/* dlmap CLI — `dlmap spec check [--on-default] FILE...`: runs the generator's own validator
 * (codegen/check_spec.py) so a spec is judged by exactly the messages the build would print. */
#include <glob.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/cli.h"

extern char **environ;

enum { MAX_FILES = 64 };

/* The directories dlmap's own files may have in a runfiles tree: its repository name under WORKSPACE, the main
 * repository under bzlmod (dlmap built as itself), and its canonical names as a bzlmod dependency (Bazel 7, 8). */
static const char *const kRunfilesRepositories[] = {"dlmap", "_main", "dlmap~", "dlmap+"};

/* out = <base>/<repository>/<subdir>; false (and out empty) when it does not fit, which -O2's -Wformat-truncation
 * also asks to check. */
static bool join(const char *base, const char *repository, const char *subdir, char *out, size_t cap) {
  if (snprintf(out, cap, "%s/%s/%s", base, repository, subdir) < (int)cap) return true;
  if (cap > 0) out[0] = '\0';
  return false;
}

/* The first repository directory in the runfiles tree `base` that has subdir (the first one named when none has). */
static void in_runfiles(const char *base, const char *subdir, char *out, size_t cap) {
  for (size_t i = 0; i < sizeof kRunfilesRepositories / sizeof kRunfilesRepositories[0]; i++) {
    if (join(base, kRunfilesRepositories[i], subdir, out, cap) && access(out, F_OK) == 0) return;
  }
  join(base, kRunfilesRepositories[0], subdir, out, cap);
}

/* Where the generator and the default spec are: $DLMAP_CODEGEN_DIR and $DLMAP_SPEC_DIR when set
 * (an installed CLI), else the Bazel runfiles next to the binary. */
static void locate(const char *argv0, const char *variable, const char *subdir, char *out, size_t cap) {
  const char *set = getenv(variable);
  if (set != NULL && set[0] != '\0') {
    snprintf(out, cap, "%s", set);
    return;
  }
  const char *runfiles = getenv("RUNFILES_DIR");
  if (runfiles != NULL && runfiles[0] != '\0') {
    in_runfiles(runfiles, subdir, out, cap);
    return;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
  } else {
    snprintf(self, sizeof self, "%s", argv0);
  }
  char base[4096 + 16];
  snprintf(base, sizeof base, "%s.runfiles", self);
  in_runfiles(base, subdir, out, cap);
}

static int usage(void) {
  fprintf(stderr, "usage: dlmap spec check [--on-default] FILE...\n");
  return CLI_USAGE;
}

int cli_spec(int argc, char **argv, const char *argv0) {
  if (argc < 1 || strcmp(argv[0], "check") != 0) return usage();
  argc--, argv++;
  const bool on_default = argc > 0 && strcmp(argv[0], "--on-default") == 0;
  if (on_default) argc--, argv++;
  if (argc < 1 || argc > MAX_FILES) return usage();

  char codegen[4096], spec_dir[4096], checker[4200], pattern[4200], profile[4400];
  locate(argv0, "DLMAP_CODEGEN_DIR", "codegen", codegen, sizeof codegen);
  snprintf(checker, sizeof checker, "%s/check_spec.py", codegen);
  if (access(checker, R_OK) != 0) {
    fprintf(stderr, "dlmap: cannot find the spec checker at %s (set DLMAP_CODEGEN_DIR to dlmap's codegen/)\n",
            checker);
    return CLI_FAILED;
  }

  /* argv for: python3 check_spec.py [default spec files] FILE... */
  char *child[2 * MAX_FILES + 4];
  int n = 0;
  child[n++] = (char *)DLMAP_PYTHON;
  child[n++] = checker;
  glob_t defaults = {0};
  if (on_default) {
    /* Each section of the default spec lives in one file, so their order does not matter; the
     * user's overlay files come after them. */
    locate(argv0, "DLMAP_SPEC_DIR", "spec", spec_dir, sizeof spec_dir);
    snprintf(pattern, sizeof pattern, "%s/*.yaml", spec_dir);
    if (glob(pattern, 0, NULL, &defaults) != 0 || defaults.gl_pathc > MAX_FILES) {
      fprintf(stderr, "dlmap: cannot find the default spec at %s (set DLMAP_SPEC_DIR)\n", spec_dir);
      globfree(&defaults);
      return CLI_FAILED;
    }
    for (size_t i = 0; i < defaults.gl_pathc; i++) child[n++] = defaults.gl_pathv[i];
    /* The facts, then the profile this CLI was built with (spec/profiles/<name>.yaml). */
    snprintf(profile, sizeof profile, "%s/profiles/%s.yaml", spec_dir, dlmap_profile_current()->name);
    child[n++] = profile;
  }
  for (int i = 0; i < argc; i++) child[n++] = argv[i];
  child[n] = NULL;

  pid_t pid;
  int rc = posix_spawn(&pid, DLMAP_PYTHON, NULL, NULL, child, environ);
  globfree(&defaults);
  if (rc != 0) {
    fprintf(stderr, "dlmap: cannot run %s: %s\n", DLMAP_PYTHON, strerror(rc));
    return CLI_FAILED;
  }
  int status;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return CLI_FAILED;
  return WEXITSTATUS(status) == 0 ? CLI_OK : WEXITSTATUS(status) == 2 ? CLI_USAGE : CLI_FAILED;
}
