#!/bin/sh
# MODULE.bazel's version is the header's DLMAP_VERSION_MAJOR.MINOR.PATCH, so a bazel_dep on a version gets that header.
# Usage: module_version_test.sh MODULE.bazel include/dlmap/dlmap.h
set -eu
module_version=$(sed -n 's/^ *version = "\([^"]*\)".*/\1/p' "$1" | head -n 1)
header_version=$(awk '$1 == "#define" && $2 ~ /^DLMAP_VERSION_(MAJOR|MINOR|PATCH)$/ {v = v (v == "" ? "" : ".") $3}
  END {print v}' "$2")
echo "MODULE.bazel: ${module_version:-(none)}; dlmap.h: ${header_version:-(none)}"
[ -n "$module_version" ] && [ "$module_version" = "$header_version" ] ||
  { echo "FAIL: MODULE.bazel's module(version = ...) must be the header's DLMAP_VERSION_*" >&2; exit 1; }
