"""A dlmap.Array made with Python's allocator failing (dlmap._call_failing_python_allocation): the object itself (its
free list emptied first, so that it comes from PyObject_Malloc) and, past 8 dimensions, its buffer shape and strides
(PyMem_Malloc; up to 8 are kept inline). For every n, failing the n-th allocation of an import gives the array or
MemoryError, the producer's tensor is released once, and nothing of dlmap's stays live. Its shape, strides and repr,
with extents past CPython's cached small ints (each an int to allocate), give their value or MemoryError."""
import gc
import operator
import unittest

import dlmap
from testing import DlmapTestCase

MAX_ALLOCATIONS = 5000
FREE_LIST = 8  # DLMAP_PY_ARRAY_FREELIST (python/array.c): dead arrays kept for the next


class ArrayAllocationFailureTest(DlmapTestCase):
    def sweep(self, call, *args):
        outcomes = set()
        for n in range(1, MAX_ALLOCATIONS + 1):
            gc.collect()
            before = dlmap._stats()
            drain = [dlmap.empty(()) for _ in range(FREE_LIST)]  # the next array's object is newly allocated
            failed, result, exception = dlmap._call_failing_python_allocation(n, call, *args)
            if exception is not None:
                self.assertIsInstance(exception, MemoryError, "allocation %d" % n)
                outcomes.add("MemoryError")
            else:
                self.assertEqual(result.shape, (1,) * 9, "allocation %d" % n)
                self.assertEqual(memoryview(result).shape, (1,) * 9, "allocation %d" % n)
                outcomes.add("Array")
            del result, exception, drain
            gc.collect()
            after = dlmap._stats()
            for key in ("live_allocations", "live_exports"):
                self.assertEqual(after[key], before[key], "%s after failing allocation %d" % (key, n))
            if not failed:
                break
        else:
            self.fail("%r made over %d allocations" % (call, MAX_ALLOCATIONS))
        self.assertEqual(outcomes, {"MemoryError", "Array"})

    def test_empty_of_nine_dimensions(self):
        self.sweep(dlmap.empty, (1,) * 9, "float32")

    def test_import_of_a_capsule_producer(self):
        source = dlmap.empty((1,) * 9, dtype="float32")
        for _ in range(2):
            source.__dlpack__()

        class LegacyOnly:
            def __dlpack__(self, stream=None):
                return source.__dlpack__()

            def __dlpack_device__(self):
                return source.__dlpack_device__()

        producer = LegacyOnly()
        dlmap.from_dlpack(producer)  # its method's answer remembered before the sweep
        self.sweep(dlmap.from_dlpack, producer)

    def test_shape_strides_and_repr_of_large_extents(self):
        array = dlmap.empty((300, 400), dtype="float32")
        deep = dlmap.empty((1,) * 21, dtype="float32")  # a tuple longer than CPython keeps free ones of (20)
        for call, target, expected in ((operator.attrgetter("shape"), array, (300, 400)),
                                      (operator.attrgetter("strides"), array, (400, 1)),
                                      (repr, array, repr(array)),
                                      (operator.attrgetter("shape"), deep, (1,) * 21)):
            outcomes = set()
            for n in range(1, MAX_ALLOCATIONS + 1):
                failed, result, exception = dlmap._call_failing_python_allocation(n, call, target)
                if exception is not None:
                    self.assertIsInstance(exception, MemoryError, "%r, allocation %d" % (call, n))
                    outcomes.add("MemoryError")
                else:
                    self.assertEqual(result, expected, "%r, allocation %d" % (call, n))
                    outcomes.add("value")
                if not failed:
                    break
            else:
                self.fail("%r made over %d allocations" % (call, MAX_ALLOCATIONS))
            # the value, after a MemoryError for each allocation that failed first; where the interpreter takes the
            # tuple from its free list (Python 3.14 for the 2-tuples), no allocation fails and the value comes at once
            self.assertIn("value", outcomes, call)


if __name__ == "__main__":
    unittest.main()
