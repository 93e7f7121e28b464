# dlmap Python binding tests — Python's own allocator failing (dlmap._call_failing_python_allocation) where the module
# builds something once and keeps it: its module init (PyInit, run again after each failure), the keyword-name tuple
# of a versioned __dlpack__ call (built on the first call passing those keywords), and the tuple dlmap asks a device
# with. Every failing call must raise MemoryError and lose nothing; the first call that no failure reaches must work.
# A sweep fails each allocation in turn (n = 1, 2, ...) until a call makes fewer than n. No call is made before its
# sweep: that would build what the sweep is here to see built.
"""usage: python_allocation_failure_first_use_test.py PYTORCH_DLMAP_SO (the module under PyTorch's profile, whose
init also builds its DLDeviceType enum; the module under test is the one run_python.sh puts on sys.path)"""
import ctypes
import gc
import importlib.util
import sys
import unittest

import dlmap

MAX_ALLOCATIONS = 20000


class Producer:
    """A producer written in Python over a dlmap Array (no exchange table: from_dlpack asks __dlpack__)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **keywords):
        return self.array.__dlpack__(**keywords)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def from_memory_error(exception):
    """MemoryError, or an exception Python's own library code raised for one (its __cause__ or __context__ chain holds
    it: Python 3.14's enum turns a member's failed allocation into "TypeError: _value_ not set in __new__")."""
    seen = set()
    while exception is not None and id(exception) not in seen:
        if isinstance(exception, MemoryError):
            return True
        seen.add(id(exception))
        exception = exception.__cause__ or exception.__context__
    return False


def init_failed_cleanly(exception):
    """Module init under a failing allocation raises, whatever the exception: Python's enum, which makes DLDeviceType,
    may turn the failure into another one (3.14: a TypeError caused by it, or a member left out, which init then
    reads: AttributeError). The module is never returned half made (the sweep goes on to the first init no failure
    reached, and checks that one)."""
    return isinstance(exception, Exception)


class PythonAllocationFailureFirstUseTest(unittest.TestCase):
    def sweep(self, call, *args, expected=from_memory_error, **kwargs):
        """The result of the first call no failure reached, after every earlier one raised MemoryError (what
        `expected` takes) and left dlmap's live allocations and exports where they were."""
        for n in range(1, MAX_ALLOCATIONS + 1):
            gc.collect()
            before = dlmap._stats()
            failed, result, exception = dlmap._call_failing_python_allocation(n, call, *args, **kwargs)
            if not failed:
                self.assertIsNone(exception, "no allocation failed, yet: %r" % exception)
                return result
            if exception is not None:
                self.assertTrue(expected(exception), "allocation %d: %r" % (n, exception))
            del result, exception
            gc.collect()
            after = dlmap._stats()
            for key in ("live_allocations", "live_exports"):
                self.assertEqual(after[key], before[key], "%s after failing allocation %d" % (key, n))
        self.fail("%r made over %d allocations" % (call, MAX_ALLOCATIONS))

    def check_module(self, module):
        self.assertIsNot(module, dlmap)
        self.assertEqual(module.__name__, "dlmap")
        self.assertEqual(module.DLPACK_VERSION, dlmap.DLPACK_VERSION)
        self.assertEqual(int(module.DLDeviceType.kDLCPU), 1)
        self.assertEqual(module.from_dlpack(module.empty((2, 3), dtype="float32")).shape, (2, 3))

    def test_module_init(self):
        # Another build of the module (PyTorch's profile), loaded from its file: its PyInit runs under each failure.
        spec = importlib.util.spec_from_file_location("dlmap", sys.argv[1])
        module = self.sweep(importlib.util.module_from_spec, spec, expected=init_failed_cleanly)
        self.check_module(module)
        # What PyInit makes once and keeps (the Array type, interned names, the exception classes, DLDeviceType) is
        # made under the first sweep, which skips the allocations that followed each thing the moment it was made (the
        # next call no longer makes it). PyInit called again, directly (the import system keeps the module it made),
        # meets every allocation it makes each time in turn.
        init = ctypes.PyDLL(sys.argv[1]).PyInit_dlmap
        init.restype = ctypes.py_object
        again = self.sweep(init, expected=init_failed_cleanly)
        self.check_module(again)
        self.assertIs(again.DLDeviceType, module.DLDeviceType)

    def test_versioned_call_with_device_and_copy(self):
        # from_dlpack's first call passing dl_device and copy: the keyword names, and the device as a tuple.
        producer = Producer(dlmap.empty((2, 3), dtype="float32"))
        copy = self.sweep(dlmap.from_dlpack, producer, device="cpu", copy=True)
        self.assertEqual(copy.shape, (2, 3))
        self.assertNotEqual(copy.data_ptr, producer.array.data_ptr)

    def test_shape_as_a_list(self):
        # A list shape is read from a tuple copy (its items' __index__ could change it).
        self.assertEqual(self.sweep(dlmap.empty, [2, 3], dtype="float32").shape, (2, 3))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
