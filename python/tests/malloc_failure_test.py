# dlmap Python binding tests — an allocation the C library's malloc refuses (python/block_cache.c, python/allocator.c):
# a 1 TiB dlmap.empty is the catalogue's out_of_memory error, counted as no allocation, and the allocator serves the
# next request. dlmap._fail_allocations stops requests before malloc; this is malloc itself returning NULL. Run in a
# child so that, under ASan, the sanitizer returns NULL for the huge request instead of aborting
# (allocator_may_return_null=1, as hostile_property_test.py does).
import json
import os
import re
import subprocess
import sys
import unittest

from testing import profile_error

PROFILE = "array_api"  # //python/array_api:dlmap.so, the module this test runs on (python/BUILD)
TIB = 2 ** 40  # past any machine's memory and overcommit (and ASan's largest allocation)

CHILD = f"""
import json
import dlmap
before = dlmap._stats()
try:
    dlmap.empty(({TIB},), "uint8")
    outcome = None
except Exception as e:
    outcome = [type(e).__name__, getattr(e, "dlmap_id", None), str(e)]
after = dlmap._stats()
small = dlmap.empty((4,), "uint8").shape
print(json.dumps({{"outcome": outcome, "before": before, "after": after, "small": small}}))
"""


class MallocFailureTest(unittest.TestCase):
    def test_a_refused_malloc_is_out_of_memory(self):
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":allocator_may_return_null=1"
        r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        result = json.loads(r.stdout.strip().splitlines()[-1])
        kind, template = profile_error(PROFILE, "out_of_memory")
        name, error_id, text = result["outcome"]
        self.assertEqual((name, error_id), (kind.__name__, "out_of_memory"))
        # the bytes asked for are the data and dlmap's own header (at least the data); the rest is the catalogue's text
        pattern = re.escape(template).replace(r"\{nbytes\}", r"(\d+)").replace(r"\{what\}", "an export")
        match = re.fullmatch(pattern, text)
        self.assertIsNotNone(match, text)
        self.assertGreaterEqual(int(match.group(1)), TIB)
        for key in ["live_allocations", "total_allocations"]:
            self.assertEqual(result["after"][key], result["before"][key], f"{key}: a refused malloc is no allocation")
        self.assertEqual(result["small"], [4], "the next allocation is served")


if __name__ == "__main__":
    unittest.main()
