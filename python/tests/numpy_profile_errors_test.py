# dlmap Python binding — the import refusals that spec/profiles/numpy.yaml words as NumPy 2.4 does (issue 27: rows
# N-I8, N-I11, N-I11b, N-I18, N-I18a, N-I19 of docs/contracts/numpy.md), on //python/numpy's module. Each text needs
# a catalogue arg or error of its own (from_dlpack_missing_methods {got}, ndim_negative {max_ndim},
# argument_type_dlpack_result); without them numpy.yaml does not load or the texts keep their catalogue wording. The
# differential test checks the same rows against the real NumPy where NumPy 2.x is installed; this one needs no NumPy.
import array
import unittest

import dlmap
import testing
from testing import DlmapTestCase, Producer, Wrap


def producer(**kwargs):
    return Producer(array.array("f", range(6)), (2, 32, 1), (6,), **kwargs)


class MissingMethods(DlmapTestCase):

    def test_names_the_type_on_both_call_paths(self):
        """N-I8: from_dlpack(x) alone (the fast path) and with keywords name the object's type alike."""
        for call in (lambda x: dlmap.from_dlpack(x), lambda x: dlmap.from_dlpack(x, copy=None)):
            e = self.assertRaisesExactly(AttributeError, "'list' object has no attribute '__dlpack__'", call, [1])
            self.assertEqual(e.dlmap_id, "from_dlpack_missing_methods")
            self.assertRaisesExactly(AttributeError, "'int' object has no attribute '__dlpack__'", call, 42)


class CapsuleErrors(DlmapTestCase):

    def test_not_a_capsule(self):
        """N-I19: __dlpack__ returned an int."""
        class NotACapsule:
            def __dlpack__(self, **kwargs):
                return 42

        e = self.assertRaisesExactly(ValueError, "PyCapsule_GetPointer called with invalid PyCapsule object",
                                     dlmap.from_dlpack, NotACapsule())
        self.assertEqual((e.dlmap_id, e.dlmap_code), ("argument_type_dlpack_result", 710))

    def test_consumed_capsule_of_either_name(self):
        """N-I18, N-I18a: a capsule already renamed used_dltensor_versioned or used_dltensor."""
        a = dlmap.from_dlpack(producer())  # a dlmap array, to export capsules of both names
        for kwargs in ({"max_version": (1, 0)}, {}):
            w = Wrap(a.__dlpack__(**kwargs))
            dlmap.from_dlpack(w)
            e = self.assertRaisesExactly(ValueError, "PyCapsule_GetPointer called with incorrect name",
                                         dlmap.from_dlpack, w)
            self.assertEqual(e.dlmap_id, "capsule_consumed")


class Ndim(DlmapTestCase):

    def test_too_large(self):
        """N-I11: ndim 65, above the maximum of 64."""
        e = self.assertRaisesExactly(BufferError, "maxdims of DLPack tensor is higher than the supported maxdims.",
                                     dlmap.from_dlpack, producer(ndim=65))
        self.assertEqual(e.dlmap_id, "ndim_too_large")

    def test_negative(self):
        """N-I11b: the bound in the text is the catalogue's max_ndim arg."""
        e = self.assertRaisesExactly(ValueError, "number of dimensions must be within [0, 64]", dlmap.from_dlpack,
                                     producer(ndim=-1))
        self.assertEqual(e.dlmap_id, "ndim_negative")


class MaxVersionNegative(DlmapTestCase):
    """export.max_version.negative: zero (N-E4a): a negative part reads as 0, so the ranges decide (below 1.0:
    legacy); the array_api module's refusal is protocol_test's."""

    def test_negative_major_is_legacy(self):
        a = dlmap.from_dlpack(producer())
        for max_version, name in [((-1, 0), "dltensor"), ((-1, 7), "dltensor"), ((1, -1), "dltensor_versioned")]:
            self.assertEqual(testing.capsule_name(a.__dlpack__(max_version=max_version)), name)


if __name__ == "__main__":
    unittest.main()
