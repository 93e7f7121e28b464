#!/usr/bin/env bash
# dlmap coverage — how much of the hand-written C the tests reach (issue 65), as lines and branches: the suite built
# with gcov instrumentation (.bazelrc's --config=gcov: -O0, unsandboxed so the .gcda files land beside the objects), in
# an output root of its own, then gcovr over every object of each source (the same file is compiled into each
# profile's library and module: their counts are merged) for src/ and python/*.c. Generated code is not counted.
#
# Usage: tools/coverage.sh [--report-only] [--floor LINES BRANCHES] [--explained]
#   --report-only   read the last run's counts again instead of running the tests. Right after that run's build: gcov
#                   finds the sources through the execution root, where Bazel links only the top-level directories the
#                   last command loaded (a build of one package there since leaves most sources unresolved, silently)
#   --floor         percentages: exit 1 when either total is below its floor
#   --explained     exit 1 when a line the tests leave unreached (never run, or a branch never taken) has no entry in
#                   tools/coverage_unreached, or an entry's line is reached now (tools/coverage_unreached.py); without
#                   it the comparison is only printed. Plain gcov builds only
# Prints gcovr's per-file table and the totals. Needs gcovr (Debian's `gcovr`: apt install gcovr). Takes about 15
# minutes on 2 cores (an -O0 build of everything, then the suite).
# CI prints the figure at every landing and fails below the floor without this build: tools/hardening.sh's asan step
# builds and runs its tests with --config=asan-gcov (ASan+UBSan plus these counts), and its coverage step runs
# `tools/coverage.sh --report-only --floor LINES BRANCHES` on that output root, the floor read from tools/coverage_floor.
# Environment: DLMAP_COVERAGE_ROOT (the output root, default /tmp/bazel_coverage), DLMAP_COVERAGE_TARGETS (default: the
# C, Python, GPU-fake and tool tests), DLMAP_COVERAGE_CONFIG (the Bazel config of the instrumented build, default gcov;
# the hardening run's coverage step passes asan-gcov, so that `bazel info` names that build's execution root).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=${DLMAP_COVERAGE_ROOT:-/tmp/bazel_coverage}
TARGETS=${DLMAP_COVERAGE_TARGETS:-//tests/... //python/... //gpu/... //tools:all}
CONFIG=${DLMAP_COVERAGE_CONFIG:-gcov}
floor_lines="" floor_branches="" run=1 explained=0 unreached_status=0
while [ $# -gt 0 ]; do
  case $1 in
    --floor) [ $# -ge 3 ] || { echo "usage: tools/coverage.sh [--report-only] [--floor LINES BRANCHES] [--explained]" >&2; exit 2; }
             floor_lines=$2 floor_branches=$3; shift 3 ;;
    --report-only) run=0; shift ;;
    --explained) explained=1; shift ;;
    *) echo "usage: tools/coverage.sh [--report-only] [--floor LINES BRANCHES] [--explained]" >&2; exit 2 ;;
  esac
done
command -v gcovr >/dev/null || { echo "tools/coverage.sh: gcovr is not installed (apt install gcovr)" >&2; exit 2; }

cbazel() { bazel --output_user_root="$ROOT" "$@"; }
execroot=$(cbazel info --config="$CONFIG" execution_root 2>/dev/null)
[ "$run" = 1 ] || [ -d "$execroot/bazel-out" ] ||
  { echo "tools/coverage.sh: --report-only: no build under $execroot (output root $ROOT)" >&2; exit 2; }
if [ "$run" = 1 ]; then
  # Counts from an earlier run would add to this one's.
  [ -d "$execroot/bazel-out" ] && find "$execroot/bazel-out" -name '*.gcda' -delete
  # shellcheck disable=SC2086
  cbazel test --config="$CONFIG" --symlink_prefix=/ --keep_going --nocache_test_results $TARGETS >/dev/null 2>&1 ||
    echo "tools/coverage.sh: some tests failed under --config=$CONFIG; their counts are still read" >&2
fi

# Each test wrote its counts relative to its working directory, its runfiles tree: add them up, object by object, into
# the execution root beside the .gcno files (gcov-tool merges two profile directories; one file each here).
scratch=$(mktemp -d)
summary=$scratch/summary
trap 'rm -rf "$scratch"' EXIT
find "$execroot/bazel-out" -path '*.runfiles/*/bazel-out/*' -name '*.gcda' | while read -r counts; do
  target=$execroot/bazel-out/${counts#*.runfiles/*/bazel-out/}
  if [ -f "$target" ]; then
    rm -rf "$scratch/a" "$scratch/b" "$scratch/sum"
    mkdir -p "$scratch/a" "$scratch/b"
    cp "$counts" "$scratch/a/x.gcda"
    cp "$target" "$scratch/b/x.gcda"
    gcov-tool merge -o "$scratch/sum" "$scratch/a" "$scratch/b" && cp "$scratch/sum/x.gcda" "$target"
  else
    mkdir -p "$(dirname "$target")"
    cp "$counts" "$target"
  fi
  rm -f "$counts"
done

# gcov runs in the execution root, where the objects' recorded paths (sources, external headers) resolve; the report is
# of this checkout's hand-written C only, its files named from the execution root (whose src/ and python/ link here).
gcovr --root "$execroot" --object-directory "$execroot" --branches --exclude-unreachable-branches \
  --filter 'src/[^/]*\.c$' --filter 'src/backends/[^/]*\.c$' --filter 'python/[^/]*\.c$' \
  --txt - --print-summary --json "$scratch/report.json" "$execroot/bazel-out" 2>/dev/null | tee "$summary"

# What the tests leave unreached against tools/coverage_unreached's explanations (plain gcov only: the asan-gcov build
# adds UBSan's checks, branches no list explains). With --explained an unexplained or stale entry fails the run.
if [ "$CONFIG" = gcov ]; then
  python3 tools/coverage_unreached.py "$scratch/report.json" tools/coverage_unreached > "$scratch/unreached" ||
    [ "$explained" = 0 ] || unreached_status=1
  cat "$scratch/unreached"
fi

percent() { sed -n "s/^$1: \([0-9.]*\)%.*/\1/p" "$summary"; }
lines=$(percent lines) branches=$(percent branches)
if [ -n "$floor_lines" ]; then
  awk -v l="$lines" -v b="$branches" -v fl="$floor_lines" -v fb="$floor_branches" 'BEGIN {
    if (l + 0 < fl + 0 || b + 0 < fb + 0) {
      printf "FAIL  coverage below its floor: lines %s%% (floor %s%%), branches %s%% (floor %s%%)\n", l, fl, b, fb
      exit 1
    }
    printf "PASS  coverage: lines %s%% (floor %s%%), branches %s%% (floor %s%%)\n", l, fl, b, fb
  }'
fi
exit "$unreached_status"
