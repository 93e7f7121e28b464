# dlmap Python binding tests — buffer_formats_test: the Array API profile's module (//python/array_api). The buffer
# protocol's refusals (a dtype without a struct-module format, a contiguity the array does not have) and the repr of a
# read-only array.
"""A dtype the struct module cannot spell (sub-byte, half-width complex, bfloat16, float8, several lanes) is the
catalogue's not_implemented naming the dtype; a contiguity request the strides do not meet is BufferError with the
binding's own text; every refusal leaves no view holding the array (its reference count is back)."""

import sys
import unittest

import dlmap
import testing

PROFILE = "array_api"


def not_implemented(dtype):
    kind, template = testing.profile_error(PROFILE, "not_implemented")
    return kind, template.format(what=f"The buffer protocol for dtype {dtype}")


class ProfileTest(unittest.TestCase):
    def test_profile(self):
        self.assertEqual(dlmap.profile(), PROFILE)


class FormatTest(testing.DlmapTestCase):
    def assertNoBuffer(self, a, dtype):
        kind, text = not_implemented(dtype)
        refs = sys.getrefcount(a)
        self.assertRaisesExactly(kind, text, memoryview, a)
        self.assertEqual(sys.getrefcount(a), refs, "no view holds the array")

    def test_dtypes_without_a_struct_format(self):
        # int4 and uint4: sub-byte ints; complex32: no half-width complex in struct; bfloat16 and float8: type codes
        # the struct module has no letter for at all
        for dtype in ["int4", "uint4", "complex32", "bfloat16", "float8_e5m2"]:
            with self.subTest(dtype=dtype):
                self.assertNoBuffer(dlmap.empty(3, dtype), dtype)

    def test_several_lanes(self):
        buf = bytearray(16)
        a = dlmap.from_dlpack(testing.Producer(buf, (2, 32, 2), (2,)))  # float32 x 2 lanes
        self.assertNoBuffer(a, a.dtype)
        self.assertIn("x2", a.dtype)
        del a
        self.assertEqual(testing.deleted, ["producer"], "the producer's deleter ran once")

    def test_struct_formats(self):
        for dtype, fmt in [("int8", "b"), ("uint16", "H"), ("uint64", "Q"), ("float16", "e"), ("complex128", "Zd"),
                           ("bool", "?")]:
            with self.subTest(dtype=dtype):
                self.assertEqual(memoryview(dlmap.empty(2, dtype)).format, fmt)


class ContiguityTest(testing.DlmapTestCase):
    def strided(self, strides):
        self.buf = bytearray(64)
        return dlmap.from_dlpack(testing.Producer(self.buf, (2, 32, 1), (2, 2), strides=strides))

    def test_any_contiguous_of_fortran_order(self):
        a = self.strided((1, 2))
        view = testing.get_buffer(a, testing.PyBUF_ANY_CONTIGUOUS)
        self.assertEqual((view["shape"], view["strides"]), ((2, 2), (4, 8)))
        self.assertRaisesExactly(BufferError, "dlmap.Array is not C-contiguous", testing.get_buffer, a,
                                 testing.PyBUF_C_CONTIGUOUS)

    def test_any_contiguous_of_neither_order(self):
        a = self.strided((4, 2))  # rows 16 bytes apart, columns 8: no order at all
        refs = sys.getrefcount(a)
        self.assertRaisesExactly(BufferError, "dlmap.Array is not contiguous", testing.get_buffer, a,
                                 testing.PyBUF_ANY_CONTIGUOUS)
        self.assertRaisesExactly(BufferError, "dlmap.Array is not Fortran-contiguous", testing.get_buffer, a,
                                 testing.PyBUF_F_CONTIGUOUS)
        self.assertEqual(sys.getrefcount(a), refs, "a refused view holds no reference")
        self.assertEqual(testing.get_buffer(a, testing.PyBUF_STRIDES)["strides"], (16, 8))


class ReprTest(testing.DlmapTestCase):
    def test_read_only(self):
        a = dlmap.empty((2, 3), "int16")
        self.assertEqual(repr(a), "dlmap.Array(shape=(2, 3), dtype='int16', device=(1, 0), readonly=False)")
        a.readonly = True
        self.assertEqual(repr(a), "dlmap.Array(shape=(2, 3), dtype='int16', device=(1, 0), readonly=True)")


if __name__ == "__main__":
    unittest.main()
