# dlmap codegen tests — profile_extends_depth_test: a deep `extends:` chain (issue 56, defect 3) resolves without
# Python's recursion limit, in codegen/profile_extends.py and through `check_spec.py --base_profile`, and a cycle at
# its far end is still a spec error naming the file, never a traceback.
"""Run by hand:  cd codegen && /usr/bin/python3 -B tests/profile_extends_depth_test.py
Under Bazel:  bazel test //codegen/tests:profile_extends_depth_test
"""

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
PYTHON = os.environ.get("DLMAP_PYTHON") or sys.executable or "/usr/bin/python3"
sys.path.insert(0, CODEGEN_DIR)

import profile_extends  # noqa: E402

FACTS = [os.path.join(SPEC_DIR, f) for f in ("versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml",
                                              "errors.yaml")]
JAX = os.path.join(SPEC_DIR, "profiles", "jax.yaml")
DEPTH = 5000  # issue 56: about 1000 ended in RecursionError


def chain(depth, root="root"):
    """{name: body} of profiles p0 … p<depth-1>, each extending the one before (p0 extends `root`); each sets its
    own export key and its own error message, so the merge at every level can be seen."""
    bodies = {}
    for i in range(depth):
        bodies["p%d" % i] = {"extends": root if i == 0 else "p%d" % (i - 1), "name": "p%d" % i, "doc": "d",
                             "export": {"level_%d" % i: i, "last": i},
                             "errors": [{"id": "e%d" % (i % 3), "message": "from p%d" % i}]}
    return bodies


class DeepChain(unittest.TestCase):
    """profile_extends.resolve on a chain far deeper than Python's recursion limit."""

    def test_every_level_merges(self):
        bases = dict(chain(DEPTH), root={"name": "root", "doc": "r", "export": {"kept": True}})
        merged, origins = profile_extends.resolve_with_origins(bases["p%d" % (DEPTH - 1)], bases)
        self.assertEqual(merged["name"], "p%d" % (DEPTH - 1))
        self.assertTrue(merged["export"]["kept"])
        self.assertEqual(merged["export"]["last"], DEPTH - 1)
        self.assertEqual({k: v for k, v in merged["export"].items() if k.startswith("level_")},
                         {"level_%d" % i: i for i in range(DEPTH)})
        for n in range(3):  # each error's message comes from the deepest profile that sets it
            last = max(i for i in range(DEPTH) if i % 3 == n)
            self.assertEqual(origins["e%d" % n], {"message": "p%d" % last})
        self.assertNotIn("extends", bases["root"], "the bases are not modified")
        self.assertEqual(bases["p0"]["export"], {"level_0": 0, "last": 0})

    def test_cycle_at_the_far_end(self):
        bases = chain(DEPTH, root="p%d" % (DEPTH - 1))  # p0 extends the child itself
        with self.assertRaisesRegex(profile_extends.ExtendsError, r"key 'extends': p\d+ extends itself"):
            profile_extends.resolve(bases["p%d" % (DEPTH - 1)], bases)


class DeepChainInCheckSpec(unittest.TestCase):
    """`check_spec.py --base_profile …` on DEPTH profile files, the deepest of them checked."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dlmap_extends_depth_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def write_chain(self, root):
        paths = []
        for name, body in chain(DEPTH, root).items():
            body = {key: body[key] for key in ("extends", "name", "doc")}  # a real profile's keys are checked
            paths.append(os.path.join(self.tmp, name + ".yaml"))
            with open(paths[-1], "w", encoding="utf-8") as handle:
                yaml.safe_dump({"profile": body}, handle)
        return paths

    def check(self, paths):
        args = [a for p in [JAX] + paths[:-1] for a in ("--base_profile", p)] + FACTS + [paths[-1]]
        return subprocess.run([PYTHON, "-B", os.path.join(CODEGEN_DIR, "check_spec.py")] + args, cwd=self.tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=240)

    def test_deep_chain_passes(self):
        result = self.check(self.write_chain("jax"))
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assertTrue(result.stdout.startswith("spec OK: profile p%d," % (DEPTH - 1)), result.stdout)

    def test_cycle_is_a_spec_error_naming_the_file(self):
        paths = self.write_chain("p%d" % (DEPTH - 2))  # p0 extends p<DEPTH-2>: a cycle below the checked file
        result = self.check(paths)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertNotIn("Traceback", result.stderr)
        self.assertTrue(result.stderr.startswith("dlmap spec error: %s: profile: key 'extends': " % paths[-1]),
                        result.stderr[:500])
        self.assertIn("extends itself", result.stderr)


if __name__ == "__main__":
    unittest.main()
