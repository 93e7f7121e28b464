# dlmap Python binding tests — pytorch_export_test: the pytorch profile's module (//python/pytorch,
# spec/profiles/pytorch.yaml) for the keys and texts issue 27 adds for PyTorch 2.14's contract
# (docs/contracts/pytorch.md): export.flag_is_copied false (T-E19), export.stream_no_sync true (T-E59), the
# {version:major} style (T-I10), dtype_lanes_not_one's {code} (T-I13), the argument texts (T-E52..T-E54),
# dlpack_device.enum (T-D5) and export.scalar_dims empty (T-E31), pinned here as PyTorch's contract.
"""Each case fails on a module built without its key or style: array_api (the parent profile) marks a copy
IS_COPIED, refuses stream=-1 on a CPU array (stream_invalid), has no major-only style, no code in the lanes text and
NULL shape and strides in a 0-d export."""

import array
import ctypes
import sys
import unittest

import dlmap
import testing


def producer(dtype=(2, 32, 1), shape=(2,), **kwargs):
    return testing.Producer(array.array("d", range(6)), dtype, shape, **kwargs)


class PytorchExportTest(testing.DlmapTestCase):

    def test_profile(self):
        self.assertEqual(dlmap.profile(), "pytorch")

    def test_a_0d_export_has_zero_length_shape_and_strides(self):
        # T-E31: PyTorch's 0-d tensor carries pointers to its (empty) sizes and strides; NULL would say the same
        # for shape, but not what PyTorch hands over. Each request three times in a row: the first is exported in
        # full, the repeats through the array's prepared plan (python/array.c plan_for), each into its own block.
        a = dlmap.empty((), "float32")
        for kind, kwargs in (("legacy", {}), ("versioned", {"max_version": (1, 0)})):
            tensors = [(testing.versioned_tensor if kwargs else testing.legacy_tensor)(a.__dlpack__(**kwargs))
                       for _ in range(3)]
            for round, t in zip(("first", "planned", "planned again"), tensors):
                with self.subTest(kind=kind, round=round):
                    self.assertEqual(t.dl_tensor.ndim, 0)
                    self.assertTrue(t.dl_tensor.shape and t.dl_tensor.strides)
            addresses = {ctypes.cast(t.dl_tensor.shape, ctypes.c_void_p).value for t in tensors}
            self.assertEqual(len(addresses), 3, f"{kind}: the exports share a shape array")

    def test_a_copy_is_not_marked_is_copied(self):
        a = dlmap.empty(3, "float32")
        v = testing.versioned_tensor(a.__dlpack__(max_version=(1, 0), copy=True))
        self.assertEqual(v.flags, 0)  # no IS_COPIED (nor READ_ONLY: the array is writable)
        self.assertNotEqual(v.dl_tensor.data, testing.versioned_tensor(a.__dlpack__(max_version=(1, 0))).dl_tensor.data)

    def test_stream_minus_one_on_a_cpu_array(self):
        a = dlmap.empty(3, "float32")
        self.assertEqual(testing.capsule_name(a.__dlpack__(stream=-1)), "dltensor")
        for stream in (0, 1, 5):  # the CPU convention still allows only None otherwise (T-E13)
            self.assertRaisesExactly(AssertionError, "stream should be None on cpu.", a.__dlpack__, stream=stream)

    def test_unsupported_major_prints_majors(self):
        self.assertRaisesExactly(RuntimeError, "unsupported DLPack capsule major version: 2. Maximum supported "
                                 "version: 1", dlmap.from_dlpack, producer(version=(2, 0)))

    def test_lanes_text_names_the_code(self):
        self.assertRaisesExactly(BufferError, "ATen does not support lanes != 1 for dtype code2", dlmap.from_dlpack,
                                 producer((2, 32, 2), (3,)))
        self.assertRaisesExactly(BufferError, "ATen does not support lanes != 1 for dtype code0", dlmap.from_dlpack,
                                 producer((0, 8, 4), (3,)))


    def test_argument_texts_of_the_binding(self):
        """T-E52..T-E54: the C++ binding's parser texts, and toDLPack's RuntimeError for a tuple of another length
        (argument_length_dl_device; array_api says argument_type_dl_device's TypeError for both)."""
        a = dlmap.empty(3, "float32")
        for kwargs, cls, error_id, message in [
                ({"dl_device": "cpu"}, TypeError, "argument_type_dl_device",
                 "_to_dlpack(): argument 'dl_device' must be tuple of ints, not str"),
                ({"dl_device": (1,)}, RuntimeError, "argument_length_dl_device",
                 "dl_device must be either None or a tuple of ints"),
                ({"dl_device": (1, 0, 0)}, RuntimeError, "argument_length_dl_device",
                 "dl_device must be either None or a tuple of ints"),
                ({"copy": "yes"}, TypeError, "argument_type_copy",
                 "_to_dlpack(): argument 'copy' must be bool, not str")]:
            with self.subTest(kwargs):
                error = self.assertRaisesExactly(cls, message, a.__dlpack__, **kwargs)
                self.assertEqual(error.dlmap_id, error_id)


    def test_dlpack_device_answers_enum_members(self):
        """dlpack_device.enum (T-D5): members of the module's DLDeviceType IntEnum, named by the spec's enumerators."""
        import enum
        device_type, device_id = dlmap.empty(3, "float32").__dlpack_device__()
        self.assertIs(type(device_type), dlmap.DLDeviceType)
        self.assertTrue(issubclass(dlmap.DLDeviceType, enum.IntEnum))
        self.assertEqual((device_type, device_type.name, device_id), (testing.device_type_value("kDLCPU"), "kDLCPU", 0))
        self.assertEqual(dlmap.from_dlpack(dlmap.empty(3, "float32")).shape, (3,))  # read back as an int


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
