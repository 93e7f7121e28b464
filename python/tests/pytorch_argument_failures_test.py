# dlmap Python binding tests — pytorch_argument_failures_test: the pytorch profile's module (//python/pytorch), whose
# profile reads a device name's ":N" index (import.device_index: colon) and words signature errors from the catalogue
# (arguments.signature_errors: catalogue). Names that only look indexed, keywords that are not strings, and a keyword
# whose comparison raises while the binding looks for a missing argument.
"""Each refusal is the catalogue's error or the exception the caller's own object raised, unchanged, and nothing is
left behind (DlmapTestCase)."""

import ctypes
import unittest

import dlmap
import testing

PROFILE = "pytorch"

# PyObject_Call(callable, args, kwargs) and PyObject_Vectorcall(callable, args, nargsf, kwnames), as a C caller makes
# them: the first refuses a non-str key itself for a vectorcall function, the second passes on whatever kwnames holds.
_call = ctypes.pythonapi.PyObject_Call
_call.restype = ctypes.py_object
_call.argtypes = [ctypes.py_object, ctypes.py_object, ctypes.py_object]
_vectorcall = ctypes.pythonapi.PyObject_Vectorcall
_vectorcall.restype = ctypes.py_object
_vectorcall.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_size_t, ctypes.py_object]


def vectorcall(fn, nargs, kwnames, values):
    args = (ctypes.py_object * len(values))(*values)
    return _vectorcall(fn, ctypes.cast(args, ctypes.c_void_p), nargs, kwnames)


def message(error_id, **fields):
    kind, template = testing.profile_error(PROFILE, error_id)
    return kind, template.format(**fields)


class ProfileTest(unittest.TestCase):
    def test_profile(self):
        self.assertEqual(dlmap.profile(), PROFILE)
        self.assertEqual(testing.profile_spec(PROFILE)["import"]["device_index"], "colon")


class DeviceIndexTest(testing.DlmapTestCase):
    def test_index_read_after_a_colon(self):
        a = dlmap.from_dlpack(dlmap.empty(2), device="cpu:0")
        self.assertEqual(a.device, (1, 0))

    def test_names_that_only_look_indexed(self):
        # digits without a colon before them, a name of digits only, a colon with no name before it, digits after
        # a character below '0': the whole text is the name, and no device type has it
        for name in ["cpu0", "123", ":1", "cpu-1"]:
            with self.subTest(name=name):
                kind, text = message("name_unknown", what="device type", name=name)
                self.assertRaisesExactly(kind, text, dlmap.from_dlpack, dlmap.empty(2), device=name)


class ReadOnlyExportTest(testing.DlmapTestCase):
    def test_read_only_asked_of_a_read_only_array(self):
        # read_only=True of an array already read-only is no one-off request: the array's own export, versioned by
        # export.max_version.absent_read_only, where a writable array's one-off read-only legacy export is refused
        kind, text = message("read_only_needs_versioned")
        self.assertRaisesExactly(kind, text, dlmap.empty(2).__dlpack__, read_only=True)
        a = dlmap.empty(2)
        a.readonly = True
        capsule = a.__dlpack__(read_only=True)
        self.assertEqual(testing.capsule_name(capsule), "dltensor_versioned")
        self.assertEqual(testing.versioned_tensor(capsule).flags & testing.FLAG_READ_ONLY, testing.FLAG_READ_ONLY)


    def test_read_only_whose_truth_raises(self):
        # arguments.read_only truth: read_only's __bool__ is asked, and what it raises is the caller's, on the fast
        # path and on the tuple-and-dict path (a keyword that is an equal but distinct string) alike
        raised = ArithmeticError("no truth")

        class Undecided:
            def __bool__(self):
                raise raised

        a = dlmap.empty(2)
        for path, name in [("keyword", "read_only"), ("tuple and dict", "".join(list("read_only")))]:
            with self.subTest(path=path):
                with self.assertRaises(ArithmeticError) as ctx:
                    a.__dlpack__(max_version=(1, 0), **{name: Undecided()})
                self.assertIs(ctx.exception, raised)


class SignatureTest(testing.DlmapTestCase):
    def test_keyword_that_is_not_a_string(self):
        # the catalogue's check skips it; CPython's parser then refuses it in its own words
        a = dlmap.empty(2)
        self.assertRaisesExactly(TypeError, "keywords must be strings", _call, dlmap.from_dlpack, (a,), {1: 2})
        self.assertRaisesExactly(TypeError, "keywords must be strings", _call, a.__dlpack__, (), {1: 2})
        # through vectorcall the int reaches dlmap's tuple-and-dict path: the catalogue's check skips it and
        # CPython's parser refuses it in its own words
        self.assertRaisesExactly(TypeError, "keywords must be strings", vectorcall, dlmap.from_dlpack, 1, (1,), [a, 2])
        self.assertRaisesExactly(TypeError, "keywords must be strings", vectorcall, a.__dlpack__, 0, (1,), [2])

    def test_missing_argument_named_by_the_catalogue(self):
        a = dlmap.empty(2)
        kind, text = message("argument_missing", function="from_dlpack", name="ext_tensor")
        self.assertRaisesExactly(kind, text, dlmap.from_dlpack, device=None)
        self.assertEqual(dlmap.from_dlpack(a).shape, (2,))

    def test_keyword_whose_comparison_raises(self):
        # a str subclass named "device" whose hash is the missing parameter's: looking "ext_tensor" up in the
        # keywords compares the two, and the exception its __eq__ raises is what the caller gets
        raised = LookupError("compared")

        class Key(str):
            def __hash__(self):
                return hash("ext_tensor")

            def __eq__(self, other):
                raise raised

        with self.assertRaises(LookupError) as ctx:
            dlmap.from_dlpack(**{Key("device"): None})
        self.assertIs(ctx.exception, raised)


if __name__ == "__main__":
    unittest.main()
