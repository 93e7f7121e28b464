# dlmap codegen tests — readme_profile_test: README's "Write your own profile" snippet, taken verbatim, is a working
# profile: the generator's checker accepts it on dlmap's facts and the generated profile is the snippet's.
"""Run by hand:  cd codegen && /usr/bin/python3 -B tests/readme_profile_test.py
Under Bazel:  bazel test //codegen/tests:readme_profile_test
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CODEGEN_DIR = os.environ.get("DLMAP_CODEGEN_DIR") or os.path.dirname(HERE)
ROOT = os.path.dirname(CODEGEN_DIR)
SPEC_DIR = os.environ.get("DLMAP_SPEC_DIR") or os.path.join(ROOT, "spec")
PYTHON = os.environ.get("DLMAP_PYTHON") or sys.executable or "/usr/bin/python3"
FACTS = [os.path.join(SPEC_DIR, f) for f in ("versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml",
                                              "errors.yaml")]


def readme_snippet():
    """The first ```yaml block under README's "### Write your own profile", exactly as written."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("### Write your own profile\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"^```yaml\n(.*?)^```$", section, re.S | re.M)
    if match is None:
        raise AssertionError("README's 'Write your own profile' has no ```yaml block")
    return match.group(1)


class ReadmeProfile(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dlmap_readme_profile_")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.snippet = readme_snippet()
        self.path = os.path.join(self.tmp, "my_profile.yaml")
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write(self.snippet)

    def run_tool(self, script, args):
        return subprocess.run([PYTHON, "-B", os.path.join(CODEGEN_DIR, script)] + args, cwd=self.tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)

    def test_is_short(self):
        lines = [line for line in self.snippet.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        self.assertLessEqual(len(lines), 12, "README's profile is meant to be the shortest working one")
        self.assertIn("  extends: ", self.snippet)

    def test_check_accepts_it(self):
        """`dlmap spec check spec/*.yaml my_profile.yaml` runs check_spec.py on exactly these files."""
        result = self.run_tool("check_spec.py", FACTS + [self.path])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"^spec OK: profile jax_versioned,")

    def test_generates_its_profile(self):
        out = os.path.join(self.tmp, "profile.inc")
        shipped = [os.path.join(SPEC_DIR, "profiles", f) for f in sorted(os.listdir(os.path.join(SPEC_DIR, "profiles")))]
        result = self.run_tool("gen_c.py", [a for p in FACTS + [self.path] for a in ("--spec", p)] +
                               [a for p in shipped for a in ("--base_profile", p)] + ["--profile_inc", out])
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out, encoding="utf-8") as handle:
            rows = handle.read()
        self.assertIn('DLMAP_PROFILE_SETTING(name, "jax_versioned"', rows)
        self.assertIn("DLMAP_PROFILE_VERSION_RANGE(false, 0u, 0u, VERSIONED, OK, _)", rows)


if __name__ == "__main__":
    unittest.main()
