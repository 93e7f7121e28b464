"""from_dlpack reads a Python __dlpack__'s signature (python/producers.c) to call one that has no max_version plainly.
Reading it makes a new tuple of the function's names; with no memory for it, the producer is asked as before
(versioned, then plainly after its TypeError): for every n, failing the n-th Python allocation of from_dlpack must give
the array or MemoryError, and lose nothing."""
import gc
import types
import unittest

import dlmap
from testing import DlmapTestCase

MAX_ALLOCATIONS = 5000

# A legacy __dlpack__ (no max_version) with more local names than CPython keeps free tuples for (20), so that its
# names' tuple is always newly allocated, where Python's allocator can refuse it.
_NAMES = ", ".join(f"v{i}" for i in range(24))
_SOURCE = f"""
def __dlpack__(self, stream=None):
    {_NAMES} = range(24)
    return self.array.__dlpack__()
"""
_TEMPLATE = {}
exec(_SOURCE, _TEMPLATE)


def fresh_producer(array):
    """A legacy-only producer whose __dlpack__ has a code object of its own (the binding remembers each code object's
    answer, so a reused one would be read once only)."""
    template = _TEMPLATE["__dlpack__"]
    code = template.__code__.replace()
    assert code is not template.__code__
    method = types.FunctionType(code, template.__globals__, "__dlpack__", template.__defaults__)
    cls = type("LegacyOnly", (), {"__dlpack__": method, "__dlpack_device__": lambda self: self.array.__dlpack_device__()})
    producer = cls()
    producer.array = array
    return producer


class SignatureAllocationFailureTest(DlmapTestCase):
    def test_each_allocation_of_a_legacy_import_failing(self):
        array = dlmap.empty((2, 3), dtype="float32")
        for _ in range(2):  # an Array keeps its export plan (one allocation of dlmap's) from its second export on
            array.__dlpack__()
        outcomes = set()
        for n in range(1, MAX_ALLOCATIONS + 1):
            producer = fresh_producer(array)
            gc.collect()
            before = dlmap._stats()
            failed, result, exception = dlmap._call_failing_python_allocation(n, dlmap.from_dlpack, producer)
            if exception is not None:
                self.assertIsInstance(exception, MemoryError, "allocation %d" % n)
                outcomes.add("MemoryError")
            else:
                self.assertIsInstance(result, dlmap.Array, "allocation %d" % n)
                self.assertEqual((result.data_ptr, result.shape), (array.data_ptr, (2, 3)), "allocation %d" % n)
                outcomes.add("Array")
            del result, exception, producer
            gc.collect()
            after = dlmap._stats()
            for key in ("live_allocations", "live_exports"):
                self.assertEqual(after[key], before[key], "%s after failing allocation %d" % (key, n))
            if not failed:
                break
        else:
            self.fail("from_dlpack made over %d allocations" % MAX_ALLOCATIONS)
        self.assertEqual(outcomes, {"MemoryError", "Array"})


if __name__ == "__main__":
    unittest.main()
