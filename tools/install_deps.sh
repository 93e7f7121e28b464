#!/bin/sh
# Installs the Debian 12 packages dlmap's build and tests need, when they are missing (apt, as root or via sudo).
set -eu
# bazel-bootstrap: Bazel 4.2.3 (works offline with the shims in third_party/); re2c: name matchers;
# libgtest-dev: C/C++ tests; libdlpack-dev: the DLPack header dlmap builds against; python3-yaml: the
# spec generator; libamdhip64-dev: the HIP runtime, so the ROCm platform (always built) is probed for real;
# python3-dev, python3-numpy, python3-torch: the Python binding and its interop tests;
# python3-hypothesis: the property tests (hostile producers and arguments, the spec loader);
# libbenchmark-dev, libtorch-dev: the benchmarks and their libtorch peer.
packages="bazel-bootstrap re2c libgtest-dev libdlpack-dev python3-yaml libamdhip64-dev python3-dev python3-numpy
  python3-torch python3-hypothesis libbenchmark-dev libtorch-dev"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "dlmap: installing Debian packages:$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq $missing
