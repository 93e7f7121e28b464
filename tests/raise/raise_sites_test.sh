#!/bin/sh
# dlmap raise sites — dlmap's own C raises every known error through its typed dlmap_raise_<id> (issue 28): a
# DLMAP_RAISE / DLMAP_PY_RAISE given a DLMAP_ERR_ constant is a site the spec's `args:` cannot check. Those macros stay
# for codes chosen at run time (an error a profile names).
# Usage (from the BUILD file): raise_sites_test.sh PYTHON3 SOURCE...
set -eu
python="$1"; shift
if [ ! -x "$python" ] && [ -x "../${python#external/}" ]; then python="../${python#external/}"; fi
PYTHONDONTWRITEBYTECODE=1 "$python" - "$@" <<'PY'
import re
import sys

# The macro, then (DLMAP_RAISE only) its error argument, then a code that names a DLMAP_ERR_ constant anywhere
# (a plain constant or a choice between two): nested parentheses in the error argument are not expected.
SITE = re.compile(r"\b(?:DLMAP_RAISE\s*\(\s*[^,()]*(?:\([^()]*\))?[^,()]*,|DLMAP_PY_RAISE\s*\()\s*[^,]*?\bDLMAP_ERR_\w+")
found = []
for path in sys.argv[1:]:
    if not path.endswith((".c", ".h", ".cc")):
        continue
    text = open(path, encoding="utf-8").read()
    for match in SITE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found.append("%s:%d: %s" % (path, line, " ".join(match.group(0).split())))
if found:
    print("FAIL: raise sites with a constant code that the spec cannot type-check; use dlmap_raise_<id>:")
    print("\n".join(found))
    sys.exit(1)
print("PASS: %d files, no DLMAP_RAISE / DLMAP_PY_RAISE with a DLMAP_ERR_ constant" % len(sys.argv[1:]))
PY
