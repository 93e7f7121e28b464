"""The JAX differential can fail (issue 46): differential_test.py runs jax_rows.py against a stand-in "JAX" built on
dlmap's own jax-profile module (jax_stand_in.py, so it runs without JAX) and against the same module as dlmap.
  - the stand-in deviating on one row: exit 1, that row DIFF with both outcomes, "FAIL: <row>" the only failure, every
    other row SAME or N/A (a row that needs a CUDA device, where there is none);
  - the stand-in not deviating: exit 0, no DIFF.
The open-rows file is empty (jax_stand_in_open_rows.txt): the stand-in has none of the real JAX's known differences.
usage: jax_stand_in_test.py OPEN_ROWS_FILE   (dlmap, the jax profile's module, and this directory on PYTHONPATH)
"""

import contextlib
import io
import re
import sys

import differential_test
import jax_rows
import jax_stand_in


def run(deviate, open_path):
    jax_rows.ADAPTER = lambda: jax_stand_in.StandInJax(deviate)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = differential_test.main("jax_rows", open_path, "dlmap_jax_adapter.DlmapJaxAdapter")
    text = out.getvalue()
    print(text)
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^(SAME|DIFF|N/A |OPEN|SKIP) (\S+)", line)
        if m:
            rows[m.group(2)] = m.group(1).strip()
    return status, rows, text


def check(condition, message):
    if not condition:
        sys.exit("FAIL: " + message)


def main(open_path):
    ids = [r.id for r in jax_rows.ROWS]
    deviating = jax_stand_in.StandInJax.DEVIATING_ROW
    status, rows, text = run(True, open_path)
    check(status == 1, "the deviating stand-in: exit %d, want 1" % status)
    check(sorted(rows) == sorted(ids), "not one line per row: %s" % sorted(set(ids) ^ set(rows)))
    check(rows[deviating] == "DIFF", "%s is %s, want DIFF" % (deviating, rows[deviating]))
    check(re.search(r"^DIFF %s .*\n\s+jax: \('capsule', 'dltensor'" % deviating, text, re.M),
          "the DIFF line does not show the stand-in's capsule")
    check(re.search(r"^\s+dlmap: \('raises', 'BufferError', 'JAX does not support any version below", text, re.M),
          "the DIFF line does not show dlmap's BufferError")
    check([line for line in text.splitlines() if line.startswith("FAIL: ")] == ["FAIL: " + deviating],
          "the failures are not exactly %s" % deviating)
    others = {rid: state for rid, state in rows.items() if rid != deviating}
    check(all(state in ("SAME", "N/A") for state in others.values()),
          "rows other than %s that are not SAME: %s" % (deviating,
                                                           {k: v for k, v in others.items() if v not in ("SAME", "N/A")}))
    check(sum(state == "SAME" for state in others.values()) >= 80, "fewer than 80 rows compared")
    for line in text.splitlines():  # an N/A here is only ever a row that needs a CUDA device
        if line.startswith("N/A "):
            check("needs a CUDA device" in line, "an N/A row for another reason: " + line)

    status, rows, text = run(False, open_path)
    check(status == 0, "the agreeing stand-in: exit %d, want 0" % status)
    check("DIFF" not in rows.values(), "the agreeing stand-in has DIFF rows")
    print("PASS: %s is the only row reported DIFF, and only while the stand-in deviates on it" % deviating)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
