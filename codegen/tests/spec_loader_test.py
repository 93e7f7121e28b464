# dlmap codegen tests — spec_loader_test: the spec's YAML goes through libyaml where PyYAML has it (codegen/spec.py
# _load_yaml), with exactly what PyYAML's Python loader gives: the same data for every spec file, and for text it
# cannot or must not take (deep nesting, which libyaml's composer would overflow the stack on; errors) the Python
# loader's own answer.
"""Run by hand:  cd codegen && /usr/bin/python3 -B tests/spec_loader_test.py
Under Bazel:  bazel test //codegen/tests:spec_loader_test
"""

import glob
import os
import sys
import unittest
from unittest import mock

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CODEGEN_DIR = os.environ.get("DLMAP_CODEGEN_DIR") or os.path.dirname(HERE)
SPEC_DIR = os.environ.get("DLMAP_SPEC_DIR") or os.path.join(os.path.dirname(CODEGEN_DIR), "spec")
sys.path.insert(0, CODEGEN_DIR)

import spec  # noqa: E402

SPEC_FILES = sorted(glob.glob(os.path.join(SPEC_DIR, "*.yaml")) +
                    glob.glob(os.path.join(SPEC_DIR, "profiles", "*.yaml")))


def python_loader_only():
    """spec._load_yaml's Python loader made to fail, so a test sees whether the libyaml one answered."""
    return mock.patch.object(spec, "_StrictLoader", side_effect=AssertionError("the Python loader was used"))


@unittest.skipIf(spec._CStrictLoader is None, "this PyYAML has no libyaml (yaml.CSafeLoader): the Python loader only")
class LibyamlLoaderTest(unittest.TestCase):
    def test_every_spec_file_loads_through_libyaml_as_through_python(self):
        self.assertGreater(len(SPEC_FILES), 5, SPEC_DIR)
        for path in SPEC_FILES:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            expected = yaml.load(text, Loader=spec._StrictLoader)
            with python_loader_only():
                self.assertEqual(spec._load_yaml(text), expected, path)

    def test_deep_nesting_goes_to_the_python_loader(self):
        # 100000 levels: libyaml's composer would crash; the Python loader raises RecursionError, which _read reports
        deep = "[" * 100000 + "]" * 100000
        with self.assertRaises(RecursionError):
            spec._load_yaml(deep)
        shallow = "[" * spec._C_MOST_NESTED + "]" * spec._C_MOST_NESTED
        with python_loader_only():
            spec._load_yaml(shallow)
        one_more = "[" * (spec._C_MOST_NESTED + 1) + "]" * (spec._C_MOST_NESTED + 1)
        with python_loader_only(), self.assertRaises(AssertionError):
            spec._load_yaml(one_more)

    def test_errors_are_the_python_loaders(self):
        for text in ("a: [1, 2\n", "a: 1\nb: 2\nb: 3\n", "a: !!int x\n", "a: b: c\n", "a: \x07\n"):
            try:
                yaml.load(text, Loader=spec._StrictLoader)
                self.fail("the Python loader took %r" % text)
            except Exception as error:  # noqa: BLE001 — whatever it raises, _load_yaml raises the same
                expected = (type(error), str(error))
            with self.assertRaises(Exception) as raised:
                spec._load_yaml(text)
            self.assertEqual((type(raised.exception), str(raised.exception)), expected, text)


if __name__ == "__main__":
    unittest.main()
