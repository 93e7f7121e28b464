# dlmap conformance checker — tests of the device-claim rows (issue 48) over tests/gpu's fake CUDA runtime, whose memory
# is host memory it reports as device memory: the producer check's D2 row fails for a producer whose tensor names a
# host type over device memory, a device type over plain host memory or another device's id, each with dlmap's
# device_claim_* error, and passes for honest producers; the consumer check's crafted liars (C18-C20) run, are refused
# by dlmap cleanly with the deleter run once, and are failed rows for a consumer that accepts or crashes. Run by
# fake_gpu_run_test.sh with the fake_gpu package (the module over the fake runtime, the spec with its overlay).
import os
import sys
import unittest

import dlmap  # loads the fake runtime (the module is linked with it) before anything asks for it
import dlmap.check
from dlmap.check import crafted, runtimes
from dlmap.check.claims import RULE, SENT
from dlmap.check.consumer import cases
from dlmap.check.rules import Rules

RULES = Rules()
# The spec's types: host memory of the host's platform, and the first device-memory type with a backend (the one the
# consumer check's liars name), with its platform's runtime as the package's spec describes it (the fake's names).
HOST = next(v for v, d in RULES.devices.items() if d["memory"] == "host" and RULES.platforms[d["platform"]].get(
    "backend") == "cpu")
DEVICE = RULES.other_device(HOST)
RUNTIME = RULES.platforms[RULES.devices[DEVICE]["platform"]]["runtime"]
LIARS = ("C18", "C19", "C20")


def _case(device, memory):
    """A valid float32 (2, 3) tensor on `device` (reported so by __dlpack_device__ too) over `memory`: the runtime's
    device memory on device 0, or host memory."""
    legacy, versioned = RULES.structs["legacy"], RULES.structs["versioned"]
    case = {"struct": "auto", "versioned_since": list(versioned[0]), "version": list(RULES.current),
            "names": {"legacy": [legacy[2], legacy[3]], "versioned": [versioned[2], versioned[3]]},
            "device": list(device), "ndim": 2, "shape": [2, 3], "strides": [3, 1], "dtype": [2, 32, 1], "nbytes": 24}
    if memory == "device":
        case["address"] = runtimes.start(RUNTIME).device_memory(case["nbytes"], 0)
    return crafted.Crafted(case)


# Producers, made again by name in the producer check's child interpreter.
def host_type_over_device_memory():
    return _case((HOST, 0), "device")


def device_type_over_host_memory():
    return _case((DEVICE, 0), "host")


def another_device_id():
    return _case((DEVICE, 1), "device")


def honest_device():
    return _case((DEVICE, 0), "device")


def honest_host():
    return _case((HOST, 0), "host")


# Consumers for the consumer check.
def accept_everything(x):
    return x.__dlpack__()


def crash(x):
    os.abort()


def claim_row(expression):
    report = dlmap.check.producer("claims_fake_gpu_test:" + expression)
    return next(r for r in report.rows if r.sent == SENT), report


class ProducerClaimRowTest(unittest.TestCase):
    def assert_fails_with(self, expression, error_id):
        row, report = claim_row(expression)
        self.assertFalse(row.skipped, row.got)
        self.assertEqual(row.verdicts["standard"], [(RULE, error_id)], row.got)
        self.assertIn("(%s): " % error_id, row.got)  # the error's own text follows
        self.assertIn("`%s`" % RULE, report.markdown())

    def test_host_type_over_device_memory_fails(self):
        self.assert_fails_with("host_type_over_device_memory()", "device_claim_device_memory")

    def test_device_type_over_host_memory_fails(self):
        self.assert_fails_with("device_type_over_host_memory()", "device_claim_host_memory")

    def test_another_device_id_fails(self):
        self.assert_fails_with("another_device_id()", "device_claim_wrong_device")

    def test_honest_producers_pass(self):
        for expression in ("honest_device()", "honest_host()",
                           "dlmap.empty((2, 3), 'float64', device=(%d, 0))" % DEVICE):
            with self.subTest(expression=expression):
                row, _ = claim_row(expression)
                self.assertFalse(row.skipped, row.got)
                self.assertEqual(row.verdicts["standard"], [], row.got)
                self.assertTrue(row.got.startswith("imported on "), row.got)


class ConsumerLiarsTest(unittest.TestCase):
    def liar_rows(self, target):
        report = dlmap.check.consumer(target)
        rows = [r for r in report.rows if r.id in LIARS]
        self.assertEqual([r.id for r in rows], list(LIARS))
        for r in rows:
            self.assertFalse(r.skipped, "%s %s" % (r.id, r.got))
        return rows, report

    def test_the_liars_are_the_spec_s_types(self):
        liars = {c[0]: c[3] for c in cases(RULES) if c[0] in LIARS}
        self.assertEqual([liars[i]["device"] for i in LIARS], [[HOST, 0], [DEVICE, 0], [DEVICE, 1]])
        self.assertEqual([liars[i]["memory"] for i in LIARS], ["device", "host", "device"])

    def test_dlmap_refuses_each_liar_cleanly(self):
        rows, report = self.liar_rows(dlmap.from_dlpack)
        for r in rows:
            self.assertEqual(r.got, "error (BufferError), deleter 1/1", r.id)
            self.assertEqual(r.verdicts["standard"], [], r.id)
        self.assertTrue(report.passed(), report.markdown())

    def test_accepting_a_liar_is_a_failed_row(self):
        rows, _ = self.liar_rows("claims_fake_gpu_test:accept_everything")
        for r in rows:
            self.assertEqual([rule for rule, _ in r.verdicts["standard"]], ["C-refuse"], r.id)

    def test_crashing_on_a_liar_is_a_failed_row(self):
        rows, _ = self.liar_rows("claims_fake_gpu_test:crash")
        for r in rows:
            self.assertEqual(r.verdicts["standard"], [("C-crash", "crashed (SIGABRT)")], r.id)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    unittest.main()
