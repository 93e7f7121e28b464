# dlmap Python binding tests — the DLPack 1.3 C exchange API: the table dlmap.Array's type publishes, each function
# called through ctypes as a C consumer would, and dlmap.from_dlpack choosing a producer type's table.
import ctypes
import threading
import unittest

import dlmap
import testing
from testing import DlmapTestCase, Producer

READ_ONLY_LEGACY = ("Cannot export a read-only array as a legacy DLManagedTensor, which cannot mark it read-only; pass "
                    "max_version=(1, 0) or higher, or copy=True.")


def prototype(shape, dtype=(2, 32, 1), device=(1, 0)):
    shape_array = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    t = testing.DLTensor()
    t.device = testing.DLDevice(*device)
    t.ndim = len(shape)
    t.dtype = testing.DLDataType(*dtype)
    t.shape = ctypes.cast(shape_array, ctypes.POINTER(ctypes.c_int64))
    return t, shape_array


class Errors:
    """An error_ctx for the allocator: collects (kind, message) pairs."""

    def __init__(self):
        self.seen = []
        self.callback = testing.SET_ERROR(lambda ctx, kind, message: self.seen.append((kind.decode(),
                                                                                        message.decode())))


def allocate(api, shape, **kwargs):
    t, keep = prototype(shape, **kwargs)
    out = ctypes.POINTER(testing.DLManagedTensorVersioned)()
    errors = Errors()
    rc = api.managed_tensor_allocator(ctypes.byref(t), ctypes.byref(out), None, errors.callback)
    return rc, out, errors.seen


def release(managed):
    testing.run_deleter(managed)


class TableTest(DlmapTestCase):
    def test_published_on_the_type(self):
        capsule = dlmap.Array.__dlpack_c_exchange_api__
        self.assertEqual(type(capsule).__name__, "PyCapsule")
        self.assertEqual(testing.capsule_name(capsule), "dlpack_exchange_api")
        self.assertIs(dlmap.empty(1).__dlpack_c_exchange_api__, capsule, "one static table for every array")
        api = testing.exchange_api()
        self.assertEqual((api.header.version.major, api.header.version.minor), testing.CURRENT)
        self.assertFalse(api.header.prev_api, "no older major is supported")
        for field in ["managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                      "managed_tensor_to_py_object_no_sync", "dltensor_from_py_object_no_sync", "current_work_stream"]:
            self.assertTrue(ctypes.cast(getattr(api, field), ctypes.c_void_p).value, field)
        self.assertEqual(ctypes.sizeof(testing.DLPackExchangeAPI), 56)

    def test_allocator(self):
        api = testing.exchange_api()
        rc, out, seen = allocate(api, (2, 3))
        self.assertEqual((rc, seen), (0, []))
        m = out.contents
        t = m.dl_tensor
        self.assertEqual(((m.version.major, m.version.minor), m.flags), (testing.CURRENT, 0))
        self.assertEqual((t.device.device_type, t.device.device_id, t.ndim, t.byte_offset), (1, 0, 2, 0))
        self.assertEqual(([t.shape[i] for i in range(2)], [t.strides[i] for i in range(2)]), ([2, 3], [3, 1]))
        self.assertEqual(t.data % 64, 0)
        self.assertEqual(ctypes.string_at(t.data, 24), bytes(24))
        self.assertEqual(dlmap._stats()["live_allocations"], self._before["live_allocations"] + 1)
        release(out)

    def test_allocator_errors_go_to_the_callback(self):
        api = testing.exchange_api()
        rc, out, seen = allocate(api, (2,), dtype=(99, 8, 1))
        self.assertEqual((rc, seen), (-1, [("BufferError", "Unknown or invalid DLPack type code 99")]))
        dlmap._fail_allocations(1)
        rc, out, seen = allocate(api, (2,))
        self.assertEqual((rc, len(seen), seen[0][0]), (-1, 1, "MemoryError"))
        self.assertRegex(seen[0][1], r"^Out of memory allocating \d+ bytes for an export$")

    @testing.without_cuda
    def test_allocator_without_cuda(self):
        rc, out, seen = allocate(testing.exchange_api(), (2,), device=(2, 0))
        self.assertEqual((rc, seen), (-1, [("BufferError", testing.CUDA_UNAVAILABLE)]))

    def test_allocator_needs_no_python(self):
        # ctypes releases the GIL around CFUNCTYPE calls: run it from several threads at once.
        api = testing.exchange_api()
        failures = []

        def work():
            for _ in range(200):
                rc, out, seen = allocate(api, (8, 8), dtype=(2, 64, 1))
                if rc != 0:
                    failures.append(seen)
                else:
                    release(out)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(failures, [])

    def test_managed_tensor_from_py_object(self):
        api = testing.exchange_api()
        a = dlmap.empty((2, 2))
        out = ctypes.POINTER(testing.DLManagedTensorVersioned)()
        self.assertEqual(api.managed_tensor_from_py_object_no_sync(a, ctypes.byref(out)), 0)
        m = out.contents
        self.assertEqual(((m.version.major, m.version.minor), m.flags, m.dl_tensor.data), (testing.CURRENT, 0, a.data_ptr))
        self.assertEqual(dlmap._stats()["live_exports"], 1)
        release(out)
        a.readonly = True
        self.assertEqual(api.managed_tensor_from_py_object_no_sync(a, ctypes.byref(out)), 0)
        self.assertEqual(out.contents.flags, testing.FLAG_READ_ONLY)
        release(out)
        with self.assertRaises(TypeError) as ctx:
            api.managed_tensor_from_py_object_no_sync(42, ctypes.byref(out))
        self.assertEqual(str(ctx.exception), "py_object must be a dlmap.Array, got int")

    def test_managed_tensor_to_py_object(self):
        api = testing.exchange_api()
        rc, out, _ = allocate(api, (3,))
        self.assertEqual(rc, 0)
        address = out.contents.dl_tensor.data
        obj = ctypes.c_void_p()
        self.assertEqual(api.managed_tensor_to_py_object_no_sync(out, ctypes.byref(obj)), 0)
        a = testing.steal_object(obj.value)
        self.assertIsInstance(a, dlmap.Array)
        self.assertEqual((a.shape, a.dtype, a.data_ptr, a.via), ((3,), "float32", address,
                                                                 "managed_tensor_to_py_object"))
        del a  # frees the allocation (checked by tearDown)
        p = Producer(bytearray(16), (2, 32, 1), (4,), flags=testing.FLAG_IS_COPIED, tag="copied")
        cap = p.make_capsule(True)
        managed = ctypes.cast(ctypes.c_void_p(testing.capsule_pointer(cap, testing.NAME_VERSIONED)),
                              ctypes.POINTER(testing.DLManagedTensorVersioned))
        testing.rename_capsule(cap, testing.NAME_VERSIONED_USED)
        self.assertEqual(api.managed_tensor_to_py_object_no_sync(managed, ctypes.byref(obj)), 0)
        self.assertTrue(testing.steal_object(obj.value).copied, "the producer's IS_COPIED counts")
        # Ownership is stolen on failure too: a DLPack 2.0 tensor is released, never read.
        p = Producer(bytearray(16), (2, 32, 1), (4,), version=(2, 0), tag="to_py")
        cap = p.make_capsule(True)
        managed = ctypes.cast(ctypes.c_void_p(testing.capsule_pointer(cap, testing.NAME_VERSIONED)),
                              ctypes.POINTER(testing.DLManagedTensorVersioned))
        testing.rename_capsule(cap, testing.NAME_VERSIONED_USED)
        testing.deleted.clear()
        with self.assertRaises(BufferError) as ctx:
            api.managed_tensor_to_py_object_no_sync(managed, ctypes.byref(obj))
        self.assertIn("version 2.0", str(ctx.exception))
        self.assertEqual(testing.deleted, ["to_py"])

    def test_dltensor_from_py_object(self):
        api = testing.exchange_api()
        a = dlmap.empty((2, 3), "int16")
        t = testing.DLTensor()
        self.assertEqual(api.dltensor_from_py_object_no_sync(a, ctypes.byref(t)), 0)
        self.assertEqual((t.data, t.ndim, (t.dtype.code, t.dtype.bits), [t.shape[i] for i in range(2)],
                          [t.strides[i] for i in range(2)]), (a.data_ptr, 2, (0, 16), [2, 3], [3, 1]))
        self.assertEqual(dlmap._stats()["live_exports"], 0, "non-owning: no reference taken")
        a.readonly = True  # a bare DLTensor cannot say read-only
        with self.assertRaises(BufferError) as ctx:
            api.dltensor_from_py_object_no_sync(a, ctypes.byref(t))
        self.assertEqual(str(ctx.exception), READ_ONLY_LEGACY)
        with self.assertRaises(TypeError):
            api.dltensor_from_py_object_no_sync("x", ctypes.byref(t))

    def test_current_work_stream(self):
        api = testing.exchange_api()
        for device in [(1, 0), (2, 0), (10, 1)]:
            stream = ctypes.c_void_p(0x1234)
            self.assertEqual(api.current_work_stream(device[0], device[1], ctypes.byref(stream)), 0)
            self.assertIsNone(stream.value, device)


class ConsumerTest(DlmapTestCase):
    def test_dlmap_arrays_go_through_the_table(self):
        a = dlmap.empty((2, 3))
        b = dlmap.from_dlpack(a)
        self.assertEqual((b.via, b.data_ptr, b.version, b.copied), ("c_exchange_api", a.data_ptr, testing.CURRENT, False))
        c = dlmap.from_dlpack(a, copy=True)
        self.assertEqual((c.via, c.copied), ("c_exchange_api", True))
        self.assertNotEqual(c.data_ptr, a.data_ptr)
        a.readonly = True
        self.assertTrue(dlmap.from_dlpack(a).readonly, "READ_ONLY travels through the table")

    def test_stream_rules_on_the_table_path(self):
        # The table path checks the stream against the tensor's device type like the Python path (issue 14: stream=5
        # for a host array passed here and raised elsewhere); the table's tensor is released.
        a = dlmap.empty(3)
        for stream in [5, -1, 0, 1]:
            self.assertRaisesExactly(ValueError, f"stream={stream} is not valid for device type kDLCPU (1): this device "
                                     "type takes no stream, so stream must be None.", dlmap.from_dlpack, a,
                                     stream=stream)
        self.assertEqual(dlmap._stats()["live_exports"], self._before["live_exports"])
        f = ForeignTable(1)
        testing.deleted.clear()
        with self.assertRaises(ValueError):
            dlmap.from_dlpack(f.Array(), stream=5)
        self.assertEqual((f.c_calls, f.producer.calls, testing.deleted), (1, [], ["c"]))

    @testing.without_cuda
    def test_device_without_cuda(self):
        a = dlmap.empty((2, 3))
        self.assertRaisesExactly(BufferError, testing.CUDA_UNAVAILABLE, dlmap.from_dlpack, a, device=(2, 0))

    def test_a_published_table_is_used_instead_of_dunder_methods(self):
        class Borrowed:  # publishes dlmap's table, whose functions accept only dlmap.Array
            __dlpack_c_exchange_api__ = dlmap.Array.__dlpack_c_exchange_api__

            def __dlpack__(self, **kwargs):
                raise AssertionError("the Python path was taken")

            def __dlpack_device__(self):
                raise AssertionError("the Python path was taken")

        with self.assertRaises(TypeError) as ctx:
            dlmap.from_dlpack(Borrowed())
        self.assertEqual(str(ctx.exception), "py_object must be a dlmap.Array, got Borrowed")

    # ---- producer states no DLPack tensor carries (spec/versions.yaml exchange_api.producer_states) ----------------

    TABLE_USED = "py_object must be a dlmap.Array, got Stateful"
    NEG_REFUSED = ("Cannot import the producer's tensor through its C exchange API: its is_neg holds (a lazily negated "
                   "view (the negative bit); the memory holds the values before negation), a state no DLPack field "
                   "carries, so the values would be read wrong")

    def stateful(self, **members):
        """A producer that publishes dlmap's table (which refuses it: TypeError TABLE_USED) and whose __dlpack__
        answers with a dlmap array, so the outcome tells which path served it; members become class attributes."""
        inner = dlmap.empty(3)
        calls = []

        def dunder(self, **kwargs):
            calls.append(kwargs)
            return inner.__dlpack__(**kwargs)

        cls = type("Stateful", (), dict(__dlpack_c_exchange_api__=dlmap.Array.__dlpack_c_exchange_api__,
                                        __dlpack__=dunder, __dlpack_device__=lambda self: (1, 0), **members))
        return cls(), calls

    def test_ordinary_states_use_the_table(self):
        for members in [{}, dict(is_conj=lambda self: False, is_neg=lambda self: False, requires_grad=False,
                                 layout="torch.strided", is_quantized=False, is_nested=False)]:
            x, calls = self.stateful(**members)
            self.assertRaisesExactly(TypeError, self.TABLE_USED, dlmap.from_dlpack, x)
            self.assertEqual(calls, [])

    def test_a_state_the_table_cannot_carry_asks_dunder_dlpack(self):
        for members in [dict(is_conj=lambda self: True), dict(requires_grad=True), dict(layout="torch.sparse_csc"),
                        dict(layout=object()), dict(is_quantized=1), dict(is_nested=[0]),
                        dict(requires_grad=property(lambda self: True))]:
            x, calls = self.stateful(**members)
            self.assertEqual(dlmap.from_dlpack(x).via, "dltensor_versioned", members)
            self.assertEqual(len(calls), 1, members)

    def test_the_negative_bit_is_refused(self):
        # __dlpack__ would hand it over un-negated too: a clean catalogue error, and the producer is not asked.
        x, calls = self.stateful(is_neg=lambda self: True)
        self.assertRaisesExactly(BufferError, self.NEG_REFUSED, dlmap.from_dlpack, x)
        self.assertEqual(calls, [])
        # The first state that holds decides, in spec order (is_conj before is_neg).
        x, calls = self.stateful(is_neg=lambda self: True, is_conj=lambda self: True)
        self.assertEqual(dlmap.from_dlpack(x).via, "dltensor_versioned")

    def test_a_state_that_cannot_be_read_asks_dunder_dlpack(self):
        # Decided: a state whose read raises an Exception counts as holding (the error is cleared, __dlpack__ answers).
        class BadBool:
            def __bool__(self):
                raise ZeroDivisionError("bool")

        class BadStr:
            def __str__(self):
                raise ZeroDivisionError("str")

        def boom(self):
            raise ValueError("boom")

        for members in [dict(is_conj=boom), dict(is_conj=lambda self, required: False), dict(is_conj=True),
                        dict(requires_grad=property(boom)), dict(requires_grad=BadBool()), dict(layout=BadStr()),
                        dict(is_neg=lambda self: BadBool())]:
            x, calls = self.stateful(**members)
            self.assertEqual(dlmap.from_dlpack(x).via, "dltensor_versioned", members)
            self.assertEqual(len(calls), 1, members)

    def test_a_base_exception_from_a_state_propagates(self):
        def interrupt(self):
            raise KeyboardInterrupt("state")

        x, calls = self.stateful(is_conj=interrupt)
        self.assertRaisesExactly(KeyboardInterrupt, "state", dlmap.from_dlpack, x)
        self.assertEqual(calls, [])

    def test_a_state_that_changes_the_producer(self):
        # Reading a state runs the producer's code: the table found before is used only when x's class and its table
        # are still the ones found, else __dlpack__ answers.
        inner = dlmap.empty(3)

        class Plain:
            def __dlpack__(self, **kwargs):
                return inner.__dlpack__(**kwargs)

            def __dlpack_device__(self):
                return (1, 0)

        def to_plain(self):
            self.__class__ = Plain
            return False

        def drop_table(self):
            del type(self).__dlpack_c_exchange_api__
            return False

        for change in (to_plain, drop_table):
            x, calls = self.stateful(requires_grad=property(change))
            self.assertEqual(dlmap.from_dlpack(x).via, "dltensor_versioned", change)
        # A state that holds and swaps the class to one whose type is then freed: nothing is read after.
        for _ in range(3):
            x, calls = self.stateful(is_conj=to_plain)
            self.assertEqual(dlmap.from_dlpack(x).via, "dltensor_versioned")

    def test_a_table_added_or_removed_later_is_seen(self):
        # The table found for a type is remembered under the type's version tag (from CPython 3.13 a tag is valid
        # when non-zero, with no flag): a table added to a base class after imports through __dlpack__, or deleted
        # again, changes what the next import uses.
        inner = dlmap.empty(3)

        class Base:
            pass

        class Plain(Base):
            def __dlpack__(self, **kwargs):
                return inner.__dlpack__(**kwargs)

            def __dlpack_device__(self):
                return (1, 0)

        x = Plain()
        for _ in range(3):
            self.assertEqual(dlmap.from_dlpack(x).via, "dltensor_versioned")
        Base.__dlpack_c_exchange_api__ = dlmap.Array.__dlpack_c_exchange_api__
        for _ in range(3):  # dlmap's table now answers, and refuses an object that is not its Array
            self.assertRaisesRegex(TypeError, "must be a dlmap.Array, got Plain", dlmap.from_dlpack, x)
        del Base.__dlpack_c_exchange_api__
        for _ in range(3):
            self.assertEqual(dlmap.from_dlpack(x).via, "dltensor_versioned")

    def test_producer_states_leak_nothing(self):
        x, _ = self.stateful(is_conj=lambda self: True)
        y, _ = self.stateful(is_neg=lambda self: True)
        z, _ = self.stateful(requires_grad=property(lambda self: 1 / 0))
        for _ in range(50):
            dlmap.from_dlpack(x)
            dlmap.from_dlpack(z)
            self.assertRaises(BufferError, dlmap.from_dlpack, y)
        before = testing.rss_bytes()
        for _ in range(2000):
            dlmap.from_dlpack(x)
            dlmap.from_dlpack(z)
            self.assertRaises(BufferError, dlmap.from_dlpack, y)
        self.assertLess(testing.rss_bytes() - before, 4 << 20)

    def test_integer_form_only_on_static_types(self):
        # DLPack 1.2 published the table's address as an int, under another name. Any class statement can set an int
        # (issue 14: `__c_dlpack_exchange_api__ = 8` made dlmap read address 8), so a Python class's int is ignored and
        # its Python methods are used; only a C extension's static type is trusted with one.
        inner = dlmap.empty(3)
        table = testing.capsule_pointer(dlmap.Array.__dlpack_c_exchange_api__, testing.NAME_EXCHANGE_API)
        for value in [table, 8, 0, -1, 2 ** 64 - 8]:
            class Forged:
                __c_dlpack_exchange_api__ = value

                def __dlpack__(self, **kwargs):
                    return inner.__dlpack__(**kwargs)

                def __dlpack_device__(self):
                    return inner.__dlpack_device__()

            self.assertEqual(dlmap.from_dlpack(Forged()).via, "dltensor_versioned", value)

    def test_integer_form_on_a_static_type_in_a_child(self):
        # A static (non-heap) type with the int: dlmap's own table under the 1.2 name, planted in bytearray's type dict
        # in a child interpreter. A Python subclass inherits it (the table is used: its functions accept only
        # dlmap.Array); a Python subclass that sets its own int is not trusted.
        rc, out, err = testing.run_child("""
            import ctypes, gc
            import dlmap, testing
            table = testing.capsule_pointer(dlmap.Array.__dlpack_c_exchange_api__, testing.NAME_EXCHANGE_API)
            gc.get_referents(bytearray.__dict__)[0]["__c_dlpack_exchange_api__"] = table
            ctypes.pythonapi.PyType_Modified(ctypes.py_object(bytearray))
            inner = dlmap.empty(3)

            class Inherits(bytearray):
                def __dlpack__(self, **kwargs):
                    return inner.__dlpack__(**kwargs)

                def __dlpack_device__(self):
                    return inner.__dlpack_device__()

            class Overrides(Inherits):
                __c_dlpack_exchange_api__ = 8

            try:
                dlmap.from_dlpack(Inherits())
            except TypeError as e:
                print("inherited:", e)
            print("overridden:", dlmap.from_dlpack(Overrides()).via)
        """)
        self.assertEqual((rc, out, err), (0, "inherited: py_object must be a dlmap.Array, got Inherits\n"
                                             "overridden: dltensor_versioned\n", ""))


class ForeignTable:
    """A producer type publishing a table built here: major version, C-path tensor and current stream are chosen by the
    test; its Python methods come from a hand-made Producer."""

    def __init__(self, major, prev=None, device=(1, 0), current_stream=None, flags=0, stream_fails=None):
        self.producer = Producer(bytearray(16), (2, 32, 1), (4,), device=device,
                                 data=None if device == (1, 0) else 0x20000, tag="python")
        self.c_producer = Producer(bytearray(16), (2, 32, 1), (4,), device=device,
                                   data=None if device == (1, 0) else 0x20000, tag="c", flags=flags)
        self.c_calls = 0

        @testing.FROM_PY_OBJECT
        def from_py(obj, out):
            self.c_calls += 1
            cap = self.c_producer.make_capsule(True)
            address = testing.capsule_pointer(cap, testing.NAME_VERSIONED)
            testing.rename_capsule(cap, testing.NAME_VERSIONED_USED)  # the table hands over ownership
            out[0] = ctypes.cast(ctypes.c_void_p(address), ctypes.POINTER(testing.DLManagedTensorVersioned))
            return 0

        @testing.CURRENT_WORK_STREAM
        def stream(device_type, device_id, out):
            out[0] = current_stream
            return 0

        @testing.CURRENT_WORK_STREAM
        def fails(device_type, device_id, out):
            out[0] = None
            return 1

        if stream_fails == "status":
            stream = fails
        elif stream_fails == "exception":  # returns 0 with a TypeError set, and writes nothing (the GIL is held)
            stream = ctypes.cast(ctypes.pythonapi.PyErr_BadArgument, testing.CURRENT_WORK_STREAM)
        self.callbacks = (from_py, stream)
        self.table = testing.DLPackExchangeAPI()
        self.table.header.version = testing.DLPackVersion(major, 0)
        if prev is not None:
            self.table.header.prev_api = ctypes.cast(ctypes.c_void_p(prev), ctypes.POINTER(
                testing.DLPackExchangeAPIHeader))
        self.table.managed_tensor_from_py_object_no_sync = from_py
        self.table.current_work_stream = stream
        outer = self

        class Array:
            __dlpack_c_exchange_api__ = testing._capsule_new(ctypes.addressof(self.table), testing.NAME_EXCHANGE_API,
                                                             None)

            def __dlpack__(self, **kwargs):
                return outer.producer.__dlpack__(**kwargs)

            def __dlpack_device__(self):
                return outer.producer.__dlpack_device__()

        self.Array = Array


class ForeignTableTest(DlmapTestCase):
    def test_host_tensor_from_a_table(self):
        f = ForeignTable(1)
        b = dlmap.from_dlpack(f.Array())
        self.assertEqual((f.c_calls, f.producer.calls, b.via), (1, [], "c_exchange_api"))

    def test_producer_copy_through_a_table(self):
        # A table's tensor that says IS_COPIED is a copy (Array.copied), though dlmap made none.
        f = ForeignTable(1, flags=testing.FLAG_IS_COPIED)
        b = dlmap.from_dlpack(f.Array())
        address = ctypes.addressof(ctypes.c_char.from_buffer(f.c_producer.buffer))
        self.assertEqual((b.via, b.copied, b.data_ptr), ("c_exchange_api", True, address))
        self.assertEqual((f.c_calls, f.producer.calls), (1, []))

    def test_unknown_major_is_skipped_unless_chained(self):
        f = ForeignTable(2)
        b = dlmap.from_dlpack(f.Array())
        self.assertEqual((f.c_calls, len(f.producer.calls), b.via), (0, 1, "dltensor_versioned"))
        inner = ForeignTable(1)
        f = ForeignTable(2, prev=ctypes.addressof(inner.table))
        b = dlmap.from_dlpack(f.Array())
        self.assertEqual((inner.c_calls, f.c_calls, b.via), (1, 0, "c_exchange_api"))

    def test_cyclic_prev_api_chain(self):
        # A chain of older majors that loops back (issue 14: the walk never ended). In a child, so that the old
        # behaviour is a timeout rather than a hung test.
        rc, out, err = testing.run_child("""
            import ctypes
            import dlmap, testing
            from exchange_api_test import ForeignTable
            f = ForeignTable(2)
            f.table.header.prev_api = ctypes.pointer(f.table.header)  # 2.0 → itself
            g = ForeignTable(3)
            h = ForeignTable(2, prev=ctypes.addressof(g.table))
            g.table.header.prev_api = ctypes.pointer(h.table.header)  # 3.0 → 2.0 → 3.0 → …
            print(dlmap.from_dlpack(f.Array()).via, dlmap.from_dlpack(g.Array()).via, f.c_calls + g.c_calls + h.c_calls)
        """, timeout=30)
        self.assertEqual((rc, out, err), (0, "dltensor_versioned dltensor_versioned 0\n", ""))

    def test_device_tensor_needing_synchronisation_takes_the_python_path(self):
        # The table's tensor is ready on the producer's current stream; dlmap (no GPU backend) cannot make another
        # stream wait, so it releases that tensor and asks __dlpack__ with the stream instead.
        f = ForeignTable(1, device=(2, 0), current_stream=0x5000)
        testing.deleted.clear()
        b = dlmap.from_dlpack(f.Array())
        self.assertEqual((f.c_calls, f.producer.calls, b.via, testing.deleted),
                         (1, [{"max_version": testing.CURRENT, "stream": None}], "dltensor_versioned", ["c"]))
        b = dlmap.from_dlpack(f.Array(), stream=-1)  # no synchronisation wanted: the table's tensor serves
        self.assertEqual((f.c_calls, b.via, b.device), (2, "c_exchange_api", (2, 0)))
        g = ForeignTable(1, device=(2, 0), current_stream=None)  # both on the legacy default stream
        self.assertEqual(dlmap.from_dlpack(g.Array()).via, "c_exchange_api")

    def test_a_failing_current_work_stream_takes_the_python_path(self):
        # Issue 48: a table that cannot say the producer's current stream (a non-zero status, or 0 with a Python
        # exception set) gives no grounds to skip the ordering: its tensor is released once and __dlpack__ is asked
        # with the stream, as when the stream differs; no exception is left over.
        for fails in ("status", "exception"):
            f = ForeignTable(1, device=(2, 0), stream_fails=fails)
            testing.deleted.clear()
            b = dlmap.from_dlpack(f.Array())
            self.assertEqual((f.c_calls, f.producer.calls, b.via, testing.deleted),
                             (1, [{"max_version": testing.CURRENT, "stream": None}], "dltensor_versioned", ["c"]),
                             fails)
            del b  # its tensor is released here, not during the next import


class FutureMajorTest(DlmapTestCase):
    def test_only_the_stable_head_is_read_before_the_major(self):
        # Issue 23: a DLPack tensor of a major this build does not know may be only its stable head (version,
        # manager_ctx, deleter, flags). Each path that receives one — a producer's C table, a "dltensor_versioned"
        # capsule, dlmap's own table's managed_tensor_to_py_object_no_sync — gets a head that ends where an
        # inaccessible page starts, and must refuse it with the catalogue's error, running its deleter once and
        # reading nothing past the head (from_dlpack read the device of a table's tensor first: a SIGSEGV). In a
        # child, so that such a read fails this test rather than killing the runner.
        rc, out, err = testing.run_child("""
            import ctypes
            import dlmap, testing
            calls = []
            deleter = testing.HEAD_DELETER(calls.append)
            heads = []

            def head():
                heads.append(testing.GuardedHead(testing.CURRENT[0] + 1, 0, deleter))
                return heads[-1].address

            table = testing.table_handing_out(head)

            class Tabled:
                __dlpack_c_exchange_api__ = testing._capsule_new(ctypes.addressof(table), testing.NAME_EXCHANGE_API,
                                                                 None)

                def __dlpack__(self, **kwargs):
                    raise AssertionError("the table serves this producer")

                def __dlpack_device__(self):
                    return (1, 0)

            class Capsuled:
                def __dlpack__(self, **kwargs):
                    return testing._capsule_new(head(), testing.NAME_VERSIONED, None)

                def __dlpack_device__(self):
                    return (1, 0)

            def attempt(what, fn, *args, **kwargs):
                before = len(calls)
                try:
                    fn(*args, **kwargs)
                    print(what, "accepted")
                except Exception as e:
                    print(what, type(e).__name__, getattr(e, "dlmap_id", None), len(calls) - before,
                          calls[-1] == heads[-1].address)

            for kwargs in ({}, {"stream": None}, {"stream": 5}, {"device": (1, 0)}, {"copy": True}):
                attempt(f"table {kwargs}", dlmap.from_dlpack, Tabled(), **kwargs)
            attempt("capsule", dlmap.from_dlpack, Capsuled())
            api = testing.exchange_api()
            obj = ctypes.c_void_p()
            attempt("to_py_object", api.managed_tensor_to_py_object_no_sync,
                    ctypes.cast(ctypes.c_void_p(head()), ctypes.POINTER(testing.DLManagedTensorVersioned)),
                    ctypes.byref(obj))
            print("deleter calls", len(calls), "tensors", len(heads))
        """, timeout=60)
        refused = "BufferError version_major_unsupported 1 True\n"
        self.assertEqual((rc, err), (0, ""), out)
        self.assertEqual(out, "".join(f"table {kwargs} {refused}" for kwargs in
                                      ({}, {"stream": None}, {"stream": 5}, {"device": (1, 0)}, {"copy": True}))
                         + f"capsule {refused}to_py_object {refused}deleter calls 7 tensors 7\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
