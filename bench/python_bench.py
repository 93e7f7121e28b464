# dlmap benchmarks — Python per-call exchange (issue 15's rows): dlmap's side of every call next to the same call with NumPy's (or PyTorch's) own arrays, timed side by side in one run.
"""usage: python_bench.py [--out FILE.json] [--repeat R] [--min-time S] [--callgrind N] [--no-torch]

Times each call with timeit: R rounds, each round timing every case once (an auto-sized batch), so that a pair of
cases compared in a ratio ran interleaved, under the same load; reports the best round (the issue's "min of
repeats") and the median, in ns per call, and writes JSON. Shape (2, 3, 4, 5) float32, as issue 15 measured.
--callgrind N instead runs every case N times and calls os.sched_yield() after each batch: run under
`valgrind --tool=callgrind --dump-before=sched_yield` that gives one dump per batch (the dumps before the first
batch are start-up and warm-up), and the case "python/empty" measures the loop's own instructions. PyTorch's rows are left out
with --no-torch (and where it is not installed).
"""
import argparse
import json
import os
import statistics
import sys
import timeit

import numpy as np

import dlmap

SHAPE = (2, 3, 4, 5)


def cases(with_torch):
    """[(name, fn)]: every exchange must really happen (a view of the same memory), or it measures nothing."""
    d = dlmap.empty(SHAPE, "float32")
    n = np.zeros(SHAPE, np.float32)
    d_ptr = np.asarray(memoryview(d)).ctypes.data
    assert np.from_dlpack(d).ctypes.data == d_ptr, "np.from_dlpack(dlmap.Array) copied"
    assert np.from_dlpack(dlmap.from_dlpack(n)).ctypes.data == n.ctypes.data, "dlmap.from_dlpack(ndarray) copied"
    assert dlmap.from_dlpack(d).data_ptr == d_ptr, "dlmap.from_dlpack(dlmap.Array) copied"
    out = [
        ("python/Array.__dlpack__()", lambda: d.__dlpack__()),
        ("python/ndarray.__dlpack__()", lambda: n.__dlpack__()),
        ("python/Array.__dlpack__(max_version=(1, 3))", lambda: d.__dlpack__(max_version=(1, 3))),
        ("python/np.from_dlpack(dlmap.Array)", lambda: np.from_dlpack(d)),
        ("python/np.from_dlpack(ndarray)", lambda: np.from_dlpack(n)),
        ("python/dlmap.from_dlpack(ndarray)", lambda: dlmap.from_dlpack(n)),
        # dlmap.Array's type publishes the DLPack 1.3 C exchange API: this import never calls __dlpack__.
        ("python/dlmap.from_dlpack(dlmap.Array)", lambda: dlmap.from_dlpack(d)),
    ]
    if with_torch:
        import torch

        t = torch.zeros(SHAPE)
        assert dlmap.from_dlpack(t).data_ptr == t.data_ptr(), "dlmap.from_dlpack(torch.Tensor) copied"
        assert torch.from_dlpack(d).data_ptr() == d_ptr, "torch.from_dlpack(dlmap.Array) copied"
        out += [
            ("python/dlmap.from_dlpack(torch.Tensor)", lambda: dlmap.from_dlpack(t)),
            ("python/np.from_dlpack(torch.Tensor)", lambda: np.from_dlpack(t)),
            ("python/torch.from_dlpack(dlmap.Array)", lambda: torch.from_dlpack(d)),
            ("python/torch.from_dlpack(ndarray)", lambda: torch.from_dlpack(n)),
            # What the protocol has every consumer but NumPy 1.24 call first (the profile of the torch row).
            ("python/torch.Tensor.__dlpack_device__()", lambda: t.__dlpack_device__()),
            ("python/torch.Tensor.__dlpack__(stream=None)", lambda: t.__dlpack__(stream=None)),
        ]
    return out


def time_cases(all_cases, repeat, min_time):
    timers = []
    for name, fn in all_cases:
        timer = timeit.Timer(fn)
        number, _ = timer.autorange()  # a batch of at least 0.2 s
        timers.append((name, timer, max(1, int(number * min_time / 0.2))))
    per_call = {name: [] for name, _, _ in timers}
    for _ in range(repeat):  # interleaved: round r times every case once
        for name, timer, number in timers:
            per_call[name].append(timer.timeit(number=number) / number * 1e9)
    return [{"name": name, "median_ns": statistics.median(per_call[name]), "min_ns": min(per_call[name]),
             "rounds_ns": per_call[name], "calls_per_repeat": number, "repeats": repeat} for name, _, number in timers]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="write the JSON results here (default: stdout only)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per repeat of each case (about)")
    parser.add_argument("--callgrind", type=int, default=0, metavar="N")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    with_torch = not args.no_torch
    if with_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            with_torch = False
    all_cases = [("python/empty", lambda: None)] + cases(with_torch)

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
        "torch": sys.modules["torch"].__version__ if "torch" in sys.modules else None,
        "profile": dlmap.profile(),
        "module": dlmap.__file__,
        "shape": list(SHAPE),
        "benchmarks": time_cases(all_cases, args.repeat, args.min_time),
    }
    for r in results["benchmarks"]:
        print("%-48s %9.1f ns/call (median %.1f)" % (r["name"], r["min_ns"], r["median_ns"]), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
