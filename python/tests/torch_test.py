# dlmap Python binding tests — interop with the installed PyTorch: torch → dlmap (through torch's C exchange table
# where torch.Tensor publishes one, else Tensor.__dlpack__) and dlmap → torch through torch.utils.dlpack.from_dlpack and
# through the tables, zero-copy and values for every dtype both exchange, every layout, read-only arrays, byte_offset
# and lifetimes. PyTorch 1.13 speaks legacy DLPack only, later ones the versioned protocol, and from 2.9 the DLPack C
# exchange API: the tests probe what the PyTorch in front of them does (never its version) and check the contract's
# outcome for that.
import ctypes
import subprocess
import sys
import textwrap
import unittest
import weakref

import dlmap
import testing
from testing import DlmapTestCase, Producer

np = testing.require("numpy", "python3-numpy")
torch = testing.require("torch", "python3-torch")
to_torch = torch.utils.dlpack.from_dlpack

# The dtypes every PyTorch exchanges in both directions (1.13's DLPack lacks bool and 16/32/64-bit unsigned integers).
DTYPES = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64, "int8": torch.int8,
          "int16": torch.int16, "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
          "complex64": torch.complex64, "complex128": torch.complex128}
READ_ONLY_LEGACY = ("Cannot export a read-only array as a legacy DLManagedTensor, which cannot mark it read-only; pass "
                    "max_version=(1, 0) or higher, or copy=True.")


def sample(dtype, shape=(4, 6)):
    n = 1
    for s in shape:
        n *= s
    t = torch.arange(n, dtype=torch.float64) - n // 3
    if dtype in ("uint8",):
        t = torch.arange(n, dtype=torch.float64) * 3 % 256
    if dtype.startswith("complex"):
        return torch.complex(t, -t).to(DTYPES[dtype]).reshape(shape)
    return t.to(DTYPES[dtype]).reshape(shape)


def torch_layouts(dtype):
    base = sample(dtype)
    return [
        ("contiguous", base),
        ("transposed", base.t()),
        ("sliced", base[::2, 1:5]),
        ("column", base[:, 2]),
        ("fortran", base.t().contiguous().t()),
        ("0-d", base[1, 2].clone()),
        ("size-0", base[:0]),
        ("3-d permuted", sample(dtype, (2, 3, 4)).permute(2, 0, 1)),
        ("storage offset", base[1:, 3:]),
    ]


def read(a):
    return np.asarray(memoryview(a))


class Recorder:
    """A Python producer over x (so that a consumer takes the __dlpack__ path): records each call's keywords, what it
    returned and what x raised last."""

    def __init__(self, x):
        self.x, self.calls, self.returned, self.raised = x, [], [], None

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        try:
            capsule = self.x.__dlpack__(**kwargs)
        except Exception as e:
            self.raised = e
            raise
        self.returned.append(capsule)
        return capsule

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


# ---- what the installed PyTorch does (probed, not read from its version) --------------------------------------------


def _torch_table():
    """torch.Tensor's DLPack C exchange table (PyTorch >= 2.9), or None."""
    capsule = getattr(torch.Tensor, "__dlpack_c_exchange_api__", None)
    if capsule is None or testing.capsule_name(capsule) != "dlpack_exchange_api":
        return None
    return testing.exchange_api(torch.Tensor)


def _torch_export():
    """(via, version) of what dlmap.from_dlpack gets from a torch tensor: the table's tensor where dlmap can use the
    table (its major is dlmap's), else Tensor.__dlpack__(max_version=...)'s capsule, else a legacy one."""
    if TABLE is not None and TABLE.header.version.major == testing.CURRENT[0]:
        out = ctypes.POINTER(testing.DLManagedTensorVersioned)()
        if TABLE.managed_tensor_from_py_object_no_sync(torch.zeros(1), ctypes.byref(out)) == 0:
            version = (out.contents.version.major, out.contents.version.minor)
            testing.run_deleter(out)
            return "c_exchange_api", version
    try:
        capsule = torch.zeros(1).__dlpack__(max_version=testing.CURRENT)
    except TypeError:
        return "dltensor", (0, 0)
    if testing.capsule_name(capsule) != "dltensor_versioned":
        return "dltensor", (0, 0)
    v = testing.versioned_tensor(capsule).version
    return "dltensor_versioned", (v.major, v.minor)


def _torch_asks():
    """The keywords torch.utils.dlpack.from_dlpack passes to a producer's __dlpack__."""
    r = Recorder(dlmap.empty(1))
    to_torch(r)
    return r.calls[-1]


TABLE = _torch_table()
TORCH_VIA, TORCH_VERSION = _torch_export()
TORCH_ASKS = _torch_asks()
TORCH_ASKS_VERSIONED = tuple(TORCH_ASKS.get("max_version") or (0, 0)) >= (1, 0)
print(f"torch (as detected): C exchange table {'published' if TABLE else 'absent'}; dlmap imports through "
      f"{TORCH_VIA} {TORCH_VERSION}; torch.utils.dlpack.from_dlpack asks __dlpack__({TORCH_ASKS})")
NO_TABLE = "torch.Tensor publishes no __dlpack_c_exchange_api__ (PyTorch before 2.9): no C exchange API to exercise"


class TorchToDlmapTest(DlmapTestCase):
    def check(self, t, name):
        a = dlmap.from_dlpack(t)
        self.assertEqual(a.data_ptr, t.data_ptr(), f"{name}: zero-copy")
        self.assertEqual((a.shape, a.device, a.readonly, a.copied, a.via, a.version),
                         (tuple(t.shape), (1, 0), False, False, TORCH_VIA, TORCH_VERSION), name)
        for extent, mine, theirs in zip(t.shape, a.strides, t.stride()):
            if extent > 1:  # PyTorch normalises the strides of extent-1 dimensions
                self.assertEqual(mine, theirs, name)
        np.testing.assert_array_equal(read(a), t.numpy(), err_msg=name)
        return a

    def test_dtypes_and_layouts(self):
        for dtype in DTYPES:
            for layout, t in torch_layouts(dtype):
                a = self.check(t, f"{dtype} {layout}")
                self.assertEqual(a.dtype, dtype)

    def test_bfloat16(self):
        t = torch.arange(6, dtype=torch.bfloat16)
        a = dlmap.from_dlpack(t)
        self.assertEqual((a.dtype, a.data_ptr), ("bfloat16", t.data_ptr()))
        back = to_torch(a)
        self.assertTrue(torch.equal(back, t))

    def test_writes_are_shared(self):
        t = sample("float32")
        a = self.check(t[1:, 2:], "offset")
        memoryview(a)[0, 0] = 42.0
        self.assertEqual(t[1, 2].item(), 42.0)
        t[3, 5] = -7.0
        self.assertEqual(read(a)[2, 3], -7.0)

    def test_negotiation(self):
        # dlmap takes torch's C exchange table where torch.Tensor publishes one (no __dlpack__ call), else asks
        # __dlpack__ for a versioned capsule and falls back to a plain call where the keyword is a TypeError.
        t = sample("int32")
        a = dlmap.from_dlpack(t)
        self.assertEqual((a.via, a.version, a.data_ptr), (TORCH_VIA, TORCH_VERSION, t.data_ptr()))
        if TORCH_VIA == "dltensor":
            with self.assertRaises(TypeError):  # PyTorch 1.13's __dlpack__(self, stream=None)
                t.__dlpack__(max_version=(1, 3))
        if TABLE is None:
            print(NO_TABLE)
            return
        calls = []

        class Logged(torch.Tensor):  # inherits the table: the table is used, the override is never called
            def __dlpack__(self, *args, **kwargs):
                calls.append(kwargs)
                return super().__dlpack__(*args, **kwargs)

        b = dlmap.from_dlpack(t.as_subclass(Logged))
        self.assertEqual((b.via, b.data_ptr, calls), ("c_exchange_api", t.data_ptr(), []))

    def test_torch_refusals_propagate(self):
        # What torch's __dlpack__ refuses, dlmap passes on unchanged (the very exception); what it exports is imported
        # exactly (bool: PyTorch 1.13 refuses it, later ones export it). A Recorder keeps dlmap on the __dlpack__ path.
        cases = [("bool", torch.tensor([True, False])), ("requires_grad", torch.ones(3, requires_grad=True)),
                 ("conj", torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64).conj())]
        for name, t in cases:
            r = Recorder(t)
            try:
                a = dlmap.from_dlpack(r)
            except Exception as e:
                self.assertIsNotNone(r.raised, f"{name}: torch raised it")
                self.assertIs(e, r.raised, name)
                print(f"torch's __dlpack__ refuses {name}: {type(e).__name__}: {e}")
            else:
                self.assertEqual((a.data_ptr, read(a).tolist()), (t.data_ptr(), t.tolist()), name)

    def test_states_dlpack_cannot_carry_import_as_dunder_dlpack_says(self):
        # A tensor in a state no DLPack field carries (conjugate or negative bit, requires_grad, a non-strided layout,
        # quantized) gets what torch's own __dlpack__ path gives (the same refusal, or the same values), or dlmap's
        # clean catalogue error from_dlpack_producer_state; never the table's stored values (PyTorch 2.9+'s table
        # skips __dlpack__'s checks: spec/versions.yaml exchange_api.producer_states).
        if TABLE is None:
            print(NO_TABLE + "; the states' outcome is still compared with the __dlpack__ path's")
        stored = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
        makers = [("conj", lambda: stored.conj()), ("neg", lambda: stored.conj().imag),
                  ("requires_grad", lambda: torch.ones(3, requires_grad=True)),
                  ("sparse_coo", lambda: torch.eye(2).to_sparse()), ("sparse_csr", lambda: torch.eye(2).to_sparse_csr()),
                  ("sparse_csc", lambda: torch.eye(2).to_sparse_csc()),
                  ("quantized", lambda: torch.quantize_per_tensor(torch.eye(2), 0.1, 0, torch.qint8))]

        def outcome(x):
            try:
                a = dlmap.from_dlpack(x)
            except Exception as e:  # the producer's refusal, as raised or as dlmap passes it on
                if getattr(e, "dlmap_id", None) == "from_dlpack_producer_state":
                    return ("refused", type(e).__name__)
                return ("raised", type(e).__name__, str(e))
            return ("values", read(a).tolist())

        for name, make in makers:
            try:
                t = make()
            except Exception as e:
                print(f"torch cannot make a {name} tensor here ({type(e).__name__}): not checked")
                continue
            direct, dunder = outcome(t), outcome(Recorder(t))
            if direct[0] == "refused":
                self.assertEqual(direct, ("refused", "BufferError"), name)
                print(f"{name}: dlmap refuses it (catalogue error); __dlpack__ path: {dunder[:2]}")
            else:
                self.assertEqual(direct, dunder, name)
                print(f"{name}: as the __dlpack__ path: {direct[0]} {direct[1] if direct[0] == 'raised' else ''}")

    def test_copy(self):
        t = sample("float64")
        c = dlmap.from_dlpack(t.t(), copy=True)
        self.assertTrue(c.copied)
        self.assertNotEqual(c.data_ptr, t.data_ptr())
        self.assertEqual(c.strides, (4, 1), "copies are compact row-major")
        np.testing.assert_array_equal(read(c), t.t().numpy())

    def test_lifetimes(self):
        t = sample("int64")
        a = dlmap.from_dlpack(t[1:])
        expected = t[1:].clone()
        del t  # producer first
        self.assertTrue(torch.equal(torch.from_numpy(read(a).copy()), expected))
        del a
        t = sample("int64")
        a = dlmap.from_dlpack(t)
        del a  # consumer first
        self.assertTrue(torch.equal(t, sample("int64")))


class DlmapToTorchTest(DlmapTestCase):
    def check(self, a, expected, name):
        t = to_torch(a)
        if t.numel() > 0:  # PyTorch reports data_ptr() 0 for tensors without elements
            self.assertEqual(t.data_ptr(), a.data_ptr, f"{name}: zero-copy")
        self.assertEqual((tuple(t.shape), str(t.dtype)), (a.shape, str(DTYPES[a.dtype])), name)
        np.testing.assert_array_equal(t.numpy(), expected, err_msg=name)
        return t

    def test_dtypes(self):
        for dtype in DTYPES:
            a = dlmap.empty((3, 4), dtype)
            values = sample(dtype, (3, 4)).numpy()
            read(a)[...] = values
            self.check(a, values, dtype)

    def test_layouts_from_numpy(self):
        for dtype in ["float32", "complex128", "uint8"]:
            base = sample(dtype, (4, 6)).numpy()
            for layout, n in [("transposed", base.T), ("sliced", base[::2, 1:5]), ("fortran", np.asfortranarray(base)),
                              ("0-d", np.array(base[1, 2])), ("size-0", base[:0]), ("3-d", base.reshape(2, 3, 4)[:, 1:])]:
                self.check(dlmap.from_dlpack(n), n, f"{dtype} {layout}")

    def test_torch_writes_are_visible(self):
        a = dlmap.empty((2, 2))
        t = self.check(a, np.zeros((2, 2), np.float32), "zeros")
        t[1, 0] = 3.5
        self.assertEqual(read(a)[1, 0], 3.5)

    def test_byte_offset_is_folded(self):
        # PyTorch 1.13 ignores byte_offset; dlmap folds it into data for host memory, so torch reads the right data.
        buf = np.arange(8, dtype=np.float32)
        a = dlmap.from_dlpack(Producer(buf, (2, 32, 1), (2, 3), byte_offset=8))
        self.assertEqual(a.byte_offset, 8)
        t = self.check(a, [[2, 3, 4], [5, 6, 7]], "byte_offset 8")
        self.assertEqual(t.data_ptr(), buf.ctypes.data + 8)

    def test_read_only(self):
        # A read-only dlmap array: a legacy capsule cannot say READ_ONLY, so dlmap refuses it; a versioned one says it.
        # PyTorch has no read-only tensors: it may refuse, copy, or (as PyTorch 2.x does) share the memory anyway.
        a = dlmap.empty(3)
        a.readonly = True
        if not TORCH_ASKS_VERSIONED:
            self.assertRaisesExactly(BufferError, READ_ONLY_LEGACY, to_torch, a)
            return
        r = Recorder(a)
        try:
            t = to_torch(r)
        except (BufferError, RuntimeError, ValueError) as e:
            print(f"torch refuses READ_ONLY data: {type(e).__name__}: {e}")
        else:
            self.assertEqual(t.tolist(), [0.0, 0.0, 0.0])
            if t.data_ptr() == a.data_ptr:
                print("torch imports READ_ONLY data as a writable tensor (it has no read-only tensors)")
            del t
        self.assertEqual(dlmap._stats()["live_exports"], 0)

    def test_read_only_check_of_the_capsule(self):
        # What dlmap hands torch for a read-only array carries READ_ONLY (checked before torch sees it).
        a = dlmap.empty(3)
        a.readonly = True
        if not TORCH_ASKS_VERSIONED:
            print("torch asks for legacy capsules, which cannot say READ_ONLY (test_read_only)")
            return
        capsule = a.__dlpack__(**TORCH_ASKS)
        self.assertEqual(testing.versioned_tensor(capsule).flags & testing.FLAG_READ_ONLY, testing.FLAG_READ_ONLY)

    def test_dtypes_torch_may_refuse(self):
        # bool and uint16/32/64 are DLPack dtypes PyTorch 1.13 refuses and later ones take. Either torch imports the
        # array exactly (zero-copy, its dtype) or refuses cleanly, releasing dlmap's export.
        for dtype in ["bool", "uint16", "uint32", "uint64"]:
            a = dlmap.empty(2, dtype)
            try:
                t = to_torch(a)
            except (BufferError, RuntimeError) as e:
                print(f"torch refuses {dtype}: {type(e).__name__}: {e}")
            else:
                self.assertEqual((str(t.dtype), t.data_ptr(), t.tolist()), ("torch." + dtype, a.data_ptr, [0, 0]),
                                 dtype)
                del t
            self.assertEqual(dlmap._stats()["live_exports"], 0, f"{dtype}: torch released what it refused or dropped")

    def test_negative_strides(self):
        # Negative strides are valid DLPack, but PyTorch 1.13 has no negative strides: it aborts the process
        # (c10::Error thrown through a noexcept path, pytorch/pytorch#188023). Run it apart and accept either that
        # abort or a correct result (a PyTorch that handles it).
        code = textwrap.dedent("""
            import numpy as np, torch, dlmap
            n = np.arange(6.0)[::-1]
            t = torch.utils.dlpack.from_dlpack(dlmap.from_dlpack(n))
            print("values", t.tolist())
        """)
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        if result.returncode == 0:
            self.assertIn("values [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]", result.stdout)
        else:
            self.assertIn("Storage size calculation overflowed with sizes=[6] and strides=[-1]", result.stderr)

    def test_round_trip_through_torch(self):
        t = sample("complex64")
        a = dlmap.from_dlpack(t)
        t2 = to_torch(a)
        b = dlmap.from_dlpack(t2)  # torch re-exports what it imported: still the same memory
        self.assertEqual((t2.data_ptr(), b.data_ptr), (t.data_ptr(), t.data_ptr()))
        t2[0, 0] = 9 + 9j
        self.assertEqual(read(b)[0, 0], 9 + 9j)
        self.assertEqual(t[0, 0].item(), 9 + 9j)

    def test_lifetimes(self):
        a = dlmap.empty(4, "int32")
        read(a)[...] = [1, 2, 3, 4]
        wa = weakref.ref(a)
        t = to_torch(a)
        del a  # producer first
        self.assertIsNotNone(wa())
        self.assertEqual(t.tolist(), [1, 2, 3, 4])
        del t
        self.assertIsNone(wa())
        a = dlmap.empty(4)
        t = to_torch(a)
        del t  # consumer first
        self.assertEqual(dlmap._stats()["live_exports"], 0)


def managed_pointer():
    return ctypes.POINTER(testing.DLManagedTensorVersioned)()


class TorchExchangeApiTest(DlmapTestCase):
    """The DLPack C exchange API both ways, where torch.Tensor publishes a table: dlmap importing torch tensors through
    torch's table, and torch importing dlmap arrays through the tables, each function called as a C consumer would."""

    def setUp(self):
        super().setUp()
        if TABLE is None:
            self.assertFalse(hasattr(torch.Tensor, "__dlpack_c_exchange_api__"))

    def test_torch_table(self):
        if TABLE is None:
            print(NO_TABLE)
            return
        self.assertEqual(TABLE.header.version.major, testing.CURRENT[0], "dlmap reads this major")
        for field in ["managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                      "managed_tensor_to_py_object_no_sync", "dltensor_from_py_object_no_sync", "current_work_stream"]:
            self.assertTrue(ctypes.cast(getattr(TABLE, field), ctypes.c_void_p).value, field)

    def test_dlmap_imports_through_torchs_table(self):
        if TABLE is None:
            print(NO_TABLE)
            return
        t = sample("float32")[1:, 2:]
        a = dlmap.from_dlpack(t)
        self.assertEqual((a.via, a.data_ptr, a.copied, a.readonly), ("c_exchange_api", t.data_ptr(), False, False))
        np.testing.assert_array_equal(read(a), t.numpy())
        t[0, 0] = 123.0
        self.assertEqual(read(a)[0, 0], 123.0)
        c = dlmap.from_dlpack(t, copy=True)
        self.assertEqual((c.via, c.copied), ("c_exchange_api", True))
        self.assertNotEqual(c.data_ptr, t.data_ptr())
        # The same by hand: torch's managed_tensor_from_py_object_no_sync, then dlmap's managed_tensor_to_py_object.
        out = managed_pointer()
        self.assertEqual(TABLE.managed_tensor_from_py_object_no_sync(t, ctypes.byref(out)), 0)
        self.assertEqual((out.contents.dl_tensor.data + out.contents.dl_tensor.byte_offset, out.contents.flags),
                         (t.data_ptr(), 0))
        obj = ctypes.c_void_p()
        self.assertEqual(testing.exchange_api().managed_tensor_to_py_object_no_sync(out, ctypes.byref(obj)), 0)
        b = testing.steal_object(obj.value)
        self.assertEqual((b.via, b.data_ptr, b.shape), ("managed_tensor_to_py_object", t.data_ptr(), tuple(t.shape)))
        np.testing.assert_array_equal(read(b), t.numpy())
        # torch's non-owning dltensor_from_py_object_no_sync describes the same memory.
        view = testing.DLTensor()
        self.assertEqual(TABLE.dltensor_from_py_object_no_sync(t, ctypes.byref(view)), 0)
        self.assertEqual((view.data + view.byte_offset, view.ndim, [view.shape[i] for i in range(2)]),
                         (t.data_ptr(), 2, list(t.shape)))

    def test_dlmap_adopts_torch_allocations(self):
        # torch's managed_tensor_allocator makes a tensor that dlmap's managed_tensor_to_py_object takes over.
        if TABLE is None:
            print(NO_TABLE)
            return
        shape = (ctypes.c_int64 * 2)(2, 3)
        proto = testing.DLTensor()
        proto.device = testing.DLDevice(1, 0)
        proto.ndim = 2
        proto.dtype = testing.DLDataType(2, 32, 1)
        proto.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        out = managed_pointer()
        seen = []
        error = testing.SET_ERROR(lambda ctx, kind, message: seen.append((kind, message)))
        self.assertEqual((TABLE.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, error), seen),
                         (0, []))
        data = out.contents.dl_tensor.data
        obj = ctypes.c_void_p()
        self.assertEqual(testing.exchange_api().managed_tensor_to_py_object_no_sync(out, ctypes.byref(obj)), 0)
        a = testing.steal_object(obj.value)
        self.assertEqual((a.shape, a.dtype, a.data_ptr), ((2, 3), "float32", data))
        read(a)[...] = 4.5
        self.assertEqual(read(a).tolist(), [[4.5] * 3] * 2)

    def test_torch_imports_through_the_tables(self):
        # dlmap's managed_tensor_from_py_object_no_sync, then torch's managed_tensor_to_py_object_no_sync: a
        # torch.Tensor over dlmap's memory, which holds dlmap's export until it dies.
        if TABLE is None:
            print(NO_TABLE)
            return
        a = dlmap.empty((2, 3), "float64")
        read(a)[...] = [[1, 2, 3], [4, 5, 6]]
        out = managed_pointer()
        self.assertEqual(testing.exchange_api().managed_tensor_from_py_object_no_sync(a, ctypes.byref(out)), 0)
        obj = ctypes.c_void_p()
        self.assertEqual(TABLE.managed_tensor_to_py_object_no_sync(out, ctypes.byref(obj)), 0)
        t = testing.steal_object(obj.value)
        self.assertIsInstance(t, torch.Tensor)
        self.assertEqual((t.data_ptr(), t.dtype, t.tolist()), (a.data_ptr, torch.float64, [[1, 2, 3], [4, 5, 6]]))
        t[1, 1] = -1.0
        self.assertEqual(read(a)[1, 1], -1.0)
        self.assertEqual(dlmap._stats()["live_exports"], 1)
        del t
        self.assertEqual(dlmap._stats()["live_exports"], 0, "torch ran dlmap's deleter")

    def test_what_torch_from_dlpack_uses(self):
        # torch.from_dlpack takes the Python protocol (a versioned capsule where it passes max_version >= (1, 0)), not
        # a producer's table: here the producer publishes dlmap's table too, and __dlpack__ is what torch calls.
        a = dlmap.empty(4, "int32")

        class Published(Recorder):
            __dlpack_c_exchange_api__ = dlmap.Array.__dlpack_c_exchange_api__

        r = Published(a)
        t = torch.from_dlpack(r)
        self.assertEqual(len(r.calls), 1)
        versioned = tuple(r.calls[0].get("max_version") or (0, 0)) >= (1, 0)
        self.assertEqual(testing.capsule_name(r.returned[0]),
                         "used_dltensor_versioned" if versioned else "used_dltensor")
        self.assertEqual(t.data_ptr(), a.data_ptr)

    def test_read_only_from_torch(self):
        # PyTorch's ReadOnlyTensorWrapper (where it has one) exports READ_ONLY through its const table and __dlpack__.
        wrapper = getattr(torch.utils.dlpack, "ReadOnlyTensorWrapper", None)
        if wrapper is None:
            print("torch.utils.dlpack has no ReadOnlyTensorWrapper: torch cannot export READ_ONLY data")
            return
        t = sample("float32")
        ro = wrapper(t)
        for name, x in [("table", ro), ("__dlpack__", Recorder(ro))]:
            a = dlmap.from_dlpack(x)
            self.assertEqual((a.readonly, a.data_ptr, a.copied), (True, t.data_ptr(), False), name)
            self.assertRaises(ValueError, setattr, a, "readonly", False)
        c = dlmap.from_dlpack(ro, copy=True)
        self.assertEqual((c.readonly, c.copied), (False, True))


if __name__ == "__main__":
    unittest.main(verbosity=2)
