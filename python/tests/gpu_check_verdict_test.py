# dlmap Python binding — the verdict of python/gpu_check.py (gpu/check.sh's real-client step): 0 only when checks ran
# and none failed, 1 when one failed, 3 ("nothing checked", with the reason printed) when no framework could run or
# every check skipped. The frameworks are stand-ins here; each case runs main() in a child interpreter, so that one
# case's module state (RESULTS) is not another's.
import os
import subprocess
import sys
import unittest

GPU_CHECK = os.path.abspath(os.environ.get("GPU_CHECK", "python/gpu_check.py"))

# Each case: Python run in the child after gpu_check is imported as `g`, then sys.exit(g.main()).
PRELUDE = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("gpu_check", %r)
g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
""" % GPU_CHECK


def reporting(*reports):
    """Setup code: one stand-in framework whose checks make these g.report calls."""
    body = "".join("    %s\n" % line for line in reports)
    return ("class Reports:\n    name = 'reports'\n    version = '0'\n"
            "def run_framework(dlmap, np, fw):\n" + body +
            "g.FRAMEWORKS = (Reports,)\ng.run_framework = run_framework\n")


def run(setup):
    code = PRELUDE + setup + "\nsys.exit(g.main())\n"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return child.returncode, child.stdout + child.stderr


class Absent:
    pass


class Verdict(unittest.TestCase):
    def test_no_framework_is_nothing_checked(self):
        status, out = run("""
class NoDevice:
    name = "nodevice"
    def __init__(self):
        raise g.Skip("nodevice: no CUDA device")
class Missing:
    name = "missing"
    def __init__(self):
        raise ImportError("No module named 'missing'")
g.FRAMEWORKS = (NoDevice, Missing)
""")
        self.assertEqual(status, 3, out)
        self.assertIn("SKIP  nodevice: no CUDA device", out)
        self.assertIn("SKIP  missing: not installed", out)
        self.assertIn("nothing was checked", out)

    def test_every_check_skipped_is_nothing_checked(self):
        status, out = run("""
class SkipsAll:
    name = "skipsall"
    version = "0"
    def __getattr__(self, name):
        def skip(*args, **kwargs):
            raise g.Skip("skipsall cannot " + name)
        return skip
g.FRAMEWORKS = (SkipsAll,)
""")
        self.assertEqual(status, 3, out)
        self.assertIn("SKIP  skipsall -> dlmap", out)
        self.assertIn("nothing was checked: every check skipped", out)
        self.assertNotIn("PASS", out)

    def test_a_failed_check_is_fail(self):
        status, out = run(reporting('g.report("PASS", "one that ran")',
                                    'g.report("FAIL", "one that failed", "AssertionError")'))
        self.assertEqual(status, 1, out)

    def test_checks_that_ran_and_passed_are_pass(self):
        status, out = run(reporting('g.report("PASS", "one that ran")',
                                    'g.report("SKIP", "one that could not", "no stream objects")'))
        self.assertEqual(status, 0, out)
        self.assertIn("1 passed, 0 failed, 1 skipped", out)


if __name__ == "__main__":
    unittest.main()
