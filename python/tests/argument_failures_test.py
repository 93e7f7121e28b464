# dlmap Python binding tests — argument_failures_test: the Array API profile's module (//python/array_api) given wrong
# arguments and objects that raise or lie: each call fails with CPython's own parser text or the catalogue's error,
# and leaves nothing behind (DlmapTestCase checks dlmap's allocations and exports after every test).
"""What the binding does on the paths a well-behaved caller never takes: PyArg's refusals of empty(), from_dlpack()
and set_device_allocator(); __dlpack__'s slow keyword path (more keywords than it has, a name that is an equal but
distinct string) giving the fast path's errors word for word; a capsule without a name; a producer on a device type
the profile does not import from whose str() raises or cannot be encoded; dlmap.empty of sub-byte types whose size
overflows or cannot be allocated."""

import ctypes
import os
import subprocess
import sys
import textwrap
import unittest

import dlmap
import testing

PROFILE = "array_api"

# The Python C-API's PyCapsule_New, for a capsule whose name is NULL (a Python producer cannot make one otherwise).
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def fresh(name):
    """A str equal to `name` that is not the interned object a call site in source passes."""
    return "".join(list(name))


def message(error_id, **fields):
    """(kind, text) of a catalogue error under this profile, its placeholders filled."""
    kind, template = testing.profile_error(PROFILE, error_id)
    return kind, template.format(**fields)


class ProfileTest(unittest.TestCase):
    def test_profile(self):
        self.assertEqual(dlmap.profile(), PROFILE)


class EmptyArgumentsTest(testing.DlmapTestCase):
    def test_pyarg_refusals(self):
        # array_api words signature errors by CPython's parser (arguments.signature_errors builtin)
        self.assertRaisesExactly(TypeError, "empty() missing required argument 'shape' (pos 1)", dlmap.empty)
        self.assertRaisesExactly(TypeError, "empty() takes at most 2 positional arguments (3 given)",
                                 dlmap.empty, 2, "float32", "cpu")

    def test_bool_inside_a_shape_tuple(self):
        kind, text = message("argument_type_invalid", argument="shape", expected="an int or a tuple of ints",
                             got="bool")
        self.assertRaisesExactly(kind, text, dlmap.empty, (2, True))
        self.assertRaisesExactly(kind, text, dlmap.empty, [True])

    def test_dtype_name_that_is_no_utf8(self):
        with self.assertRaises(UnicodeEncodeError) as ctx:
            dlmap.empty(2, "\ud800")
        self.assertIs(type(ctx.exception), UnicodeEncodeError)
        self.assertEqual(ctx.exception.reason, "surrogates not allowed")

    def test_sub_byte_shape_with_a_negative_extent(self):
        # the zero-filled scratch source of a sub-byte dtype is sized only for a shape export accepts: a negative
        # extent stops the count at once (before the extents after it), and export reports it
        self.assertRaisesExactly(BufferError, "Dimension 0 of the DLPack tensor has negative extent -1",
                                 dlmap.empty, (-1, 4), "int4")
        self.assertRaisesExactly(BufferError, "Dimension 1 of the DLPack tensor has negative extent -1",
                                 dlmap.empty, (4, -1), "int4")

    def test_sub_byte_element_count_that_overflows(self):
        # the element count past 2^64 (before the last extent is read), and a count whose bits pass 2^64
        for shape in [(2 ** 40, 2 ** 40, 1), (2 ** 62,)]:
            with self.subTest(shape=shape):
                self.assertRaisesExactly(
                    BufferError,
                    f"The DLPack tensor's element count or byte extent overflows (shape [{', '.join(map(str, shape))}], "
                    "strides [none: compact row-major])", dlmap.empty, shape, "uint4")

    def test_sub_byte_scratch_that_cannot_be_allocated(self):
        # 2^61 - 1 four-bit elements: a size dlmap accepts (2^63 - 4 bits) whose scratch (2^60 bytes) no allocator
        # gives; the catalogue's out_of_memory, and dlmap's counted allocations back where they were. In a child that
        # lets ASan's calloc return NULL for it (its default is to abort on a size that large).
        count = 2 ** 61 - 1
        kind, text = message("out_of_memory", nbytes=count * 4 // 8 + 1, what="a zero-filled source")
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":allocator_may_return_null=1"
        child = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import dlmap
            before = dlmap._stats()["live_allocations"]
            try:
                dlmap.empty({count}, "int4")
            except BaseException as e:
                print(type(e).__name__)
                print(e)
            print(dlmap._stats()["live_allocations"] - before)
            """)], capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual((child.returncode, child.stdout), (0, f"{kind.__name__}\n{text}\n0\n"), child.stderr)


class FromDlpackArgumentsTest(testing.DlmapTestCase):
    def test_pyarg_refusals(self):
        a = dlmap.empty(2)
        self.assertRaisesExactly(TypeError, "from_dlpack() missing required argument 'x' (pos 1)", dlmap.from_dlpack)
        self.assertRaisesExactly(TypeError, "from_dlpack() takes at most 1 positional argument (2 given)",
                                 dlmap.from_dlpack, a, None)
        refs = sys.getrefcount(a)
        self.assertRaises(TypeError, dlmap.from_dlpack, a, None)
        self.assertEqual(sys.getrefcount(a), refs, "a refused call holds no reference to its argument")

    def test_device_name_that_is_no_utf8(self):
        a = dlmap.empty(2)
        with self.assertRaises(UnicodeEncodeError) as ctx:
            dlmap.from_dlpack(a, device="\ud800")
        self.assertEqual(ctx.exception.reason, "surrogates not allowed")

    def test_capsule_without_a_name(self):
        # PyCapsule_New(p, NULL, NULL): no name, no destructor, so no owner to release; the catalogue names it "NULL"
        capsule = _capsule_new(16, None, None)
        kind, text = message("capsule_consumed", expected="dltensor_versioned", got="NULL")
        self.assertRaisesExactly(kind, text, dlmap.from_dlpack, testing.Wrap(capsule))
        self.assertIsNone(testing.capsule_name(capsule), "the capsule is left as it was")


class PlatformStatusArgumentsTest(testing.DlmapTestCase):
    def test_platform_name_that_is_no_utf8(self):
        with self.assertRaises(UnicodeEncodeError) as ctx:
            dlmap.platform_status("\ud800")
        self.assertEqual(ctx.exception.reason, "surrogates not allowed")


class UnimportedDevice:
    """A producer on device type 99, which no profile imports from: from_dlpack refuses it naming str(x), before
    __dlpack__ is asked. `text` is what __str__ returns, or an exception it raises."""

    def __init__(self, text):
        self.text = text
        self.asked = False

    def __dlpack_device__(self):
        return (99, 0)

    def __dlpack__(self, **kwargs):
        self.asked = True
        raise AssertionError("__dlpack__ must not be asked")

    def __str__(self):
        if isinstance(self.text, BaseException):
            raise self.text
        return self.text


class UnsupportedSourceTest(testing.DlmapTestCase):
    def test_named_by_str(self):
        x = UnimportedDevice("plain")
        kind, text = message("import_unsupported_device_type", dl_device_type=99, array="plain")
        self.assertRaisesExactly(kind, text, dlmap.from_dlpack, x)
        self.assertFalse(x.asked)

    def test_str_that_raises(self):
        # the producer's own exception, unchanged, instead of the refusal that would have named it
        raised = KeyError("str")
        x = UnimportedDevice(raised)
        with self.assertRaises(KeyError) as ctx:
            dlmap.from_dlpack(x)
        self.assertIs(ctx.exception, raised)
        self.assertFalse(x.asked)

    def test_str_that_is_no_utf8(self):
        x = UnimportedDevice("\ud800")
        with self.assertRaises(UnicodeEncodeError) as ctx:
            dlmap.from_dlpack(x)
        self.assertEqual(ctx.exception.reason, "surrogates not allowed")
        self.assertFalse(x.asked)


class DlpackKeywordsTest(testing.DlmapTestCase):
    def test_more_keywords_than_it_takes(self):
        # six keywords: past what the fast path reads, so PyArg words it
        a = dlmap.empty(2)
        self.assertRaisesExactly(TypeError, "__dlpack__() takes at most 4 keyword arguments (6 given)", a.__dlpack__,
                                 stream=None, max_version=None, dl_device=None, copy=None, read_only=None, extra=1)

    def test_distinct_equal_names_give_the_fast_paths_errors(self):
        # a keyword that is not the interned name goes through the tuple-and-dict path: the same error, word for word
        a = dlmap.empty(2)
        for name, value in [("dl_device", "cpu"), ("copy", "yes"), ("max_version", "1.0"), ("stream", "0"),
                            ("dl_device", (1, -1))]:
            with self.subTest(name=name, value=value):
                with self.assertRaises(BaseException) as fast:
                    a.__dlpack__(**{name: value})
                self.assertRaisesExactly(type(fast.exception), str(fast.exception), a.__dlpack__,
                                         **{fresh(name): value})

    def test_distinct_equal_names_export(self):
        a = dlmap.empty(2)
        capsule = a.__dlpack__(**{fresh("max_version"): testing.CURRENT, fresh("dl_device"): (1, 0),
                                  fresh("copy"): False})
        self.assertEqual(testing.capsule_name(capsule), "dltensor_versioned")
        del capsule


class DeviceAllocatorArgumentsTest(testing.DlmapTestCase):
    def test_pyarg_refusal(self):
        self.assertRaisesExactly(TypeError, "set_device_allocator() takes at least 1 argument (0 given)",
                                 dlmap.set_device_allocator)

    def test_release_without_allocate(self):
        kind, text = message("invalid_argument", argument="set_device_allocator",
                             reason="takes two callables, allocate(nbytes, device, stream) -> int and "
                                    "release(pointer, stream), or None")
        self.assertRaisesExactly(kind, text, dlmap.set_device_allocator, None, print)


if __name__ == "__main__":
    unittest.main()
