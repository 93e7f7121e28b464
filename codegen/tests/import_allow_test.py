# dlmap codegen tests — import_allow_test: the import allow-lists of a profile (import.dtypes with dtype_errors and
# dtype_code_names, import.device_names and _without_type, import.device_tuples, import.unknown_flags; issue 27):
# their defaults are the behaviour before them, their values reach the profile rows, and mistakes are SpecErrors
# naming the key.
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/import_allow_test.py
Under Bazel:  bazel test //codegen/tests:import_allow_test
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import SpecTestCase  # noqa: E402  (also puts codegen/ on sys.path)

import emit  # noqa: E402

PROFILE = "profiles/array_api.yaml"


class ImportAllow(SpecTestCase):

    def imp(self):
        return self.docs[PROFILE]["profile"]["import"]

    def rows(self, loaded, macro):
        return [line for line in emit.emit_profile(loaded).splitlines() if line.startswith(macro + "(")]

    def test_defaults_are_todays_behaviour(self):
        loaded = self.assertLoads()
        p = loaded.profile
        self.assertEqual((p.import_dtypes, p.device_names, p.device_tuples, p.unknown_flags),
                         (None, None, True, "refuse"))
        self.assertEqual(self.profile_settings(loaded, "import_dtypes_listed", "device_names_listed", "device_tuples",
                                               "unknown_flags_ignored"), ["false", "false", "true", "false"])
        self.assertEqual(self.rows(loaded, "DLMAP_PROFILE_IMPORT_DTYPE"), [])
        self.assertEqual(self.rows(loaded, "DLMAP_PROFILE_DEVICE_NAME"), [])

    def test_any_is_the_default(self):
        self.imp()["dtypes"] = "any"
        self.imp()["device_names"] = "any"
        p = self.assertLoads().profile
        self.assertEqual((p.import_dtypes, p.device_names), (None, None))

    def test_numpy_values_reach_the_rows(self):
        self.imp()["dtypes"] = ["bool", "f32", "complex128"]  # names and aliases, in any order
        self.imp()["device_names"] = {"cpu": "kDLCPU"}
        self.imp()["device_tuples"] = False
        self.imp()["unknown_flags"] = "ignore"
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.import_dtypes, [(2, 32, 0), (5, 128, 0), (6, 8, 0)])
        self.assertEqual(self.profile_settings(loaded, "import_dtypes_listed", "device_names_listed", "device_tuples",
                                               "unknown_flags_ignored"), ["true", "true", "false", "true"])
        self.assertEqual(self.rows(loaded, "DLMAP_PROFILE_IMPORT_DTYPE"),
                         ["DLMAP_PROFILE_IMPORT_DTYPE(2u, 32u, 0u, _)", "DLMAP_PROFILE_IMPORT_DTYPE(5u, 128u, 0u, _)",
                          "DLMAP_PROFILE_IMPORT_DTYPE(6u, 8u, 0u, _)"])
        self.assertEqual(self.rows(loaded, "DLMAP_PROFILE_DEVICE_NAME"), ['DLMAP_PROFILE_DEVICE_NAME("cpu", 1, _)'])

    def test_device_name_by_value(self):
        self.imp()["device_names"] = {"host": 1}
        self.assertEqual(self.assertLoads().profile.device_names, [("host", 1)])

    def test_unknown_dtype_name(self):
        self.imp()["dtypes"] = ["float32", "float31"]
        self.assertRejected(PROFILE, "profile.import", "dtypes", "'float31' is not a dtype name")

    def test_dtype_twice(self):
        self.imp()["dtypes"] = ["float32", "f32"]
        self.assertRejected(PROFILE, "profile.import", "dtypes", "'f32' names (code 2, 32 bits) a second time")

    def test_dtypes_empty(self):
        self.imp()["dtypes"] = []
        self.assertRejected(PROFILE, "profile.import", "dtypes", "an empty list")

    def test_dtypes_not_a_list(self):
        self.imp()["dtypes"] = "float32"
        self.assertRejected(PROFILE, "profile.import", "dtypes", "must be 'any' or a non-empty list")

    def test_sub_byte_dtype_with_whole_bytes(self):
        self.imp()["whole_bytes"] = True
        self.imp()["dtypes"] = ["int4"]
        self.assertRejected(PROFILE, "profile.import", "dtypes", "int4 has 4 bits", "import.whole_bytes")

    def test_unknown_device_type(self):
        self.imp()["device_names"] = {"cpu": "kDLNowhere"}
        self.assertRejected(PROFILE, "profile.import", "device_names", "unknown device type 'kDLNowhere'")

    def test_device_name_not_accepted(self):
        self.imp()["accept"] = ["kDLCPU"]
        self.imp()["device_names"] = {"cuda": "kDLCUDA"}
        self.assertRejected(PROFILE, "profile.import", "device_names", "import.accept does not list")

    def test_device_names_not_a_mapping(self):
        self.imp()["device_names"] = ["cpu"]
        self.assertRejected(PROFILE, "profile.import", "device_names", "must be 'any' or a non-empty mapping")

    def test_names_without_type_default_none(self):
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.device_names_without_type, [])
        self.assertEqual(self.rows(loaded, "DLMAP_PROFILE_DEVICE_NAME_WITHOUT_TYPE"), [])

    def test_names_without_type_reach_the_rows(self):
        # "cuda" is also a spec name: the list is read first, so it may name one (a framework's own vocabulary).
        self.imp()["device_names_without_type"] = ["meta", "cuda"]
        loaded = self.assertLoads()
        self.assertEqual(self.rows(loaded, "DLMAP_PROFILE_DEVICE_NAME_WITHOUT_TYPE"),
                         ['DLMAP_PROFILE_DEVICE_NAME_WITHOUT_TYPE("meta", _)',
                          'DLMAP_PROFILE_DEVICE_NAME_WITHOUT_TYPE("cuda", _)'])

    def test_names_without_type_mistakes(self):
        for value, fragment in (([], "an empty list"), ("meta", "must be a non-empty list"),
                                (["meta", ""], "'' is not a name"), (["meta", 3], "3 is not a name"),
                                (["xla", "xla"], "names 'xla' twice")):
            with self.subTest(value=value):
                self.imp()["device_names_without_type"] = value
                self.assertRejected(PROFILE, "profile.import", "device_names_without_type", fragment)

    def test_name_without_type_the_profile_also_maps(self):
        self.imp()["device_names"] = {"cpu": "kDLCPU"}
        self.imp()["device_names_without_type"] = ["cpu"]
        self.assertRejected(PROFILE, "profile.import", "device_names_without_type",
                            "'cpu' is also a name import.device_names maps")

    def test_device_tuples_not_a_bool(self):
        self.imp()["device_tuples"] = "no"
        self.assertRejected(PROFILE, "profile.import", "device_tuples", "must be true or false")

    def test_unknown_flags_word(self):
        self.imp()["unknown_flags"] = "drop"
        self.assertRejected(PROFILE, "profile.import", "unknown_flags", "'drop' is not one of refuse, ignore")


    def test_dtype_with_its_lanes(self):
        self.imp()["dtypes"] = ["float32", {"name": "fp4", "lanes": 2}]
        loaded = self.assertLoads()
        self.assertEqual(loaded.profile.import_dtypes, [(2, 32, 0), (17, 4, 2)])
        self.assertIn("DLMAP_PROFILE_IMPORT_DTYPE(17u, 4u, 2u, _)", self.rows(loaded, "DLMAP_PROFILE_IMPORT_DTYPE"))

    def test_dtype_lanes_of_a_scalar_code(self):
        next(c for c in self.docs["dtypes.yaml"]["dtype_codes"] if c["name"] == "kDLInt")["lanes"] = "scalar"
        self.imp()["dtypes"] = [{"name": "int8", "lanes": 4}]
        self.assertRejected(PROFILE, "profile.import", "dtypes", "int8 has 4 lanes, and its code is scalar")

    def test_dtype_lanes_not_a_count(self):
        for lanes in (0, True, "2", 65536):
            with self.subTest(lanes=lanes):
                self.imp()["dtypes"] = [{"name": "float4_e2m1fn", "lanes": lanes}]
                self.assertRejected(PROFILE, "profile.import", "dtypes", "lanes must be an integer from 1 to 65535")

    def test_dtype_entry_keys(self):
        self.imp()["dtypes"] = [{"name": "float4_e2m1fn", "lanes": 2, "bits": 4}]
        self.assertRejected(PROFILE, "profile.import", "dtypes",
                            "exactly the keys name and lanes, got bits, lanes, name")

    def test_dtype_with_and_without_lanes(self):
        self.imp()["dtypes"] = ["fp4", {"name": "float4_e2m1fn", "lanes": 2}]
        self.assertRejected(PROFILE, "profile.import", "dtypes", "names (code 17, 4 bits) a second time")

    def test_dtype_errors_default_one(self):
        self.imp()["dtypes"] = ["float32"]
        loaded = self.assertLoads()
        self.assertEqual((loaded.profile.dtype_errors, loaded.profile.dtype_code_names), ("one", None))
        self.assertEqual(self.profile_setting(loaded, "dtype_errors_per_field"), "false")
        self.assertEqual(self.rows(loaded, "DLMAP_PROFILE_IMPORT_CODE_NAME"), [])

    def test_dtype_errors_and_code_names_reach_the_rows(self):
        self.imp()["dtypes"] = ["int32", "bfloat16"]
        self.imp()["dtype_errors"] = "per_field"
        self.imp()["dtype_code_names"] = {"kDLBfloat": "kFloat", "kDLInt": "kInt"}
        loaded = self.assertLoads()
        self.assertEqual(self.profile_setting(loaded, "dtype_errors_per_field"), "true")
        self.assertEqual(self.rows(loaded, "DLMAP_PROFILE_IMPORT_CODE_NAME"),
                         ['DLMAP_PROFILE_IMPORT_CODE_NAME(0u, "kInt", _)',
                          'DLMAP_PROFILE_IMPORT_CODE_NAME(4u, "kFloat", _)'])

    def test_dtype_errors_word(self):
        self.imp()["dtypes"] = ["float32"]
        self.imp()["dtype_errors"] = "by_code"
        self.assertRejected(PROFILE, "profile.import", "dtype_errors", "'by_code' is not one of one, per_field")

    def test_dtype_errors_without_dtypes(self):
        self.imp()["dtype_errors"] = "per_field"
        self.assertRejected(PROFILE, "profile.import", "dtype_errors", "'dtypes' is any")

    def test_code_names_unknown_code(self):
        self.imp()["dtypes"] = ["float32"]
        self.imp()["dtype_code_names"] = {"kDLReal": "kReal"}
        self.assertRejected(PROFILE, "profile.import", "dtype_code_names", "'kDLReal' is not a code enumerator")

    def test_code_names_empty_label(self):
        self.imp()["dtypes"] = ["float32"]
        self.imp()["dtype_code_names"] = {"kDLFloat": ""}
        self.assertRejected(PROFILE, "profile.import", "dtype_code_names", "kDLFloat: the label must be")

    def test_code_names_not_a_mapping(self):
        self.imp()["dtypes"] = ["float32"]
        self.imp()["dtype_code_names"] = ["kFloat"]
        self.assertRejected(PROFILE, "profile.import", "dtype_code_names", "non-empty mapping")


if __name__ == "__main__":
    unittest.main()
