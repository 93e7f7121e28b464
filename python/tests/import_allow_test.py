# dlmap Python binding — the import allow-lists of a profile (issue 27), on the numpy profile's module
# (//python/numpy), whose profile (spec/profiles/numpy.yaml) sets import.dtypes (NumPy's 14 dtypes),
# import.device_names: {cpu: kDLCPU}, import.device_tuples: false and import.unknown_flags: ignore, with NumPy's
# texts. The lists are read from the YAML; each test imports what a list names and is refused what it leaves out.
# Each fails on a module built without its key (the defaults: every dtype the spec validates, every device type name
# and (type, id) tuples for device=, unknown flag bits refused with flags_unknown).
import array
import unittest

import dlmap
from testing import DlmapTestCase, Producer, device_type_value, dtype_names, profile_error, profile_spec

IMPORT = profile_spec("numpy")["import"]
DTYPES = dtype_names()
LISTED = {DTYPES[name] for name in IMPORT["dtypes"]}  # (code, bits)
UNLISTED = sorted(set(DTYPES.values()) - LISTED)  # the spec's other dtypes
WHOLE_BYTES = [(code, bits) for code, bits in UNLISTED if bits % 8 == 0]  # sub-byte ones meet import.whole_bytes first
NAMES = {name: device_type_value(type_name) for name, type_name in IMPORT["device_names"].items()}
# NumPy's contract texts, as numpy.yaml words them (NumPy 2.5's kinds; numpy_2_4.yaml keeps 2.4's RuntimeError).
NOT_IMPORTED = (BufferError, "Unsupported dtype in DLTensor.")
NOT_UNDERSTOOD = (ValueError, "Device not understood. Only \"cpu\" is allowed, but received: {got}")


def producer(dtype=(2, 32, 1), **kwargs):
    return Producer(array.array("d", range(6)), dtype, (2,), **kwargs)


class Dtypes(DlmapTestCase):

    def test_the_lists_are_nonempty_and_partial(self):
        self.assertTrue(LISTED and WHOLE_BYTES, (LISTED, UNLISTED))
        self.assertEqual(profile_error("numpy", "dtype_not_imported"), NOT_IMPORTED)

    def test_listed_dtypes_import(self):
        for code, bits in sorted(LISTED):
            with self.subTest(dtype=(code, bits)):
                p = producer((code, bits, 1))
                self.assertEqual(dlmap.from_dlpack(p).shape, (2,))

    def test_other_dtypes_get_one_error(self):
        """The spec's whole-byte dtypes the list leaves out, types of a newer version than the tensor (fp8 in a 1.0
        tensor), widths the spec does not list (float 8 bits) and unknown codes: all dtype_not_imported, before their
        own errors."""
        cases = [((code, bits, 1), (1, 3)) for code, bits in WHOLE_BYTES]
        cases += [((10, 8, 1), (1, 0)), ((2, 8, 1), (1, 3)), ((255, 8, 1), (1, 3))]
        for dtype, version in cases:
            with self.subTest(dtype=dtype):
                with self.assertRaises(NOT_IMPORTED[0]) as raised:
                    dlmap.from_dlpack(producer(dtype, version=version))
                self.assertEqual(str(raised.exception), NOT_IMPORTED[1])
                self.assertEqual(raised.exception.dlmap_id, "dtype_not_imported")

    def test_sub_byte_dtypes_are_refused_too(self):
        """Unlisted sub-byte dtypes (int4, …) meet numpy.yaml's import.whole_bytes first: NumPy's same refusal."""
        for code, bits in sorted(set(UNLISTED) - set(WHOLE_BYTES)):
            with self.subTest(dtype=(code, bits)):
                self.assertRaisesExactly(*NOT_IMPORTED, dlmap.from_dlpack, producer((code, bits, 1)))

    def test_lanes_are_still_checked(self):
        """The list names (code, bits); a float32 vector is import.scalar's business, never dtype_not_imported."""
        try:
            dlmap.from_dlpack(producer((2, 32, 2)))
        except Exception as error:  # noqa: BLE001 - any refusal but this one
            self.assertNotEqual(getattr(error, "dlmap_id", None), "dtype_not_imported", str(error))


class DeviceNames(DlmapTestCase):

    def test_listed_names(self):
        for name, device_type in NAMES.items():
            p = producer()
            self.assertEqual(dlmap.from_dlpack(p, device=name).device, (device_type, 0))
            self.assertEqual(p.calls[0].get("dl_device"), (device_type, 0))

    def test_none(self):
        self.assertEqual(dlmap.from_dlpack(producer(), device=None).device, (1, 0))

    def test_unlisted_name_before_the_producer_is_asked(self):
        for device in [d for d in ("cuda", "host", "kDLCPU", "CPU", "") if d not in NAMES]:
            with self.subTest(device=device):
                p = producer()
                self.assertRaisesExactly(NOT_UNDERSTOOD[0], NOT_UNDERSTOOD[1].format(got=device), dlmap.from_dlpack,
                                         p, device=device)
                self.assertEqual(p.calls, [])

    def test_tuples_refused(self):
        for device in ((1, 0), [1, 0], 1, 1.5, object):
            with self.subTest(device=device):
                p = producer()
                self.assertRaisesExactly(NOT_UNDERSTOOD[0], NOT_UNDERSTOOD[1].format(got=device), dlmap.from_dlpack,
                                         p, device=device)
                self.assertEqual(p.calls, [])

    def test_str_that_raises(self):
        class Bad:
            def __str__(self):
                raise KeyError("no text")
        with self.assertRaises(KeyError):
            dlmap.from_dlpack(producer(), device=Bad())


class UnknownFlags(DlmapTestCase):

    def test_unknown_bits_are_ignored(self):
        a = dlmap.from_dlpack(producer(flags=(1 << 40) | (1 << 1)))  # IS_COPIED and an unknown bit
        self.assertEqual(a.shape, (2,))

    def test_known_bits_still_count(self):
        a = dlmap.from_dlpack(producer(flags=(1 << 40) | 1))  # READ_ONLY and an unknown bit
        self.assertTrue(a.readonly)


if __name__ == "__main__":
    unittest.main()
