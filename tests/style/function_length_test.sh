#!/bin/sh
# dlmap function shape — no function of the core or the binding runs over 60 lines or takes more than 8 parameters
# (issue 28, tightened by issue 57): a longer one holds several steps that want names of their own, and a long
# parameter list is data that wants a struct of its own (issue 57: a copy's layout). Counts from a body's opening brace
# to its closing one, with comments, string literals and preprocessor lines blanked first so that their braces and
# parentheses do not count; parameters are the top-level commas of the parameter list before the body, plus one
# (none for `()` or `(void)`).
# Usage (from the BUILD file): function_length_test.sh PYTHON3 SOURCE...
set -eu
python="$1"; shift
if [ ! -x "$python" ] && [ -x "../${python#external/}" ]; then python="../${python#external/}"; fi
PYTHONDONTWRITEBYTECODE=1 "$python" - "$@" <<'PY'
import re
import sys

LIMIT = 60
MAX_PARAMETERS = 8


def parameter_list(before):
    """The text inside the last balanced (...) of `before` (which ends with ')'), and the name in front of it."""
    depth = 0
    for i in range(len(before) - 1, -1, -1):
        if before[i] == ")":
            depth += 1
        elif before[i] == "(":
            depth -= 1
            if depth == 0:
                name = re.search(r"(\w+)\s*$", before[:i])
                return before[i + 1:-1], name.group(1) if name else "?"
    return "", "?"


def count_parameters(inside):
    inside = inside.strip()
    if inside in ("", "void"):
        return 0
    depth, count = 0, 1
    for ch in inside:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


problems, counted = [], 0
for path in sys.argv[1:]:
    if not path.endswith(".c"):
        continue
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.M)
    depth, start, name, top = 0, None, "?", ""  # top: the text at depth 0 since the last ';' or '}' there
    for number, line in enumerate(text.split("\n"), 1):
        for ch in line + "\n":
            if ch == "{":
                # A top-level brace after a parameter list opens a function body (not an initialiser or a struct).
                if depth == 0 and top.rstrip().endswith(")"):
                    start = number
                    inside, name = parameter_list(top.rstrip())
                    parameters = count_parameters(inside)
                    if parameters > MAX_PARAMETERS:
                        problems.append("%s:%d: %s takes %d parameters" % (path, number, name, parameters))
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    top = ""
                    if start is not None:
                        counted += 1
                        if number - start + 1 > LIMIT:
                            problems.append("%s:%d: %s runs %d lines" % (path, start, name, number - start + 1))
                        start = None
            elif depth == 0:
                top = "" if ch == ";" else top + ch
if counted == 0:
    print("FAIL: no function found: the sources did not reach the test")
    sys.exit(1)
if problems:
    print("FAIL: functions over %d lines or %d parameters (split them into named steps, or pass a struct):"
          % (LIMIT, MAX_PARAMETERS))
    print("\n".join(problems))
    sys.exit(1)
print("PASS: %d functions, none over %d lines or %d parameters" % (counted, LIMIT, MAX_PARAMETERS))
PY
