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
#   OUT/http_archive.txt        the sha256 and the WORKSPACE lines for README's consumer section.
# URL is where the archive will be served (default: file://OUT/dlmap-VERSION.tar.gz, for an offline test).
# VERSION is MODULE.bazel's (//tests:module_version_test keeps it equal to dlmap.h's DLMAP_VERSION_*).
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then echo "usage: release.sh OUT [URL]" >&2; exit 2; fi
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
