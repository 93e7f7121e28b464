# dlmap Python binding tests — Python's own allocator failing (dlmap._call_failing_python_allocation) under the
# module's refusals and the conformance checker's hooks: a refusal's message names a keyword or a parameter (made as a
# str), a stream the device takes none of (made as an int), the checker's rule table and a judged tensor's problems (a
# dict and a list of tuples). Each failing call must raise MemoryError or the call's own error and lose nothing.
"""usage: python_allocation_failure_refusals_test.py (the module under test is the one run_python.sh puts on
sys.path)"""
import gc
import sys
import unittest

import dlmap

MAX_ALLOCATIONS = 5000


class Producer:
    """A producer written in Python over a dlmap Array (no exchange table: from_dlpack asks __dlpack__)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **keywords):
        return self.array.__dlpack__(**keywords)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class PythonAllocationFailureRefusalsTest(unittest.TestCase):
    def sweep(self, call, *args, **kwargs):
        """Fails each allocation of the call in turn; the call's result or error without a failure, which every
        call no failure reached gave too."""
        try:
            plain = (call(*args, **kwargs), None)
        except Exception as error:  # noqa: BLE001 - the call's own error
            plain = (None, error)
        for n in range(1, MAX_ALLOCATIONS + 1):
            gc.collect()
            before = dlmap._stats()
            failed, result, exception = dlmap._call_failing_python_allocation(n, call, *args, **kwargs)
            if exception is not None and not (plain[1] is not None and type(exception) is type(plain[1])):
                self.assertIsInstance(exception, MemoryError, "allocation %d" % n)
            if not failed:
                self.assertEqual((result, repr(exception)), (plain[0], repr(plain[1])))
                return plain
            del result, exception
            gc.collect()
            after = dlmap._stats()
            for key in ("live_allocations", "live_exports"):
                self.assertEqual(after[key], before[key], "%s after failing allocation %d" % (key, n))
        self.fail("%r made over %d allocations" % (call, MAX_ALLOCATIONS))

    def test_unknown_keyword(self):
        _, error = self.sweep(dlmap.from_dlpack, Producer(dlmap.empty(3)), bogus=1)
        self.assertIsInstance(error, TypeError)

    def test_required_argument_missing_with_keywords(self):
        _, error = self.sweep(dlmap.from_dlpack, copy=True)
        self.assertIsInstance(error, TypeError)

    def test_stream_on_a_device_without_streams(self):
        _, error = self.sweep(dlmap.from_dlpack, Producer(dlmap.empty(3)), stream=1000)
        self.assertIsInstance(error, ValueError)

    def test_check_rules(self):
        rules, _ = self.sweep(dlmap._check_rules)
        self.assertIsInstance(rules, dict)
        self.assertGreater(len(rules), 0)

    def test_judge_tensor_with_problems(self):
        problems, _ = self.sweep(dlmap._judge_tensor, 12345, (2, 33, 1), -1, False, 1 << 40, (1, 0))
        self.assertEqual(len(problems), 3, problems)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
