# dlmap codegen tests — spec_rules_test: one test per validation rule of spec.load, plus the CLIs' error exits.
"""Each test starts from the real default spec (spec/*.yaml, re-dumped into a temporary directory after a
small mutation, or followed by an overlay file) and asserts that spec.load raises SpecError with a
message naming the file, the entry and the key.

Run by hand:  cd codegen && /usr/bin/python3 -B tests/spec_rules_test.py
Under Bazel:  bazel test //codegen/tests:spec_rules_test
"""

import copy
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CODEGEN_DIR = os.environ.get("DLMAP_CODEGEN_DIR") or os.path.dirname(HERE)
SPEC_DIR = os.environ.get("DLMAP_SPEC_DIR") or os.path.join(os.path.dirname(CODEGEN_DIR), "spec")
TESTDATA = os.path.join(HERE, "testdata")
PYTHON = os.environ.get("DLMAP_PYTHON") or sys.executable or "/usr/bin/python3"
sys.path.insert(0, CODEGEN_DIR)

import emit  # noqa: E402
import spec  # noqa: E402  (the generator's loader, found through CODEGEN_DIR)

# The default spec, in the order //spec:default lists it.
DEFAULT_FILES = ("versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml", "errors.yaml", "released_values.yaml",
                 "profiles/array_api.yaml")

# libyaml's dumper when present (only speed differs); the loader under test is spec.py's own.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_DEFAULT_DOCS = {}


def _dump(data, stream=None):
    return yaml.dump(data, stream, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)


def default_docs():
    """A fresh deep copy of the default spec files as plain YAML data (parsed once per process)."""
    if not _DEFAULT_DOCS:
        for name in DEFAULT_FILES:
            with open(os.path.join(SPEC_DIR, name), encoding="utf-8") as handle:
                _DEFAULT_DOCS[name] = yaml.safe_load(handle)
    return copy.deepcopy(_DEFAULT_DOCS)


def _label(entry):
    """The name _Where shows for an entry: its name, id or version."""
    if not isinstance(entry, dict):
        return None
    name = entry.get("name", entry.get("id", entry.get("version")))
    return name if isinstance(name, str) else None


class SpecTestCase(unittest.TestCase):
    """Holds the default spec as mutable YAML data; write() dumps it (plus overlays) to a temp dir."""

    maxDiff = None

    def profile_setting(self, loaded, field):
        """The C value the emitted DLMAP_PROFILE_SETTING row gives dlmap_profile_info's field `field`."""
        rows = [line for line in emit.emit_profile(loaded).splitlines() if line.startswith("DLMAP_PROFILE_SETTING(")]
        prefix = "DLMAP_PROFILE_SETTING(%s, " % field
        found = [line[len(prefix):-len(", _)")] for line in rows if line.startswith(prefix)]
        self.assertEqual(len(found), 1, "%s: %d rows" % (field, len(found)))
        return found[0]

    def profile_settings(self, loaded, *fields):
        return [self.profile_setting(loaded, f) for f in fields]

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dlmap_spec_rules_")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.docs = default_docs()
        self.overlays = []  # (file name, raw text), read after the default files

    # ---- building the variant ----

    def path(self, name):
        return os.path.join(self.tmp, name)

    def overlay(self, data, name="overlay.yaml"):
        """Appends a file after the default spec: data is a dict (dumped) or raw text / bytes."""
        if isinstance(data, (dict, list)):
            data = _dump(data)
        self.overlays.append((name, data))
        return self.path(name)

    def write(self):
        paths = []
        for name in DEFAULT_FILES:
            if name not in self.docs:
                continue
            os.makedirs(os.path.dirname(self.path(name)), exist_ok=True)
            with open(self.path(name), "w", encoding="utf-8") as handle:
                _dump(self.docs[name], handle)
            paths.append(self.path(name))
        for name, text in self.overlays:
            mode = "wb" if isinstance(text, bytes) else "w"
            with open(self.path(name), mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as handle:
                handle.write(text)
            paths.append(self.path(name))
        return paths

    def load(self):
        return spec.load(self.write())

    def find(self, file, section, name):
        """(index, entry, 'section[index] (name)') of the entry called name in one file's section."""
        for index, entry in enumerate(self.docs[file][section]):
            if _label(entry) == name:
                return index, entry, "%s[%d] (%s)" % (section, index, name)
        raise AssertionError("no %s entry %r in %s" % (section, name, file))

    def entry(self, file, section, name):
        return self.find(file, section, name)[1]

    # ---- assertions ----

    def assertRejected(self, file, entry, key, *fragments):
        """spec.load fails with '<tmp>/<file>: <entry>: …' naming key (a whole word) and each fragment.

        file None means the message starts with 'spec: ' (a rule over all files); entry None means
        the file is followed directly by the message.
        """
        with self.assertRaises(spec.SpecError) as raised:
            self.load()
        message = str(raised.exception)
        prefix = (self.path(file) if file else "spec") + ": " + (entry + ": " if entry else "")
        self.assertTrue(message.startswith(prefix), "message %r does not start with %r" % (message, prefix))
        rest = message[len(prefix):]
        if key is not None:
            self.assertRegex(rest, r"(?<![\w.])%s(?!\w)" % re.escape(key), "key %r not named in %r" % (key, message))
        for fragment in fragments:
            self.assertIn(fragment, message)
        self.assertNotIn("\n", message)
        return message

    def assertLoads(self):
        try:
            return self.load()
        except spec.SpecError as error:  # pragma: no cover - reported as a failure
            self.fail("valid spec rejected: %s" % error)


# ==== whole-spec acceptance ========================================================================

class AcceptedSpecs(SpecTestCase):

    def test_default_spec_loads(self):
        loaded = spec.load([os.path.join(SPEC_DIR, name) for name in DEFAULT_FILES])
        self.assertEqual(len(loaded.device_types), len(self.docs["devices.yaml"]["device_types"]))
        self.assertEqual(len(loaded.dtype_codes), len(self.docs["dtypes.yaml"]["dtype_codes"]))
        self.assertEqual(len(loaded.errors), len(self.docs["errors.yaml"]["errors"]))
        self.assertEqual(loaded.abi.current, loaded.versions[-1].version)
        self.assertIn("cpu", [p.name for p in loaded.platforms])

    def test_redumped_default_spec_loads(self):
        # The fixture itself: the default spec after a YAML round trip is still valid.
        self.assertLoads()

    def test_overlay_adds_device_type(self):
        paths = [os.path.join(SPEC_DIR, name) for name in DEFAULT_FILES]
        overlay = os.path.join(TESTDATA, "overlay_device.yaml")
        loaded = spec.load(paths + [overlay])
        base = spec.load(paths)
        self.assertEqual(len(loaded.device_types), len(base.device_types) + 1)
        added = loaded.device_types[-1]
        self.assertEqual((added.value, added.name, added.platform), (200, "kDLTestDevice", "none"))
        self.assertEqual(loaded.sources, paths + [overlay])

    def test_empty_overlay_file_is_allowed(self):
        self.overlay("# nothing but a comment\n")
        self.assertLoads()

    def test_minimal_fixture_loads(self):
        loaded = spec.load([os.path.join(TESTDATA, "minimal.yaml")])
        self.assertEqual([d.name for d in loaded.device_types], ["kDLCPU", "kDLGPU"])


# ==== reading files ================================================================================

class FileRules(SpecTestCase):

    def test_unreadable_file(self):
        missing = self.path("missing.yaml")
        with self.assertRaises(spec.SpecError) as raised:
            spec.load([missing])
        self.assertTrue(str(raised.exception).startswith(missing + ": cannot read: "), str(raised.exception))

    def test_invalid_yaml_names_line(self):
        self.overlay("device_types:\n  - value: 200\n    name: [unclosed\n    doc: x\n  - }\n")
        self.assertRejected("overlay.yaml", None, "line", "not valid YAML", "line 4 column 8")

    def test_forbidden_character_names_line(self):
        self.overlay("# comment\nflags:\n  - a\n  - b\x07\n")
        self.assertRejected("overlay.yaml", None, "line",
                            "line 4 column 6: not valid YAML: unacceptable character #x0007")

    def test_not_utf8(self):
        self.overlay(b"device_types:\n  - name: caf\xe9\n")
        self.assertRejected("overlay.yaml", None, "UTF-8", "not UTF-8 text", "0xe9")

    def test_unhashable_key_is_a_yaml_error(self):
        self.overlay("device_types:\n  - ? [value]\n    : 200\n")
        self.assertRejected("overlay.yaml", None, "line", "not valid YAML", "unhashable key")

    def test_duplicate_mapping_key(self):
        self.overlay("device_types:\n  - value: 200\n    name: kDLDup\n    value: 201\n")
        self.assertRejected("overlay.yaml", "line 4", "value", "duplicate key 'value' (first at line 2)")

    def test_top_level_not_a_mapping(self):
        self.overlay("- device_types\n- errors\n")
        self.assertRejected("overlay.yaml", None, "top level", "must be a mapping of sections, got a list")

    def test_unknown_section(self):
        self.overlay({"device_type": []})
        self.assertRejected("overlay.yaml", None, "device_type", "unknown section 'device_type'")

    def test_list_section_not_a_list(self):
        self.docs["devices.yaml"]["device_types"] = {"value": 1}
        self.assertRejected("devices.yaml", "device_types", None, "must be a list, got a mapping")

    def test_list_section_empty_value_not_a_list(self):
        self.overlay("flags:\n")
        self.assertRejected("overlay.yaml", "flags", None, "must be a list, got empty")

    def test_mapping_section_not_a_mapping(self):
        self.docs["versions.yaml"]["abi"] = ["1.3"]
        self.assertRejected("versions.yaml", "abi", None, "must be a mapping, got a list")

    def test_mapping_section_in_two_files(self):
        self.overlay({"lookup": dict(self.docs["platforms.yaml"]["lookup"])})
        self.assertRejected("overlay.yaml", "lookup", None,
                            "already defined in %s" % self.path("platforms.yaml"), "one file only")

    def test_missing_list_section(self):
        del self.docs["platforms.yaml"]["memory_kinds"]
        message = self.assertRejected(None, None, "memory_kinds", "section 'memory_kinds' is missing or empty")
        self.assertIn(self.path("platforms.yaml"), message)  # names the files it was given

    def test_empty_list_section(self):
        self.docs["errors.yaml"]["exception_kinds"] = []
        self.assertRejected(None, None, "exception_kinds", "section 'exception_kinds' is missing or empty")

    def test_missing_mapping_section(self):
        del self.docs["platforms.yaml"]["lookup"]
        self.assertRejected(None, None, "lookup", "section 'lookup' is missing")


# ==== entry shape and field types ==================================================================

class FieldRules(SpecTestCase):

    def test_entry_not_a_mapping(self):
        devices = self.docs["devices.yaml"]["device_types"]
        devices.append("kDLNotAMapping")
        self.assertRejected("devices.yaml", "device_types[%d]" % (len(devices) - 1), None,
                            "must be a mapping, got a string")

    def test_unknown_key(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["colour"] = "red"
        self.assertRejected("devices.yaml", where, "colour", "unknown key 'colour' (allowed: value, name,")

    def test_missing_key(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        del e["memory"]
        self.assertRejected("devices.yaml", where, "memory", "missing key 'memory'")

    def test_wrong_type_string(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["doc"] = 5
        self.assertRejected("devices.yaml", where, "doc", "key 'doc' must be a non-empty string, got an integer")

    def test_blank_string(self):
        _, e, where = self.find("platforms.yaml", "memory_kinds", "managed")
        e["doc"] = "   "
        self.assertRejected("platforms.yaml", where, "doc", "key 'doc' must be a non-empty string, got a string")

    def test_wrong_type_int(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["value"] = "11"
        self.assertRejected("devices.yaml", where, "value", "key 'value' must be an integer, got a string")

    def test_wrong_type_int_rejects_bool(self):
        _, e, where = self.find("versions.yaml", "flags", "IS_COPIED")
        e["bit"] = True
        self.assertRejected("versions.yaml", where, "bit", "key 'bit' must be an integer, got a boolean")

    def test_wrong_type_bool(self):
        _, e, where = self.find("platforms.yaml", "memory_kinds", "host_pinned")
        e["host_accessible"] = "true"
        self.assertRejected("platforms.yaml", where, "host_accessible",
                            "key 'host_accessible' must be true or false, got a string")

    def test_wrong_type_list(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["aliases"] = "rocm_host"
        self.assertRejected("devices.yaml", where, "aliases", "key 'aliases' must be a list, got a string")

    def test_list_names_an_item_twice(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["aliases"] = ["rocm_host", "rocm_host"]
        self.assertRejected("devices.yaml", where, "aliases", "key 'aliases' lists a name twice")

    def test_value_not_one_of_choices(self):
        _, e, where = self.find("versions.yaml", "versions", "0.6")
        e["struct"] = "managed"
        self.assertRejected("versions.yaml", where, "struct",
                            "key 'struct': 'managed' is not one of none, legacy, versioned")

    def test_upstream_not_main(self):
        for file, section, name in (("devices.yaml", "device_types", "kDLTPU"),
                                    ("dtypes.yaml", "dtype_codes", "kDLBcomplex")):
            with self.subTest(name=name):
                self.docs = default_docs()
                _, e, where = self.find(file, section, name)
                e["upstream"] = "master"
                self.assertRejected(file, where, "upstream", "key 'upstream': 'master' is not one of main")

    def test_upstream_main_is_loaded(self):
        loaded = self.assertLoads()
        self.assertEqual(next(d for d in loaded.device_types if d.name == "kDLTPU").upstream, "main")
        self.assertEqual(next(d for d in loaded.device_types if d.name == "kDLTrn").upstream, "")
        self.assertEqual(next(c for c in loaded.dtype_codes if c.name == "kDLBcomplex").upstream, "main")

    def test_int_out_of_range(self):
        cases = [("devices.yaml", "device_types", "kDLROCMHost", "value", -1, "-1 is out of range 0…2147483647"),
                 ("devices.yaml", "device_types", "kDLROCMHost", "value", 2**31, "2147483648 is out of range 0…2147483647"),
                 ("versions.yaml", "flags", "IS_COPIED", "bit", 64, "64 is out of range 0…63"),
                 ("dtypes.yaml", "dtype_codes", "kDLBool", "value", 256, "256 is out of range 0…255"),
                 ("errors.yaml", "errors", "dtype_not_in_version", "code", 0, "0 is out of range 1…65535"),
                 ("platforms.yaml", "stream_conventions", "rocm", "handles_above", -2, "-2 is out of range -1…")]
        for file, section, name, key, value, fragment in cases:
            with self.subTest(section=section, key=key, value=value):
                self.setUp()
                _, e, where = self.find(file, section, name)
                e[key] = value
                self.assertRejected(file, where, key, "key '%s': %s" % (key, fragment))

    def test_width_bits_out_of_range(self):
        _, e, _ = self.find("dtypes.yaml", "dtype_codes", "kDLBool")
        e["widths"][0]["bits"] = 0
        index = self.find("dtypes.yaml", "dtype_codes", "kDLBool")[0]
        self.assertRejected("dtypes.yaml", "dtype_codes[%d].widths[0] (kDLBool)" % index, "bits",
                            "key 'bits': 0 is out of range 1…255")

    def test_bad_identifier(self):
        index, e, _ = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["name"] = "kDL-ROCMHost"
        self.assertRejected("devices.yaml", "device_types[%d] (kDL-ROCMHost)" % index, "name",
                            "key 'name': 'kDL-ROCMHost' is not a C identifier")

    def test_bad_c_symbol(self):
        index, e, _ = self.find("platforms.yaml", "platforms", "cuda")
        e["runtime"]["symbols"]["device_count"] = "cuda-get-device-count"
        self.assertRejected("platforms.yaml", "platforms[%d].runtime.symbols (cuda)" % index, "device_count",
                            "'cuda-get-device-count' is not a C symbol")

    def test_bad_word(self):
        index, e, _ = self.find("platforms.yaml", "memory_kinds", "host_pinned")
        e["name"] = "HostPinned"
        self.assertRejected("platforms.yaml", "memory_kinds[%d] (HostPinned)" % index, "name",
                            "key 'name': 'HostPinned' is not a lower-case word")

    def test_bad_lookup_name(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["aliases"] = ["rocm host"]
        self.assertRejected("devices.yaml", where, "aliases", "key 'aliases': 'rocm host' is not a lookup name")

    def test_bad_version_word(self):
        _, e, where = self.find("platforms.yaml", "platforms", "rocm")
        e["version_words"] = ["rocm/hip"]
        self.assertRejected("platforms.yaml", where, "version_words",
                            "key 'version_words': 'rocm/hip' is not a lookup word")

    def test_bad_error_id(self):
        index, e, _ = self.find("errors.yaml", "errors", "dtype_not_in_version")
        e["id"] = "DtypeNotInVersion"
        self.assertRejected("errors.yaml", "errors[%d] (DtypeNotInVersion)" % index, "id",
                            "key 'id': 'DtypeNotInVersion' is not a snake_case id")


# ==== versions and the ABI =========================================================================

class VersionRules(SpecTestCase):

    def test_unquoted_version_is_a_float(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["introduced"] = 1.0  # dumped unquoted, so YAML reads a float back
        self.assertRejected("devices.yaml", where, "introduced",
                            "key 'introduced': 1.0 is not a version; write it quoted as \"major.minor\"")

    def test_unquoted_version_in_versions_list(self):
        index, e, _ = self.find("versions.yaml", "versions", "1.0")
        e["version"] = 1.0
        self.assertRejected("versions.yaml", "versions[%d]" % index, "version", "1.0 is not a version")

    def test_malformed_version(self):
        for text in ("1.3.0", "01.3", "1", "v1.3", "1.30000"):
            with self.subTest(version=text):
                self.setUp()
                _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
                e["introduced"] = text
                self.assertRejected("devices.yaml", where, "introduced", "%r is not a version" % text)

    def test_version_not_listed(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["introduced"] = "0.9"
        self.assertRejected("devices.yaml", where, "introduced",
                            "key 'introduced': version 0.9 is not listed under versions")

    def test_versions_not_increasing(self):
        versions = self.docs["versions.yaml"]["versions"]
        i = self.find("versions.yaml", "versions", "0.3")[0]
        versions[i], versions[i + 1] = versions[i + 1], versions[i]
        self.assertRejected("versions.yaml", "versions[%d] (0.3)" % (i + 1), "versions",
                            "listed oldest first; 0.3 follows 0.4")

    def current(self):
        """abi.current as the YAML says it, and the next minor (never listed)."""
        current = self.docs["versions.yaml"]["abi"]["current"]
        major, minor = current.split(".")
        return current, "%s.%d" % (major, int(minor) + 1)

    def test_versions_duplicate(self):
        versions = self.docs["versions.yaml"]["versions"]
        versions.append(dict(versions[-1]))
        newest = versions[-1]["version"]
        self.assertRejected("versions.yaml", "versions[%d] (%s)" % (len(versions) - 1, newest), "versions",
                            "%s follows %s" % (newest, newest))

    def test_abi_current_not_newest(self):
        newest, _ = self.current()
        self.docs["versions.yaml"]["abi"]["current"] = "1.2"
        self.assertRejected("versions.yaml", "abi", "current",
                            "key 'current': 1.2 is not the newest listed version (%s)" % newest)

    def test_abi_current_not_listed(self):
        _, next_minor = self.current()
        self.docs["versions.yaml"]["abi"]["current"] = next_minor
        self.assertRejected("versions.yaml", "abi", "current", "version %s is not listed under versions" % next_minor)

    def test_abi_until_not_after_introduced(self):
        self.docs["versions.yaml"]["abi"]["legacy"] = {"introduced": "0.5", "until": "0.5"}
        self.assertRejected("versions.yaml", "abi.legacy", "until", "key 'until': 0.5 is not after introduced 0.5")

    def test_abi_until_may_be_unlisted_future_version(self):
        self.docs["versions.yaml"]["abi"]["versioned"]["until"] = "3.0"
        self.assertLoads()

    def test_abi_range_with_wrong_struct(self):
        self.docs["versions.yaml"]["abi"]["legacy"]["introduced"] = "0.1"
        self.assertRejected("versions.yaml", "abi.legacy", "legacy",
                            "versions 0.1 in this range do not use the legacy struct")

    def test_abi_versioned_range_with_wrong_struct(self):
        self.docs["versions.yaml"]["abi"]["versioned"]["introduced"] = "0.8"
        self.docs["versions.yaml"]["abi"]["legacy"]["until"] = "0.8"
        self.assertRejected("versions.yaml", "abi.versioned", "versioned",
                            "versions 0.8 in this range do not use the versioned struct")

    def test_abi_legacy_range_must_precede_versioned(self):
        # A true overlap always puts a listed version in both ranges and trips the struct rule first;
        # the ordering rule fires when the legacy range lies after the versioned one.
        docs = self.docs["versions.yaml"]
        self.entry("versions.yaml", "versions", "1.3")["struct"] = "legacy"
        docs["abi"]["legacy"] = {"introduced": "1.3", "until": "1.4"}
        docs["abi"]["versioned"] = {"introduced": "1.0", "until": "1.3"}
        self.assertRejected("versions.yaml", "abi", "legacy", "the legacy range overlaps the versioned range")

    def test_abi_current_outside_versioned_range(self):
        current, _ = self.current()
        self.docs["versions.yaml"]["abi"]["versioned"]["until"] = current
        self.assertRejected("versions.yaml", "abi", "current", "key 'current': %s is outside the versioned range" % current)

    def test_abi_range_not_a_mapping(self):
        self.docs["versions.yaml"]["abi"]["legacy"] = "0.5-1.0"
        self.assertRejected("versions.yaml", "abi.legacy", None, "must be a mapping, got a string")


# ==== flags and lookup rules =======================================================================

class FlagAndLookupRules(SpecTestCase):

    def test_duplicate_flag_name(self):
        index, e, _ = self.find("versions.yaml", "flags", "IS_COPIED")
        e["name"] = "READ_ONLY"
        first = self.find("versions.yaml", "flags", "READ_ONLY")[2]
        self.assertRejected("versions.yaml", "flags[%d] (READ_ONLY)" % index, "flag name",
                            "duplicate flag name 'READ_ONLY' (already used by %s: %s)" % (self.path("versions.yaml"), first))

    def test_duplicate_flag_bit(self):
        _, e, where = self.find("versions.yaml", "flags", "IS_SUBBYTE_TYPE_PADDED")
        e["bit"] = 1
        self.assertRejected("versions.yaml", where, "bit", "duplicate flag bit 1 (already used by",
                            "(IS_COPIED)")

    def test_bad_case_rule(self):
        self.docs["platforms.yaml"]["lookup"]["dtypes"] = "caseless"
        self.assertRejected("platforms.yaml", "lookup", "dtypes",
                            "key 'dtypes': 'caseless' is not one of sensitive, insensitive")

    def test_lookup_missing_case_rule(self):
        del self.docs["platforms.yaml"]["lookup"]["platform_version"]
        self.assertRejected("platforms.yaml", "lookup", "platform_version", "missing key 'platform_version'")


# ==== platforms, memory kinds, stream conventions ==================================================

class PlatformRules(SpecTestCase):

    def test_duplicate_platform_name(self):
        platforms = self.docs["platforms.yaml"]["platforms"]
        platforms.append({"name": "cuda", "value": len(platforms), "backend": "none", "version_words": [], "doc": "Again."})
        first = self.find("platforms.yaml", "platforms", "cuda")[2]
        self.assertRejected("platforms.yaml", "platforms[%d] (cuda)" % (len(platforms) - 1), "platform lookup name",
                            "duplicate platform lookup name 'cuda' (already used by %s: %s)"
                            % (self.path("platforms.yaml"), first))

    def test_platform_alias_clashes_under_insensitive_rule(self):
        _, e, where = self.find("platforms.yaml", "platforms", "oneapi")
        e["aliases"].append("HIP")
        rocm = self.find("platforms.yaml", "platforms", "rocm")[2]
        self.assertRejected("platforms.yaml", where, "platform lookup name",
                            "duplicate platform lookup name 'HIP' (already used by %s: %s)"
                            % (self.path("platforms.yaml"), rocm))

    def test_platform_alias_case_variant_allowed_under_sensitive_rule(self):
        self.entry("platforms.yaml", "platforms", "oneapi")["aliases"].append("HIP")
        self.docs["platforms.yaml"]["lookup"]["platforms"] = "sensitive"
        self.assertLoads()

    def test_platform_name_clashes_with_alias(self):
        platforms = self.docs["platforms.yaml"]["platforms"]
        platforms.append({"name": "nvidia", "value": len(platforms), "backend": "none", "version_words": [], "doc": "Clash."})
        self.assertRejected("platforms.yaml", "platforms[%d] (nvidia)" % (len(platforms) - 1),
                            "platform lookup name", "duplicate platform lookup name 'nvidia'", "(cuda)")

    def test_duplicate_version_word(self):
        _, e, where = self.find("platforms.yaml", "platforms", "oneapi")
        e["version_words"].append("cuda")
        self.assertRejected("platforms.yaml", where, "version word", "duplicate version word 'cuda'", "(cuda)")

    def test_version_word_prefix_of_another_platforms_word(self):
        _, e, where = self.find("platforms.yaml", "platforms", "oneapi")
        e["version_words"].append("cu")
        self.assertRejected("platforms.yaml", where, "version_words",
                            "version word 'cu' (oneapi) is a prefix of 'cuda' (cuda)")

    def test_version_word_prefix_in_overlay_names_the_overlay(self):
        self.overlay({"platforms": [{"name": "rocmplus", "value": 14, "backend": "none", "version_words": ["rocmplus"],
                                     "doc": "Longer word than rocm's."}]})
        self.assertRejected("overlay.yaml", "platforms[0] (rocmplus)", "version_words",
                            "version word 'rocm' (rocm) is a prefix of 'rocmplus' (rocmplus)")

    def test_version_word_prefix_within_one_platform_allowed(self):
        self.entry("platforms.yaml", "platforms", "cuda")["version_words"].append("cudax")
        self.assertLoads()

    def test_runtime_on_non_gpu_backend(self):
        _, e, where = self.find("platforms.yaml", "platforms", "oneapi")
        e["runtime"] = copy.deepcopy(self.entry("platforms.yaml", "platforms", "cuda")["runtime"])
        self.assertRejected("platforms.yaml", where, "runtime",
                            "key 'runtime': only platforms with backend gpu load a vendor runtime")

    def test_empty_runtime_libraries(self):
        index, e, _ = self.find("platforms.yaml", "platforms", "cuda")
        e["runtime"]["libraries"] = []
        self.assertRejected("platforms.yaml", "platforms[%d].runtime (cuda)" % index, "libraries",
                            "key 'libraries' must name at least one library")

    def test_runtime_missing_key(self):
        index, e, _ = self.find("platforms.yaml", "platforms", "rocm")
        del e["runtime"]["streams"]
        self.assertRejected("platforms.yaml", "platforms[%d].runtime (rocm)" % index, "streams",
                            "missing key 'streams'")

    # ---- the GPU backend's runtime table (platforms[i].runtime) ----

    def runtime(self, name="cuda"):
        """(the runtime mapping of a platform, 'platforms[i].runtime (name)')."""
        index, e, _ = self.find("platforms.yaml", "platforms", name)
        return e["runtime"], "platforms[%d].runtime (%s)" % (index, name)

    def test_runtime_symbols_not_a_mapping(self):
        runtime, where = self.runtime()
        runtime["symbols"] = ["cudaMalloc"]
        self.assertRejected("platforms.yaml", where, "symbols", "must be a mapping of op → C symbol, got a list")

    def test_runtime_symbol_missing_op(self):
        runtime, where = self.runtime("rocm")
        del runtime["symbols"]["error_string"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.symbols"), "error_string",
                            "missing key 'error_string'")

    def test_runtime_symbol_unknown_op(self):
        runtime, where = self.runtime()
        runtime["symbols"]["launch_kernel"] = "cudaLaunchKernel"
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.symbols"), "launch_kernel",
                            "unknown key 'launch_kernel'")

    def test_runtime_toolkit_macro_not_an_identifier(self):
        runtime, where = self.runtime()
        runtime["toolkit"] = {"libdir": "/usr/local/cuda/lib64", "soname": "DLMAP_CUDART_SONAME"}
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.toolkit"), "libdir",
                            "'/usr/local/cuda/lib64' is not a C macro")

    def test_runtime_toolkit_unknown_key(self):
        runtime, where = self.runtime("rocm")
        runtime["toolkit"] = {"libdir": "DLMAP_ROCM_LIBDIR", "soname": "DLMAP_AMDHIP_SONAME", "path": "X"}
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.toolkit"), "path",
                            "unknown key 'path'")

    def test_runtime_symbol_used_for_two_ops(self):
        runtime, where = self.runtime()
        runtime["symbols"]["free_host"] = "cudaFree"
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.symbols"), "free_host",
                            "symbol cudaFree is already the 'free' op")

    def test_runtime_memcpy_kind_missing(self):
        runtime, where = self.runtime()
        del runtime["memcpy_kinds"]["default"]
        self.assertRejected("platforms.yaml", where, "memcpy_kinds", "missing key 'default'")

    def test_runtime_memcpy_kind_unknown(self):
        runtime, where = self.runtime()
        runtime["memcpy_kinds"]["host_to_host"] = 0
        self.assertRejected("platforms.yaml", where, "memcpy_kinds", "unknown key 'host_to_host'")

    def test_runtime_memcpy_kind_not_an_integer(self):
        runtime, where = self.runtime()
        runtime["memcpy_kinds"]["default"] = "4"
        self.assertRejected("platforms.yaml", where, "memcpy_kinds.default", "must be an integer, got a string")

    def test_runtime_memcpy_kinds_share_a_value(self):
        runtime, where = self.runtime()
        runtime["memcpy_kinds"]["default"] = 3
        self.assertRejected("platforms.yaml", where, "memcpy_kinds",
                            "device_to_device and default share the value 3")

    def test_runtime_flag_out_of_range(self):
        runtime, where = self.runtime()
        runtime["flags"]["event_disable_timing"] = -2
        self.assertRejected("platforms.yaml", where, "flags.event_disable_timing", "-2 is out of range 0…4294967295")

    def test_runtime_stream_unknown_meaning(self):
        runtime, where = self.runtime()
        runtime["streams"]["no_sync"] = 0
        self.assertRejected("platforms.yaml", where, "streams",
                            "'no_sync' is not one of legacy_default, per_thread_default, default")

    def test_runtime_stream_handle_missing_for_a_device_types_meaning(self):
        runtime, where = self.runtime()
        del runtime["streams"]["per_thread_default"]
        self.assertRejected("platforms.yaml", where, "streams",
                            "no handle for per_thread_default, which device type kDLCUDA (stream convention cuda) "
                            "can receive")

    def test_runtime_statuses_missing(self):
        runtime, where = self.runtime("rocm")
        del runtime["statuses"]
        self.assertRejected("platforms.yaml", where, "statuses", "missing key 'statuses'")

    def test_runtime_status_not_positive(self):
        runtime, where = self.runtime()
        runtime["statuses"]["invalid_value"] = 0
        self.assertRejected("platforms.yaml", where, "statuses.invalid_value", "0 is out of range 1…2147483647")

    def test_runtime_status_unknown(self):
        runtime, where = self.runtime()
        runtime["statuses"]["not_ready"] = 600
        self.assertRejected("platforms.yaml", where, "statuses", "unknown key 'not_ready' (allowed: invalid_value)")

    def test_runtime_kernels_are_optional(self):
        runtime, _ = self.runtime()
        del runtime["kernels"]
        self.assertLoads()

    def test_runtime_stream_allocator_is_optional(self):
        runtime, _ = self.runtime()
        del runtime["stream_allocator"]
        self.assertLoads()

    def test_runtime_stream_allocator_needs_its_own_entry_points(self):
        runtime, where = self.runtime()
        runtime["stream_allocator"]["free_async"] = runtime["symbols"]["free"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.stream_allocator"), "free_async",
                            "symbol %s is already a runtime op; the stream-ordered pair needs its own entry points"
                            % runtime["symbols"]["free"])

    def test_runtime_stream_allocator_needs_its_release_floor(self):
        runtime, where = self.runtime()
        del runtime["stream_allocator"]["from_version"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.stream_allocator"), "from_version",
                            "missing key 'from_version'")

    def test_runtime_stream_pools_are_optional(self):
        runtime, _ = self.runtime()
        del runtime["stream_allocator"]["pools"]
        self.assertLoads()

    def test_runtime_stream_pools_need_their_own_entry_points(self):
        runtime, where = self.runtime()
        pools = runtime["stream_allocator"]["pools"]
        pools["malloc_from_pool"] = runtime["stream_allocator"]["malloc_async"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.stream_allocator.pools"),
                            "malloc_from_pool", "symbol %s is already a runtime op; the pools need their own entry "
                            "points" % runtime["stream_allocator"]["malloc_async"])

    def test_runtime_stream_pools_serve_listed_memory_kinds_other_than_device(self):
        for kind in ("device", "tape"):
            runtime, where = self.runtime()
            memory = runtime["stream_allocator"]["pools"]["memory"]
            memory[kind] = {"location": 1, "allocation": 1, "grant_devices": False}
            self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.stream_allocator.pools"),
                                "memory", "'%s' is not a listed memory kind other than device" % kind)
            del memory[kind]

    def test_runtime_stream_pool_says_whether_devices_are_granted(self):
        runtime, where = self.runtime()
        del runtime["stream_allocator"]["pools"]["memory"]["host_pinned"]["grant_devices"]
        self.assertRejected("platforms.yaml",
                            where.replace(".runtime", ".runtime.stream_allocator.pools.memory.host_pinned"),
                            "grant_devices", "missing key 'grant_devices'")

    def test_runtime_kernels_need_ptx_or_a_compiler(self):
        runtime, where = self.runtime("rocm")
        del runtime["kernels"]["compiler"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels"), None,
                            "gives the kernels no code: give ptx its floor or name a compiler")

    def test_runtime_kernels_ptx_is_false_or_a_floor(self):
        for value in ("yes", True, {"isa": "7.0"}):
            runtime, where = self.runtime()
            runtime["kernels"]["ptx"] = value
            self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels"), "ptx",
                                "key 'ptx' must be false or a mapping with exactly the keys isa, targets, "
                                "driver_version, driver_isa")

    def test_runtime_kernels_ptx_isa_is_a_version(self):
        runtime, where = self.runtime()
        runtime["kernels"]["ptx"]["isa"] = 7.0
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels.ptx"), "isa",
                            "key 'isa' must be a version string \"M.N\" (quoted), got 7.0")

    def test_runtime_kernels_ptx_targets_ascend(self):
        runtime, where = self.runtime()
        runtime["kernels"]["ptx"]["targets"] = ["sm_90", "sm_75"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels.ptx"), "targets",
                            "sm_90, sm_75 is not ascending without repeats")

    def test_runtime_kernels_ptx_releases_oldest_first(self):
        runtime, where = self.runtime()
        table = runtime["kernels"]["ptx"]["driver_isa"]
        table[0], table[1] = table[1], table[0]
        self.assertRejected("platforms.yaml", where.replace(".runtime (", ".runtime.kernels.ptx.driver_isa[1] ("), None,
                            "release 11.0 (11000) does not follow 11.1 (11010); list releases oldest first")

    def test_runtime_kernels_ptx_isa_never_falls(self):
        runtime, where = self.runtime()
        table = runtime["kernels"]["ptx"]["driver_isa"]
        table[-1]["isa"] = "7.0"
        self.assertRejected("platforms.yaml", where.replace(".runtime (", ".runtime.kernels.ptx.driver_isa[%d] (" %
                                                            (len(table) - 1)), None,
                            "a newer driver JIT-compiles every ISA an older one does")

    def test_runtime_kernels_ptx_floor_some_driver_loads(self):
        runtime, where = self.runtime()
        runtime["kernels"]["ptx"]["isa"] = "9.9"
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels.ptx"), "isa",
                            "no release in driver_isa JIT-compiles ISA 9.9")

    def test_runtime_kernels_ptx_needs_the_driver_library(self):
        runtime, where = self.runtime()
        del runtime["kernels"]["library"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels"), "library",
                            "key 'ptx' needs key 'library'")

    def test_runtime_kernels_missing_launch(self):
        runtime, where = self.runtime()
        del runtime["kernels"]["symbols"]["launch_kernel"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels.symbols"), "launch_kernel",
                            "missing key 'launch_kernel'")

    def test_runtime_kernels_compiler_one_symbol_for_two_ops(self):
        runtime, where = self.runtime("rocm")
        symbols = runtime["kernels"]["compiler"]["symbols"]
        symbols["code"] = symbols["code_size"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels.compiler.symbols"), "code",
                            "symbol hiprtcGetCodeSize is already the 'code_size' op")

    def test_runtime_kernels_compiler_needs_a_library(self):
        runtime, where = self.runtime("rocm")
        runtime["kernels"]["compiler"]["libraries"] = []
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.kernels.compiler"), "libraries",
                            "key 'libraries' must name at least one library")

    def test_runtime_context_is_optional(self):
        runtime, _ = self.runtime()
        del runtime["context"]
        self.assertLoads()

    def test_runtime_context_missing_op(self):
        runtime, where = self.runtime()
        del runtime["context"]["set_current"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.context"), "set_current",
                            "missing key 'set_current'")

    def test_runtime_context_symbol_not_an_identifier(self):
        runtime, where = self.runtime()
        runtime["context"]["get_current"] = "cuCtxGetCurrent()"
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.context"), "get_current",
                            "'cuCtxGetCurrent()' is not a C symbol")

    def test_runtime_context_one_symbol_for_both_ops(self):
        runtime, where = self.runtime()
        runtime["context"]["set_current"] = runtime["context"]["get_current"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.context"), "set_current",
                            "symbol cuCtxGetCurrent is already the 'get_current' op")

    def test_runtime_context_retain_primary_needs_its_own_symbol(self):
        runtime, where = self.runtime()
        runtime["context"]["retain_primary"] = runtime["context"]["set_current"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.context"), "retain_primary",
                            "symbol cuCtxSetCurrent is already the 'set_current' op")

    def test_runtime_context_missing_retain_primary(self):
        runtime, where = self.runtime()
        del runtime["context"]["retain_primary"]
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.context"), "retain_primary",
                            "missing key 'retain_primary'")

    def test_runtime_pointer_attributes_unknown_key(self):
        runtime, where = self.runtime()
        runtime["pointer_attributes"]["size"] = 24
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.pointer_attributes"), "size",
                            "unknown key 'size'")

    def test_runtime_pointer_offset_overlaps_memory_type(self):
        runtime, where = self.runtime()
        runtime["pointer_attributes"]["device_offset"] = 2
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.pointer_attributes"),
                            "device_offset", "2 is out of range 4…252")

    def test_runtime_pointer_offset_past_the_buffer(self):
        runtime, where = self.runtime()
        runtime["pointer_attributes"]["device_pointer_offset"] = 250
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.pointer_attributes"),
                            "device_pointer_offset", "250 is out of range 4…248")

    def test_runtime_pointer_fields_overlap(self):
        runtime, where = self.runtime("rocm")
        runtime["pointer_attributes"]["managed_offset"] = 12
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.pointer_attributes"),
                            "managed_offset", "bytes 12… overlap the field 'device_pointer_offset'")

    def test_runtime_layouts_empty(self):
        runtime, where = self.runtime()
        runtime["pointer_attributes"]["layouts"] = []
        self.assertRejected("platforms.yaml", where.replace(".runtime", ".runtime.pointer_attributes"), "layouts",
                            "must be a non-empty list")

    def test_runtime_layouts_not_oldest_first(self):
        runtime, where = self.runtime("rocm")
        runtime["pointer_attributes"]["layouts"].reverse()
        self.assertRejected("platforms.yaml", where.replace(".runtime (", ".runtime.pointer_attributes.layouts[1] ("),
                            "from_version", "0 does not follow 60000000; list layouts oldest first")

    def test_runtime_layout_unknown_memory_kind(self):
        runtime, where = self.runtime()
        runtime["pointer_attributes"]["layouts"][0]["memory_types"]["unified"] = 4
        self.assertRejected("platforms.yaml", where.replace(".runtime (", ".runtime.pointer_attributes.layouts[0] ("),
                            "memory_types", "unknown memory kind 'unified'")

    def test_runtime_layout_memory_kinds_share_a_value(self):
        runtime, where = self.runtime()
        runtime["pointer_attributes"]["layouts"][0]["memory_types"]["managed"] = 2
        self.assertRejected("platforms.yaml", where.replace(".runtime (", ".runtime.pointer_attributes.layouts[0] ("),
                            "memory_types", "device and managed share the value 2")

    def test_runtime_layout_without_memory_types(self):
        runtime, where = self.runtime()
        runtime["pointer_attributes"]["layouts"][0]["memory_types"] = {}
        self.assertRejected("platforms.yaml", where.replace(".runtime (", ".runtime.pointer_attributes.layouts[0] ("),
                            "memory_types", "must map at least one memory kind")

    def test_bad_backend(self):
        _, e, where = self.find("platforms.yaml", "platforms", "metal")
        e["backend"] = "metal"
        self.assertRejected("platforms.yaml", where, "backend", "key 'backend': 'metal' is not one of cpu, gpu, none")

    def test_missing_cpu_platform(self):
        platforms = self.docs["platforms.yaml"]["platforms"]
        index = self.find("platforms.yaml", "platforms", "cpu")[0]
        del platforms[index]
        self.assertRejected(None, "platforms", "cpu", "the cpu platform is required")

    def test_duplicate_memory_kind(self):
        kinds = self.docs["platforms.yaml"]["memory_kinds"]
        kinds.append({"name": "managed", "value": len(kinds), "host_accessible": False, "doc": "Again."})
        self.assertRejected("platforms.yaml", "memory_kinds[%d] (managed)" % (len(kinds) - 1), "memory kind",
                            "duplicate memory kind 'managed'")

    def test_duplicate_stream_convention(self):
        conventions = self.docs["platforms.yaml"]["stream_conventions"]
        conventions.append({"name": "rocm", "value": len(conventions), "absent": "default", "handles_above": None, "rule": "Again."})
        self.assertRejected("platforms.yaml", "stream_conventions[%d] (rocm)" % (len(conventions) - 1),
                            "stream convention", "duplicate stream convention 'rocm'")


class StreamConventionRules(SpecTestCase):

    def test_values_bad_meaning(self):
        for meaning in ("handle", "sometimes"):
            with self.subTest(meaning=meaning):
                self.setUp()
                _, e, where = self.find("platforms.yaml", "stream_conventions", "cuda")
                e["values"][0] = meaning
                self.assertRejected("platforms.yaml", where, "values",
                                    "key 'values': %r is not one of legacy_default, per_thread_default, default, "
                                    "no_sync, host_sync, invalid" % meaning)

    def test_values_non_int_key(self):
        for key, shown in (("1", "'1'"), (-2, "-2"), (True, "True"), (1.5, "1.5")):
            with self.subTest(key=key):
                self.setUp()
                _, e, where = self.find("platforms.yaml", "stream_conventions", "rocm")
                e["values"][key] = "default"
                self.assertRejected("platforms.yaml", where, "values",
                                    "key 'values': %s is not an integer of -1 or more" % shown)

    def test_values_not_a_mapping(self):
        _, e, where = self.find("platforms.yaml", "stream_conventions", "rocm")
        e["values"] = [-1, 0]
        self.assertRejected("platforms.yaml", where, "values", "key 'values' must be a mapping of integer")

    def test_value_above_handles_above(self):
        _, e, where = self.find("platforms.yaml", "stream_conventions", "rocm")
        e["values"][3] = "default"
        self.assertRejected("platforms.yaml", where, "values", "key 'values': [3] lie above handles_above (2)")

    def test_values_allowed_anywhere_without_handles(self):
        e = self.entry("platforms.yaml", "stream_conventions", "none")
        e["values"] = {7: "invalid"}
        self.assertLoads()

    def test_bad_absent(self):
        for absent in ("handle", "invalid", "never"):
            with self.subTest(absent=absent):
                self.setUp()
                _, e, where = self.find("platforms.yaml", "stream_conventions", "opaque")
                e["absent"] = absent
                self.assertRejected("platforms.yaml", where, "absent",
                                    "key 'absent': %r is not one of legacy_default, per_thread_default, default, "
                                    "no_sync, host_sync" % absent)


# ==== device types =================================================================================

class DeviceTypeRules(SpecTestCase):

    def test_duplicate_value(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["value"] = 10
        rocm = self.find("devices.yaml", "device_types", "kDLROCM")[2]
        self.assertRejected("devices.yaml", where, "value",
                            "duplicate device type value 10 (already used by %s: %s)" % (self.path("devices.yaml"), rocm))

    def test_alias_on_two_device_types(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["aliases"].append("cuda")
        cuda = self.find("devices.yaml", "device_types", "kDLCUDA")[2]
        self.assertRejected("devices.yaml", where, "lookup name",
                            "duplicate device type lookup name 'cuda' (already used by %s: %s)"
                            % (self.path("devices.yaml"), cuda))

    def test_alias_case_clash_under_insensitive_rule(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["aliases"].append("CUDA")
        self.assertRejected("devices.yaml", where, "lookup name", "duplicate device type lookup name 'CUDA'",
                            "(kDLCUDA)")

    def test_alias_case_variant_allowed_under_sensitive_rule(self):
        self.entry("devices.yaml", "device_types", "kDLROCMHost")["aliases"].append("CUDA")
        self.docs["platforms.yaml"]["lookup"]["device_types"] = "sensitive"
        self.assertLoads()

    def test_spelling_clashes_with_other_name(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["spellings"] = ["kDLGPU"]
        self.assertRejected("devices.yaml", where, "lookup name", "duplicate device type lookup name 'kDLGPU'",
                            "(kDLCUDA)")

    def test_overlay_entry_clashes_with_default(self):
        self.overlay({"device_types": [{"value": 200, "name": "kDLTestDevice", "aliases": ["rocm"],
                                        "introduced": "1.3", "platform": "none", "memory": "device",
                                        "stream": "opaque", "doc": "Clash."}]})
        rocm = self.find("devices.yaml", "device_types", "kDLROCM")[2]
        self.assertRejected("overlay.yaml", "device_types[0] (kDLTestDevice)", "lookup name",
                            "duplicate device type lookup name 'rocm' (already used by %s: %s)"
                            % (self.path("devices.yaml"), rocm))

    def test_duplicate_c_enumerator(self):
        # Under the sensitive rule kDLRocmHost is a new name, but its enumerator ROCMHOST is taken.
        self.docs["platforms.yaml"]["lookup"]["device_types"] = "sensitive"
        devices = self.docs["devices.yaml"]["device_types"]
        devices.append({"value": 200, "name": "kDLRocmHost", "introduced": "1.3", "platform": "rocm",
                        "memory": "host_pinned", "stream": "none", "doc": "Clash."})
        self.assertRejected("devices.yaml", "device_types[%d] (kDLRocmHost)" % (len(devices) - 1), "C enumerator",
                            "duplicate C enumerator 'ROCMHOST'", "(kDLROCMHost)")

    def test_dangling_platform(self):
        index, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["platform"] = "rcom"
        message = self.assertRejected("devices.yaml", where, "platform", "unknown platform 'rcom'")
        self.assertEqual(message, "%s: device_types[%d] (kDLROCMHost): unknown platform 'rcom'"
                         % (self.path("devices.yaml"), index))

    def test_dangling_memory(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["memory"] = "pinned"
        self.assertRejected("devices.yaml", where, "memory", "unknown memory kind 'pinned'")

    def test_dangling_stream(self):
        _, e, where = self.find("devices.yaml", "device_types", "kDLROCMHost")
        e["stream"] = "hip"
        self.assertRejected("devices.yaml", where, "stream", "unknown stream convention 'hip'")


# ==== data type codes ==============================================================================

class DtypeRules(SpecTestCase):

    def width_where(self, code, j):
        index = self.find("dtypes.yaml", "dtype_codes", code)[0]
        return "dtype_codes[%d].widths[%d] (%s)" % (index, j, code)

    def test_duplicate_code(self):
        _, e, where = self.find("dtypes.yaml", "dtype_codes", "kDLUInt")
        e["value"] = 0
        self.assertRejected("dtypes.yaml", where, "dtype code", "duplicate dtype code 0", "(kDLInt)")

    def test_duplicate_c_enumerator(self):
        codes = self.docs["dtypes.yaml"]["dtype_codes"]
        codes.append({"value": 200, "name": "kDLINT", "introduced": "1.3", "lanes": "vector", "widths": [],
                      "doc": "Clash."})
        self.assertRejected("dtypes.yaml", "dtype_codes[%d] (kDLINT)" % (len(codes) - 1), "C enumerator",
                            "duplicate C enumerator 'INT'", "(kDLInt)")

    def test_duplicate_width_bits(self):
        e = self.entry("dtypes.yaml", "dtype_codes", "kDLInt")
        e["widths"].append({"bits": 8})
        self.assertRejected("dtypes.yaml", self.width_where("kDLInt", len(e["widths"]) - 1), "width",
                            "duplicate width '8 bits'")

    def test_width_introduced_before_code(self):
        e = self.entry("dtypes.yaml", "dtype_codes", "kDLBool")
        e["widths"][0]["introduced"] = "0.7"
        self.assertRejected("dtypes.yaml", self.width_where("kDLBool", 0), "introduced",
                            "key 'introduced': 0.7 is before the code itself (0.8)")

    def test_width_aliases_without_name(self):
        e = self.entry("dtypes.yaml", "dtype_codes", "kDLInt")
        e["widths"].append({"bits": 128, "aliases": ["i128"]})
        self.assertRejected("dtypes.yaml", self.width_where("kDLInt", len(e["widths"]) - 1), "aliases",
                            "key 'aliases' needs a 'name'")

    def test_duplicate_dtype_name(self):
        e = self.entry("dtypes.yaml", "dtype_codes", "kDLUInt")
        e["widths"][-1]["aliases"].append("i64")
        self.assertRejected("dtypes.yaml", self.width_where("kDLUInt", len(e["widths"]) - 1), "lookup name",
                            "duplicate dtype lookup name 'i64' (already used by", "(kDLInt)")

    def test_dtype_name_case_clash_under_insensitive_rule(self):
        e = self.entry("dtypes.yaml", "dtype_codes", "kDLFloat")
        e["widths"][2]["aliases"].append("F32")
        self.assertRejected("dtypes.yaml", self.width_where("kDLFloat", 2), "lookup name",
                            "duplicate dtype lookup name 'F32'")

    def test_widths_not_a_list(self):
        _, e, where = self.find("dtypes.yaml", "dtype_codes", "kDLBool")
        e["widths"] = {"bits": 8}
        self.assertRejected("dtypes.yaml", where, "widths", "key 'widths' must be a list, got a mapping")

    def test_width_unknown_key(self):
        e = self.entry("dtypes.yaml", "dtype_codes", "kDLBool")
        e["widths"][0]["lanes"] = 1
        self.assertRejected("dtypes.yaml", self.width_where("kDLBool", 0), "lanes", "unknown key 'lanes'")

    def test_bad_lanes(self):
        _, e, where = self.find("dtypes.yaml", "dtype_codes", "kDLBool")
        e["lanes"] = "packed"
        self.assertRejected("dtypes.yaml", where, "lanes", "key 'lanes': 'packed' is not one of vector, scalar")


# ==== error catalogue ==============================================================================

class ErrorCatalogueRules(SpecTestCase):

    def add_placeholders(self, count):
        placeholders = self.docs["errors.yaml"]["placeholders"]
        for i in range(count):
            placeholders.append({"name": "extra_%d" % i, "value": len(placeholders), "type": "int", "doc": "Filler."})
        return placeholders

    def test_duplicate_exception_kind(self):
        kinds = self.docs["errors.yaml"]["exception_kinds"]
        kinds.append({"name": "TypeError", "value": len(kinds), "doc": "Again."})
        self.assertRejected("errors.yaml", "exception_kinds[%d] (TypeError)" % (len(kinds) - 1), "exception kind",
                            "duplicate exception kind 'TypeError'")

    def test_names_reserved_for_table_sizes(self):
        # Each would generate a second DLMAP_*_COUNT and C that does not compile.
        cases = [("placeholders", {"name": "count", "type": "int", "doc": "x"}, "placeholder", "COUNT"),
                 ("exception_kinds", {"name": "Count", "doc": "x"}, "exception kind", "COUNT")]
        for section, entry, what, c_name in cases:
            with self.subTest(section=section):
                entry["value"] = len(self.docs["errors.yaml"][section])
                self.docs["errors.yaml"][section].append(entry)
                index = len(self.docs["errors.yaml"][section]) - 1
                self.assertRejected("errors.yaml", "%s[%d] (%s)" % (section, index, entry["name"]), None,
                                    "the %s name gives the C name %s, which dlmap reserves" % (what, c_name))
                self.docs["errors.yaml"][section].pop()
        devices = self.docs["devices.yaml"]["device_types"]
        devices.append(dict(devices[0], value=300, name="kDLType_Count", spellings=[], aliases=[]))
        self.assertRejected("devices.yaml", "device_types[%d] (kDLType_Count)" % (len(devices) - 1), None,
                            "gives the C name TYPE_COUNT")

    def test_exception_kinds_with_the_same_enumerator(self):
        kinds = self.docs["errors.yaml"]["exception_kinds"]
        kinds.append({"name": "Buffer_Error", "value": len(kinds), "doc": "x"})
        self.assertRejected("errors.yaml", "exception_kinds[%d] (Buffer_Error)" % (len(kinds) - 1), None,
                            "duplicate C enumerator 'DLMAP_KIND_BUFFER_ERROR'")

    def test_placeholder_bad_type(self):
        _, e, where = self.find("errors.yaml", "placeholders", "bits")
        e["type"] = "float"
        self.assertRejected("errors.yaml", where, "type",
                            "key 'type': 'float' is not one of int, uint, hex, ptr, str, version, ints")

    def test_duplicate_placeholder(self):
        placeholders = self.docs["errors.yaml"]["placeholders"]
        placeholders.append({"name": "ndim", "value": len(placeholders), "type": "int", "doc": "Again."})
        self.assertRejected("errors.yaml", "placeholders[%d] (ndim)" % (len(placeholders) - 1), "placeholder",
                            "duplicate placeholder 'ndim'")

    def test_more_than_64_placeholders(self):
        existing = len(self.docs["errors.yaml"]["placeholders"])
        self.assertLess(existing, 64)
        self.add_placeholders(65 - existing)
        self.assertRejected("errors.yaml", "placeholders[64] (extra_%d)" % (64 - existing), "placeholders",
                            "more than 64 placeholders")

    def test_exactly_64_placeholders_allowed(self):
        self.add_placeholders(64 - len(self.docs["errors.yaml"]["placeholders"]))
        self.assertEqual(len(self.assertLoads().placeholders), 64)

    def test_duplicate_error_id(self):
        _, e, where = self.find("errors.yaml", "errors", "dtype_not_in_version")
        e["id"] = "device_type_not_in_version"
        index = self.find("errors.yaml", "errors", "device_type_not_in_version")[0]
        self.assertRejected("errors.yaml", where.replace("dtype_not_in_version", "device_type_not_in_version"),
                            "error id", "duplicate error id 'device_type_not_in_version'",
                            "errors[%d] (device_type_not_in_version)" % index)

    def test_duplicate_error_code(self):
        _, e, where = self.find("errors.yaml", "errors", "dtype_not_in_version")
        e["code"] = 101
        self.assertRejected("errors.yaml", where, "error code", "duplicate error code 101", "(max_version_too_old)")

    def test_unknown_kind(self):
        _, e, where = self.find("errors.yaml", "errors", "dtype_not_in_version")
        e["kind"] = "KeyError"
        self.assertRejected("errors.yaml", where, "kind", "key 'kind': unknown exception kind 'KeyError'")

    def test_args_name_undeclared_placeholder(self):
        _, e, where = self.find("errors.yaml", "errors", "dtype_not_in_version")
        e["args"].append("colour")
        self.assertRejected("errors.yaml", where, "args", "key 'args': 'colour' is not a declared placeholder")

    def test_message_placeholder_not_in_args(self):
        _, e, where = self.find("errors.yaml", "errors", "max_version_too_old")
        e["message"] += " Asked for {dtype}."
        self.assertRejected("errors.yaml", where, "message",
                            "key 'message': placeholder {dtype} is not supplied by the C side for this error "
                            "(args: min_version, max_version)")

    def test_message_placeholder_without_args(self):
        _, e, where = self.find("errors.yaml", "errors", "read_only_needs_versioned")
        self.assertNotIn("args", e)
        e["message"] = "Needs {version}."
        self.assertRejected("errors.yaml", where, "message", "placeholder {version} is not supplied", "(args: none)")

    def test_unbalanced_open_brace(self):
        for message, at in (("Oops {min_version", 5), ("Oops {a{max_version}", 5), ("{", 0)):
            with self.subTest(message=message):
                self.setUp()
                _, e, where = self.find("errors.yaml", "errors", "max_version_too_old")
                e["message"] = message
                self.assertRejected("errors.yaml", where, "message",
                                    "key 'message': unbalanced '{' at character %d (write '{{'" % at)

    def test_unbalanced_close_brace(self):
        for message, at in (("Oops } here", 5), ("{{x}", 3), ("{max_version}}", 13)):
            with self.subTest(message=message):
                self.setUp()
                _, e, where = self.find("errors.yaml", "errors", "max_version_too_old")
                e["message"] = message
                self.assertRejected("errors.yaml", where, "message",
                                    "key 'message': unbalanced '}' at character %d (write '}}'" % at)

    def test_literal_braces_accepted(self):
        e = self.entry("errors.yaml", "errors", "max_version_too_old")
        e["message"] = "Use {{min_version}} = {min_version}; {{}} {max_version}}}}}"
        loaded = self.assertLoads()
        error = [x for x in loaded.errors if x.id == "max_version_too_old"][0]
        self.assertEqual(error.parts, ["Use {min_version} = ", "min_version", "; {} ", "max_version", "}}"])

    def test_related_unknown_id(self):
        _, e, where = self.find("errors.yaml", "errors", "dtype_not_in_version")
        e["related"].append("no_such_error")
        self.assertRejected("errors.yaml", where, "related", "key 'related': unknown error id 'no_such_error'")

    def test_related_to_itself(self):
        _, e, where = self.find("errors.yaml", "errors", "dtype_not_in_version")
        e["related"].append("dtype_not_in_version")
        self.assertRejected("errors.yaml", where, "related", "key 'related': an error cannot be related to itself")

    def test_related_may_point_forward_and_into_overlay(self):
        self.entry("errors.yaml", "errors", "dtype_not_in_version")["related"].append("overlay_error")
        self.overlay({"errors": [{"id": "overlay_error", "code": 60000, "kind": "ValueError", "message": "Late.",
                                  "meaning": "m", "when": "w", "fix": "f"}]})
        self.assertLoads()


# ==== overrides (an overlay editing entries of earlier files) ======================================

class OverrideRules(SpecTestCase):

    def test_override_replaces_keys(self):
        self.overlay({"overrides": {"errors": [{"id": "from_dlpack_missing_methods", "kind": "TypeError"}],
                                    "device_types": [{"value": 11, "doc": "Overridden."}]}})
        loaded = self.assertLoads()
        error = [e for e in loaded.errors if e.id == "from_dlpack_missing_methods"][0]
        self.assertEqual(error.kind, "TypeError")
        self.assertEqual([d.doc for d in loaded.device_types if d.value == 11], ["Overridden."])

    def test_overrides_not_a_mapping(self):
        self.overlay({"overrides": [{"id": "max_version_too_old"}]})
        self.assertRejected("overlay.yaml", "overrides", None, "must be a mapping of section → list, got a list")

    def test_overrides_unknown_section(self):
        self.overlay({"overrides": {"lookup": [{"name": "dtypes"}]}})
        self.assertRejected("overlay.yaml", "overrides", "lookup", "unknown section 'lookup'")

    def test_overrides_section_not_a_list(self):
        self.overlay({"overrides": {"errors": {"id": "max_version_too_old", "code": 1}}})
        self.assertRejected("overlay.yaml", "overrides.errors", None, "must be a list, got a mapping")

    def test_override_without_identity_key(self):
        self.overlay({"overrides": {"errors": [{"code": 1}]}})
        self.assertRejected("overlay.yaml", "overrides.errors[0]", "id",
                            "must be a mapping with the identity key 'id'")

    def test_override_of_unknown_entry(self):
        self.overlay({"overrides": {"device_types": [{"value": 200, "doc": "None such."}]}})
        self.assertRejected("overlay.yaml", "overrides.device_types[0] (200)", "value",
                            "no device_types entry with value 200 to override")

    def test_override_names_no_key(self):
        self.overlay({"overrides": {"errors": [{"id": "max_version_too_old"}]}})
        self.assertRejected("overlay.yaml", "overrides.errors[0] (max_version_too_old)", None,
                            "names no key to override")

    def test_overridden_entry_is_validated_and_names_both_files(self):
        index = self.find("devices.yaml", "device_types", "kDLROCMHost")[0]
        overlay = self.overlay({"overrides": {"device_types": [{"value": 11, "platform": "rcom"}]}})
        with self.assertRaises(spec.SpecError) as raised:
            self.load()
        self.assertEqual(str(raised.exception), "%s (overridden by %s): device_types[%d] (kDLROCMHost): "
                         "unknown platform 'rcom'" % (self.path("devices.yaml"), overlay, index))


# ==== command lines ================================================================================

class ProfileRules(SpecTestCase):
    """The profile is checked against the facts: a profile that contradicts the spec names the key and the value."""

    PROFILE = "profiles/array_api.yaml"

    def profile(self):
        return self.docs[self.PROFILE]["profile"]

    def test_every_shipped_profile_loads(self):
        facts = [os.path.join(SPEC_DIR, name) for name in DEFAULT_FILES if not name.startswith("profiles/")]
        shipped = sorted(glob.glob(os.path.join(SPEC_DIR, "profiles", "*.yaml")))
        for path in shipped:
            name = os.path.basename(path)
            with self.subTest(name):
                loaded = spec.load(facts + [path], base_profiles=shipped)  # a profile may extend a shipped one
                self.assertEqual(loaded.profile.name + ".yaml", name)
                # One policy row per device type, in the device table's order, whatever the spec grows to.
                self.assertEqual([d.value for d in loaded.profile.devices], [d.value for d in loaded.device_types])

    def test_profile_is_required_once(self):
        del self.docs[self.PROFILE]
        self.assertRejected(None, None, None, "section 'profile' is missing")

    def test_unknown_device_type(self):
        self.profile()["import"]["accept"] = ["kDLCPU", "kDLNoSuch"]
        self.assertRejected(self.PROFILE, "profile.import", "accept", "unknown device type 'kDLNoSuch'")

    def test_device_type_by_value_must_exist(self):
        self.profile()["export"]["dl_device"]["accept"] = [1, 5]
        self.assertRejected(self.PROFILE, "profile.export.dl_device", "accept", "unknown device type 5")

    def test_unknown_error_id(self):
        self.profile()["dlpack_device"]["otherwise"] = "no_such_error"
        self.assertRejected(self.PROFILE, "profile.dlpack_device", "otherwise", "unknown error id 'no_such_error'")

    def test_error_needing_values_the_policy_cannot_give(self):
        self.profile()["dlpack_device"]["otherwise"] = "stream_invalid"
        self.assertRejected(self.PROFILE, "profile.dlpack_device", "otherwise", "needs stream", "it gives: platform")

    def test_error_without_a_text(self):
        self.profile()["errors"] = [{"id": "max_version_too_old", "message": ""}]
        self.assertRejected(self.PROFILE, "profile.errors[0] (max_version_too_old)", "message", "non-empty string")

    def test_error_text_asking_for_a_value_c_never_passes(self):
        self.profile()["errors"] = [{"id": "dlpack_sharded", "message": "sharded over {num_devices}"}]
        self.assertRejected(self.PROFILE, "profile.errors[0] (dlpack_sharded)", "message", "{num_devices}")

    def test_style_must_fit_the_placeholder_type(self):
        self.profile()["errors"] = [{"id": "max_version_too_old", "message": "below {min_version:packed}"}]
        self.assertRejected(self.PROFILE, "profile.errors[0] (max_version_too_old)", "message", "style 'packed'")

    def test_status_word_is_upper_case(self):
        self.profile()["errors"] = [{"id": "ndim_negative", "status": "invalid argument"}]
        self.assertRejected(self.PROFILE, "profile.errors[0] (ndim_negative)", "status", "upper-case status word")

    def test_versioned_range_below_the_versioned_abi(self):
        self.profile()["export"]["max_version"]["ranges"] = [{"until": "0.5", "error": "max_version_too_old"},
                                                              {"struct": "versioned"}]
        self.assertRejected(self.PROFILE, "profile.export.max_version.ranges[1]", None, "versioned range must start")

    def test_ranges_ascend_and_end_open(self):
        ranges = self.profile()["export"]["max_version"]["ranges"]
        ranges[1]["until"] = "0.5"
        self.assertRejected(self.PROFILE, "profile.export.max_version.ranges[1]", "until", "does not follow 0.5")
        ranges[1]["until"] = "1.0"
        ranges[2]["until"] = "1.3"
        self.assertRejected(self.PROFILE, "profile.export.max_version.ranges[2]", None, "the last range has no 'until'")

    def test_rule_device_type_must_be_of_its_platform(self):
        self.profile()["dlpack_device"]["rules"] = [{"platform": "cuda", "memory": "any", "device_type": "kDLROCM"}]
        self.assertRejected(self.PROFILE, "profile.dlpack_device.rules[0]", "device_type", "belongs to platform rocm")

    def test_rule_platform_must_exist(self):
        self.profile()["dlpack_device"]["rules"] = [{"platform": "cdua", "memory": "any", "device_type": "kDLCUDA"}]
        self.assertRejected(self.PROFILE, "profile.dlpack_device.rules[0]", "platform", "unknown platform 'cdua'")

    def test_unknown_policy_word(self):
        self.profile()["import"]["strides"]["otherwise"] = "sometimes"
        self.assertRejected(self.PROFILE, "profile.import.strides", "otherwise", "'sometimes' is not one of copy, refuse")

    def test_alignment_power_of_two(self):
        self.profile()["import"]["alignment"] = 48
        self.assertRejected(self.PROFILE, "profile.import", "alignment", "48 is not 0 or a power of two")


class CommandLines(SpecTestCase):
    """check_spec.py and gen_c.py print one 'dlmap spec error: …' line and exit 1, never a traceback."""

    def run_tool(self, script, args):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([PYTHON, "-B", os.path.join(CODEGEN_DIR, script)] + args, cwd=self.tmp, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)

    def broken_variants(self):
        """(label, paths) of broken specs: a semantic mistake and the file-level ones."""
        variants = []
        self.entry("devices.yaml", "device_types", "kDLROCMHost")["platform"] = "rcom"
        variants.append(("dangling platform", self.write(), "unknown platform 'rcom'"))
        for label, text in (("invalid YAML", "device_types: [\n"),
                            ("unhashable key", "flags:\n  ? [a]\n  : 1\n"),
                            ("not UTF-8", b"flags: [\xff]\n"),
                            ("control character", "flags: [\x07]\n"),
                            ("top level list", "- a\n")):
            name = label.replace(" ", "_") + ".yaml"
            path = self.path(name)
            with open(path, "wb") as handle:
                handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            variants.append((label, [path], path + ":"))
        variants.append(("missing file", [self.path("absent.yaml")], "cannot read"))
        return variants

    def assertCleanFailure(self, result, fragment):
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith("dlmap spec error: "), lines[0])
        self.assertIn(fragment, lines[0])
        self.assertEqual(result.stdout, "")

    def test_check_spec_reports_broken_spec(self):
        for label, paths, fragment in self.broken_variants():
            with self.subTest(variant=label):
                self.assertCleanFailure(self.run_tool("check_spec.py", paths), fragment)

    def test_gen_c_reports_broken_spec_and_writes_nothing(self):
        for label, paths, fragment in self.broken_variants():
            with self.subTest(variant=label):
                out = self.path("out_%s.h" % label.replace(" ", "_"))
                args = [arg for p in paths for arg in ("--spec", p)] + ["--spec_h", out]
                self.assertCleanFailure(self.run_tool("gen_c.py", args), fragment)
                self.assertFalse(os.path.exists(out))

    def test_check_spec_accepts_default_spec(self):
        result = self.run_tool("check_spec.py", [os.path.join(SPEC_DIR, name) for name in DEFAULT_FILES])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("spec OK: "), result.stdout)
        self.assertEqual(result.stderr, "")


# ==== public values (spec.PUBLIC_VALUES) and the record of released ones (spec/released_values.yaml) ========
class PublicValueRules(SpecTestCase):
    """Entries of the lists whose values are public C enumerators carry their number as `value:`; a new entry
    renumbers nothing, and no spec may change or reuse a value spec/released_values.yaml records."""

    def test_every_public_list_needs_a_value(self):
        for file, section, name in (("platforms.yaml", "platforms", "cuda"), ("platforms.yaml", "memory_kinds", "host"),
                                    ("platforms.yaml", "stream_conventions", "cuda"),
                                    ("errors.yaml", "exception_kinds", "TypeError"),
                                    ("errors.yaml", "placeholders", "ndim")):
            with self.subTest(section=section):
                self.docs = default_docs()
                _, entry, where = self.find(file, section, name)
                del entry["value"]
                self.assertRejected(file, where, "value", "missing key 'value'")

    def test_inserting_an_entry_renumbers_nothing(self):
        # A new platform listed first takes the next free value; every released enumerator keeps its number.
        before = emit.emit_spec_header(self.assertLoads())
        platforms = self.docs["platforms.yaml"]["platforms"]
        platforms.insert(0, {"name": "newchip", "value": len(platforms), "backend": "none",
                             "version_words": ["newchip"], "doc": "A platform added after a release."})
        after = emit.emit_spec_header(self.assertLoads())
        released = self.docs["released_values.yaml"]["released_values"]["platforms"]
        for name, value in released.items():
            line = "  DLMAP_PLATFORM_%s = %d,\n" % (name.upper(), value)
            self.assertIn(line, before)
            self.assertIn(line, after)
        self.assertIn("  DLMAP_PLATFORM_NEWCHIP = %d,\n" % len(released), after)

    def test_duplicate_value(self):
        index, entry, where = self.find("platforms.yaml", "memory_kinds", "host")
        entry["value"] = self.entry("platforms.yaml", "memory_kinds", "device")["value"]
        self.assertRejected("platforms.yaml", where, "value", "duplicate value")

    def test_gap_in_values(self):
        placeholders = self.docs["errors.yaml"]["placeholders"]
        placeholders.append({"name": "late", "value": len(placeholders) + 1, "type": "int", "doc": "A gap."})
        self.assertRejected("errors.yaml", "placeholders[%d] (late)" % (len(placeholders) - 1), "value",
                            "leaves a gap", "0…%d" % (len(placeholders) - 1))

    def test_changed_released_value_refused(self):
        # Swapping two platforms' values keeps them unique and dense, but changes public ABI.
        cpu, cuda = self.entry("platforms.yaml", "platforms", "cpu"), self.entry("platforms.yaml", "platforms", "cuda")
        cpu["value"], cuda["value"] = cuda["value"], cpu["value"]
        self.assertRejected("released_values.yaml", "released_values.platforms.cpu", None,
                            "was released as value 0 and is now 1", "dlmap_platform")

    def test_changed_released_placeholder_refused(self):
        kinds = self.docs["errors.yaml"]["placeholders"]
        kinds[0]["value"], kinds[1]["value"] = kinds[1]["value"], kinds[0]["value"]
        self.assertRejected("released_values.yaml", "released_values.placeholders.%s" % kinds[0]["name"], None,
                            "a released value never changes", "dlmap_placeholder")

    def test_released_entry_must_stay_listed(self):
        self.docs["released_values.yaml"]["released_values"]["memory_kinds"]["retired"] = 9
        self.assertRejected("released_values.yaml", "released_values.memory_kinds.retired", None,
                            "is no longer listed")

    def test_record_names_only_public_lists(self):
        self.docs["released_values.yaml"]["released_values"]["errors"] = {"ndim_negative": 401}
        self.assertRejected("released_values.yaml", None, None, "released_values: unknown list 'errors'")

    def test_the_default_spec_keeps_every_recorded_value(self):
        # Every released entry is in the shipped spec with its recorded value. Entries added since the last release
        # are not recorded yet (a release adds them), so an added spec entry never turns this red.
        loaded = self.assertLoads()
        record = self.docs["released_values.yaml"]["released_values"]
        for section in spec.PUBLIC_VALUES:
            listed = {item.name: item.value for item in getattr(loaded, section)}
            for name, value in record[section].items():
                self.assertEqual(listed.get(name), value, "%s.%s" % (section, name))


class MemoryKindRefines(SpecTestCase):
    """`refines:` on a memory kind (which __dlpack_device__ reports replace a tensor's device on import)."""

    def test_default_spec_pinned_refines_host(self):
        kinds = {m.name: m.refines for m in self.assertLoads().memory_kinds}
        self.assertEqual(kinds["host_pinned"], "host")

    def test_refines_an_unlisted_kind(self):
        _, e, where = self.find("platforms.yaml", "memory_kinds", "managed")
        e["refines"] = "hots"
        self.assertRejected("platforms.yaml", where, "refines", "'hots' is not another listed memory kind")

    def test_refines_itself(self):
        _, e, where = self.find("platforms.yaml", "memory_kinds", "managed")
        e["refines"] = "managed"
        self.assertRejected("platforms.yaml", where, "refines", "'managed' is not another listed memory kind")


class ExchangeApiRules(SpecTestCase):
    """exchange_api.producer_states: the states read on a producer before its C exchange table (optional section)."""

    WHERE = "exchange_api.producer_states[%d] (%s)"

    def states(self):
        return self.docs["versions.yaml"]["exchange_api"]["producer_states"]

    def test_default_states(self):
        loaded = self.assertLoads()
        self.assertEqual([s.attribute for s in loaded.producer_states],
                         [s["attribute"] for s in self.states()])
        self.assertIn("refuse", [s.action for s in loaded.producer_states])

    def test_section_is_optional(self):
        del self.docs["versions.yaml"]["exchange_api"]
        self.assertEqual(self.assertLoads().producer_states, [])

    def test_empty_list(self):
        self.docs["versions.yaml"]["exchange_api"]["producer_states"] = []
        self.assertRejected("versions.yaml", "exchange_api", "producer_states", "non-empty list")

    def test_unknown_key_in_section(self):
        self.docs["versions.yaml"]["exchange_api"]["capsule"] = "x"
        self.assertRejected("versions.yaml", "exchange_api", "capsule", "unknown key")

    def test_bad_values(self):
        first = self.states()[0]["attribute"]
        for key, value, fragment in [("read", "get", "not one of value, call"),
                                     ("action", "warn", "not one of ask_producer, refuse"),
                                     ("attribute", "is-conj", "not a Python identifier"),
                                     ("other_than", "", "non-empty string"), ("doc", 3, "non-empty string")]:
            self.docs = default_docs()
            self.states()[0][key] = value
            shown = first if key != "attribute" else value
            self.assertRejected("versions.yaml", self.WHERE % (0, shown), key, fragment)

    def test_missing_key(self):
        del self.states()[0]["action"]
        self.assertRejected("versions.yaml", self.WHERE % (0, self.states()[0]["attribute"]), "action", "missing key")

    def test_duplicate_state(self):
        self.states().append(dict(self.states()[0]))
        n = len(self.states()) - 1
        self.assertRejected("versions.yaml", self.WHERE % (n, self.states()[0]["attribute"]), None, "duplicate attribute")

    def test_refuse_needs_its_error(self):
        errors = self.docs["errors.yaml"]["errors"]
        self.docs["errors.yaml"]["errors"] = [e for e in errors if e["id"] != spec.PRODUCER_STATE_ERROR]
        for e in self.docs["errors.yaml"]["errors"]:
            if spec.PRODUCER_STATE_ERROR in e.get("related", []):
                e["related"].remove(spec.PRODUCER_STATE_ERROR)
        index = next(i for i, s in enumerate(self.states()) if s["action"] == "refuse")
        self.assertRejected("versions.yaml", self.WHERE % (index, self.states()[index]["attribute"]), "action",
                            spec.PRODUCER_STATE_ERROR)


if __name__ == "__main__":
    unittest.main()
