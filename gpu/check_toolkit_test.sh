#!/usr/bin/env bash
# dlmap GPU check — CI test of gpu/check.sh's choice of CUDA runtime and Python (`--toolkit`), with stand-in toolkits,
# driver, pip wheel and interpreters built here (gpu/testdata): of a CUDA 13.0 toolkit the driver refuses (35) and a 12.4
# one it starts, the 12.4 one is chosen and the refusal is shown; with only the 13.0 toolkit, exit 2 says the driver
# (CUDA 12.4) is older than every runtime found; with no toolkit, the runtime of a framework's pip wheel
# (site-packages/nvidia/*/lib/libcudart.so.12, no unversioned .so, no nvcc) is found through the Python that has the
# framework, which is chosen over an earlier $PYTHON without one, and both choices are said.
set -euo pipefail
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
CC=${CC:-gcc}
T=$TEST_TMPDIR/toolkits
export DLMAP_CHECK_BUILD=$TEST_TMPDIR/build
fail() { echo "FAIL: $*" >&2; exit 1; }
for toolkit in "13.0 13000 35 13" "12.4 12040 0 12"; do
  read -r name version status major <<<"$toolkit"
  mkdir -p "$T/cuda-$name/bin" "$T/cuda-$name/lib64"
  printf '#!/bin/sh\nexit 0\n' >"$T/cuda-$name/bin/nvcc"
  chmod +x "$T/cuda-$name/bin/nvcc"
  "$CC" -shared -fPIC -DSTATUS="$status" -DVERSION="$version" -o "$T/cuda-$name/lib64/libcudart.so.$major" \
    gpu/testdata/fake_cudart.c
done
mkdir -p "$T/driver"
"$CC" -shared -fPIC -DDRIVER=12040 -o "$T/driver/libcuda.so.1" gpu/testdata/fake_libcuda.c

status=0
out=$(LD_LIBRARY_PATH=$T/driver DLMAP_CHECK_TOOLKITS=$T/cuda-13.0:$T/cuda-12.4 gpu/check.sh --toolkit 2>&1) || status=$?
echo "$out"
[ "$status" = 0 ] || fail "no toolkit chosen (exit $status)"
grep -qF "INFO  toolkit refused: $T/cuda-13.0 (CUDA runtime 13.0): CUDA driver version is insufficient for CUDA runtime version (error 35)" <<<"$out" ||
  fail "the refusal of the 13.0 toolkit is not shown"
grep -qF "INFO  toolkit: $T/cuda-12.4 (CUDA runtime 12.4, libcudart.so.12), 1 device(s), sm_90; the driver supports CUDA 12.4" <<<"$out" ||
  fail "the 12.4 toolkit was not chosen"

status=0
out=$(LD_LIBRARY_PATH=$T/driver DLMAP_CHECK_TOOLKITS=$T/cuda-13.0 gpu/check.sh --toolkit 2>&1) || status=$?
echo "$out"
[ "$status" = 2 ] || fail "a driver too old for every toolkit: exit $status, want 2"
grep -qF "no usable NVIDIA GPU here: the NVIDIA driver supports CUDA up to 12.4, older than every runtime found ($T/cuda-13.0): install a toolkit for CUDA 12.x or older" <<<"$out" ||
  fail "the driver's age is not the reason given"

# A pip-based machine: no toolkit; a virtual environment whose Python has PyTorch and its CUDA runtime wheel.
real_python=$(command -v python3)
site=$T/site
mkdir -p "$site/torch" "$site/nvidia/cuda_runtime/lib" "$T/plain" "$T/venv/bin"
: >"$site/torch/__init__.py"
"$CC" -shared -fPIC -DSTATUS=0 -DVERSION=12040 -o "$site/nvidia/cuda_runtime/lib/libcudart.so.12" gpu/testdata/fake_cudart.c
# -S: neither interpreter sees this machine's site-packages, only what the test gives it.
printf '#!/bin/sh\nexec %s -S "$@"\n' "$real_python" >"$T/plain/python3"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s -S "$@"\n' "$site" "$real_python" >"$T/venv/bin/python3"
chmod +x "$T/plain/python3" "$T/venv/bin/python3"
status=0
out=$(LD_LIBRARY_PATH=$T/driver DLMAP_CHECK_TOOLKITS=$T/no-toolkit PYTHON=$T/plain/python3 VIRTUAL_ENV=$T/venv \
  gpu/check.sh --toolkit 2>&1) || status=$?
echo "$out"
[ "$status" = 0 ] || fail "the pip wheel's runtime was not chosen (exit $status)"
grep -qE "^INFO  python: $T/venv/bin/python3 \([0-9.]+\): has torch \(tried in order: $T/plain/python3 $T/venv/bin/python3\)" \
  <<<"$out" || fail "the virtual environment's Python, which has the framework, was not chosen or not named"
wheel=$(cd "$site/nvidia/cuda_runtime/lib" && pwd -P)
grep -qF "INFO  runtime: $wheel/libcudart.so.12 (a pip wheel's, CUDA runtime 12.4), 1 device(s), sm_90; the driver supports CUDA 12.4; no toolkit: the C device checks cannot be built, the Python checks can" \
  <<<"$out" || fail "the pip wheel's runtime was not chosen, or the C checks' absence not said"
echo PASS
