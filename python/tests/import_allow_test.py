# dlmap Python binding — the import allow-lists of a profile (issue 27), on //python/import_allow's module, whose
# profile (python/import_allow/import_allow_profile.yaml) sets import.dtypes: [float32, int64], import.device_names:
# {cpu, host: kDLCPU}, import.device_tuples: false and import.unknown_flags: ignore, with the catalogue's own texts.
# Each test fails on a module built without its key (the defaults: every dtype the spec validates, every device type
# name and (type, id) tuples for device=, unknown flag bits refused with flags_unknown).
import array
import unittest

import dlmap
from testing import DlmapTestCase, Producer

NOT_IMPORTED = "The profile in force does not import DLPack data type "
NOT_UNDERSTOOD = "from_dlpack's device must be None or a device name this profile lists, got "


def producer(dtype=(2, 32, 1), **kwargs):
    return Producer(array.array("d", range(6)), dtype, (2,), **kwargs)


class Dtypes(DlmapTestCase):

    def test_listed_dtypes_import(self):
        for dtype in ((2, 32, 1), (0, 64, 1)):
            p = producer(dtype)
            self.assertEqual(dlmap.from_dlpack(p).shape, (2,))

    def test_other_dtypes_get_one_error(self):
        """Known types (float64, bool), types of a newer version than the tensor (fp8 in a 1.0 tensor), widths the
        spec does not list (float 8 bits) and unknown codes: all dtype_not_imported, before their own errors."""
        for dtype, version in (((2, 64, 1), (1, 3)), ((6, 8, 1), (1, 3)), ((10, 8, 1), (1, 0)), ((2, 8, 1), (1, 3)),
                               ((255, 8, 1), (1, 3)), ((4, 16, 1), (1, 3))):
            with self.subTest(dtype=dtype):
                with self.assertRaises(BufferError) as raised:
                    dlmap.from_dlpack(producer(dtype, version=version))
                self.assertTrue(str(raised.exception).startswith(NOT_IMPORTED), str(raised.exception))

    def test_lanes_are_still_checked(self):
        """The list names (code, bits); a float32 vector is import.scalar's business (array_api: no refusal there,
        the catalogue's dtype validation), never dtype_not_imported."""
        try:
            dlmap.from_dlpack(producer((2, 32, 2)))
        except Exception as error:  # noqa: BLE001 - any refusal but this one
            self.assertFalse(str(error).startswith(NOT_IMPORTED), str(error))


class DeviceNames(DlmapTestCase):

    def test_listed_names(self):
        for name in ("cpu", "host"):
            p = producer()
            self.assertEqual(dlmap.from_dlpack(p, device=name).device, (1, 0))
            self.assertEqual(p.calls[0].get("dl_device"), (1, 0))

    def test_none(self):
        self.assertEqual(dlmap.from_dlpack(producer(), device=None).device, (1, 0))

    def test_unlisted_name_before_the_producer_is_asked(self):
        for device in ("cuda", "kDLCPU", "CPU", ""):
            with self.subTest(device=device):
                p = producer()
                self.assertRaisesExactly(ValueError, NOT_UNDERSTOOD + device, dlmap.from_dlpack, p, device=device)
                self.assertEqual(p.calls, [])

    def test_tuples_refused(self):
        for device in ((1, 0), [1, 0], 1, 1.5, object):
            with self.subTest(device=device):
                p = producer()
                self.assertRaisesExactly(ValueError, NOT_UNDERSTOOD + str(device), dlmap.from_dlpack, p,
                                         device=device)
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
