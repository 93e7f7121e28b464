# dlmap Python binding — the import gates (issue 27) on the pytorch profile's module (//python/pytorch), whose profile
# (spec/profiles/pytorch.yaml) sets import.version_gating: known (T-I18, T-I46), import.strides.negative: refuse
# (T-I27), import.capsule_arguments: refuse (T-I37), import.dtypes with float4_e2m1fn as a pair (T-I44, T-I45),
# import.dtype_errors: per_field (T-I14..T-I16, T-I47..T-I50), import.ask.retry as a list (T-I4),
# import.copy_trust: producer (T-I33) and import.device_query: capsule (T-I24), with PyTorch's kinds and texts. Each test fails on a
# module built without its key (the defaults: a dtype newer than the tensor's stamp is dtype_not_in_version, negative
# strides are imported, a capsule with copy= is from_dlpack_missing_methods after the arguments are read, every
# refused dtype is dtype_not_imported, a vector is dtype_lanes_not_one).
import array
import unittest

import dlmap
from testing import (DlmapTestCase, Producer, capsule_name, deleted, device_type_value, dtype_names, profile_error,
                     profile_spec, spec_yaml)

IMPORT = profile_spec("pytorch")["import"]
NEGATIVE = profile_error("pytorch", "strides_negative")
WITH_ARGUMENTS = profile_error("pytorch", "capsule_with_arguments")
DTYPES = dtype_names()
# import.dtypes as {(code, bits): lanes}, 0 for any: a name, or {name, lanes} for the one lane count it is imported with
LISTED = dict((DTYPES[item], 0) if isinstance(item, str) else (DTYPES[item["name"]], item["lanes"])
              for item in IMPORT["dtypes"])
# dtype_bits_not_imported's {code_label}: import.dtype_code_names' label, else the code's enumerator
CODE_LABELS = {code["value"]: IMPORT.get("dtype_code_names", {}).get(code["name"], code["name"])
               for code in spec_yaml("dtypes.yaml")["dtype_codes"]}


def producer(dtype=(2, 64, 1), shape=(3,), tag="producer", **options):
    return Producer(array.array("d", range(6)), dtype, shape, tag=tag, **options)


class Profile(DlmapTestCase):

    def test_the_module_is_pytorchs(self):
        self.assertEqual(dlmap.profile(), "pytorch")
        self.assertEqual((IMPORT["version_gating"], IMPORT["strides"]["negative"], IMPORT["capsule_arguments"]),
                         ("known", "refuse", "refuse"))


class VersionGating(DlmapTestCase):

    def test_fp8_stamped_before_it_was_introduced(self):
        """float8_e4m3fn and float8_e8m0fnu (DLPack 1.1+) in a tensor stamped 1.0: imported, as PyTorch does."""
        for dtype in ((10, 8, 1), (14, 8, 1)):
            with self.subTest(dtype=dtype):
                imported = dlmap.from_dlpack(producer(dtype, shape=(4,), version=(1, 0)))
                self.assertEqual(imported.shape, (4,))

    def test_unknown_flags_are_still_not_read(self):
        """known lifts the version check only; flag bits the spec does not know stay import.unknown_flags' (ignore)."""
        p = producer(version=(1, 0))
        p.flags = 1 << 40
        self.assertEqual(dlmap.from_dlpack(p).shape, (3,))


class NegativeStrides(DlmapTestCase):

    def test_refused_with_aten_text(self):
        for shape, strides, offset, shown in [((3,), (-1,), 16, "3"), ((2, 3), (-3, 1), 24, "2, 3")]:
            for copy in (None, True, False):
                with self.subTest(shape=shape, copy=copy):
                    p = producer(shape=shape, strides=strides, byte_offset=offset)
                    with self.assertRaises(NEGATIVE[0]) as raised:
                        dlmap.from_dlpack(p, copy=copy)
                    self.assertEqual(raised.exception.dlmap_id, "strides_negative")
                    self.assertEqual(str(raised.exception),
                                     NEGATIVE[1].format(shape=shown, strides=", ".join(map(str, strides))))

    def test_released(self):
        deleted.clear()
        with self.assertRaises(NEGATIVE[0]):
            dlmap.from_dlpack(producer(strides=(-1,), byte_offset=16, tag="negative"))
        self.assertEqual(deleted, ["negative"])

    def test_negative_strides_never_followed(self):
        """A size-1 dimension's stride and an empty tensor's strides reach nothing: imported (ATen's overflow check
        multiplies each stride by its size minus one, and stops at an empty dimension)."""
        for shape, strides in [((1, 3), (-5, 1)), ((0, 3), (-3, 1)), ((3,), (1,))]:
            with self.subTest(shape=shape, strides=strides):
                self.assertEqual(dlmap.from_dlpack(producer(shape=shape, strides=strides)).shape, shape)


class CapsuleArguments(DlmapTestCase):

    def test_capsule_with_device_or_copy(self):
        for kwargs in ({"copy": True}, {"copy": False}, {"device": "cpu"}, {"device": object(), "copy": None},
                       {"copy": "not a bool"}):
            with self.subTest(kwargs=kwargs):
                p = producer(tag="capsule")
                capsule = p.__dlpack__(max_version=(1, 0))
                with self.assertRaises(WITH_ARGUMENTS[0]) as raised:
                    dlmap.from_dlpack(capsule, **kwargs)
                self.assertEqual(str(raised.exception), WITH_ARGUMENTS[1])
                self.assertEqual(raised.exception.dlmap_id, "capsule_with_arguments")
                self.assertEqual(capsule_name(capsule), "dltensor_versioned")  # untouched: still importable
                del capsule

    def test_none_arguments_and_producers_are_not_refused(self):
        capsule = producer().__dlpack__(max_version=(1, 0))
        with self.assertRaises(Exception) as raised:   # dlmap takes producers, not capsules: its own refusal
            dlmap.from_dlpack(capsule, device=None, copy=None)
        self.assertNotEqual(getattr(raised.exception, "dlmap_id", None), "capsule_with_arguments")
        del capsule
        self.assertEqual(dlmap.from_dlpack(producer(), copy=True).shape, (3,))

    def test_a_device_that_is_not_a_string(self):
        """import.device_tuples false and import_device_not_understood's {got_type} (T-I35): torch/utils/dlpack.py's
        assert names the type of anything but a str, a (type, id) tuple included; a name still works."""
        for device, shown in ((5, "<class 'int'>"), ((1, 0), "<class 'tuple'>"), (object(), "<class 'object'>")):
            with self.subTest(device=device):
                p = producer(tag="device")
                error = self.assertRaisesExactly(AssertionError, "from_dlpack: unsupported device type: " + shown,
                                                 dlmap.from_dlpack, p, device=device)
                self.assertEqual(error.dlmap_id, "import_device_not_understood")
                self.assertEqual(p.calls, [])  # refused before the producer is asked
        self.assertEqual(dlmap.from_dlpack(producer(), device="cpu").shape, (3,))

    def test_a_device_name_with_an_index(self):
        """import.device_index colon and {device:tuple} (T-I52): "cuda:1" is (kDLCUDA, 1), and the refusal to move
        without a copy prints both devices as torch/utils/dlpack.py does, numbers only."""
        cuda = device_type_value("kDLCUDA")
        error = self.assertRaisesExactly(
            ValueError, "cannot move DLPack tensor from device (%d, 0) to (%d, 1) without copying. Set copy=None or "
            "copy=True." % (device_type_value("kDLCPU"), cuda), dlmap.from_dlpack, producer(), device="cuda:1",
            copy=False)
        self.assertEqual(error.dlmap_id, "import_copy_to_device_forbidden")
        for name in ("cuda:", "cuda:x", ":1", "cuda:1:2", "cuda:1234567890", "nosuch:1"):
            with self.subTest(name=name):
                error = self.assertRaisesExactly(ValueError, "Unknown device type name '%s'" % name, dlmap.from_dlpack,
                                                 producer(), device=name)
                self.assertEqual(error.dlmap_id, "name_unknown")

    def test_a_device_name_without_a_dlpack_type(self):
        """import.device_names_without_type (T-I36): torch devices ATen cannot pack are refused by the string as
        passed, index included, before the producer is asked; a name the list lacks is read as before."""
        kind, template = profile_error("pytorch", "import_device_without_type")
        names = profile_spec("pytorch")["import"]["device_names_without_type"]
        for name in names + [n + ":3" for n in names]:
            with self.subTest(name=name):
                p = producer(tag="device")
                error = self.assertRaisesExactly(kind, template.format(name=name), dlmap.from_dlpack, p, device=name,
                                                 copy=False)
                self.assertEqual(error.dlmap_id, "import_device_without_type")
                self.assertEqual(p.calls, [])
        self.assertRaisesExactly(BufferError, "Cannot pack tensors on meta", dlmap.from_dlpack, producer(),
                                 device="meta")  # the contract's text (docs/contracts/pytorch.md)
        self.assertEqual(dlmap.from_dlpack(producer(), device="cpu:0").shape, (3,))


def refused_by(code, bits, lanes):
    """The error import.dtype_errors per_field gives a (code, bits, lanes): by the first field the list lacks."""
    rows = {b: listed_lanes for (c, b), listed_lanes in LISTED.items() if c == code}
    if not rows:
        return "dtype_code_not_imported"
    if bits not in rows:
        return "dtype_bits_not_imported"
    return None if rows[bits] in (0, lanes) else "dtype_lanes_not_imported"


class DtypeRefusals(DlmapTestCase):

    def test_told_by_the_field_that_fails(self):
        """Every (code, bits) of the spec the list leaves out, widths the spec does not list, unknown codes and a
        listed pair's other lane counts: refused by the first field the list lacks (code, bits, lanes)."""
        cases = {(code, bits, 1) for code, bits in set(DTYPES.values()) - set(LISTED)}
        cases |= {(0, 12, 1), (6, 16, 1), (4, 32, 1), (99, 8, 1), (255, 64, 1)}
        cases |= {(code, bits, n) for (code, bits), lanes in LISTED.items() if lanes for n in (1, lanes + 1)}
        for code, bits, lanes in sorted(cases):
            error_id = refused_by(code, bits, lanes)
            kind, text = profile_error("pytorch", error_id)
            with self.subTest(code=code, bits=bits, lanes=lanes):
                deleted.clear()
                with self.assertRaises(kind) as raised:
                    dlmap.from_dlpack(producer((code, bits, lanes), tag="refused"))
                self.assertEqual(raised.exception.dlmap_id, error_id)
                self.assertEqual(str(raised.exception),
                                 text.format(code=code, bits=bits, lanes=lanes, code_label=CODE_LABELS.get(code)))
                self.assertEqual(deleted, ["refused"])

    def test_listed_lanes_import(self):
        """A {name, lanes} entry imports that dtype with those lanes although import.scalar refuses other vectors."""
        for (code, bits), lanes in sorted(LISTED.items()):
            if lanes:
                with self.subTest(code=code, bits=bits, lanes=lanes):
                    imported = dlmap.from_dlpack(producer((code, bits, lanes), shape=(3,)))
                    self.assertEqual(imported.shape, (3,))
        lanes_not_one = profile_error("pytorch", "dtype_lanes_not_one")
        self.assertRaisesExactly(lanes_not_one[0], lanes_not_one[1].format(code=2, lanes=2), dlmap.from_dlpack,
                                 producer((2, 32, 2)))

    def test_aten_texts(self):
        """The contract's texts (docs/contracts/pytorch.md T-I14, T-I15, T-I16, T-I50, T-I44), pinned."""
        for dtype, text in [((0, 12, 1), "Unsupported kInt bits 12"), ((99, 8, 1), "Unsupported code 99"),
                            ((6, 16, 1), "Unsupported kDLBool bits 16"), ((4, 32, 1), "Unsupported kFloat bits 32"),
                            ((17, 4, 1), "Unsupported kDLFloat4_e2m1fn lanes 1")]:
            with self.subTest(dtype=dtype):
                self.assertRaisesExactly(BufferError, text, dlmap.from_dlpack, producer(dtype))



class Picky(Producer):
    """A producer whose __dlpack__ takes only the keywords in `accepts` (always: every call raises TypeError); each
    call is recorded in `calls`."""

    def __init__(self, accepts, always=False):
        super().__init__(array.array("d", range(6)), (2, 64, 1), (3,), tag="picky")
        self.accepts, self.always = set(accepts), always

    def __dlpack__(self, **kwargs):
        if self.always or set(kwargs) - self.accepts:
            self.calls.append(dict(kwargs))
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        return super().__dlpack__(**kwargs)


class RetryLadder(DlmapTestCase):
    """import.ask.retry as a list (T-I4): after each TypeError the call is made again without the next keyword listed,
    whether it was passed or not; the last call's TypeError propagates. Fails on a module with one plain retry."""

    RETRY = IMPORT["ask"]["retry"]
    FIRST = {"max_version": tuple(map(int, IMPORT["ask"]["max_version"].split("."))), "copy": True}

    def test_keywords_dropped_in_order(self):
        p = Picky(accepts=())
        imported = dlmap.from_dlpack(p, copy=True)
        expected, kwargs = [], dict(self.FIRST)
        for drop in [None] + self.RETRY:
            kwargs.pop(drop, None)
            expected.append(dict(kwargs))
            if not kwargs:
                break
        self.assertEqual(p.calls, expected)
        self.assertEqual(imported.shape, (3,))
        self.assertTrue(imported.copied)  # copy=True never reached the producer that answered

    def test_every_step_asked_then_the_type_error(self):
        p = Picky(accepts=(), always=True)
        with self.assertRaises(TypeError):
            dlmap.from_dlpack(p)
        self.assertEqual(len(p.calls), 1 + len(self.RETRY))
        self.assertEqual(p.calls[0], {"max_version": self.FIRST["max_version"]})

    def test_a_producer_taking_the_first_call_is_asked_once(self):
        p = Picky(accepts=("max_version", "copy"))
        dlmap.from_dlpack(p, copy=True)
        self.assertEqual(p.calls, [self.FIRST])



class CopyTrust(DlmapTestCase):
    """import.copy_trust producer (T-I33): a producer passed copy=True made the copy, IS_COPIED or not; one that never
    saw copy=True (the retry list dropped it) gets dlmap's copy. Fails on a module whose trust is the flag."""

    def test_producer_passed_copy_is_trusted(self):
        p = producer(tag="trusted")  # takes every keyword, ignores copy, sets no flag
        imported = dlmap.from_dlpack(p, copy=True)
        self.assertIs(p.calls[0].get("copy"), True)
        self.assertEqual(imported.data_ptr, p.buffer.buffer_info()[0])
        self.assertFalse(imported.copied)

    def test_producer_never_passed_copy_is_copied(self):
        p = Picky(accepts=("max_version",))
        imported = dlmap.from_dlpack(p, copy=True)
        self.assertNotIn("copy", p.calls[-1])
        self.assertNotEqual(imported.data_ptr, p.buffer.buffer_info()[0])
        self.assertTrue(imported.copied)


class DeviceQueryCapsule(DlmapTestCase):
    """import.device_query capsule (T-I24): __dlpack_device__ is asked, but its answer only chooses the stream; the
    capsule's own device decides, whatever type the report names. Fails on a module whose report is checked."""

    def test_report_of_a_type_not_imported_from(self):
        accepted = {device_type_value(name) for name in IMPORT["accept"]}
        for reported in sorted({device_type_value("kDLCUDAHost"), 99} - accepted):
            with self.subTest(reported=reported):
                p = producer(reported=(reported, 0), tag="reported")
                imported = dlmap.from_dlpack(p)
                self.assertEqual(imported.device, (device_type_value("kDLCPU"), 0))
                self.assertEqual([sorted(call) for call in p.calls], [["max_version"]])  # no stream asked


if __name__ == "__main__":
    unittest.main()
