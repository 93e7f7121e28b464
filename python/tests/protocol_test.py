# dlmap Python binding tests — the protocol without peer frameworks: dlmap.empty, the Array's properties and buffer
# protocol, every __dlpack__ argument rule (exception class and exact catalogue text), capsule names and destructors,
# and from_dlpack against hand-made producers (negotiation, fallback, consumption, versions, flags, devices).
import array
import ctypes
import enum
import inspect
import subprocess
import sys
import textwrap
import unittest
import weakref

import dlmap
import testing
from testing import DlmapTestCase, Producer, Wrap

CUDA_RULE = ("CUDA accepts None, -1 (no synchronisation), 1 (legacy default stream), 2 (per-thread default stream) or "
             "a stream handle above 2; 0 is ambiguous and disallowed.")
CPU_RULE = "this device type takes no stream, so stream must be None."
READ_ONLY_LEGACY = ("Cannot export a read-only array as a legacy DLManagedTensor, which cannot mark it read-only; pass "
                    "max_version=(1, 0) or higher, or copy=True.")
CUDA_UNAVAILABLE = testing.CUDA_UNAVAILABLE


def consumed(expected, got):
    return (f'DLPack tensor must be a capsule with name "{expected}", got "{got}". Note that a DLPack tensor may be '
            "consumed at most once.")


def filled(shape, dtype="float32"):
    """A dlmap array whose elements are 0, 1, 2, … in row-major order."""
    a = dlmap.empty(shape, dtype)
    m = memoryview(a).cast("B").cast(memoryview(a).format)
    for i in range(len(m)):
        m[i] = i
    return a


def values(a):
    return memoryview(a).tolist()


def float_buffer(n):
    return array.array("f", [float(i) for i in range(n)])


class PlainDlpack:
    """A __dlpack__ that is a callable object taking no max_version (issue 58's remembered types): a versioned call
    fails binding its __call__ before any of its code runs. With fail set, its plain call raises another TypeError."""

    def __init__(self, producer, fail=False):
        self.producer, self.fail = producer, fail

    def __call__(self, stream=None):
        if self.fail:
            raise TypeError("not a tensor today")
        return self.producer.__dlpack__(stream=stream)


class EmptyTest(DlmapTestCase):
    def test_defaults(self):
        a = dlmap.empty((2, 3))
        self.assertEqual(a.shape, (2, 3))
        self.assertEqual(a.strides, (3, 1))
        self.assertEqual(a.ndim, 2)
        self.assertEqual(a.dtype, "float32")
        self.assertEqual(a.device, (1, 0))
        self.assertEqual(a.__dlpack_device__(), (1, 0))
        self.assertFalse(a.readonly)
        self.assertFalse(a.copied)
        self.assertEqual(a.nbytes, 24)
        self.assertEqual(a.byte_offset, 0)
        self.assertEqual(a.via, "empty")
        self.assertEqual(a.version, testing.CURRENT)
        self.assertEqual(a.data_ptr % 64, 0, "dlmap aligns data to 64 bytes")
        self.assertEqual(bytes(memoryview(a)), bytes(24), "zero-filled")
        self.assertEqual(repr(a), "dlmap.Array(shape=(2, 3), dtype='float32', device=(1, 0), readonly=False)")

    def test_shapes(self):
        self.assertEqual(dlmap.empty(5, "int16").shape, (5,))
        self.assertEqual(dlmap.empty([4, 1, 2], "int8").strides, (2, 2, 1))
        scalar = dlmap.empty((), "float64")
        self.assertEqual((scalar.shape, scalar.strides, scalar.nbytes), ((), (), 8))
        self.assertEqual(memoryview(scalar).ndim, 0)
        none = dlmap.empty((0, 4))
        self.assertEqual((none.shape, none.nbytes, len(bytes(memoryview(none)))), ((0, 4), 0, 0))

    def test_dtype_names_and_aliases(self):
        for name in ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "bool", "complex64", "complex128", "bfloat16", "float8_e4m3fn", "int4"]:
            self.assertEqual(dlmap.empty(3, name).dtype, name)
        for alias, name in [("f32", "float32"), ("half", "float16"), ("c64", "complex64"), ("bf16", "bfloat16"),
                            ("byte", "uint8"), ("boolean", "bool")]:
            self.assertEqual(dlmap.empty(1, alias).dtype, name)

    def test_sub_byte(self):
        a = dlmap.empty(5, "int4")  # 20 bits, packed: 3 bytes
        self.assertEqual((a.dtype, a.nbytes), ("int4", 3))
        self.assertRaisesExactly(NotImplementedError, "The buffer protocol for dtype int4 is not implemented by dlmap",
                                 memoryview, a)
        # 2^64 − 4 bits (issue 14): a size dlmap refuses, not an allocation of 2^61 bytes that fails.
        self.assertRaisesExactly(BufferError, "The DLPack tensor's element count or byte extent overflows (shape "
                                 "[4611686018427387903], strides [none: compact row-major])", dlmap.empty,
                                 2 ** 62 - 1, "int4")

    def test_argument_errors(self):
        self.assertRaisesExactly(ValueError, "Unknown data type name 'float31'", dlmap.empty, 3, "float31")
        self.assertRaisesExactly(TypeError, "dtype must be a data type name (str), got int", dlmap.empty, 3, 5)
        self.assertRaisesExactly(TypeError, "shape must be an int or a tuple of ints, got str", dlmap.empty, "3")
        self.assertRaisesExactly(TypeError, "shape must be an int or a tuple of ints, got float", dlmap.empty, (2, 1.5))
        self.assertRaisesExactly(TypeError, "shape must be an int or a tuple of ints, got bool", dlmap.empty, True)
        self.assertRaisesExactly(TypeError, "shape must be an int or a tuple of ints, got bool", dlmap.empty, [2, True])
        self.assertRaisesExactly(BufferError, "Dimension 1 of the DLPack tensor has negative extent -1", dlmap.empty,
                                 (2, -1))
        self.assertRaisesExactly(BufferError, "Number of dimensions in DLManagedTensor is 65, above the maximum of 64",
                                 dlmap.empty, (1,) * 65)
        self.assertRaisesExactly(ValueError, "Unknown device type name 'nonsense'", dlmap.empty, 3, device="nonsense")
        with self.assertRaisesRegex(TypeError, "cannot create 'dlmap.Array' instances"):
            dlmap.Array()

    def test_shape_items_that_run_code(self):
        # An item's __index__ may change the list being read (issue 14: clearing it freed the other items under
        # dlmap's feet). The list is read from a snapshot: the values it held when dlmap.empty was called.
        class Clears:
            def __index__(self):
                shape.clear()
                return 1

        shape = [Clears(), 2, 3]
        self.assertEqual(dlmap.empty(shape).shape, (1, 2, 3))

        class Grows:
            def __index__(self):
                shape.extend([5] * 100)
                return 2

        shape = [Grows(), 4]
        self.assertEqual(dlmap.empty(shape).shape, (2, 4))

        class Raises:
            def __index__(self):
                raise KeyError("from __index__")

        with self.assertRaises(KeyError):
            dlmap.empty([2, Raises()])
        with self.assertRaises(KeyError):
            dlmap.empty(Raises())
        self.assertRaisesExactly(ValueError, "Invalid argument shape: the value does not fit in a 64-bit integer",
                                 dlmap.empty, [2, 2 ** 70])
        self.assertRaisesExactly(ValueError, "Invalid argument shape: the value does not fit in a 64-bit integer",
                                 dlmap.empty, -(2 ** 63) - 1)

    @testing.without_cuda
    def test_no_cuda(self):
        self.assertRaisesExactly(BufferError, CUDA_UNAVAILABLE, dlmap.empty, 3, device="cuda")
        self.assertRaisesExactly(BufferError, CUDA_UNAVAILABLE, dlmap.empty, 3, device=(2, 0))

    def test_out_of_memory(self):
        dlmap._fail_allocations(1)
        self.assertRaisesRegex(MemoryError, r"^Out of memory allocating \d+ bytes for an export$", dlmap.empty, 3)
        self.assertIsNotNone(dlmap.empty(3), "only the requested allocation failed")


class PlatformStatusTest(DlmapTestCase):
    def test_platform_status(self):
        self.assertEqual(dlmap.platform_status("cpu"),
                         {"platform": "cpu", "built": True, "available": True, "device_count": 1, "reason": ""})
        self.assertEqual(dlmap.platform_status("host")["platform"], "cpu", "aliases work")
        cuda = dlmap.platform_status("cuda")
        self.assertEqual(sorted(cuda), ["available", "built", "device_count", "platform", "reason"])
        self.assertEqual(cuda["available"], cuda["reason"] == "")
        self.assertEqual(dlmap.platform_status("opencl")["built"], False)
        self.assertRaisesExactly(ValueError, "Unknown platform name 'x'", dlmap.platform_status, "x")
        self.assertRaisesExactly(TypeError, "platform must be a platform name (str), got int", dlmap.platform_status, 1)


class BufferTest(DlmapTestCase):
    FORMATS = {"float16": ("e", 2), "float32": ("f", 4), "float64": ("d", 8), "int8": ("b", 1), "int16": ("h", 2),
               "int32": ("i", 4), "int64": ("q", 8), "uint8": ("B", 1), "uint16": ("H", 2), "uint32": ("I", 4),
               "uint64": ("Q", 8), "bool": ("?", 1), "complex64": ("Zf", 8), "complex128": ("Zd", 16)}

    def test_formats(self):
        for name, (fmt, size) in self.FORMATS.items():
            a = dlmap.empty((2, 3), name)
            m = memoryview(a)
            self.assertEqual((m.format, m.itemsize, m.shape, m.strides, m.readonly),
                             (fmt, size, (2, 3), (3 * size, size), False), name)

    def test_write_and_read(self):
        a = filled((2, 3))
        self.assertEqual(values(a), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
        memoryview(a)[1, 2] = 7.5
        self.assertEqual(values(a)[1][2], 7.5)

    def test_readonly_is_honoured(self):
        a = filled(4)
        a.readonly = True
        self.assertTrue(memoryview(a).readonly)
        self.assertRaisesExactly(BufferError, "Object is not writable.", testing.get_buffer, a, testing.PyBUF_WRITABLE)
        self.assertTrue(testing.get_buffer(a, testing.PyBUF_SIMPLE)["readonly"])
        with self.assertRaises(TypeError):
            memoryview(a)[0] = 1.0
        a.readonly = False  # dlmap's own memory: writable again
        self.assertFalse(testing.get_buffer(a, testing.PyBUF_WRITABLE)["readonly"])
        self.assertRaisesExactly(TypeError, "readonly must be True or False, got int", setattr, a, "readonly", 1)
        self.assertRaisesExactly(AttributeError, "cannot delete attribute 'readonly'", delattr, a, "readonly")

    def test_strided_views_and_contiguity_requests(self):
        base = float_buffer(6)
        t = dlmap.from_dlpack(Producer(base, (2, 32, 1), (3, 2), strides=(1, 3)))  # a transposed 2x3
        m = memoryview(t)
        self.assertEqual((m.shape, m.strides, m.c_contiguous, m.f_contiguous), ((3, 2), (4, 12), False, True))
        self.assertEqual(m.tolist(), [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])
        B = testing
        for flags, message in [(B.PyBUF_SIMPLE, "dlmap.Array is not C-contiguous"),
                               (B.PyBUF_ND, "dlmap.Array is not C-contiguous"),
                               (B.PyBUF_C_CONTIGUOUS, "dlmap.Array is not C-contiguous")]:
            self.assertRaisesExactly(BufferError, message, B.get_buffer, t, flags)
        f = B.get_buffer(t, B.PyBUF_F_CONTIGUOUS | B.PyBUF_FORMAT)
        self.assertEqual((f["shape"], f["strides"], f["format"], f["len"]), ((3, 2), (4, 12), "f", 24))
        self.assertEqual(B.get_buffer(t, B.PyBUF_ANY_CONTIGUOUS)["format"], None, "format only when asked for")
        c = filled((2, 3))
        simple = B.get_buffer(c, B.PyBUF_SIMPLE)
        self.assertEqual((simple["buf"], simple["len"], simple["shape"], simple["strides"]), (c.data_ptr, 24, None, None))
        self.assertEqual(B.get_buffer(c, B.PyBUF_ND)["shape"], (2, 3))
        self.assertRaisesExactly(BufferError, "dlmap.Array is not Fortran-contiguous", B.get_buffer, c,
                                 B.PyBUF_F_CONTIGUOUS)
        del m, t

    def test_failed_requests_leave_obj_null(self):
        # The buffer protocol's rule: on failure view->obj is NULL (issue 14: the early refusals left it as it was).
        cuda = dlmap.from_dlpack(Producer(None, (2, 32, 1), (4,), device=(2, 0), data=0x10000), stream=-1)
        read_only = filled(3)
        read_only.readonly = True
        for array, flags, cls in [(cuda, testing.PyBUF_SIMPLE, NotImplementedError),
                                  (dlmap.empty(4, "int4"), testing.PyBUF_SIMPLE, NotImplementedError),
                                  (read_only, testing.PyBUF_WRITABLE, BufferError),
                                  (dlmap.from_dlpack(Producer(float_buffer(4), (2, 32, 1), (2, 2), strides=(1, 2))),
                                   testing.PyBUF_C_CONTIGUOUS, BufferError)]:
            view = testing.Py_buffer()
            view.obj = 0xdead  # what an uninitialised view may hold
            with self.assertRaises(cls):
                testing._get_buffer(array, ctypes.byref(view), flags)
            self.assertIsNone(view.obj, (array, flags))

    def test_huge_strides_of_steps_that_never_happen(self):
        # Strides of extent-1 and extent-0 dimensions are not checked (they address nothing); their byte strides
        # overflowed int64 (issue 14, signed overflow). They are 0 where they do not fit.
        b = dlmap.from_dlpack(Producer(float_buffer(3), (2, 32, 1), (3, 1), strides=(1, 2 ** 62 + 1)))
        self.assertEqual((b.strides, memoryview(b).strides, values(b)), ((1, 2 ** 62 + 1), (4, 0), [[0.0], [1.0], [2.0]]))
        e = dlmap.from_dlpack(Producer(float_buffer(1), (2, 32, 1), (0, 3), strides=(2 ** 62 + 1, 2 ** 61 + 1)))
        self.assertEqual((memoryview(e).strides, memoryview(e).tolist()), ((0, 0), []))

    def test_device_memory_has_no_buffer(self):
        p = Producer(None, (2, 32, 1), (4,), device=(2, 0), data=0x10000)  # a CUDA pointer nobody dereferences
        a = dlmap.from_dlpack(p, stream=-1)
        self.assertEqual(a.device, (2, 0))
        self.assertRaisesExactly(NotImplementedError, "The buffer protocol on kDLCUDA memory is not implemented by dlmap",
                                 memoryview, a)


class DlpackArgumentsTest(DlmapTestCase):
    """Every __dlpack__ rule of the export issue, as a Python caller sees it."""

    def test_default_is_legacy(self):
        a = filled((2, 3))
        cap = a.__dlpack__()
        self.assertEqual(testing.capsule_name(cap), "dltensor")
        t = testing.legacy_tensor(cap).dl_tensor
        self.assertEqual((t.data, t.device.device_type, t.device.device_id, t.ndim), (a.data_ptr, 1, 0, 2))
        self.assertEqual((t.dtype.code, t.dtype.bits, t.dtype.lanes), (2, 32, 1))
        self.assertEqual(([t.shape[i] for i in range(2)], [t.strides[i] for i in range(2)], t.byte_offset),
                         ([2, 3], [3, 1], 0))
        self.assertEqual(testing.capsule_name(a.__dlpack__(max_version=None)), "dltensor")

    def test_max_version_negotiation(self):
        a = filled(3)
        for requested, struct, stamped in [((0, 5), "dltensor", None), ((0, 8), "dltensor", None),
                                           ((1, 0), "dltensor_versioned", (1, 0)),
                                           ((1, 2), "dltensor_versioned", (1, 2)),
                                           ((1, 3), "dltensor_versioned", (1, 3)),
                                           ((1, 99), "dltensor_versioned", testing.CURRENT),
                                           ((2, 0), "dltensor_versioned", testing.CURRENT)]:
            cap = a.__dlpack__(max_version=requested)
            self.assertEqual(testing.capsule_name(cap), struct, requested)
            if stamped:
                v = testing.versioned_tensor(cap)
                self.assertEqual(((v.version.major, v.version.minor), v.flags, v.dl_tensor.data),
                                 (stamped, 0, a.data_ptr), requested)
        # A list is what many callers write (issue 14); it is read like the tuple.
        self.assertEqual(testing.capsule_name(a.__dlpack__(max_version=[1, 0])), "dltensor_versioned")
        self.assertEqual(testing.capsule_name(a.__dlpack__(max_version=[0, 8])), "dltensor")

        class Index:
            def __init__(self, value, mutate=None):
                self.value, self.mutate = value, mutate

            def __index__(self):
                if self.mutate is not None:
                    self.mutate.clear()
                return self.value

        changing = [Index(1), 0]
        changing[0].mutate = changing  # read from a copy: clearing the list changes nothing
        self.assertEqual(testing.capsule_name(a.__dlpack__(max_version=changing)), "dltensor_versioned")

    def test_what_the_negotiated_version_cannot_express(self):
        for dtype, max_version, message in [
                ("float8_e4m3fn", (1, 0), "Data type float8_e4m3fn cannot be expressed in DLPack 1.0; it was introduced in 1.1."),
                ("float8_e4m3fn", None, "Data type float8_e4m3fn cannot be expressed in DLPack 0.8; it was introduced in 1.1."),
                ("bool", (0, 7), "Data type bool cannot be expressed in DLPack 0.7; it was introduced in 0.8.")]:
            self.assertRaisesExactly(BufferError, message, dlmap.empty(2, dtype).__dlpack__, max_version=max_version)
        self.assertEqual(testing.capsule_name(dlmap.empty(2, "bool").__dlpack__()), "dltensor")
        self.assertEqual(testing.capsule_name(dlmap.empty(2, "float8_e4m3fn").__dlpack__(max_version=(1, 1))),
                         "dltensor_versioned")

    def test_padded_sub_byte(self):
        b = dlmap.from_dlpack(Producer(bytearray(4), (0, 4, 1), (4,), flags=testing.FLAG_IS_SUBBYTE_TYPE_PADDED))
        self.assertEqual((b.dtype, b.nbytes), ("int4", 4), "one byte per padded element")
        self.assertEqual(testing.versioned_tensor(b.__dlpack__(max_version=(1, 3))).flags,
                         testing.FLAG_IS_SUBBYTE_TYPE_PADDED)

    def test_zero_d_and_size_one(self):
        t = testing.legacy_tensor(dlmap.empty(()).__dlpack__()).dl_tensor
        self.assertEqual((t.ndim, bool(t.shape), bool(t.strides)), (0, False, False))
        b = dlmap.from_dlpack(Producer(float_buffer(3), (2, 32, 1), (3, 1), strides=(1, 99)))
        t = testing.versioned_tensor(b.__dlpack__(max_version=(1, 3))).dl_tensor
        self.assertEqual([t.strides[i] for i in range(2)], [1, 99], "size-1 strides pass through unchanged")

    def test_max_version_errors(self):
        a = filled(3)
        self.assertRaisesExactly(BufferError,
                                 "dlmap does not support any DLPack version below 0.5 but version 0.4 was requested.",
                                 a.__dlpack__, max_version=(0, 4))
        for bad, got in [([1], "list"), ((1,), "tuple"), (("1", "0"), "tuple"), ((1.0, 0), "tuple"),
                         ((True, 0), "tuple"), ([True, 0], "list"), ("1.0", "str"), ("10", "str"), (b"\x01\x00", "bytes")]:
            self.assertRaisesExactly(TypeError,
                                     f"max_version must be a (major, minor) tuple or list of ints, or None, got {got}",
                                     a.__dlpack__, max_version=bad)
        self.assertRaisesExactly(ValueError,
                                 "Invalid argument max_version: major and minor must be integers from 0 to 4294967295",
                                 a.__dlpack__, max_version=(-1, 0))

    def test_small_pairs_read_as_any_pair(self):
        """An exact tuple of two small ints (max_version, dl_device, a __dlpack_device__ answer) is read inline
        (python/binding.h: CPython's compact ints, below 2 ** 30); a tuple subclass always takes the general reading.
        Both give the same result on either side of that bound."""
        class Pair(tuple):
            pass

        def outcome(call):
            try:
                capsule = call()
            except Exception as e:  # noqa: BLE001: the outcome compared is the exception's class and text
                return type(e), str(e)
            name = testing.capsule_name(capsule)
            if name == "dltensor_versioned":
                version = testing.versioned_tensor(capsule).version
                return name, version.major, version.minor
            return (name,)

        a = filled(3)
        producer = Producer(float_buffer(3), (2, 32, 1), (3,))  # one producer: an error names it

        def reporting(answer):
            producer.reported = answer
            return dlmap.from_dlpack(producer).__dlpack__(max_version=(1, 3))

        bound = 2 ** 30
        pairs = [(0, 0), (0, 5), (1, 0), (1, bound - 1), (1, bound), (bound - 1, 0), (bound, 0), (2 ** 32 - 1, 1),
                 (2 ** 32, 0), (-1, 0), (1, -1)]
        for pair in pairs:
            self.assertEqual(outcome(lambda: a.__dlpack__(max_version=pair)),
                             outcome(lambda: a.__dlpack__(max_version=Pair(pair))), pair)
            self.assertEqual(outcome(lambda: a.__dlpack__(max_version=(1, 3), dl_device=pair)),
                             outcome(lambda: a.__dlpack__(max_version=(1, 3), dl_device=Pair(pair))), pair)
            self.assertEqual(outcome(lambda: reporting(pair)), outcome(lambda: reporting(Pair(pair))), pair)

    def test_copy(self):
        a = filled((2, 2))
        cap = a.__dlpack__(max_version=(1, 3), copy=True)
        v = testing.versioned_tensor(cap)
        self.assertEqual(v.flags, testing.FLAG_IS_COPIED)
        self.assertNotEqual(v.dl_tensor.data, a.data_ptr)
        self.assertEqual([ctypes.c_float.from_address(v.dl_tensor.data + 4 * i).value for i in range(4)],
                         [0.0, 1.0, 2.0, 3.0])
        self.assertEqual(testing.versioned_tensor(a.__dlpack__(max_version=(1, 3), copy=False)).dl_tensor.data,
                         a.data_ptr)
        legacy = a.__dlpack__(copy=True)  # a legacy consumer just owns the copy
        self.assertNotEqual(testing.legacy_tensor(legacy).dl_tensor.data, a.data_ptr)
        for bad in ["yes", 1, 0, 1.0, [True], b"\x01"]:
            self.assertRaisesExactly(TypeError, "copy must be True, False, None or a boolean scalar (numpy.bool_), got "
                                     + type(bad).__name__, a.__dlpack__, copy=bad)

    def test_dl_device(self):
        a = filled(3)
        for device in [(1, 0), (1, 3)]:  # the host is one device whatever the id
            t = testing.versioned_tensor(a.__dlpack__(max_version=(1, 3), dl_device=device)).dl_tensor
            self.assertEqual((t.device.device_type, t.device.device_id, t.data), (1, 0, a.data_ptr))

        class Kind(enum.IntEnum):  # frameworks pass enums (PyTorch's DLDeviceType)
            kDLCPU = 1

        self.assertEqual(testing.capsule_name(a.__dlpack__(dl_device=(Kind.kDLCPU, 0))), "dltensor")
        for device_type in [4, 200, 5, 9]:
            self.assertRaisesExactly(
                BufferError,
                "The device specification passed to to_dlpack contains an unsupported device type "
                f"(DLDeviceType: {device_type})", a.__dlpack__, dl_device=(device_type, 0))
        self.assertRaisesExactly(
            BufferError,
            "Specified device=(kDLCUDA, 0) which requires a copy since the source device is (kDLCPU, 0), however "
            "copy=False. Set copy=True or copy=None to perform the requested operation.",
            a.__dlpack__, dl_device=(2, 0), copy=False)
        self.assertRaisesExactly(ValueError, "Device id -1 is out of range for platform cpu, which has 1 device(s).",
                                 a.__dlpack__, dl_device=(1, -1))
        self.assertRaisesExactly(TypeError, "dl_device must be a (device_type, device_id) tuple of ints or None, got list",
                                 a.__dlpack__, dl_device=[1, 0])
        self.assertRaisesExactly(TypeError, "dl_device must be a (device_type, device_id) tuple of ints or None, got str",
                                 a.__dlpack__, dl_device="cpu")
        self.assertRaisesExactly(ValueError,
                                 "Invalid argument dl_device: device_type and device_id must fit in 32-bit integers",
                                 a.__dlpack__, dl_device=(2 ** 40, 0))

    @testing.without_cuda
    def test_dl_device_without_cuda(self):
        a = filled(3)
        for copy in [None, True]:
            self.assertRaisesExactly(BufferError, CUDA_UNAVAILABLE, a.__dlpack__, dl_device=(2, 0), copy=copy)

    def test_streams_on_the_host(self):
        a = filled(3)
        for stream in [-1, 0, 1, 2, 3, 123456]:
            self.assertRaisesExactly(ValueError, f"stream={stream} is not valid for device type kDLCPU (1): {CPU_RULE}",
                                     a.__dlpack__, stream=stream)
            self.assertRaisesExactly(ValueError, f"stream={stream} is not valid for device type kDLCPU (1): {CPU_RULE}",
                                     a.__dlpack__, stream=stream, max_version=(1, 3), dl_device=(1, 0))
        self.assertRaisesExactly(TypeError, "stream must be an int or None, got str", a.__dlpack__, stream="1")
        self.assertRaisesExactly(TypeError, "stream must be an int or None, got bool", a.__dlpack__, stream=True)
        self.assertRaisesExactly(ValueError, "Invalid argument stream: the value does not fit in a 64-bit integer",
                                 a.__dlpack__, stream=2 ** 70)
        self.assertEqual(testing.capsule_name(a.__dlpack__(stream=None)), "dltensor")

    def test_streams_on_a_device(self):
        # A CUDA array (imported with stream=-1 from a hand-made producer; its data is never touched).
        a = dlmap.from_dlpack(Producer(None, (2, 32, 1), (4,), device=(2, 0), data=0x10000), stream=-1)
        self.assertEqual(a.__dlpack_device__(), (2, 0))
        for stream in [0, -2]:
            self.assertRaisesExactly(ValueError, f"stream={stream} is not valid for device type kDLCUDA (2): {CUDA_RULE}",
                                     a.__dlpack__, stream=stream)
        cap = a.__dlpack__(stream=-1, max_version=(1, 3))  # no synchronisation asked: a view
        t = testing.versioned_tensor(cap).dl_tensor
        self.assertEqual((t.device.device_type, t.data), (2, 0x10000))
        self.assertRaisesExactly(
            BufferError,
            "Specified device=(kDLCPU, 0) which requires a copy since the source device is (kDLCUDA, 0), however "
            "copy=False. Set copy=True or copy=None to perform the requested operation.",
            a.__dlpack__, dl_device=(1, 0), copy=False)

    @testing.without_cuda
    def test_streams_on_a_device_without_cuda(self):
        a = dlmap.from_dlpack(Producer(None, (2, 32, 1), (4,), device=(2, 0), data=0x10000), stream=-1)
        for stream in [None, 1, 2, 0x7f00]:  # making that stream wait needs a CUDA runtime
            self.assertRaisesExactly(BufferError, CUDA_UNAVAILABLE, a.__dlpack__, stream=stream)

    def test_read_only(self):
        a = filled(3)
        a.readonly = True
        self.assertRaisesExactly(BufferError, READ_ONLY_LEGACY, a.__dlpack__)
        self.assertRaisesExactly(BufferError, READ_ONLY_LEGACY, a.__dlpack__, max_version=(0, 8))
        v = testing.versioned_tensor(a.__dlpack__(max_version=(1, 0)))
        self.assertEqual((v.flags, v.dl_tensor.data), (testing.FLAG_READ_ONLY, a.data_ptr))
        self.assertEqual(testing.versioned_tensor(a.__dlpack__(max_version=(1, 3), copy=True)).flags,
                         testing.FLAG_IS_COPIED, "a copy is the consumer's: writable")
        self.assertNotEqual(testing.legacy_tensor(a.__dlpack__(copy=True)).dl_tensor.data, a.data_ptr)

    def test_signatures(self):
        self.assertEqual(str(inspect.signature(dlmap.Array.__dlpack__)),
                         "(self, /, *, stream=None, max_version=None, dl_device=None, copy=None)")
        self.assertEqual(str(inspect.signature(dlmap.from_dlpack)), "(x, *, device=None, copy=None, stream=None)")
        self.assertEqual(str(inspect.signature(dlmap.empty)), "(shape, dtype='float32', *, device=None)")

    def test_repeated_exports(self):
        # Repeated view exports of a host array are made from the first one (issue 15): the same tensor every time,
        # whatever the readonly state and the request, and each export holds its own reference and allocation.
        a = filled((2, 3))
        for _ in range(3):
            t = testing.legacy_tensor(a.__dlpack__())
            self.assertEqual((t.dl_tensor.data, t.dl_tensor.ndim, list(t.dl_tensor.shape[:2]),
                              list(t.dl_tensor.strides[:2])), (a.data_ptr, 2, [2, 3], [3, 1]))
            v = testing.versioned_tensor(a.__dlpack__(max_version=(1, 3)))
            self.assertEqual((v.version.major, v.version.minor, v.flags, v.dl_tensor.data), (1, 3, 0, a.data_ptr))
        a.readonly = True
        self.assertRaisesExactly(BufferError, READ_ONLY_LEGACY, a.__dlpack__)
        self.assertEqual(testing.versioned_tensor(a.__dlpack__(max_version=(1, 3))).flags, testing.FLAG_READ_ONLY)
        self.assertEqual(testing.versioned_tensor(a.__dlpack__(max_version=(1, 0))).version.minor, 0)
        a.readonly = False
        self.assertEqual(testing.versioned_tensor(a.__dlpack__(max_version=(1, 3))).flags, 0)
        before = dlmap._stats()["live_exports"]
        capsules = [a.__dlpack__() for _ in range(4)]
        self.assertEqual(dlmap._stats()["live_exports"] - before, 4)
        del capsules
        dlmap._fail_allocations(1)
        self.assertRaisesRegex(MemoryError, r"^Out of memory allocating \d+ bytes for an export$", a.__dlpack__)
        self.assertIsNotNone(a.__dlpack__(), "only the requested allocation failed")

    def test_keywords_only(self):
        a = filled(3)
        with self.assertRaises(TypeError):
            a.__dlpack__(None)
        with self.assertRaises(TypeError):  # what an old-producer fallback keys on
            a.__dlpack__(unknown=1)

    def test_errors_carry_id_and_code(self):
        e = self.assertRaisesExactly(BufferError, READ_ONLY_LEGACY, lambda: dlmap.from_dlpack(
            Producer(float_buffer(2), (2, 32, 1), (2,), flags=testing.FLAG_READ_ONLY)).__dlpack__())
        self.assertEqual((e.dlmap_id, e.dlmap_code), ("read_only_needs_versioned", 106))


class CapsuleTest(DlmapTestCase):
    def test_unconsumed_capsule_runs_the_deleter(self):
        a = filled(3)
        refs = sys.getrefcount(a)
        for kwargs in [{}, {"max_version": (1, 3)}]:
            cap = a.__dlpack__(**kwargs)
            self.assertEqual(sys.getrefcount(a), refs + 1, "the export holds the array")
            self.assertEqual(dlmap._stats()["live_exports"], 1)
            del cap
            self.assertEqual(sys.getrefcount(a), refs)
            self.assertEqual(dlmap._stats()["live_exports"], 0)

    def test_export_keeps_the_array_alive(self):
        a = filled(3)
        wa = weakref.ref(a)
        cap = a.__dlpack__(max_version=(1, 3))
        del a
        self.assertIsNotNone(wa())
        del cap
        self.assertIsNone(wa())

    def test_consumption_renames_and_transfers_ownership(self):
        for kwargs, name in [({"max_version": (1, 3)}, "dltensor_versioned"), ({}, "dltensor")]:
            a = filled(3)
            wa = weakref.ref(a)
            cap = a.__dlpack__(**kwargs)
            b = dlmap.from_dlpack(Wrap(cap))
            self.assertEqual(testing.capsule_name(cap), "used_" + name)
            self.assertEqual((b.via, b.data_ptr), (name, a.data_ptr))
            del a, cap  # the consumed capsule's destructor must not call the deleter
            self.assertIsNotNone(wa())
            self.assertEqual(values(b), [0.0, 1.0, 2.0])
            del b
            self.assertIsNone(wa())

    def test_consumed_twice(self):
        a = filled(3)
        w = Wrap(a.__dlpack__(max_version=(1, 3)))
        b = dlmap.from_dlpack(w)
        e = self.assertRaisesExactly(ValueError, consumed("dltensor_versioned", "used_dltensor_versioned"),
                                     dlmap.from_dlpack, w)
        self.assertEqual((e.dlmap_id, e.dlmap_code), ("capsule_consumed", 703))
        p = Producer(float_buffer(3), (2, 32, 1), (3,), legacy_only=True, reuse=True)
        c = dlmap.from_dlpack(p)
        self.assertRaisesExactly(ValueError, consumed("dltensor", "used_dltensor"), dlmap.from_dlpack, p)
        del b, c, p

    def test_capsule_of_another_kind(self):
        p = Producer(float_buffer(3), (2, 32, 1), (3,), name=testing.NAME_BOGUS)
        self.assertRaisesExactly(ValueError, consumed("dltensor_versioned", "not_a_dltensor"), dlmap.from_dlpack, p)

        class NotACapsule:
            def __dlpack__(self, **kwargs):
                return 42

            def __dlpack_device__(self):
                return (1, 0)

        e = self.assertRaisesExactly(TypeError, "__dlpack__() result must be a DLPack capsule, got int",
                                     dlmap.from_dlpack, NotACapsule())
        # an error of its own (argument_type_invalid's kind and text) that a profile can reword
        self.assertEqual((e.dlmap_id, e.dlmap_code), ("argument_type_dlpack_result", 710))

    def test_pending_exception_survives_the_destructor(self):
        a = filled(3)
        # int() refuses the capsule, and the interpreter drops its argument while that TypeError is pending.
        for kwargs in [{}, {"max_version": (1, 3)}]:
            with self.assertRaises(TypeError) as ctx:
                int(a.__dlpack__(**kwargs))
            self.assertIn("PyCapsule", str(ctx.exception))
            self.assertEqual(dlmap._stats()["live_exports"], 0, "the deleter ran")

    def test_renamed_capsule_is_reported_and_the_pending_exception_kept(self):
        a = filled(3)
        seen = []
        kept = {}

        def bogus(cap):
            # The struct alone, not holding the capsule: the capsule must die inside int() below.
            kept["tensor"] = testing.DLManagedTensorVersioned.from_address(
                testing.capsule_pointer(cap, testing.NAME_VERSIONED))
            testing.rename_capsule(cap, testing.NAME_BOGUS)  # nobody knows who owns it any more
            return cap

        old_hook = sys.unraisablehook
        sys.unraisablehook = lambda args: seen.append((args.exc_type, args.object))
        try:
            with self.assertRaises(TypeError) as ctx:
                int(bogus(a.__dlpack__(max_version=(1, 3))))
        finally:
            sys.unraisablehook = old_hook
        self.assertIn("PyCapsule", str(ctx.exception))
        self.assertEqual(seen, [(ValueError, "the destructor of a dlmap DLPack capsule")])
        self.assertEqual(dlmap._stats()["live_exports"], 1, "the deleter did not run")
        t = kept.pop("tensor")
        testing.run_deleter(ctypes.pointer(t))  # release it by hand
        self.assertEqual(dlmap._stats()["live_exports"], 0)

    def test_deleter_on_a_native_thread(self):
        for kwargs in [{}, {"max_version": (1, 3)}]:
            a = filled(3)
            wa = weakref.ref(a)
            cap = a.__dlpack__(**kwargs)
            del a
            dlmap._call_deleter_on_thread(cap)  # takes the GIL itself, from a thread Python never saw
            self.assertIsNone(wa())
            self.assertTrue(testing.capsule_name(cap).startswith("used_"))
            del cap

    def test_interpreter_exit_with_live_exports(self):
        # Exports alive at exit (capsules, and a capsule consumed by a hand-made holder) must not crash or hang.
        code = textwrap.dedent("""
            import dlmap
            a = dlmap.empty((2, 3))
            keep = [a.__dlpack__(), a.__dlpack__(max_version=(1, 3)), dlmap.from_dlpack(a)]
            print("ok", dlmap._stats()["live_exports"])
        """)
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual((result.returncode, result.stdout.strip(), result.stderr), (0, "ok 3", ""))


class FromDlpackTest(DlmapTestCase):
    def test_missing_methods(self):
        message = "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods."
        e = self.assertRaisesExactly(AttributeError, message, dlmap.from_dlpack, 42)
        self.assertEqual(e.dlmap_id, "from_dlpack_missing_methods")
        a = filled(3)
        self.assertRaisesExactly(AttributeError, message, dlmap.from_dlpack, a.__dlpack__(max_version=(1, 3)))

    def test_versioned_first(self):
        buf = float_buffer(4)
        p = Producer(buf, (2, 32, 1), (2, 2))
        b = dlmap.from_dlpack(p)
        self.assertEqual(p.calls, [{"max_version": testing.CURRENT, "stream": None}])
        self.assertEqual((b.via, b.version, b.readonly, b.copied), ("dltensor_versioned", (1, 3), False, False))
        self.assertEqual(b.data_ptr, ctypes.addressof(ctypes.c_char.from_buffer(buf)))
        self.assertEqual(b.strides, (2, 1), "NULL strides are compact row-major")
        self.assertEqual(values(b), [[0.0, 1.0], [2.0, 3.0]])

    def test_type_error_falls_back_to_a_plain_call(self):
        p = Producer(float_buffer(3), (2, 32, 1), (3,), legacy_only=True)
        b = dlmap.from_dlpack(p)
        self.assertEqual(p.calls, [{"max_version": testing.CURRENT, "stream": None}, {}])
        self.assertEqual((b.via, b.version, b.readonly), ("dltensor", (0, 0), False))
        self.assertEqual(values(b), [0.0, 1.0, 2.0])

    def test_python_classes_are_asked_versioned_first_every_time(self):
        # Instances of one Python class may answer differently: nothing is remembered per class.
        legacy = Producer(float_buffer(3), (2, 32, 1), (3,), legacy_only=True)
        dlmap.from_dlpack(legacy)
        dlmap.from_dlpack(legacy)
        self.assertEqual(legacy.calls, [{"max_version": testing.CURRENT, "stream": None}, {}] * 2)
        modern = Producer(float_buffer(3), (2, 32, 1), (3,))
        self.assertEqual(dlmap.from_dlpack(modern).via, "dltensor_versioned")
        self.assertEqual(modern.calls, [{"max_version": testing.CURRENT, "stream": None}])

    def test_signatures_without_max_version_get_a_plain_call(self):
        # A Python function whose signature cannot take max_version would only raise TypeError while binding: it is
        # called plainly, decided from its current code object (issue 15). **kwargs or a max_version parameter still
        # get the versioned call, and reassigning __code__ is seen on the next call.
        class Old:
            def __init__(self, inner):
                self.inner, self.calls = inner, 0

            def __dlpack_device__(self):
                return self.inner.__dlpack_device__()

            def __dlpack__(self, stream=None):
                self.calls += 1
                return self.inner.__dlpack__(stream=stream)

        old = Old(Producer(float_buffer(3), (2, 32, 1), (3,), legacy_only=True))
        for _ in range(3):
            self.assertEqual(dlmap.from_dlpack(old).via, "dltensor")
        self.assertEqual((old.calls, old.inner.calls), (3, [{"stream": None}] * 3))

        class New(Old):
            def __dlpack__(self, *, stream=None, max_version=None):
                self.calls += 1
                return self.inner.__dlpack__(stream=stream, max_version=max_version)

        new = New(Producer(float_buffer(3), (2, 32, 1), (3,)))
        self.assertEqual(dlmap.from_dlpack(new).via, "dltensor_versioned")
        self.assertEqual(new.inner.calls, [{"max_version": testing.CURRENT, "stream": None}])
        Old.__dlpack__.__code__ = New.__dlpack__.__code__  # the same class, a signature that now takes it
        fresh = Old(Producer(float_buffer(3), (2, 32, 1), (3,)))
        self.assertEqual(dlmap.from_dlpack(fresh).via, "dltensor_versioned")

        def positional_only(self, max_version=None, /, stream=None):
            return self.inner.__dlpack__(stream=stream)

        Old.__dlpack__ = positional_only  # a positional-only max_version cannot be passed by keyword
        legacy = Old(Producer(float_buffer(3), (2, 32, 1), (3,), legacy_only=True))
        self.assertEqual(dlmap.from_dlpack(legacy).via, "dltensor")
        self.assertEqual(legacy.inner.calls, [{"stream": None}])

    def test_types_whose_method_refuses_max_version_are_remembered(self):
        # A __dlpack__ that is a callable object, not a function: a versioned call fails binding its __call__ before
        # any of its code runs, so the refusal is the type's. It is remembered per type (issue 58): later imports call
        # it plainly, and assigning the class's __dlpack__ (its version tag changes) has it asked versioned again.
        class Legacy:
            def __dlpack_device__(self):
                return (1, 0)

        inner = Producer(float_buffer(3), (2, 32, 1), (3,))
        Legacy.__dlpack__ = PlainDlpack(inner)
        before = sys.getrefcount(Legacy)
        for _ in range(3):
            self.assertEqual(dlmap.from_dlpack(Legacy()).via, "dltensor")
        self.assertEqual(sys.getrefcount(Legacy), before + 1, "remembered: its entry holds the class")
        self.assertEqual(inner.calls, [{"stream": None}] * 3, "each import made one plain call")
        modern = Producer(float_buffer(3), (2, 32, 1), (3,))
        Legacy.__dlpack__ = modern.__dlpack__  # monkeypatched: now takes max_version
        self.assertEqual(dlmap.from_dlpack(Legacy()).via, "dltensor_versioned")
        self.assertEqual(modern.calls, [{"max_version": testing.CURRENT, "stream": None}])
        self.assertEqual(sys.getrefcount(Legacy), before, "forgotten once the class changed")

    def test_remembered_types_other_type_errors_and_churn(self):
        # A remembered type's plain call that raises another TypeError propagates it and forgets the type; many
        # distinct types keep the table bounded, and an evicted class is freed (no reference kept).
        def legacy_class():
            class Legacy:
                __dlpack__ = PlainDlpack(Producer(float_buffer(3), (2, 32, 1), (3,)))

                def __dlpack_device__(self):
                    return (1, 0)
            return Legacy

        first = legacy_class()
        self.assertEqual(dlmap.from_dlpack(first()).via, "dltensor")
        held = sys.getrefcount(first)
        first.__dict__["__dlpack__"].fail = True  # the same callable, the class unchanged
        self.assertRaisesExactly(TypeError, "not a tensor today", dlmap.from_dlpack, first())
        self.assertEqual(sys.getrefcount(first), held - 1, "forgotten on another TypeError")
        self.assertRaisesExactly(TypeError, "not a tensor today", dlmap.from_dlpack, first())
        first.__dict__["__dlpack__"].fail = False
        gone = weakref.ref(first)
        self.assertEqual(dlmap.from_dlpack(first()).via, "dltensor")
        del first
        for _ in range(40):
            self.assertEqual(dlmap.from_dlpack(legacy_class()()).via, "dltensor")
        self.assertLessEqual(dlmap._stats()["legacy_only_types"], 8, "a bounded table")
        import gc
        gc.collect()
        self.assertIsNone(gone(), "an evicted class is not kept alive")

    def test_remembered_types_subclasses_instances_and_the_bounded_reask(self):
        # A subclass is a type of its own (asked, then remembered itself); an instance whose own __dlpack__ takes
        # max_version gets the versioned call although its class is remembered; a callable that starts taking
        # max_version without the class changing is asked versioned again within producers.c's bound (1024 calls).
        class Plain(PlainDlpack):  # its own class: the test below replaces its __call__
            pass

        class Legacy:
            __dlpack__ = Plain(Producer(float_buffer(3), (2, 32, 1), (3,)))

            def __dlpack_device__(self):
                return (1, 0)

        class Sub(Legacy):
            pass

        base, sub = sys.getrefcount(Legacy), sys.getrefcount(Sub)
        self.assertEqual((dlmap.from_dlpack(Legacy()).via, dlmap.from_dlpack(Sub()).via), ("dltensor", "dltensor"))
        self.assertEqual((sys.getrefcount(Legacy), sys.getrefcount(Sub)), (base + 1, sub + 1), "each remembered")
        own = Legacy()
        modern = Producer(float_buffer(3), (2, 32, 1), (3,))
        own.__dlpack__ = modern.__dlpack__
        self.assertEqual(dlmap.from_dlpack(own).via, "dltensor_versioned")
        self.assertEqual(modern.calls, [{"max_version": testing.CURRENT, "stream": None}])

        def accepting(self, stream=None, max_version=None):
            return self.producer.__dlpack__(stream=stream, max_version=max_version)

        Plain.__call__ = accepting  # Plain's version tag changes, Legacy's does not
        vias = [dlmap.from_dlpack(Legacy()).via for _ in range(1100)]
        self.assertEqual(vias[0], "dltensor", "still remembered")
        self.assertIn("dltensor_versioned", vias[:1025], "asked versioned again within the bound")
        self.assertEqual(vias[-1], "dltensor_versioned")

    def test_refusals_raised_by_the_producers_code_are_not_remembered(self):
        # A refusal raised by the producer's own code may depend on the instance (a wrapper of a legacy and of a
        # modern array): it is never remembered, and each instance gets the call that fits it.
        legacy = Producer(float_buffer(3), (2, 32, 1), (3,), legacy_only=True)
        modern = Producer(float_buffer(3), (2, 32, 1), (3,))
        for _ in range(3):
            self.assertEqual(dlmap.from_dlpack(legacy).via, "dltensor")
            self.assertEqual(dlmap.from_dlpack(modern).via, "dltensor_versioned")
        self.assertEqual(legacy.calls, [{"max_version": testing.CURRENT, "stream": None}, {}] * 3)
        self.assertEqual(modern.calls, [{"max_version": testing.CURRENT, "stream": None}] * 3)

    def test_legacy_answer_to_a_versioned_request(self):
        p = Producer(float_buffer(3), (2, 32, 1), (3,), legacy_answer=True)
        b = dlmap.from_dlpack(p)
        self.assertEqual((len(p.calls), b.via), (1, "dltensor"))

    def test_producer_errors_propagate(self):
        class Refusing:
            def __dlpack__(self, **kwargs):
                raise BufferError("not today")

            def __dlpack_device__(self):
                return (1, 0)

        self.assertRaisesExactly(BufferError, "not today", dlmap.from_dlpack, Refusing())

        class BadDevice(Refusing):
            def __dlpack_device__(self):
                return "cpu"

        self.assertRaisesExactly(TypeError, "__dlpack_device__() result must be a (device_type, device_id) tuple of "
                                 "ints, got str", dlmap.from_dlpack, BadDevice())

        class NoDevice(Refusing):
            def __dlpack_device__(self):
                return None  # not "no device": a result must be a pair

        self.assertRaisesExactly(TypeError, "__dlpack_device__() result must be a (device_type, device_id) tuple of "
                                 "ints, got NoneType", dlmap.from_dlpack, NoDevice())

    def test_copy_and_device_are_passed_on(self):
        buf = float_buffer(3)
        address = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        p = Producer(buf, (2, 32, 1), (3,))  # ignores copy=True: dlmap copies
        b = dlmap.from_dlpack(p, copy=True)
        self.assertEqual(p.calls, [{"max_version": testing.CURRENT, "stream": None, "copy": True}])
        self.assertTrue(b.copied)
        self.assertNotEqual(b.data_ptr, address)
        self.assertEqual(values(b), [0.0, 1.0, 2.0])
        p = Producer(buf, (2, 32, 1), (3,), flags=testing.FLAG_IS_COPIED)  # says it copied: no second copy
        b = dlmap.from_dlpack(p, copy=True)
        self.assertEqual((b.copied, b.data_ptr), (True, address), "the producer's copy is a copy")
        p = Producer(buf, (2, 32, 1), (3,))
        b = dlmap.from_dlpack(p, copy=False, device="cpu")
        self.assertEqual(p.calls, [{"max_version": testing.CURRENT, "stream": None, "dl_device": (1, 0), "copy": False}])
        self.assertEqual(b.data_ptr, address)

    def test_producer_copies_count_as_copied(self):
        # Array.copied says whether the memory is a copy, whoever made it: a versioned producer's IS_COPIED counts
        # (NumPy 2 honours copy=True itself and sets it), asked for or not; a legacy tensor cannot say it.
        buf = float_buffer(3)
        address = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        for kwargs in [{"copy": True}, {}, {"copy": None}]:
            b = dlmap.from_dlpack(Producer(buf, (2, 32, 1), (3,), flags=testing.FLAG_IS_COPIED), **kwargs)
            self.assertEqual((b.copied, b.data_ptr, b.via, values(b)), (True, address, "dltensor_versioned",
                                                                        [0.0, 1.0, 2.0]), kwargs)
        b = dlmap.from_dlpack(Producer(buf, (2, 32, 1), (3,), flags=testing.FLAG_IS_COPIED | testing.FLAG_READ_ONLY))
        self.assertEqual((b.copied, b.readonly), (True, True))
        b = dlmap.from_dlpack(Producer(buf, (2, 32, 1), (3,)))
        self.assertEqual((b.copied, b.data_ptr), (False, address))
        b = dlmap.from_dlpack(Producer(buf, (2, 32, 1), (3,), legacy_only=True))
        self.assertEqual((b.copied, b.via), (False, "dltensor"))
        # The flag stays the import's: the array's own exports are views of its memory.
        b = dlmap.from_dlpack(Producer(buf, (2, 32, 1), (3,), flags=testing.FLAG_IS_COPIED))
        self.assertEqual(testing.versioned_tensor(b.__dlpack__(max_version=(1, 0))).flags, 0)
        self.assertFalse(dlmap.from_dlpack(b).copied)

    def test_device_errors(self):
        buf = float_buffer(3)
        self.assertRaisesExactly(
            ValueError,
            "Specified device=(kDLCUDA, 0) which requires a copy since the source device is (kDLCPU, 0), however "
            "copy=False. Set copy=True or copy=None to perform the requested operation.",
            dlmap.from_dlpack, Producer(buf, (2, 32, 1), (3,)), device=(2, 0), copy=False)
        self.assertRaisesExactly(TypeError, "device must be None, a device name or a (device_type, device_id) tuple "
                                 "of ints, got list", dlmap.from_dlpack, Producer(buf, (2, 32, 1), (3,)), device=[1, 0])
        self.assertRaisesExactly(ValueError, "Unknown device type name 'nope'", dlmap.from_dlpack,
                                 Producer(buf, (2, 32, 1), (3,)), device="nope")
        self.assertRaisesExactly(TypeError, "copy must be True, False, None or a boolean scalar (numpy.bool_), got str",
                                 dlmap.from_dlpack, Producer(buf, (2, 32, 1), (3,)), copy="no")
        for target in ((5, 0), (200, 0), "vpi"):
            p = Producer(buf, (2, 32, 1), (3,))
            self.assertRaisesExactly(BufferError, "The device passed to from_dlpack has an unsupported device type "
                                     f"(DLDeviceType: {9 if target == 'vpi' else target[0]})", dlmap.from_dlpack, p,
                                     device=target)
            self.assertEqual(p.calls, [], "the producer was not asked for a capsule")
        p = Producer(buf, (2, 32, 1), (3,), device=(200, 0))
        # Refused on __dlpack_device__'s answer, before a capsule is asked for (the array named as str(x)).
        self.assertRaisesExactly(BufferError, "Array passed to from_dlpack is on unsupported device type "
                                 f"(DLDeviceType: 200, array: {p})", dlmap.from_dlpack, p)
        self.assertEqual(p.calls, [], "the producer was not asked for a capsule")
        self.assertEqual(testing.live_hand_made(), 0, "nothing was left alive")

    @testing.without_cuda
    def test_device_without_cuda(self):
        self.assertRaisesExactly(BufferError, CUDA_UNAVAILABLE, dlmap.from_dlpack,
                                 Producer(float_buffer(3), (2, 32, 1), (3,)), device="cuda")

    def test_stream_rules(self):
        buf = float_buffer(3)
        p = Producer(buf, (2, 32, 1), (3,))
        self.assertRaisesExactly(ValueError, f"stream=5 is not valid for device type kDLCPU (1): {CPU_RULE}",
                                 dlmap.from_dlpack, p, stream=5)
        self.assertEqual(p.calls, [], "checked before asking the producer")
        cuda = Producer(None, (2, 32, 1), (3,), device=(2, 0), data=0x10000)
        self.assertRaisesExactly(ValueError, f"stream=0 is not valid for device type kDLCUDA (2): {CUDA_RULE}",
                                 dlmap.from_dlpack, cuda, stream=0)
        b = dlmap.from_dlpack(cuda, stream=0x7f00)
        self.assertEqual(cuda.calls[-1], {"max_version": testing.CURRENT, "stream": 0x7f00})
        self.assertEqual(b.device, (2, 0))
        legacy = Producer(None, (2, 32, 1), (3,), device=(2, 0), data=0x10000, legacy_only=True)
        dlmap.from_dlpack(legacy, stream=1)
        self.assertEqual(legacy.calls, [{"max_version": testing.CURRENT, "stream": 1}, {"stream": 1}],
                         "the fallback still passes a device producer its stream")

    def test_pinned_report(self):
        # PyTorch reports pinned tensors as kDLCUDAHost while the capsule says kDLCPU: the report wins.
        p = Producer(float_buffer(3), (2, 32, 1), (3,), reported=(3, 0))
        b = dlmap.from_dlpack(p)
        self.assertEqual((b.copied, values(b)), (False, [0.0, 1.0, 2.0]))
        self.assertRaisesExactly(ValueError, f"stream=1 is not valid for device type kDLCUDAHost (3): {CPU_RULE}",
                                 dlmap.from_dlpack, Producer(float_buffer(3), (2, 32, 1), (3,), reported=(3, 0)),
                                 stream=1)

    def test_contradicting_report(self):
        # A kDLCUDA tensor whose producer reports the host (issue 14): importing it as host memory let
        # memoryview(a)[0] read the device address. Only host memory reported as pinned host memory may differ.
        tail = ("; a report may differ from the tensor only to name pinned host memory for a tensor in host memory. "
                "The tensor was released.")
        for legacy_only in [True, False]:
            p = Producer(None, (2, 32, 1), (3,), device=(2, 0), data=0x10000, legacy_only=legacy_only,
                         reported=(1, 0), tag="liar")
            testing.deleted.clear()
            e = self.assertRaisesExactly(BufferError, "__dlpack_device__ reported device type kDLCPU (1) but the DLPack "
                                         "tensor is on (kDLCUDA, 0)" + tail, dlmap.from_dlpack, p)
            self.assertEqual((e.dlmap_id, e.dlmap_code), ("device_report_mismatch", 215))
            self.assertEqual(testing.deleted, ["liar"], "the deleter ran exactly once")
        p = Producer(float_buffer(3), (2, 32, 1), (3,), reported=(13, 0), tag="managed")
        testing.deleted.clear()
        self.assertRaisesExactly(BufferError, "__dlpack_device__ reported device type kDLCUDAManaged (13) but the "
                                 "DLPack tensor is on (kDLCPU, 0)" + tail, dlmap.from_dlpack, p)
        self.assertEqual(testing.deleted, ["managed"])
        rocm_pinned = dlmap.from_dlpack(Producer(float_buffer(3), (2, 32, 1), (3,), reported=(11, 0)))
        self.assertEqual((rocm_pinned.device, rocm_pinned.copied), ((11, 0), False))

    def test_unknown_major_version(self):
        p = Producer(float_buffer(3), (2, 32, 1), (3,), version=(2, 0), tag="v2")
        testing.deleted.clear()
        self.assertRaisesExactly(BufferError, "The DLPack tensor has version 2.0, whose major version this build cannot "
                                 "read (it supports up to %d.%d); the tensor was released." % testing.CURRENT,
                                 dlmap.from_dlpack, p)
        self.assertEqual(testing.deleted, ["v2"], "the deleter ran exactly once")

    def test_read_only_producer(self):
        buf = float_buffer(3)
        p = Producer(buf, (2, 32, 1), (3,), flags=testing.FLAG_READ_ONLY)
        b = dlmap.from_dlpack(p)
        self.assertTrue(b.readonly)
        self.assertRaisesExactly(BufferError, "Object is not writable.", testing.get_buffer, b, testing.PyBUF_WRITABLE)
        self.assertRaisesExactly(BufferError, READ_ONLY_LEGACY, b.__dlpack__)
        self.assertEqual(testing.versioned_tensor(b.__dlpack__(max_version=(1, 0))).flags, testing.FLAG_READ_ONLY)
        self.assertRaisesExactly(ValueError, "Invalid argument readonly: the producer marked the data read-only; use "
                                 "dlmap.from_dlpack(x, copy=True) for a writable copy", setattr, b, "readonly", False)
        c = dlmap.from_dlpack(p, copy=True)
        self.assertEqual((c.readonly, c.copied, values(c)), (False, True, [0.0, 1.0, 2.0]))
        memoryview(c)[0] = 9.0
        self.assertEqual(buf[0], 0.0)

    def test_byte_offset(self):
        buf = float_buffer(6)
        base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        b = dlmap.from_dlpack(Producer(buf, (2, 32, 1), (2, 2), byte_offset=8))
        self.assertEqual((b.byte_offset, b.data_ptr, values(b)), (8, base + 8, [[2.0, 3.0], [4.0, 5.0]]))
        t = testing.versioned_tensor(b.__dlpack__(max_version=(1, 3))).dl_tensor
        self.assertEqual((t.data, t.byte_offset), (base + 8, 0), "host exports fold byte_offset into data")

    def test_producer_and_consumer_lifetimes(self):
        buf = float_buffer(3)
        p = Producer(buf, (2, 32, 1), (3,), tag="life")
        b = dlmap.from_dlpack(p)
        del p, buf  # producer object gone first: its tensor keeps the memory
        self.assertEqual(values(b), [0.0, 1.0, 2.0])
        self.assertEqual(testing.live_hand_made(), 1)
        del b
        self.assertEqual(testing.live_hand_made(), 0)
        a = filled(3)
        b = dlmap.from_dlpack(a)
        del b  # consumer gone first
        self.assertEqual(values(a), [0.0, 1.0, 2.0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
