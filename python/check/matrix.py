# dlmap conformance checker — every pair: each importable library's values (matrix_families.FAMILIES) handed to each
# library's from_dlpack, producer × consumer, one child interpreter per pair (matrix_calls.py) that starts again after
# the family that crashed or hung. Prints an N × N summary (ok, refused, n/a, failed per pair) and the failing rows,
# each with a one-line reproduction. A row fails when the consumer crashes or hangs, or what it returns differs from
# what was sent (shape, dtype, any element's bytes), shares data under copy=True, copies under copy=False, or is a
# writable view of read-only data; a clean exception is a refusal, which pairs may disagree on without failing.
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

from . import children, matrix_families

TIMEOUT_S = 60  # one family: longer is a hang


def available(names):
    """(the libraries among `names` this interpreter can import, {name: why not} for the others)."""
    found, missing = [], {}
    for name in names:
        if name not in matrix_families.LIBRARIES:
            missing[name] = "not one of %s" % ", ".join(matrix_families.LIBRARIES)
        elif importlib.util.find_spec(name) is None:
            missing[name] = "not installed"
        else:
            found.append(name)
    return found, missing


def _child(config, answer_path, timeout, libraries):
    """Runs a pair's child from config["first"]: None when it ended by itself, else what stopped it. The child is forked
    from a server that imported every library of the matrix (one server for all pairs)."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p or os.getcwd() for p in sys.path]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here] + path), PYTHONDONTWRITEBYTECODE="1")
    if "ASAN_OPTIONS" in env:  # a consumer's segmentation fault reads the same as in a plain build
        env["ASAN_OPTIONS"] += ":handle_segv=0"
    try:
        child = children.run(os.path.join(here, "matrix_calls.py"), [json.dumps(config), answer_path], env, timeout,
                             sorted(libraries))
    except subprocess.TimeoutExpired:
        return "hung (over %d s)" % timeout
    if child.returncode < 0:
        return "crashed (%s)" % children.signal_name(child.returncode)
    if child.returncode != 0:
        return "child failed (exit %d: %s)" % (child.returncode, (child.stderr.strip().splitlines() or ["?"])[-1][:120])
    return None


def pair(producer, consumer, timeout=TIMEOUT_S, libraries=()):
    """Every family's outcome for one pair, in FAMILIES' order (libraries: the matrix's, which its children import)."""
    families = matrix_families.FAMILIES
    outcomes = {}
    with tempfile.TemporaryDirectory(prefix="dlmap-matrix-") as directory:
        answer_path = os.path.join(directory, "answers.jsonl")
        first = 0
        while first < len(families):
            config = {"producer": producer, "consumer": consumer, "first": first}
            stopped = _child(config, answer_path, timeout * (len(families) - first),
                             set(libraries) | {producer, consumer})
            with open(answer_path, encoding="utf-8") if os.path.exists(answer_path) else open(os.devnull) as f:
                for line in f:
                    answer = json.loads(line)
                    outcomes[answer["index"]] = answer
            done = max([i for i in outcomes] + [first - 1])
            if stopped is None and done == len(families) - 1:
                break
            outcomes[done + 1] = {"failed": stopped or "the child ended early", "index": done + 1}
            first = done + 2
    return [outcomes[i] for i in range(len(families))]


def _text(outcome):
    if "na" in outcome:
        return "n/a"
    if "refused" in outcome:
        return "refused (%s)" % outcome["refused"]
    if "failed" in outcome:
        return outcome["failed"]
    if "unreadable" in outcome:
        return "unreadable: %s" % outcome["unreadable"]
    return "ok" if outcome["ok"] else "; ".join(outcome["problems"])


def _failed(outcome):
    return "failed" in outcome or "unreadable" in outcome or outcome.get("ok") is False


class Matrix:
    def __init__(self, libraries, missing, outcomes):
        self.libraries, self.missing, self.outcomes = libraries, missing, outcomes  # (p, c) → [outcome]

    def failures(self):
        return [(p, c, matrix_families.FAMILIES[o["index"]], o) for (p, c), row in self.outcomes.items()
                for o in row if _failed(o)]

    def markdown(self):
        versions = []
        for name in self.libraries:
            module = importlib.import_module(name)
            versions.append("%s %s" % (name, getattr(module, "__version__", None) or
                                       "(profile %s)" % module.profile()))
        out = ["### DLPack matrix: %s" % ", ".join(versions), ""]
        out += ["%s: %s." % (name, why) for name, why in sorted(self.missing.items())]
        out.append("Each cell: the %d value families (dtypes, layouts, read-only, 0-d, empty, copy and device "
                   "requests) made by the row's library and imported by the column's from_dlpack." %
                   len(matrix_families.FAMILIES))
        out.append("")
        out.append("| producer \\ consumer | " + " | ".join(self.libraries) + " |")
        out.append("|---|" + "---|" * len(self.libraries))
        for p in self.libraries:
            cells = []
            for c in self.libraries:
                row = self.outcomes[(p, c)]
                counts = [(sum(1 for o in row if o.get("ok") is True), "ok"),
                          (sum(1 for o in row if "refused" in o), "refused"),
                          (sum(1 for o in row if "na" in o), "n/a"),
                          (sum(1 for o in row if _failed(o)), "**failed**")]
                cells.append(", ".join("%d %s" % (n, what) for n, what in counts if n))
            out.append("| %s | %s |" % (p, " | ".join(cells)))
        out.append("")
        failures = self.failures()
        out.append("%d failing rows%s" % (len(failures), ":" if failures else "."))
        if failures:
            out += ["", "| producer | consumer | family | what happened | reproduce |", "|---|---|---|---|---|"]
            for p, c, family, o in failures:
                out.append("| %s | %s | %s | %s | `%s` |" % (p, c, family["name"], _text(o).replace("|", "\\|"),
                                                             matrix_families.reproduction(p, c, family)))
        out += ["", "Refusals by pair (a clean exception; pairs may disagree):", ""]
        for (p, c), row in self.outcomes.items():
            refused = ["%s: %s" % (matrix_families.FAMILIES[o["index"]]["name"], o["refused"]) for o in row
                       if "refused" in o]
            if refused:
                out.append("- %s → %s: %s" % (p, c, "; ".join(refused)))
        return "\n".join(out) + "\n"


def matrix(names, timeout=TIMEOUT_S):
    """The matrix of the importable libraries among `names` (numpy, torch, dlmap)."""
    libraries, missing = available(names)
    outcomes = {(p, c): pair(p, c, timeout, libraries) for p in libraries for c in libraries}
    return Matrix(libraries, missing, outcomes)
