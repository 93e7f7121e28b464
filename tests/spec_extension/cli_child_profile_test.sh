#!/bin/sh
# Spec-extension test — the CLI built from child_profile.yaml (`extends: jax`) says which profile an error's text
# comes from: the child's own, JAX's, or (no line) the catalogue's.
# usage: cli_child_profile_test.sh DLMAP_CLI
set -eu
cli="$1"
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$cli" explain max_version_too_old) || fail "explain max_version_too_old exited $?"
echo "$out" | grep -qx '  text: from profile jax_versioned' || fail "no origin line for the child's text:
$out"
out=$("$cli" explain platform_not_exchangeable) || fail "explain platform_not_exchangeable exited $?"
echo "$out" | grep -qx '  text: from profile jax' || fail "no origin line for JAX's text:
$out"
out=$("$cli" explain dlpack_sharded) || fail "explain dlpack_sharded exited $?"
if echo "$out" | grep -q 'from profile'; then fail "the catalogue's own text is given a profile:
$out"; fi
echo "PASS: explain names the profile each text comes from"
