# dlmap Python binding tests — pytorch_export_test: the pytorch profile's module (//python/pytorch,
# spec/profiles/pytorch.yaml) for the keys and texts issue 27 adds for PyTorch 2.14's contract
# (docs/contracts/pytorch.md): export.flag_is_copied false (T-E19), export.stream_no_sync true (T-E59), the
# {version:major} style (T-I10), dtype_lanes_not_one's {code} (T-I13), the argument texts (T-E52..T-E54),
# dlpack_device.enum (T-D5), export.scalar_dims empty (T-E31), arguments.max_version subscript_major and
# arguments.read_only truth (T-E12, T-E55, T-E56, T-E17, T-E18, T-E58) and export.max_version.absent_read_only
# versioned (T-E47), pinned here as PyTorch's contract.
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


    def test_max_version_is_read_as_max_version_0_below_1(self):
        """arguments.max_version subscript_major (T-E12, T-E55, T-E56): PyTorch's `max_version[0] < 1`, with
        Python's own errors; array_api requires a (major, minor) pair of ints (argument_type_max_version)."""
        a = dlmap.empty(3, "float32")
        for requested, name in [((1,), "dltensor_versioned"), ((0.5, 0), "dltensor"),
                                ((1.5, "x"), "dltensor_versioned"), ([0, 9], "dltensor"),
                                ({0: 2}, "dltensor_versioned"), ((-3, 0), "dltensor"),
                                ((2 ** 70,), "dltensor_versioned")]:
            with self.subTest(requested):
                self.assertEqual(testing.capsule_name(a.__dlpack__(max_version=requested)), name)
        self.assertRaisesExactly(TypeError, "'int' object is not subscriptable", a.__dlpack__, max_version=1)
        self.assertRaisesExactly(TypeError, "'<' not supported between instances of 'str' and 'int'", a.__dlpack__,
                                 max_version=("a", "b"))
        self.assertRaisesExactly(IndexError, "tuple index out of range", a.__dlpack__, max_version=())

        class Hostile:
            def __getitem__(self, index):
                raise KeyError(index)

        class Major:
            def __lt__(self, other):
                raise ValueError("no order")

        self.assertRaises(KeyError, a.__dlpack__, max_version=Hostile())
        self.assertRaisesExactly(ValueError, "no order", a.__dlpack__, max_version=(Major(), 0))
        self.assertEqual(testing.capsule_name(a.__dlpack__()), "dltensor")  # nothing lost on the way

    def test_read_only_keyword(self):
        """arguments.read_only truth (T-E17, T-E18, T-E58): __dlpack__(read_only=x) marks a versioned export
        READ_ONLY where x is true; a legacy request is refused (legacy_read_only refuse); the array stays writable.
        array_api has no such keyword."""
        a = dlmap.empty(3, "float32")
        for value in (True, "yes", 1):
            with self.subTest(value):
                v = testing.versioned_tensor(a.__dlpack__(max_version=(1, 0), read_only=value))
                self.assertEqual(v.flags & testing.FLAG_READ_ONLY, testing.FLAG_READ_ONLY)
                error = self.assertRaisesExactly(
                    BufferError, "read_only export requires the versioned DLPack protocol; pass max_version=(1, 0) "
                    "or higher", a.__dlpack__, read_only=value)
                self.assertEqual(error.dlmap_id, "read_only_needs_versioned")
        for value in (False, None, 0, ""):
            with self.subTest(value):
                self.assertEqual(testing.versioned_tensor(a.__dlpack__(max_version=(1, 0), read_only=value)).flags, 0)
                self.assertEqual(testing.capsule_name(a.__dlpack__(read_only=value)), "dltensor")
        self.assertFalse(a.readonly)
        # the repeated export after a read-only one goes through the array's plan: still writable
        for _ in range(3):
            self.assertEqual(testing.versioned_tensor(a.__dlpack__(max_version=(1, 0))).flags, 0)

        class Truth:
            def __bool__(self):
                raise ValueError("no truth")

        self.assertRaisesExactly(ValueError, "no truth", a.__dlpack__, max_version=(1, 0), read_only=Truth())

    def test_a_read_only_array_asked_for_nothing_is_versioned(self):
        """export.max_version.absent_read_only versioned (T-E47, ReadOnlyTensorWrapper): a read-only array's
        __dlpack__() is a versioned READ_ONLY tensor; a writable one's stays legacy (array_api refuses the read-only
        one: read_only_needs_versioned)."""
        a = dlmap.empty(3, "float32")
        a.readonly = True
        v = testing.versioned_tensor(a.__dlpack__())
        self.assertEqual((v.version.major, v.version.minor, v.flags), (1, 3, testing.FLAG_READ_ONLY))
        a.readonly = False
        self.assertEqual(testing.capsule_name(a.__dlpack__()), "dltensor")

    def test_signature_errors_as_pythons_for_tensor_methods(self):
        """arguments.signature_errors catalogue, method_owner Tensor, from_dlpack_object ext_tensor (T-E41, T-E51):
        CPython's texts for PyTorch's Python-level __dlpack__ (self counted) and torch.from_dlpack."""
        a = dlmap.empty(3, "float32")
        for call, error_id, message in [
                (lambda: a.__dlpack__(None), "argument_positional_count",
                 "Tensor.__dlpack__() takes 1 positional argument but 2 were given"),
                (lambda: a.__dlpack__(foo=1), "argument_keyword_unknown",
                 "Tensor.__dlpack__() got an unexpected keyword argument 'foo'"),
                (lambda: dlmap.from_dlpack(a, None), "argument_positional_count",
                 "from_dlpack() takes 1 positional argument but 2 were given"),
                (lambda: dlmap.from_dlpack(), "argument_missing",
                 "from_dlpack() missing 1 required positional argument: 'ext_tensor'"),
                (lambda: dlmap.from_dlpack(a, ext_tensor=a), "argument_given_twice",
                 "from_dlpack() got multiple values for argument 'ext_tensor'")]:
            with self.subTest(message):
                self.assertEqual(self.assertRaisesExactly(TypeError, message, call).dlmap_id, error_id)
        self.assertEqual(dlmap.from_dlpack(ext_tensor=a).shape, (3,))

    def test_devices_in_texts_as_torch_prints_them(self):
        """device_texts and {device:text} (T-E22): ATen's maybeCopyTensor prints c10::Device, "cpu" and "cuda:0"."""
        a = dlmap.empty(3, "float32")
        for device_id in (0, 3):
            with self.subTest(device_id=device_id):
                error = self.assertRaisesExactly(
                    ValueError, "cannot move (i.e. copy=False) tensor from cpu to cuda:%d without copying." % device_id,
                    a.__dlpack__, max_version=(1, 0), dl_device=(testing.device_type_value("kDLCUDA"), device_id),
                    copy=False)
                self.assertEqual(error.dlmap_id, "export_copy_to_device_forbidden")

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
