# dlmap codegen tests — profile_export_keys_test: the optional export keys of issue 27 (export.stamp,
# export.dl_device.host_id, export.stream none_only): defaults, accepted values, emitted rows and every SpecError.
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/profile_export_keys_test.py
Under Bazel:  bazel test //codegen/tests:profile_export_keys_test
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import SpecTestCase  # noqa: E402  (also puts codegen/ on sys.path)

import emit  # noqa: E402

PROFILE = "profiles/array_api.yaml"


class ExportKeys(SpecTestCase):

    def export(self):
        return self.docs[PROFILE]["profile"]["export"]

    def test_defaults_are_todays_behaviour(self):
        loaded = self.assertLoads()
        self.assertIsNone(loaded.profile.stamp)
        self.assertEqual(loaded.profile.host_id, "any")
        self.assertEqual(self.profile_settings(loaded, "stamp_fixed", "stamp", "host_id_zero"),
                         ["false", "DLMAP_PROFILE_VERSION(0u, 0u)", "false"])

    def test_dlpack_device_enum(self):
        loaded = self.assertLoads()
        self.assertFalse(loaded.profile.device_enum)
        self.assertEqual(self.profile_setting(loaded, "dlpack_device_enum"), "false")
        self.docs[PROFILE]["profile"]["dlpack_device"]["enum"] = True
        loaded = self.assertLoads()
        self.assertTrue(loaded.profile.device_enum)
        self.assertEqual(self.profile_setting(loaded, "dlpack_device_enum"), "true")
        self.docs[PROFILE]["profile"]["dlpack_device"]["enum"] = "yes"
        self.assertRejected(PROFILE, "profile.dlpack_device", "enum", "must be true or false")

    def test_negotiated_is_the_default_written_out(self):
        self.export()["stamp"] = "negotiated"
        self.assertIsNone(self.assertLoads().profile.stamp)

    def test_fixed_stamp(self):
        self.export()["stamp"] = "1.0"
        self.export()["dl_device"]["host_id"] = "zero"
        self.export()["stream"] = "none_only"
        loaded = self.assertLoads()
        self.assertEqual(str(loaded.profile.stamp), "1.0")
        self.assertEqual(self.profile_settings(loaded, "stream", "stamp_fixed", "stamp", "host_id_zero"),
                         ["DLMAP_STREAM_POLICY_NONE_ONLY", "true", "DLMAP_PROFILE_VERSION(1u, 0u)", "true"])

    def test_stamp_must_be_a_version(self):
        self.export()["stamp"] = 1.0
        self.assertRejected(PROFILE, "profile.export", "stamp", "is not a version")

    def test_stamp_must_be_listed(self):
        self.export()["stamp"] = "1.99"
        self.assertRejected(PROFILE, "profile.export", "stamp", "not listed under versions")

    def test_stamp_must_be_versioned(self):
        self.export()["stamp"] = "0.8"
        self.assertRejected(PROFILE, "profile.export", "stamp", "not a versioned DLPack version")

    def test_stamp_newer_minor_than_a_versioned_range_start(self):
        self.export()["stamp"] = "1.1"  # array_api's versioned range starts at 1.0: the same major, readable there
        self.assertEqual(str(self.assertLoads().profile.stamp), "1.1")

    def test_host_id_values(self):
        self.export()["dl_device"]["host_id"] = "one"
        self.assertRejected(PROFILE, "profile.export.dl_device", "host_id", "'one' is not one of any, zero")

    def test_stream_values(self):
        self.export()["stream"] = "none"
        self.assertRejected(PROFILE, "profile.export", "stream", "validate, pass_through, none_only")


class ErrorWhen(SpecTestCase):
    """errors[].when: a profile words when an error happens (the catalogue's `when`, which `dlmap explain` prints)."""

    def errors(self, *entries):
        self.docs[PROFILE]["profile"]["errors"] = list(entries)

    def test_when_replaces_the_catalogues(self):
        self.errors({"id": "stream_invalid", "when": "Whenever the profile says so."})
        loaded = self.assertLoads()
        error = next(e for e in loaded.errors if e.id == "stream_invalid")
        self.assertEqual(error.when, "Whenever the profile says so.")
        self.assertIn('"Whenever the profile says so."', emit.emit_errors(loaded))
        self.assertNotIn("stream_invalid", loaded.profile.error_origins)  # kind, message, status: the catalogue's

    def test_when_must_be_text(self):
        self.errors({"id": "stream_invalid", "when": ""})
        self.assertRejected(PROFILE, "profile.errors[0] (stream_invalid)", "when", "non-empty string")

    def test_an_entry_must_change_something(self):
        self.errors({"id": "stream_invalid"})
        self.assertRejected(PROFILE, "profile.errors[0] (stream_invalid)", None, "kind, message, status or when")


if __name__ == "__main__":
    unittest.main()
