# dlmap Python binding tests — argument values the common spellings do not cover (python/errors.c): integers that
# come through __index__ and do not fit, device pairs whose parts are not ints or do not fit 32 bits, device names that
# are not UTF-8, max_version parts past uint32 or int64, and copy= objects that look like array scalars but are not
# boolean ones, or whose attributes raise. Each is refused with the catalogue's error (its id and text) or with the
# exception the object itself raised, and nothing is allocated.
import unittest

import dlmap
from testing import DlmapTestCase, profile_error

PROFILE = "array_api"  # //python/array_api:dlmap.so, the module this test runs on (python/BUILD)
TOO_WIDE = "the value does not fit in a 64-bit integer"


class Index:
    """An integer only through __index__ (as NumPy's integers are)."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


class Kind:
    def __init__(self, kind):
        self.kind = kind


class ScalarLike:
    """Looks like an array scalar to copy=: ndim and dtype.kind, as the array protocol marks them."""

    def __init__(self, ndim, kind):
        self.ndim = ndim
        self.dtype = Kind(kind)


class NdimRaises:
    @property
    def ndim(self):
        raise LookupError("ndim cannot be read")


class ArgumentValueTest(DlmapTestCase):
    def assertCatalogue(self, error_id, fn, *args, **kwargs):
        """fn(*args, **kwargs) raises error_id with its text under this profile; the template's fields from kwargs
        named fields=..."""
        fields = kwargs.pop("fields")
        kind, template = profile_error(PROFILE, error_id)
        e = self.assertRaisesExactly(kind, template.format(**fields), fn, *args, **kwargs)
        self.assertEqual(e.dlmap_id, error_id)

    def test_shape_through_index_past_int64(self):
        self.assertCatalogue("invalid_argument", dlmap.empty, (Index(2 ** 70),),
                             fields=dict(argument="shape", reason=TOO_WIDE))
        self.assertEqual(dlmap.empty((Index(2), Index(3))).shape, (2, 3), "__index__ is read when it fits")

    def test_device_pair_of_non_ints(self):
        self.assertCatalogue("argument_type_invalid", dlmap.empty, 2, device=(1.5, 0),
                             fields=dict(argument="device", got="tuple",
                                         expected="None, a device name or a (device_type, device_id) tuple of ints"))

    def test_device_id_past_int32(self):
        reason = "device_type and device_id must fit in 32-bit integers"
        for device in [(1, 2 ** 31), (1, -2 ** 31 - 1)]:
            with self.subTest(device=device):
                self.assertCatalogue("invalid_argument", dlmap.empty, 2, device=device,
                                     fields=dict(argument="device", reason=reason))

    def test_device_name_that_is_not_utf8(self):
        with self.assertRaises(UnicodeEncodeError):
            dlmap.empty(2, device="cpu\udc80")

    def test_max_version_parts_that_do_not_fit(self):
        a = dlmap.empty(2)
        reason = "major and minor must be integers from 0 to 4294967295"
        for version in [(1, 2 ** 32), (2 ** 32, 0), (1, -1)]:
            with self.subTest(version=version):
                self.assertCatalogue("invalid_argument", a.__dlpack__, max_version=version,
                                     fields=dict(argument="max_version", reason=reason))
        for version in [(2 ** 70, 0), (1, Index(-2 ** 64))]:
            with self.subTest(version=version):
                self.assertCatalogue("invalid_argument", a.__dlpack__, max_version=version,
                                     fields=dict(argument="max_version", reason=TOO_WIDE))

    def test_copy_objects_that_are_not_boolean_scalars(self):
        a = dlmap.empty(2)
        expected = "True, False, None or a boolean scalar (numpy.bool_)"
        for copy in [ScalarLike(0, 98), ScalarLike("0", "b"), ScalarLike(-1, "b"), ScalarLike(1, "b")]:
            with self.subTest(ndim=copy.ndim, kind=copy.dtype.kind):
                self.assertCatalogue("argument_type_copy", dlmap.from_dlpack, a, copy=copy,
                                     fields=dict(argument="copy", expected=expected, got="ScalarLike"))
        self.assertIsInstance(dlmap.from_dlpack(a, copy=ScalarLike(0, "b")), dlmap.Array, "a 0-d boolean scalar")

    def test_copy_objects_whose_attributes_raise(self):
        a = dlmap.empty(2)
        with self.assertRaisesRegex(LookupError, "^ndim cannot be read$"):
            dlmap.from_dlpack(a, copy=NdimRaises())
        with self.assertRaises(OverflowError):  # ndim read as a C long
            dlmap.from_dlpack(a, copy=ScalarLike(2 ** 100, "b"))


if __name__ == "__main__":
    unittest.main()
