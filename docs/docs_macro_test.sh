#!/bin/sh
# dlmap_docs() on a spec that is not shipped (docs/testdata/vendor_overlay.yaml): devices.md names every device type of
# that spec and its profile, and errors/ has one page per catalogue entry plus its README. The spec's facts come from
# its YAML (tests/spec_facts: SPEC_* variables), not from the generator.
# usage: docs_macro_test.sh DOCS_DIR SPEC_FACTS_SH
set -eu
docs="$1"
. "$2"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$docs/devices.md" ] || fail "no devices.md in $docs"
[ -f "$docs/errors/README.md" ] || fail "no errors/README.md in $docs"
echo "$SPEC_DEVICE_TYPES" | while read -r value _ enumerator _; do
  grep -q "$enumerator" "$docs/devices.md" || fail "devices.md does not name device type $value ($enumerator)"
done
grep -q "$SPEC_PROFILE" "$docs/devices.md" || fail "devices.md does not name profile $SPEC_PROFILE"
pages=$(find -L "$docs/errors" -name '*.md' ! -name README.md | wc -l)
[ "$pages" -eq "$SPEC_ERROR_COUNT" ] || fail "$pages error pages for $SPEC_ERROR_COUNT errors"
echo "PASS: dlmap_docs on the extended spec: $SPEC_DEVICE_TYPE_COUNT device types, $pages error pages"
