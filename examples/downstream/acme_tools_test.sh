#!/bin/sh
# Downstream example test — every tool built on Acme's profile (acme_profile.yaml) works on that spec: the CLI lists
# kDLAcmeNPU under profile acme, the docs name it, and the dist archive holds Acme's spec files in the generator's
# order, with the docs and a header generated from them; the Python module imports as acme_dlmap and exports by
# Acme's profile (versioned output, which JAX's has not); the conformance checker judges by profile acme.
# usage: acme_tools_test.sh CLI DOCS_DIR DIST_ARCHIVE MODULE CHECK_PACKAGE_INIT PYTHON
set -eu
cli="$1" docs="$2" archive="$3" module="$4" check_init="$5" python="$6"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cli" devices | grep -Eq '^ *65537  kDLAcmeNPU ' || fail "CLI devices lacks kDLAcmeNPU"
"$cli" devices | grep -q 'acme' || fail "CLI devices does not name profile acme"
grep -q kDLAcmeNPU "$docs/devices.md" || fail "docs: devices.md lacks kDLAcmeNPU"
[ -f "$docs/errors/README.md" ] || fail "docs: no errors/README.md"

work="${TEST_TMPDIR:-$(mktemp -d)}/dist"
rm -rf "$work" && mkdir -p "$work"
tar -xzf "$archive" -C "$work"
spec="$work/dlmap/share/dlmap/spec"
tail -n 2 "$spec/spec.txt" | paste -sd' ' | grep -qx 'acme_profile.yaml acme_spec.yaml' || fail "dist: spec.txt: $(cat "$spec/spec.txt")"
grep -q 'extends: jax' "$spec/acme_profile.yaml" || fail "dist: acme_profile.yaml is not Acme's profile"
grep -q kDLAcmeNPU "$spec/acme_spec.yaml" || fail "dist: acme_spec.yaml is not Acme's overlay"
grep -q kDLAcmeNPU "$work/dlmap/share/doc/dlmap/devices.md" || fail "dist: its devices.md lacks kDLAcmeNPU"
grep -q DLMAP_DEVICE_ACMENPU "$work/dlmap/include/dlmap/generated/dlmap_spec.h" || fail "dist: its header lacks Acme's type"

PYTHONPATH="$(dirname "$module")" "$python" - <<'PY' || fail "Python module acme_dlmap"
import ctypes
import acme_dlmap
assert acme_dlmap.profile() == "acme", acme_dlmap.profile()
assert type(acme_dlmap.empty(1)).__module__ == "acme_dlmap"
get_name = ctypes.pythonapi.PyCapsule_GetName
get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
names = [get_name(acme_dlmap.empty((2, 3)).__dlpack__(max_version=v)) for v in ((0, 8), (1, 0))]
assert names == [b"dltensor", b"dltensor_versioned"], names
PY

check_dir="$(dirname "$(dirname "$check_init")")"
PYTHONPATH="$check_dir" "$python" -m dlmap.check producer 'dlmap:empty((2, 3))' --profile acme >"$work/check.md" ||
    fail "checker: $(cat "$work/check.md")"
grep -q 'acme profile' "$work/check.md" || fail "checker does not judge by profile acme: $(cat "$work/check.md")"
echo "PASS: Acme's CLI, docs, dist archive, Python module and checker on acme_profile.yaml"
