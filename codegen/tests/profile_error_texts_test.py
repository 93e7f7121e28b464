# dlmap codegen tests — profile_error_texts_test: the catalogue errors a profile needs to word NumPy 2.x's import
# refusals (issue 27: N-I8, N-I11, N-I11b, N-I18, N-I19) — the placeholders and the error of its own they rely on,
# the catalogue's own texts unchanged, and spec/profiles/numpy.yaml's overrides accepted; and the optional key
# export.max_version.negative (N-E4a: NumPy exports max_version=(-1, 0) as legacy).
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/profile_error_texts_test.py
Under Bazel:  bazel test //codegen/tests:profile_error_texts_test
"""

import os
import sys
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import SPEC_DIR, SpecTestCase  # noqa: E402  (also puts codegen/ on sys.path)

import spec  # noqa: E402

PROFILE = "profiles/array_api.yaml"
NUMPY_IDS = ("from_dlpack_missing_methods", "argument_type_dlpack_result", "capsule_consumed", "ndim_too_large",
             "ndim_negative")


def numpy_overrides():
    """spec/profiles/numpy.yaml's `errors:` entries for the errors this test is about."""
    with open(os.path.join(SPEC_DIR, "profiles", "numpy.yaml"), encoding="utf-8") as handle:
        entries = yaml.safe_load(handle)["profile"]["errors"]
    return [e for e in entries if e["id"] in NUMPY_IDS]


class ErrorTexts(SpecTestCase):

    def error(self, loaded, error_id):
        return next(e for e in loaded.errors if e.id == error_id)

    def test_catalogue_texts_unchanged(self):
        """The new args are for profiles only: the catalogue's own kinds and texts are today's."""
        loaded = self.assertLoads()
        missing = self.error(loaded, "from_dlpack_missing_methods")
        self.assertEqual((missing.kind, missing.message), (
            "AttributeError", "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods."))
        self.assertIn("got", missing.args)
        negative = self.error(loaded, "ndim_negative")
        self.assertEqual(negative.message, "Number of dimensions in DLManagedTensor must be nonnegative, got {ndim}")
        self.assertEqual(negative.args, ["ndim", "max_ndim"])

    def test_dlpack_result_is_argument_type_invalid_worded(self):
        """__dlpack__'s non-capsule result has an error of its own, with argument_type_invalid's kind and text."""
        loaded = self.assertLoads()
        own, generic = self.error(loaded, "argument_type_dlpack_result"), self.error(loaded, "argument_type_invalid")
        self.assertEqual(own.code, 710)
        self.assertEqual((own.kind, own.message, own.args), (generic.kind, generic.message, generic.args))

    def test_numpy_overrides_load(self):
        """numpy.yaml's texts use only the errors' own args (a SpecError before {got} and {max_ndim} were args)."""
        overrides = numpy_overrides()
        self.assertEqual(sorted(e["id"] for e in overrides), sorted(NUMPY_IDS))
        self.docs[PROFILE]["profile"].setdefault("errors", []).extend(overrides)
        loaded = self.assertLoads()
        self.assertEqual(self.error(loaded, "from_dlpack_missing_methods").message,
                         "'{got}' object has no attribute '__dlpack__'")
        self.assertEqual(self.error(loaded, "ndim_negative").message,
                         "number of dimensions must be within [0, {max_ndim}]")
        self.assertEqual(self.error(loaded, "ndim_negative").kind, "ValueError")
        self.assertEqual(self.error(loaded, "argument_type_dlpack_result").kind, "ValueError")

    def test_an_arg_the_error_lacks_is_refused(self):
        """The check these args exist for: a profile text naming a placeholder its error never receives."""
        self.docs[PROFILE]["profile"].setdefault("errors", []).append(
            {"id": "capsule_consumed", "message": "ndim {ndim}"})
        with self.assertRaises(spec.SpecError):
            self.load()


class MaxVersionNegative(SpecTestCase):
    """export.max_version.negative (N-E4a): refuse (the default, today's invalid_argument) or zero."""

    def max_version(self):
        return self.docs[PROFILE]["profile"]["export"]["max_version"]

    def test_default_is_refuse(self):
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.max_version_negative, "refuse")
        self.assertEqual(self.profile_setting(loaded, "max_version_negative_zero"), "false")

    def test_zero_reaches_the_row(self):
        self.max_version()["negative"] = "zero"
        self.assertEqual(self.profile_setting(self.assertLoads(), "max_version_negative_zero"), "true")

    def test_unknown_value(self):
        self.max_version()["negative"] = "legacy"
        self.assertRejected(PROFILE, "profile.export.max_version", "negative", "refuse", "zero")


if __name__ == "__main__":
    unittest.main()
