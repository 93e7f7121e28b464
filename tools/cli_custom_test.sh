#!/bin/sh
# CLI on a custom spec (tools:acme_dlmap_cli: profile `acme`, device type 201 = an error code): the CLI's name is its
# target's, `spec check --on-default` checks overlays on the spec it was built from (paths from the caller's
# directory under `bazel run`), and `explain 201` says which of its meanings it shows.
# usage: cli_custom_test.sh CLI
set -u
cli="$PWD/$1"
name=acme_dlmap_cli
tmp="${TEST_TMPDIR:-/tmp}"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
run() { # expected-rc description command...: output in $tmp/out
  want=$1; what=$2; shift 2
  "$@" >"$tmp/out" 2>&1
  got=$?
  [ "$got" -eq "$want" ] || fail "$what: exit $got, expected $want: $(cat "$tmp/out")"
}

# The name follows the target.
run 0 help "$cli" help
head -1 "$tmp/out" | grep -qxF "usage: $name <command> [arguments]" || fail "help: $(head -1 "$tmp/out")"
run 2 "unknown command" "$cli" frobnicate
[ "$(cat "$tmp/out")" = "$name: unknown command 'frobnicate'; try: $name help" ] || fail "unknown: $(cat "$tmp/out")"
run 0 version "$cli" --version
grep -q "^$name [0-9]" "$tmp/out" && grep -qxF "  profile: acme" "$tmp/out" || fail "version: $(cat "$tmp/out")"
run 1 "explain unknown" "$cli" explain kDLAcmeNPX
grep -qxF "$name: did you mean kDLAcmeNPU (device type)?" "$tmp/out" || fail "suggestion: $(cat "$tmp/out")"

# spec check --on-default: an overlay on this CLI's own spec (profile acme, which no shipped file has).
mkdir -p "$tmp/caller"
printf 'device_types:\n  - {value: 202, name: kDLAcmeDSP, introduced: "1.3", platform: acme, memory: device, stream: opaque, doc: x}\n' \
  >"$tmp/caller/good.yaml"
run 0 "spec check good overlay" "$cli" spec check --on-default "$tmp/caller/good.yaml"
grep -q "^spec OK: profile acme, " "$tmp/out" || fail "spec check OK line: $(cat "$tmp/out")"
sed 's/platform: acme/platform: acmee/' "$tmp/caller/good.yaml" >"$tmp/caller/bad.yaml"
run 1 "spec check bad overlay" "$cli" spec check --on-default "$tmp/caller/bad.yaml"
grep -qF "unknown platform 'acmee'" "$tmp/out" || fail "spec check message: $(cat "$tmp/out")"
# Under `bazel run` the working directory is the runfiles tree and relative paths are the caller's.
run 0 "spec check relative to BUILD_WORKING_DIRECTORY" env BUILD_WORKING_DIRECTORY="$tmp/caller" "$cli" spec check \
  --on-default good.yaml

# 201 is a device type here and an error code of the catalogue: both shown, and said so; a qualifier picks one.
run 0 "explain 201" "$cli" explain 201
head -1 "$tmp/out" | grep -qxF "'201' is device type 201 (kDLAcmeNPU) and error code 201 (export_unsupported_device_type); \`$name explain device:201\` shows one." \
  || fail "explain 201 first line: $(head -1 "$tmp/out")"
grep -qx 'Device type 201: kDLAcmeNPU' "$tmp/out" && grep -q '^Error export_unsupported_device_type (code 201, ' "$tmp/out" \
  || fail "explain 201 lacks a page: $(cat "$tmp/out")"
run 0 "explain device:201" "$cli" explain device:201
# (its page may name error 201 as what a refusal raises; the error's own page would come first)
head -1 "$tmp/out" | grep -qx 'Device type 201: kDLAcmeNPU' && ! grep -q "^'201' is" "$tmp/out" \
  || fail "explain device:201: $(cat "$tmp/out")"
run 0 "explain error:201" "$cli" explain error:201
head -1 "$tmp/out" | grep -q '^Error export_unsupported_device_type (code 201, ' && ! grep -q '^Device type 201' "$tmp/out" \
  || fail "explain error:201: $(cat "$tmp/out")"
run 1 "explain platform:201" "$cli" explain platform:201
run 2 "explain bogus:201" "$cli" explain bogus:201
grep -qF "unknown qualifier 'bogus'" "$tmp/out" || fail "bogus qualifier: $(cat "$tmp/out")"
run 0 "help documents qualifiers" "$cli" help
grep -qF 'error:201' "$tmp/out" || fail "help lacks the qualifier"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "PASS: custom CLI"
