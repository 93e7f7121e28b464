#!/usr/bin/env bash
# dlmap GPU check — CI test of gpu/check.sh: its build step (gcc over the library and gpu/check_main.c, nvcc over
# gpu/check_kernels.cu, the link against libcudart) succeeds, and a full run exits 2 with the vendor's reason where
# there is no GPU (0 or 1 where there is one; the checks themselves are for gpu/check.sh on a GPU machine).
set -euo pipefail
has_nvcc=$1
if [ "$has_nvcc" != 1 ]; then
  echo "SKIP: no nvcc was found when this build was configured; gpu/check.sh needs the CUDA toolkit"
  exit 0
fi
script=$PWD/gpu/check.sh
export DLMAP_CHECK_BUILD=$TEST_TMPDIR/build
export PYTHON=$PWD/$2 RE2C=$PWD/$3 CUDA_HOME=$4  # the interpreter, re2c and toolkit the build detected
status=0
DLMAP_CHECK_TIMEOUT=120 "$script" >"$TEST_TMPDIR/run.log" 2>&1 || status=$?
cat "$TEST_TMPDIR/run.log"
test -x "$DLMAP_CHECK_BUILD/dlmap_gpu_check"  # built, whatever the machine
case $status in
  2) grep -q "no usable CUDA device here: " "$TEST_TMPDIR/run.log" ;;  # the reason is printed
  0 | 1) echo "a GPU is present: the checks ran (exit $status); run gpu/check.sh for their verdict" ;;
  *) echo "gpu/check.sh exited $status" >&2; exit 1 ;;
esac
echo PASS
