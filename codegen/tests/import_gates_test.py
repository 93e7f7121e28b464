# dlmap codegen tests — import_gates_test: import.version_gating, import.strides.negative and import.capsule_arguments
# (issue 27): their defaults are the behaviour before them, their values reach the profile row, and mistakes are
# SpecErrors naming the key.
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/import_gates_test.py
Under Bazel:  bazel test //codegen/tests:import_gates_test
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import DEFAULT_FILES, SPEC_DIR, SpecTestCase  # noqa: E402  (also puts codegen/ on sys.path)

import spec  # noqa: E402

PROFILE = "profiles/array_api.yaml"


class ImportGates(SpecTestCase):

    def imp(self):
        return self.docs[PROFILE]["profile"]["import"]

    def columns(self, loaded):
        """The C values of import_gating, negative_strides_refused and capsule_arguments_refused."""
        return self.profile_settings(loaded, "import_gating", "negative_strides_refused", "capsule_arguments_refused")

    def test_defaults_are_todays_behaviour(self):
        loaded = self.assertLoads()
        p = loaded.profile
        self.assertEqual((p.import_gating, p.negative_strides, p.capsule_arguments), ("strict", "accept", "accept"))
        self.assertEqual(self.columns(loaded), ["DLMAP_GATING_STRICT", "false", "false"])

    def test_values_reach_the_row(self):
        self.imp()["version_gating"] = "known"
        self.imp()["strides"]["negative"] = "refuse"
        self.imp()["capsule_arguments"] = "refuse"
        loaded = self.assertLoads()
        p = loaded.profile
        self.assertEqual((p.import_gating, p.negative_strides, p.capsule_arguments), ("known", "refuse", "refuse"))
        self.assertEqual(self.columns(loaded), ["DLMAP_GATING_KNOWN", "true", "true"])

    def test_explicit_defaults(self):
        self.imp()["version_gating"] = "strict"
        self.imp()["strides"]["negative"] = "accept"
        self.imp()["capsule_arguments"] = "accept"
        p = self.assertLoads().profile
        self.assertEqual((p.import_gating, p.negative_strides, p.capsule_arguments), ("strict", "accept", "accept"))

    def test_unknown_gating(self):
        self.imp()["version_gating"] = "lenient"
        self.assertRejected(PROFILE, "profile.import", "version_gating", "lenient")

    def test_unknown_negative(self):
        self.imp()["strides"]["negative"] = "copy"
        self.assertRejected(PROFILE, "profile.import.strides", "negative", "copy")

    def test_unknown_capsule_arguments(self):
        self.imp()["capsule_arguments"] = True
        self.assertRejected(PROFILE, "profile.import", "capsule_arguments")

    def test_copy_trust(self):
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.copy_trust, "flag")
        self.assertEqual(self.profile_setting(loaded, "copy_trust_producer"), "false")
        self.imp()["copy_trust"] = "producer"
        loaded = self.assertLoads()
        self.assertEqual(self.profile_setting(loaded, "copy_trust_producer"), "true")
        self.imp()["copy_trust"] = "always"
        self.assertRejected(PROFILE, "profile.import", "copy_trust", "'always' is not one of flag, producer")

    def test_unknown_strides_key(self):
        self.imp()["strides"]["negatives"] = "refuse"
        self.assertRejected(PROFILE, "profile.import.strides", "negatives")

    def test_pytorch_sets_all_three(self):
        """spec/profiles/pytorch.yaml (over array_api) refuses negative strides and capsule arguments, gates by known."""
        files = [os.path.join(SPEC_DIR, name) for name in DEFAULT_FILES if not name.startswith("profiles/")]
        profiles = os.path.join(SPEC_DIR, "profiles")
        p = spec.load(files + [os.path.join(profiles, "pytorch.yaml")], [os.path.join(profiles, "array_api.yaml")]).profile
        self.assertEqual((p.import_gating, p.negative_strides, p.capsule_arguments), ("known", "refuse", "refuse"))
        self.assertEqual((p.view_layout, p.otherwise_layout), ("any", "copy"))  # array_api's, merged key by key

if __name__ == "__main__":
    unittest.main()
