/* dlmap CLI — `dlmap spec check [--on-default] FILE...`: runs the generator's own validator (codegen/check_spec.py)
 * so a spec is judged by exactly the messages the build would print; --on-default checks the files on top of the
 * spec this CLI was built from (its own list, which dlmap_cli() generates: cli_built_spec). */
#include <dirent.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/cli.h"

extern char **environ;

enum { MAX_FILES = 64, PATH_CAP = 4096 };

/* A rootpath's file in the runfiles tree `base`: "../<repo>/<path>" (another repository's file) is
 * <base>/<repo>/<path>; "<path>" (the main repository's) is <base>/<dir>/<path> for the one top-level directory
 * that has it, whatever the main repository is called (a downstream workspace's name, or _main under bzlmod). */
static bool in_runfiles(const char *base, const char *rootpath, char *out, size_t cap) {
  if (strncmp(rootpath, "../", 3) == 0) {
    return snprintf(out, cap, "%s/%s", base, rootpath + 3) < (int)cap && access(out, R_OK) == 0;
  }
  DIR *dir = opendir(base);
  if (dir == NULL) return false;
  bool found = false;
  for (struct dirent *entry; !found && (entry = readdir(dir)) != NULL;) {
    if (entry->d_name[0] == '.') continue;
    found = snprintf(out, cap, "%s/%s/%s", base, entry->d_name, rootpath) < (int)cap && access(out, R_OK) == 0;
  }
  closedir(dir);
  return found;
}

/* Where one of the CLI's own files is: under $<variable> when set (an installed CLI; the rootpath without its
 * "../<repo>/" part), else in the Bazel runfiles ($RUNFILES_DIR, or next to the binary). False when not found;
 * out then names the place looked at. */
static bool locate(const char *argv0, const char *variable, const char *rootpath, char *out, size_t cap) {
  const char *set = getenv(variable);
  if (set != NULL && set[0] != '\0') {
    const char *tail = rootpath;
    if (strncmp(tail, "../", 3) == 0 && strchr(tail + 3, '/') != NULL) tail = strchr(tail + 3, '/') + 1;
    return snprintf(out, cap, "%s/%s", set, tail) < (int)cap && access(out, R_OK) == 0;
  }
  char base[PATH_CAP + 16];
  const char *runfiles = getenv("RUNFILES_DIR");
  if (runfiles != NULL && runfiles[0] != '\0') {
    snprintf(base, sizeof base, "%s", runfiles);
  } else {
    char self[PATH_CAP];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
      self[n] = '\0';
    } else {
      snprintf(self, sizeof self, "%s", argv0);
    }
    snprintf(base, sizeof base, "%s.runfiles", self);
  }
  if (in_runfiles(base, rootpath, out, cap)) return true;
  /* the place looked at, for the message; the check of the length also satisfies -Wformat-truncation */
  if (snprintf(out, cap, "%s/.../%s", base, rootpath) >= (int)cap && cap > 0) out[0] = '\0';
  return false;
}

/* A FILE argument as the caller meant it: under `bazel run` the working directory is the runfiles tree, so a
 * relative path is taken from $BUILD_WORKING_DIRECTORY, the directory `bazel run` was called from. */
static const char *user_path(const char *path, char *out, size_t cap) {
  const char *cwd = getenv("BUILD_WORKING_DIRECTORY");
  if (path[0] == '/' || cwd == NULL || cwd[0] == '\0') return path;
  if (snprintf(out, cap, "%s/%s", cwd, path) >= (int)cap) return path;
  return out;
}

static int usage(void) {
  fprintf(stderr, "usage: %s spec check [--on-default] FILE...\n", DLMAP_CLI_NAME);
  return CLI_USAGE;
}

int cli_spec(int argc, char **argv, const char *argv0) {
  if (argc < 1 || strcmp(argv[0], "check") != 0) return usage();
  argc--, argv++;
  const bool on_default = argc > 0 && strcmp(argv[0], "--on-default") == 0;
  if (on_default) argc--, argv++;
  if (argc < 1 || argc > MAX_FILES) return usage();

  static char checker[PATH_CAP], built[MAX_FILES][PATH_CAP], given[MAX_FILES][PATH_CAP];
  if (!locate(argv0, "DLMAP_CODEGEN_DIR", cli_spec_checker, checker, sizeof checker)) {
    fprintf(stderr, "%s: cannot find the spec checker at %s (set DLMAP_CODEGEN_DIR to dlmap's codegen/)\n",
            DLMAP_CLI_NAME, checker);
    return CLI_FAILED;
  }

  /* argv for: python3 check_spec.py [this CLI's spec files, in the order the build read them] FILE... */
  char *child[2 * MAX_FILES + 4];
  int n = 0;
  child[n++] = (char *)DLMAP_PYTHON;
  child[n++] = checker;
  if (on_default) {
    for (size_t i = 0; cli_built_spec[i] != NULL; i++) {
      if (i >= MAX_FILES || !locate(argv0, "DLMAP_SPEC_DIR", cli_built_spec[i], built[i], sizeof built[i])) {
        fprintf(stderr, "%s: cannot find this CLI's spec file %s at %s (set DLMAP_SPEC_DIR)\n", DLMAP_CLI_NAME,
                cli_built_spec[i], i >= MAX_FILES ? "(too many files)" : built[i]);
        return CLI_FAILED;
      }
      child[n++] = built[i];
    }
  }
  for (int i = 0; i < argc; i++) child[n++] = (char *)user_path(argv[i], given[i], sizeof given[i]);
  child[n] = NULL;

  pid_t pid;
  int rc = posix_spawn(&pid, DLMAP_PYTHON, NULL, NULL, child, environ);
  if (rc != 0) {
    fprintf(stderr, "%s: cannot run %s: %s\n", DLMAP_CLI_NAME, DLMAP_PYTHON, strerror(rc));
    return CLI_FAILED;
  }
  int status;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return CLI_FAILED;
  return WEXITSTATUS(status) == 0 ? CLI_OK : WEXITSTATUS(status) == 2 ? CLI_USAGE : CLI_FAILED;
}
