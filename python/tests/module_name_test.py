# dlmap Python binding tests — the import name a build chooses (dlmap_python_module's module_name): a team's module
# over its own spec and upstream's `dlmap` import side by side in one interpreter, each showing its own name.
"""usage: module_name_test.py ACME_MODULE_SO (PYTHONPATH already holds the `dlmap` module run_python.sh was given).

The pair is imported in a child interpreter of its own (testing.run_child): a clash of init functions or symbols
between the two is a failing test, not a dead test runner."""
import os
import sys
import unittest

import testing

ACME = os.path.abspath(sys.argv[1])
NAME = os.path.basename(ACME)[:-len(".so")]

BOTH = """
import sys
sys.path.insert(0, %r)
import dlmap, %s as acme
print("names", dlmap.__name__, acme.__name__)
print("types", dlmap.Array.__module__, dlmap.Array.__qualname__, acme.Array.__module__, acme.Array.__qualname__)
print("distinct", dlmap.Array is not acme.Array)
print("profiles", dlmap.profile(), acme.profile())
a = acme.empty((2, 3), "float64")
print("repr", repr(a).split("(")[0], repr(dlmap.empty(1)).split("(")[0])
b = dlmap.from_dlpack(a)           # acme's array into upstream's module, and back
c = acme.from_dlpack(b)
print("exchanged", type(b).__module__, type(c).__module__, c.shape)
try:
    acme.from_dlpack(object())
except Exception as e:
    print("error", type(e).__name__, e.dlmap_id)
"""


class ModuleNameTest(unittest.TestCase):
    def test_both_modules_in_one_interpreter(self):
        self.assertNotEqual(NAME, "dlmap")
        code, out, err = testing.run_child(BOTH % (os.path.dirname(ACME), NAME))
        self.assertEqual(code, 0, out + err)
        lines = dict(line.split(" ", 1) for line in out.splitlines())
        self.assertEqual(lines["names"], "dlmap %s" % NAME)
        self.assertEqual(lines["types"], "dlmap Array %s Array" % NAME)
        self.assertEqual(lines["distinct"], "True")
        self.assertEqual(lines["repr"], "%s.Array dlmap.Array" % NAME)
        self.assertEqual(lines["exchanged"], "dlmap %s (2, 3)" % NAME)
        self.assertTrue(lines["error"].endswith(" from_dlpack_missing_methods"), lines["error"])

    def test_only_its_init_function_is_exported(self):
        code, out, err = testing.run_child("""
            import ctypes
            lib = ctypes.CDLL(%r)
            print(hasattr(lib, "PyInit_%s"), hasattr(lib, "PyInit_dlmap"), hasattr(lib, "dlmap_error_set"))
        """ % (ACME, NAME))
        self.assertEqual(code, 0, out + err)
        self.assertEqual(out.split(), ["True", "False", "False"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
