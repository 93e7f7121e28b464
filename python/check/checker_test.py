# dlmap conformance checker — tests of the checker itself: producers crafted to break one rule each must get that
# rule's row failed (and nothing else failed where the producer is otherwise valid); dlmap's own export passes; a
# consumer that accepts everything or crashes is reported so. Run by run_test.sh with the dlmap package on PYTHONPATH.
import os
import sys
import unittest

import dlmap
import dlmap.check
from dlmap.check import crafted
from dlmap.check.rules import Rules

RULES = Rules()


def valid_case(**fields):
    """A valid host float32 (2, 3) producer: versioned when asked for max_version >= the versioned range."""
    legacy, versioned = RULES.structs["legacy"], RULES.structs["versioned"]
    case = {"struct": "auto", "versioned_since": list(versioned[0]), "version": list(RULES.current),
            "names": {"legacy": [legacy[2], legacy[3]], "versioned": [versioned[2], versioned[3]]},
            "device": [1, 0], "ndim": 2, "shape": [2, 3], "strides": [3, 1], "dtype": [2, 32, 1], "nbytes": 24}
    case.update(fields)
    return crafted.Crafted(case)


def broken(report, column="standard"):
    """{rule id: [row ids]} of the failing rows."""
    out = {}
    for row in report.rows:
        for rule, _ in row.verdicts[column]:
            out.setdefault(rule, []).append(row.id)
    return out


# Consumers for the consumer check, imported again by name in the child interpreters.
def accept_everything(x):
    return x.__dlpack__()


def crash(x):
    os.abort()


class ProducerCheckTest(unittest.TestCase):
    def test_dlmap_passes_under_its_profile(self):
        report = dlmap.check.producer(dlmap.empty((2, 3)), profile=dlmap.profile())
        self.assertTrue(report.passed("%s profile" % dlmap.profile()), report.markdown())

    def test_versioned_for_a_legacy_request(self):
        failed = broken(dlmap.check.producer(valid_case(struct="versioned")))
        self.assertIn("P-version", failed)
        self.assertIn("P01", failed["P-version"])  # the plain __dlpack__()

    def test_version_above_max_version(self):
        failed = broken(dlmap.check.producer(valid_case(version=[RULES.current[0], 99])))
        self.assertIn("P-version", failed)

    def test_unknown_flag(self):
        failed = broken(dlmap.check.producer(valid_case(struct="versioned", flags=1 << 63)))
        self.assertIn("P-flags", failed)

    def test_null_strides_where_the_version_requires_them(self):
        failed = broken(dlmap.check.producer(valid_case(strides=None)))
        self.assertIn("P-strides", failed)
        report = dlmap.check.producer(valid_case(strides=None, version=[1, 0]))
        self.assertNotIn("P-strides", broken(report))  # 1.0 allows NULL strides

    def test_copies_and_flags(self):
        failed = broken(dlmap.check.producer(valid_case()))  # new data every call, IS_COPIED never set
        self.assertIn("P-copied", failed)
        self.assertIn("P-not-copied", failed)

    def test_device_disagreeing_with_dlpack_device(self):
        failed = broken(dlmap.check.producer(valid_case(reported=[3, 0])))
        self.assertIn("P-device", failed)

    def test_unknown_dtype(self):
        failed = broken(dlmap.check.producer(valid_case(dtype=[255, 32, 1])))
        self.assertIn("P-dtype", failed)

    def test_deleter_run_again_by_the_capsule(self):
        failed = broken(dlmap.check.producer(valid_case(destructor="always")))
        self.assertIn("P-deleter", failed)

    def test_wrong_capsule_name(self):
        failed = broken(dlmap.check.producer(valid_case(consumed=True)))
        self.assertIn("P-capsule", failed)

    def test_no_error_where_the_spec_requires_one(self):
        failed = broken(dlmap.check.producer(valid_case()))  # accepts stream values CPU forbids, and (0, 4)
        self.assertIn("P-no-error", failed)


class ConsumerCheckTest(unittest.TestCase):
    def test_accepting_everything_is_reported(self):
        failed = broken(dlmap.check.consumer("checker_test:accept_everything"))
        self.assertIn("C-refuse", failed)
        self.assertIn("C05", failed["C-refuse"])

    def test_crash_is_reported(self):
        report = dlmap.check.consumer("checker_test:crash")
        self.assertEqual(len(broken(report)["C-crash"]), len(report.rows))
        self.assertIn("crashed (SIGABRT)", report.rows[0].got)

    def test_dlmap_consumer_passes(self):
        report = dlmap.check.consumer(dlmap.from_dlpack)
        self.assertTrue(report.passed(), report.markdown())


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    unittest.main()
