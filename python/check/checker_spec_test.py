# dlmap conformance checker — judging by the user's own spec: a package built by dlmap_check_package from a spec of its
# own (the facts, a profile named jax_acme, a vendor device overlay) judges by that profile with that spec's facts,
# names it and the shipped profiles as what --profile takes, and refuses an unknown name in one line. Run by
# run_test.sh with that package on PYTHONPATH.
import os
import subprocess
import sys
import tempfile
import unittest

import dlmap
import dlmap.check
from dlmap.check import rules

PROFILE = "jax_acme"      # python/check/BUILD's acme profile (jax.yaml under another name)
VENDOR_DEVICE = 200       # python/check/testdata/acme_device.yaml


def check(*args):
    return subprocess.run([sys.executable, "-m", "dlmap.check"] + list(args), capture_output=True, text=True,
                          timeout=600)


class CheckerSpecTest(unittest.TestCase):
    def test_module_and_package_agree(self):
        self.assertEqual(dlmap.profile(), PROFILE)
        self.assertEqual(rules.built_profile(), PROFILE)
        self.assertEqual(rules.profile_names()[0], PROFILE)
        self.assertLessEqual({"jax", "array_api"}, set(rules.profile_names()))

    def test_rules_use_the_built_spec(self):
        own = rules.Rules(PROFILE)
        self.assertEqual(own.profile_name, PROFILE)
        self.assertEqual(own.profile["export"], rules.Rules("jax").profile["export"])
        # The overlay's device type is known under every profile judged here, the standard's included.
        for profile in (PROFILE, rules.STANDARD_PROFILE):
            self.assertIn(VENDOR_DEVICE, rules.Rules(profile).devices)

    def test_dlmap_passes_under_its_profile(self):
        report = dlmap.check.producer("dlmap:empty((2, 3))", profile=PROFILE)
        self.assertTrue(report.passed("%s profile" % PROFILE), report.markdown())

    def test_command_line_judges_by_it(self):
        r = check("producer", "dlmap:empty((2, 3))", "--profile", PROFILE)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("%s profile" % PROFILE, r.stdout)

    def test_unknown_profile_is_one_line(self):
        for command in ("producer", "consumer"):
            r = check(command, "dlmap:from_dlpack" if command == "consumer" else "dlmap:empty(1)", "--profile", "nope")
            self.assertNotEqual(r.returncode, 0)
            self.assertNotIn("Traceback", r.stderr)
            self.assertEqual(r.stderr.strip().splitlines(), [
                "dlmap.check: unknown profile 'nope' (available: %s)" % ", ".join(rules.profile_names())])
        with self.assertRaises(rules.UnknownProfile):
            rules.Rules("nope")

    def test_a_profile_that_extends_a_shipped_one(self):
        """A built spec whose profile is `extends: jax` plus a change resolves among the shipped profiles (through
        codegen/profile_extends.py, shipped beside spec_facts.py)."""
        from dlmap.check import profile_extends  # noqa: F401
        spec = rules.Spec()
        with tempfile.TemporaryDirectory() as directory:
            built = os.path.join(directory, rules.BUILT_DIR)
            os.makedirs(built)
            os.symlink(os.path.join(spec.directory, "profiles"), os.path.join(directory, "profiles"))
            names = []
            for i, path in enumerate(spec.facts):
                names.append("%02d-%s" % (i, os.path.basename(path)))
                os.symlink(path, os.path.join(built, names[-1]))
            names.append("99-child.yaml")
            with open(os.path.join(built, names[-1]), "w", encoding="utf-8") as f:
                f.write("profile:\n  extends: jax\n  name: jax_child\n  doc: JAX's, versioned.\n"
                        "  errors:\n    - id: max_version_too_old\n      message: child text\n")
            with open(os.path.join(built, rules.BUILT_LIST), "w", encoding="utf-8") as f:
                f.write("".join(n + "\n" for n in names))
            child = rules.Rules("jax_child", directory=directory)
            self.assertEqual(child.profile_name, "jax_child")
            self.assertEqual(child.profile["export"], rules.Rules("jax").profile["export"])
            self.assertEqual(child.errors["max_version_too_old"]["message"], "child text")


if __name__ == "__main__":
    unittest.main()
