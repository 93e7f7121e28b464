#!/bin/sh
# dlmap conformance checker — runs a test script with a built `dlmap` package directory (python/check/<profile>) and
# the script's own directory on PYTHONPATH. usage: run_test.sh PYTHON path/to/<profile>/dlmap/__init__.so script.py
set -eu
abs() { case "$1" in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) echo "$1" ;; esac; }
python=$(abs "$1")
module=$(abs "$2")
script=$(abs "$3")
package=$(dirname "$(dirname "$module")")
script_dir=$(dirname "$script")
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
export PYTHONPATH="$package:$script_dir" PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
. python/sanitizer_runtimes.sh
preload_sanitizer_runtimes "$module"
exec "$python" -X faulthandler "$script"
