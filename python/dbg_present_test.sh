#!/bin/sh
# dlmap Python binding — //python:pydbg_tests's first member: fails, saying how to fix it, when the build found no
# debug build of the configured Python (python3-dbg), so that the suite never passes without its tests.
if [ "${1:-0}" = "1" ]; then
  echo "Python's debug build found: //python:pydbg_tests runs the binding's tests on it"
  exit 0
fi
echo "The build found no debug build of the configured python3, so //python:pydbg_tests has no tests to run." >&2
echo "Install it with: apt-get install --no-install-recommends python3-dbg; then run: bazel sync --configure" >&2
echo "(see the pydbg line of \$(bazel info output_base)/external/dlmap_config/SUMMARY)" >&2
exit 1
