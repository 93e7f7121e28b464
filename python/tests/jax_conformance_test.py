# dlmap Python binding — conformance table of the default module (profile jax) against JAX's DLPack contract
# (shared/reference/jax-dlpack-contract.md): one row per contract row the binding can observe, by its id, with JAX's
# exception class and exact text. The C rows are in tests/conformance/jax_conformance_test.cc.
import array
import unittest

import dlmap
import testing
from testing import DlmapTestCase, Producer

COPY_FORBIDDEN = ("Specified device={} which requires a copy since the source device is {}, however copy=False. "
                  "Set copy=True or copy=None to perform the requested operation.")


class VersionedOnly(Producer):
    """A producer that answers every call with a versioned capsule (one that has dropped legacy export)."""

    def __dlpack__(self, **kwargs):
        self.calls.append(dict(kwargs))
        return self.make_capsule(True)


def rows():
    """(id, call, expected exception class or None, exact message) — evaluated lazily so each row is fresh."""
    buf = array.array("f", range(6))
    return [
        ("J-I2", lambda: dlmap.from_dlpack(object()), TypeError,
         "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods."),
        ("J-I2 (no __dlpack_device__)", lambda: dlmap.from_dlpack(type("X", (), {"__dlpack__": lambda s: None})()),
         TypeError, "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods."),
        ("J-E3", lambda: dlmap.empty((2,)).__dlpack__(dl_device=(13, 0)), BufferError,
         "The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: 13)"),
        ("J-E4", lambda: dlmap.empty((2,)).__dlpack__(max_version=(0, 4)), BufferError,
         "JAX does not support any version below (0, 5) but version ((0, 4)) was requested."),
        ("J-E5", lambda: dlmap.empty((2,)).__dlpack__(dl_device=(2, 0), copy=False), ValueError,
         COPY_FORBIDDEN.format("(kDLCUDA, 0)", "(kDLCPU, 0)")),
        ("J-E7", lambda: dlmap.empty((2,)).__dlpack__(stream=5), None, None),
        ("J-I4", lambda: dlmap.from_dlpack(Producer(buf, (2, 32, 1), (6,)), device=(2, 0), copy=False),
         ValueError, COPY_FORBIDDEN.format("(kDLCUDA, 0)", "(kDLCPU, 0)")),
        ("J-I8", lambda: dlmap.from_dlpack(Producer(buf, (2, 32, 1), (6,), ndim=-1)), RuntimeError,
         "INVALID_ARGUMENT: Number of dimensions in DLManagedTensor must be nonnegative, got -1"),
        ("J-I9", lambda: dlmap.from_dlpack(Producer(buf, (2, 32, 1), (2, 3), strides=(1, 1)), copy=True), RuntimeError,
         "UNIMPLEMENTED: Only DLPack tensors with trivial (compact) striding are supported; i.e., tensors whose "
         "striding represents a transposition of the underlying buffer but not broadcasting. Dimensions were: [2,3], "
         "strides were [1,1]."),
        # J-I10..J-I12 in JAX 0.11.2's words (issue 46: checked on an H200): XLA's dtype mapping decides.
        ("J-I10", lambda: dlmap.from_dlpack(Producer(buf, (0, 4, 1), (6,))), RuntimeError,
         "UNIMPLEMENTED: Invalid or unsupported DLPack integer width: 4 bits"),
        ("J-I11", lambda: dlmap.from_dlpack(Producer(buf, (2, 32, 2), (3,))), RuntimeError,
         "UNIMPLEMENTED: DLPack types with lanes != 1 not implemented, got 2"),
        ("J-I12", lambda: dlmap.from_dlpack(Producer(buf, (6, 16, 1), (3,))), RuntimeError,
         "UNIMPLEMENTED: Only 8-bit DLPack booleans are supported, got 16 bits"),
    ]


class JaxConformanceTest(DlmapTestCase):
    def test_profile(self):
        self.assertEqual(dlmap.profile(), "jax")

    def test_rows(self):
        for row_id, call, cls, message in rows():
            with self.subTest(row_id):
                if cls is None:
                    call()
                else:
                    self.assertRaisesExactly(cls, message, call)
        self.assertEqual(testing.live_hand_made(), 0, "every hand-made tensor was released")

    def test_J_I3_names_the_array_as_str(self):
        p = Producer(array.array("f", range(3)), (2, 32, 1), (3,), device=(13, 0))
        self.assertRaisesExactly(TypeError, f"Array passed to from_dlpack is on unsupported device type "
                                 f"(DLDeviceType: 13, array: {p}", dlmap.from_dlpack, p)
        self.assertEqual(p.calls, [], "refused on __dlpack_device__'s answer, before __dlpack__")

    def test_J_I5_asks_for_a_legacy_capsule_with_stream_only(self):
        p = Producer(array.array("f", range(3)), (2, 32, 1), (3,))
        a = dlmap.from_dlpack(p)
        self.assertEqual(p.calls, [{"stream": None}], "never max_version, dl_device or copy")
        self.assertEqual(a.shape, (3,))
        del a
        p = Producer(array.array("f", range(3)), (2, 32, 1), (3,), device=(3, 0))  # pinned: convention none
        dlmap.from_dlpack(p, stream=7)
        self.assertEqual(p.calls, [{"stream": None}], "host device types get stream=None")

    def test_J_I7_versioned_capsule_is_refused(self):
        p = VersionedOnly(array.array("f", range(3)), (2, 32, 1), (3,), version=(1, 0))
        self.assertRaisesExactly(RuntimeError, 'INVALID_ARGUMENT: DLPack tensor must be a capsule with name '
                                 '"dltensor", got "dltensor_versioned". Note that a DLPack tensor may be consumed at '
                                 "most once.", dlmap.from_dlpack, p)
        self.assertEqual(testing.live_hand_made(), 0, "the refused capsule's destructor released its tensor")

    def test_J_E4a_every_max_version_gets_a_legacy_capsule(self):
        for max_version in (None, (0, 5), (1, 0), (1, 3), (2, 0)):
            with self.subTest(max_version):
                capsule = dlmap.empty((2,)).__dlpack__(max_version=max_version)
                self.assertEqual(testing.capsule_name(capsule), "dltensor")

    def test_J_E10_fp8_to_a_legacy_consumer(self):
        a = dlmap.empty((4,), "float8_e4m3fn")
        capsule = a.__dlpack__()
        self.assertEqual(testing.capsule_name(capsule), "dltensor")
        b = dlmap.from_dlpack(a)  # JAX's from_dlpack never passes max_version
        self.assertEqual(b.shape, (4,))


if __name__ == "__main__":
    unittest.main()
