#!/bin/sh
# Packs a dlmap distributable archive (dlmap_dist, dist/dist.bzl): static library, headers (the spec's generated ones
# included), a pkg-config file, the spec files, the docs and the licence.
# Usage: make_dist.sh OUT.tar.gz LIB.a SPEC_H PC_IN LICENSE DOCS_DIR --headers HEADER... --spec_list LIST
#   DOCS_DIR: a dlmap_docs() directory (devices.md, errors/); LIST: a file naming the spec files in the generator's
#   order, one a line; they are written to share/dlmap/spec/ under their own names, with spec.txt listing that order.
set -eu
if [ $# -lt 8 ] || [ "$7" != --headers ]; then
  echo "usage: make_dist.sh OUT LIB SPEC_H PC_IN LICENSE DOCS_DIR --headers HEADER... --spec_list LIST" >&2
  exit 2
fi
out="$1"; lib="$2"; spec_h="$3"; pc_in="$4"; license="$5"; docs="$6"; shift 6
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/dlmap"
mkdir -p "$root/lib/pkgconfig" "$root/include/dlmap/generated" "$root/share/dlmap/spec" "$root/share/doc/dlmap"
cp "$lib" "$root/lib/libdlmap.a"
cp "$spec_h" "$root/include/dlmap/generated/dlmap_spec.h"
# The other generated public header (dlmap.h includes it) is generated beside SPEC_H.
cp "$(dirname "$spec_h")/dlmap_raise.h" "$root/include/dlmap/generated/dlmap_raise.h"
cp "$license" "$root/share/doc/dlmap/LICENSE"
cp -RL "$docs/." "$root/share/doc/dlmap/"
group=""
for f in "$@"; do
  case "$f" in
    --headers | --spec_list) group=$f; continue ;;
  esac
  case "$group" in
    --headers) cp "$f" "$root/include/dlmap/" ;;
    --spec_list)
      while IFS= read -r spec; do
        [ -n "$spec" ] || continue
        base=$(basename "$spec")
        [ ! -e "$root/share/dlmap/spec/$base" ] || { echo "make_dist.sh: two spec files named $base" >&2; exit 1; }
        cp "$spec" "$root/share/dlmap/spec/$base"
        echo "$base" >>"$root/share/dlmap/spec/spec.txt"
      done <"$f"
      ;;
  esac
done
[ -s "$root/share/dlmap/spec/spec.txt" ] || { echo "make_dist.sh: no spec files" >&2; exit 1; }
chmod -R u+w "$root"
# The pkg-config file names its own directory, so the archive works wherever it is unpacked; its version is the
# library's own, read from the DLMAP_VERSION_* lines of dlmap.h (the one place it is written).
version=$(for part in MAJOR MINOR PATCH; do
  sed -n "s/^#define DLMAP_VERSION_$part \([0-9]*\)$/\1/p" "$root/include/dlmap/dlmap.h"
done | paste -sd.)
case "$version" in [0-9]*.[0-9]*.[0-9]*) ;; *) echo "make_dist.sh: no DLMAP_VERSION_* in dlmap.h" >&2; exit 1 ;; esac
sed -e 's|^prefix=@PREFIX@$|prefix=${pcfiledir}/../..|' -e "s|@VERSION@|$version|" "$pc_in" >"$root/lib/pkgconfig/dlmap.pc"
# Deterministic archive: fixed order, owner, time and modes.
find "$root" -type d -exec chmod 755 {} + && find "$root" -type f -exec chmod 644 {} +
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -czf "$out" dlmap
