#!/usr/bin/env bash
# dlmap GPU check — CI test of gpu/check_steps.sh, what gpu/check.sh does with its steps' outcomes, with stand-in steps
# (no GPU needed): a step's own statuses become PASS, FAIL or SKIP; running out of its time, a crash and an unknown
# status are FAIL rows, and a step whose time is already spent never runs and never passes; the verdict is PASS only
# when the C device checks and a framework's rows passed, "nothing checked" (2) and "incomplete" (4) otherwise, with
# each skipped half's reason, and FAIL (1) when anything failed.
set -euo pipefail
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
fail() { echo "FAIL: $*" >&2; exit 1; }
line() { local status=$1; shift; printf '%-4s  %s\n' "$status" "$*"; }
STARTED=$(date +%s) BUDGET=480
# shellcheck source=gpu/check_steps.sh
. gpu/check_steps.sh
T=${TEST_TMPDIR:-$(mktemp -d)}

# ---- run_step: a Python check's statuses (0 pass, 1 fail, 3 nothing checked) and everything else ------------------
# step STATUS_WANTED ROW_PATTERN COMMAND...: runs COMMAND as a Python check step with 30 s left; checks RESULT and row.
step() {
  local want=$1 row=$2
  shift 2
  run_step "stand-in" "$(($(date +%s) + 30))" "$PY_PASS" "$PY_FAIL" "$PY_NOTHING_CHECKED" "$@" >"$T/row" 2>&1
  cat "$T/row"
  [ "$RESULT" = "$want" ] || fail "$*: $RESULT, want $want"
  if [ -n "$row" ]; then grep -qE "$row" "$T/row" || fail "$*: no row matching '$row'"; fi
}
step PASS "" true
step FAIL "" bash -c 'exit 1'
step SKIP "" bash -c 'exit 3'
[ "$RESULT_WHY" = "stand-in checked nothing (its reason is above)" ] || fail "SKIP without its reason: $RESULT_WHY"
step FAIL '^FAIL  stand-in: crashed \(SEGV\)$' bash -c 'kill -SEGV $$'
step FAIL '^FAIL  stand-in: crashed \(ABRT\)$' bash -c 'kill -ABRT $$'
step FAIL '^FAIL  stand-in: exited 2, which is not one of its statuses$' bash -c 'exit 2'
step FAIL '^FAIL  stand-in: could not be started \(exit 127\)$' /nonexistent/python3

# Out of time: stopped at its deadline (less the grace period), a FAIL row; one that ignores TERM is killed.
begin=$(date +%s)
run_step "slow" "$((begin + KILL_GRACE + 2))" 0 1 3 sleep 60 >"$T/row" 2>&1
cat "$T/row"
[ "$RESULT" = FAIL ] && grep -qE '^FAIL  slow: ran out of time \(its share of the 480 s ended after [0-9]+ s\)$' "$T/row" ||
  fail "a step past its deadline is not a FAIL row saying so"
[ $(($(date +%s) - begin)) -le $((KILL_GRACE + 4)) ] || fail "the slow step ran past its deadline"
begin=$(date +%s)
run_step "stubborn" "$((begin + KILL_GRACE + 2))" 0 1 3 bash -c 'trap "" TERM; sleep 60' >"$T/row" 2>&1
cat "$T/row"
[ "$RESULT" = FAIL ] && grep -q '^FAIL  stubborn: ran out of time' "$T/row" || fail "a step ignoring TERM is not a FAIL row"
[ $(($(date +%s) - begin)) -le $((2 * KILL_GRACE + 4)) ] || fail "the stubborn step outlived its grace period"
# No time left: not run at all, and a FAIL row.
run_step "late" "$(date +%s)" 0 1 3 touch "$T/ran" >"$T/row" 2>&1
cat "$T/row"
[ "$RESULT" = FAIL ] && [ ! -e "$T/ran" ] || fail "a step with no time left ran, or did not fail"

# ---- summary ---------------------------------------------------------------------------------------------------------
# verdict C PY CONF WANT_STATUS WANT_PATTERN: the verdict line and exit status for these step outcomes.
verdict() {
  local status=0 out
  C_VERDICT=$1 PY_VERDICT=$2 CONF_VERDICT=$3 C_WHY="no toolkit" PY_WHY="no framework on the GPU" CONF_WHY=""
  out=$(summary) || status=$?
  echo "$out"
  [ "$status" = "$4" ] || fail "C $1, Python $2, conformance $3: exit $status, want $4"
  grep -qE "$5" <<<"$out" || fail "C $1, Python $2, conformance $3: the verdict line does not match '$5'"
}
verdict PASS PASS PASS 0 '^PASS  gpu/check.sh: C device checks PASS, Python real-client checks PASS, conformance PASS \([0-9]+ s of 480\)$'
verdict PASS PASS SKIP 0 '^PASS  .*; conformance skipped: not reached$'
verdict SKIP SKIP SKIP 2 '^SKIP  gpu/check.sh: nothing checked: .*; C device checks skipped: no toolkit; Python real-client checks skipped: no framework on the GPU; conformance skipped: not reached$'
verdict PASS SKIP SKIP 4 '^SKIP  gpu/check.sh: incomplete .*Python real-client checks skipped: no framework on the GPU'
verdict SKIP PASS PASS 4 '^SKIP  gpu/check.sh: incomplete .*C device checks skipped: no toolkit'
verdict PASS SKIP PASS 4 '^SKIP  gpu/check.sh: incomplete'  # the conformance step alone is no framework's rows
verdict SKIP SKIP PASS 4 '^SKIP  gpu/check.sh: incomplete'
verdict FAIL PASS PASS 1 '^FAIL  gpu/check.sh: C device checks FAIL'
verdict PASS PASS FAIL 1 '^FAIL  '
verdict SKIP FAIL SKIP 1 '^FAIL  .*C device checks skipped: no toolkit'
echo PASS
