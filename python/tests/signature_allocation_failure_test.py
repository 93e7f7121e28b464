"""from_dlpack reads a Python __dlpack__'s signature (python/producers.c) to call one that has no max_version plainly.
Reading it makes a new tuple of the function's names; with no memory for it, the producer is asked as before
(versioned, then plainly after its TypeError): for every n, failing the n-th Python allocation of from_dlpack must give
the array or MemoryError, and lose nothing."""
import gc
import unittest

import dlmap
from testing import DlmapTestCase

MAX_ALLOCATIONS = 5000

# A legacy __dlpack__ (no max_version) with more local names than CPython keeps free tuples for (20), so that its
# names' tuple is always newly allocated, where Python's allocator can refuse it; it returns a capsule made beforehand.
_NAMES = " = ".join(f"v{i}" for i in range(24))
_SOURCE = f"""
def __dlpack__(self, stream=None):
    {_NAMES} = None
    return self.capsule
"""
_TEMPLATE = {}
exec(_SOURCE, _TEMPLATE)


class LegacyOnly:
    __dlpack__ = _TEMPLATE["__dlpack__"]

    def __init__(self, array):
        self.array = array
        self.capsule = array.__dlpack__()  # made beforehand: the producer's own call allocates nothing

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def fresh_producer(array):
    """A producer whose __dlpack__ has a code object not seen before (the binding remembers each code object's answer,
    so a reused one would be read once only): the function's __code__ is replaced by a copy, the class kept."""
    code = LegacyOnly.__dlpack__.__code__.replace()
    assert code is not LegacyOnly.__dlpack__.__code__
    LegacyOnly.__dlpack__.__code__ = code
    return LegacyOnly(array)


class SignatureAllocationFailureTest(DlmapTestCase):
    def test_each_allocation_of_a_legacy_import_failing(self):
        array = dlmap.empty((2, 3), dtype="float32")
        for _ in range(2):  # an Array keeps its export plan (one allocation of dlmap's) from its second export on
            array.__dlpack__()
        outcomes = set()
        for n in range(1, MAX_ALLOCATIONS + 1):
            gc.collect()
            before = dlmap._stats()
            producer = fresh_producer(array)
            failed, result, exception = dlmap._call_failing_python_allocation(n, dlmap.from_dlpack, producer)
            if exception is not None:
                self.assertIsInstance(exception, MemoryError, "allocation %d" % n)
                outcomes.add("MemoryError")
            else:
                self.assertIsInstance(result, dlmap.Array, "allocation %d" % n)
                self.assertEqual((result.data_ptr, result.shape), (array.data_ptr, (2, 3)), "allocation %d" % n)
                outcomes.add("Array" if not failed else "Array despite the failure")
            del result, exception, producer
            gc.collect()
            after = dlmap._stats()
            for key in ("live_allocations", "live_exports"):
                self.assertEqual(after[key], before[key], "%s after failing allocation %d" % (key, n))
            if not failed:
                break
        else:
            self.fail("from_dlpack made over %d allocations" % MAX_ALLOCATIONS)
        # The names' tuple failing is no error: the producer is asked as before (versioned; its refusal then has the
        # class remembered, so that a later sweep in this process no longer reads the signature) and answers.
        self.assertLessEqual({"MemoryError", "Array"}, outcomes)
        self.assertLessEqual(outcomes, {"MemoryError", "Array despite the failure", "Array"})


if __name__ == "__main__":
    unittest.main()
