#!/bin/sh
# dlmap conformance checker — runs a test script with a built `dlmap` package directory (python/check/<profile>) and
# the script's own directory on PYTHONPATH. usage: run_test.sh PYTHON path/to/<profile>/dlmap/__init__.so script.py
set -eu
python="$1"
package=$(cd "$(dirname "$2")/.." && pwd)
script_dir=$(cd "$(dirname "$3")" && pwd)
export PYTHONPATH="$package:$script_dir" PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
. python/sanitizer_runtimes.sh
preload_sanitizer_runtimes "$2"
exec "$python" -X faulthandler "$3"
