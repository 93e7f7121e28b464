# dlmap codegen tests — profile_torch_export_test: the keys issue 27 adds for PyTorch's export side
# (export.flag_is_copied, export.stream_no_sync, export.scalar_dims), the {version:major} message style and
# dtype_lanes_not_one's {code}: defaults, accepted values, emitted rows and compiled templates, and every SpecError.
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/profile_torch_export_test.py
Under Bazel:  bazel test //codegen/tests:profile_torch_export_test
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import SpecTestCase  # noqa: E402  (also puts codegen/ on sys.path)

import emit  # noqa: E402

PROFILE = "profiles/array_api.yaml"


class TorchExportKeys(SpecTestCase):

    def export(self):
        return self.docs[PROFILE]["profile"]["export"]

    def test_defaults_are_todays_behaviour(self):
        loaded = self.assertLoads()
        self.assertTrue(loaded.profile.flag_is_copied)
        self.assertFalse(loaded.profile.stream_no_sync)
        self.assertEqual(self.profile_setting(loaded, "flag_is_copied"), "true")
        self.assertEqual(self.profile_setting(loaded, "stream_no_sync"), "false")
        self.assertEqual((loaded.profile.scalar_dims, self.profile_setting(loaded, "scalar_dims_empty")), ("null", "false"))

    def test_scalar_dims_empty(self):
        self.export()["scalar_dims"] = "empty"
        loaded = self.assertLoads()
        self.assertEqual((loaded.profile.scalar_dims, self.profile_setting(loaded, "scalar_dims_empty")), ("empty", "true"))

    def test_copy_argument(self):
        loaded = self.assertLoads()
        self.assertEqual((loaded.profile.copy_argument, self.profile_setting(loaded, "copy_argument_truth")),
                         ("strict", "false"))
        self.export()["copy_argument"] = "truth"
        loaded = self.assertLoads()
        self.assertEqual((loaded.profile.copy_argument, self.profile_setting(loaded, "copy_argument_truth")),
                         ("truth", "true"))
        self.export()["copy_argument"] = "bool"
        self.assertRejected(PROFILE, "profile.export", "copy_argument", "'bool' is not one of strict, truth")

    def test_scalar_dims_values(self):
        self.export()["scalar_dims"] = "zero_length"
        self.assertRejected(PROFILE, "profile.export", "scalar_dims", "'zero_length' is not one of null, empty")

    def test_set(self):
        self.export()["flag_is_copied"] = False
        self.export()["stream_no_sync"] = True
        loaded = self.assertLoads()
        self.assertFalse(loaded.profile.flag_is_copied)
        self.assertTrue(loaded.profile.stream_no_sync)
        self.assertEqual(self.profile_setting(loaded, "flag_is_copied"), "false")
        self.assertEqual(self.profile_setting(loaded, "stream_no_sync"), "true")

    def test_flag_is_copied_must_be_a_bool(self):
        self.export()["flag_is_copied"] = "no"
        self.assertRejected(PROFILE, "profile.export", "flag_is_copied")

    def test_stream_no_sync_must_be_a_bool(self):
        self.export()["stream_no_sync"] = 1
        self.assertRejected(PROFILE, "profile.export", "stream_no_sync")


class MajorStyle(SpecTestCase):
    """{version:major}: a version placeholder printed as its major only (PyTorch: "major version: 2")."""

    def errors(self, *entries):
        self.docs[PROFILE]["profile"]["errors"] = list(entries)

    def compiled(self, loaded, error_id):
        return emit.compiled_message(loaded, next(e for e in loaded.errors if e.id == error_id))

    def test_major_compiles_to_byte_3(self):
        self.errors({"id": "version_major_unsupported",
                     "message": "major {version:major}, max {supported_version:major}, as {version:tuple}"})
        loaded = self.assertLoads()
        index = {p.name: p.value for p in loaded.placeholders}
        self.assertEqual(self.compiled(loaded, "version_major_unsupported"),
                         "major \x03%s, max \x03%s, as \x02%s" % (chr(index["version"] + 1),
                                                                  chr(index["supported_version"] + 1),
                                                                  chr(index["version"] + 1)))

    def test_major_is_for_versions_only(self):
        self.errors({"id": "ndim_negative", "message": "ndim {ndim:major}"})
        message = self.assertRejected(PROFILE, "profile.errors[0] (ndim_negative)", "message")
        self.assertIn("{ndim:major}: style 'major' is for version placeholders", message)


class LanesCode(SpecTestCase):
    """dtype_lanes_not_one supplies {code} (PyTorch: "ATen does not support lanes != 1 for dtype code2")."""

    def test_code_is_an_argument_and_the_default_text_is_unchanged(self):
        loaded = self.assertLoads()
        error = next(e for e in loaded.errors if e.id == "dtype_lanes_not_one")
        self.assertEqual(error.args, ["lanes", "code"])
        self.assertEqual(error.message, "Unsupported DLPack tensor dtype: lanes should be equal to 1, got {lanes}")

    def test_a_profile_text_may_name_the_code(self):
        self.docs[PROFILE]["profile"]["errors"] = [{"id": "dtype_lanes_not_one", "message": "lanes code{code}"}]
        loaded = self.assertLoads()
        self.assertEqual(next(e for e in loaded.errors if e.id == "dtype_lanes_not_one").message, "lanes code{code}")


if __name__ == "__main__":
    unittest.main()
