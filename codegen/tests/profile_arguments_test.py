# dlmap codegen tests — profile_arguments_test: the profile's `arguments:` section (max_version, dl_device, read_only,
# signature_errors, method_owner, from_dlpack_object), export.max_version.absent_read_only and the plural styles of
# the signature errors ({n:s}, {n:was}) (issue 27): defaults, accepted values, emitted columns, compiled templates and
# every SpecError.
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/profile_arguments_test.py
Under Bazel:  bazel test //codegen/tests:profile_arguments_test
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import SpecTestCase, default_docs  # noqa: E402  (also puts codegen/ on sys.path)

import emit  # noqa: E402

PROFILE = "profiles/array_api.yaml"


class ArgumentsKeys(SpecTestCase):

    def body(self):
        return self.docs[PROFILE]["profile"]

    def major_only_ready(self):
        """array_api made fit for a major-only reading: no error range, bounds of minor 0, a fixed stamp."""
        export = self.body()["export"]
        export["max_version"]["ranges"] = [{"until": "1.0", "struct": "legacy"}, {"struct": "versioned"}]
        export["stamp"] = "1.0"

    def test_defaults_are_todays_behaviour(self):
        loaded = self.assertLoads()
        p = loaded.profile
        self.assertEqual((p.arg_max_version, p.arg_dl_device, p.arg_read_only, p.absent_read_only),
                         ("pair", "pair", "absent", "legacy"))
        self.assertEqual(self.profile_settings(loaded, "max_version_reading", "dl_device_c_ints", "read_only_argument", "absent_read_only_struct"),
                         ["DLMAP_MAX_VERSION_PAIR", "false", "false", "DLMAP_STRUCT_LEGACY"])

    def test_values_reach_the_row(self):
        self.major_only_ready()
        self.body()["arguments"] = {"max_version": "subscript_major", "dl_device": "tuple_c_ints", "read_only": "truth"}
        self.body()["export"]["max_version"]["absent_read_only"] = "versioned"
        loaded = self.assertLoads()
        self.assertEqual(self.profile_settings(loaded, "max_version_reading", "dl_device_c_ints", "read_only_argument", "absent_read_only_struct"),
                         ["DLMAP_MAX_VERSION_SUBSCRIPT_MAJOR", "true", "true", "DLMAP_STRUCT_VERSIONED"])
        self.body()["arguments"] = {"max_version": "tuple_major"}
        self.assertEqual(self.profile_setting(self.assertLoads(), "max_version_reading"),
                         "DLMAP_MAX_VERSION_TUPLE_MAJOR")

    def test_unknown_values_and_keys(self):
        for key, value, allowed in [("max_version", "first", "pair, tuple_major, subscript_major"),
                                    ("dl_device", "ints", "pair, tuple_c_ints"),
                                    ("read_only", "yes", "absent, truth")]:
            with self.subTest(key):
                self.body()["arguments"] = {key: value}
                self.assertRejected(PROFILE, "profile.arguments", key, "is not one of %s" % allowed)
        self.body()["arguments"] = {"copy": "truth"}
        self.assertRejected(PROFILE, "profile.arguments", "copy")
        self.body()["arguments"] = ["max_version"]
        self.assertRejected(PROFILE, "profile.arguments", None, "must be a mapping")

    def test_major_only_needs_bounds_of_minor_zero_no_error_range_and_a_fixed_stamp(self):
        for reading in ("tuple_major", "subscript_major"):
            with self.subTest(reading):
                self.body()["arguments"] = {"max_version": reading}
                # array_api as shipped: an error range until 0.5, and a negotiated stamp
                self.assertRejected(PROFILE, "profile.arguments", "max_version", "until 0.5 has a minor")
                export = self.body()["export"]
                export["max_version"]["ranges"] = [{"until": "1.0", "error": "max_version_too_old"},
                                                   {"struct": "versioned"}]
                self.assertRejected(PROFILE, "profile.arguments", "max_version", "max_version_too_old")
                export["max_version"]["ranges"] = [{"until": "1.0", "struct": "legacy"}, {"struct": "versioned"}]
                self.assertRejected(PROFILE, "profile.arguments", "max_version", "export.stamp")
                export["stamp"] = "1.0"
                self.assertLoads()
                self.docs = default_docs()

    def test_absent_read_only(self):
        w = self.body()["export"]["max_version"]
        w["absent_read_only"] = "legacy"
        self.assertEqual(self.assertLoads().profile.absent_read_only, "legacy")
        w["absent"], w["absent_read_only"] = "versioned", "legacy"
        self.assertRejected(PROFILE, "profile.export.max_version", "absent_read_only", "only versioned")
        w["absent_read_only"] = "none"
        self.assertRejected(PROFILE, "profile.export.max_version", "absent_read_only",
                            "is not one of legacy, versioned")


class SignatureKeys(SpecTestCase):

    def arguments(self):
        return self.docs[PROFILE]["profile"].setdefault("arguments", {})

    def columns(self, loaded):
        return self.profile_settings(loaded, "signature_errors_catalogue", "method_owner", "from_dlpack_object")

    def test_defaults_are_todays_behaviour(self):
        loaded = self.assertLoads()
        self.assertEqual((loaded.profile.signature_errors, loaded.profile.method_owner,
                          loaded.profile.from_dlpack_object), ("builtin", None, "x"))
        self.assertEqual(self.columns(loaded), ["false", "NULL", '"x"'])

    def test_values_reach_the_row(self):
        self.arguments().update({"signature_errors": "catalogue", "method_owner": "Tensor",
                                 "from_dlpack_object": "ext_tensor"})
        self.assertEqual(self.columns(self.assertLoads()), ["true", '"Tensor"', '"ext_tensor"'])

    def test_names_are_identifiers_and_the_owner_needs_the_catalogue(self):
        self.arguments()["from_dlpack_object"] = "no such"
        self.assertRejected(PROFILE, "profile.arguments", "from_dlpack_object", "not a Python identifier")
        self.docs = default_docs()
        self.arguments().update({"signature_errors": "catalogue", "method_owner": "a.b"})
        self.assertRejected(PROFILE, "profile.arguments", "method_owner", "not a Python identifier")
        self.arguments().update({"signature_errors": "builtin", "method_owner": "Tensor"})
        self.assertRejected(PROFILE, "profile.arguments", "method_owner", "needs signature_errors: catalogue")
        self.arguments().update({"signature_errors": "cpython"})
        self.assertRejected(PROFILE, "profile.arguments", "signature_errors", "is not one of builtin, catalogue")

    def test_plural_styles_compile_to_bytes_4_and_5(self):
        loaded = self.assertLoads()
        index = {p.name: chr(p.value + 1) for p in loaded.placeholders}
        error = next(e for e in loaded.errors if e.id == "argument_positional_count")
        self.assertEqual(emit.compiled_message(loaded, error),
                         "\x01%s() takes \x01%s positional argument\x04%s but \x01%s \x05%s given"
                         % (index["function"], index["takes"], index["takes"], index["given"], index["given"]))

    def test_plural_styles_are_for_ints_only(self):
        self.docs[PROFILE]["profile"]["errors"] = [{"id": "argument_keyword_unknown", "message": "{name:s}"}]
        message = self.assertRejected(PROFILE, "profile.errors[0] (argument_keyword_unknown)", "message")
        self.assertIn("{name:s}: style 's' is for int placeholders", message)


if __name__ == "__main__":
    unittest.main()
