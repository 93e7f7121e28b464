# dlmap Python binding tests — interop with Debian's NumPy (1.24, legacy DLPack only): NumPy → dlmap through
# ndarray.__dlpack__ and dlmap → NumPy through np.from_dlpack, zero-copy and values for every dtype NumPy exchanges,
# every layout, read-only arrays and lifetimes, plus what NumPy 1.24 cannot do.
import unittest
import weakref

import dlmap
import testing
from testing import DlmapTestCase

np = testing.require("numpy", "python3-numpy")

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "complex64", "complex128"]
READ_ONLY_LEGACY = ("Cannot export a read-only array as a legacy DLManagedTensor, which cannot mark it read-only; pass "
                    "max_version=(1, 0) or higher, or copy=True.")


def sample(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    base = np.arange(n) - n // 3
    if dtype.startswith("uint"):
        base = np.arange(n) * 7
    data = base.astype(dtype)
    if dtype.startswith("complex"):
        data = data + 1j * np.arange(n)[::-1].astype(dtype)
    return data.reshape(shape)


def layouts(dtype):
    """(name, array): every layout the issue lists, all views of one buffer."""
    base = sample(dtype, (4, 6))
    return [
        ("contiguous", base),
        ("transposed", base.T),
        ("sliced", base[::2, 1:5]),
        ("negative", base[::-1, ::-2]),
        ("fortran", np.asfortranarray(base)),
        ("0-d", np.array(base[1, 2])),
        ("size-0", base[:0]),
        ("size-0 3-d", np.zeros((2, 0, 3), dtype)),
        ("3-d sliced", sample(dtype, (3, 4, 5))[:, ::2, 1:]),
    ]


def read(a):
    """The dlmap array's values, read through the buffer protocol (not through DLPack)."""
    return np.asarray(memoryview(a))


class NumpyToDlmapTest(DlmapTestCase):
    def check(self, n, name):
        a = dlmap.from_dlpack(n)
        self.assertEqual(a.data_ptr, n.ctypes.data, f"{name}: zero-copy")
        self.assertEqual((a.shape, a.dtype, a.device, a.readonly, a.copied, a.via, a.version),
                         (n.shape, str(n.dtype), (1, 0), False, False, "dltensor", (0, 0)), name)
        for extent, mine, theirs in zip(n.shape, a.strides, n.strides):
            if extent > 1 and n.size > 0:  # NumPy may send any stride for extents 0 and 1, and without elements
                self.assertEqual(mine * n.itemsize, theirs, name)
        np.testing.assert_array_equal(read(a), n, err_msg=name)
        return a

    def test_dtypes_and_layouts(self):
        for dtype in DTYPES:
            for layout, n in layouts(dtype):
                self.check(n, f"{dtype} {layout}")

    def test_writes_are_shared(self):
        n = sample("float32")
        a = self.check(n[:, 1:], "sliced")
        memoryview(a)[0, 0] = 99.5
        self.assertEqual(n[0, 1], 99.5)
        n[2, 3] = -1.0
        self.assertEqual(read(a)[2, 2], -1.0)

    def test_negotiation_falls_back_to_legacy(self):
        # NumPy 1.24's __dlpack__ takes only `stream`: max_version raises TypeError, dlmap retries plainly.
        n = sample("int32")
        with self.assertRaises(TypeError):
            n.__dlpack__(max_version=(1, 3))
        self.assertEqual(dlmap.from_dlpack(n).version, (0, 0))
        # ndarray is an immutable type: dlmap remembers the answer and calls plainly from then on.
        self.assertGreaterEqual(dlmap._stats()["legacy_only_types"], 1)
        self.assertEqual(dlmap.from_dlpack(n).version, (0, 0))

    def test_subclasses_use_their_own_methods(self):
        # ndarray's own C methods are called without binding them (issue 15); a subclass's override, with or without
        # an instance dict, is still the one called.
        calls = []

        class Logged(np.ndarray):
            def __dlpack__(self, stream=None):
                calls.append(type(self).__name__)
                return super().__dlpack__(stream=stream)

        class Slotted(Logged):
            __slots__ = ()

        class Plain(np.ndarray):
            __slots__ = ()

        for cls in (Logged, Slotted, Plain):
            n = sample("float32").view(cls)
            a = dlmap.from_dlpack(n)
            self.assertEqual((a.data_ptr, a.via), (n.ctypes.data, "dltensor"), cls.__name__)
        self.assertEqual(calls, ["Logged", "Slotted"])

    def test_copy_and_device(self):
        n = sample("float64")
        c = dlmap.from_dlpack(n, copy=True)
        self.assertTrue(c.copied)
        self.assertNotEqual(c.data_ptr, n.ctypes.data)
        np.testing.assert_array_equal(read(c), n)
        v = dlmap.from_dlpack(n.T, copy=False, device="cpu")
        self.assertEqual((v.data_ptr, v.copied), (n.ctypes.data, False))
        self.assertRaisesExactly(
            ValueError,
            "Specified device=(kDLCUDA, 0) which requires a copy since the source device is (kDLCPU, 0), however "
            "copy=False. Set copy=True or copy=None to perform the requested operation.",
            dlmap.from_dlpack, n, device="cuda", copy=False)
        self.assertRaisesExactly(ValueError,
                                 "stream=1 is not valid for device type kDLCPU (1): this device type takes no stream, "
                                 "so stream must be None.", dlmap.from_dlpack, n, stream=1)

    def test_read_only_arrays(self):
        # NumPy 1.24 cannot say READ_ONLY (legacy DLPack only) and refuses to export a read-only array at all; dlmap
        # passes that BufferError on rather than importing the memory as writable.
        n = sample("float32")
        n.flags.writeable = False
        for kwargs in [{}, {"copy": True}, {"copy": False}]:
            self.assertRaisesExactly(BufferError,
                                     "Cannot export readonly array since signalling readonly is unsupported by DLPack.",
                                     dlmap.from_dlpack, n, **kwargs)
        w = np.array(n)  # a writable copy exchanges fine
        self.assertFalse(dlmap.from_dlpack(w).readonly)

    def test_bool_is_not_exchanged_by_numpy_1_24(self):
        b = np.array([True, False])
        self.assertRaisesExactly(BufferError,
                                 "DLPack only supports signed/unsigned integers, float and complex dtypes.",
                                 dlmap.from_dlpack, b)

    def test_numpy_integer_arguments(self):
        a = dlmap.empty(3)
        cap = a.__dlpack__(max_version=(np.int64(1), np.int32(3)), dl_device=(np.int64(1), np.int64(0)))
        self.assertEqual(testing.capsule_name(cap), "dltensor_versioned")

    def test_numpy_bool_for_copy(self):
        # copy=np.bool_(...) is what a comparison gives a caller (issue 14: it was refused). Boolean scalars of any
        # array library (ndim 0, dtype.kind 'b') count as their truth value; the producer is passed a real bool.
        a = dlmap.empty(3)
        for flag, copied in [(np.bool_(True), True), (np.bool_(False), False), (np.array(True), True),
                             (np.array(3) > 2, True)]:
            cap = a.__dlpack__(max_version=(1, 3), copy=flag)
            self.assertEqual(testing.versioned_tensor(cap).dl_tensor.data != a.data_ptr, copied, flag)
            self.assertEqual(dlmap.from_dlpack(a, copy=flag).copied, copied, flag)
        p = testing.Producer(sample("float32").copy(), (2, 32, 1), (12,))
        dlmap.from_dlpack(p, copy=np.bool_(True))
        self.assertIs(p.calls[-1]["copy"], True)
        for bad in [np.array([True]), np.int64(1), np.float32(1.0), np.array(1)]:
            self.assertRaisesExactly(TypeError, "copy must be True, False, None or a boolean scalar (numpy.bool_), got "
                                     f"numpy.{type(bad).__name__}", a.__dlpack__, copy=bad)

    def test_lifetimes(self):
        n = sample("int64").copy()  # owns its memory: n[1:].base is n
        wn = weakref.ref(n)
        a = dlmap.from_dlpack(n[1:])
        del n  # producer first: the capsule's tensor keeps NumPy's memory
        self.assertIsNotNone(wn())
        np.testing.assert_array_equal(read(a), sample("int64")[1:])
        del a
        self.assertIsNone(wn())
        n = sample("int64")
        a = dlmap.from_dlpack(n)
        del a  # consumer first
        np.testing.assert_array_equal(n, sample("int64"))


class DlmapToNumpyTest(DlmapTestCase):
    def check(self, a, expected, name):
        m = np.from_dlpack(a)
        self.assertEqual(m.ctypes.data, a.data_ptr, f"{name}: zero-copy")
        self.assertEqual((m.shape, str(m.dtype)), (a.shape, a.dtype), name)
        np.testing.assert_array_equal(m, expected, err_msg=name)
        # NumPy 1.24 marks every DLPack import read-only (it cannot know better from a legacy capsule).
        self.assertFalse(m.flags.writeable, name)
        return m

    def test_dtypes(self):
        for dtype in DTYPES:
            a = dlmap.empty((3, 4), dtype)
            read(a)[...] = sample(dtype)
            self.check(a, sample(dtype), dtype)

    def test_layouts(self):
        for dtype in ["float32", "complex128", "int8"]:
            for layout, n in layouts(dtype):
                self.check(dlmap.from_dlpack(n), n, f"{dtype} {layout}")

    def test_dlmap_writes_are_visible(self):
        a = dlmap.empty(4, "int32")
        m = self.check(a, np.zeros(4, "int32"), "zeros")
        read(a)[2] = 7
        self.assertEqual(m[2], 7)

    def test_read_only_over_legacy(self):
        # np.from_dlpack asks for a legacy capsule, which cannot mark data read-only: dlmap refuses.
        a = dlmap.empty(3)
        a.readonly = True
        self.assertRaisesExactly(BufferError, READ_ONLY_LEGACY, np.from_dlpack, a)
        self.assertEqual(dlmap._stats()["live_exports"], 0)

    def test_bool_and_bfloat16_are_refused_by_numpy_1_24(self):
        for dtype in ["bool", "bfloat16"]:
            self.assertRaisesExactly(RuntimeError, "Unsupported dtype in DLTensor.", np.from_dlpack, dlmap.empty(2, dtype))
        self.assertEqual(dlmap._stats()["live_exports"], 0, "NumPy released what it refused")

    def test_lifetimes(self):
        a = dlmap.empty((2, 2), "float64")
        read(a)[...] = [[1, 2], [3, 4]]
        wa = weakref.ref(a)
        m = np.from_dlpack(a)
        del a  # producer first
        self.assertIsNotNone(wa())
        np.testing.assert_array_equal(m, [[1, 2], [3, 4]])
        del m
        self.assertIsNone(wa())
        a = dlmap.empty(2)
        m = np.from_dlpack(a)
        del m  # consumer first
        self.assertEqual(dlmap._stats()["live_exports"], 0)

    def test_round_trip_through_numpy(self):
        # NumPy → dlmap → NumPy → (a writable NumPy copy) → dlmap: still the same values; the first two hops zero-copy.
        n = sample("complex64")
        a = dlmap.from_dlpack(n)
        m = np.from_dlpack(a)
        self.assertEqual(m.ctypes.data, n.ctypes.data)
        # NumPy 1.24 will not re-export m (read-only): the chain dlmap → NumPy → dlmap needs a copy on NumPy's side.
        self.assertRaises(BufferError, dlmap.from_dlpack, m)
        b = dlmap.from_dlpack(m.copy())
        np.testing.assert_array_equal(read(b), n)


if __name__ == "__main__":
    unittest.main(verbosity=2)
