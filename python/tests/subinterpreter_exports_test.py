# dlmap Python binding tests — exports from two sub-interpreters that live side by side on one thread, run in turn
# (A, B, then A again: python/capsule.c's note of the exporting thread state on Python 3.11, where A's thread state
# already carries the note's guard when it exports again). Each export's deleter runs where it was made, nothing
# deadlocks, and every allocation and export comes back. Run in a child: a deadlock is a hang there, not here.
import json
import unittest

import testing

# What each sub-interpreter runs: a capsule made and dropped (its deleter runs there), and an import of the array.
RUN = """
import dlmap
x = dlmap.empty(3)
c = x.__dlpack__(max_version=(1, 0))
y = dlmap.from_dlpack(x)
assert y.data_ptr == x.data_ptr, (y.data_ptr, x.data_ptr)
del c, x, y
"""

CHILD = f"""
import json
import dlmap
try:
    import _interpreters as interpreters  # 3.13+
except ImportError:
    import _xxsubinterpreters as interpreters  # 3.11, 3.12
create = lambda: interpreters.create("legacy") if hasattr(interpreters, "new_config") else interpreters.create()
a, b = create(), create()
failures = [interpreters.run_string(interp, {RUN!r}) for interp in (a, b, a)]
interpreters.destroy(a)
interpreters.destroy(b)
stats = dlmap._stats()
print(json.dumps({{"failures": [None if f is None else str(f) for f in failures],
                  "live": [stats["live_allocations"], stats["live_exports"]], "total": stats["total_allocations"]}}))
"""


class SideBySideSubinterpretersTest(unittest.TestCase):
    def test_exports_in_turn_from_two_subinterpreters(self):
        rc, out, err = testing.run_child(CHILD, timeout=120)
        self.assertEqual(rc, 0, f"the child crashed or hung: {err}")
        result = json.loads(out)
        self.assertEqual(result["failures"], [None, None, None], "each run completed")
        self.assertEqual(result["live"], [0, 0], "every allocation and export came back")
        self.assertEqual(result["total"], 3 * 3, "three runs, each an array, its export and the import's")


if __name__ == "__main__":
    unittest.main()
