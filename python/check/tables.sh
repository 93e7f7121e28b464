#!/bin/sh
# dlmap conformance checker — regenerates docs/conformance/*.md (--write, `bazel run //python/check:update_tables`) or
# compares them with the committed ones (--check, //python/check:tables_test): NumPy, PyTorch and dlmap under the JAX
# profile through the jax package, dlmap under each other profile through that profile's package.
# usage: tables.sh --write|--check PYTHON path/to/jax/dlmap/__init__.so path/to/<profile>/dlmap/__init__.so...
set -eu
abs() { case "$1" in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) echo "$1" ;; esac; }
mode="$1"
python=$(abs "$2")
jax_module=$(abs "$3")
jax=$(dirname "$(dirname "$jax_module")")
shift 3
others=""
for module in "$@"; do others="$others $(dirname "$(dirname "$(abs "$module")")")"; done
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
case "$mode" in
  --write) dir="${BUILD_WORKSPACE_DIRECTORY:?run it with bazel run}/docs/conformance"; flag=""; mkdir -p "$dir" ;;
  --check) dir="docs/conformance"; flag="--check" ;;
  *) echo "tables.sh: --write or --check, not $mode" >&2; exit 2 ;;
esac
export PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
. python/sanitizer_runtimes.sh
preload_sanitizer_runtimes "$jax_module"
status=0
# shellcheck disable=SC2086
PYTHONPATH="$jax" "$python" -m dlmap.check tables "$dir" --peers numpy,torch,dlmap $flag || status=1
for package in $others; do
  # shellcheck disable=SC2086
  PYTHONPATH="$package" "$python" -m dlmap.check tables "$dir" --peers dlmap $flag || status=1
done
exit $status
