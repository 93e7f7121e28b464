"""dlmap's layout copies next to PyTorch's on a CUDA device (issue 47), run by gpu/check.sh where PyTorch has CUDA.

For a transposed view, rows of a wider buffer, every other element and a broadcast, at 64 MiB, 256 MiB and 1 GiB of
float32: dlmap.from_dlpack(view, copy=True) (dlmap's strided-copy kernel, plus the cudaMalloc and cudaFree of its
destination), PyTorch's view.contiguous() (its own kernel, from its caching allocator) and a device-to-device copy of
the same bytes between compact tensors (cudaMemcpyAsync, preallocated). Then device to host: a transposed tensor
against the compact one, dlmap.from_dlpack(view, device=(1, 0), copy=True) next to PyTorch's x.t().cpu() and x.cpu().
Best of 5, each synchronised. Prints INFO rows, one per case; exits 0 (3 when nothing could be measured: no PyTorch
with CUDA). Figures, not verdicts: tests never assert on wall time.

  python3 bench/gpu_layout_bench.py        # with dlmap's module on PYTHONPATH (gpu/check.sh sets it)
"""
import sys
import time

REPEATS = 5
SIZES_MIB = (64, 256, 1024)


def best_ms(torch, fn):
    best = float("inf")
    for _ in range(REPEATS):
        torch.cuda.synchronize()
        start = time.perf_counter()
        result = fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) * 1e3)
        del result
    return best


def layouts(torch, mib):
    """(name, strided view, its compact twin of the same bytes) for one size."""
    count = mib << 18  # float32 elements
    n = 1
    while (2 * n) * (2 * n) <= count:
        n *= 2
    square = torch.empty(n, n, device="cuda")
    wide = torch.empty(n, n + 16, device="cuda")
    line = torch.empty(2 * n * n, device="cuda")
    row = torch.empty(n, device="cuda")
    return [("transposed", square.t(), square), ("rows of a wider buffer", wide[:, :n], square),
            ("step 2", line[::2], square.reshape(-1)), ("broadcast rows", row.expand(n, n), square)]


def main():
    try:
        import torch
    except ImportError as error:
        print("SKIP  layout copies vs PyTorch: no PyTorch here (%s)" % error)
        return 3
    if not torch.cuda.is_available():
        print("SKIP  layout copies vs PyTorch: PyTorch %s sees no CUDA device" % torch.__version__)
        return 3
    import dlmap
    print("INFO  layout copies vs PyTorch %s on %s, float32, best of %d, ms (GB/s of destination bytes)"
          % (torch.__version__, torch.cuda.get_device_name(0), REPEATS))
    print("INFO  %-24s %6s %16s %16s %16s %8s %8s" % ("layout", "MiB", "dlmap copy=True", "torch contiguous",
                                                      "D2D same bytes", "/ torch", "/ D2D"))
    for mib in SIZES_MIB:
        for name, view, compact in layouts(torch, mib):
            target = torch.empty_like(compact)
            ms = {"dlmap": best_ms(torch, lambda: dlmap.from_dlpack(view, copy=True)),
                  "torch": best_ms(torch, view.contiguous),
                  "d2d": best_ms(torch, lambda: target.copy_(compact))}
            rate = {k: (mib << 20) / (v * 1e-3) / 1e9 for k, v in ms.items()}
            print("INFO  %-24s %6d %8.2f (%5.0f) %8.2f (%5.0f) %8.2f (%5.0f) %8.2f %8.2f"
                  % (name, mib, ms["dlmap"], rate["dlmap"], ms["torch"], rate["torch"], ms["d2d"], rate["d2d"],
                     ms["torch"] / ms["dlmap"], ms["d2d"] / ms["dlmap"]))
            del view, compact, target
        torch.cuda.empty_cache()
    x = torch.empty(8192, 8192, device="cuda")  # 256 MiB
    d2h = {"dlmap transposed": best_ms(torch, lambda: dlmap.from_dlpack(x.t(), device=(1, 0), copy=True)),
           "dlmap compact": best_ms(torch, lambda: dlmap.from_dlpack(x, device=(1, 0), copy=True)),
           "torch transposed": best_ms(torch, lambda: x.t().cpu()),
           "torch compact": best_ms(torch, x.cpu)}
    print("INFO  device -> host 256 MiB, ms: " + ", ".join("%s %.2f" % item for item in d2h.items()) +
          "; dlmap transposed / compact %.2f (target 0.9)" % (d2h["dlmap compact"] / d2h["dlmap transposed"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
