# dlmap Python binding — the optional import keys of a profile (issue 27), on the numpy profile's module
# (//python/numpy), whose profile sets them as NumPy 2.x's from_dlpack behaves (spec/profiles/numpy.yaml):
# import.ask {max_version: "1.0", retry: when_defaults, stream: false, keywords}, import.legacy_read_only: true,
# import.device_query: never and import.refused_capsule: leave (the ask is read from the YAML). Each test fails on a
# module built without its key (the defaults: the newest max_version, a retry after any TypeError, a stream=
# parameter, legacy tensors writable, __dlpack_device__ first).
import array
import unittest

import dlmap
from testing import REFCOUNTS, DlmapTestCase, Producer, capsule_name, deleted, profile_error, profile_spec

ASK = profile_spec("numpy")["import"]["ask"]
ASKED_VERSION = tuple(int(part) for part in ASK["max_version"].split("."))


def producer(**kwargs):
    return Producer(array.array("f", range(6)), (2, 32, 1), (6,), **kwargs)


class AskMaxVersion(DlmapTestCase):

    def test_sends_the_profiles_max_version(self):
        p = producer()
        dlmap.from_dlpack(p)
        self.assertEqual(p.calls[0].get("max_version"), ASKED_VERSION)


class AskRetry(DlmapTestCase):

    def test_default_call_is_retried_plainly(self):
        p = producer(legacy_only=True)
        a = dlmap.from_dlpack(p)
        self.assertEqual(a.version, (0, 0))
        self.assertIn("max_version", p.calls[0])
        self.assertEqual(p.calls[1], {})

    def test_copy_true_propagates_the_type_error(self):
        p = producer(legacy_only=True)
        with self.assertRaises(TypeError) as raised:
            dlmap.from_dlpack(p, copy=True)
        self.assertIn("unexpected keyword argument", str(raised.exception))
        self.assertEqual(len(p.calls), 1)

    def test_device_propagates_the_type_error(self):
        p = producer(legacy_only=True)
        with self.assertRaises(TypeError):
            dlmap.from_dlpack(p, device="cpu")
        self.assertEqual(len(p.calls), 1)

    def test_signature_without_max_version_is_called_when_asked_more(self):
        """A producer whose signature cannot take max_version is not called plainly with copy=True: the versioned
        call's TypeError comes from Python itself."""
        class Old:
            def __dlpack__(self, stream=None):
                raise AssertionError("called")

            def __dlpack_device__(self):
                return (1, 0)
        with self.assertRaises(TypeError):
            dlmap.from_dlpack(Old(), copy=False)


class AskStream(DlmapTestCase):

    def test_stream_keyword_is_a_type_error(self):
        with self.assertRaises(TypeError) as raised:
            dlmap.from_dlpack(producer(), stream=None)
        self.assertIn("stream", str(raised.exception))

    def test_no_stream_is_passed(self):
        p = producer()
        dlmap.from_dlpack(p, copy=None, device=None)
        self.assertEqual(p.calls[0].get("stream"), None)


class DeviceQueryNever(DlmapTestCase):

    def test_producer_without_dlpack_device(self):
        class NoQuery:
            def __init__(self):
                self.p = producer()

            def __dlpack__(self, **kwargs):
                return self.p.__dlpack__(**kwargs)
        a = dlmap.from_dlpack(NoQuery())
        self.assertEqual(a.shape, (6,))

    def test_dlpack_device_is_not_called(self):
        p = producer()
        p.__dlpack_device__ = lambda: (_ for _ in ()).throw(AssertionError("__dlpack_device__ called"))
        self.assertEqual(dlmap.from_dlpack(p).device, (1, 0))

    def test_c_type_producer(self):
        """A C type's method descriptor (NumPy's ndarray: lookup_methods' unbound path), without its
        __dlpack_device__ being looked up."""
        try:
            import numpy
        except ImportError:
            self.skipTest("numpy is not importable: the C-type path is not exercised")
        REFCOUNTS.check_peer("numpy")  # Debian's NumPy has no debug build: its own drops would count as leaks
        source = numpy.arange(6.0)
        a = dlmap.from_dlpack(source)
        self.assertEqual((a.shape, a.data_ptr), ((6,), source.ctypes.data))

    def test_without_dlpack_is_still_refused(self):
        """from_dlpack_missing_methods, of the kind the profile (or the catalogue under it) gives."""
        kind, _ = profile_error("numpy", "from_dlpack_missing_methods")
        with self.assertRaises(kind) as raised:
            dlmap.from_dlpack(object())
        self.assertEqual(raised.exception.dlmap_id, "from_dlpack_missing_methods")

    def test_tensor_device_is_still_checked(self):
        """No report: the tensor's own device type meets the profile's import.accept (kDLCUDA, without CUDA here, or
        an unknown type 99): an error, never a crash."""
        with self.assertRaises(Exception) as raised:
            dlmap.from_dlpack(producer(device=(99, 0)))
        self.assertNotIsInstance(raised.exception, AssertionError)


class LegacyReadOnly(DlmapTestCase):

    def test_legacy_view_is_read_only(self):
        a = dlmap.from_dlpack(producer(legacy_only=True))
        self.assertEqual(a.version, (0, 0))
        self.assertTrue(a.readonly)

    def test_versioned_view_stays_writable(self):
        a = dlmap.from_dlpack(producer())
        self.assertEqual(a.version, (1, 3))
        self.assertFalse(a.readonly)


class AskKeywords(DlmapTestCase):
    """import.ask.keywords (numpy.yaml: dl_device, copy, max_version): those on every versioned call, None included,
    in the order listed, and no stream (the default passes max_version and stream=None, and dl_device and copy only
    when set)."""

    def test_default_call(self):
        p = producer()
        dlmap.from_dlpack(p)
        expected = {"dl_device": None, "copy": None, "max_version": ASKED_VERSION}
        self.assertEqual(p.calls, [{key: expected[key] for key in ASK["keywords"]}])

    def test_set_values_are_passed(self):
        p = producer()
        dlmap.from_dlpack(p, device="cpu", copy=False)
        expected = {"dl_device": (1, 0), "copy": False, "max_version": ASKED_VERSION}
        self.assertEqual(p.calls, [{key: expected[key] for key in ASK["keywords"]}])

    def test_keywords_in_the_order_listed(self):
        # N-I4a: a producer that takes no keywords names the first one passed in its TypeError
        for options in ({}, {"device": "cpu", "copy": False}):
            with self.subTest(**options):
                p = producer()
                dlmap.from_dlpack(p, **options)
                self.assertEqual([list(call) for call in p.calls], [ASK["keywords"]])

    def test_plain_retry_still_has_no_keywords(self):
        p = producer(legacy_only=True)
        dlmap.from_dlpack(p)
        self.assertEqual(p.calls[1], {})


class RefusedCapsule(DlmapTestCase):
    """import.refused_capsule leave: a capsule import refuses keeps its name and its destructor runs the deleter,
    exactly once (the default renames it used_* and runs the deleter itself)."""

    def refused(self, dtype=(2, 32, 1), **kwargs):
        p = Producer(array.array("f", range(6)), dtype, (6,), reuse=True, tag="refused", **kwargs)
        with self.assertRaises(Exception) as raised:
            dlmap.from_dlpack(p)
        self.assertNotIsInstance(raised.exception, AssertionError)
        return p

    def test_refusals_leave_the_capsule(self):
        for kwargs, name in (({"version": (2, 0)}, "dltensor_versioned"), ({"ndim": 65}, "dltensor_versioned"),
                             ({"device": (99, 0)}, "dltensor_versioned"), ({"dtype": (255, 32, 1)}, "dltensor_versioned"),
                             ({"device": (99, 0), "legacy_only": True}, "dltensor")):
            with self.subTest(kwargs=kwargs):
                deleted.clear()
                p = self.refused(**kwargs)
                self.assertEqual(capsule_name(p._capsule), name)
                self.assertEqual(deleted, [])  # the capsule still owns the tensor
                p._capsule = None
                self.assertEqual(deleted, ["refused"])

    def test_a_left_capsule_refused_twice_is_released_once(self):
        p = self.refused(version=(2, 0))
        with self.assertRaises(profile_error("numpy", "version_major_unsupported")[0]):
            dlmap.from_dlpack(p)
        self.assertEqual(deleted, [])
        p._capsule = None
        self.assertEqual(deleted, ["refused"])

    def test_an_imported_capsule_is_still_consumed(self):
        for copy in (None, True):
            with self.subTest(copy=copy):
                deleted.clear()
                p = producer(reuse=True, tag="taken")
                a = dlmap.from_dlpack(p, copy=copy)
                self.assertEqual(capsule_name(p._capsule), "used_dltensor_versioned")
                p._capsule = None
                del a
                self.assertEqual(deleted, ["taken"])


if __name__ == "__main__":
    unittest.main()
