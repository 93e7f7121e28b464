/* dlmap hardening — crash-regression replay: feeds every file under the given directories (the committed seed
 * corpora and the inputs that once crashed a fuzz target) to the target's LLVMFuzzerTestOneInput, in the normal
 * gcc build (and under --config=asan / --config=valgrind), so every input that ever crashed stays fixed. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Runs one file; returns 1 when it was read. */
static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    exit(2);
  }
  size_t cap = 4096, n = 0;
  uint8_t *data = (uint8_t *)malloc(cap);
  size_t got;
  while ((got = fread(data + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) data = (uint8_t *)realloc(data, cap *= 2);
  }
  fclose(f);
  /* An exact-size copy, as libFuzzer passes it: reading past the input is caught too. */
  uint8_t *exact = (uint8_t *)malloc(n == 0 ? 1 : n);
  if (n > 0) memcpy(exact, data, n);
  free(data);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  return 1;
}

/* Replays a file, or every regular file below a directory in name order; returns how many. */
static long replay(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) { /* a target with no recorded crash has no regressions directory */
    printf("%s: absent, nothing to replay\n", path);
    return 0;
  }
  if (!S_ISDIR(st.st_mode)) return replay_file(path);
  DIR *dir = opendir(path);
  if (dir == NULL) {
    perror(path);
    exit(2);
  }
  size_t count = 0, cap = 64;
  char **names = (char **)malloc(cap * sizeof *names);
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.') continue;
    if (count == cap) names = (char **)realloc(names, (cap *= 2) * sizeof *names);
    names[count++] = strdup(entry->d_name);
  }
  closedir(dir);
  qsort(names, count, sizeof *names, compare_names);
  long total = 0;
  for (size_t i = 0; i < count; i++) {
    size_t len = strlen(path) + strlen(names[i]) + 2;
    char *child = (char *)malloc(len);
    snprintf(child, len, "%s/%s", path, names[i]);
    total += replay(child);
    free(child);
    free(names[i]);
  }
  free(names);
  return total;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  // The corpus paths are dlmap's; a consumer's `bazel test @dlmap//...` starts in its own runfiles (DLMAP_ROOT).
  const char *root = getenv("DLMAP_ROOT");
  if (root != NULL && chdir(root) != 0) {
    perror(root);
    return 1;
  }
  long total = 0;
  for (int i = 1; i < argc; i++) {
    const long n = replay(argv[i]);
    printf("%s: %ld inputs replayed\n", argv[i], n);
    total += n;
  }
  printf("%ld inputs replayed, no crash\n", total);
  return total > 0 ? 0 : 1; /* an empty corpus means the data wiring broke */
}
