#!/bin/sh
# dlmap hardening run (CI): every test that runs compiled code under ASan+UBSan, every C/C++ test under valgrind, the
# TSan stress test, every fuzz target for a bounded time; the ASan build carries gcov counts, and the coverage step
# prints the figure they give and fails below the floor in tools/coverage_floor.
#
# Usage: tools/hardening.sh [STEP...]      steps: asan coverage valgrind tsan fuzz spec pydbg (default: all seven, in
#                                          that order; coverage reports on the last asan step's counts, so it must
#                                          come before tsan and fuzz rebuild the same objects)
#        tools/hardening.sh merge          fold the last fuzz run's new inputs into the committed seed corpora
# Environment:
#   DLMAP_FUZZ_SECONDS     seconds per fuzz target (default 30)
#   DLMAP_FUZZ_RUNS        stop each fuzz target after this many executions instead, whichever comes first
#                          (libFuzzer -runs; default: no limit)
#   DLMAP_FUZZ_TARGETS     the fuzz targets of the `fuzz` and `merge` steps, space-separated (default: all four:
#                          import_fuzz export_fuzz name_lookup_fuzz error_format_fuzz)
#   DLMAP_SPEC_EXAMPLES    examples per spec-loader property in the `spec` step (default 300, random seed)
#   DLMAP_HOSTILE_EXAMPLES examples per hostile-producer property in the `asan` step, which runs
#                          //python:hostile_property_test with the ASan runtime (default 25, random seed: a fresh
#                          draw every run; 60 took 700 s under ASan, the run's critical path)
#   DLMAP_STRESS_TENSORS   tensors per producer thread in the TSan stress run (default 20000; 5000 in //...)
#   DLMAP_HARDENING_ROOT   Bazel --output_user_root for the sanitizer and clang builds (default /tmp/bazel_hardening):
#                          their own server and cache, so they never thrash the default one (valgrind and pydbg run on
#                          the default one: valgrind compiles nothing differently, pydbg only the binding again)
#   DLMAP_HARDENING_OUT    logs, fuzz working corpora and crash artifacts (default /tmp/dlmap_hardening.<checkout
#                          checksum>; the summary names it)
#   DLMAP_NO_INSTALL=1     do not apt-get install missing packages (clang lld libclang-rt-14-dev valgrind
#                          python3-hypothesis gcovr, and python3-dbg for the pydbg step), just report them
# Exit status: non-zero when any step fails (a test failure, a sanitizer or valgrind report, a fuzz crash); the
# summary at the end says which. A fuzz crash leaves its input under $DLMAP_HARDENING_OUT/fuzz/<target>/: add it
# to fuzz/regressions/<target>/ with the fix (see RELIABILITY.md).
set -eu
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${DLMAP_FUZZ_SECONDS:-30}
SPEC_EXAMPLES=${DLMAP_SPEC_EXAMPLES:-300}
HOSTILE_EXAMPLES=${DLMAP_HOSTILE_EXAMPLES:-25}
STRESS_TENSORS=${DLMAP_STRESS_TENSORS:-20000}
ROOT=${DLMAP_HARDENING_ROOT:-/tmp/bazel_hardening}
# One output directory per checkout: two checkouts hardening at once must not share logs and scratch corpora.
OUT=${DLMAP_HARDENING_OUT:-/tmp/dlmap_hardening.$(pwd | cksum | cut -d ' ' -f 1)}
ALL_FUZZ_TARGETS="import_fuzz export_fuzz name_lookup_fuzz error_format_fuzz"
FUZZ_TARGETS=${DLMAP_FUZZ_TARGETS:-$ALL_FUZZ_TARGETS}
FUZZ_RUNS=${DLMAP_FUZZ_RUNS:-}
for t in $FUZZ_TARGETS; do
  case " $ALL_FUZZ_TARGETS " in
    *" $t "*) ;;
    *)
      echo "hardening: unknown fuzz target '$t' in DLMAP_FUZZ_TARGETS ($ALL_FUZZ_TARGETS)" >&2
      exit 2
      ;;
  esac
done
case "$FUZZ_RUNS" in
  "" | *[!0-9]*) [ -z "$FUZZ_RUNS" ] || { echo "hardening: DLMAP_FUZZ_RUNS must be a number" >&2; exit 2; } ;;
esac
steps=${*:-asan coverage valgrind tsan fuzz spec pydbg}

# --symlink_prefix=/: no bazel-* links in the checkout (they would point into this separate output root).
hbazel() { bazel --output_user_root="$ROOT" "$@"; }
BFLAGS="--symlink_prefix=/ --color=no --curses=no"
TFLAGS="--nocache_test_results" # a hardening run runs every test, even one whose inputs did not change

# ---- prerequisites ------------------------------------------------------------------------------------------------
tools/install_deps.sh
# install_missing [APT_OPTION...] -- PACKAGE...: apt-get installs those not installed yet (or, with DLMAP_NO_INSTALL=1,
# names them and exits).
install_missing() {
  options=""
  while [ "$1" != "--" ]; do options="$options $1"; shift; done
  shift
  missing=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -n "$missing" ] || return 0
  if [ "${DLMAP_NO_INSTALL:-0}" = 1 ]; then
    echo "hardening: missing Debian packages:$missing" >&2
    exit 1
  fi
  echo "hardening: installing Debian packages:$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $options $missing || {
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $options $missing
  }
}
install_missing -- clang lld libclang-rt-14-dev valgrind python3-hypothesis gcovr
# Python's debug build for the pydbg step, without the gdb it recommends.
case " $steps " in *" pydbg "*) install_missing --no-install-recommends -- python3-dbg ;; esac

mkdir -p "$OUT"
summary="$OUT/summary.txt"
: >"$summary"
failed=0
trap 'hbazel shutdown >/dev/null 2>&1 || true' EXIT

note() { echo "$*" | tee -a "$summary"; }

# Runs one step's command, logs it, records pass/fail and wall time; prints the log's last $shown lines.
shown=25
run_step() {
  name=$1
  shift
  log="$OUT/$name.log"
  start=$(date +%s)
  echo "==== hardening: $name ($*)"
  if "$@" >"$log" 2>&1; then result=PASS; else result=FAIL; failed=1; fi
  end=$(date +%s)
  tail -n "$shown" "$log"
  note "$name: $result in $((end - start)) s (log: $log)"
}

# Bazel's per-test summary lines ("//x:y  PASSED in 1.2s") and the totals, for the summary file.
test_totals() {
  grep -E "^Executed [0-9]+ out of [0-9]+ test" "$1" | tail -n 1 || true
}

# Every package of the project, instead of //...: the default build leaves a bazel-<checkout> symlink in the
# tree that points into another output base, and //... would walk it (its name follows the checkout's directory,
# so .bazelignore cannot list it). examples/downstream is its own workspace.
all_packages() {
  echo "//:all"
  for dir in */; do
    dir=${dir%/}
    case "$dir" in bazel-* | examples) continue ;; esac
    if [ -f "$dir/BUILD" ] || [ -n "$(find "$dir" -name BUILD -print -quit)" ]; then echo "//$dir/..."; fi
  done
}

# The tests that run code compiled by the build: every test with a C/C++ target among its dependencies (the query
# finds them, so a new test needs no tag). The others (the generator's and the spec loader's Python tests, the docs
# check, ...) run nothing a sanitizer build changes; the host suite runs them. Not the debug interpreter's (tag pydbg,
# manual): the pydbg step runs those. Not //python/check:tables_test: it regenerates the peers' tables (NumPy and
# PyTorch against each other and against dlmap's modules) through the same checker cases that checker_*_test run on
# dlmap's modules here, so under ASan it re-ran those cases inside NumPy and PyTorch for 450 s; the host suite runs it.
compiled_code_tests() {
  packages="set($(all_packages | tr '\n' ' '))"
  hbazel query --output=label \
    "tests($packages) intersect rdeps($packages, kind('cc_(library|binary|test) rule', $packages)) \
     except attr(tags, '\bpydbg\b', $packages) except //python/check:tables_test"
}

step_asan() {
  # gcc AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer around every test that runs compiled code; the
  # Python tests (the hostile-producer property with more examples and a fresh seed) run with the runtime preloaded.
  # Built with gcov counts too (--config=asan-gcov: -O0, unsandboxed), which the coverage step reads: the figure
  # without a build of its own. The counts of an earlier run would add to this one's: deleted first.
  targets=$(compiled_code_tests) || return 1
  execroot=$(hbazel info $BFLAGS --config=asan-gcov execution_root 2>/dev/null) || return 1
  [ ! -d "$execroot/bazel-out" ] || find "$execroot/bazel-out" -name '*.gcda' -delete
  # shellcheck disable=SC2086
  hbazel test $BFLAGS $TFLAGS --config=asan-gcov --keep_going --test_env=DLMAP_HOSTILE_EXAMPLES="$HOSTILE_EXAMPLES" \
    --test_env=DLMAP_HOSTILE_RANDOM=1 -- $targets
}

step_coverage() {
  # The lines and branches of the hand-written C that the asan step's tests reached (tools/coverage.sh, which adds up
  # every test's and every object's counts), against the floor in tools/coverage_floor: below it, the step fails.
  # shellcheck disable=SC2046
  DLMAP_COVERAGE_ROOT="$ROOT" DLMAP_COVERAGE_CONFIG=asan-gcov tools/coverage.sh --report-only \
    --floor $(grep -v '^#' tools/coverage_floor)
}

step_valgrind() {
  # valgrind memcheck around every C/C++ test binary: any error or definite leak exits 99 and fails the test. Only
  # cc_test: valgrind follows no child process, so around a shell test it would check the shell and nothing else.
  # The config compiles nothing differently (it only wraps the test), so on the default output root the tests are the
  # host suite's binaries, not a second build of them.
  bazel test $BFLAGS $TFLAGS --config=valgrind --keep_going --test_lang_filters=cc --build_tests_only -- \
    $(all_packages)
}

step_tsan() {
  # gcc ThreadSanitizer build of the stress test, of the prepared-exchange test, whose threads share one plan, of
  # the remembered-plan test, whose threads each remember their own, and of the kernel dispatch, whose threads share
  # (and reload) the kernels over the fake runtime (halt_on_error: any race fails them).
  hbazel test $BFLAGS $TFLAGS --config=tsan --test_output=all --test_env=DLMAP_STRESS_TENSORS="$STRESS_TENSORS" \
    //tests/hardening:stress_test //tests/plan:plan_array_api_test //tests/plan:remembered_array_api_test \
    //tests/gpu:kernel_dispatch_cuda_test
}

step_fuzz() {
  labels=""
  for t in $FUZZ_TARGETS; do labels="$labels //fuzz:$t"; done
  # shellcheck disable=SC2086
  hbazel build $BFLAGS --config=fuzz $labels || return 1
  bin=$(hbazel info $BFLAGS --config=fuzz bazel-bin 2>/dev/null)
  status=0
  for t in $FUZZ_TARGETS; do
    work="$OUT/fuzz/$t"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    # Start from the committed seeds and every recorded crash; new inputs go to the scratch corpus only.
    seeds="fuzz/corpus/$t"
    [ -d "fuzz/regressions/$t" ] && seeds="$seeds fuzz/regressions/$t"
    runs_flag=""
    [ -z "$FUZZ_RUNS" ] || runs_flag="-runs=$FUZZ_RUNS"
    echo "---- $t: ${FUZZ_SECONDS}s${FUZZ_RUNS:+ or $FUZZ_RUNS executions} from $seeds"
    echo "command: $bin/fuzz/$t -max_total_time=$FUZZ_SECONDS $runs_flag -timeout=25 -rss_limit_mb=2048" \
      "-print_final_stats=1 -artifact_prefix=$work/artifacts/ $work/corpus $seeds" >"$work/command.txt"
    # shellcheck disable=SC2086
    if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      timeout $((FUZZ_SECONDS + 120)) "$bin/fuzz/$t" -max_total_time="$FUZZ_SECONDS" $runs_flag -timeout=25 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" $seeds \
      >"$work/fuzz.log" 2>&1; then
      r=PASS
    else
      r=FAIL
      status=1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz.log" | tail -n 1)
    cov=$(grep -oE "cov: [0-9]+ ft: [0-9]+" "$work/fuzz.log" | tail -n 1)
    echo "fuzz $t: $r, ${runs:-?} executions (${rate:-?}/s), $cov, corpus $(ls "$work/corpus" | wc -l) new + $(ls fuzz/corpus/$t | wc -l) seeds"
    if [ "$r" = FAIL ]; then
      grep -E "ERROR|runtime error|invariant violated|SUMMARY|Test unit written" "$work/fuzz.log" | head -n 20
      ls "$work/artifacts"
    fi
  done
  return $status
}

step_spec() {
  # The spec-loader property with a fresh random seed and more examples than the //... run.
  DLMAP_SPEC_RANDOM=1 DLMAP_SPEC_EXAMPLES="$SPEC_EXAMPLES" /usr/bin/python3 -B tests/hardening/spec_property_test.py
}

step_pydbg() {
  # The binding's Python tests on Python's debug build (python3-dbg, installed above): its reference-count assertions,
  # and python/tests/testing.py's per-test check that sys.gettotalrefcount comes back. On the default output root, not
  # $ROOT: the library and all but the binding's C (compiled again against the debug headers) are the host suite's
  # build. `bazel sync --configure` makes the build see a python3-dbg installed since it last looked.
  bazel sync --configure --color=no --curses=no || return 1
  # shellcheck disable=SC2086
  bazel test $BFLAGS $TFLAGS --test_output=errors -- //python:pydbg_tests
}

step_merge() {
  # Minimise the committed seeds plus the last run's scratch corpora back into fuzz/corpus/<target>.
  labels=""
  for t in $FUZZ_TARGETS; do labels="$labels //fuzz:$t"; done
  # shellcheck disable=SC2086
  hbazel build $BFLAGS --config=fuzz $labels
  bin=$(hbazel info $BFLAGS --config=fuzz bazel-bin 2>/dev/null)
  for t in $FUZZ_TARGETS; do
    [ -d "$OUT/fuzz/$t/corpus" ] || continue
    merged="$OUT/fuzz/$t/merged"
    rm -rf "$merged"
    mkdir -p "$merged"
    "$bin/fuzz/$t" -merge=1 "$merged" "fuzz/corpus/$t" "$OUT/fuzz/$t/corpus"
    rm -f fuzz/corpus/"$t"/*
    cp "$merged"/* "fuzz/corpus/$t/"
    echo "merge $t: $(ls "fuzz/corpus/$t" | wc -l) seeds"
  done
}

total_start=$(date +%s)
for step in $steps; do
  case $step in
    asan | valgrind | tsan | pydbg)
      run_step "$step" "step_$step"
      note "  $(test_totals "$OUT/$step.log")"
      ;;
    coverage)
      shown=500 # the whole per-file table into the CI log, not only its last 25 lines
      run_step coverage step_coverage
      shown=25
      grep -E "^(lines|branches|functions): |^(PASS|FAIL)  coverage" "$OUT/coverage.log" | sed 's/^/  /' >>"$summary" || true
      ;;
    fuzz)
      run_step fuzz step_fuzz
      grep -E "^fuzz [a-z_]+: " "$OUT/fuzz.log" >>"$summary" || true
      ;;
    spec)
      run_step spec step_spec
      grep -E "^spec_property_test:" "$OUT/spec.log" >>"$summary" || true
      ;;
    merge)
      step_merge
      ;;
    *)
      echo "hardening: unknown step '$step' (asan coverage valgrind tsan fuzz spec pydbg merge)" >&2
      exit 2
      ;;
  esac
done
total_end=$(date +%s)
echo
echo "==== hardening summary ($((total_end - total_start)) s; logs in $OUT)"
cat "$summary"
exit $failed
