# dlmap Python binding tests — array_edges_test: the Array API profile's module (//python/array_api). Arrays at the
# edges of what import allows, and callers at the edges of what CPython allows: a deleter that drops two arrays at
# once, tensors without data or without elements re-exported, attribute lookups that raise, a C caller that repeats a
# keyword.
"""Each case checks what a consumer or the producer sees (the exported tensor's fields, the deleter's calls, which
exception arrives) and, through DlmapTestCase, that dlmap's allocations and exports all return."""

import ctypes
import unittest
import weakref

import dlmap
import testing

PROFILE = "array_api"

# PyObject_Vectorcall(callable, args, nargsf, kwnames), as a C caller makes it: kwnames is whatever tuple it passes.
_vectorcall = ctypes.pythonapi.PyObject_Vectorcall
_vectorcall.restype = ctypes.py_object
_vectorcall.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_size_t, ctypes.py_object]


def numpy_via(np):
    """The struct this NumPy hands dlmap.from_dlpack for a plain array (legacy before NumPy 2.1, versioned since):
    detected, never assumed from its version."""
    return dlmap.from_dlpack(np.arange(3.0)).via


def vectorcall(fn, kwnames, values, nargs=0):
    args = (ctypes.py_object * len(values))(*values)
    return _vectorcall(fn, ctypes.cast(args, ctypes.c_void_p), nargs, kwnames)


class ProfileTest(unittest.TestCase):
    def test_profile(self):
        self.assertEqual(dlmap.profile(), PROFILE)


class ReleaseQueueTest(testing.DlmapTestCase):
    def test_a_deleter_that_drops_two_arrays(self):
        # A's producer keeps [B, C] alive until its deleter runs: releasing A drops both while A's release is under
        # way, so both are queued behind it and released after it, each once, in order
        b, c = dlmap.empty(4), dlmap.empty(4)
        dead_b, dead_c = weakref.ref(b), weakref.ref(c)
        producer = testing.Producer([b, c], (2, 32, 1), (4,), data=b.data_ptr)
        a = dlmap.from_dlpack(producer)
        del producer, b, c
        self.assertIsNotNone(dead_b())
        self.assertIsNotNone(dead_c())
        del a
        self.assertEqual(testing.deleted, ["producer"], "A's deleter ran once")
        self.assertIsNone(dead_b(), "B released")
        self.assertIsNone(dead_c(), "C released")


class ReExportTest(testing.DlmapTestCase):
    def export(self, a):
        return testing.versioned_tensor(a.__dlpack__(max_version=(1, 3))).dl_tensor

    def test_null_data_without_elements(self):
        a = dlmap.from_dlpack(testing.Producer(None, (2, 32, 1), (0,)))
        self.assertEqual((a.data_ptr, a.shape), (0, (0,)))
        t = self.export(a)
        self.assertEqual((t.data, t.byte_offset), (None, 0))

    def test_byte_offset_kept_without_elements(self):
        # no elements: import checked no address, so data + byte_offset is not formed; both go out as they came
        buf = bytearray(64)
        base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        a = dlmap.from_dlpack(testing.Producer(buf, (2, 32, 1), (0,), byte_offset=8))
        t = self.export(a)
        self.assertEqual((t.data, t.byte_offset), (base, 8))
        del a, t

    def test_byte_offset_folded_with_elements(self):
        buf = bytearray(64)
        base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        a = dlmap.from_dlpack(testing.Producer(buf, (2, 32, 1), (2,), byte_offset=8))
        t = self.export(a)
        self.assertEqual((t.data, t.byte_offset), (base + 8, 0))
        del a, t

    def test_c_contiguous_view_of_a_c_contiguous_array(self):
        a = dlmap.empty((2, 3), "float32")
        view = testing.get_buffer(a, testing.PyBUF_C_CONTIGUOUS)
        self.assertEqual((view["shape"], view["strides"]), ((2, 3), (12, 4)))


class RaisingLookupTest(testing.DlmapTestCase):
    def test_dlpack_device_property_that_raises(self):
        raised = KeyError("device")

        class Producer:
            def __dlpack__(self, **kwargs):
                raise AssertionError("__dlpack__ must not be asked")

            @property
            def __dlpack_device__(self):
                raise raised

        with self.assertRaises(KeyError) as ctx:
            dlmap.from_dlpack(Producer())
        self.assertIs(ctx.exception, raised)

    def test_dlpack_property_that_raises_with_arguments(self):
        # from_dlpack(x, copy=None): the tuple-and-dict path, which reports the lookup's exception as the fast one does
        raised = KeyError("dlpack")

        class Producer:
            @property
            def __dlpack__(self):
                raise raised

        for kwargs in ({}, {"copy": None}):
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(KeyError) as ctx:
                    dlmap.from_dlpack(Producer(), **kwargs)
                self.assertIs(ctx.exception, raised)


class ExchangeTableTest(testing.DlmapTestCase):
    def test_table_tensor_on_an_unknown_device_type(self):
        # a producer's C exchange table hands out a versioned tensor on device type 99, which the spec does not know:
        # no stream is read for it, import refuses it (the catalogue's error), and its deleter runs once per call
        producer = testing.Producer(bytearray(16), (2, 32, 1), (4,), device=(99, 0))

        def tensor_address():
            capsule = producer.make_capsule(True)
            address = testing.capsule_pointer(capsule, testing.NAME_VERSIONED)
            testing.rename_capsule(capsule, testing.NAME_VERSIONED_USED)  # the table hands the tensor over
            return address

        table = testing.table_handing_out(tensor_address)

        class Tabled:
            __dlpack_c_exchange_api__ = testing._capsule_new(ctypes.addressof(table), testing.NAME_EXCHANGE_API,
                                                             None)

            def __dlpack__(self, **kwargs):
                raise AssertionError("the table serves this producer")

            def __dlpack_device__(self):
                return (1, 0)

        kind, template = testing.profile_error(PROFILE, "import_unsupported_device_type")
        text = template.format(dl_device_type=99, array="unknown tensor of ndim 1")
        for calls, kwargs in enumerate(({}, {"stream": None}), start=1):
            with self.subTest(kwargs=kwargs):
                self.assertRaisesExactly(kind, text, dlmap.from_dlpack, Tabled(), **kwargs)
                self.assertEqual(testing.deleted, ["producer"] * calls)


    def test_table_without_its_import_function(self):
        # a table that publishes no managed_tensor_from_py_object_no_sync serves nothing: the producer is asked through
        # __dlpack__, as if it published no table
        table = testing.DLPackExchangeAPI()
        table.header.version = testing.DLPackVersion(*testing.CURRENT)
        source = dlmap.empty(3)

        class HalfTabled:
            __dlpack_c_exchange_api__ = testing._capsule_new(ctypes.addressof(table), testing.NAME_EXCHANGE_API,
                                                             None)

            def __dlpack__(self, **kwargs):
                return source.__dlpack__(**kwargs)

            def __dlpack_device__(self):
                return source.__dlpack_device__()

        imported = dlmap.from_dlpack(HalfTabled())
        self.assertEqual((imported.shape, imported.data_ptr), ((3,), source.data_ptr))
        del imported


class RepeatedKeywordTest(testing.DlmapTestCase):
    def test_last_value_of_a_repeated_keyword_stands(self):
        # CPython's callers never repeat a name in kwnames, a C caller may: the fast path gives the call to the
        # tuple-and-dict path, where the later value replaces the earlier one
        a = dlmap.empty(2)
        capsule = vectorcall(a.__dlpack__, ("copy", "copy"), ["yes", None])
        self.assertEqual(testing.capsule_name(capsule), "dltensor")
        del capsule
        self.assertRaisesExactly(TypeError,
                                 "copy must be True, False, None or a boolean scalar (numpy.bool_), got str",
                                 vectorcall, a.__dlpack__, ("copy", "copy"), [None, "yes"])

    def test_empty_kwnames_is_the_plain_call(self):
        # an empty kwnames tuple (where NULL is usual) names no keyword: from_dlpack(x) and x.__dlpack__() as plain
        a = dlmap.empty(2)
        self.assertEqual(vectorcall(dlmap.from_dlpack, (), [a], nargs=1).via, "c_exchange_api")
        self.assertEqual(testing.capsule_name(vectorcall(a.__dlpack__, (), [])), "dltensor")


class MethodLookupTest(testing.DlmapTestCase):
    def test_slots_producer_with_python_methods(self):
        # generic attribute lookup and no instance dict, but __dlpack__ a Python function (no C method descriptor):
        # the methods are looked up and bound as attribute access does
        class Slotted:
            __slots__ = ("inner",)

            def __init__(self, inner):
                self.inner = inner

            def __dlpack__(self, **kwargs):
                return self.inner.__dlpack__(**kwargs)

            def __dlpack_device__(self):
                return self.inner.__dlpack_device__()

        b = dlmap.from_dlpack(Slotted(dlmap.empty(3)))
        self.assertEqual((b.via, b.shape), ("dltensor_versioned", (3,)))

    def test_c_dlpack_with_a_python_dlpack_device(self):
        # an ndarray subclass without an instance dict that overrides __dlpack_device__ in Python: NumPy's C
        # __dlpack__ with a Python __dlpack_device__, which is asked (bound), not skipped
        np = testing.require("numpy", "python3-numpy")
        asked = []

        class Reported(np.ndarray):
            __slots__ = ()

            def __dlpack_device__(self):
                asked.append(True)
                return super().__dlpack_device__()

        n = np.arange(3.0).view(Reported)
        b = dlmap.from_dlpack(n)
        self.assertEqual((b.via, b.data_ptr, asked), (numpy_via(np), n.ctypes.data, [True]))

    def test_class_reassigned_during_lookup(self):
        # a str-subclass key in the class dict whose hash is "__dlpack_device__"'s: looking that name up compares it,
        # and its __eq__ moves x to another class; the descriptors found for the old class are dropped and attribute
        # lookup proper answers for the new one
        np = testing.require("numpy", "python3-numpy")
        armed = []

        class Key(str):
            def __hash__(self):
                return hash("__dlpack_device__")

            def __eq__(self, other):
                if armed and str.__eq__(other, "__dlpack_device__"):
                    armed.pop().__class__ = Moved
                return False

        Moved = type("Moved", (np.ndarray,), {"__slots__": ()})
        Moving = type("Moving", (np.ndarray,), {"__slots__": (), Key("collider"): 1})
        x = np.arange(3.0).view(Moving)
        armed.append(x)
        b = dlmap.from_dlpack(x)
        self.assertEqual(armed, [], "the lookup compared the key")
        self.assertIs(type(x), Moved)
        self.assertEqual((b.via, b.data_ptr, b.shape), (numpy_via(np), x.ctypes.data, (3,)))


if __name__ == "__main__":
    unittest.main()
