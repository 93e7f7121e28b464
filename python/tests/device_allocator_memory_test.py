# dlmap Python binding tests — device_allocator_memory_test: dlmap.set_device_allocator and its release callable with
# Python's allocator failing (dlmap._call_failing_python_allocation), on the extension over the fake CUDA runtime of
# tests/gpu (//python:fake_gpu/dlmap.so), where dlmap takes device memory from the installed pair.
"""An installation that cannot be made raises MemoryError and leaves the pair installed before in place. A buffer
whose release cannot be called (no memory for its arguments) has no caller to raise to: the MemoryError goes to
sys.unraisablehook, naming the callable, and dlmap's own counts still come back."""

import ctypes
import sys
import unittest

import dlmap
import testing

fake = ctypes.CDLL("libdlmap_fake_gpu.so")
fake.fakeMallocAsync.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_void_p]
fake.fakeFreeAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p]

MAX_ALLOCATIONS = 5000


class Pool:
    """A framework's allocator over the fake's pool, recording what it serves."""

    def __init__(self):
        self.live = {}
        self.releases = 0

    def allocate(self, nbytes, device, stream):
        pointer = ctypes.c_void_p()
        if fake.fakeMallocAsync(ctypes.byref(pointer), nbytes, None if stream == -1 else stream) != 0:
            return 0
        self.live[pointer.value] = nbytes
        return pointer.value

    def release(self, pointer, stream):
        self.releases += 1
        fake.fakeFreeAsync(pointer, None if stream == -1 else stream)
        del self.live[pointer]


class DeviceAllocatorMemoryTest(testing.DlmapTestCase):
    def setUp(self):
        super().setUp()
        self.addCleanup(dlmap.set_device_allocator, None)
        self.unraisable = []
        hook = sys.unraisablehook
        sys.unraisablehook = self.unraisable.append
        self.addCleanup(setattr, sys, "unraisablehook", hook)

    def test_installing_without_memory_keeps_the_pair_before(self):
        first, second = Pool(), Pool()
        refused = 0
        for n in range(1, MAX_ALLOCATIONS + 1):
            dlmap.set_device_allocator(first.allocate, first.release)
            failed, result, exception = dlmap._call_failing_python_allocation(
                n, dlmap.set_device_allocator, second.allocate, second.release)
            expected = first if exception is not None else second
            if exception is not None:
                self.assertIsInstance(exception, MemoryError, "allocation %d" % n)
                refused += 1
            a = dlmap.empty((4,), device=(2, 0))
            self.assertEqual(len(expected.live), 1, "allocation %d: the pair installed served the buffer" % n)
            del a
            self.assertEqual((first.live, second.live), ({}, {}), "allocation %d: the buffer went back" % n)
            if not failed:
                break
        else:
            self.fail("set_device_allocator made over %d allocations" % MAX_ALLOCATIONS)
        self.assertGreater(refused, 0, "an installation was refused")
        self.assertEqual(self.unraisable, [])

    def sweep_release(self, pool, make):
        """Drops what make() returns (holding one buffer of pool's) with each allocation in turn failing."""
        before = testing.stats()
        lost = 0
        for n in range(1, MAX_ALLOCATIONS + 1):
            held = [make()]
            self.assertEqual(len(pool.live), 1)
            live, releases = dict(pool.live), pool.releases
            failed, result, exception = dlmap._call_failing_python_allocation(n, held.clear)
            self.assertIsNone(exception, "allocation %d" % n)
            if pool.releases == releases:
                # release could not be called: reported, naming it; the buffer is the pool's to lose
                self.assertEqual(len(self.unraisable), 1, "allocation %d" % n)
                self.assertIsInstance(self.unraisable[0].exc_value, MemoryError)
                self.assertEqual(self.unraisable[0].object, pool.release)
                self.assertEqual(pool.live, live, "allocation %d: the buffer was not given back" % n)
                lost += 1
            elif self.unraisable:
                # release itself ran out of memory (ctypes' arguments, the dict): reported as anything it raises
                self.assertEqual(len(self.unraisable), 1, "allocation %d" % n)
                self.assertEqual(self.unraisable[0].object, pool.release)
            else:
                self.assertEqual(pool.live, {}, "allocation %d: the buffer went back" % n)
            for pointer in list(pool.live):  # what the pool lost, freed for the next round
                fake.fakeFreeAsync(pointer, None)
                del pool.live[pointer]
            self.unraisable.clear()
            if not failed:
                break
        else:
            self.fail("dropping a buffer made over %d allocations" % MAX_ALLOCATIONS)
        self.assertGreater(lost, 0, "a release could not be called")
        after = testing.stats()
        for key in ("live_allocations", "live_exports"):
            self.assertEqual(after[key], before[key], key)

    def test_release_without_memory_goes_to_the_unraisable_hook(self):
        pool = Pool()
        dlmap.set_device_allocator(pool.allocate, pool.release)
        self.sweep_release(pool, lambda: dlmap.empty((4,), device=(2, 0)))

    def test_release_on_a_stream_without_memory(self):
        # A device copy exported to a consumer's stream goes back on that stream: its handle is an int to make too.
        fake.fake_gpu_stream_create.restype = ctypes.c_void_p
        fake.fake_gpu_stream_destroy.argtypes = [ctypes.c_void_p]
        stream = fake.fake_gpu_stream_create()
        self.addCleanup(fake.fake_gpu_stream_destroy, stream)
        source = dlmap.empty((4,), device=(2, 0))  # the runtime's memory: no allocator installed yet
        pool = Pool()
        dlmap.set_device_allocator(pool.allocate, pool.release)
        self.sweep_release(pool, lambda: source.__dlpack__(stream=stream, copy=True, max_version=(1, 3)))

if __name__ == "__main__":
    unittest.main()
