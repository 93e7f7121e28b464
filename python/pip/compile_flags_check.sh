#!/bin/bash
# dlmap Python package — the compile flags of a `pip install -v` of the sdist (python/pip/user_path_test.sh): every C
# compile carries the Bazel build's -Wall -Wextra (.bazelrc) and ends signed overflow's definition as wrap-around
# (-fno-wrapv after Python's own -fwrapv, which would hide the overflows UBSan and the Bazel build see), and the
# compiler warns about nothing (issue 56).
# Usage: compile_flags_check.sh INSTALL_LOG     exit 0 when the flags hold and no warning was printed
set -euo pipefail
log=$1
fail() { echo "compile_flags_check: FAIL: $*" >&2; exit 1; }

compiles=$(grep -E '(^|[ /])(x86_64-linux-gnu-)?(gcc|cc|clang)(-[0-9]+)? .* -c ' "$log" || true)
count=$(printf '%s\n' "$compiles" | grep -c ' -c ' || true)
[ "$count" -gt 0 ] || fail "no compiler command line in $log (was pip run with -v?)"
while IFS= read -r line; do
  for flag in -Wall -Wextra; do
    case " $line " in *" $flag "*) ;; *) fail "a compile without $flag: $line" ;; esac
  done
  # The last of -fwrapv / -fno-wrapv is the one the compiler applies.
  last=$(printf '%s\n' "$line" | grep -oE -- '-f(no-)?wrapv( |$)' | tail -n 1 | tr -d ' ')
  [ "$last" = "-fno-wrapv" ] || fail "a compile that ends with ${last:-no wrapv flag}, not -fno-wrapv: $line"
done <<<"$compiles"
# gcc and clang print FILE:LINE:COL: warning: (setuptools' own "warning: build_py: ..." lines are not the compiler's)
if grep -E ':[0-9]+:[0-9]+: warning: ' "$log" >&2; then
  fail "the compiler warned (above) under -Wall -Wextra"
fi
echo "compile_flags_check: $count compiles with -Wall -Wextra -fno-wrapv, no warnings"
