# dlmap Python binding — the import gates (issue 27) on the pytorch profile's module (//python/pytorch), whose profile
# (spec/profiles/pytorch.yaml) sets import.version_gating: known (T-I18, T-I46), import.strides.negative: refuse
# (T-I27) and import.capsule_arguments: refuse (T-I37), with PyTorch's kinds and texts. Each test fails on a module
# built without its key (the defaults: a dtype newer than the tensor's stamp is dtype_not_in_version, negative strides
# are imported, a capsule with copy= is from_dlpack_missing_methods after the arguments are read).
import array
import unittest

import dlmap
from testing import DlmapTestCase, Producer, capsule_name, deleted, profile_error, profile_spec

IMPORT = profile_spec("pytorch")["import"]
NEGATIVE = profile_error("pytorch", "strides_negative")
WITH_ARGUMENTS = profile_error("pytorch", "capsule_with_arguments")


def producer(dtype=(2, 64, 1), shape=(3,), strides=None, byte_offset=0, version=(1, 3), tag="producer"):
    return Producer(array.array("d", range(6)), dtype, shape, strides=strides, byte_offset=byte_offset,
                    version=version, tag=tag)


class Profile(DlmapTestCase):

    def test_the_module_is_pytorchs(self):
        self.assertEqual(dlmap.profile(), "pytorch")
        self.assertEqual((IMPORT["version_gating"], IMPORT["strides"]["negative"], IMPORT["capsule_arguments"]),
                         ("known", "refuse", "refuse"))


class VersionGating(DlmapTestCase):

    def test_fp8_stamped_before_it_was_introduced(self):
        """float8_e4m3fn and float8_e8m0fnu (DLPack 1.1+) in a tensor stamped 1.0: imported, as PyTorch does."""
        for dtype in ((10, 8, 1), (14, 8, 1)):
            with self.subTest(dtype=dtype):
                imported = dlmap.from_dlpack(producer(dtype, shape=(4,), version=(1, 0)))
                self.assertEqual(imported.shape, (4,))

    def test_unknown_flags_are_still_not_read(self):
        """known lifts the version check only; flag bits the spec does not know stay import.unknown_flags' (ignore)."""
        p = producer(version=(1, 0))
        p.flags = 1 << 40
        self.assertEqual(dlmap.from_dlpack(p).shape, (3,))


class NegativeStrides(DlmapTestCase):

    def test_refused_with_aten_text(self):
        for shape, strides, offset, shown in [((3,), (-1,), 16, "3"), ((2, 3), (-3, 1), 24, "2, 3")]:
            for copy in (None, True, False):
                with self.subTest(shape=shape, copy=copy):
                    p = producer(shape=shape, strides=strides, byte_offset=offset)
                    with self.assertRaises(NEGATIVE[0]) as raised:
                        dlmap.from_dlpack(p, copy=copy)
                    self.assertEqual(raised.exception.dlmap_id, "strides_negative")
                    self.assertEqual(str(raised.exception),
                                     NEGATIVE[1].format(shape=shown, strides=", ".join(map(str, strides))))

    def test_released(self):
        deleted.clear()
        with self.assertRaises(NEGATIVE[0]):
            dlmap.from_dlpack(producer(strides=(-1,), byte_offset=16, tag="negative"))
        self.assertEqual(deleted, ["negative"])

    def test_negative_strides_never_followed(self):
        """A size-1 dimension's stride and an empty tensor's strides reach nothing: imported (ATen's overflow check
        multiplies each stride by its size minus one, and stops at an empty dimension)."""
        for shape, strides in [((1, 3), (-5, 1)), ((0, 3), (-3, 1)), ((3,), (1,))]:
            with self.subTest(shape=shape, strides=strides):
                self.assertEqual(dlmap.from_dlpack(producer(shape=shape, strides=strides)).shape, shape)


class CapsuleArguments(DlmapTestCase):

    def test_capsule_with_device_or_copy(self):
        for kwargs in ({"copy": True}, {"copy": False}, {"device": "cpu"}, {"device": object(), "copy": None},
                       {"copy": "not a bool"}):
            with self.subTest(kwargs=kwargs):
                p = producer(tag="capsule")
                capsule = p.__dlpack__(max_version=(1, 0))
                with self.assertRaises(WITH_ARGUMENTS[0]) as raised:
                    dlmap.from_dlpack(capsule, **kwargs)
                self.assertEqual(str(raised.exception), WITH_ARGUMENTS[1])
                self.assertEqual(raised.exception.dlmap_id, "capsule_with_arguments")
                self.assertEqual(capsule_name(capsule), "dltensor_versioned")  # untouched: still importable
                del capsule

    def test_none_arguments_and_producers_are_not_refused(self):
        capsule = producer().__dlpack__(max_version=(1, 0))
        with self.assertRaises(Exception) as raised:   # dlmap takes producers, not capsules: its own refusal
            dlmap.from_dlpack(capsule, device=None, copy=None)
        self.assertNotEqual(getattr(raised.exception, "dlmap_id", None), "capsule_with_arguments")
        del capsule
        self.assertEqual(dlmap.from_dlpack(producer(), copy=True).shape, (3,))


if __name__ == "__main__":
    unittest.main()
