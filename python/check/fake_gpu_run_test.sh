#!/bin/sh
# dlmap conformance checker — run_test.sh over tests/gpu's fake CUDA runtime: the runtime's directory in the runfiles
# on LD_LIBRARY_PATH (the package's copy of the module does not find it by its own path), for every child interpreter.
# usage: fake_gpu_run_test.sh PYTHON path/to/fake_gpu/dlmap/__init__.so script.py
set -eu
runtime=$(find -L . -name libdlmap_fake_gpu.so -path '*_solib*' | head -n 1)
[ -n "$runtime" ] || { echo "FAIL: the fake CUDA runtime is not in the runfiles" >&2; exit 1; }
LD_LIBRARY_PATH="$(cd "$(dirname "$runtime")" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec sh "$(dirname "$0")/run_test.sh" "$@"
