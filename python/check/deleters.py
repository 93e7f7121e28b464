# dlmap conformance checker — the producer's deleter rows: for each struct the producer hands out (the plain
# __dlpack__() and __dlpack__(max_version=current)), its deleter called as consumers call it in the wild, each way in
# a child interpreter of its own (deleter_calls.py): with the GIL released, on a native thread Python never saw, after
# the producer's objects are gone, and at exit once the interpreter has finalised. Each row says returned, crashed
# (the signal) or deadlocked; a producer whose deleter needs the GIL and does not take it crashes in its row, never
# in the checker.
import json
import os
import subprocess
import sys
import tempfile
import time

from . import children
from .report import Row

RULE = "P-deleter-anywhere"
RULE_TEXT = ("a producer's deleter may be called from any thread, with or without the GIL, after the producer's "
             "Python objects are gone, and at exit after the interpreter has finalised: it returns, and neither "
             "crashes nor deadlocks (dlpack#103, #129, #140)")
WAYS = (("no_gil", "its deleter called with the GIL released"),
        ("foreign_thread", "its deleter called on a native thread Python never saw"),
        ("objects_gone", "its deleter called after the producer and the capsule are gone"),
        ("shutdown", "its deleter called at exit, after the interpreter finalised"))
AT_EXIT = "dlmap: a deleter returned at exit"  # python/testing_hooks.c's line after each at-exit call
MAKE_S = 30  # what a child may take beyond the call's deadline: the interpreter, the imports, the expression


def _run(config, timeout):
    """One way in a child: (got, failure or None, skipped)."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p or os.getcwd() for p in sys.path]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here] + path), PYTHONDONTWRITEBYTECODE="1")
    if "ASAN_OPTIONS" in env:  # a producer's segmentation fault reads the same as in a plain build
        env["ASAN_OPTIONS"] += ":handle_segv=0"
    with tempfile.TemporaryDirectory(prefix="dlmap-check-") as directory:
        verdict_path = os.path.join(directory, "verdict.json")
        try:
            child = children.run(os.path.join(here, "deleter_calls.py"), [json.dumps(config), verdict_path], env,
                                 timeout, [children.module_of(config["target"])])
        except subprocess.TimeoutExpired:
            return "deadlocked (over %d s)" % timeout, True, False
        try:
            with open(verdict_path, encoding="utf-8") as handle:
                verdict = json.loads(handle.read())
        except (OSError, ValueError):
            verdict = None
    if child.returncode < 0:
        return ("crashed (%s)%s" % (children.signal_name(child.returncode),
                                    " at exit" if verdict and verdict.get("at_exit") else ""), True, False)
    if verdict is None or child.returncode != 0:
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return "child failed (exit %d: %s)" % (child.returncode, last[:120]), True, False
    if "refused" in verdict:
        return "__dlpack__ hands out none (%s)" % verdict["refused"], False, True
    if verdict.get("no_deleter"):
        return "no deleter (NULL)", False, False
    if "no_thread" in verdict:
        return "pthread_create failed (%d)" % verdict["no_thread"], False, True
    if verdict.get("at_exit") and AT_EXIT not in child.stderr:
        return "exited without returning from the deleter", True, False
    return "returned", False, False


def rows(target, rules, columns, timeout, deadline=None, gone=None):
    """The deleter rows of the producer `target` (module:expression), the same verdict in every column: each child
    may take `timeout` seconds beyond making the producer, and none starts past `deadline`; `gone`: (why no call is
    sent any more, the rule that breaks) when the producer check stopped sending calls, which each row then says."""
    structs = (("legacy", {}, "__dlpack__()"),
               ("versioned", {"max_version": list(rules.current)}, "__dlpack__(max_version=%s)"
                % (tuple(rules.current),)))
    names = {s: [rules.structs[s][2], rules.structs[s][3]] for s in ("legacy", "versioned")}
    out, number = [], 0
    for _, kwargs, call in structs:
        for way, text in WAYS:
            number += 1
            sent = "%s, %s" % (call, text)
            limit = timeout + MAKE_S
            left = limit if deadline is None else min(limit, deadline - time.monotonic())
            if gone is not None:
                out.append(Row("L%d" % number, sent, gone[0], {c: [(gone[1], gone[0])] for c in columns}))
                continue
            if left <= 0:
                out.append(Row("L%d" % number, sent, "not run: the check's deadline passed",
                               {c: [("X-not-checked", "the check's deadline passed")] for c in columns}))
                continue
            got, failed, skipped = _run({"target": target, "kwargs": kwargs, "way": way, "names": names}, left)
            verdict = [(RULE, got)] if failed else []
            out.append(Row("L%d" % number, sent, got, {c: list(verdict) for c in columns}, skipped=skipped))
    return out
