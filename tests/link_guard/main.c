/* A program on a dlmap library: it calls into the library, so the library's own objects are linked. */
#include <stdio.h>

#include "dlmap/dlmap.h"

int main(void) {
  puts(dlmap_version_string());
  return 0;
}
