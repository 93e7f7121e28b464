# dlmap Python binding tests — export_keys_test: the numpy profile's module (//python/numpy, spec/profiles/numpy.yaml:
# array_api plus the optional export keys of issue 27, set as NumPy 2.x exports, and NumPy 2.4's kinds and texts for
# the argument type errors, pinned here as NumPy's contract).
"""Each case fails without its key or its catalogue error: array_api stamps min(max_version, current), takes any host
id, validates streams by convention, raises one argument_type_invalid text for every argument and takes only a bool
(or None) as copy."""

import sys
import unittest

import dlmap
import testing


class ExportKeysTest(testing.DlmapTestCase):

    def test_profile(self):
        self.assertEqual(dlmap.profile(), "numpy")

    def test_versioned_capsules_are_stamped_1_0(self):
        a = dlmap.empty(3, "float32")
        for requested in [(1, 0), (1, 1), testing.CURRENT, (1, 99), (2, 0)]:
            v = testing.versioned_tensor(a.__dlpack__(max_version=requested))
            self.assertEqual((v.version.major, v.version.minor), (1, 0), requested)

    def test_host_device_id_other_than_zero(self):
        a = dlmap.empty(3, "float32")
        self.assertRaisesExactly(BufferError, "unsupported device requested", a.__dlpack__, dl_device=(1, 1))
        self.assertEqual(testing.capsule_name(a.__dlpack__(dl_device=(1, 0))), "dltensor")

    def test_every_stream_but_none(self):
        a = dlmap.empty(3, "float32")
        for stream in (-1, 0, 1, 5):
            self.assertRaisesExactly(ValueError, "NumPy only supports stream=None.", a.__dlpack__, stream=stream)
        self.assertEqual(testing.capsule_name(a.__dlpack__(stream=None)), "dltensor")

    def test_argument_type_errors_per_argument(self):
        a = dlmap.empty(3, "float32")
        for kwargs, cls, error_id, message in [
                ({"max_version": "1.0"}, TypeError, "argument_type_max_version",
                 "max_version must be None or a tuple with two elements."),
                ({"max_version": (1, 0, 0)}, TypeError, "argument_type_max_version",
                 "max_version must be None or a tuple with two elements."),
                ({"dl_device": "cpu"}, TypeError, "argument_type_dl_device", "dl_device must be a tuple"),
                ({"dl_device": (1,)}, TypeError, "argument_length_dl_device",
                 "function takes exactly 2 arguments (1 given)"),
                ({"dl_device": (1, 0, 0)}, TypeError, "argument_length_dl_device",
                 "function takes exactly 2 arguments (3 given)"),
                ({"copy": "yes"}, ValueError, "argument_type_copy",
                 "strings are not allowed for 'copy' keyword. Use True/False/None instead."),
                ({"stream": "0"}, ValueError, "argument_type_stream", "NumPy only supports stream=None.")]:
            with self.subTest(kwargs):
                with self.assertRaises(cls) as raised:
                    a.__dlpack__(**kwargs)
                self.assertIs(type(raised.exception), cls)
                self.assertEqual(str(raised.exception), message)
                self.assertEqual(raised.exception.dlmap_id, error_id)

    def test_max_version_major_is_read_by_python_and_the_minor_never(self):
        """arguments.max_version tuple_major (N-E6, N-E6a): a tuple of two items (else the catalogue's text), item 0
        converted by PyLong_AsLong with CPython's own errors, item 1 never read."""
        a = dlmap.empty(3, "float32")
        for requested, name in [((1, "x"), "dltensor_versioned"), ((True, None), "dltensor_versioned"),
                                ((0, 99), "dltensor"), ((-1, 0), "dltensor"), ((2 ** 40, 0), "dltensor_versioned")]:
            with self.subTest(requested):
                self.assertEqual(testing.capsule_name(a.__dlpack__(max_version=requested)), name)
        for requested, cls, message in [
                (("1", 0), TypeError, "'str' object cannot be interpreted as an integer"),
                ((1.0, 0), TypeError, "'float' object cannot be interpreted as an integer"),
                ((2 ** 70, 0), OverflowError, "Python int too large to convert to C long"),
                ([1, 0], TypeError, "max_version must be None or a tuple with two elements."),
                ((1,), TypeError, "max_version must be None or a tuple with two elements.")]:
            with self.subTest(requested):
                self.assertRaisesExactly(cls, message, a.__dlpack__, max_version=requested)

    def test_dl_device_items_are_read_as_c_ints(self):
        """arguments.dl_device tuple_c_ints (N-E15b): PyArg_ParseTuple("ii")'s own errors for the items."""
        a = dlmap.empty(3, "float32")
        for device, cls, message in [
                (("a", 0), TypeError, "'str' object cannot be interpreted as an integer"),
                ((1, 0.0), TypeError, "'float' object cannot be interpreted as an integer"),
                ((2 ** 40, 0), OverflowError, "signed integer is greater than maximum"),
                ((1, -2 ** 40), OverflowError, "signed integer is less than minimum")]:
            with self.subTest(device):
                self.assertRaisesExactly(cls, message, a.__dlpack__, dl_device=device)
        self.assertEqual(testing.capsule_name(a.__dlpack__(dl_device=(True, 0))), "dltensor")  # bool is an int here

    def test_signature_errors_in_npy_argparse_words(self):
        """arguments.signature_errors catalogue and from_dlpack_object obj (N-E16, N-I6a, N-I6b): NumPy's argument
        parser's texts, pinned as NumPy 2.4 words them; array_api leaves them to CPython's parser."""
        a = dlmap.empty(3, "float32")
        for call, error_id, message in [
                (lambda: a.__dlpack__(None), "argument_positional_count",
                 "__dlpack__() takes 0 positional arguments but 1 was given"),
                (lambda: a.__dlpack__(None, None), "argument_positional_count",
                 "__dlpack__() takes 0 positional arguments but 2 were given"),
                (lambda: a.__dlpack__(foo=1), "argument_keyword_unknown",
                 "__dlpack__() got an unexpected keyword argument 'foo'"),
                (lambda: dlmap.from_dlpack(a, None), "argument_positional_count",
                 "from_dlpack() takes 1 positional arguments but 2 were given"),
                (lambda: dlmap.from_dlpack(), "argument_missing",
                 "from_dlpack() missing required argument 'obj' (pos 0)"),
                (lambda: dlmap.from_dlpack(a, obj=a), "argument_given_twice",
                 "argument for from_dlpack() given by name ('obj') and position (position 0)"),
                (lambda: dlmap.from_dlpack(x=a), "argument_keyword_unknown",
                 "from_dlpack() got an unexpected keyword argument 'x'"),
                (lambda: dlmap.from_dlpack(a, stream=None), "argument_keyword_unknown",
                 "from_dlpack() got an unexpected keyword argument 'stream'"),
                (lambda: dlmap.from_dlpack(a, **{"\udc80": 1}), "argument_keyword_unknown",
                 "from_dlpack() got an unexpected keyword argument '\\udc80'")]:
            with self.subTest(message):
                self.assertEqual(self.assertRaisesExactly(TypeError, message, call).dlmap_id, error_id)
        self.assertEqual(dlmap.from_dlpack(obj=a).shape, (3,))

    def test_copy_is_read_by_truth_value(self):
        # export.copy_argument truth (N-E13a): any object but a str is its truth value; its __bool__'s error propagates
        a = dlmap.empty(3, "float32")
        view = testing.versioned_tensor(a.__dlpack__(max_version=(1, 0))).dl_tensor.data
        for copy, copied in [(2, True), (0, False), ([1], True), ((), False), (b"", False)]:
            with self.subTest(copy=copy):
                t = testing.versioned_tensor(a.__dlpack__(max_version=(1, 0), copy=copy)).dl_tensor
                self.assertEqual(t.data != view, copied)

        class Undecided:
            def __bool__(self):
                raise ZeroDivisionError("no truth value")

        self.assertRaisesExactly(ZeroDivisionError, "no truth value", a.__dlpack__, copy=Undecided())


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
