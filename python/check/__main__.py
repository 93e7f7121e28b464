# dlmap conformance checker — the command line: `python3 -m dlmap.check producer|consumer module:expression` prints
# the check's Markdown table; `tables DIR` writes (or with --check compares) the committed tables of docs/conformance.
import argparse
import json
import os
import sys

from . import consumer, matrix, producer, rules, tables
from .producer import CALL_TIMEOUT_S
from .report import JSON_FORMAT


DESCRIPTION = """\
DLPack conformance checks: judge any DLPack producer or consumer, row by row, against the DLPack and Array API
standard as dlmap's spec states it (and, with --profile, against a dlmap profile such as JAX's contract)."""

EPILOG = """\
commands:
  producer TARGET   TARGET is module:expression, evaluated in the module's namespace ('numpy:arange(6.0)',
                    'torch:ones(2, 3)'). The value is made in a child interpreter, which calls its __dlpack__ with every
                    max_version / dl_device / copy / stream combination and its __dlpack_device__, each call under
                    --timeout; each capsule is judged (name, struct and version, flags, strides, dtype, device,
                    copies, read-only, error kinds, the deleter running exactly once). A call that hangs or crashes
                    is a row ("hung (over 60 s)", "crashed (SIGSEGV)") and the check goes on in a fresh child.
                    Where a GPU runtime is loaded in its process, row D2 imports it through dlmap there, whose import
                    refuses a device claim the memory contradicts (else D2 is skipped, with the reason).
                    Rows E1-E7 judge the C exchange API (DLPack 1.2/1.3) the type publishes, if any: the table's
                    capsule and prev_api chain, then each function called as a C consumer does, against what
                    __dlpack__ hands out for the same value (tensor, flags, data, deleter runs, the allocator's
                    prototype and error callback, the non-owning fill's references, current_work_stream).
  consumer TARGET   TARGET is module:expression naming a from_dlpack-like function ('numpy:from_dlpack',
                    'torch:from_dlpack'). It is fed crafted producers (unknown versions, dtypes, flags and device
                    types, NULL strides, huge extents, a lying __dlpack_device__, a consumed capsule, tensors that
                    lie about device memory where a device exists, types whose C exchange API table lies: a
                    major it cannot read, NULL functions, a prev_api cycle, a -1 with no exception, a tensor of
                    another major, ...), each in a child interpreter; each row is a clean error, accepted, crashed or
                    skipped (with the reason), with the deleter count.
  matrix LIB...     every producer x consumer pair of the importable libraries among LIB (numpy, torch, dlmap): the
                    same value families (dtypes, bfloat16 and float8 where PyTorch makes them, transposed, negative
                    and zero strides, read-only, 0-d, empty, copy=True/False and device requests), one child
                    interpreter per pair; an N x N summary and each failing row (a crash or hang, different values,
                    copy semantics broken, a writable view of read-only data) with a one-line reproduction.
  tables DIR        write (--check: compare) the tables of dlmap's docs/conformance/ for the peers importable here.

options of producer and consumer:
  --profile NAME    add a column judging by that dlmap profile (%(profiles)s)
  --strict          exit 1 when any row fails in any column
  --timeout S       (producer) seconds one call may take before its row says it hung (default %(timeout)s)
  --json FILE       also write every row as JSON: id, sent, got, skipped, per judge its verdict ("pass", "fail",
                    "skipped") and violations (rule, detail, the rule's text), and a one-line reproduction
  --junit FILE      also write JUnit XML, one testcase per row (a failure names each judge's violations; a skipped
                    row is skipped), for GitHub Actions, GitLab and Jenkins

output: a Markdown table on stdout, one row per case (id, what was sent, what came back, then one verdict column per
judge: "standard", and "<NAME> profile" with --profile), the pass/fail counts, and the rules the failing rows broke.

exit status: 0 the check ran (rows may fail unless --strict), 1 a row failed under --strict, 2 a usage error.
A producer TARGET that cannot be imported or evaluated is one line on stderr and exit 1; with a consumer TARGET that
cannot, every row fails.

examples:
  %(prog)s producer 'numpy:arange(6.0)'
  %(prog)s consumer numpy:from_dlpack --profile array_api
  %(prog)s producer 'torch:ones(3, device="cuda")' --strict

From Python: dlmap.check.producer('numpy:arange(6.0)') and dlmap.check.consumer(numpy.from_dlpack) return the report.
The rules come from the YAML spec shipped in the package (%(spec)s)."""


def _prog():
    """How the user ran it: `dlmap-check` (the console script) or `python3 -m dlmap.check`."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name and name not in ("__main__.py", "-c", "-m") and not name.startswith("python") else \
        "python3 -m dlmap.check"


def main(argv=None):
    prog = _prog()
    try:
        names = ", ".join(rules.profile_names())
    except Exception as error:  # the help still comes when the spec cannot be read; the reason stands in for the list
        names = "the shipped profiles could not be listed: %s" % error
    parser = argparse.ArgumentParser(
        prog=prog, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG % {"prog": prog, "profiles": names, "timeout": CALL_TIMEOUT_S, "spec": rules.spec_dir()})
    sub = parser.add_subparsers(dest="command", required=True, metavar="{producer,consumer,matrix,tables}")
    for name, text in (("producer", "check module:expression's __dlpack__ / __dlpack_device__"),
                       ("consumer", "feed crafted producers to module:expression (a from_dlpack function)")):
        p = sub.add_parser(name, help=text)
        p.add_argument("target", help="module:expression, e.g. 'numpy:arange(6.0)' or 'torch:from_dlpack'")
        p.add_argument("--profile", help="also judge by this dlmap profile: the one the package's module was built "
                       "with or any dlmap ships (%s)" % names)
        p.add_argument("--strict", action="store_true", help="exit 1 when any row fails")
        p.add_argument("--json", metavar="FILE", help="also write every row as JSON (format %s)" % JSON_FORMAT)
        p.add_argument("--junit", metavar="FILE", help="also write JUnit XML: one testcase per row")
        if name == "producer":
            p.add_argument("--timeout", type=float, default=CALL_TIMEOUT_S,
                           help="seconds one call may take before its row says it hung (default %(default)s)")
    m = sub.add_parser("matrix", help="every producer x consumer pair of the libraries named")
    m.add_argument("libraries", nargs="+", help="among %s" % ", ".join(matrix.matrix_families.LIBRARIES))
    m.add_argument("--strict", action="store_true", help="exit 1 when any row fails")
    m.add_argument("--timeout", type=float, default=matrix.TIMEOUT_S,
                   help="seconds one value family may take before its row says it hung (default %(default)s)")
    t = sub.add_parser("tables", help="write the tables of docs/conformance for the peers importable here")
    t.add_argument("directory")
    t.add_argument("--peers", default="numpy,torch,dlmap", help="comma-separated: numpy, torch, dlmap")
    t.add_argument("--check", action="store_true", help="compare with the files in DIRECTORY instead of writing")
    args = parser.parse_args(argv)
    if args.command == "tables":
        return tables.main(args.directory, args.peers.split(","), args.check)
    if args.command == "matrix":
        result = matrix.matrix(args.libraries, timeout=args.timeout)
        sys.stdout.write(result.markdown())
        return 1 if args.strict and result.failures() else 0
    if args.profile is not None:  # an unknown name is one line listing the known ones, before any work
        try:
            rules.Spec().profile_path(args.profile)
        except rules.UnknownProfile as error:
            raise SystemExit("dlmap.check: %s" % error)
    if args.command == "producer":
        try:  # the producer is made in a child interpreter: a wrong name or a failing expression is said, not raised
            report = producer(args.target, profile=args.profile, subject=args.target, timeout=args.timeout)
        except ValueError as error:
            raise SystemExit("dlmap.check: %s" % error)
    else:
        report = consumer(args.target, profile=args.profile)
    sys.stdout.write(report.markdown())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(report.to_json(), out, indent=1)
            out.write("\n")
    if args.junit:
        with open(args.junit, "w", encoding="utf-8") as out:
            out.write(report.junit())
    return 1 if args.strict and not report.passed() else 0


def console():
    """The `dlmap-check` console script (the pip package's entry point)."""
    sys.exit(main(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
