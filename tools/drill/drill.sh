#!/bin/sh
# dlmap CI drill — upstream lands new spec entries and the suite stays green: copies this checkout (tracked and
# untracked-but-not-ignored files, as they are on disk) to a scratch workspace, then applies the README recipes'
# edits there one variant at a time, cumulatively (tools/drill/variants.py: b, a, c, d, e, f), after each refreshes
# the docs with the one documented command (`bazel run //docs:update`), and runs the whole suite (`bazel test //...`,
# which includes the docs staleness check) after (e) and (f) — or after every variant with
# DLMAP_DRILL_EVERY_VARIANT=1, which names the variant that broke a test. After f, the end-to-end host exchange checks
# (//tools/drill) also run on the device type f made exchangeable, and the downstream example workspace is tested on
# the drilled spec. Fails when a variant's suite fails — that is, when a test restates a spec fact instead of reading
# it from the spec.
#
# One Bazel output base under its own --output_user_root serves every variant (incremental builds) and never
# touches the checkout's. Prints one line per variant with its time; a failing variant's log is printed and kept.
#
# usage: tools/drill/drill.sh [--keep-going]     --keep-going: run the later variants after a failure (to list
#                                                 every restated fact at once); the exit status is still 1
# environment: DLMAP_DRILL_DIR   scratch workspace (default /tmp/dlmap_drill; replaced on every run)
#              DLMAP_DRILL_ROOT  Bazel output user root (default /tmp/bazel_drill; kept, so reruns are incremental)
set -eu
cd "$(dirname "$0")/../.."
source_dir=$PWD
scratch=${DLMAP_DRILL_DIR:-/tmp/dlmap_drill}
root=${DLMAP_DRILL_ROOT:-/tmp/bazel_drill}
keep_going=0
case "${1:-}" in
  --keep-going) keep_going=1 ;;
  "") ;;
  *) echo "usage: $0 [--keep-going]" >&2; exit 2 ;;
esac

# A fresh copy of the checkout. The marker keeps a mistyped DLMAP_DRILL_DIR from being deleted.
git rev-parse --git-dir >/dev/null 2>&1 || { echo "drill: $source_dir is not a git checkout (the copy is git ls-files)" >&2; exit 2; }
if [ -e "$scratch" ] && [ ! -e "$scratch/.dlmap_drill" ]; then
  echo "drill: $scratch exists and is not a drill workspace; set DLMAP_DRILL_DIR elsewhere" >&2
  exit 2
fi
rm -rf "$scratch"
mkdir -p "$scratch"
touch "$scratch/.dlmap_drill"
git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null |
  tar -xf - -C "$scratch"
# The host's Bazel flags (.bazelrc.host) are ignored by git: write the copy's own.
"$scratch/third_party/bazel_offline/configure.sh"
# A git repository (nothing committed) so that the release archive of the downstream step packs the drilled files.
git -C "$scratch" init -q
printf '.dlmap_drill\n.drill_logs/\n' >>"$scratch/.git/info/exclude"
logs="$scratch/.drill_logs"
mkdir -p "$logs"

bazel_drill() { (cd "$scratch" && bazel --output_user_root="$root" "$@"); }
# The property tests draw fewer random examples here than in the plain suite (their explicit examples all run): the drill
# asks whether a test restates a spec fact, which every example of a property reads alike; random depth is the plain
# suite's and the hardening run's.
property_flags="--test_env=DLMAP_HOSTILE_EXAMPLES=8 --test_env=DLMAP_SPEC_EXAMPLES=12"
# Stop the drill's Bazel server however the drill ends (tools/downstream.sh stops its consumers' itself).
trap 'bazel_drill shutdown >/dev/null 2>&1 || true' EXIT

status=0
total_start=$(date +%s)
for variant in b a c d e f; do
  start=$(date +%s)
  log="$logs/$variant.log"
  ok=1
  what=$(python3 "$source_dir/tools/drill/variants.py" "$variant" "$scratch" 2>"$log") || ok=0
  if [ "$ok" -eq 1 ]; then
    bazel_drill run //docs:update >>"$log" 2>&1 || ok=0
  fi
  # The suite runs after (e) and (f) (after every variant with DLMAP_DRILL_EVERY_VARIANT=1). The variants are
  # cumulative and only add or extend entries, so a test that restates a fact any of (b)-(e) changes fails after (e),
  # which carries all of them with kDLDrillAccel still on no platform; (f) then makes it exchangeable. Each variant's
  # own edit and its docs refresh (the generator's checks) run every time. Tests tagged drill_last (the conformance
  # checker's runs, minutes each) run after (f) only.
  suite=0
  case "$variant" in e | f) suite=1 ;; esac
  [ "${DLMAP_DRILL_EVERY_VARIANT:-0}" = 1 ] && suite=1
  if [ "$ok" -eq 1 ] && [ "$suite" -eq 1 ]; then
    filter="--test_tag_filters=-drill_last"
    [ "$variant" = f ] && filter=""
    # shellcheck disable=SC2086
    bazel_drill test --keep_going $property_flags $filter //... >>"$log" 2>&1 || ok=0
  fi
  [ "$suite" -eq 1 ] || what="$what (suite: after (e) and (f))"
  if [ "$ok" -eq 1 ] && [ "$variant" = f ]; then
    # The device type f made exchangeable, end to end in C and Python under both profiles.
    bazel_drill test --test_arg=kDLDrillAccel --test_output=all //tools/drill:all >>"$log" 2>&1 || ok=0
    for check in host_exchange_test host_exchange_array_api_test python_host_exchange_test \
      python_host_exchange_array_api_test; do
      grep -q "^PASS kDLDrillAccel" "$scratch/bazel-testlogs/tools/drill/$check/test.log" || ok=0
    done
    # The downstream example (tools/test.sh runs it too) builds its own library from the drilled spec plus its overlay,
    # taking the drilled checkout as a consumer does: its release archive.
    (cd "$scratch" && DLMAP_BAZEL_STARTUP="--output_user_root=$root" tools/downstream.sh --example-only) >>"$log" 2>&1 ||
      ok=0
    what="$what; end to end in C and Python under both profiles; downstream example green"
  fi
  seconds=$(($(date +%s) - start))
  if [ "$ok" -eq 1 ]; then
    echo "drill ($variant) PASS in ${seconds}s: $what"
  else
    echo "drill ($variant) FAIL in ${seconds}s: ${what:-the edit itself failed}; log: $log"
    grep -E '^(FAIL|ERROR)|FAILED|^variants.py' "$log" | head -40 || true
    status=1
    [ "$keep_going" -eq 1 ] || break
  fi
done
echo "drill: $([ "$status" -eq 0 ] && echo PASS || echo FAIL) in $(($(date +%s) - total_start))s (scratch $scratch)"
exit "$status"
