# dlmap codegen tests — spec_names_test: names in the spec mean one thing everywhere (memory kinds, aliases), vendor
# device types, __dlpack_device__ rules that agree with the memory kinds, and the wording of a style mistake.
"""Starts from the real spec (spec_rules_test's SpecTestCase: the default files re-dumped after a small change).

Run by hand:  cd codegen && /usr/bin/python3 -B tests/spec_names_test.py
Under Bazel:  bazel test //codegen/tests:spec_names_test
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from spec_rules_test import SpecTestCase  # noqa: E402  (also puts codegen/ on sys.path)

import emit  # noqa: E402
import emit_docs  # noqa: E402
import spec  # noqa: E402
import spec_rules_test  # noqa: E402

# tests/spec_facts/spec_facts.py, the plain PyYAML reader the tests and the conformance checker use.
sys.path.insert(0, os.path.join(os.path.dirname(spec_rules_test.CODEGEN_DIR), "tests", "spec_facts"))
import spec_facts  # noqa: E402

PROFILE = "profiles/array_api.yaml"


class MemoryKindWords(SpecTestCase):
    """Profile rules match memory by the memory kinds' own word (host_pinned), never a second one (pinned)."""

    def rules(self, *rules):
        self.docs[PROFILE]["profile"]["dlpack_device"]["rules"] = list(rules)

    def test_rules_use_the_memory_kind_word(self):
        self.rules({"platform": "cuda", "memory": "host_pinned", "device_type": "kDLCUDAHost"},
                   {"platform": "cuda", "memory": "other", "device_type": "kDLCUDA"})
        loaded = self.assertLoads()
        self.assertEqual([r.memory for r in loaded.profile.rules], ["host_pinned", "other"])
        rows = emit.emit_profile(loaded)
        self.assertIn("DLMAP_PROFILE_DEVICE_RULE(CUDA, PINNED, 3, OK, _)", rows)  # the C enumerators are unchanged
        self.assertIn("DLMAP_PROFILE_DEVICE_RULE(CUDA, UNPINNED, 2, OK, _)", rows)

    def test_the_old_words_are_refused(self):
        for word in ("pinned", "unpinned"):
            with self.subTest(word):
                self.rules({"platform": "cuda", "memory": word, "device_type": "kDLCUDA"})
                self.assertRejected(PROFILE, "profile.dlpack_device.rules[0]", "memory",
                                    "%r is not one of any, host_pinned, other" % word)

    def test_derived_rules_are_unchanged(self):
        loaded = self.assertLoads()  # array_api: rules: derived
        cuda = [(r.memory, r.device_type) for r in loaded.profile.rules if r.platform == "cuda"]
        self.assertEqual(cuda, [("host_pinned", 3), ("other", 2)])


class RulesAgreeWithMemoryKinds(SpecTestCase):
    """A rule never reports memory as a device type whose memory kind it cannot be."""

    def rule(self, memory, device_type, platform="cuda"):
        self.docs[PROFILE]["profile"]["dlpack_device"]["rules"] = [
            {"platform": platform, "memory": memory, "device_type": device_type}]

    def test_device_memory_as_managed_is_refused(self):
        self.rule("other", "kDLCUDAManaged")
        self.assertRejected(PROFILE, "profile.dlpack_device.rules[0]", "device_type",
                            "kDLCUDAManaged has memory kind managed, which memory 'other' cannot be")

    def test_pinned_memory_as_device_memory_is_refused(self):
        self.rule("host_pinned", "kDLCUDA")
        self.assertRejected(PROFILE, "profile.dlpack_device.rules[0]", "device_type",
                            "kDLCUDA has memory kind device, which memory 'host_pinned' cannot be")

    def test_device_memory_as_pinned_is_refused(self):
        self.rule("other", "kDLCUDAHost")
        self.assertRejected(PROFILE, "profile.dlpack_device.rules[0]", "device_type", "memory kind host_pinned")

    def test_any_never_reports_managed(self):
        self.rule("any", "kDLCUDAManaged")
        self.assertRejected(PROFILE, "profile.dlpack_device.rules[0]", "device_type", "memory kind managed")


class AliasesWhereverNamed(SpecTestCase):
    """A device type is named by enumerator, earlier spelling, alias or value; a platform by name or alias."""

    def test_profile_device_lists_take_aliases_and_spellings(self):
        profile = self.docs[PROFILE]["profile"]
        profile["import"]["accept"] = ["cpu", "kDLGPU", "CUDA_HOST", 13]
        loaded = self.assertLoads()
        accepted = [d.value for d in loaded.profile.devices if d.import_accepted]
        self.assertEqual(accepted, [1, 2, 3, 13])

    def test_unknown_name_is_still_refused(self):
        self.docs[PROFILE]["profile"]["import"]["accept"] = ["cpu", "cpux"]
        self.assertRejected(PROFILE, "profile.import", "accept", "unknown device type 'cpux'")

    def test_rule_platform_and_device_type_by_alias(self):
        self.docs[PROFILE]["profile"]["dlpack_device"]["rules"] = [
            {"platform": "nvidia", "memory": "other", "device_type": "gpu"},
            {"platform": "HIP", "memory": "host_pinned", "device_type": "kDLROCMHost"}]
        rules = self.assertLoads().profile.rules
        self.assertEqual([(r.platform, r.device_type) for r in rules], [("cuda", 2), ("rocm", 11)])

    def test_device_type_platform_by_alias(self):
        self.overlay({"device_types": [{"value": 70000, "name": "kDLAcmeX", "introduced": "vendor",
                                        "platform": "nvidia", "memory": "device", "stream": "opaque",
                                        "doc": "Acme X."}]})
        device = self.assertLoads().device_types[-1]
        self.assertEqual(device.platform, "cuda")
        self.assertIn("DLMAP_DEVICE_TYPE(70000, ACMEX, (), (), \"kDLAcmeX\", CUDA,", emit.emit_device_types(
            self.assertLoads()))


class VendorDeviceTypes(SpecTestCase):
    """`introduced: vendor`: a type in no DLPack release, with a value in the vendor range."""

    def vendor(self, value, **extra):
        entry = {"value": value, "name": "kDLAcmeVPU", "introduced": "vendor", "platform": "none",
                 "memory": "device", "stream": "opaque", "doc": "Acme VPU."}
        entry.update(extra)
        self.overlay({"device_types": [entry]})

    def test_vendor_type_loads_in_every_version(self):
        self.vendor(0x10000)
        loaded = self.assertLoads()
        device = loaded.device_types[-1]
        self.assertTrue(device.vendor)
        self.assertEqual(device.introduced, min(v.version for v in loaded.versions))
        self.assertFalse(any(d.vendor for d in loaded.device_types[:-1]))
        rows = [line for line in emit.emit_device_types(loaded).splitlines() if line.startswith("DLMAP_DEVICE_TYPE(")]
        self.assertTrue(rows[-1].endswith(
            '"Acme VPU.", "", true, _)'))
        self.assertIn("| vendor extension |", emit_docs.emit_docs(loaded)["devices.md"])

    def test_value_outside_the_vendor_range_is_refused(self):
        for value in (200, 65535):
            with self.subTest(value):
                self.overlays = []
                self.vendor(value)
                self.assertRejected("overlay.yaml", "device_types[0] (kDLAcmeVPU)", "value",
                                    "%d is outside the vendor range 65536…2147483647" % value)

    def test_vendor_and_upstream_main_contradict(self):
        self.vendor(0x10001, upstream="main")
        self.assertRejected("overlay.yaml", "device_types[0] (kDLAcmeVPU)", "upstream", "in no DLPack release")

    def test_other_words_are_not_versions(self):
        self.vendor(0x10001, introduced="vendors")
        self.assertRejected("overlay.yaml", "device_types[0] (kDLAcmeVPU)", "introduced", "is not a version")


class PlainReaderAgrees(SpecTestCase):
    """tests/spec_facts reads a vendor type and a platform alias as the generator does."""

    def test_vendor_type_and_platform_alias(self):
        self.overlay({"device_types": [{"value": 0x10002, "name": "kDLAcmeW", "introduced": "vendor",
                                        "platform": "NVIDIA", "memory": "device", "stream": "opaque",
                                        "doc": "Acme W."}]})
        paths = self.write()
        loaded = spec.load(paths)
        facts = spec_facts.read(paths)
        for device, entry in zip(loaded.device_types, facts["device_types"]):
            self.assertEqual((entry["value"], entry["platform"], spec_facts.version(entry["introduced"]),
                              bool(entry.get("vendor"))),
                             (device.value, device.platform, (device.introduced.major, device.introduced.minor),
                              device.vendor))
        self.assertIn("65538 vendor kDLAcmeW", spec_facts.sh(facts, paths))
        self.assertRegex(spec_facts.c_header(facts, paths),
                         r'\{65538, "kDLAcmeW", \{"kDLAcmeW", (NULL, )*NULL\}, \{%d, %d\}, "cuda", "device", "opaque", 0, 1\},'
                         % (loaded.device_types[-1].introduced.major, loaded.device_types[-1].introduced.minor))


class StyleWording(SpecTestCase):

    def test_style_for_another_type_says_both_types(self):
        self.docs[PROFILE]["profile"]["errors"] = [{"id": "max_version_too_old", "message": "below {min_version:packed}"}]
        message = self.assertRejected(PROFILE, "profile.errors[0] (max_version_too_old)", "message")
        self.assertIn("{min_version:packed}: style 'packed' is for ints placeholders, and min_version is of type "
                      "version (styles: tuple for version or device placeholders, packed for ints placeholders, "
                      "major for version placeholders, ", message)
        self.assertNotIn(" a int", message)

    def test_unknown_style(self):
        self.docs[PROFILE]["profile"]["errors"] = [{"id": "max_version_too_old", "message": "{min_version:round}"}]
        self.assertRejected(PROFILE, "profile.errors[0] (max_version_too_old)", "message", "unknown style 'round'")


if __name__ == "__main__":
    unittest.main()
