"""The harness every peer's contract rows share (numpy_rows.py, jax_rows.py): the Row record, a registry that the
module's @row decorator fills in definition order, NotApplicable (the adapter cannot make a row's input here), and the
command-line listing of every row's outcome against the installed peer. differential_test.py reads a rows module's
ROWS, NotApplicable, ADAPTER and, where it has one, run_row. Plain Python 3 only."""

import collections
import sys

Row = collections.namedtuple("Row", "id what run")


class NotApplicable(Exception):
    """The adapter cannot make this row's input here (a GPU it lacks, a dtype or view the library has not)."""


def registry():
    """(rows, row): the module's list of rows and the decorator @row(id, what) that appends a row function to it."""
    rows = []

    def row(rid, what):
        def deco(fn):
            rows.append(Row(rid, what, fn))
            return fn
        return deco
    return rows, row


def print_rows(lib, rows, run):
    """Prints each row's outcome against lib (run(row, lib) gives it), or SKIP with the adapter's reason, then a tally
    by outcome kind; returns 0 (a listing, not a verdict: differential_test.py compares)."""
    print("# %s %s, python %s, %d rows" % (lib.name, lib.version, sys.version.split()[0], len(rows)))
    skip = lib.skip_reason()
    width = max([len(r.id) for r in rows] + [7])
    tally = collections.Counter()
    for r in rows:
        got = ("skip", skip) if skip else run(r, lib)
        tally[got[0]] += 1
        print("%-*s %s" % (width, r.id, ("SKIP: " + skip) if skip else got))
    print("# summary: " + ", ".join("%s %d" % kv for kv in sorted(tally.items())))
    return 0
