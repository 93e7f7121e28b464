#!/usr/bin/env bash
# dlmap GPU tests — `dlmap devices` from a build without any GPU toolkit
# (//third_party/toolchains:no_toolkit/dlmap_config.h): cuda and rocm are built, so each is available or says the
# vendor's (or the loader's) reason, never "not served".
set -euo pipefail
out=$("$1" devices)
echo "$out" | sed -n '/^Platforms/,$p'
for platform in cuda rocm; do
  echo "$out" | grep -Eq "^  $platform +gpu backend +(available \([0-9]+ devices?\)|built, not available: .+)\$" ||
    { echo "FAIL: $platform is not reported as built" >&2; exit 1; }
done
echo PASS
