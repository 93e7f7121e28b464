# dlmap Python binding — conformance table of the array_api module against the Python Array API standard's
# __dlpack__ / __dlpack_device__ / from_dlpack: one row per rule the binding can observe, with the exception class and
# exact text. The C rows are in tests/conformance/array_api_conformance_test.cc.
import array
import unittest

import dlmap
import testing
from testing import DlmapTestCase, Producer


class ArrayApiConformanceTest(DlmapTestCase):
    def test_profile(self):
        self.assertEqual(dlmap.profile(), "array_api")

    def test_A_I1_missing_methods_is_attribute_error(self):
        self.assertRaisesExactly(AttributeError, "The array passed to from_dlpack must have __dlpack__ and "
                                 "__dlpack_device__ methods.", dlmap.from_dlpack, object())

    def test_A_E1_capsule_names_follow_max_version(self):
        for max_version, name in ((None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"),
                                  ((1, 99), "dltensor_versioned")):
            with self.subTest(max_version):
                self.assertEqual(testing.capsule_name(dlmap.empty((2,)).__dlpack__(max_version=max_version)), name)

    def test_A_E8_copy_false_needing_a_copy_is_buffer_error(self):
        self.assertRaisesExactly(BufferError, "Specified device=(kDLCUDA, 0) which requires a copy since the source "
                                 "device is (kDLCPU, 0), however copy=False. Set copy=True or copy=None to perform the "
                                 "requested operation.", dlmap.empty((2,)).__dlpack__, max_version=(1, 0),
                                 dl_device=(2, 0), copy=False)

    def test_A_E13_stream_on_the_host_is_value_error(self):
        self.assertRaisesExactly(ValueError, "stream=5 is not valid for device type kDLCPU (1): this device type "
                                 "takes no stream, so stream must be None.", dlmap.empty((2,)).__dlpack__, stream=5)

    def test_A_I5_versioned_first_then_a_plain_call(self):
        p = Producer(array.array("f", range(3)), (2, 32, 1), (3,))
        dlmap.from_dlpack(p)
        self.assertIn("max_version", p.calls[0], "asked for a versioned capsule first")
        old = Producer(array.array("f", range(3)), (2, 32, 1), (3,), legacy_only=True)
        self.assertEqual(dlmap.from_dlpack(old).shape, (3,))
        self.assertEqual(old.calls[-1], {}, "an old producer gets a plain __dlpack__()")
        self.assertEqual(testing.live_hand_made(), 0)

    def test_A_I2_any_strides_import_as_a_view(self):
        p = Producer(array.array("f", range(6)), (2, 32, 1), (2, 3), strides=(0, 1))
        a = dlmap.from_dlpack(p, copy=False)
        self.assertEqual(a.strides, (0, 1), "strides in elements, as DLPack gives them")


if __name__ == "__main__":
    unittest.main()
