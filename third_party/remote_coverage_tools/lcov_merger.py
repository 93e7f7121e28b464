#!/usr/bin/env python3
# Offline lcov_merger for `bazel coverage`: turns gcov JSON (gcc >= 9) into lcov.
"""Called by Bazel's collect_coverage.sh inside each test action as

    lcov_merger --coverage_dir=D --output_file=O [--filter_sources=REGEX ...]
                [--source_file_manifest=M] [other options, ignored]

collect_cc_coverage.sh leaves one *.gcov.json.gz per .gcda under D. Counts are
summed per source file; files matching a filter are dropped, and so are files
absent from a non-empty manifest, except generated ones (bazel-out/...; Bazel
lists only the instrumented targets' checked-in sources there, e.g. re2c output
would be lost otherwise). Non-empty lcov *.dat files under D (e.g. from llvm-cov)
are appended as they are. Only the standard library is used.
"""
import gzip
import json
import os
import re
import sys


def parse_args(argv):
    opts = {"filters": []}
    for arg in argv:
        key, _, value = arg.partition("=")
        if key == "--coverage_dir":
            opts["coverage_dir"] = value
        elif key == "--output_file":
            opts["output_file"] = value
        elif key == "--filter_sources":
            opts["filters"].append(re.compile(value))
        elif key == "--source_file_manifest":
            opts["manifest"] = value
    return opts


def read_manifest(path):
    """Source files listed in Bazel's coverage manifest (empty set: keep all)."""
    if not path or not os.path.isfile(path):
        return set()
    with open(path) as f:
        return {line.strip() for line in f if line.strip() and not line.strip().endswith(".gcno")}


def collect(coverage_dir, output_file):
    """(gcov json files, lcov dat files) found under the coverage dir."""
    jsons, dats = [], []
    out = os.path.abspath(output_file)
    for root, _, files in os.walk(coverage_dir):
        for name in sorted(files):
            path = os.path.join(root, name)
            if name.endswith(".gcov.json.gz"):
                jsons.append(path)
            elif name.endswith(".dat") and os.path.abspath(path) != out and os.path.getsize(path):
                dats.append(path)
    return jsons, dats


def merge_gcov_json(paths):
    """{source: ({line: count}, {fn name: [start line, count]})} summed over all files."""
    sources = {}
    for path in paths:
        with gzip.open(path, "rt") as f:
            data = json.load(f)
        for entry in data.get("files", []):
            lines, funcs = sources.setdefault(entry["file"], ({}, {}))
            for fn in entry.get("functions", []):
                rec = funcs.setdefault(fn["name"], [fn["start_line"], 0])
                rec[1] += fn["execution_count"]
            for ln in entry.get("lines", []):
                lines[ln["line_number"]] = lines.get(ln["line_number"], 0) + ln["count"]
    return sources


def keep(source, filters, manifest):
    if any(f.match(source) for f in filters):
        return False
    return not manifest or source in manifest or source.startswith("bazel-out/")


def lcov_record(source, lines, funcs):
    out = ["SF:" + source]
    for name, (start, _) in sorted(funcs.items(), key=lambda kv: kv[1][0]):
        out.append("FN:%d,%s" % (start, name))
    for name, (_, count) in sorted(funcs.items(), key=lambda kv: kv[1][0]):
        out.append("FNDA:%d,%s" % (count, name))
    out.append("FNF:%d" % len(funcs))
    out.append("FNH:%d" % sum(1 for _, c in funcs.values() if c))
    for line in sorted(lines):
        out.append("DA:%d,%d" % (line, lines[line]))
    out.append("LF:%d" % len(lines))
    out.append("LH:%d" % sum(1 for c in lines.values() if c))
    out.append("end_of_record")
    return "\n".join(out) + "\n"


def main(argv):
    opts = parse_args(argv)
    if "coverage_dir" not in opts or "output_file" not in opts:
        sys.stderr.write("lcov_merger: need --coverage_dir and --output_file\n")
        return 2
    manifest = read_manifest(opts.get("manifest"))
    jsons, dats = collect(opts["coverage_dir"], opts["output_file"])
    sources = merge_gcov_json(jsons)
    with open(opts["output_file"], "w") as out:
        for source in sorted(sources):
            if keep(source, opts["filters"], manifest):
                out.write(lcov_record(source, *sources[source]))
        for dat in dats:
            with open(dat) as f:
                out.write(f.read().rstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
