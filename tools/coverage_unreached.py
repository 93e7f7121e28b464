#!/usr/bin/env python3
"""dlmap coverage — compares what the tests left unreached with the committed explanations (issue 65).

usage: coverage_unreached.py GCOVR_JSON UNREACHED_LIST

GCOVR_JSON is gcovr's --json report of tools/coverage.sh's plain gcov build; UNREACHED_LIST is tools/coverage_unreached,
one entry per source line (or lines) that keeps a branch (or itself) unreached: `path/file.c:LINES: why`, LINES a
line, a range FIRST-LAST or a comma-separated list of them, `#` comments and blank
lines ignored. Prints the unreached lines the list does not explain and the listed lines the tests now reach (a stale
entry: remove it), and exits 1 when there is either. Line numbers are this checkout's: an edit above a listed line moves
it, and this report says which entries to move.
"""
import json
import re
import sys

ENTRY = re.compile(r"^(?P<path>[^:\s]+\.c):(?P<lines>[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*): (?P<why>\S.*)$")


def unreached_lines(report):
    """{(path, line): what is missed} over the report's files: a line never run, or one with a branch never taken."""
    missed = {}
    for f in report["files"]:
        for line in f["lines"]:
            if line.get("gcovr/noncode"):
                continue
            branches = line.get("branches", [])
            untaken = sum(1 for b in branches if b["count"] == 0)
            if line["count"] == 0:
                missed[(f["file"], line["line_number"])] = "never run"
            elif untaken:
                missed[(f["file"], line["line_number"])] = "%d of %d branches never taken" % (untaken, len(branches))
    return missed


def read_list(path):
    """[(path, lines, why)]; a line that is neither an entry, a comment nor blank is an error."""
    entries = []
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            text = text.rstrip("\n")
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            match = ENTRY.match(text)
            if match is None:
                sys.exit("%s:%d: not `path/file.c:LINES: why`: %s" % (path, number, text))
            lines = []
            for part in match["lines"].split(","):
                first, _, last = part.partition("-")
                lines.extend(range(int(first), int(last or first) + 1))
            entries.append((match["path"], match["lines"], lines, match["why"]))
    return entries


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    with open(argv[1], encoding="utf-8") as handle:
        missed = unreached_lines(json.load(handle))
    entries = read_list(argv[2])
    explained = {(path, line) for path, _, lines, _ in entries for line in lines}
    unexplained = sorted(set(missed) - explained)
    # An entry none of whose lines is unreached any more: a test reaches it now, or an edit moved it.
    stale = [e for e in entries if not any((e[0], line) in missed for line in e[2])]
    for path, line in unexplained:
        print("unexplained  %s:%d: %s" % (path, line, missed[(path, line)]))
    for path, text, _, why in stale:
        print("stale        %s:%s: reached now (listed: %s)" % (path, text, why))
    print("unreached lines: %d, explained by %s: %d, unexplained: %d, stale entries: %d"
          % (len(missed), argv[2], len(missed) - len(unexplained), len(unexplained), len(stale)))
    return 1 if unexplained or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
