#!/bin/sh
# dlmap conformance checker — runs gpu/check.sh's conformance step (python -m dlmap.check.gpu_peers) with the module
# built over tests/gpu's fake CUDA runtime: dlmap's own kDLCUDA arrays must pass every row under the module's profile,
# and the peers it cannot run here (no JAX, CuPy or CUDA device) must be skipped with a reason.
# usage: gpu_peers_fake_gpu_test.sh PYTHON path/to/fake_gpu/dlmap/__init__.so
set -eu
abs() { case "$1" in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) echo "$1" ;; esac; }
python=$(abs "$1")
module=$(abs "$2")
package=$(dirname "$(dirname "$module")")
runtime=$(find -L . -name libdlmap_fake_gpu.so -path '*_solib*' | head -n 1)
[ -n "$runtime" ] || { echo "FAIL: the fake CUDA runtime is not in the runfiles" >&2; exit 1; }
out=${TEST_TMPDIR:-/tmp}/conformance
runtime=$(abs "$runtime")
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
. python/sanitizer_runtimes.sh
preload_sanitizer_runtimes "$module"
LD_LIBRARY_PATH="$(cd "$(dirname "$runtime")" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  PYTHONPATH="$package" PYTHONDONTWRITEBYTECODE=1 "$python" -m dlmap.check.gpu_peers "$out" | tee "$out.log"
grep -q '^PASS  conformance dlmap producer (CUDA) under its array_api profile: 64 rows pass, 0 fail$' "$out.log" ||
  { echo "FAIL: dlmap's CUDA rows did not all pass" >&2; exit 1; }
grep -q 'kDLCUDA (2):0' "$out/dlmap_array_api_cuda_producer.md" || { echo "FAIL: the array was not on kDLCUDA" >&2; exit 1; }
for peer in jax torch cupy; do
  grep -q "conformance $peer" "$out.log" || { echo "FAIL: no line for $peer" >&2; exit 1; }
done
echo "PASS"
