# dlmap benchmarks — Python per-call exchange: np.from_dlpack(dlmap_array) and dlmap.from_dlpack(np_array) next to NumPy's own np.from_dlpack(np_array).
"""usage: python_bench.py [--out FILE.json] [--repeat R] [--min-time S] [--callgrind N]

Times each call with timeit (R repeats of an auto-sized batch; the median and the best repeat, in ns per call)
and writes JSON. --callgrind N instead runs every case N times and calls os.sched_yield() after each batch:
run under `valgrind --tool=callgrind --dump-before=sched_yield` that gives one dump per batch (the first dump
is start-up and warm-up), and the case "python/empty" measures the loop's own instructions.
"""
import argparse
import json
import os
import statistics
import sys
import timeit

import numpy as np

import dlmap

SHAPES = {1: (1024,), 4: (8, 4, 4, 8)}


def cases():
    out = []
    for ndim, shape in SHAPES.items():
        d = dlmap.empty(shape, "float32")
        n = np.zeros(shape, np.float32)
        # Each path must really exchange (a view, same memory), or it measures nothing.
        v = np.from_dlpack(d)
        assert v.shape == shape and v.ctypes.data == np.asarray(memoryview(d)).ctypes.data, "np.from_dlpack copied"
        w = dlmap.from_dlpack(n)
        assert tuple(w.shape) == shape and np.from_dlpack(w).ctypes.data == n.ctypes.data, "dlmap.from_dlpack copied"
        assert np.from_dlpack(n).ctypes.data == n.ctypes.data
        suffix = "/ndim:%d" % ndim
        out.append(("python/np.from_dlpack(dlmap)" + suffix, lambda d=d: np.from_dlpack(d)))
        out.append(("python/dlmap.from_dlpack(np)" + suffix, lambda n=n: dlmap.from_dlpack(n)))
        out.append(("python/np.from_dlpack(np)" + suffix, lambda n=n: np.from_dlpack(n)))
    return out


def time_case(fn, repeat, min_time):
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()  # a batch of at least 0.2 s
    number = max(1, int(number * min_time / 0.2))
    per_call = [t / number * 1e9 for t in timer.repeat(repeat=repeat, number=number)]
    return {"median_ns": statistics.median(per_call), "min_ns": min(per_call), "calls_per_repeat": number,
            "repeats": repeat}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="write the JSON results here (default: stdout only)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per repeat (about)")
    parser.add_argument("--callgrind", type=int, default=0, metavar="N")
    args = parser.parse_args()
    all_cases = [("python/empty", lambda: None)] + cases()

    if args.callgrind:
        for _, fn in all_cases:  # warm-up: caches, lazily created objects
            for _ in range(50):
                fn()
        os.sched_yield()  # dump 1: start-up and warm-up
        for name, fn in all_cases:
            for _ in range(args.callgrind):
                fn()
            os.sched_yield()
        print(json.dumps({"calls": args.callgrind, "cases": [name for name, _ in all_cases]}))
        return

    results = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "numpy": np.__version__,
        "benchmarks": [],
    }
    for name, fn in all_cases:
        r = time_case(fn, args.repeat, args.min_time)
        r["name"] = name
        results["benchmarks"].append(r)
        print("%-44s %9.1f ns/call (best %.1f)" % (name, r["median_ns"], r["min_ns"]), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
