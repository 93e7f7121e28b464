#!/bin/sh
# dlmap Python binding — runs a Python script of python/ (a test or gpu_check.py) on the configured interpreter
# with the built `dlmap` extension on PYTHONPATH; under ASan it preloads the sanitizer runtimes first.
# usage: run_python.sh PYTHON path/to/dlmap.so path/to/script.py [args...]
set -eu
abs() { case "$1" in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) echo "$1" ;; esac; }
python=$(abs "$1")
module=$(abs "$2")
script=$(abs "$3")
shift 3
# The script's own arguments that name files ($(location …) paths, from where Bazel started the test) are made
# absolute too, so that they still name them after the cd below.
count=$#
while [ "$count" -gt 0 ]; do
  argument=$1
  shift
  if [ -e "$argument" ]; then argument=$(abs "$argument"); fi
  set -- "$@" "$argument"
  count=$((count - 1))
done
module_dir=$(dirname "$module")
script_dir=$(dirname "$script")
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
export PYTHONPATH="$module_dir:$script_dir${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONNOUSERSITE=1
. python/sanitizer_runtimes.sh
preload_sanitizer_runtimes "$module"
echo "run_python.sh: $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
exec "$python" -X faulthandler "$script" "$@"
