# dlmap conformance checker — the GPU step of gpu/check.sh: checks dlmap's own CUDA arrays under its profile first (the
# rows that decide the verdict), then CUDA arrays of JAX, PyTorch and CuPy as producers and their from_dlpack as
# consumers (whichever import and see a CUDA device; the others are skipped with the reason). Every producer and
# consumer lives in a child interpreter with a deadline (producer.py, consumer.py): a peer that crashes or hangs, even
# while its array is made, gets a row saying so, and the run goes on. A GPU-class producer gets the stream values its
# convention documents and a real stream made in its own process (streams.py), never an invented handle. Writes each
# table to DIR and prints one line per check in gpu/check.sh's format: a peer's table is INFO (its conformance is
# reported, not required); dlmap's is PASS or FAIL; a summary line last.
#
# usage: python3 -m dlmap.check.gpu_peers DIR [--deadline SECONDS] [--stream MODULE:EXPR]
#                                             [--peer NAME PRODUCER CONSUMER STREAM]... [--no-default-peers]
# exit:  0  dlmap's rows ran on a GPU-class device and all pass
#        1  a dlmap row fails, or dlmap crashed or hung making its CUDA array
#        3  nothing checked: dlmap cannot make a CUDA array here (the reason is printed)
import argparse
import os
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU with PyTorch and CuPy here

from .consumer import consumer  # noqa: E402  (after the environment JAX reads at import)
from .producer import DEADLINE_PASSED, RULES, NotMade, producer  # noqa: E402
from .report import Report, Row  # noqa: E402
from .rules import STANDARD_PROFILE, Rules  # noqa: E402

EXIT_PASS, EXIT_FAIL, EXIT_NOTHING_CHECKED = 0, 1, 3
DLMAP_TARGET = "dlmap:empty((2, 3), 'float64', device=(2, 0))"


def line(status, text):
    print("%-4s  %s" % (status, text), flush=True)


# Each peer's array, made in the producer check's child interpreter ("dlmap.check.gpu_peers:jax_array()"); each raises
# with the reason where the framework cannot make one on a CUDA device.
def jax_array():
    import jax
    import jax.numpy as jnp
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        raise RuntimeError("JAX sees no GPU (backend %s)" % jax.default_backend())
    return jax.device_put(jnp.arange(6.0), gpus[0])


def torch_array():
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch %s: torch.cuda.is_available() is False" % torch.__version__)
    return torch.arange(6.0, device="cuda")


def cupy_array():
    import cupy
    return cupy.arange(6.0)


# (name, producer module:expression, consumer module:expression, stream maker module:expression or None: the
# platform runtime's, streams.runtime). A framework's own stream where it has stream objects; JAX has none.
PEERS = (
    ("jax", "dlmap.check.gpu_peers:jax_array()", "jax.dlpack:from_dlpack", None),
    ("torch", "dlmap.check.gpu_peers:torch_array()", "torch:from_dlpack", "dlmap.check.streams:torch()"),
    ("cupy", "dlmap.check.gpu_peers:cupy_array()", "cupy:from_dlpack", "dlmap.check.streams:cupy()"),
)


def _write(directory, name, report):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(report.markdown())
    return path


def _not_made(subject, failure):
    """The report of a producer that crashed or hung while made: one P-crash row."""
    report = Report("producer", subject, ["standard"], RULES)
    report.add(Row("M1", "make the producer in a child interpreter", failure, {"standard": [("P-crash", failure)]}))
    return report


def _on_device(report):
    """Whether the producer reported memory a vendor runtime keeps (the rows ran on a GPU-class device)."""
    return report.device is not None and Rules(STANDARD_PROFILE).runtime_class(report.device[0])


def check_dlmap(directory, deadline, stream):
    """dlmap's own CUDA array under its profile: (exit status, summary text)."""
    import dlmap
    profile = dlmap.profile()
    column = "%s profile" % profile
    try:
        report = producer(DLMAP_TARGET, profile=profile, subject="dlmap CUDA empty((2, 3), 'float64')", stream=stream,
                          deadline=deadline)
    except NotMade as error:
        if error.failure == DEADLINE_PASSED:
            line("SKIP", "conformance dlmap (CUDA): nothing checked: %s" % error.failure)
            return EXIT_NOTHING_CHECKED, "dlmap not checked (deadline)"
        if error.failure.startswith("raised"):  # the build or the machine has no CUDA device for dlmap
            text = "conformance dlmap (CUDA): nothing checked: cannot allocate on kDLCUDA: %s" % error.failure
            line("SKIP", text)
            return EXIT_NOTHING_CHECKED, "dlmap not checked (cannot allocate on kDLCUDA)"
        line("FAIL", "conformance dlmap (CUDA): making its CUDA array %s" % error.failure)
        return EXIT_FAIL, "dlmap FAIL (%s while made)" % error.failure
    path = _write(directory, "dlmap_%s_cuda_producer.md" % profile, report)
    if not _on_device(report):
        text = "conformance dlmap (CUDA): nothing checked: the array reports %s, not GPU memory (%s)" % (
            report.device, path)
        line("SKIP", text)
        return EXIT_NOTHING_CHECKED, "dlmap not checked (no GPU memory)"
    passed, failed = report.counts(column)
    line("PASS" if not failed else "FAIL", "conformance dlmap producer (CUDA) under its %s: %d rows pass, %d fail (%s)"
         % (column, passed, failed, path))
    return (EXIT_FAIL if failed else EXIT_PASS), "dlmap %s (%d rows pass, %d fail)" % (
        "FAIL" if failed else "PASS", passed, failed)


def check_peer(directory, name, target, consume, stream, deadline):
    """One peer's producer and consumer tables: its summary word (checked, skipped: why, or not checked: why)."""
    if deadline is not None and time.monotonic() >= deadline:
        line("SKIP", "conformance %s: not checked: the check's deadline passed" % name)
        return "%s not checked (deadline)" % name
    subject = "%s CUDA arange(6.0)" % name
    try:
        report = producer(target, subject=subject, stream=stream, deadline=deadline)
    except NotMade as error:
        if error.failure == DEADLINE_PASSED:
            line("SKIP", "conformance %s: not checked: %s" % (name, error.failure))
            return "%s not checked (deadline)" % name
        if error.failure.startswith("raised"):  # not installed, no GPU build, no device: say why and go on
            line("SKIP", "conformance %s: %s" % (name, error.failure[:200]))
            return "%s skipped" % name
        report = _not_made(subject, error.failure)  # a crash or hang while made is a row, not the end of the run
    path = _write(directory, "%s_cuda_producer.md" % name, report)
    line("INFO", "conformance %s producer (CUDA): %d rows pass, %d fail (%s)" % (
        (name,) + report.counts("standard") + (path,)))
    report = consumer(consume, deadline=deadline)
    path = _write(directory, "%s_consumer.md" % name, report)
    line("INFO", "conformance %s consumer: %d rows pass, %d fail (%s)" % ((name,) + report.counts("standard") + (path,)))
    return "%s checked" % name


def main(argv):
    parser = argparse.ArgumentParser(prog="python3 -m dlmap.check.gpu_peers", description=__doc__)
    parser.add_argument("directory", help="where the tables are written")
    parser.add_argument("--deadline", type=float, help="seconds the whole step may take: no call or case starts "
                        "after it, and each left gets a row saying it was not checked")
    parser.add_argument("--stream", help="module:expression making, in each producer's process, the real stream "
                        "passed as stream= (default: the framework's own, else the platform runtime's)")
    parser.add_argument("--peer", nargs=4, action="append", default=[],
                        metavar=("NAME", "PRODUCER", "CONSUMER", "STREAM"),
                        help="one more peer: module:expression of its CUDA array, of its from_dlpack, and of its "
                        "stream maker ('-': the platform runtime's)")
    parser.add_argument("--no-default-peers", action="store_true", help="check only the --peer peers")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.deadline if args.deadline else None
    os.makedirs(args.directory, exist_ok=True)
    status, summary = check_dlmap(args.directory, deadline, args.stream)  # first: the rows the verdict needs
    peers = ([] if args.no_default_peers else list(PEERS)) + \
        [(n, p, c, None if s == "-" else s) for n, p, c, s in args.peer]
    words = [check_peer(args.directory, name, target, consume, args.stream or stream, deadline)
             for name, target, consume, stream in peers]
    verdict = {EXIT_PASS: "PASS", EXIT_FAIL: "FAIL", EXIT_NOTHING_CHECKED: "NOTHING CHECKED"}[status]
    print("conformance: %s: %s; peers: %s" % (verdict, summary, ", ".join(words) or "none"), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
