"""Differential conformance (issue 27): every row of a peer's contract (numpy_rows.py, …) run against the real peer
and against the `dlmap` module built with the profile that reproduces it; each row must give the same outcome —
exception kind and exact text, or the result's dtype, shape, strides, flags, read-only-ness and whether memory is
shared.

Rows no profile key can express yet are listed, each with its reason, in the profile's open-rows file
(`<profile>_open_rows.txt`: `ID  reason`). The test fails when a row differs that is not listed, and when a listed row
matches (the list must shrink as the schema grows).

Which dlmap module: each `--module PATH/dlmap.so` is a candidate, and the one whose profile's `models:` range
(codegen/profile_models.py) holds the installed peer's release is compared (NumPy 2.4.6: numpy_2_4; 2.5.2: numpy).
Without --module, the `dlmap` on PYTHONPATH is the only candidate. Where the peer is missing, or no candidate's range
claims its release (a release no profile models is never compared with the nearest), every row says SKIP with the
reason and the test passes: it runs for real in CI's Debian testing userland.

usage: differential_test.py ROWS_MODULE OPEN_ROWS_FILE [ADAPTER_MODULE.CLASS] [--module PATH/dlmap.so ...]
       (the rows module on PYTHONPATH; the dlmap adapter defaults to dlmap_adapter.DlmapAdapter, numpy_rows.py's
       interface)
"""

import importlib
import os
import subprocess
import sys

# The range reader, from the checkout (run_python.sh starts in it; //codegen:profile_models.py is in the data).
sys.path.insert(0, os.path.join(os.getcwd(), "codegen"))
import profile_models  # noqa: E402



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


def profile_of(module_path):
    """(profile name, models range) of a built dlmap module, asked in a child interpreter (one `dlmap` per process)."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(module_path)))
    out = subprocess.run([sys.executable, "-c", "import dlmap; print(dlmap.profile()); print(dlmap.profile_models())"],
                         env=env, check=True, capture_output=True, text=True).stdout.split("\n")
    return out[0], out[1]


def choose_module(peer, modules):
    """Puts on sys.path the candidate module whose profile claims the peer's release; None, or why none does."""
    if not modules:  # the `dlmap` already on PYTHONPATH
        import dlmap
        claims = [(dlmap.profile(), dlmap.profile_models(), None)]
    else:
        claims = [profile_of(m) + (m,) for m in modules]
    for name, models, path in claims:
        if profile_models.holds(models, peer.name, peer.version):
            if path is not None:
                sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
            print("# %s %s is claimed by profile %s (models %s)" % (peer.name, peer.version, name, models))
            return None
    return "no profile here models %s %s (%s): not compared with the nearest" % (
        peer.name, peer.version, "; ".join("%s: %s" % (name, models) for name, models, _ in claims))


def main(rows_module, open_path, adapter="dlmap_adapter.DlmapAdapter", modules=()):
    rows = importlib.import_module(rows_module)
    peer = rows.ADAPTER()
    expected_open = open_rows(open_path)
    skip = peer.skip_reason() or choose_module(peer, modules)
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
    arguments, candidates = sys.argv[1:], []
    while "--module" in arguments:
        at = arguments.index("--module")
        if at + 1 >= len(arguments):
            sys.exit(__doc__)
        candidates.append(arguments[at + 1])
        del arguments[at:at + 2]
    if len(arguments) not in (2, 3):
        sys.exit(__doc__)
    sys.exit(main(*arguments, modules=candidates))
