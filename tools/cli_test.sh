#!/bin/sh
# CLI test — `dlmap devices`, `dlmap explain` and `dlmap spec check` on the default spec: output, exit codes. Rows of
# existing device types are pinned by hand; counts, the current version and the list of device types come from the
# spec's YAML (tests/spec_facts: SPEC_* variables).
# usage: cli_test.sh DLMAP_CLI SPEC_DIR SPEC_FACTS_SH
set -u
cli="$PWD/$1"
spec_dir="$2"
. "$PWD/$3"
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}" || exit 1
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_rc() { # expected-rc description command...
  want=$1; what=$2; shift 2
  "$@" >/tmp/cli_out.$$ 2>&1
  got=$?
  [ "$got" -eq "$want" ] || fail "$what: exit $got, expected $want: $(cat /tmp/cli_out.$$)"
}

# explain 4: kDLOpenCL, its entry, and the seed error with the value filled in.
out=$("$cli" explain 4) || fail "explain 4 exited $?"
for line in 'Device type 4: kDLOpenCL' '  earlier names:  kOpenCL' '  platform:       opencl (no dlmap backend)' \
  'Error export_unsupported_device_type (code 201, BufferError, C status DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE)' \
  '    The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: 4)' \
  '    Array passed to from_dlpack is on unsupported device type (DLDeviceType: 4, array: a kDLOpenCL tensor'; do
  echo "$out" | grep -qxF -- "$line" || fail "explain 4 lacks line: $line"
done

# The profile in force (jax): export to kDLCUDAManaged raises the seed message; kDLTPUHost is accepted, on platform tpu.
out=$("$cli" explain 13) || fail "explain 13 exited $?"
for line in 'Under profile jax:' '  export to it (dl_device):     refused (export_unsupported_device_type)' \
  '    The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: 13)'; do
  echo "$out" | grep -qxF -- "$line" || fail "explain 13 lacks line: $line"
done
out=$("$cli" explain 20) || fail "explain 20 exited $?"
for line in '  export to it (dl_device):     accepted' '    maps to:                    platform tpu' \
  '  import a tensor on it:        accepted' '  __dlpack_device__ reports it: for platform tpu in pinned host memory'; do
  echo "$out" | grep -qxF -- "$line" || fail "explain 20 lacks line: $line"
done
echo "$out" | grep -q 'export_unsupported_device_type' && fail "explain 20 names the export refusal"

# devices: every device type of the spec, rows of existing ones by hand, and the host platform served.
out=$("$cli" devices) || fail "devices exited $?"
echo "$out" | grep -qF "spec: DLPack $SPEC_CURRENT, $SPEC_DEVICE_TYPE_COUNT types; profile $SPEC_PROFILE" \
  || fail "devices header"
for row in '^ +1  kDLCPU +cpu +host +none +0\.1 +yes ' \
  '^ +11  kDLROCMHost +rocm +host_pinned +none +0\.6 ' \
  '^ +14  kDLOneAPI +oneapi +device +opaque +0\.7 +no: no backend ' \
  '^ +21  kDLAscend +ascend +device +opaque +1\.3\* +no: no backend '; do
  echo "$out" | grep -Eq -- "$row" || fail "devices lacks row: $row"
done
echo "$out" | grep -qxF "    * on DLPack's main branch after that version's tag: the release itself lacks it" \
  || fail "devices lacks the upstream main footnote"
while read -r value release name names; do
  since='[0-9]+\.[0-9]+ '
  [ "$release" = main ] && since='[0-9]+\.[0-9]+\* '
  echo "$out" | grep -Eq "^ +$value  $name .* $since" || fail "devices lacks a $release row for $value $name"
  # Every device type is found by its value and by every name (enumerator, earlier spellings, aliases).
  for what in "$value" "$name" $names; do
    explained=$("$cli" explain "$what" </dev/null) || fail "explain $what exited $?"
    echo "$explained" | grep -qxF "Device type $value: $name" || fail "explain $what does not find $value $name"
    upstream=$(echo "$explained" | grep -c "^  since DLPack: .* (on DLPack's main branch after the v.* tag: ")
    [ "$upstream" -eq "$([ "$release" = main ] && echo 1 || echo 0)" ] || fail "explain $what: since line for $release"
  done
done <<EOF
$SPEC_DEVICE_TYPES
EOF
[ "$(echo "$SPEC_DEVICE_TYPES" | wc -l)" -eq "$SPEC_DEVICE_TYPE_COUNT" ] || fail "spec facts list and count disagree"
[ "$(echo "$out" | grep -cE '^ +[0-9]+  kDL')" -eq "$SPEC_DEVICE_TYPE_COUNT" ] || fail "devices lists other rows"
echo "$out" | grep -Eq '^  cpu +cpu backend +available \(1 device\)$' || fail "devices: cpu not available"
# GPU platforms are always built (the backend dlopens the runtime; no toolkit needed) and either serve devices or
# say why not (this machine has no driver: the vendor's text).
echo "$out" | grep -Eq '^  cuda +gpu backend +(available \([0-9]+ devices?\)|built, not available: .+)$' \
  || fail "devices: cuda line"

# Other explain forms, and errors.
for what in kDLGPU kGPU gpu 2; do
  "$cli" explain "$what" | grep -qx 'Device type 2: kDLCUDA' || fail "explain $what"
done
"$cli" explain float8_e4m3fn | grep -q '^Data type float8_e4m3fn: code 10 (kDLFloat8_e4m3fn), bits 8, lanes 1$' \
  || fail "explain float8_e4m3fn"
"$cli" explain 202 | grep -qxF '    __dlpack__ only supported for unsharded arrays.' || fail "explain 202"
"$cli" explain unknown_gpu_platform | grep -qxF '    Unknown GPU platform for __dlpack__: {platform_version}' \
  || fail "explain unknown_gpu_platform"
expect_rc 1 "explain unknown name" "$cli" explain no_such_thing
grep -qF "Unknown device type, platform, data type or error name 'no_such_thing'" /tmp/cli_out.$$ \
  || fail "unknown name message: $(cat /tmp/cli_out.$$)"
# Usage errors are worded for a command line: no Python exception kind ("ValueError: …").
grep -Eq '(^|: )[A-Za-z]*(Error|Exception):' /tmp/cli_out.$$ && fail "explain unknown name reads as an exception: $(cat /tmp/cli_out.$$)"
# "Did you mean": the spec's own names and aliases within a few edits, each with its kind; commands likewise.
while read -r typed suggested; do
  expect_rc 1 "explain $typed" "$cli" explain "$typed"
  grep -qF "did you mean" /tmp/cli_out.$$ && grep -qF "$suggested" /tmp/cli_out.$$ \
    || fail "explain $typed: no suggestion $suggested: $(cat /tmp/cli_out.$$)"
done <<EOF
kDLCUDAHst kDLCUDAHost (device type)
kdlcudahost_ kDLCUDAHost (device type)
flaot32 float32 (data type)
rocn rocm (platform)
export_unsuported_device_type export_unsupported_device_type (error)
EOF
expect_rc 1 "explain far from every name" "$cli" explain no_such_thing
grep -q "did you mean" /tmp/cli_out.$$ && fail "explain no_such_thing suggests: $(cat /tmp/cli_out.$$)"
expect_rc 2 "misspelt command" "$cli" devics
grep -qxF "dlmap: did you mean devices?" /tmp/cli_out.$$ || fail "devics: no suggestion: $(cat /tmp/cli_out.$$)"
expect_rc 1 "explain unknown value" "$cli" explain 5
grep -qF 'Unknown DLPack device type 5: the spec this build was generated from does not define it.' /tmp/cli_out.$$ \
  || fail "unknown value message"
expect_rc 2 "no command" "$cli"
expect_rc 2 "bad command" "$cli" frobnicate
[ "$(cat /tmp/cli_out.$$)" = "dlmap: unknown command 'frobnicate'; try: dlmap help" ] \
  || fail "unknown command message: $(cat /tmp/cli_out.$$)"
expect_rc 2 "explain without argument" "$cli" explain
expect_rc 0 "help" "$cli" help

# --version and version: the library version (dlmap.h's macros), the spec's DLPack version, the profile and the peer
# releases it models.
lib_version=$(sed -n 's/^#define DLMAP_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/dlmap/dlmap.h | paste -sd.)
for flag in --version version; do
  out=$("$cli" $flag) || fail "$flag exited $?"
  for line in "dlmap $lib_version" "  library: dlmap $lib_version" "  spec:    DLPack $SPEC_CURRENT" \
    "  profile: $SPEC_PROFILE" "  models:  $SPEC_PROFILE_MODELS"; do
    echo "$out" | grep -qxF -- "$line" || fail "$flag lacks line: $line (got: $out)"
  done
done
expect_rc 2 "--version with an argument" "$cli" --version x

# spec check runs the generator's validator with its messages.
expect_rc 0 "spec check default" "$cli" spec check "$spec_dir"/versions.yaml "$spec_dir"/platforms.yaml \
  "$spec_dir"/devices.yaml "$spec_dir"/dtypes.yaml "$spec_dir"/errors.yaml "$spec_dir"/profiles/jax.yaml
grep -q "^spec OK: profile $SPEC_PROFILE, $SPEC_DEVICE_TYPE_COUNT device types, $SPEC_DTYPE_CODE_COUNT dtype codes, \
$SPEC_ERROR_COUNT errors, DLPack $SPEC_CURRENT " /tmp/cli_out.$$ || fail "spec check OK line: $(cat /tmp/cli_out.$$)"
overlay="${TEST_TMPDIR:-/tmp}/overlay.yaml"
printf 'device_types:\n  - {value: 200, name: kDLAcme, introduced: "1.3", platform: rcom, memory: device, stream: opaque, doc: x}\n' >"$overlay"
expect_rc 1 "spec check bad overlay" "$cli" spec check --on-default "$overlay"
grep -qF "dlmap spec error: $overlay: device_types[0] (kDLAcme): unknown platform 'rcom'" /tmp/cli_out.$$ \
  || fail "spec check message: $(cat /tmp/cli_out.$$)"
grep -q Traceback /tmp/cli_out.$$ && fail "spec check printed a traceback"
sed -i 's/rcom/none/' "$overlay"
expect_rc 0 "spec check good overlay" "$cli" spec check --on-default "$overlay"
# A profile must say which peer releases it reproduces (issue 50): without `models:` it is refused, naming the key.
unmodelled="${TEST_TMPDIR:-/tmp}/unmodelled.yaml"
sed '/^  models: /d' "$spec_dir"/profiles/jax.yaml >"$unmodelled"
expect_rc 1 "spec check profile without models" "$cli" spec check "$spec_dir"/versions.yaml \
  "$spec_dir"/platforms.yaml "$spec_dir"/devices.yaml "$spec_dir"/dtypes.yaml "$spec_dir"/errors.yaml "$unmodelled"
grep -qF "dlmap spec error: $unmodelled: profile: missing key 'models'" /tmp/cli_out.$$ \
  || fail "spec check without models: $(cat /tmp/cli_out.$$)"
sed 's/^  models: .*/  models: "jax 0.11"/' "$spec_dir"/profiles/jax.yaml >"$unmodelled"
expect_rc 1 "spec check profile with a models that is no range" "$cli" spec check "$spec_dir"/versions.yaml \
  "$spec_dir"/platforms.yaml "$spec_dir"/devices.yaml "$spec_dir"/dtypes.yaml "$spec_dir"/errors.yaml "$unmodelled"
grep -qF "dlmap spec error: $unmodelled: profile: key 'models': 'jax 0.11' is not a release range" /tmp/cli_out.$$ \
  || fail "spec check with a bad models: $(cat /tmp/cli_out.$$)"
expect_rc 2 "spec without check" "$cli" spec

rm -f /tmp/cli_out.$$
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "PASS: dlmap CLI"
