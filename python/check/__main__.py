# dlmap conformance checker — the command line: `python3 -m dlmap.check producer|consumer module:expression` prints
# the check's Markdown table; `tables DIR` writes (or with --check compares) the committed tables of docs/conformance.
import argparse
import sys

from . import consumer, producer, rules, tables
from .producer import CALL_TIMEOUT_S


def main(argv):
    parser = argparse.ArgumentParser(prog="python3 -m dlmap.check", description="DLPack conformance checks.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("producer", "check module:expression's __dlpack__ / __dlpack_device__"),
                       ("consumer", "feed crafted producers to module:expression (a from_dlpack function)")):
        p = sub.add_parser(name, help=text)
        p.add_argument("target", help="module:expression, e.g. 'numpy:arange(6.0)' or 'torch:from_dlpack'")
        p.add_argument("--profile", help="also judge by this dlmap profile: the one the package's module was built "
                       "with or any dlmap ships (%s)" % ", ".join(rules.profile_names()))
        p.add_argument("--strict", action="store_true", help="exit 1 when any row fails")
        if name == "producer":
            p.add_argument("--timeout", type=float, default=CALL_TIMEOUT_S,
                           help="seconds one call may take before its row says it hung (default %(default)s)")
    t = sub.add_parser("tables", help="write the tables of docs/conformance for the peers importable here")
    t.add_argument("directory")
    t.add_argument("--peers", default="numpy,torch,dlmap", help="comma-separated: numpy, torch, dlmap")
    t.add_argument("--check", action="store_true", help="compare with the files in DIRECTORY instead of writing")
    args = parser.parse_args(argv)
    if args.command == "tables":
        return tables.main(args.directory, args.peers.split(","), args.check)
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
    return 1 if args.strict and not report.passed() else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
