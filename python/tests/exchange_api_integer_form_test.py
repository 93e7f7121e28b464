# dlmap Python binding tests — DLPack 1.2's integer form of the C exchange API (python/exchange_api.c) on a static type
# whose value is no usable address: not an int, the int 0, or an int past a pointer's width. Each is no table: the
# producer's Python methods serve the import, and reading the value leaves no exception behind. The value is planted
# in bytearray's type dict (a static type, the only kind trusted with an int) in a child interpreter, as
# exchange_api_test.py plants dlmap's own table. And a Python class whose dict lookup of that name raises: no table.
import unittest

import dlmap
import testing
from testing import DlmapTestCase

CHILD = """
    import ctypes, gc, json
    import dlmap
    inner = dlmap.empty(3)
    vias = []
    for value in [VALUES]:
        gc.get_referents(bytearray.__dict__)[0]["__c_dlpack_exchange_api__"] = value
        ctypes.pythonapi.PyType_Modified(ctypes.py_object(bytearray))

        class Inherits(bytearray):  # a new class per value: no cached answer
            def __dlpack__(self, **kwargs):
                return inner.__dlpack__(**kwargs)

            def __dlpack_device__(self):
                return inner.__dlpack_device__()

        vias.append(dlmap.from_dlpack(Inherits()).via)
    print(json.dumps(vias))
"""


class StaticTypeIntegerFormTest(unittest.TestCase):
    def test_values_that_are_no_address_are_no_table(self):
        values = ['"not an address"', "0", str(2 ** 64), str(-2 ** 70)]
        rc, out, err = testing.run_child(CHILD.replace("VALUES", ", ".join(values)))
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out, '["dltensor_versioned", "dltensor_versioned", "dltensor_versioned", '
                              '"dltensor_versioned"]\n', "each import through the Python methods")


class RaisingLookupTest(DlmapTestCase):
    def test_a_lookup_that_raises_is_no_table(self):
        # A class dict key that is a str subclass hashing like the 1.2 name: looking the name up compares it through
        # its __eq__, which raises. That lookup finds nothing (its exception cleared), and the Python methods serve.
        name = "__c_dlpack_exchange_api__"
        compared = []

        class RaisingKey(str):
            armed = False

            def __hash__(self):
                return hash(name)

            def __eq__(self, other):
                if not RaisingKey.armed:
                    return str.__eq__(self, other)
                compared.append(other)
                raise LookupError("a key that cannot be compared")

        inner = dlmap.empty(3)
        namespace = {RaisingKey("collider"): 1, "__dlpack__": lambda self, **kwargs: inner.__dlpack__(**kwargs),
                     "__dlpack_device__": lambda self: inner.__dlpack_device__()}
        Colliding = type("Colliding", (), namespace)
        RaisingKey.armed = True
        try:
            via = dlmap.from_dlpack(Colliding()).via
        finally:
            RaisingKey.armed = False
        self.assertEqual(via, "dltensor_versioned")
        self.assertEqual(compared, [name], "the 1.2 name was looked up once, through the raising key")


if __name__ == "__main__":
    unittest.main()
