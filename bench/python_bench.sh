#!/bin/sh
# dlmap benchmarks — runs bench/python_bench.py on the configured python3 with the built `dlmap` extension on PYTHONPATH.
# usage: python_bench.sh PYTHON path/to/dlmap.so path/to/python_bench.py [args...]
set -eu
python="$1"
module="$2"
script="$3"
shift 3
module_dir=$(cd "$(dirname "$module")" && pwd)
export PYTHONPATH="$module_dir${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONNOUSERSITE=1
exec "$python" "$script" "$@"
