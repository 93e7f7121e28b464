# dlmap Python binding tests — the reference-count check of testing.DlmapTestCase itself: on Python's debug build it
# fails a test that leaves a reference behind on every run, naming the test and the deltas, and passes tests that are
# clean or fill a cache once; on the release interpreter it is off and says why.
import sys
import unittest

import testing

# A child interpreter's tests: one leaks a reference per run, one fills a cache on its first run only, one is clean.
CHILD = """
import unittest
import dlmap
import testing

LEAKED = []
CACHE = {}


class Probe(testing.DlmapTestCase):
    def test_leaks(self):
        LEAKED.append(object())

    def test_fills_a_cache_once(self):
        CACHE.setdefault("key", [object(), object()])

    def test_clean(self):
        a = dlmap.empty(4)
        self.assertEqual(a.__dlpack_device__(), (1, 0))


unittest.main(verbosity=2)
"""


# A plain TestCase: run once, not again for the check it tests (each run starts a child that runs its tests 6 times).
class RefcountCheckTest(unittest.TestCase):
    @unittest.skipUnless(hasattr(sys, "gettotalrefcount"), "needs Python's debug build (python3-dbg)")
    def test_a_leak_fails_its_test_by_name(self):
        self.assertTrue(testing.REFCOUNTS.on, testing.REFCOUNTS.off_because)
        rc, out, err = testing.run_child(CHILD, timeout=120)
        self.assertEqual(rc, 1, err)
        runs = testing.REFCOUNTS.RUNS
        self.assertIn(f"AssertionError: reference leak: __main__.Probe.test_leaks left {', '.join(['1'] * runs)} more "
                      f"references (sys.gettotalrefcount) on each of its last {runs} runs", err)
        self.assertIn("test_clean (__main__.Probe.test_clean) ... ok", err)
        self.assertIn("test_fills_a_cache_once (__main__.Probe.test_fills_a_cache_once) ... ok", err)
        self.assertIn("FAILED (failures=1)", err)
        self.assertIn("reference-count check: 3 tests checked", err)

    @unittest.skipIf(hasattr(sys, "gettotalrefcount"), "Python's debug build: the check is on here")
    def test_off_on_the_release_interpreter(self):
        self.assertFalse(testing.REFCOUNTS.on)
        self.assertIn("not Python's debug build", testing.REFCOUNTS.off_because)


if __name__ == "__main__":
    unittest.main(verbosity=2)
