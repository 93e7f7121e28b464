#!/bin/sh
# One dlmap library per binary (src/one_library_per_binary.c): a program on two dlmap libraries built from different
# specs fails to link, with a message that names the guard symbol (which says what to do) and both libraries; a
# program on two consumers of one library links and runs.
# Usage: link_guard_test.sh CC TWO.args LIB1 LIB2 SAME.args — CC is the C toolchain's compiler, each .args file the
# program's linker arguments (tests/link_guard/link_inputs.bzl), LIB1 and LIB2 the two libraries' target names.
set -eu
cc="$1"; two="$2"; lib1="$3"; lib2="$4"; same="$5"
work="${TEST_TMPDIR:-$(mktemp -d)}/link_guard"
rm -rf "$work" && mkdir -p "$work"
symbol=dlmap_link_error_two_dlmap_libraries_in_one_binary_link_only_one_see_README
fail() { echo "FAIL: $*"; exit 1; }

# link ARGS OUT: links the program from ARGS (one argument a line) into OUT; the linker's output goes to OUT.log.
link() {
  args="$1"; out="$2"
  set --
  while IFS= read -r arg; do set -- "$@" "$arg"; done <"$args"
  "$cc" -o "$out" "$@" >"$out.log" 2>&1
}

if link "$two" "$work/two"; then
  fail "a program on $lib1 and $lib2 linked"
fi
cat "$work/two.log"
grep -q "multiple definition of .$symbol" "$work/two.log" || fail "the linker's message does not name $symbol"
for lib in "$lib1" "$lib2"; do
  grep -q "${lib}_one_library_per_binary" "$work/two.log" || fail "the linker's message does not name $lib"
done
echo "PASS: two libraries from different specs do not link, and the linker says why"

link "$same" "$work/same" || { cat "$work/same.log"; fail "a program on two consumers of $lib1 did not link"; }
"$work/same" >"$work/same.out" || fail "the program on two consumers of $lib1 failed"
grep -q '^[0-9]*\.[0-9]*\.[0-9]*$' "$work/same.out" || fail "the program printed $(cat "$work/same.out"), no version"
echo "PASS: two consumers of one library link and run"
