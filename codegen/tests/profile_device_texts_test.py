# dlmap codegen tests — profile_device_texts_test: the profile's device_texts, import.device_index and the device
# placeholder's styles ({device:tuple}, {device:text}) (issue 27): defaults, rows, compiled templates, every SpecError.
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/profile_device_texts_test.py
Under Bazel:  bazel test //codegen/tests:profile_device_texts_test
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import SpecTestCase  # noqa: E402  (also puts codegen/ on sys.path)

import emit  # noqa: E402

PROFILE = "profiles/array_api.yaml"


def value_of(loaded, enumerator):
    return next(d.value for d in loaded.device_types if d.name == enumerator)


class DeviceTexts(SpecTestCase):

    def body(self):
        return self.docs[PROFILE]["profile"]

    def text_rows(self, loaded):
        return [line for line in emit.emit_profile(loaded).splitlines()
                if line.startswith("DLMAP_PROFILE_DEVICE_TEXT(")]

    def test_none_by_default(self):
        loaded = self.assertLoads()
        self.assertEqual((loaded.profile.device_texts, self.text_rows(loaded)), ([], []))
        self.assertEqual((loaded.profile.device_index, self.profile_setting(loaded, "device_index_colon")),
                         ("none", "false"))

    def test_rows_in_spec_order_by_any_spelling(self):
        self.body()["device_texts"] = {"kDLCUDA": "cuda:{id}", 1: "cpu"}  # an enumerator, a value
        loaded = self.assertLoads()
        cpu, cuda = value_of(loaded, "kDLCPU"), value_of(loaded, "kDLCUDA")
        self.assertEqual(loaded.profile.device_texts, sorted([(cpu, "cpu"), (cuda, "cuda:{id}")]))
        self.assertEqual(self.text_rows(loaded), ['DLMAP_PROFILE_DEVICE_TEXT(%d, "cpu", _)' % cpu,
                                                  'DLMAP_PROFILE_DEVICE_TEXT(%d, "cuda:{id}", _)' % cuda])

    def test_rejected_texts(self):
        for value, fragment in [({"kDLCPU": "cpu {name}"}, "only braces are {id}"), ({"kDLCPU": ""}, "non-empty"),
                                ({"kDLCPU": 5}, "non-empty"), ({"kDLNoSuch": "x"}, "unknown device type"),
                                ({}, "non-empty mapping"), (["cpu"], "non-empty mapping")]:
            with self.subTest(value=value):
                self.body()["device_texts"] = value
                self.assertRejected(PROFILE, "profile", "device_texts", fragment)

    def test_device_index(self):
        self.body()["import"]["device_index"] = "colon"
        self.assertEqual(self.profile_setting(self.assertLoads(), "device_index_colon"), "true")
        self.body()["import"]["device_index"] = "suffix"
        self.assertRejected(PROFILE, "profile.import", "device_index", "is not one of none, colon")

    def test_device_styles_compile_to_bytes_2_and_6(self):
        self.body()["errors"] = [{"id": "export_copy_to_device_forbidden",
                                  "message": "{source_device:text} {device:tuple} {device}"}]
        loaded = self.assertLoads()
        index = {p.name: chr(p.value + 1) for p in loaded.placeholders}
        error = next(e for e in loaded.errors if e.id == "export_copy_to_device_forbidden")
        self.assertEqual(emit.compiled_message(loaded, error),
                         "\x06%s \x02%s \x01%s" % (index["source_device"], index["device"], index["device"]))

    def test_text_is_for_devices_only(self):
        self.body()["errors"] = [{"id": "ndim_negative", "message": "{ndim:text}"}]
        message = self.assertRejected(PROFILE, "profile.errors[0] (ndim_negative)", "message")
        self.assertIn("{ndim:text}: style 'text' is for device placeholders", message)


if __name__ == "__main__":
    unittest.main()
