"""A producer's versioned __dlpack__ raising a TypeError that has no value (C code's PyErr_SetNone, here through
ctypes.pythonapi, which leaves the exception unnormalised through the Python frame above it): from_dlpack retries it
plainly as for any TypeError under the profile's retry, and does not take it for the type's refusal of max_version
(python/producers.c reads no text from it: the type is not remembered)."""
import ctypes
import unittest

import dlmap
from testing import DlmapTestCase

set_none = ctypes.pythonapi.PyErr_SetNone
set_none.argtypes = [ctypes.py_object]
set_none.restype = None


class Valueless:
    def __init__(self, array):
        self.array = array
        self.calls = []

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None):
        self.calls.append(max_version)
        if max_version is not None:
            set_none(TypeError)  # raises TypeError with no value (PyDLL: an exception set by the call is raised)
        return self.array.__dlpack__()


class ValuelessTypeErrorTest(DlmapTestCase):
    def test_retried_plainly_and_not_remembered(self):
        with self.assertRaises(TypeError) as ctx:
            set_none(TypeError)
        self.assertEqual(ctx.exception.args, (), "the exception has no value of its own")
        array = dlmap.empty((4,), dtype="int32")
        producer = Valueless(array)
        remembered = dlmap._stats()["legacy_only_types"]
        result = dlmap.from_dlpack(producer)
        self.assertEqual((result.data_ptr, result.shape), (array.data_ptr, (4,)))
        self.assertEqual(len(producer.calls), 2, "asked versioned, then plainly")
        self.assertIsNotNone(producer.calls[0])
        self.assertIsNone(producer.calls[1])
        self.assertEqual(dlmap._stats()["legacy_only_types"], remembered, "the type is not remembered")
        result = dlmap.from_dlpack(producer)
        self.assertEqual(len(producer.calls), 4, "asked versioned again")


if __name__ == "__main__":
    unittest.main()
