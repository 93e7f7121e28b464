# dlmap codegen tests — profile_extends_test: `extends:` in a profile (codegen/profile_extends.py), as the generator,
# `dlmap spec check`'s checker and the tests' plain reader (tests/spec_facts/spec_facts.py) each resolve it.
"""A child profile is dlmap's facts plus `extends: <shipped profile>` and only the keys that change.

Run by hand:  cd codegen && /usr/bin/python3 -B tests/profile_extends_test.py
Under Bazel:  bazel test //codegen/tests:profile_extends_test
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CODEGEN_DIR = os.environ.get("DLMAP_CODEGEN_DIR") or os.path.dirname(HERE)
SPEC_DIR = os.environ.get("DLMAP_SPEC_DIR") or os.path.join(os.path.dirname(CODEGEN_DIR), "spec")
FACTS_READER = os.path.join(os.path.dirname(CODEGEN_DIR), "tests", "spec_facts")
PYTHON = os.environ.get("DLMAP_PYTHON") or sys.executable or "/usr/bin/python3"
sys.path.insert(0, CODEGEN_DIR)
sys.path.insert(0, FACTS_READER)

import emit  # noqa: E402
import profile_extends  # noqa: E402
import spec  # noqa: E402
import spec_facts  # noqa: E402  (tests/spec_facts/spec_facts.py: the plain PyYAML reader)

FACTS = [os.path.join(SPEC_DIR, f) for f in ("versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml",
                                              "errors.yaml")]
SHIPPED = sorted(glob.glob(os.path.join(SPEC_DIR, "profiles", "*.yaml")))


def shipped(name):
    with open(os.path.join(SPEC_DIR, "profiles", name + ".yaml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["profile"]


class MergeRule(unittest.TestCase):
    """The pure merge: maps key by key, lists and scalars replaced, errors by id field by field."""

    BASE = {"name": "base", "doc": "d", "export": {"a": 1, "b": {"c": [1, 2], "d": "x"}, "e": [3]},
            "errors": [{"id": "one", "kind": "TypeError", "message": "m1"}, {"id": "two", "status": "S"}]}

    def test_maps_merge_lists_and_scalars_replace(self):
        child = {"extends": "base", "name": "child", "doc": "c", "export": {"b": {"c": [9]}, "e": [4, 5]}}
        merged = profile_extends.resolve(child, {"base": self.BASE})
        self.assertEqual(merged["export"], {"a": 1, "b": {"c": [9], "d": "x"}, "e": [4, 5]})
        self.assertEqual((merged["name"], merged["doc"]), ("child", "c"))
        self.assertNotIn("extends", merged)
        self.assertEqual(self.BASE["export"]["b"]["c"], [1, 2], "the parent is not modified")

    def test_errors_merge_by_id_field_by_field(self):
        child = {"extends": "base", "name": "child", "doc": "c",
                 "errors": [{"id": "one", "message": "mine"}, {"id": "three", "kind": "ValueError"}]}
        merged, origins = profile_extends.resolve_with_origins(child, {"base": self.BASE})
        self.assertEqual(merged["errors"], [{"id": "one", "kind": "TypeError", "message": "mine"},
                                            {"id": "two", "status": "S"}, {"id": "three", "kind": "ValueError"}])
        self.assertEqual(origins, {"one": {"kind": "base", "message": "child"}, "two": {"status": "base"},
                                   "three": {"kind": "child"}})

    def test_chain_of_parents(self):
        middle = {"extends": "base", "name": "middle", "doc": "m", "errors": [{"id": "two", "status": "T"}]}
        child = {"extends": "middle", "name": "child", "doc": "c", "export": {"a": 2}}
        merged, origins = profile_extends.resolve_with_origins(child, {"base": self.BASE, "middle": middle})
        self.assertEqual(merged["export"]["a"], 2)
        self.assertEqual(merged["errors"][1], {"id": "two", "status": "T"})
        self.assertEqual(origins["two"], {"status": "middle"})

    def test_name_and_doc_are_required(self):
        for missing in ("name", "doc"):
            child = {"extends": "base", "name": "child", "doc": "c"}
            del child[missing]
            with self.subTest(missing), self.assertRaisesRegex(profile_extends.ExtendsError,
                                                              "missing key '%s'" % missing):
                profile_extends.resolve(child, {"base": self.BASE})

    def test_parent_name_is_refused(self):
        with self.assertRaisesRegex(profile_extends.ExtendsError, "key 'name': 'base' is the name of the profile"):
            profile_extends.resolve({"extends": "base", "name": "base", "doc": "c"}, {"base": self.BASE})

    def test_unknown_parent_lists_the_known(self):
        with self.assertRaisesRegex(profile_extends.ExtendsError, r"unknown profile 'jaxx' \(known: base, other\)"):
            profile_extends.resolve({"extends": "jaxx", "name": "c", "doc": "c"}, {"base": self.BASE, "other": {}})

    def test_cycle(self):
        a = {"extends": "b", "name": "a", "doc": "a"}
        b = {"extends": "a", "name": "b", "doc": "b"}
        with self.assertRaisesRegex(profile_extends.ExtendsError, "extends itself"):
            profile_extends.resolve({"extends": "a", "name": "c", "doc": "c"}, {"a": a, "b": b})


class ExtendsInTheSpec(unittest.TestCase):
    """spec.load, gen_c.py, check_spec.py and spec_facts.read on facts + a child of a shipped profile."""

    CHILD = {"profile": {
        "extends": "jax", "name": "jax_acme", "doc": "JAX's contract with versioned output.",
        "export": {"max_version": {"ranges": [{"until": "0.5", "error": "max_version_too_old"},
                                              {"until": "1.0", "struct": "legacy"}, {"struct": "versioned"}]}},
        "errors": [{"id": "strides_not_compact", "status": "INVALID_ARGUMENT"},
                   {"id": "max_version_too_old", "message": "acme needs {min_version:tuple}."}]}}

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dlmap_extends_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def write(self, data, name="acme.yaml"):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
        return path

    def test_child_gets_parent_and_its_changes(self):
        loaded = spec.load(FACTS + [self.write(self.CHILD)], SHIPPED)
        jax = spec.load(FACTS + [os.path.join(SPEC_DIR, "profiles", "jax.yaml")])
        self.assertEqual(loaded.profile.name, "jax_acme")
        self.assertEqual([r.struct for r in loaded.profile.ranges], [None, "legacy", "versioned"])
        # everything it does not name is JAX's
        for key in ("devices", "rules", "request", "view_layout", "otherwise", "gating"):
            self.assertEqual(getattr(loaded.profile, key), getattr(jax.profile, key), key)
        errors = {e.id: e for e in loaded.errors}
        self.assertEqual(errors["max_version_too_old"].message, "acme needs {min_version:tuple}.")
        self.assertEqual((errors["strides_not_compact"].status, errors["strides_not_compact"].kind),
                         ("INVALID_ARGUMENT", "RuntimeError"))
        self.assertTrue(errors["strides_not_compact"].message.startswith("Only DLPack tensors"))

    def test_origins_name_the_profile_each_field_comes_from(self):
        origins = spec.load(FACTS + [self.write(self.CHILD)], SHIPPED).profile.error_origins
        self.assertEqual(origins["max_version_too_old"], {"message": "jax_acme"})
        self.assertEqual(origins["strides_not_compact"], {"kind": "jax", "message": "jax", "status": "jax_acme"})
        self.assertNotIn("dlpack_sharded", origins)  # the catalogue's own text
        rows = emit.emit_profile(spec.load(FACTS + [self.write(self.CHILD)], SHIPPED))
        self.assertIn('DLMAP_PROFILE_ERROR_ORIGIN(STRIDES_NOT_COMPACT, "jax", "jax", "jax_acme", _)', rows)
        self.assertIn('DLMAP_PROFILE_ERROR_ORIGIN(MAX_VERSION_TOO_OLD, NULL, "jax_acme", NULL, _)', rows)

    def test_shipped_profile_origins_are_its_own(self):
        loaded = spec.load(FACTS + [os.path.join(SPEC_DIR, "profiles", "jax.yaml")])
        for entry in shipped("jax")["errors"]:
            self.assertEqual(set(loaded.profile.error_origins[entry["id"]]), set(entry) - {"id"}, entry["id"])
            self.assertEqual(set(loaded.profile.error_origins[entry["id"]].values()), {"jax"})

    def test_unknown_parent_is_a_spec_error_listing_the_shipped(self):
        child = dict(self.CHILD["profile"], extends="jaxx")
        path = self.write({"profile": child})
        names = sorted(shipped(os.path.basename(p)[:-5])["name"] for p in SHIPPED)
        with self.assertRaises(spec.SpecError) as raised:
            spec.load(FACTS + [path], SHIPPED)
        self.assertEqual(str(raised.exception), "%s: profile: key 'extends': unknown profile 'jaxx' (known: %s)"
                         % (path, ", ".join(names)))

    def test_child_without_doc_is_refused(self):
        child = dict(self.CHILD["profile"])
        del child["doc"]
        with self.assertRaisesRegex(spec.SpecError, r"acme.yaml: profile: missing key 'doc'"):
            spec.load(FACTS + [self.write({"profile": child})], SHIPPED)

    def test_merged_profile_is_validated(self):
        child = dict(self.CHILD["profile"], **{"import": {"strides": {"view": "diagonal"}}})
        with self.assertRaisesRegex(spec.SpecError, r"profile.import.strides: key 'view': 'diagonal' is not one of"):
            spec.load(FACTS + [self.write({"profile": child})], SHIPPED)

    def test_overrides_cannot_touch_the_profile(self):
        path = self.write({"overrides": {"profile": [{"name": "jax"}]}}, "overlay.yaml")
        with self.assertRaisesRegex(spec.SpecError, r"overlay.yaml: overrides: cannot change the profile; use `extends: <profile>`"):
            spec.load(FACTS + [os.path.join(SPEC_DIR, "profiles", "jax.yaml"), path])

    def test_plain_reader_agrees_with_the_generator(self):
        paths = FACTS + [self.write(self.CHILD)]
        loaded = spec.load(paths, SHIPPED)
        for bases in (SHIPPED, None):  # None: it finds spec/profiles/ beside the facts
            with self.subTest(bases=bases):
                facts = spec_facts.read(paths, bases)
                self.assertEqual(facts["profile"]["name"], "jax_acme")
                self.assertNotIn("extends", facts["profile"])
                self.assertEqual(facts["profile"]["export"]["max_version"]["ranges"][-1], {"struct": "versioned"})
                self.assertEqual(facts["profile"]["import"], shipped("jax")["import"])
                by_id = {e["id"]: e for e in facts["errors"]}
                for error in loaded.errors:
                    self.assertEqual((by_id[error.id]["kind"], spec_facts.message_template(by_id[error.id])),
                                     (error.kind, emit.message_template(error)), error.id)

    def run_tool(self, script, args):
        return subprocess.run([PYTHON, "-B", os.path.join(CODEGEN_DIR, script)] + args, cwd=self.tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)

    def test_check_spec_finds_the_shipped_profiles(self):
        result = self.run_tool("check_spec.py", FACTS + [self.write(self.CHILD)])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("spec OK: profile jax_acme,"), result.stdout)

    def test_gen_c_takes_base_profiles(self):
        out = os.path.join(self.tmp, "profile.inc")
        specs = [a for p in FACTS + [self.write(self.CHILD)] for a in ("--spec", p)]
        result = self.run_tool("gen_c.py", specs + ["--profile_inc", out])
        self.assertEqual(result.returncode, 1)
        self.assertIn("unknown profile 'jax' (known: none)", result.stderr)
        result = self.run_tool("gen_c.py", specs + [a for p in SHIPPED for a in ("--base_profile", p)] +
                               ["--profile_inc", out])
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out, encoding="utf-8") as handle:
            self.assertIn('DLMAP_PROFILE_SETTING(name, "jax_acme"', handle.read())


if __name__ == "__main__":
    unittest.main()
