# dlmap GPU check — gpu/yaml_standin (gpu/check.sh's stand-in for PyYAML) against PyYAML: every YAML file of the
# project reads alike, the generator's C outputs are byte-identical with either, spec mistakes still name the line,
# and what the stand-in does not know is an error that says "install PyYAML", never a different reading.
# Run by run_unittest.sh with the configured python3 (which has PyYAML); arguments: the YAML files to compare.
import importlib.util
import math
import os
import sys
import tempfile
import unittest

import yaml as pyyaml

ROOT = os.getcwd()
FILES = sys.argv[1:]
sys.argv[1:] = []


def load_standin():
    path = os.path.join(ROOT, "gpu", "yaml_standin", "yaml", "__init__.py")
    spec = importlib.util.spec_from_file_location("yaml_standin", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STANDIN = load_standin()


def same(a, b):
    """Equal with equal types all the way down (True != 1 here), dict order included."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def codegen_with(yaml_module):
    """codegen's spec and emit modules, imported afresh over the given yaml module."""
    saved = {name: sys.modules.pop(name) for name in ("yaml", "spec", "emit") if name in sys.modules}
    sys.modules["yaml"] = yaml_module
    try:
        import emit  # noqa: F401  (imports spec)
        import spec
        return sys.modules["spec"], sys.modules["emit"]
    finally:
        for name in ("yaml", "spec", "emit"):
            sys.modules.pop(name, None)
        sys.modules.update(saved)


class StandinReadsAsPyYAML(unittest.TestCase):
    def test_every_yaml_file_of_the_project(self):
        self.assertGreaterEqual(len(FILES), 5)
        for path in FILES:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            with self.subTest(path=path):
                self.assertTrue(same(pyyaml.safe_load(text), STANDIN.safe_load(text)), path)

    def test_scalars(self):
        text = ("a: [yes, No, on, OFF, ~, null, '', 0x1F, 017, -3, +4, 1_000, 1.5, -.inf, 2e3, 1.0e+3, 12:30, "
                "'q''s', \"e\\u00e9\\n\\x41\\\"\", plain text, 1.4.2, v1.2, kDLCUDA]\n"
                "b: {-1: no_sync, 2: x, 'k': [], n: {}}\nc:\n")
        self.assertTrue(same(pyyaml.safe_load(text), STANDIN.safe_load(text)))

    def test_block_forms(self):
        text = ("top:\n- a\n- b: 1\n  c: [1,\n     2]\n-\n  - nested\nnext:\n  long: one\n    two three\n"
                "  key: 'quoted' # comment\n  hash: a#b\n")
        self.assertTrue(same(pyyaml.safe_load(text), STANDIN.safe_load(text)))


class GeneratorOutputsAreIdentical(unittest.TestCase):
    def test_default_spec_and_overlays(self):
        real_spec, real_emit = codegen_with(pyyaml)
        standin_spec, standin_emit = codegen_with(STANDIN)
        facts = [os.path.join(ROOT, "spec", name + ".yaml")
                 for name in ("versions", "platforms", "devices", "dtypes", "errors")]
        specs = facts + [os.path.join(ROOT, "spec", "profiles", "array_api.yaml")]  # the one gpu/check.sh builds
        testdata = sorted(path for path in FILES if "/testdata/" in path)
        sets = [specs, facts + [os.path.join(ROOT, "spec", "profiles", "jax.yaml")]] + \
            [specs + [path] for path in FILES if path.startswith("tests/")] + \
            [testdata[:1], testdata]  # minimal.yaml alone, and with its overlay
        loaded = 0
        for paths in sets:
            try:
                real = real_spec.load(paths)
            except real_spec.SpecError as error:
                with self.assertRaises(standin_spec.SpecError) as raised:
                    standin_spec.load(paths)
                self.assertEqual(str(error), str(raised.exception))
                continue
            standin = standin_spec.load(paths)
            loaded += 1
            for name in real_emit.C_OUTPUTS:
                with self.subTest(output=name, paths=paths):
                    self.assertEqual(real_emit.C_OUTPUTS[name](real), standin_emit.C_OUTPUTS[name](standin))
        self.assertGreaterEqual(loaded, 4)

    def test_spec_mistakes_still_name_the_line(self):
        real_spec, _ = codegen_with(pyyaml)
        standin_spec, _ = codegen_with(STANDIN)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
            handle.write("versions:\n  - version: \"1.0\"\n    struct: versioned\n    struct: legacy\n")
        try:
            with self.assertRaises(real_spec.SpecError) as real:
                real_spec.load([handle.name])
            with self.assertRaises(standin_spec.SpecError) as standin:
                standin_spec.load([handle.name])
            self.assertEqual(str(real.exception), str(standin.exception))
            self.assertIn("line 4: duplicate key 'struct' (first at line 3)", str(standin.exception))
        finally:
            os.unlink(handle.name)


class WhatTheStandinDoesNotKnowIsAnError(unittest.TestCase):
    def test_unsupported_constructs(self):
        for text in ("a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  text\n", "a: >\n  text\n", "? a\n: b\n",
                     "a: 2001-12-14\n", "a: 1\n---\nb: 2\n", "a: \"two\n  lines\"\n"):
            with self.subTest(text=text):
                with self.assertRaises(STANDIN.YAMLError) as raised:
                    STANDIN.safe_load(text)
                self.assertIn("install PyYAML", str(raised.exception))

    def test_invalid_yaml_is_an_error(self):
        for text in ("a: b: c\n", "d: - not a list\n", "a: [1, 2\n", "a:\n  b: 1\n c: 2\n", "a: {b 1}\n", "\ta: 1\n"):
            with self.subTest(text=text):
                with self.assertRaises(STANDIN.YAMLError):
                    STANDIN.safe_load(text)
        with self.assertRaises(STANDIN.reader.ReaderError):
            STANDIN.safe_load("a: \x07\n")


if __name__ == "__main__":
    unittest.main()
