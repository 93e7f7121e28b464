#!/bin/sh
# Downstream example test — Acme's dlmap CLI lists and explains the vendor device type.
set -eu
cli="$1"
"$cli" devices | grep -Eq '^ *65537  kDLAcmeNPU +acme +device +opaque +vendor +no: no backend +no +/ yes / no$' || { echo "FAIL: devices"; exit 1; }
"$cli" explain acme_npu | grep -qx 'Device type 65537: kDLAcmeNPU' || { echo "FAIL: explain"; exit 1; }
"$cli" explain from_dlpack_missing_methods | grep -q 'code 203, TypeError' || { echo "FAIL: kind"; exit 1; }
echo "PASS: Acme CLI"
