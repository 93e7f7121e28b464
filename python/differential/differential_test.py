"""Differential conformance (issue 27): every row of a peer's contract (numpy_rows.py, …) run against the real peer
and against the `dlmap` module built with the profile that reproduces it; each row must give the same outcome —
exception kind and exact text, or the result's dtype, shape, strides, flags, read-only-ness and whether memory is
shared.

Rows no profile key can express yet are listed, each with its reason, in the profile's open-rows file
(`<profile>_open_rows.txt`: `ID  reason`). The test fails when a row differs that is not listed, and when a listed row
matches (the list must shrink as the schema grows). Where the peer is missing, or older than the release its rows
describe, every row says SKIP with the reason and the test passes: it runs for real in CI's Debian testing userland.

usage: differential_test.py ROWS_MODULE OPEN_ROWS_FILE [ADAPTER_MODULE.CLASS]   (dlmap and the rows module on
       PYTHONPATH; the dlmap adapter defaults to dlmap_adapter.DlmapAdapter, numpy_rows.py's interface)
"""

import importlib
import sys



def open_rows(path):
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                rid, _, reason = line.partition(" ")
                rows[rid] = reason.strip()
    return rows


def run(row, lib, rows):
    """The row's outcome against lib; an input the adapter cannot make (raised outside the row's own outcome()) is
    ("n/a", why). A rows module with its own runner (run_row: crash isolation, ("skip", why) outcomes) uses it."""
    if hasattr(rows, "run_row"):
        result = rows.run_row(row, lib)
        return ("n/a", result[1]) if result[0] == "skip" else result
    try:
        return row.run(lib)
    except rows.NotApplicable as e:
        return ("n/a", str(e))


def dlmap_adapter(name):
    module, _, cls = name.rpartition(".")
    return getattr(importlib.import_module(module), cls)


def main(rows_module, open_path, adapter="dlmap_adapter.DlmapAdapter"):
    rows = importlib.import_module(rows_module)
    peer = rows.ADAPTER()
    expected_open = open_rows(open_path)
    skip = peer.skip_reason()
    if skip is not None:
        for r in rows.ROWS:
            print("SKIP %-8s %s" % (r.id, skip))
        print("differential: %d rows skipped: %s" % (len(rows.ROWS), skip))
        return 0
    ours = dlmap_adapter(adapter)(peer, rows.NotApplicable)
    print("# %s %s against %s %s" % (peer.name, peer.version, ours.name, ours.version))
    unknown = sorted(set(expected_open) - {r.id for r in rows.ROWS})
    failures = ["open-rows file names rows that do not exist: %s" % ", ".join(unknown)] if unknown else []
    same = inapplicable = 0
    for r in rows.ROWS:
        theirs, mine = run(r, peer, rows), run(r, ours, rows)
        if theirs[0] == "n/a":
            # The peer cannot make the input here (pinned or CUDA memory without a GPU): nothing to compare with.
            inapplicable += 1
            print("N/A  %-8s %s: %s" % (r.id, peer.name, theirs[1]))
            if r.id in expected_open:
                failures.append("%s cannot be made by %s here: it cannot be listed in %s" % (r.id, peer.name, open_path))
        elif mine[0] == "n/a":
            # An input a dlmap array cannot be (a byte-swapped or object dtype, strides off the element grid): nothing
            # of dlmap's to compare. Printed with the reason; a listed open row must not be one.
            inapplicable += 1
            print("N/A  %-8s %s" % (r.id, mine[1]))
            if r.id in expected_open:
                failures.append("%s cannot be made in dlmap: remove it from %s" % (r.id, open_path))
        elif theirs == mine:
            if r.id in expected_open:
                failures.append("%s now matches: remove it from %s" % (r.id, open_path))
            same += 1
            print("SAME %-8s %s" % (r.id, r.what))
        elif r.id in expected_open:
            print("OPEN %-8s %s\n       %s: %s\n       dlmap: %s" % (r.id, expected_open[r.id], peer.name, theirs, mine))
        else:
            failures.append(r.id)
            print("DIFF %-8s %s\n       %s: %s\n       dlmap: %s" % (r.id, r.what, peer.name, theirs, mine))
    print("differential: %d of %d rows the same, %d open (listed), %d inputs dlmap arrays cannot be, %d failing"
          % (same, len(rows.ROWS), len(expected_open), inapplicable, len(failures)))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
