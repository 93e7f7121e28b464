#!/bin/sh
# dlmap codegen tests — Bazel sh_test runner: runs one unittest file with the configured python3 (+PyYAML).
# Usage (from the BUILD file): run_unittest.sh <python3 wrapper> <test file>; paths are runfiles paths.
set -eu

if [ "$#" -ne 2 ]; then
  echo "usage: $0 PYTHON3 TEST_FILE" >&2
  exit 2
fi
python="$1"
test_file="$2"
# $(rootpath) of an external file is external/<repo>/…; without legacy external runfiles it lives at ../<repo>/….
if [ ! -x "$python" ] && [ -x "../${python#external/}" ]; then
  python="../${python#external/}"
fi

# Bazel runs a test with the workspace root of its runfiles tree as the working directory.
case "$python" in /*) ;; *) python="$PWD/$python" ;; esac
case "$test_file" in /*) ;; *) test_file="$PWD/$test_file" ;; esac
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
root="$(pwd)"
export PYTHONPATH="$root/codegen${PYTHONPATH:+:$PYTHONPATH}"
export DLMAP_CODEGEN_DIR="$root/codegen"
export DLMAP_SPEC_DIR="$root/spec"
export PYTHONDONTWRITEBYTECODE=1
# Keep temporary spec copies inside the test's own scratch directory.
if [ -n "${TEST_TMPDIR:-}" ]; then
  export TMPDIR="$TEST_TMPDIR"
fi

echo "run_unittest.sh: $test_file with $python (PYTHONPATH=$PYTHONPATH)" >&2
# unittest.main() exits 1 when any test fails or errors, 0 when all pass.
exec "$python" -B "$test_file" -v
