# dlmap Python binding tests — interop with the installed NumPy: NumPy → dlmap through ndarray.__dlpack__ and
# dlmap → NumPy through np.from_dlpack, zero-copy and values for every dtype NumPy exchanges, every layout, read-only
# arrays and lifetimes. NumPy 1.x speaks legacy DLPack only, NumPy 2 the versioned protocol: the tests probe what the
# NumPy in front of them does (never its version) and check the contract's outcome for that.
import sys
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


class Recorder:
    """A Python producer over x that records the keywords each __dlpack__ call got, and what x raised last."""

    def __init__(self, x):
        self.x, self.calls, self.raised = x, [], None

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        try:
            return self.x.__dlpack__(**kwargs)
        except Exception as e:
            self.raised = e
            raise

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


# ---- what the installed NumPy does (probed, not read from its version) ----------------------------------------------


def _numpy_export_version():
    """The version on the tensor ndarray.__dlpack__(max_version=...) returns, or None where the keyword is a TypeError
    (NumPy 1.x takes only `stream`)."""
    try:
        capsule = np.zeros(1).__dlpack__(max_version=testing.CURRENT)
    except TypeError:
        return None
    if testing.capsule_name(capsule) != "dltensor_versioned":
        return (0, 0)
    v = testing.versioned_tensor(capsule).version
    return (v.major, v.minor)


def _numpy_asks_versioned():
    """Whether np.from_dlpack asks its producer for a versioned capsule (max_version >= (1, 0))."""
    r = Recorder(dlmap.empty(1))
    np.from_dlpack(r)
    return tuple(r.calls[-1].get("max_version") or (0, 0)) >= (1, 0)


NUMPY_EXPORT_VERSION = _numpy_export_version()
NUMPY_VERSIONED = NUMPY_EXPORT_VERSION is not None and NUMPY_EXPORT_VERSION >= (1, 0)
NUMPY_VIA, NUMPY_VERSION = ("dltensor_versioned", NUMPY_EXPORT_VERSION) if NUMPY_VERSIONED else ("dltensor", (0, 0))
NUMPY_ASKS_VERSIONED = _numpy_asks_versioned()
print(f"numpy (as detected): exports {NUMPY_VIA} {NUMPY_VERSION}; np.from_dlpack asks for "
      f"{'versioned' if NUMPY_ASKS_VERSIONED else 'legacy'} capsules")


class NumpyToDlmapTest(DlmapTestCase):
    def check(self, n, name):
        a = dlmap.from_dlpack(n)
        self.assertEqual(a.data_ptr, n.ctypes.data, f"{name}: zero-copy")
        self.assertEqual((a.shape, a.dtype, a.device, a.readonly, a.copied, a.via, a.version),
                         (n.shape, str(n.dtype), (1, 0), False, False, NUMPY_VIA, NUMPY_VERSION), name)
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

    def test_negotiation(self):
        n = sample("int32")
        if NUMPY_VERSIONED:
            # NumPy 2 takes max_version: a versioned capsule, and ndarray is not remembered as legacy-only.
            before = dlmap._stats()["legacy_only_types"]
            for _ in range(2):
                a = dlmap.from_dlpack(n)
                self.assertEqual((a.via, a.version), ("dltensor_versioned", NUMPY_VERSION))
            self.assertLessEqual(NUMPY_VERSION, testing.CURRENT, "not above the max_version dlmap asked for")
            self.assertEqual(dlmap._stats()["legacy_only_types"], before)
            return
        # NumPy 1.x's __dlpack__ takes only `stream`: max_version raises TypeError, dlmap retries plainly.
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

        # The overrides' signature has no max_version: called plainly, they return NumPy's legacy capsule.
        for cls, via in ((Logged, "dltensor"), (Slotted, "dltensor"), (Plain, NUMPY_VIA)):
            n = sample("float32").view(cls)
            a = dlmap.from_dlpack(n)
            self.assertEqual((a.data_ptr, a.via), (n.ctypes.data, via), cls.__name__)
        self.assertEqual(calls, ["Logged", "Slotted"])

    def test_subclasses_refusing_max_version_are_remembered(self):
        # A Python subclass of ndarray (a mutable type, with an instance dict: its __dlpack__ is ndarray's C method
        # bound per call) answers as ndarray does. Under NumPy 1.x the refusal is the C method's own argument
        # parsing: the subclass is remembered (its entry holds it, issue 58) and called plainly from then on; under
        # NumPy 2 it takes max_version and nothing is remembered.
        class Sub(np.ndarray):
            pass

        n = sample("float32").view(Sub)
        held = sys.getrefcount(Sub)
        for _ in range(3):
            a = dlmap.from_dlpack(n)
            self.assertEqual((a.data_ptr, a.via), (n.ctypes.data, NUMPY_VIA))
        self.assertEqual(sys.getrefcount(Sub), held + (0 if NUMPY_VERSIONED else 1))
        Sub.note = "changed"  # its version tag changes: asked versioned again, and remembered again under 1.x
        self.assertEqual(dlmap.from_dlpack(n).via, NUMPY_VIA)
        self.assertEqual(sys.getrefcount(Sub), held + (0 if NUMPY_VERSIONED else 1))

    def test_copy_and_device(self):
        n = sample("float64")
        c = dlmap.from_dlpack(n, copy=True)  # NumPy 2 copies itself (IS_COPIED), NumPy 1.x leaves it to dlmap
        self.assertTrue(c.copied)
        self.assertNotEqual(c.data_ptr, n.ctypes.data)
        np.testing.assert_array_equal(read(c), n)
        memoryview(c)[0, 0] = -5.0  # the copy is the caller's
        self.assertNotEqual(n[0, 0], -5.0)
        v = dlmap.from_dlpack(n.T, copy=False, device="cpu")
        self.assertEqual((v.data_ptr, v.copied), (n.ctypes.data, False))
        # A move to CUDA without a copy is refused: by NumPy where it takes dl_device (its refusal passed on as it is),
        # else by dlmap once the capsule shows the host array.
        r = Recorder(n)
        with self.assertRaises(Exception) as ctx:
            dlmap.from_dlpack(r, device="cuda", copy=False)
        if r.raised is not None and not isinstance(r.raised, TypeError):
            print(f"numpy refuses dl_device=(2, 0), copy=False itself: {type(r.raised).__name__}: {r.raised}")
            self.assertIs(ctx.exception, r.raised)
        else:
            self.assertIs(type(ctx.exception), ValueError)
            self.assertEqual(str(ctx.exception), "Specified device=(kDLCUDA, 0) which requires a copy since the source "
                             "device is (kDLCPU, 0), however copy=False. Set copy=True or copy=None to perform the "
                             "requested operation.")
        self.assertRaisesExactly(ValueError,
                                 "stream=1 is not valid for device type kDLCPU (1): this device type takes no stream, "
                                 "so stream must be None.", dlmap.from_dlpack, n, stream=1)

    def test_copy_made_by_numpy(self):
        # Where NumPy honours copy=True itself, its tensor says IS_COPIED and dlmap makes no second copy; the array is
        # still a copy (Array.copied counts the producer's copies).
        n = sample("float32")
        if not NUMPY_VERSIONED:
            print("numpy exports legacy capsules only: copy=True is dlmap's copy (test_copy_and_device)")
            return
        capsule = n.__dlpack__(max_version=testing.CURRENT, copy=True)
        self.assertEqual(testing.versioned_tensor(capsule).flags & testing.FLAG_IS_COPIED, testing.FLAG_IS_COPIED)
        r = Recorder(n)
        c = dlmap.from_dlpack(r, copy=True)
        self.assertIs(r.calls[-1]["copy"], True)
        self.assertEqual((c.copied, c.readonly, c.via), (True, False, "dltensor_versioned"))
        self.assertNotEqual(c.data_ptr, n.ctypes.data)
        np.testing.assert_array_equal(read(c), n)

    def test_read_only_arrays(self):
        # A read-only array is never imported as writable: a producer that can say READ_ONLY (versioned) says it, one
        # that cannot (legacy only) refuses to export it, and dlmap passes that BufferError on.
        n = sample("float32")
        n.flags.writeable = False
        if NUMPY_VERSIONED:
            for kwargs in [{}, {"copy": False}]:
                a = dlmap.from_dlpack(n, **kwargs)
                self.assertEqual((a.readonly, a.copied, a.data_ptr), (True, False, n.ctypes.data), kwargs)
                self.assertRaises(ValueError, setattr, a, "readonly", False)
            c = dlmap.from_dlpack(n, copy=True)
            self.assertEqual((c.readonly, c.copied), (False, True))
            self.assertNotEqual(c.data_ptr, n.ctypes.data)
            np.testing.assert_array_equal(read(c), n)
        else:
            with self.assertRaises(BufferError) as ctx:  # NumPy's own refusal, as dlmap must pass it on
                n.__dlpack__()
            for kwargs in [{}, {"copy": True}, {"copy": False}]:
                self.assertRaisesExactly(BufferError, str(ctx.exception), dlmap.from_dlpack, n, **kwargs)
        w = np.array(n)  # a writable copy exchanges as writable
        self.assertFalse(dlmap.from_dlpack(w).readonly)

    def test_bool(self):
        # DLPack has bool (kDLBool); NumPy 1.x refuses to export it, NumPy 2 exports it.
        b = np.array([True, False, True])
        try:
            b.__dlpack__()
        except BufferError as e:
            print(f"numpy refuses to export bool: {e}")
            self.assertRaisesExactly(BufferError, str(e), dlmap.from_dlpack, b)
            return
        a = dlmap.from_dlpack(b)
        self.assertEqual((a.dtype, a.data_ptr, a.via), ("bool", b.ctypes.data, NUMPY_VIA))
        self.assertEqual(memoryview(a).tolist(), [True, False, True])

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
        # Whether the import is writable is NumPy's choice for a writable source (NumPy 1.x and 2.2 mark every import
        # read-only, later ones follow the READ_ONLY flag); a read-only source is test_read_only's.
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
        if m.flags.writeable:  # and NumPy's writes, where its import is writable
            m[1] = -3
            self.assertEqual(read(a)[1], -3)

    def test_read_only(self):
        # A read-only dlmap array: a versioned capsule says READ_ONLY and NumPy's import must not be writable; a legacy
        # capsule cannot say it, so dlmap refuses.
        a = dlmap.empty(3)
        a.readonly = True
        if NUMPY_ASKS_VERSIONED:
            m = np.from_dlpack(a)
            self.assertEqual((m.ctypes.data, m.flags.writeable), (a.data_ptr, False))
            del m
        else:
            self.assertRaisesExactly(BufferError, READ_ONLY_LEGACY, np.from_dlpack, a)
        self.assertEqual(dlmap._stats()["live_exports"], 0)

    def test_dtypes_numpy_may_refuse(self):
        # bool and bfloat16 are DLPack dtypes NumPy may not take (NumPy 1.x neither, NumPy 2 bool only). Either NumPy
        # imports the array exactly (zero-copy, its dtype) or refuses cleanly, releasing dlmap's export.
        for dtype in ["bool", "bfloat16"]:
            a = dlmap.empty(2, dtype)
            try:
                m = np.from_dlpack(a)
            except (BufferError, RuntimeError) as e:
                print(f"numpy refuses {dtype}: {type(e).__name__}: {e}")
            else:
                self.assertEqual((str(m.dtype), m.ctypes.data, m.tolist()), (dtype, a.data_ptr, [0, 0]), dtype)
                del m
            self.assertEqual(dlmap._stats()["live_exports"], 0, f"{dtype}: NumPy released what it refused or dropped")

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
        # NumPy → dlmap → NumPy → dlmap: still the same values and, where NumPy can re-export its import, memory.
        n = sample("complex64")
        a = dlmap.from_dlpack(n)
        m = np.from_dlpack(a)
        self.assertEqual(m.ctypes.data, n.ctypes.data)
        if m.flags.writeable or NUMPY_VERSIONED:  # a read-only import re-exports only where READ_ONLY can be said
            b = dlmap.from_dlpack(m)
            self.assertEqual((b.data_ptr, b.readonly), (n.ctypes.data, not m.flags.writeable))
        else:
            # NumPy 1.x marks its import read-only and refuses to export that: the chain needs a copy on NumPy's side.
            self.assertRaises(BufferError, dlmap.from_dlpack, m)
            b = dlmap.from_dlpack(m.copy())
        np.testing.assert_array_equal(read(b), n)


if __name__ == "__main__":
    unittest.main(verbosity=2)
