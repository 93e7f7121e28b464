# dlmap conformance checker — tests of the checker itself: producers crafted to break one rule each must get that
# rule's row failed (and nothing else failed where the producer is otherwise valid); dlmap's own export passes; a
# consumer that accepts everything or crashes is reported so; a producer that hangs, crashes, hands out a dangling
# pointer or raises from an attribute, and a consumer that prints verdict-like lines, are rows, never a traceback or a
# hang. Run by run_test.sh with the dlmap package on PYTHONPATH. The producer check makes each producer again in a child
# interpreter from "checker_test:<expression>", so the producers below are made by importable names.
import atexit
import ctypes
import json
import mmap
import os
import sys
import time
import unittest

import dlmap
import dlmap.check
from dlmap.check import crafted, deleters, exchange_api, tables
from dlmap.check.claims import SENT
from dlmap.check.consumer import cases, run_case
from dlmap.check.producer import CALL_TIMEOUT_S, RULES as PRODUCER_RULES, Calls, NotMade
from dlmap.check.report import Report
from dlmap.check.rules import Rules

RULES = Rules()


def valid_case(kind=crafted.Crafted, **fields):
    """A valid host float32 (2, 3) producer: versioned when asked for max_version >= the versioned range. `kind` is
    Crafted or a subclass below that breaks one call."""
    legacy, versioned = RULES.structs["legacy"], RULES.structs["versioned"]
    case = {"struct": "auto", "versioned_since": list(versioned[0]), "version": list(RULES.current),
            "names": {"legacy": [legacy[2], legacy[3]], "versioned": [versioned[2], versioned[3]]},
            "device": [1, 0], "ndim": 2, "shape": [2, 3], "strides": [3, 1], "dtype": [2, 32, 1], "nbytes": 24}
    case.update(fields)
    return kind(case)


def check(expression, **kwargs):
    """The producer check of checker_test:<expression>, made in the checker's child interpreter; without the deleter
    rows unless asked (DeleterRowsTest has them: a child each)."""
    kwargs.setdefault("deleter_rows", False)
    return dlmap.check.producer("checker_test:" + expression, **kwargs)


def row(report, sent):
    return next(r for r in report.rows if r.sent == sent)


# Producers that break the checker's process, not a DLPack rule: each on one request only, so that the row of that
# request says what happened and the requests after it (in a fresh child) are judged as usual.
class HangsOnCopyFalse(crafted.Crafted):
    def __dlpack__(self, **kwargs):
        if kwargs == {"copy": False}:
            time.sleep(3600)
        return super().__dlpack__(**kwargs)


class HangsAlways(crafted.Crafted):
    def __dlpack__(self, **kwargs):
        time.sleep(3600)


class SegfaultsOnCopyTrue(crafted.Crafted):
    def __dlpack__(self, **kwargs):
        if kwargs == {"copy": True}:
            ctypes.string_at(0)  # SIGSEGV
        return super().__dlpack__(**kwargs)


def _unmapped_address():
    """The address of a page that was mapped and is no longer: a dangling pointer that faults when read."""
    libc = ctypes.CDLL(None)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    address = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                        -1, 0)
    libc.munmap(address, mmap.PAGESIZE)
    return address


class DanglingForMaxVersion10(crafted.Crafted):
    def __dlpack__(self, **kwargs):
        if kwargs == {"max_version": (1, 0)}:
            name = self.case["names"]["versioned"][0]
            capsule, keep = crafted.dlpack.new_capsule_calling(_unmapped_address(), name, lambda address: None)
            self.keep.append(keep)
            return capsule
        return super().__dlpack__(**kwargs)


class ReadOnlyRaises(crafted.Crafted):
    @property
    def readonly(self):
        raise RuntimeError("not an AttributeError")

    def __getattr__(self, name):
        if name == "flags":
            raise KeyError(name)
        raise AttributeError(name)


class ReadOnlyHangs(crafted.Crafted):
    @property
    def readonly(self):
        time.sleep(3600)


class _BadInt(int):
    def __int__(self):
        raise ValueError("no int here")

    def __index__(self):
        raise ValueError("no index here")


class _BadRepr:
    def __repr__(self):
        raise RuntimeError("no repr here")


class GarbageDevice(crafted.Crafted):
    def __dlpack_device__(self):
        return {"ints": (_BadInt(1), _BadInt(0)), "repr": _BadRepr()}[self.case["garbage"]]


# The spec's device type for CUDA device memory: a crafted producer there is GPU-class (its data is host memory; no
# runtime is called, so the rows below only look at what the checker sends).
CUDA = next(v for v, d in RULES.devices.items() if d["platform"] == "cuda" and d["memory"] == "device")


def made_stream():
    """A stand-in for a stream the check made in the producer's child (checker_test:made_stream())."""
    return 0x7F00


def cannot_make_stream():
    raise RuntimeError("no runtime here")


def stream_rows(report):
    return [r for r in report.rows if r.sent.startswith("__dlpack__(stream=")]


def broken(report, column="standard"):
    """{rule id: [row ids]} of the failing rows."""
    out = {}
    for row in report.rows:
        for rule, _ in row.verdicts[column]:
            out.setdefault(rule, []).append(row.id)
    return out


def table_producer(lie=None):
    """A valid producer whose type publishes a C exchange API table telling `lie` (crafted.TABLE_LIES) or none."""
    return crafted.with_table(valid_case().case, lie)


def trusting_table_consumer(x):
    """A consumer that trusts whatever table the type publishes: any major, a -1 read as success."""
    from dlmap.check import dlpack
    address = dlpack.capsule_pointer(getattr(type(x), dlpack.EXCHANGE_API_ATTRIBUTE), dlpack.EXCHANGE_API_CAPSULE)
    api = dlpack.DLPackExchangeAPI.from_address(address)
    out = ctypes.c_void_p()
    dlpack.FROM_PY_OBJECT(api.managed_tensor_from_py_object_no_sync)(x, ctypes.byref(out))
    if out.value:
        managed = dlpack.DLManagedTensorVersioned.from_address(out.value)
        dlpack.DELETER(managed.deleter)(out.value)
    return out.value


# Consumers for the consumer check, imported again by name in the child interpreters.
def accept_everything(x):
    return x.__dlpack__()


def crash(x):
    os.abort()


def chatty(x):
    """Refuses everything, and prints dicts: now, and at exit one in the verdict's own format that says accepted."""
    atexit.register(print, json.dumps({"outcome": "accepted", "produced": 0, "deleter_calls": 0, "asked": []}))
    atexit.register(print, {"chatty": True})
    print({"outcome": "accepted"})
    raise ValueError("refused")


class ProducerCheckTest(unittest.TestCase):
    def test_dlmap_passes_under_its_profile(self):
        report = dlmap.check.producer("dlmap:empty((2, 3))", profile=dlmap.profile())
        self.assertTrue(report.passed("%s profile" % dlmap.profile()), report.markdown())

    def test_versioned_for_a_legacy_request(self):
        failed = broken(check("valid_case(struct='versioned')"))
        self.assertIn("P-version", failed)
        self.assertIn("P01", failed["P-version"])  # the plain __dlpack__()

    def test_version_outside_the_versioned_range(self):
        failed = broken(check("valid_case(version=[RULES.current[0] + 1, 0])"))
        self.assertIn("P-version", failed)

    def test_newer_minor_than_max_version(self):
        # The producer's own minor for a max_version of the same major: what the standard recommends.
        failed = broken(check("valid_case(version=[RULES.current[0], 99])"))
        self.assertNotIn("P-version", failed)

    def test_unknown_flag(self):
        failed = broken(check("valid_case(struct='versioned', flags=1 << 63)"))
        self.assertIn("P-flags", failed)

    def test_null_strides_where_the_version_requires_them(self):
        failed = broken(check("valid_case(strides=None)"))
        self.assertIn("P-strides", failed)
        report = check("valid_case(strides=None, version=[1, 0])")
        self.assertNotIn("P-strides", broken(report))  # 1.0 allows NULL strides

    def test_copies_and_flags(self):
        failed = broken(check("valid_case()"))  # new data every call, IS_COPIED never set
        self.assertIn("P-copied", failed)
        self.assertIn("P-not-copied", failed)

    def test_device_disagreeing_with_dlpack_device(self):
        failed = broken(check("valid_case(reported=[3, 0])"))
        self.assertIn("P-device", failed)

    def test_unknown_dtype(self):
        failed = broken(check("valid_case(dtype=[255, 32, 1])"))
        self.assertIn("P-dtype", failed)

    def test_deleter_run_again_by_the_capsule(self):
        failed = broken(check("valid_case(destructor='always')"))
        self.assertIn("P-deleter", failed)

    def test_wrong_capsule_name(self):
        failed = broken(check("valid_case(consumed=True)"))
        self.assertIn("P-capsule", failed)

    def test_no_error_where_the_spec_requires_one(self):
        failed = broken(check("valid_case()"))  # accepts stream values CPU forbids, and (0, 4)
        self.assertIn("P-no-error", failed)

    def test_claim_row_is_skipped_without_a_runtime(self):
        # No GPU runtime is loaded in the producer's process: nothing can say where its memory is, and the row says so.
        report = check("valid_case()")  # a host producer: no stream the check makes loads a runtime in its process
        claim = row(report, SENT)
        self.assertEqual((claim.id, claim.skipped), ("D2", True))
        self.assertEqual(claim.got, "skipped: no GPU runtime with a device is loaded in the producer's process, so "
                                    "nothing says where its memory is")
        self.assertIn("; 1 skipped.", report.markdown())
        self.assertNotIn("D2", [i for ids in broken(report).values() for i in ids])

    def test_a_producer_that_cannot_be_made_is_a_clean_error(self):
        with self.assertRaisesRegex(ValueError, "NameError"):
            check("no_such_producer")
        with self.assertRaises(TypeError):  # an object cannot cross into the child: its name must be given
            dlmap.check.producer(valid_case())


def exchange_report(target):
    """Only the E rows of a producer check (made in the checker's child, as the full check makes them)."""
    calls = Calls(target, RULES, CALL_TIMEOUT_S)
    failure = calls.start()
    if failure is not None:
        raise NotMade(target, failure)
    try:
        report = Report("producer", target, ["standard"], PRODUCER_RULES)
        for r in exchange_api.rows(calls, ["standard"], RULES):
            report.add(r)
        return report
    finally:
        calls.close()


class ExchangeApiProducerTest(unittest.TestCase):
    """The E rows: the C exchange API a producer's type publishes, judged against its own __dlpack__."""

    def e_rows(self, report):
        return {r.id: r for r in report.rows if r.id.startswith("E")}

    def test_the_full_check_has_the_e_rows_and_dlmap_passes_its_own(self):
        rows = self.e_rows(dlmap.check.producer("dlmap:empty((2, 3))", deleter_rows=False))
        if not hasattr(dlmap.Array, "__dlpack_c_exchange_api__"):
            self.assertEqual(list(rows), ["E1"])
            self.assertEqual((rows["E1"].got, rows["E1"].passed("standard")), ("none (the table is optional)", True))
            return
        self.assertEqual(sorted(rows), ["E%d" % i for i in range(1, 8)])
        for r in rows.values():
            self.assertTrue(r.passed("standard") and not r.skipped, (r.id, r.got, r.verdicts))

    def test_a_table_that_tells_no_lie_passes(self):
        rows = self.e_rows(exchange_report("checker_test:table_producer()"))
        self.assertEqual(sorted(rows), ["E%d" % i for i in range(1, 8)])
        failed = {r.id: r.verdicts["standard"] for r in rows.values() if not r.passed("standard")}
        self.assertEqual(failed, {})
        self.assertEqual(rows["E2"].got, "%s, same as __dlpack__" % "(%d, %d)" % tuple(RULES.current))

    def test_each_lie_fails_its_row(self):
        for lie, row_id, rule in (("wrong_shape", "E2", "E-export"), ("fails_silently", "E2", "E-export"),
                                  ("frees_while_held", "E3", "E-to-object"),
                                  ("allocator_ignores_prototype", "E4", "E-allocator"),
                                  ("allocator_serves_anything", "E5", "E-allocator"),
                                  ("null_functions", "E1", "E-table"), ("cycle", "E1", "E-chain"),
                                  ("wrong_major", "E1", "E-table")):
            with self.subTest(lie=lie):
                failed = broken(exchange_report("checker_test:table_producer(%r)" % lie))
                self.assertIn(rule, failed)
                self.assertEqual(failed[rule], [row_id])
                # what else fails: rows that need the tensor that never came, or functions left NULL
                also = {"cycle": {"E-table"}, "fails_silently": {"E-to-object"},
                        "null_functions": {"E-export", "E-to-object", "E-allocator", "E-stream"}}.get(lie, set())
                self.assertEqual(set(failed), {rule} | also)


class DeleterRowsTest(unittest.TestCase):
    """The L rows: each struct's deleter called without the GIL, on a foreign thread, after the producer is gone, at
    exit after finalisation; each way in a child of its own."""

    def test_a_check_whose_calls_stopped_sends_no_deleter_row(self):
        report = check("valid_case(HangsAlways)", timeout=3, deleter_rows=True)
        rows = [r for r in report.rows if r.id.startswith("L")]
        self.assertEqual(len(rows), 8)
        for r in rows:
            self.assertEqual((r.got, r.verdicts["standard"]), ("not sent: 3 calls in a row hung",
                                                               [("P-crash", "not sent: 3 calls in a row hung")]))

    def test_a_deleter_touching_python_without_the_gil_crashes_in_every_row(self):
        started = time.monotonic()
        report = deleters.rows("checker_test:valid_case(deleter='touches_python')", RULES, ["standard"], 10)
        self.assertEqual([r.id for r in report], ["L%d" % i for i in range(1, 9)])
        for r in report:
            self.assertRegex(r.got, r"^crashed \(SIG[A-Z]+\)", r.id)
            self.assertEqual(r.verdicts["standard"], [(deleters.RULE, r.got)])
        self.assertLess(time.monotonic() - started, 120)  # crashes, not deadlines

    def test_a_python_callback_deleter_fails_only_at_shutdown(self):
        # ctypes runs a Python callback by taking the GIL, which works from any thread, but not once the interpreter
        # has finalised
        failed = {r.id: r.got for r in deleters.rows("checker_test:valid_case()", RULES, ["standard"], 10)
                  if not r.passed("standard")}
        self.assertEqual(sorted(failed), ["L4", "L8"])
        self.assertTrue(all(got.endswith("at exit") for got in failed.values()), failed)

    def test_dlmap_deleters_return_every_way(self):
        rows = deleters.rows("dlmap:empty((2, 3))", RULES, ["standard"], 10)
        self.assertEqual(len(rows), 8)
        for r in rows:  # a struct the profile does not hand out is skipped, never failed
            self.assertTrue(r.passed("standard"), (r.id, r.got))
            self.assertIn(r.got, ("returned",) if not r.skipped else (r.got,))


class HostileProducerTest(unittest.TestCase):
    """Producers that hang, crash or misbehave outside the protocol: rows, with the other requests judged as usual."""

    @classmethod
    def setUpClass(cls):
        cls.valid = {r.sent: (r.got, r.verdicts) for r in check("valid_case()").rows}

    def assert_like_a_valid_producer_elsewhere(self, report, *sent):
        expected = self.valid
        for r in report.rows:
            if r.sent not in sent and r.id != "R1":
                self.assertEqual((r.got, r.verdicts), expected[r.sent], r.id)

    def test_a_hanging_call_is_a_row(self):
        report = check("valid_case(HangsOnCopyFalse)", timeout=5)
        hung = row(report, "__dlpack__(copy=False)")
        self.assertEqual(hung.got, "hung (over 5 s)")
        self.assertEqual(hung.verdicts["standard"], [("P-crash", "hung (over 5 s)")])
        self.assert_like_a_valid_producer_elsewhere(report, hung.sent)

    def test_calls_that_always_hang_stop_after_a_few(self):
        started = time.monotonic()
        report = check("valid_case(HangsAlways)", timeout=3)
        self.assertLess(time.monotonic() - started, 60)
        # the calls, the claim's import and the C exchange API's lookup
        sent = [r for r in report.rows if r.id.startswith("P") or r.id in ("D2", "E1")]
        texts = [r.got for r in sent]
        self.assertEqual(texts[:2], ["hung (over 3 s)"] * 2)  # the plain export hung first, unseen: no row of its own
        self.assertTrue(all(t == "not sent: 3 calls in a row hung" for t in texts[2:]), texts)
        self.assertEqual(broken(report)["P-crash"], [r.id for r in sent])

    def test_a_segfaulting_call_is_a_row(self):
        report = check("valid_case(SegfaultsOnCopyTrue)")
        crashed = row(report, "__dlpack__(copy=True)")
        self.assertEqual(crashed.got, "crashed (SIGSEGV)")
        self.assertEqual(crashed.verdicts["standard"], [("P-crash", "crashed (SIGSEGV)")])
        self.assert_like_a_valid_producer_elsewhere(report, crashed.sent)

    def test_a_dangling_capsule_pointer_is_a_row(self):
        report = check("valid_case(DanglingForMaxVersion10)")
        sent = ("__dlpack__(max_version=(1, 0))", "__dlpack__(max_version=(1, 0)), dropped unconsumed")
        for crashed in (row(report, s) for s in sent):
            self.assertEqual(crashed.got, "crashed (SIGSEGV)")
            self.assertEqual(crashed.verdicts["standard"], [("P-crash", "crashed (SIGSEGV)")])
        self.assert_like_a_valid_producer_elsewhere(report, *sent)

    def test_attributes_raising_any_exception_are_a_row(self):
        report = check("valid_case(ReadOnlyRaises)")
        self.assertEqual(report.rows[0].id, "R1")
        self.assertEqual(report.rows[0].got, "x.readonly raised RuntimeError; x.flags raised KeyError")
        self.assertIn("read-only: unknown", report.notes[0])
        self.assert_like_a_valid_producer_elsewhere(report)

    def test_a_garbage_device_report_is_a_row(self):
        for garbage in ("ints", "repr"):
            with self.subTest(garbage=garbage):
                report = check("valid_case(GarbageDevice, garbage=%r)" % garbage)
                d1 = row(report, "__dlpack_device__()")
                self.assertEqual(d1.verdicts["standard"], [("P-device-report", "not a tuple of two ints")])
                self.assertIn("raised", d1.got)


class StreamProbeTest(unittest.TestCase):
    """A GPU-class producer gets only the stream values its convention documents and a stream the check made, never an
    integer that names no stream (a runtime handed one may crash)."""

    def test_a_cuda_producer_gets_documented_values_and_a_made_stream(self):
        report = check("valid_case(device=[%d, 0])" % CUDA, stream="checker_test:made_stream()")
        convention = RULES.streams[RULES.devices[CUDA]["stream"]]
        documented = sorted(int(v) for v in convention["values"])
        expected = ["__dlpack__(stream=%d)" % v for v in documented] + \
            ["__dlpack__(stream=<a stream the check made>)"]
        self.assertEqual([r.sent for r in stream_rows(report)], expected)
        made = stream_rows(report)[-1]
        self.assertEqual(made.verdicts["standard"], [], made.got)  # a real handle: the call must succeed

    def test_no_invented_handle_for_any_gpu_class_memory(self):
        for device_type, entry in RULES.devices.items():
            if entry["memory"] == "host":
                continue
            convention = RULES.streams[entry["stream"]]
            self.assertEqual(RULES.stream_probes(device_type),
                             sorted(int(v) for v in (convention.get("values") or {})), entry["name"])

    def test_host_memory_keeps_every_probe(self):
        cpu = next(v for v, d in RULES.devices.items() if d["memory"] == "host")
        report = check("valid_case()")
        sent = [r.sent for r in stream_rows(report)]
        self.assertEqual(sent, ["__dlpack__(stream=%d)" % v for v in RULES.stream_probes(cpu)])
        self.assertNotIn("__dlpack__(stream=<a stream the check made>)", sent)

    def test_a_stream_that_cannot_be_made_is_an_unchecked_row(self):
        report = check("valid_case(device=[%d, 0])" % CUDA, stream="checker_test:cannot_make_stream()")
        made = stream_rows(report)[-1]
        self.assertIn("not sent: the check could not make a stream", made.got)
        self.assertIn("RuntimeError: no runtime here", made.got)
        self.assertEqual([rule for rule, _ in made.verdicts["standard"]], ["X-not-checked"])


class DeadlineTest(unittest.TestCase):
    def test_a_producer_check_stops_at_the_deadline(self):
        started = time.monotonic()
        report = check("valid_case(HangsAlways)", timeout=60, deadline=started + 8)
        self.assertLess(time.monotonic() - started, 30)
        rows = [r for r in report.rows if r.id.startswith("P")]
        self.assertTrue(rows)
        for r in rows:
            self.assertEqual(r.got, "not sent: the check's deadline passed", r.id)
            self.assertEqual(r.verdicts["standard"], [("X-not-checked", r.got)], r.id)

    def test_a_deadline_passing_before_the_device_report_is_rows(self):
        started = time.monotonic()
        report = check("valid_case(ReadOnlyHangs)", timeout=60, deadline=started + 8)
        self.assertLess(time.monotonic() - started, 30)
        unchecked = [("X-not-checked", "not sent: the check's deadline passed")]
        self.assertEqual([r.id for r in report.rows[:2]], ["R1", "D1"])
        for r in report.rows:
            self.assertEqual(r.verdicts["standard"], unchecked, r.id)

    def test_a_producer_not_made_by_the_deadline(self):
        with self.assertRaises(NotMade) as raised:
            check("valid_case()", deadline=time.monotonic() - 1)
        self.assertEqual(raised.exception.failure, "not sent: the check's deadline passed")

    def test_a_consumer_check_past_its_deadline_runs_no_case(self):
        report = dlmap.check.consumer("checker_test:crash", deadline=time.monotonic() - 1)
        self.assertEqual(len(report.rows), len(cases(RULES)))
        for r in report.rows:
            self.assertEqual(r.verdicts["standard"], [("X-not-checked", "not run: the check's deadline passed")])


class ConsumerCheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.crash_report = dlmap.check.consumer("checker_test:crash")  # two tests read it: a child per case

    def test_accepting_everything_is_reported(self):
        failed = broken(dlmap.check.consumer("checker_test:accept_everything"))
        self.assertIn("C-refuse", failed)
        self.assertIn("C05", failed["C-refuse"])

    def test_crash_is_reported(self):
        report = self.crash_report
        self.assertEqual(len(broken(report)["C-crash"]), len([r for r in report.rows if not r.skipped]))
        self.assertIn("crashed (SIGABRT)", report.rows[0].got)

    def test_liars_about_device_memory_are_skipped_without_a_device(self):
        # No runtime of the spec starts here (this package's module has none, the machine no device): the cases
        # that lie about device memory say so, neither pass nor fail, and are counted apart.
        report = self.crash_report
        skipped = [r for r in report.rows if r.skipped]
        self.assertEqual([r.id for r in skipped], ["C18", "C19", "C20"])
        for r in skipped:
            self.assertRegex(r.got, r"^skipped: no \S+ device here \(no library of the spec's \S+ runtime starts")
        self.assertIn("; 3 skipped.", report.markdown())

    def test_printed_dicts_are_not_the_verdict(self):
        case_id, _, expected, fields = cases(RULES)[0]  # one case (each is a child interpreter): a valid tensor
        self.assertEqual((case_id, expected), ("C01", "accept"))
        got, result = run_case("checker_test:chatty", fields)
        self.assertEqual(got, "error (ValueError), deleter 0/0")  # refused, whatever the consumer printed
        self.assertEqual(result["outcome"], "error")

    def test_a_consumer_that_trusts_any_table_is_reported(self):
        by_id = {case[0]: case for case in cases(RULES)}
        for case_id, lie in (("C21", "wrong_major"), ("C24", "fails_silently")):
            with self.subTest(lie=lie):
                self.assertEqual(by_id[case_id][3]["table"], lie)
        report = dlmap.check.consumer("checker_test:trusting_table_consumer")
        failed = broken(report)
        self.assertEqual(sorted(failed.get("C-table", [])), ["C21", "C23", "C24", "C25"])

    def test_dlmap_consumer_passes(self):
        report = dlmap.check.consumer(dlmap.from_dlpack)
        self.assertTrue(report.passed(), report.markdown())


class MatrixTest(unittest.TestCase):
    def test_dlmap_as_consumer_fails_no_row(self):
        from dlmap.check import matrix
        for producer in [p for p in ("numpy", "dlmap") if p in matrix.available([p])[0]]:
            with self.subTest(producer=producer):
                outcomes = matrix.pair(producer, "dlmap")
                self.assertEqual(len(outcomes), len(matrix.matrix_families.FAMILIES))
                failed = [o for o in outcomes if "failed" in o or "unreadable" in o or o.get("ok") is False]
                self.assertEqual(failed, [])
                self.assertTrue(any(o.get("ok") for o in outcomes))

    def test_a_crash_is_its_familys_row_and_the_pair_goes_on(self):
        from dlmap.check import matrix
        families = len(matrix.matrix_families.FAMILIES)
        starts = []

        def child(config, answer_path, timeout, libraries):  # the first child crashes on family 2, the second the rest
            starts.append(config["first"])
            with open(answer_path, "a", encoding="utf-8") as answers:
                last = 2 if config["first"] == 0 else families
                for index in range(config["first"], last):
                    answers.write(json.dumps({"index": index, "ok": True, "problems": []}) + "\n")
            return "crashed (SIGSEGV)" if config["first"] == 0 else None

        real, matrix._child = matrix._child, child
        try:
            outcomes = matrix.pair("numpy", "torch")
        finally:
            matrix._child = real
        self.assertEqual(starts, [0, 3])
        self.assertEqual(outcomes[2], {"failed": "crashed (SIGSEGV)", "index": 2})
        self.assertTrue(all(o.get("ok") for i, o in enumerate(outcomes) if i != 2))
        text = matrix.Matrix(["numpy"], {}, {("numpy", "numpy"): outcomes}).markdown()
        self.assertIn("1 failing rows:", text)
        self.assertIn("crashed (SIGSEGV) | `python3 -c 'import numpy; x = ", text)


class TablesComparisonTest(unittest.TestCase):
    """A committed table compares equal to one made after the spec gained a DLPack version, wherever that version shows
    (tools/drill/drill.sh, step a), and unequal when behaviour changed."""

    def table(self, current, stamped, header):
        return (tables.CURRENT_LINE % current + '| P28 | __dlpack__(max_version=%s) | "dltensor_versioned" %s | pass |\n'
                '| E1 | type(x).__dlpack_c_exchange_api__ | capsule "dlpack_exchange_api" %s | pass |\n'
                % (current, stamped, header))

    def test_a_new_current_version_is_no_change(self):
        old = self.table("(1, 3)", "(1, 3)", "(1, 3)")
        self.assertTrue(tables.same_behaviour(old, self.table("(1, 4)", "(1, 4)", "(1, 4)")))  # dlmap: all follow
        self.assertTrue(tables.same_behaviour(old, self.table("(1, 4)", "(1, 3)", "(1, 3)")))  # a peer's own
        # a dlmap profile that stamps a fixed version, its module's table the spec's current one
        self.assertTrue(tables.same_behaviour(old, self.table("(1, 4)", "(1, 3)", "(1, 4)")))
        self.assertFalse(tables.same_behaviour(old, self.table("(1, 4)", "(1, 2)", "(1, 4)")))
        self.assertFalse(tables.same_behaviour(old, self.table("(1, 3)", "(1, 3)", "(1, 2)")))


class MachineReadableOutputTest(unittest.TestCase):
    """--json and --junit (issue 67): every row of the Markdown table, for CI systems."""

    def run_cli(self, *argv):
        import contextlib
        import io
        import tempfile
        import xml.etree.ElementTree as ElementTree
        from dlmap.check.__main__ import main
        with tempfile.TemporaryDirectory() as tmp:
            json_path, junit_path = os.path.join(tmp, "rows.json"), os.path.join(tmp, "rows.xml")
            with contextlib.redirect_stdout(io.StringIO()) as stdout:
                status = main(list(argv) + ["--json", json_path, "--junit", junit_path])
            with open(json_path, encoding="utf-8") as f:
                document = json.load(f)
            tree = ElementTree.parse(junit_path)
        return status, stdout.getvalue(), document, tree

    def test_a_producer_with_failing_rows(self):
        status, markdown, document, tree = self.run_cli("producer", "checker_test:valid_case(struct='versioned')",
                                                        "--strict")
        self.assertEqual(status, 1, "a failing row under --strict")
        self.assertEqual(document["format"], "dlmap.check/1")
        self.assertEqual((document["check"], document["columns"]), ("producer", ["standard"]))
        self.assertFalse(document["passed"])
        rows = document["rows"]
        self.assertEqual(len(rows), markdown.count("\n| ") - 1, "every row of the table (less its header)")
        failing = [r for r in rows if r["verdicts"]["standard"]["verdict"] == "fail"]
        self.assertEqual(len(failing), document["counts"]["standard"]["fail"])
        self.assertTrue(failing and all(v["rule"] and v["text"] for r in failing
                                        for v in r["verdicts"]["standard"]["violations"]))
        call = next(r for r in rows if r["sent"].startswith("__dlpack__("))
        self.assertIn("x.%s" % call["sent"], call["reproduction"])
        suite = tree.getroot().find("testsuite")
        cases = suite.findall("testcase")
        self.assertEqual(len(cases), len(rows))
        self.assertEqual(int(suite.get("failures")), len(failing))
        self.assertEqual(len([c for c in cases if c.find("failure") is not None]), len(failing))

    def test_a_consumer_with_skipped_rows(self):
        status, _, document, tree = self.run_cli("consumer", "checker_test:crash")
        self.assertEqual(status, 0, "without --strict the check ran")
        skipped = [r["id"] for r in document["rows"] if r["skipped"]]
        self.assertEqual(skipped, ["C18", "C19", "C20"])
        self.assertEqual(document["skipped"], 3)
        self.assertTrue(all(r["verdicts"]["standard"]["verdict"] == "skipped" for r in document["rows"]
                            if r["skipped"]))
        cases = tree.getroot().find("testsuite").findall("testcase")
        self.assertEqual(len([c for c in cases if c.find("skipped") is not None]), 3)
        self.assertIn("dlmap.check consumer", document["rows"][0]["reproduction"])


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    unittest.main()
