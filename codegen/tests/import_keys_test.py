# dlmap codegen tests — import_keys_test: the optional import keys of a profile (import.ask, import.legacy_read_only,
# issue 27): their defaults are the behaviour before them, their values reach the profile row, and mistakes are
# SpecErrors naming the key.
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/import_keys_test.py
Under Bazel:  bazel test //codegen/tests:import_keys_test
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import SpecTestCase  # noqa: E402  (also puts codegen/ on sys.path)

import emit  # noqa: E402

PROFILE = "profiles/array_api.yaml"


class ImportAsk(SpecTestCase):

    def imp(self):
        return self.docs[PROFILE]["profile"]["import"]

    def test_defaults_are_todays_behaviour(self):
        loaded = self.assertLoads()
        p = loaded.profile
        self.assertEqual(p.ask_max_version, loaded.abi.current)
        self.assertEqual((p.ask_retry, p.ask_stream, p.legacy_read_only_import), ("any_type_error", True, False))
        self.assertEqual(self.profile_settings(loaded, "ask_max_version", "ask_retry_any_type_error", "ask_stream",
                                               "legacy_import_read_only"),
                         ["DLMAP_PROFILE_VERSION(%du, %du)" % (p.ask_max_version.major, p.ask_max_version.minor),
                          "true", "true", "false"])

    def test_numpy_values_reach_the_row(self):
        self.imp()["ask"] = {"max_version": "1.0", "retry": "when_defaults", "stream": False}
        self.imp()["legacy_read_only"] = True
        loaded = self.assertLoads()
        self.assertEqual(str(loaded.profile.ask_max_version), "1.0")
        self.assertEqual(self.profile_settings(loaded, "ask_max_version", "ask_retry_any_type_error", "ask_stream",
                                               "legacy_import_read_only"),
                         ["DLMAP_PROFILE_VERSION(1u, 0u)", "false", "false", "true"])

    def test_current_is_the_abi_current(self):
        self.imp()["ask"] = {"max_version": "current"}
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.ask_max_version, loaded.abi.current)

    def test_unknown_ask_key(self):
        self.imp()["ask"] = {"max_versions": "1.0"}
        self.assertRejected(PROFILE, "profile.import.ask", None, "unknown key 'max_versions'")

    def test_ask_not_a_mapping(self):
        self.imp()["ask"] = "current"
        self.assertRejected(PROFILE, "profile.import.ask", None, "must be a mapping")

    def test_unknown_retry(self):
        self.imp()["ask"] = {"retry": "never"}
        self.assertRejected(PROFILE, "profile.import.ask", "retry", "'never' is not one of any_type_error, when_defaults")

    def test_retry_list_reaches_the_rows(self):
        self.imp()["ask"] = {"retry": ["max_version", "copy", "dl_device"]}
        loaded = self.assertLoads()
        self.assertEqual((loaded.profile.ask_retry, loaded.profile.ask_retry_drops),
                         ("any_type_error", ("max_version", "copy", "dl_device")))
        rows = [line for line in emit.emit_profile(loaded).splitlines()
                if line.startswith("DLMAP_PROFILE_ASK_RETRY_DROP(")]
        self.assertEqual(rows, ["DLMAP_PROFILE_ASK_RETRY_DROP(MAX_VERSION, _)", "DLMAP_PROFILE_ASK_RETRY_DROP(COPY, _)",
                                "DLMAP_PROFILE_ASK_RETRY_DROP(DL_DEVICE, _)"])

    def test_no_retry_list_by_default(self):
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.ask_retry_drops, ())
        self.assertEqual([line for line in emit.emit_profile(loaded).splitlines()
                          if line.startswith("DLMAP_PROFILE_ASK_RETRY_DROP(")], [])

    def ask_order(self, loaded):
        return [line for line in emit.emit_profile(loaded).splitlines() if line.startswith("DLMAP_PROFILE_ASK_ORDER(")]

    def test_keywords_are_passed_in_the_order_listed(self):
        self.imp()["ask"] = {"keywords": ["dl_device", "copy", "max_version"]}
        self.assertEqual(self.ask_order(self.assertLoads()), [
            "DLMAP_PROFILE_ASK_ORDER(DL_DEVICE, _)", "DLMAP_PROFILE_ASK_ORDER(COPY, _)",
            "DLMAP_PROFILE_ASK_ORDER(MAX_VERSION, _)", "DLMAP_PROFILE_ASK_ORDER(STREAM, _)"])

    def test_default_order(self):
        self.assertEqual(self.ask_order(self.assertLoads()), [
            "DLMAP_PROFILE_ASK_ORDER(MAX_VERSION, _)", "DLMAP_PROFILE_ASK_ORDER(STREAM, _)",
            "DLMAP_PROFILE_ASK_ORDER(DL_DEVICE, _)", "DLMAP_PROFILE_ASK_ORDER(COPY, _)"])

    def test_retry_list_mistakes(self):
        for value, text in [(["copy"], "must list max_version"), (["max_version", "max_version"], "twice"),
                            (["max_version", "device"], "'device' is not one of"), ([1], "list of keyword names")]:
            with self.subTest(value=value):
                self.imp()["ask"] = {"retry": value}
                self.assertRejected(PROFILE, "profile.import.ask", "retry", text)

    def test_max_version_not_listed(self):
        self.imp()["ask"] = {"max_version": "1.9"}
        self.assertRejected(PROFILE, "profile.import.ask", "max_version", "not listed under versions")

    def test_max_version_unquoted(self):
        self.imp()["ask"] = {"max_version": 1.0}
        self.assertRejected(PROFILE, "profile.import.ask", "max_version", "is not a version")

    def test_max_version_below_versioned_abi(self):
        self.imp()["ask"] = {"max_version": "0.8"}
        self.assertRejected(PROFILE, "profile.import.ask", "max_version", "abi.versioned", "import.request: legacy")

    def test_max_version_needs_versioned_first(self):
        self.imp()["request"] = "legacy"
        self.imp()["ask"] = {"max_version": "1.0"}
        self.assertRejected(PROFILE, "profile.import.ask", "max_version", "only a versioned_first request")

    def test_retry_needs_versioned_first(self):
        self.imp()["request"] = "legacy"
        self.imp()["ask"] = {"retry": "when_defaults"}
        self.assertRejected(PROFILE, "profile.import.ask", "retry", "only a versioned_first request")

    def test_stream_with_legacy_request(self):
        self.imp()["request"] = "legacy"
        self.imp()["ask"] = {"stream": False}
        self.assertFalse(self.assertLoads().profile.ask_stream)

    def test_stream_not_a_bool(self):
        self.imp()["ask"] = {"stream": "no"}
        self.assertRejected(PROFILE, "profile.import.ask", "stream", "must be true or false")

    def device_query(self, loaded):
        """import.device_query's two fields: device_query_first, device_report_stream_only."""
        return self.profile_settings(loaded, "device_query_first", "device_report_stream_only")

    def test_device_query_never_reaches_the_row(self):
        self.imp()["ask"] = {"stream": False}
        self.imp()["device_query"] = "never"
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.device_query, "never")
        self.assertEqual(self.device_query(loaded), ["false", "false"])

    def test_device_query_capsule_reaches_the_row(self):
        self.imp()["device_query"] = "capsule"
        self.assertEqual(self.device_query(self.assertLoads()), ["true", "true"])

    def test_device_query_default_first(self):
        self.assertEqual(self.device_query(self.assertLoads()), ["true", "false"])

    def test_device_query_unknown(self):
        self.imp()["device_query"] = "later"
        self.assertRejected(PROFILE, "profile.import", "device_query", "'later' is not one of first, never, capsule")

    def test_device_query_never_needs_no_stream(self):
        self.imp()["device_query"] = "never"
        self.assertRejected(PROFILE, "profile.import", "device_query", "needs import.ask.stream: false")

    def test_legacy_read_only_not_a_bool(self):
        self.imp()["legacy_read_only"] = "yes"
        self.assertRejected(PROFILE, "profile.import", "legacy_read_only", "must be true or false")


class AskKeywords(SpecTestCase):
    """import.ask.keywords: the keywords every versioned call passes (a bit mask in the row: max_version 1, stream 2,
    dl_device 4, copy 8)."""

    def imp(self):
        return self.docs[PROFILE]["profile"]["import"]

    def row(self):
        return self.profile_setting(self.assertLoads(), "ask_keywords")

    def test_default_is_max_version_and_stream(self):
        self.assertEqual(self.row(), "0x3u")

    def test_numpy_keywords_reach_the_row(self):
        self.imp()["ask"] = {"keywords": ["dl_device", "copy", "max_version"]}
        self.assertEqual(self.row(), "0xdu")

    def test_unknown_keyword(self):
        self.imp()["ask"] = {"keywords": ["max_version", "device"]}
        self.assertRejected(PROFILE, "profile.import.ask", "keywords", "'device' is not one of")

    def test_not_a_list(self):
        self.imp()["ask"] = {"keywords": "max_version"}
        self.assertRejected(PROFILE, "profile.import.ask", "keywords", "must be a list")

    def test_twice(self):
        self.imp()["ask"] = {"keywords": ["max_version", "copy", "copy"]}
        self.assertRejected(PROFILE, "profile.import.ask", "keywords", "twice")

    def test_needs_max_version(self):
        self.imp()["ask"] = {"keywords": ["dl_device", "copy"]}
        self.assertRejected(PROFILE, "profile.import.ask", "keywords", "must list max_version")

    def test_needs_versioned_first(self):
        self.imp()["request"] = "legacy"
        self.imp()["ask"] = {"keywords": ["max_version"]}
        self.assertRejected(PROFILE, "profile.import.ask", "keywords", "only a versioned_first request")


class RefusedCapsule(SpecTestCase):

    def imp(self):
        return self.docs[PROFILE]["profile"]["import"]

    def test_leave_reaches_the_row(self):
        self.imp()["refused_capsule"] = "leave"
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.refused_capsule, "leave")
        self.assertEqual(self.profile_setting(loaded, "refused_capsule_left"), "true")

    def test_unknown(self):
        self.imp()["refused_capsule"] = "keep"
        self.assertRejected(PROFILE, "profile.import", "refused_capsule", "'keep' is not one of consume, leave")


if __name__ == "__main__":
    unittest.main()
