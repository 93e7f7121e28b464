"""Python's own allocator failing under each of the binding's calls (issue 65): for every n, the call's n-th PyMem or
PyObject allocation fails (dlmap._call_failing_python_allocation), until a call makes fewer than n. Every such call
must return its usual result or raise MemoryError (or, for a call that fails anyway, its own error) and lose
nothing: dlmap's live allocations and exports come back to where they were."""
import gc
import operator
import unittest

import dlmap
from testing import REFCOUNTS, DlmapTestCase

# Allocation counts a call may make before the sweep calls it a hang (dlmap's calls make a few dozen).
MAX_ALLOCATIONS = 5000


class PythonAllocationFailureTest(DlmapTestCase):
    def sweep(self, call, *args, **kwargs):
        """Fails each allocation of call(*args, **kwargs) in turn; returns how many there were. The call's error
        without a failure (if any) is the one other exception allowed."""
        allowed = (MemoryError,)
        for _ in range(2):  # twice, as an Array keeps its export plan from its second export on
            try:
                call(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - the call's own error, which a failing allocation may give too
                allowed = (MemoryError, type(error))
        for n in range(1, MAX_ALLOCATIONS + 1):
            gc.collect()
            before = dlmap._stats()
            failed, result, exception = dlmap._call_failing_python_allocation(n, call, *args, **kwargs)
            if exception is not None:
                self.assertIsInstance(exception, allowed, "allocation %d" % n)
            else:
                self.assertEqual(allowed, (MemoryError,), "allocation %d: returned %r" % (n, result))
            del result
            gc.collect()
            after = dlmap._stats()
            for key in ("live_allocations", "live_exports"):
                self.assertEqual(after[key], before[key], "%s after failing allocation %d of %r: %r"
                                 % (key, n, call, exception))
            del exception
            if not failed:
                break
        else:
            self.fail("%r made over %d allocations" % (call, MAX_ALLOCATIONS))
        return n

    def setUp(self):
        super().setUp()
        self.array = dlmap.empty((2, 3), dtype="float32")

    def tearDown(self):
        del self.array
        super().tearDown()

    def test_empty(self):
        # A new Array's tuple arguments and its object: if no allocation failed, the hook would test nothing.
        self.assertGreater(self.sweep(dlmap.empty, (2, 3), dtype="float32"), 1)

    def test_legacy_export(self):
        self.sweep(self.array.__dlpack__)

    def test_versioned_export_and_copy(self):
        self.sweep(self.array.__dlpack__, max_version=(1, 0))
        self.sweep(self.array.__dlpack__, max_version=(1, 0), copy=True)

    def test_keywords_through_vectorcall(self):
        # Called from Python code, keywords come as vectorcall's names, which the binding turns into a dict.
        array = self.array
        self.sweep(lambda: array.__dlpack__(max_version=(1, 0), copy=True))
        self.sweep(lambda: dlmap.from_dlpack(array, copy=True))

    def test_max_version_list(self):
        self.sweep(self.array.__dlpack__, max_version=[1, 0])  # read from a tuple copy of the list

    def test_device(self):
        self.sweep(self.array.__dlpack_device__)

    def test_from_dlpack(self):
        self.sweep(dlmap.from_dlpack, self.array)
        self.sweep(dlmap.from_dlpack, self.array, copy=True)

    def test_from_numpy(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("NumPy is not installed")
        REFCOUNTS.check_peer("numpy")  # a NumPy built for the release interpreter: its own drops would count
        self.sweep(dlmap.from_dlpack, numpy.arange(6.0).reshape(2, 3))
        self.sweep(dlmap.from_dlpack, numpy.arange(6.0).reshape(2, 3)[:, ::2], copy=True)

    def test_from_a_capsule_producer(self):
        array = self.array

        class LegacyOnly:
            def __dlpack__(self, stream=None):
                return array.__dlpack__()

            def __dlpack_device__(self):
                return array.__dlpack_device__()

        self.sweep(dlmap.from_dlpack, LegacyOnly())

    def test_attributes(self):
        for name in ("shape", "strides", "dtype", "device"):
            with self.subTest(name=name):
                if hasattr(self.array, name):
                    self.sweep(operator.attrgetter(name), self.array)

    def test_buffer(self):
        self.sweep(memoryview, self.array)

    def test_conformance_judges(self):
        # dlmap.check's judges build lists of (rule, detail) and texts: a bad tensor has several, a stamp out of range
        # and an unknown device type one each.
        self.sweep(dlmap._check_rules)
        self.sweep(dlmap._judge_tensor, 9999, (99, 7, 3), 2, True, 1 << 40, (1, 0))
        self.sweep(dlmap._judge_version, (99, 0))
        self.sweep(dlmap._judge_device_type, 9999, (1, 0))

    def test_errors(self):
        # The catalogue's errors: their message, class and attributes are Python objects made on the way out.
        self.sweep(dlmap.empty, (-1,))
        self.sweep(self.array.__dlpack__, max_version=(0, 1))
        self.sweep(dlmap.from_dlpack, object())


class HookTest(DlmapTestCase):
    """The hook itself: its arguments, reallocations, and no second failing call inside the first."""

    def test_arguments(self):
        hook = dlmap._call_failing_python_allocation
        with self.assertRaisesRegex(TypeError, r"_call_failing_python_allocation\(n, callable"):
            hook(1)
        with self.assertRaises(TypeError):
            hook("1", len, ())
        with self.assertRaisesRegex(ValueError, "n counts from 1"):
            hook(0, len, ())
        with self.assertRaisesRegex(ValueError, "n counts from 1"):
            hook(-1, len, ())  # -1 read without an error: still no allocation to fail
        self.assertEqual(hook(1000, len, (1, 2)), (False, 2, None))

    def test_a_call_inside_the_failing_call_is_refused(self):
        failed, result, exception = dlmap._call_failing_python_allocation(
            1000, dlmap._call_failing_python_allocation, 1, len, ())
        self.assertFalse(failed)
        self.assertIsNone(result)
        self.assertIsInstance(exception, RuntimeError)
        self.assertIn("already failing an allocation", str(exception))

    def test_reallocations_fail_too(self):
        def grow():
            items = []
            for i in range(200):  # small ints are cached: the allocations are the list's, grown by PyMem_Realloc
                items.append(i)
            return len(items)

        outcomes = set()
        for n in range(1, MAX_ALLOCATIONS + 1):
            failed, result, exception = dlmap._call_failing_python_allocation(n, grow)
            outcomes.add(type(exception).__name__ if exception is not None else result)
            if not failed:
                break
        self.assertEqual(outcomes, {"MemoryError", 200})


if __name__ == "__main__":
    unittest.main()
