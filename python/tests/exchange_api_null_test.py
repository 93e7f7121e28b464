# dlmap Python binding tests — the C exchange API table (python/exchange_api.c) called as a careless C consumer could:
# NULL for a pointer argument, no set_error callback, and an export that runs out of memory. Each function refuses
# with the catalogue's error and leaves nothing allocated.
import ctypes
import unittest

import dlmap
import testing
from testing import DlmapTestCase, profile_error

PROFILE = "array_api"  # //python/array_api:dlmap.so, the module this test runs on (python/BUILD)

# The table's Python-side functions with every pointer a plain address, so that None passes NULL.
FROM_PY_OBJECT_RAW = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
TO_PY_OBJECT_RAW = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
ALLOCATOR_RAW = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def catalogue_text(error_id, **args):
    kind, template = profile_error(PROFILE, error_id)
    return kind, template.format(**args)


class NullArgumentTest(DlmapTestCase):
    def setUp(self):
        super().setUp()
        self.api = testing.exchange_api()
        self.seen = []
        self.set_error = testing.SET_ERROR(lambda ctx, kind, message: self.seen.append((kind.decode(),
                                                                                        message.decode())))

    def prototype(self):
        self.shape = (ctypes.c_int64 * 1)(4)
        t = testing.DLTensor()
        t.device = testing.DLDevice(1, 0)
        t.ndim = 1
        t.dtype = testing.DLDataType(2, 32, 1)
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        return t

    def test_allocator_refuses_null_pointers(self):
        out = ctypes.POINTER(testing.DLManagedTensorVersioned)()
        t = self.prototype()
        for argument, args in [("prototype", (None, ctypes.byref(out))), ("out", (ctypes.byref(t), None))]:
            with self.subTest(argument=argument):
                del self.seen[:]
                self.assertEqual(self.api.managed_tensor_allocator(*args, None, self.set_error), -1)
                kind, text = catalogue_text("invalid_argument", argument=argument, reason="must not be NULL")
                self.assertEqual(self.seen, [(kind.__name__, text)])
        self.assertFalse(out, "nothing handed out")

    def test_allocator_without_set_error_still_fails(self):
        out = ctypes.POINTER(testing.DLManagedTensorVersioned)()
        allocator = ctypes.cast(self.api.managed_tensor_allocator, ALLOCATOR_RAW)
        self.assertEqual(allocator(None, ctypes.addressof(out), None, None), -1)
        self.assertFalse(out)

    def test_from_py_object_refuses_null(self):
        from_py_object = ctypes.cast(self.api.managed_tensor_from_py_object_no_sync, FROM_PY_OBJECT_RAW)
        out = ctypes.c_void_p()
        kind, text = catalogue_text("argument_type_invalid", argument="py_object", expected="a dlmap.Array",
                                    got="NoneType")
        self.assertRaisesExactly(kind, text, from_py_object, None, ctypes.addressof(out))
        self.assertIsNone(out.value)

    def test_from_py_object_out_of_memory(self):
        a = dlmap.empty(4)
        out = ctypes.POINTER(testing.DLManagedTensorVersioned)()
        dlmap._fail_allocations(1)
        with self.assertRaisesRegex(MemoryError, r"^Out of memory allocating \d+ bytes for an export$"):
            self.api.managed_tensor_from_py_object_no_sync(a, ctypes.byref(out))
        self.assertFalse(out)
        self.assertEqual(dlmap._stats()["live_exports"], 0, "the failed export holds no array")

    def test_to_py_object_refuses_null(self):
        to_py_object = ctypes.cast(self.api.managed_tensor_to_py_object_no_sync, TO_PY_OBJECT_RAW)
        out = ctypes.c_void_p()
        kind, text = catalogue_text("invalid_argument", argument="tensor", reason="must not be NULL")
        self.assertEqual(self.assertRaisesExactly(kind, text, to_py_object, None, ctypes.addressof(out)).dlmap_id,
                         "invalid_argument")
        self.assertIsNone(out.value)

    def test_current_work_stream_without_out(self):
        self.assertEqual(self.api.current_work_stream(1, 0, None), 0)


if __name__ == "__main__":
    unittest.main()
