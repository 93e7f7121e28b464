#!/bin/sh
# The release: dlmap's source archive and its Bazel registry entry.
#   bazel run //dist:release -- OUT [URL]    (or dist/release.sh OUT [URL] from a checkout)
# writes
#   OUT/dlmap-VERSION.tar.gz    every file git tracks or would add (not ignored), as the working tree has it, under
#                               dlmap-VERSION/ (sorted,
#                               owner 0, mtime 0, gzip without a name or time: the same tree gives the same bytes);
#   OUT/registry/               a Bazel registry holding dlmap VERSION (bazel_registry.json, modules/dlmap/
#                               metadata.json, modules/dlmap/VERSION/{MODULE.bazel,source.json,presubmit.yml}), so
#                               that publishing to the Bazel Central Registry or a company registry is a copy;
#   OUT/http_archive.txt        the sha256 and the WORKSPACE lines for README's consumer section;
#   OUT/python/dlmap-VERSION.tar.gz   the Python sdist (//python/pip:sdist), and
#   OUT/python/dlmap-VERSION-<python>-<abi>-linux_<arch>.whl   the wheel pip builds from it offline for PYTHON (the
#                               build's Python; a plain linux wheel, not manylinux: README's Python section says why).
# URL is where the archive will be served (default: file://OUT/dlmap-VERSION.tar.gz, for an offline test).
# VERSION is MODULE.bazel's (//tests:module_version_test keeps it equal to dlmap.h's DLMAP_VERSION_*).
# `bazel run` passes --sdist FILE --python PYTHON first (dist/BUILD); dist/release.sh run by hand without them writes
# no Python files and says so.
set -eu
sdist="" python=""
while [ $# -gt 0 ]; do
  case $1 in
    --sdist) sdist=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then echo "usage: release.sh [--sdist FILE --python PYTHON] OUT [URL]" >&2; exit 2; fi
case $sdist in "" | /*) ;; *) sdist=$PWD/$sdist ;; esac
checkout=${BUILD_WORKSPACE_DIRECTORY:-$(cd "$(dirname "$0")/.." && pwd)}
case "$1" in /*) out=$1 ;; *) out=${BUILD_WORKING_DIRECTORY:-$PWD}/$1 ;; esac
version=$(sed -n 's/^ *version = "\([0-9][0-9.]*\)".*/\1/p' "$checkout/MODULE.bazel" | head -n 1)
[ -n "$version" ] || { echo "release.sh: no version in $checkout/MODULE.bazel" >&2; exit 1; }
name=dlmap-$version
archive=$out/$name.tar.gz
url=${2:-file://$archive}

mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# What git tracks or would add: no bazel-* links, build outputs or local .bazelrc.host (.gitignore). A file deleted
# but not yet committed is skipped rather than failing the release.
(cd "$checkout" && git ls-files --cached --others --exclude-standard | while IFS= read -r f; do
  if [ -e "$f" ]; then printf '%s\n' "$f"; fi
done) >"$stage/files"
mkdir "$stage/$name"
(cd "$checkout" && tar -cf - -T "$stage/files") | tar -xf - -C "$stage/$name"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cf - "$name" | gzip -n -9 >"$archive"

sha256=$(sha256sum "$archive" | cut -d' ' -f1)
integrity=sha256-$(python3 -c 'import base64, sys; print(base64.b64encode(bytes.fromhex(sys.argv[1])).decode())' "$sha256")
entry=$out/registry/modules/dlmap/$version
mkdir -p "$entry"
echo '{}' >"$out/registry/bazel_registry.json"
cp "$checkout/MODULE.bazel" "$entry/MODULE.bazel"
cat >"$entry/source.json" <<JSON
{
    "url": "$url",
    "integrity": "$integrity",
    "strip_prefix": "$name"
}
JSON
cat >"$entry/presubmit.yml" <<YAML
matrix:
  platform: ["debian11", "ubuntu2204"]
  bazel: ["7.x"]
tasks:
  verify_targets:
    name: Build the library and its command line
    platform: \${{ platform }}
    bazel: \${{ bazel }}
    build_targets:
      - "@dlmap//:dlmap"
      - "@dlmap//:dlmap_cli"
YAML
cat >"$out/registry/modules/dlmap/metadata.json" <<JSON
{
    "homepage": "",
    "maintainers": [],
    "repository": [],
    "versions": ["$version"],
    "yanked_versions": {}
}
JSON
cat >"$out/http_archive.txt" <<TXT
http_archive(
    name = "dlmap",
    sha256 = "$sha256",
    strip_prefix = "$name",
    urls = ["$url"],
)
TXT
echo "release.sh: $archive (sha256 $sha256), registry entry $entry"

# The Python sdist, and the wheel pip builds from it (offline: Debian's setuptools and wheel, no index).
if [ -z "$sdist" ] || [ -z "$python" ]; then
  echo "release.sh: no Python sdist or wheel (bazel run //dist:release makes them)"
  exit 0
fi
top=$(tar -tzf "$sdist" | sed -n 1p | cut -d/ -f1)
[ "$top" = "$name" ] || { echo "release.sh: the sdist holds $top, not $name" >&2; exit 1; }
rm -rf "$out/python"
mkdir -p "$out/python"
cp "$sdist" "$out/python/$name.tar.gz"
chmod 0644 "$out/python/$name.tar.gz"
PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 "$python" -m pip wheel --no-index --no-build-isolation \
  --no-deps --no-cache-dir --wheel-dir "$out/python" "$out/python/$name.tar.gz" >"$stage/wheel.log" 2>&1 || {
  tail -n 40 "$stage/wheel.log" >&2
  echo "release.sh: pip could not build the wheel from $out/python/$name.tar.gz (pip, setuptools and wheel for" \
    "$python: tools/install_deps.sh installs them)" >&2
  exit 1
}
set -- "$out/python/$name"-*.whl
[ $# -eq 1 ] && [ -f "$1" ] || { echo "release.sh: expected one wheel in $out/python, found: $*" >&2; exit 1; }
wheel=$1
echo "release.sh: $out/python/$name.tar.gz (sdist), $wheel (wheel for $("$python" -c 'import sys; print(sys.version)' |
  head -n 1))"
