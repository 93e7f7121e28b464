#!/bin/sh
# bench/run.sh --smoke where callgrind dies on the Python step (issue 65: SIGILL under valgrind 3.19 on an AMD Zen 5):
# the run must still print its report, leave the Python counts' columns empty and say why. The C steps run under the
# real valgrind, so the smoke run's counting paths are checked too. Run by .ci/run (it builds with Bazel, so it is not
# a Bazel test itself).
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp -d /tmp/dlmap-bench-sigill.XXXXXX)
status=0
DLMAP_BENCH_OUT="$out" DLMAP_BENCH_VALGRIND="$PWD/bench/testdata/valgrind_dies_on_python.sh" bench/run.sh --smoke \
  > "$out/stdout" 2> "$out/stderr" || status=$?
cat "$out/stdout"
cat "$out/stderr" >&2
fail() {
  echo "callgrind_sigill_test: FAIL: $*" >&2
  exit 1
}
[ "$status" -eq 0 ] || fail "bench/run.sh --smoke exited $status"
grep -q '^### Targets' "$out/stdout" || fail "no report printed"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  grep -q 'no instruction counts for the Python calls: callgrind was killed by SIGILL' "$out/stderr" ||
    fail "the Python step's SIGILL was not reported"
else
  echo "callgrind_sigill_test: no Python benchmark here (no NumPy): only the report is checked" >&2
fi
if command -v valgrind >/dev/null; then
  [ -s "$out/callgrind/cases.tsv" ] || fail "the C calls were not counted under the real valgrind"
fi
echo "callgrind_sigill_test: PASS (report printed; the Python step's SIGILL reported, its columns empty)"
rm -rf "$out"
