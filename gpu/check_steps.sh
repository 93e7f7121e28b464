# dlmap GPU check — sourced by gpu/check.sh: its exit statuses, each step run until its deadline with its outcome as a
# row, and the verdict line. Kept apart so //gpu:check_steps_test can drive it with stand-in steps (no GPU needed).
# Needs: STARTED (epoch seconds the run began), BUDGET (its seconds); line() prints one row.
# shellcheck shell=bash disable=SC2034  # the statuses and RESULT* are read by the script that sources this file

# gpu/check.sh's exit statuses: PASS needs the C device checks and at least one framework's rows to have run on the GPU
# and passed; "nothing checked" and "incomplete" (one half ran, the other was skipped) are never PASS.
readonly EXIT_PASS=0 EXIT_FAIL=1 EXIT_NOTHING_CHECKED=2 EXIT_CANNOT_BUILD=3 EXIT_INCOMPLETE=4
# The exit statuses of the steps it runs. The C check program (gpu/check_main.c): 0 its checks passed, 1 one failed,
# 2 no usable device. The Python checks (python/gpu_check.py, python/check/gpu_peers.py): 0 their rows passed, 1 one
# failed, 3 nothing checked (they print why, e.g. no framework could allocate on the GPU).
readonly C_PASS=0 C_FAIL=1 C_NO_DEVICE=2
readonly PY_PASS=0 PY_FAIL=1 PY_NOTHING_CHECKED=3
KILL_GRACE=5  # seconds between a step's TERM and KILL, inside its share

elapsed() { echo "$(($(date +%s) - STARTED))"; }

# limited DEADLINE COMMAND...: runs COMMAND until DEADLINE (epoch seconds); 124 when it ran out of time or had none.
limited() {
  local deadline=$1 left status=0
  shift
  left=$((deadline - $(date +%s) - KILL_GRACE))
  [ "$left" -ge 1 ] || return 124
  timeout -k "$KILL_GRACE" "$left" "$@" || status=$?
  # timeout's own 124, or its KILL after the grace period; a KILL before the deadline (memory) is the command's.
  if [ "$status" = 137 ] && [ "$(date +%s)" -ge "$((deadline - KILL_GRACE))" ]; then status=124; fi
  return "$status"
}

# describe STATUS SECONDS: why a step ended other than with a verdict of its own.
describe() {
  case $1 in
    124) echo "ran out of time (its share of the $BUDGET s ended after $2 s)" ;;
    12[6-7]) echo "could not be started (exit $1)" ;;
    1[3-9][0-9] | 2[0-5][0-9]) echo "crashed ($(kill -l "$(($1 - 128))" 2>/dev/null || echo "signal $(($1 - 128))"))" ;;
    *) echo "exited $1, which is not one of its statuses" ;;
  esac
}

# run_step NAME DEADLINE PASS FAIL NOTHING COMMAND...: runs COMMAND until DEADLINE; sets RESULT to PASS, FAIL or SKIP
# and, for SKIP, RESULT_WHY. PASS, FAIL and NOTHING are the step's own exit statuses; any other end (out of time, a
# crash, an unknown status) is a FAIL row.
run_step() {
  local name=$1 deadline=$2 pass=$3 fail=$4 nothing=$5 begin status=0
  shift 5
  begin=$(date +%s) RESULT=FAIL RESULT_WHY=""
  limited "$deadline" "$@" || status=$?
  case $status in
    "$pass") RESULT=PASS ;;
    "$fail") ;;
    "$nothing") RESULT=SKIP RESULT_WHY="$name checked nothing (its reason is above)" ;;
    *) line FAIL "$name: $(describe "$status" "$(($(date +%s) - begin))")" ;;
  esac
}

# summary: the verdict line from C_VERDICT, PY_VERDICT, CONF_VERDICT (PASS, FAIL or SKIP) and, for each SKIP, its
# *_WHY; returns the exit status. The conformance step alone never makes a PASS: its dlmap rows need no framework.
summary() {
  local status verdict why=""
  [ "$C_VERDICT" != SKIP ] || why="$why; C device checks skipped: ${C_WHY:-not reached}"
  [ "$PY_VERDICT" != SKIP ] || why="$why; Python real-client checks skipped: ${PY_WHY:-not reached}"
  [ "$CONF_VERDICT" != SKIP ] || why="$why; conformance skipped: ${CONF_WHY:-not reached}"
  if [ "$C_VERDICT" = FAIL ] || [ "$PY_VERDICT" = FAIL ] || [ "$CONF_VERDICT" = FAIL ]; then
    status=$EXIT_FAIL verdict="FAIL  gpu/check.sh:"
  elif [ "$C_VERDICT" = PASS ] && [ "$PY_VERDICT" = PASS ]; then
    status=$EXIT_PASS verdict="PASS  gpu/check.sh:"
  elif [ "$C_VERDICT" != PASS ] && [ "$PY_VERDICT" != PASS ] && [ "$CONF_VERDICT" != PASS ]; then
    status=$EXIT_NOTHING_CHECKED verdict="SKIP  gpu/check.sh: nothing checked:"
  else
    status=$EXIT_INCOMPLETE verdict="SKIP  gpu/check.sh: incomplete (PASS needs both halves):"
  fi
  echo "$verdict C device checks $C_VERDICT, Python real-client checks $PY_VERDICT, conformance $CONF_VERDICT" \
    "($(elapsed) s of $BUDGET)$why"
  return "$status"
}
