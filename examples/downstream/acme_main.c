/* A program on dlmap: prints the version of the library it links (//:two_libraries, which must not link). */
#include <stdio.h>

#include "dlmap/dlmap.h"

int main(void) {
  puts(dlmap_version_string());
  return 0;
}
