#!/usr/bin/env bash
# dlmap GPU check — CI test of `gpu/check.sh --bundle //gpu:bundle --build-only` from a clean tree, as on a GPU machine
# without Bazel: re2c hidden from PATH and PyYAML from every Python (the bundle must make both unnecessary). The bundle
# holds the dlmap_library's generated files byte for byte; dlmap, the Python module and (with a toolkit) the check
# program build from it; the module imports. Then a full run must say why it cannot check here: exit 2, "nothing
# checked" with the reason, where there is no usable GPU (never PASS; 0, 1 or 4 only where there is one).
# Usage: check_script_test.sh HAS_NVCC PYTHON3 cuda_root=CUDA_ROOT HAS_PYTHON_HEADERS BUNDLE NAME_LOOKUP_C GENERATED...
#          --jax NAME_LOOKUP_C GENERATED...   (the jax profile's, which the bundle carries under profiles/jax/)
# (CUDA_ROOT is empty without a toolkit: the cuda_root= prefix keeps the argument from vanishing.)
set -euo pipefail
has_nvcc=$1 python=$2 cuda_root=${3#cuda_root=} has_headers=$4 bundle=$PWD/$5
shift 5
generated_files=() jax_files=()  # name_lookup.c, then the files of <library>_gen and _gen_kernels; after --jax, the
list=generated_files                # jax profile's (absolute: the test changes directory below)
for file in "$@"; do
  if [ "$file" = --jax ]; then list=jax_files; continue; fi
  eval "$list+=(\"\$PWD/\$file\")"
done
if [ ! -x "$python" ] && [ -x "../${python#external/}" ]; then python="../${python#external/}"; fi
export PYTHON=$PWD/$python DLMAP_CHECK_BUILD=$TEST_TMPDIR/build
export CUDA_HOME=$cuda_root  # the toolkit the build detected, whatever PATH the test runs with
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
fail() { echo "FAIL: $*" >&2; exit 1; }

# PATH without re2c: each directory that has one is replaced by a copy of its links, less re2c.
hidden_path=""
IFS=: read -r -a path_dirs <<<"$PATH"
for dir in "${path_dirs[@]}"; do
  if [ -e "$dir/re2c" ]; then
    shadow=$TEST_TMPDIR/path/$(printf '%s' "$dir" | tr / _)
    mkdir -p "$shadow"
    ln -s "$dir"/* "$shadow"/ 2>/dev/null || true
    rm -f "$shadow/re2c"
    dir=$shadow
  fi
  hidden_path=${hidden_path:+$hidden_path:}$dir
done
export PATH=$hidden_path
! command -v re2c >/dev/null || fail "re2c is still on PATH: $(command -v re2c)"
# Python without PyYAML: an import of yaml fails loudly, whichever interpreter check.sh picks.
mkdir -p "$TEST_TMPDIR/no_yaml/yaml"
echo 'raise ImportError("gpu/check.sh --bundle must not need PyYAML")' >"$TEST_TMPDIR/no_yaml/yaml/__init__.py"
export PYTHONPATH=$TEST_TMPDIR/no_yaml

log=$TEST_TMPDIR/build.log
status=0
gpu/check.sh --bundle "$bundle" --build-only >"$log" 2>&1 || status=$?
cat "$log"
[ "$status" = 0 ] || fail "gpu/check.sh --bundle ... --build-only exited $status"
grep -q "^INFO  generated sources: $bundle (profile array_api; its [0-9]* inputs match this checkout)" "$log" ||
  fail "the bundle was not used, or its inputs not checked against the checkout"

# The bundle is the Bazel build's generated sources, byte for byte.
generated=$DLMAP_CHECK_BUILD/generated
compared=0
for file in "${generated_files[@]}"; do
  stored=$(sed -E 's#^.*/((include/dlmap|src)/generated/[^/]+)$#\1#' <<<"$file")
  cmp "$file" "$generated/$stored" || fail "$stored in the bundle differs from the Bazel build's $file"
  compared=$((compared + 1))
done
[ "$compared" -ge 20 ] || fail "only $compared generated files compared"
# The jax profile's sources (profiles/jax/, for the JAX differential's module) are the default library's, byte for byte.
jax_compared=0
for file in "${jax_files[@]}"; do
  stored=profiles/jax/$(sed -E 's#^.*/((include/dlmap|src)/generated/[^/]+)$#\1#' <<<"$file")
  cmp "$file" "$generated/$stored" || fail "$stored in the bundle differs from the Bazel build's $file"
  jax_compared=$((jax_compared + 1))
done
[ "$jax_compared" = "$compared" ] || fail "$jax_compared jax-profile files compared, $compared of the array_api profile"
[ "$(find "$generated" -type f | wc -l)" = $((compared + jax_compared + 1)) ] ||
  fail "the bundle holds files the Bazel build has not"

test -f "$DLMAP_CHECK_BUILD/libdlmap.a" || fail "no libdlmap.a"
chosen=$(sed -n 's/^INFO  python: \(.*\) ([0-9.]*): .*/\1/p' "$log")
[ -n "$chosen" ] || fail "gpu/check.sh did not say which Python it chose"
if [ -f "$DLMAP_CHECK_BUILD/python/dlmap.so" ]; then
  PYTHONPATH=$DLMAP_CHECK_BUILD/python:$PYTHONPATH "$chosen" -c \
    'import dlmap; s = dlmap.platform_status("cuda"); assert s["built"], s' ||
    fail "the built Python module does not import, or reports cuda as not built"
  # The JAX differential's module: the jax profile, in its own directory.
  PYTHONPATH=$DLMAP_CHECK_BUILD/jax/python:$PYTHONPATH "$chosen" -c \
    'import dlmap; assert dlmap.profile() == "jax", dlmap.profile()' ||
    fail "the jax-profile module was not built, does not import, or is not the jax profile"
  grep -q "^INFO  built $DLMAP_CHECK_BUILD/jax/python/dlmap.so (profile jax)" "$log" || fail "no line for the jax module"
else
  [ "$chosen" != "$PYTHON" ] || [ "$has_headers" = 0 ] || fail "$PYTHON has Python.h, and no module was built"
  grep -q "^SKIP  Python module: no Python.h for $chosen" "$log" || fail "no Python module, and no SKIP line saying why"
fi
if [ "$has_nvcc" = 1 ]; then
  test -x "$DLMAP_CHECK_BUILD/bin/dlmap_gpu_check" || fail "no check program although nvcc was found"
else
  grep -q "^SKIP  check program: no CUDA toolkit" "$log" || fail "no toolkit, and no SKIP line saying so"
fi

# A full run: here without a usable GPU it must say why (exit 2, nothing checked), never claim a pass.
status=0
DLMAP_CHECK_BUDGET=240 gpu/check.sh --bundle "$bundle" >"$TEST_TMPDIR/run.log" 2>&1 || status=$?
cat "$TEST_TMPDIR/run.log"
case $status in
  2) grep -q "^SKIP  gpu/check.sh: nothing checked: .\+ ([0-9]* s)$" "$TEST_TMPDIR/run.log" || fail "exit 2 without the reason" ;;
  0 | 1 | 4) echo "a GPU is present: the checks ran (exit $status); run gpu/check.sh for their verdict" ;;
  *) fail "gpu/check.sh exited $status" ;;
esac
echo PASS
