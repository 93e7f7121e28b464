#!/usr/bin/env bash
# dlmap GPU check — CI test of //gpu:bundle's form and of gpu/check.sh's refusals: the archive is reproducible (members
# sorted, mtime 0, owner 0/0, gzip without a time); check.sh refuses, with the reason, exit 3 and before compiling
# anything, a bundle generated from other sources than the checkout's, a damaged one, one that lacks a file, and none.
# Usage: check_bundle_test.sh BUNDLE
set -euo pipefail
bundle=$PWD/$1
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
export DLMAP_CHECK_BUILD=$TEST_TMPDIR/build
unset DLMAP_CHECK_BUNDLE
T=$TEST_TMPDIR
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- the archive ---------------------------------------------------------------------------------------------------
listing=$(tar -tvzf "$bundle")
echo "$listing"
names=$(tar -tzf "$bundle")
[ "$names" = "$(LC_ALL=C sort <<<"$names")" ] || fail "members are not sorted by name"
grep -v -- '^-rw-r--r-- 0/0 .* 1970-01-01 00:00 ' <<<"$listing" && fail "a member with another mode, owner or mtime"
[ "$(od -An -tu1 -j4 -N4 "$bundle" | tr -s ' ')" = " 0 0 0 0" ] || fail "the gzip header carries a time"
grep -qx 'src/generated/name_lookup.c' <<<"$names" || fail "no re2c output in the bundle"
grep -qx 'include/dlmap/generated/dlmap_spec.h' <<<"$names" || fail "no generated header in the bundle"

# ---- refusals ------------------------------------------------------------------------------------------------------
# expect_refusal NAME TEXT ARGS...: gpu/check.sh ARGS --build-only exits 3 with TEXT in its last line, compiling nothing.
expect_refusal() {
  local name=$1 text=$2 status=0
  shift 2
  rm -rf "$DLMAP_CHECK_BUILD"
  gpu/check.sh "$@" --build-only >"$T/$name.log" 2>&1 || status=$?
  cat "$T/$name.log"
  [ "$status" = 3 ] || fail "$name: exit $status, want 3"
  tail -1 "$T/$name.log" | grep -qF "FAIL  gpu/check.sh cannot build: $text" || fail "$name: the reason is not '$text'"
  ! grep -q '^INFO  built' "$T/$name.log" || fail "$name: compiled before refusing"
  [ ! -d "$DLMAP_CHECK_BUILD/obj" ] || fail "$name: compiled before refusing"
}

mkdir -p "$T/stale" "$T/short"
tar -xzf "$bundle" -C "$T/stale"
# A spec file of this checkout that differs from the one the bundle was generated from.
sed -i -E 's/^[0-9a-f]{64}(  spec\/devices\.yaml)$/0000000000000000000000000000000000000000000000000000000000000000\1/' \
  "$T/stale/MANIFEST"
grep -q '^0\{64\}  spec/devices.yaml$' "$T/stale/MANIFEST" || fail "the test could not alter the MANIFEST"
(cd "$T/stale" && tar -czf "$T/stale.tar.gz" ./*)
expect_refusal stale "the bundle was generated from other sources than this checkout's (spec/devices.yaml differ)" \
  --bundle "$T/stale.tar.gz"

tar -xzf "$bundle" -C "$T/short"
rm "$T/short/src/generated/name_lookup.c"
(cd "$T/short" && tar -czf "$T/short.tar.gz" ./*)
expect_refusal short "$T/short.tar.gz lacks src/generated/name_lookup.c" --bundle "$T/short.tar.gz"

head -c 1000 "$bundle" >"$T/damaged.tar.gz"
expect_refusal damaged "$T/damaged.tar.gz is not a readable tar.gz" --bundle "$T/damaged.tar.gz"

expect_refusal absent "no bundle at $T/absent.tar.gz" --bundle "$T/absent.tar.gz"
# No --bundle, and none at the default place (the runfiles tree has no bazel-bin).
[ -e bazel-bin/gpu/bundle.tar.gz ] || expect_refusal none "no bundle of generated sources: build it where Bazel runs"

echo PASS
