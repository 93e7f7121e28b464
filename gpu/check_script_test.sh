#!/usr/bin/env bash
# dlmap GPU check — CI test of gpu/check.sh from a clean tree with nothing prepared (a fresh build directory, and the
# PyYAML and re2c stand-ins forced, as on a GPU machine without them): --build-only builds dlmap, the Python module and
# (with a toolkit) the check program; the tables it generated are byte-identical to the Bazel build's; the module
# imports. Then a full run must say why it cannot check here: exit 2 with the reason where there is no usable GPU
# (0 or 1 where there is one; the checks themselves are for gpu/check.sh on a GPU machine).
# Usage: check_script_test.sh HAS_NVCC PYTHON3 cuda_root=CUDA_ROOT HAS_PYTHON_HEADERS GENERATED_INC GENERATED_SPEC_H
# (CUDA_ROOT is empty without a toolkit: the cuda_root= prefix keeps the argument from vanishing.)
set -euo pipefail
has_nvcc=$1 python=$2 cuda_root=${3#cuda_root=} has_headers=$4 bazel_inc_dir=$(dirname "$5") bazel_spec_h=$6
if [ ! -x "$python" ] && [ -x "../${python#external/}" ]; then python="../${python#external/}"; fi
export PYTHON=$PWD/$python DLMAP_CHECK_STANDINS=1 DLMAP_CHECK_BUILD=$TEST_TMPDIR/build
export CUDA_HOME=$cuda_root  # the toolkit the build detected, whatever PATH the test runs with
log=$TEST_TMPDIR/build.log
status=0
gpu/check.sh --build-only >"$log" 2>&1 || status=$?
cat "$log"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$status" = 0 ] || fail "gpu/check.sh --build-only exited $status"
grep -q "with the PyYAML stand-in gpu/yaml_standin; name lookups with the re2c stand-in" "$log" || fail "stand-ins not used"

# The stand-ins' tables are the generator's: every generated file but the lookups (re2c's own C) is byte-identical.
generated=$DLMAP_CHECK_BUILD/generated
cmp "$bazel_spec_h" "$generated/include/dlmap/generated/dlmap_spec.h" || fail "dlmap_spec.h differs from Bazel's"
compared=0
for file in "$bazel_inc_dir"/*.inc; do
  cmp "$file" "$generated/src/generated/$(basename "$file")" || fail "$(basename "$file") differs from Bazel's"
  compared=$((compared + 1))
done
[ "$compared" -ge 20 ] || fail "only $compared generated files compared"

test -f "$DLMAP_CHECK_BUILD/libdlmap.a" || fail "no libdlmap.a"
if [ "$has_headers" = 1 ]; then
  PYTHONPATH=$DLMAP_CHECK_BUILD/python "$PYTHON" -c 'import dlmap; s = dlmap.platform_status("cuda"); assert s["built"], s' ||
    fail "the built Python module does not import, or reports cuda as not built"
fi
if [ "$has_nvcc" = 1 ]; then
  test -x "$DLMAP_CHECK_BUILD/bin/dlmap_gpu_check" || fail "no check program although nvcc was found"
else
  grep -q "^SKIP  check program: no CUDA toolkit" "$log" || fail "no toolkit, and no SKIP line saying so"
  echo "PASS (no CUDA toolkit here: the check program's build was skipped, with the reason printed)"
  exit 0
fi

# A full run: here without a usable GPU it must say why (exit 2), never claim a pass.
status=0
DLMAP_CHECK_TIMEOUT=120 gpu/check.sh >"$TEST_TMPDIR/run.log" 2>&1 || status=$?
cat "$TEST_TMPDIR/run.log"
case $status in
  2) grep -q "^SKIP  gpu/check.sh: no usable NVIDIA GPU here: .\+; nothing was checked" "$TEST_TMPDIR/run.log" ||
       fail "exit 2 without the reason" ;;
  0 | 1) echo "a GPU is present: the checks ran (exit $status); run gpu/check.sh for their verdict" ;;
  *) fail "gpu/check.sh exited $status" ;;
esac
echo PASS
