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
# An extension built with -fsanitize=address (or thread) needs the sanitizer runtime loaded before anything else
# in an uninstrumented interpreter; UBSan's comes with it. Leak checking covers dlmap's own memory through the
# module's allocation counters instead: CPython and PyTorch keep memory until exit by design.
runtimes=$(ldd "$module" 2>/dev/null | awk '/lib(asan|tsan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
if [ -n "$runtimes" ]; then
  export LD_PRELOAD="${runtimes% }"
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_segv_handler=1:${DLMAP_ASAN_OPTIONS:-}"
  export DLMAP_SANITIZED=1
  echo "run_python.sh: sanitizer runtimes preloaded: $LD_PRELOAD"
fi
echo "run_python.sh: $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
exec "$python" -X faulthandler "$script" "$@"
