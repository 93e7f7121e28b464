#!/bin/sh
# Packs the dlmap distributable archive: static library, headers (generated ones included), a pkg-config file, the
# default spec, the docs and the licence. Usage: make_dist.sh OUT.tar.gz LIB.a SPEC_H PC_IN -- FILES...
# FILES are workspace-relative paths of headers (include/…), spec (spec/…), docs (docs/…) and LICENSE.
set -eu
out="$1"; lib="$2"; spec_h="$3"; pc_in="$4"; shift 5
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/dlmap"
mkdir -p "$root/lib/pkgconfig" "$root/include/dlmap/generated" "$root/share/dlmap/spec" "$root/share/doc/dlmap"
cp "$lib" "$root/lib/libdlmap.a"
cp "$spec_h" "$root/include/dlmap/generated/dlmap_spec.h"
for f in "$@"; do
  case "$f" in
    */LICENSE|LICENSE) cp "$f" "$root/share/doc/dlmap/LICENSE" ;;
    */include/dlmap/*|include/dlmap/*) cp "$f" "$root/include/dlmap/" ;;
    */spec/*.yaml|spec/*.yaml) cp "$f" "$root/share/dlmap/spec/" ;;
    */docs/errors/*|docs/errors/*) mkdir -p "$root/share/doc/dlmap/errors"; cp "$f" "$root/share/doc/dlmap/errors/" ;;
    */docs/*|docs/*) cp "$f" "$root/share/doc/dlmap/" ;;
  esac
done
# The pkg-config file names its own directory, so the archive works wherever it is unpacked; its version is the
# library's own, read from the DLMAP_VERSION_* lines of dlmap.h (the one place it is written).
version=$(for part in MAJOR MINOR PATCH; do
  sed -n "s/^#define DLMAP_VERSION_$part \([0-9]*\)$/\1/p" "$root/include/dlmap/dlmap.h"
done | paste -sd.)
case "$version" in [0-9]*.[0-9]*.[0-9]*) ;; *) echo "make_dist.sh: no DLMAP_VERSION_* in dlmap.h" >&2; exit 1 ;; esac
sed -e 's|^prefix=@PREFIX@$|prefix=${pcfiledir}/../..|' -e "s|@VERSION@|$version|" "$pc_in" >"$root/lib/pkgconfig/dlmap.pc"
# Deterministic archive: fixed order, owner and time.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -czf "$out" dlmap
