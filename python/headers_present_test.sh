#!/bin/sh
# dlmap Python binding — fails, saying how to fix it, when the build found no Python.h, so `bazel test //...` never
# passes silently without the binding's tests (which are then left out of `//...`).
if [ "${1:-0}" = "1" ]; then
  echo "Python headers found: the binding's targets are part of //python/..."
  exit 0
fi
echo "The configured python3 has no Python.h, so //python:dlmap.so and its tests were not built." >&2
echo "Install it with: apt-get install python3-dev; then run: bazel sync --configure" >&2
echo "(see the pyhdrs line of \$(bazel info output_base)/external/dlmap_config/SUMMARY)" >&2
exit 1
