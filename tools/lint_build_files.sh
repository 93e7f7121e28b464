#!/bin/sh
# Lints every Bazel file (BUILD, .bzl, WORKSPACE, MODULE.bazel) with buildifier 8.2.1; fails listing the findings.
# Fix most findings with: buildifier -lint=fix FILE... (the pinned binary is under the cache directory below).
set -eu
cd "$(dirname "$0")/.."

version=8.2.1
# sha256 of the linux binaries in `npm pack @bazel/buildifier@8.2.1` (package/buildifier-linux_<arch>).
sha256_amd64=6ceb7b0ab7cf66fceccc56a027d21d9cc557a7f34af37d2101edb56b92fcfa1a
sha256_arm64=3baa1cf7eb41d51f462fdd1fff3a6a4d81d757275d05b2dd5f48671284e9a1a5

case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 want=$sha256_amd64 ;;
  aarch64 | arm64) arch=arm64 want=$sha256_arm64 ;;
  *) echo "lint_build_files: no buildifier $version binary pinned for $(uname -m)" >&2; exit 1 ;;
esac

cache="${XDG_CACHE_HOME:-$HOME/.cache}/dlmap/buildifier-$version"
bin="$cache/package/buildifier-linux_$arch"
if [ ! -f "$bin" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "lint_build_files: installing Debian's npm (to fetch buildifier)" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm
  fi
  mkdir -p "$cache"
  # npm pack only downloads the package tarball (no install scripts run); keep just this machine's binary.
  (cd "$cache" && npm pack --silent "@bazel/buildifier@$version" >/dev/null &&
    tar -xzf "bazel-buildifier-$version.tgz" "package/buildifier-linux_$arch" &&
    rm -f "bazel-buildifier-$version.tgz")
fi
got=$(sha256sum "$bin" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  echo "lint_build_files: $bin has sha256 $got, expected $want; delete $cache to fetch it again" >&2
  exit 1
fi
[ -x "$bin" ] || chmod +x "$bin"

# Every Bazel file of the checkout, without .git and the bazel-* convenience symlinks (here and in
# examples/downstream), which point into output bases.
status=0
findings=$(find . \( -name .git -o -name 'bazel-*' \) -prune -o -type f \( -name BUILD -o -name BUILD.bazel \
  -o -name WORKSPACE -o -name WORKSPACE.bazel -o -name WORKSPACE.bzlmod -o -name MODULE.bazel -o -name '*.bzl' \) \
  -exec "$bin" -mode=check -lint=warn {} + 2>&1) || status=$?
if [ "$status" -ne 0 ] || [ -n "$findings" ]; then
  echo "lint_build_files: buildifier $version findings (files marked '# reformat' need formatting):" >&2
  printf '%s\n' "$findings" | sed 's|^\./||' >&2
  exit 1
fi
echo "lint_build_files: buildifier $version: no findings"
