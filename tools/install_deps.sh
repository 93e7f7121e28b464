#!/bin/sh
# Installs the Debian packages dlmap's build and tests need when they are missing (apt, as root or via sudo), on
# Debian 12 (bookworm), 13 (trixie) and testing (forky), then writes the Bazel settings this host needs
# (third_party/bazel_offline/configure.sh).
set -eu
cd "$(dirname "$0")/.."
# bazel-bootstrap: Debian's Bazel (4.2.3 on 12 and 13, 7.x on testing; offline with the shims in third_party/);
# re2c: name matchers; libgtest-dev: C/C++ tests; libdlpack-dev: the DLPack header dlmap builds against;
# python3-yaml: the spec generator; libamdhip64-dev: the HIP runtime, so the ROCm platform (always built) is probed
# for real; python3-dev, python3-numpy, python3-torch: the Python binding and its interop tests;
# python3-hypothesis: the property tests (hostile producers and arguments, the spec loader);
# libbenchmark-dev, libtorch-dev: the benchmarks and their libtorch peer; git: the drill copies the checkout's files;
# pkg-config: //dist:link_test builds against the archive as its README says; python3-venv, python3-pip,
# python3-setuptools, python3-wheel (the same names on 12, 13 and testing): the Python sdist, the release's wheel and
# //python/pip:user_path_test (a fresh venv, pip install offline with Debian's setuptools); clang: the strided-copy
# kernels' PTX (codegen/kernel_ptx.py; //codegen:kernel_ptx_test regenerates it where MANIFEST's clang is the one here).
packages="bazel-bootstrap re2c libgtest-dev libdlpack-dev python3-yaml libamdhip64-dev python3-dev python3-numpy
  python3-torch python3-hypothesis libbenchmark-dev libtorch-dev git pkg-config python3-venv python3-pip
  python3-setuptools python3-wheel clang"
# Debian releases after 13 package Bazel 7 with its rules; rules_shell is the one it does not pull in itself.
version_id=$(. /etc/os-release && echo "${VERSION_ID:-}")
case "$version_id" in
  12 | 13) ;;
  *) packages="$packages bazel-rules-shell" ;;
esac
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "dlmap: installing Debian packages:$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # Recommends would add ~600 packages (Qt and GUI libraries among them) that nothing here uses.
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq --no-install-recommends $missing
fi
third_party/bazel_offline/configure.sh
