#!/bin/sh
# Spec-extension test — the CLI built from the extended spec shows vendor device type 200 (no C edited); the count
# and current version come from the extended spec's YAML (tests/spec_facts: SPEC_* variables).
# usage: cli_extension_test.sh DLMAP_CLI SPEC_FACTS_SH
set -eu
cli="$1"
. "$2"
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$cli" devices) || fail "dlmap devices exited $?"
echo "$out" | grep -Eq '^ +200  kDLAcmeNPU +none +device +opaque +1\.3 +no: no backend +no +/ yes / no$' || fail "devices lacks the kDLAcmeNPU row:
$out"
echo "$out" | grep -Eq '^ *65537  kDLAcmeVPU +none +device +opaque +vendor +no: no backend' || fail "devices does not print kDLAcmeVPU as a vendor extension:
$out"
echo "$out" | grep -qx '    vendor: a vendor extension, in no DLPack release' || fail "devices lacks the vendor footnote"
out2=$("$cli" explain kDLAcmeVPU) || fail "explain kDLAcmeVPU exited $?"
echo "$out2" | grep -qx '  since DLPack:   none: a vendor extension, in no DLPack release' || fail "explain kDLAcmeVPU:
$out2"
echo "$out" | grep -qF "spec: DLPack $SPEC_CURRENT, $SPEC_DEVICE_TYPE_COUNT types" \
  || fail "devices does not count $SPEC_DEVICE_TYPE_COUNT types"

for name in 200 kDLAcmeNPU kAcmeNPU acme ACME_NPU; do
  out=$("$cli" explain "$name") || fail "explain $name exited $?"
  echo "$out" | grep -q '^Device type 200: kDLAcmeNPU$' || fail "explain $name: $out"
  echo "$out" | grep -qF 'The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: 200)' \
    || fail "explain $name lacks the seed error"
done
echo "PASS: extended CLI shows device type 200"
