#!/bin/sh
# dlmap_dist() on a library of a spec that is not shipped (//docs:testdata/vendor_overlay.yaml on the Array API
# profile): the archive holds that spec's files in the generator's order, and its header and docs name the vendor's
# device type.
set -eu
archive="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}/dist"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
tar -xzf "$archive" -C "$work"
spec="$work/dlmap/share/dlmap/spec"
printf '%s\n' versions.yaml platforms.yaml devices.yaml dtypes.yaml errors.yaml released_values.yaml array_api.yaml \
  vendor_overlay.yaml \
  | cmp -s - "$spec/spec.txt" || fail "spec.txt: $(cat "$spec/spec.txt")"
while read -r f; do [ -s "$spec/$f" ] || fail "spec.txt names $f, which the archive lacks"; done <"$spec/spec.txt"
grep -q kDLDocsVendorNPU "$spec/vendor_overlay.yaml" || fail "vendor_overlay.yaml is not the overlay"
grep -q kDLDocsVendorNPU "$work/dlmap/share/doc/dlmap/devices.md" || fail "devices.md lacks kDLDocsVendorNPU"
[ -f "$work/dlmap/share/doc/dlmap/errors/README.md" ] || fail "no errors/README.md"
grep -qi DocsVendorNPU "$work/dlmap/include/dlmap/generated/dlmap_spec.h" || fail "dlmap_spec.h is not the vendor spec's"
for f in lib/libdlmap.a lib/pkgconfig/dlmap.pc; do [ -f "$work/dlmap/$f" ] || fail "no $f"; done
echo "PASS: the vendor library's archive holds its spec, header and docs"
