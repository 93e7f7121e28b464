# dlmap Python binding tests — memory: 100 000 round trips through NumPy, PyTorch, the C exchange API and versioned
# capsules with flat RSS and every dlmap allocation and export returned, and round trips from several threads at once.
import gc
import sys
import threading
import time
import unittest

import dlmap
import testing
from testing import DlmapTestCase

np = testing.require("numpy", "python3-numpy")
torch = testing.require("torch", "python3-torch")

ROUND_TRIPS = 100_000
WARM_UP = 5_000
RSS_LIMIT = 2 * 1024 * 1024  # bytes of growth allowed after warm-up


class Wrap:
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def numpy_round_trip(n):
    a = dlmap.from_dlpack(n)  # NumPy's legacy capsule → a dlmap view
    m = np.from_dlpack(a)  # dlmap's legacy capsule → a NumPy view
    return m.ctypes.data


def torch_round_trip(t):
    a = dlmap.from_dlpack(t)
    t2 = torch.utils.dlpack.from_dlpack(a)
    return t2.data_ptr()


def exchange_api_round_trip(a):
    return dlmap.from_dlpack(a).data_ptr  # through dlmap.Array's C table


def versioned_capsule_round_trip(a):
    return dlmap.from_dlpack(Wrap(a.__dlpack__(max_version=(1, 3)))).data_ptr


def allocation_round_trip(_):
    a = dlmap.empty((4, 4), "float64")
    b = dlmap.from_dlpack(a)
    return b.data_ptr - a.data_ptr  # 0


class RoundTripTest(DlmapTestCase):
    def run_round_trips(self, name, fn, arg, expected, allocations_per_trip):
        for _ in range(WARM_UP):
            fn(arg)
        gc.collect()
        before_stats = dlmap._stats()
        rss_before = testing.rss_bytes()
        start = time.perf_counter()
        for i in range(ROUND_TRIPS):
            result = fn(arg)
            if i % 10_000 == 0:
                self.assertEqual(result, expected, f"{name}: zero-copy")
        elapsed = time.perf_counter() - start
        gc.collect()
        rss_after = testing.rss_bytes()
        after_stats = dlmap._stats()
        growth = rss_after - rss_before
        print(f"\n{name}: {ROUND_TRIPS} round trips in {elapsed:.2f} s ({elapsed / ROUND_TRIPS * 1e6:.1f} us each); "
              f"RSS {rss_before / 2**20:.1f} MiB -> {rss_after / 2**20:.1f} MiB (growth {growth / 1024:+.0f} KiB); "
              f"dlmap allocations {after_stats['total_allocations'] - before_stats['total_allocations']}, "
              f"live {after_stats['live_allocations']}, live exports {after_stats['live_exports']}", file=sys.stderr)
        self.assertEqual(after_stats["live_allocations"], before_stats["live_allocations"], name)
        self.assertEqual(after_stats["live_exports"], 0, name)
        self.assertEqual(after_stats["total_allocations"] - before_stats["total_allocations"],
                         ROUND_TRIPS * allocations_per_trip, f"{name}: dlmap allocations per round trip")
        if testing.SANITIZED:
            print(f"{name}: RSS bound not checked under a sanitizer (its quarantine holds freed memory)",
                  file=sys.stderr)
        else:
            self.assertLess(growth, RSS_LIMIT, f"{name}: RSS grew by {growth} bytes")

    def test_numpy(self):
        n = np.arange(64, dtype=np.float32).reshape(8, 8)
        self.run_round_trips("numpy -> dlmap -> numpy", numpy_round_trip, n, n.ctypes.data, 1)

    def test_torch(self):
        t = torch.arange(64, dtype=torch.float32).reshape(8, 8)
        self.run_round_trips("torch -> dlmap -> torch", torch_round_trip, t, t.data_ptr(), 1)

    def test_exchange_api(self):
        a = dlmap.empty((8, 8))
        self.run_round_trips("dlmap -> C exchange API -> dlmap", exchange_api_round_trip, a, a.data_ptr, 1)

    def test_versioned_capsule(self):
        a = dlmap.empty((8, 8))
        self.run_round_trips("dlmap -> dltensor_versioned -> dlmap", versioned_capsule_round_trip, a, a.data_ptr, 1)

    def test_allocation(self):
        self.run_round_trips("dlmap.empty + exchange", allocation_round_trip, None, 0, 2)


class ThreadsTest(DlmapTestCase):
    def test_round_trips_from_threads(self):
        n = np.arange(16, dtype=np.int32)
        t = torch.arange(16, dtype=torch.int32)
        errors = []

        def work(seed):
            try:
                for i in range(5_000):
                    a = dlmap.empty(8, "int32")
                    assert numpy_round_trip(n) == n.ctypes.data
                    assert torch_round_trip(t) == t.data_ptr()
                    assert exchange_api_round_trip(a) == a.data_ptr
                    if i % 50 == seed % 50:  # deleters from native threads while others run
                        dlmap._call_deleter_on_thread(a.__dlpack__(max_version=(1, 3)))
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
