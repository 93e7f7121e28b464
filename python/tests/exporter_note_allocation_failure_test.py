# dlmap Python binding tests — on Python 3.11, an export from a sub-interpreter notes its thread state (python/capsule.c
# dlmap_py_note_exporter) with a guard object kept in the thread state's dict. With no memory for the guard or for
# its dict entry, the note is skipped and the export goes on: for every n, a fresh sub-interpreter's first export with
# its n-th Python allocation failing gives the capsule or MemoryError, the capsule's deleter runs where it was made,
# and every allocation and export comes back. Run in a child: a deadlock is a hang there, not here.
import json
import sys
import unittest

import testing

# What each sub-interpreter runs (FAILING_N and PIPE_FD filled in): an array, its first export with that allocation
# failing, the capsule dropped; whether that allocation came is written to the pipe.
RUN = """
import gc, os
import dlmap
x = dlmap.empty(3)
failed, capsule, error = dlmap._call_failing_python_allocation(FAILING_N, x.__dlpack__, max_version=(1, 0))
assert (capsule is None) != (error is None), (capsule, error)
assert error is None or isinstance(error, MemoryError), repr(error)
del x, capsule, error
gc.collect()
os.write(PIPE_FD, b"1" if failed else b"0")
"""

CHILD = f"""
import json, os
import dlmap
try:
    import _interpreters as interpreters  # 3.13+
except ImportError:
    import _xxsubinterpreters as interpreters  # 3.11, 3.12
create = lambda: interpreters.create("legacy") if hasattr(interpreters, "new_config") else interpreters.create()
read, write = os.pipe()
failures, swept = [], 0
for n in range(1, 500):
    interp = create()
    failure = interpreters.run_string(interp, {RUN!r}.replace("FAILING_N", str(n)).replace("PIPE_FD", str(write)))
    interpreters.destroy(interp)
    if failure is not None:
        failures.append(str(failure))
        break
    swept = n
    if os.read(read, 1) == b"0":
        break
stats = dlmap._stats()
print(json.dumps({{"failures": failures, "swept": swept,
                  "live": [stats["live_allocations"], stats["live_exports"]]}}))
"""


@unittest.skipUnless(sys.version_info < (3, 12), "the note is Python 3.11's (one GIL for every interpreter)")
class ExporterNoteAllocationFailureTest(unittest.TestCase):
    def test_each_allocation_of_a_first_export_failing(self):
        rc, out, err = testing.run_child(CHILD, timeout=300)
        self.assertEqual(rc, 0, f"the child crashed or hung: {err}")
        result = json.loads(out)
        self.assertEqual(result["failures"], [], "each run completed")
        self.assertGreater(result["swept"], 1, "the export made Python allocations")
        self.assertEqual(result["live"], [0, 0], "every allocation and export came back")


if __name__ == "__main__":
    unittest.main()
