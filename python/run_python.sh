#!/bin/sh
# dlmap Python binding — runs a Python script of python/ (a test or gpu_check.py) on the configured interpreter
# with the built `dlmap` extension on PYTHONPATH; under ASan it preloads the sanitizer runtimes first.
# usage: run_python.sh PYTHON path/to/dlmap.so path/to/script.py [args...]
set -eu
python="$1"
module="$2"
script="$3"
shift 3
module_dir=$(cd "$(dirname "$module")" && pwd)
script_dir=$(cd "$(dirname "$script")" && pwd)
export PYTHONPATH="$module_dir:$script_dir${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONNOUSERSITE=1
. python/sanitizer_runtimes.sh
preload_sanitizer_runtimes "$module"
echo "run_python.sh: $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
exec "$python" -X faulthandler "$script" "$@"
