#!/bin/sh
# dlmap conformance checker — gpu_peers where nothing can be checked: dlmap's module of this build cannot allocate on
# kDLCUDA here (no GPU on a build machine), and no peer sees a CUDA device. The step must print why, say so in its
# summary, and exit 3 ("nothing checked", which gpu/check.sh reads), never 0 (PASS).
# usage: gpu_peers_nothing_checked_test.sh PYTHON path/to/array_api/dlmap/__init__.so
set -eu
abs() { case "$1" in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) echo "$1" ;; esac; }
python=$(abs "$1")
module=$(abs "$2")
package=$(dirname "$(dirname "$module")")
out=${TEST_TMPDIR:-/tmp}/nothing_checked
fail() { echo "FAIL: $*" >&2; exit 1; }
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
. python/sanitizer_runtimes.sh
preload_sanitizer_runtimes "$module"
if PYTHONPATH="$package" PYTHONDONTWRITEBYTECODE=1 "$python" -c \
  'import dlmap, sys; sys.exit(0 if dlmap.platform_status("cuda")["available"] else 1)'; then
  echo "SKIP: this machine has a CUDA device dlmap can use; the case needs one without"
  exit 0
fi
status=0
PYTHONPATH="$package" PYTHONDONTWRITEBYTECODE=1 "$python" -m dlmap.check.gpu_peers "$out" >"$out.log" 2>&1 || status=$?
cat "$out.log"
[ "$status" = 3 ] || fail "exit status $status, not 3 (nothing checked)"
grep -q '^SKIP  conformance dlmap (CUDA): nothing checked: cannot allocate on kDLCUDA: raised ' "$out.log" ||
  fail "the reason dlmap was not checked is not printed"
grep -q '^conformance: NOTHING CHECKED: ' "$out.log" || fail "no summary line saying nothing was checked"
echo "PASS"
