#!/usr/bin/env python3
# Offline coverage_report_generator for `bazel coverage --combined_report=lcov`.
"""Called once per `bazel coverage` run as

    coverage_report_generator --reports_file=F --output_file=O [other options, ignored]

F lists one per-test lcov file per line (--lcovfile_path=F is accepted too).
Records for the same source file are merged (line and function counts summed)
so the combined report has one record per file. Only the standard library is used.
"""
import sys


def parse_args(argv):
    opts = {}
    for arg in argv:
        key, _, value = arg.partition("=")
        if key in ("--reports_file", "--lcovfile_path"):
            opts["reports"] = value
        elif key == "--output_file":
            opts["output"] = value
    return opts


def merge_lcov(paths):
    """{source: {"DA": {line: n}, "FN": {name: line}, "FNDA": {name: n}}} over all files."""
    sources, cur = {}, None
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                tag, _, val = line.partition(":")
                if tag == "SF":
                    cur = sources.setdefault(val, {"DA": {}, "FN": {}, "FNDA": {}})
                elif cur is None:
                    continue
                elif tag == "DA":
                    num, count = val.split(",")[:2]
                    cur["DA"][int(num)] = cur["DA"].get(int(num), 0) + int(count)
                elif tag == "FN":
                    num, name = val.split(",", 1)
                    cur["FN"][name] = int(num)
                elif tag == "FNDA":
                    count, name = val.split(",", 1)
                    cur["FNDA"][name] = cur["FNDA"].get(name, 0) + int(count)
                elif line == "end_of_record":
                    cur = None
    return sources


def write_lcov(sources, out):
    for src in sorted(sources):
        rec = sources[src]
        out.write("SF:%s\n" % src)
        for name, num in sorted(rec["FN"].items(), key=lambda kv: kv[1]):
            out.write("FN:%d,%s\n" % (num, name))
        for name in sorted(rec["FNDA"], key=lambda n: rec["FN"].get(n, 0)):
            out.write("FNDA:%d,%s\n" % (rec["FNDA"][name], name))
        out.write("FNF:%d\nFNH:%d\n" % (len(rec["FN"]), sum(1 for c in rec["FNDA"].values() if c)))
        for num in sorted(rec["DA"]):
            out.write("DA:%d,%d\n" % (num, rec["DA"][num]))
        out.write("LF:%d\nLH:%d\n" % (len(rec["DA"]), sum(1 for c in rec["DA"].values() if c)))
        out.write("end_of_record\n")


def main(argv):
    opts = parse_args(argv)
    if "reports" not in opts or "output" not in opts:
        sys.stderr.write("coverage_report_generator: need --reports_file and --output_file\n")
        return 2
    with open(opts["reports"]) as f:
        paths = [line.strip() for line in f if line.strip()]
    with open(opts["output"], "w") as out:
        write_lcov(merge_lcov(paths), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
