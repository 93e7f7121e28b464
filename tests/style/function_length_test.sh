#!/bin/sh
# dlmap function length — no function of the core or the binding runs over 100 lines (issue 28): a longer one holds
# several steps that want names of their own. Counts from a body's opening brace to its closing one, with comments and
# string literals blanked first so that their braces do not count.
# Usage (from the BUILD file): function_length_test.sh PYTHON3 SOURCE...
set -eu
python="$1"; shift
if [ ! -x "$python" ] && [ -x "../${python#external/}" ]; then python="../${python#external/}"; fi
PYTHONDONTWRITEBYTECODE=1 "$python" - "$@" <<'PY'
import re
import sys

LIMIT = 100
too_long, counted = [], 0
for path in sys.argv[1:]:
    if not path.endswith(".c"):
        continue
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)
    depth, start, before = 0, None, ""
    for number, line in enumerate(text.split("\n"), 1):
        for ch in line:
            if ch == "{":
                # A top-level brace after a parameter list opens a function body (not an initialiser or a struct).
                if depth == 0 and before.endswith(")"):
                    start = number
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start is not None:
                    counted += 1
                    if number - start + 1 > LIMIT:
                        too_long.append("%s:%d: %d lines" % (path, start, number - start + 1))
                    start = None
            if not ch.isspace():
                before = (before + ch)[-2:]
if counted == 0:
    print("FAIL: no function found: the sources did not reach the test")
    sys.exit(1)
if too_long:
    print("FAIL: functions over %d lines (split them into named steps):" % LIMIT)
    print("\n".join(too_long))
    sys.exit(1)
print("PASS: %d functions, none over %d lines" % (counted, LIMIT))
PY
