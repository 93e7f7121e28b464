# dlmap codegen tests — profile_models_test: a profile's `models:` key (codegen/profile_models.py, issue 50): every
# profile names the peer releases it reproduces; a profile without one, or with one that is no release range, is a
# SpecError naming the file and key; and the range reader the differential tests use claims exactly its releases.
"""Run by hand:  cd codegen && /usr/bin/python3 -B tests/profile_models_test.py
Under Bazel:  bazel test //codegen/tests:profile_models_test
"""

import glob
import os
import shutil
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CODEGEN_DIR = os.environ.get("DLMAP_CODEGEN_DIR") or os.path.dirname(HERE)
SPEC_DIR = os.environ.get("DLMAP_SPEC_DIR") or os.path.join(os.path.dirname(CODEGEN_DIR), "spec")
sys.path.insert(0, CODEGEN_DIR)

import profile_models  # noqa: E402
import spec  # noqa: E402

FACTS = [os.path.join(SPEC_DIR, f) for f in ("versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml",
                                              "errors.yaml")]
SHIPPED = sorted(glob.glob(os.path.join(SPEC_DIR, "profiles", "*.yaml")))


class Ranges(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(profile_models.parse("numpy >= 2.4, < 2.5"), ("numpy", [(">=", (2, 4)), ("<", (2, 5))]))
        self.assertEqual(profile_models.parse("array-api >= 2023.12"), ("array-api", [(">=", (2023, 12))]))

    def test_not_ranges(self):
        for text in ("", "numpy", "numpy 2.5", "numpy >= ", "numpy >= 2.x", "NumPy >= 2.5", "numpy >= 2.5,", None, 2.5):
            with self.subTest(text=text), self.assertRaises(profile_models.ModelsError):
                profile_models.parse(text)

    def test_holds(self):
        older = "numpy >= 2.4, < 2.5"
        for version, claimed in (("2.4.6", True), ("2.4", True), ("2.5.2", False), ("2.5.0rc1", False),
                                 ("2.2.4", False), ("1.24.2", False)):
            with self.subTest(version=version):
                self.assertEqual(profile_models.holds(older, "numpy", version), claimed)
        self.assertTrue(profile_models.holds("numpy >= 2.5", "numpy", "2.5.2"))
        self.assertTrue(profile_models.holds("torch >= 2.14", "torch", "2.14.1+debian"))
        self.assertFalse(profile_models.holds("torch >= 2.14", "torch", "2.6.0+debian"))
        self.assertFalse(profile_models.holds("torch >= 2.14", "numpy", "2.14.0"), "another peer's release")
        self.assertTrue(profile_models.holds("jax == 0.11.2", "jax", "0.11.2"))


class EmptyRanges(unittest.TestCase):
    """A range no release satisfies is refused (issue 56, defect 4). Versions compare number by number, a missing
    number read as 0 (2.4 is 2.4.0), and any number of numbers make a release, so 2.0.0.1 lies between 2 and 2.0.1:
    only equal bounds, or bounds the wrong way round, leave no release."""

    SATISFIABLE = (
        "numpy >= 2.4, < 2.4.1",       # 2.4
        "numpy > 2, < 2.0.1",          # 2.0.0.1
        "numpy >= 2, <= 2.0.0",        # 2, which is 2.0.0
        "numpy == 2.4, >= 2.4.0",      # 2.4
        "numpy == 2.4, == 2.4.0",      # the same release written twice
        "numpy == 2.4, <= 2.4",
        "numpy <= 0",                  # 0
        "numpy >= 0",
        "numpy > 2.4, > 2.3, < 2.5",
        "numpy < 0.0.1",               # 0
    )
    EMPTY = (
        ("numpy >= 3, < 2", ">= 3 and < 2"),
        ("numpy > 2, < 2.0.0", "> 2 and < 2.0.0"),
        ("numpy > 2, <= 2", "> 2 and <= 2"),
        ("numpy >= 2.4, < 2.4.0", ">= 2.4 and < 2.4.0"),
        ("numpy >= 2.4.0, < 2.4", ">= 2.4.0 and < 2.4"),
        ("numpy == 2.4, == 2.5", "== 2.5 and == 2.4"),
        ("numpy == 2.4, > 2.4.0", "> 2.4.0 and == 2.4"),
        ("numpy == 2, < 2.0", "== 2 and < 2.0"),
        ("numpy >= 2.5, > 2.4, < 2.6, < 2.5", ">= 2.5 and < 2.5"),  # the strictest bound of each side
        ("numpy < 0", "< 0"),          # nothing is below 0
        ("numpy < 0.0, >= 0", ">= 0 and < 0.0"),
    )

    def test_satisfiable_ranges_parse(self):
        for text in self.SATISFIABLE:
            with self.subTest(text=text):
                self.assertEqual(profile_models.parse(text)[0], "numpy")

    def test_empty_ranges_are_refused_naming_the_bounds(self):
        for text, bounds in self.EMPTY:
            with self.subTest(text=text):
                with self.assertRaises(profile_models.ModelsError) as raised:
                    profile_models.parse(text)
                self.assertEqual(str(raised.exception), "%r is an empty range: no release is %s" % (text, bounds))

    def test_satisfiable_ranges_hold_a_release(self):
        # the witness each comment names is claimed, so "satisfiable" is not the parser's word alone
        for text, witness in zip(self.SATISFIABLE, ("2.4", "2.0.0.1", "2", "2.4", "2.4.0", "2.4", "0", "7", "2.4.1",
                                                    "0")):
            with self.subTest(text=text):
                self.assertTrue(profile_models.holds(text, "numpy", witness))


class EveryProfile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_every_shipped_profile_names_a_range(self):
        for path in SHIPPED:
            with self.subTest(profile=os.path.basename(path)):
                loaded = spec.load(FACTS + [path], SHIPPED)
                peer, clauses = profile_models.parse(loaded.profile.models)
                self.assertTrue(clauses)

    def write_jax(self, models):
        with open(os.path.join(SPEC_DIR, "profiles", "jax.yaml"), encoding="utf-8") as handle:
            body = yaml.safe_load(handle)
        if models is None:
            del body["profile"]["models"]
        else:
            body["profile"]["models"] = models
        path = os.path.join(self.tmp, "unmodelled.yaml")
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(body, handle)
        return path

    def test_a_profile_without_models_is_refused(self):
        path = self.write_jax(None)
        with self.assertRaises(spec.SpecError) as raised:
            spec.load(FACTS + [path], SHIPPED)
        self.assertEqual(str(raised.exception), "%s: profile: missing key 'models'" % path)

    def test_a_models_that_is_no_range_is_refused(self):
        path = self.write_jax("jax 0.11")
        with self.assertRaisesRegex(spec.SpecError, r"unmodelled.yaml: profile: key 'models': 'jax 0\.11' is not a "
                                                    r"release range"):
            spec.load(FACTS + [path], SHIPPED)

    def test_an_empty_models_is_refused_naming_the_file_and_key(self):
        path = self.write_jax("numpy >= 3, < 2")
        with self.assertRaises(spec.SpecError) as raised:
            spec.load(FACTS + [path], SHIPPED)
        self.assertEqual(str(raised.exception), "%s: profile: key 'models': 'numpy >= 3, < 2' is an empty range: "
                         "no release is >= 3 and < 2" % path)

    def test_a_child_inherits_its_parents_range_unless_it_states_one(self):
        child = {"profile": {"extends": "numpy", "name": "numpy_child", "doc": "d"}}
        path = os.path.join(self.tmp, "child.yaml")
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(child, handle)
        parent = spec.load(FACTS + [os.path.join(SPEC_DIR, "profiles", "numpy.yaml")], SHIPPED).profile.models
        self.assertEqual(spec.load(FACTS + [path], SHIPPED).profile.models, parent)
        child["profile"]["models"] = "numpy == 2.5.1"
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(child, handle)
        self.assertEqual(spec.load(FACTS + [path], SHIPPED).profile.models, "numpy == 2.5.1")


if __name__ == "__main__":
    unittest.main()
