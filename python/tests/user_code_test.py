# dlmap Python binding tests — Python code that runs inside dlmap's own calls (a class dict's str-subclass key
# comparing itself, __bases__ and __class__ reassigned mid-lookup) and the caller's replaced __builtins__ (issue 23).
"""Each reproducer runs in a child interpreter of its own (testing.run_child): a use after free there is a failing test,
not a dead test runner. The children free what dlmap borrowed and then refill the freed memory with junk, so that a
reference dlmap did not hold crashes at once instead of reading stale but intact memory."""
import textwrap
import unittest

import testing

# What a child prints last: its outcome, after the reproducer ran to the end.
OUTCOME = "print('outcome', outcome)"

# A str subclass whose hash collides with NAME: a class dict holding one compares it with NAME through its __eq__
# (Python code) whenever NAME is looked up there; ACT runs once, at the first such comparison.
COLLIDER = """
import gc

armed, spray = [], []

def refill():
    # Junk where freed objects were: descriptor-sized bytes, and tuples (MROs) whose items point at 0x41 bytes.
    junk = b"\\x41" * 1024
    spray.extend(b"\\x41" * 40 + bytes([i % 256]) for i in range(20000))
    spray.extend(tuple([junk] * n) for n in range(1, 8) for _ in range(100))

class Key(str):
    def __hash__(self):
        return hash(NAME)

    def __eq__(self, other):
        if armed and str.__eq__(other, NAME):
            armed.clear()
            ACT()
            gc.collect()
            refill()
        return False
"""


# A plain Python producer over a dlmap array, for the tests whose classes derive from it.
PRODUCER = """
import dlmap
inner = dlmap.empty(3)

class Producer:
    def __dlpack__(self, **kwargs):
        return inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return inner.__dlpack_device__()
"""


class BorrowedAcrossUserCodeTest(unittest.TestCase):
    def assertChild(self, name, body, outcome):
        """Runs body after the collider for `name`; the child must end by printing `outcome`."""
        code = f"NAME = {name!r}\n" + COLLIDER + PRODUCER + textwrap.dedent(body) + OUTCOME
        rc, out, err = testing.run_child(code, timeout=120)
        self.assertEqual(rc, 0, f"the child died (status {rc}):\n{err[-3000:]}")
        self.assertEqual(out.strip().splitlines()[-1], f"outcome {outcome}", err[-3000:])

    def test_descriptor_deleted_during_the_second_type_lookup(self):
        # lookup_methods' fast path: __dlpack__ is a C method descriptor only the class holds; looking up
        # __dlpack_device__ runs the collider, which deletes __dlpack__ from the class (freeing it). dlmap must hold
        # what it found, and call it: the descriptor refuses an int subclass instance, a clean TypeError.
        self.assertChild("__dlpack_device__", """
            import importlib.util
            import dlmap
            def fresh_method_descriptor():
                # Struct.pack of a new copy of _struct (multi-phase init: new heap types per module object), which
                # nothing else holds once dropped from the class below.
                spec = importlib.util.find_spec("_struct")
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module.Struct.__dict__["pack"]

            def ACT():
                del C.__dlpack__

            # No instance dict and the generic getattr: dlmap reads the type's descriptors directly.
            C = type("C", (int,), {Key("collider"): 1, "__slots__": (), "__dlpack_device__": int.as_integer_ratio})
            C.__dlpack__ = fresh_method_descriptor()
            armed.append(True)
            try:
                dlmap.from_dlpack(C(1))
                outcome = "ok"
            except TypeError as e:
                outcome = "TypeError" if "_struct.Struct" in str(e) else repr(e)
        """, "TypeError")

    def test_bases_reassigned_during_the_integer_form_walk(self):
        # integer_form walks the type's MRO dict by dict; the collider reassigns __bases__, which frees the MRO tuple
        # being walked. dlmap must hold it: the walk ends on the old MRO and the producer's own __dlpack__ answers.
        self.assertChild("__c_dlpack_exchange_api__", """
            class B1: pass
            class B2: pass

            def ACT():
                C.__bases__ = (B2, Producer)

            C = type("C", (B1, Producer), {Key("collider"): 1})
            x = C()
            armed.append(True)
            outcome = dlmap.from_dlpack(x).via
        """, "dltensor_versioned")

    def test_class_reassigned_and_the_type_collected_mid_lookup(self):
        # x's class is reassigned by a collider in its class dict, and a second collider in a base collects the old
        # class (nothing but dlmap's borrowed pointers point at it then) while dlmap still walks it.
        self.assertChild("__c_dlpack_exchange_api__", """
            class Later(str):  # fires at the second comparison: in the base's dict, after the class changed
                def __hash__(self):
                    return hash(NAME)

                def __eq__(self, other):
                    if later and str.__eq__(other, NAME):
                        later.clear()
                        gc.collect()
                        refill()
                    return False

            later = []
            B = type("B", (Producer,), {Later("later"): 1})
            class D(Producer): pass
            holder = []

            def ACT():
                holder[0].__class__ = D
                later.append(True)

            def make():
                return type("C", (B,), {Key("collider"): 1})()  # its class is reachable only through it

            holder.append(make())
            armed.append(True)
            outcome = dlmap.from_dlpack(holder[0]).via
        """, "dltensor_versioned")

    def test_exchange_api_answer_is_not_remembered_for_a_type_that_changed(self):
        # The collider gives the type a base that publishes dlmap's own exchange table, and a new version tag (an
        # attribute lookup on the class). The first call's walk saw the old MRO; its answer (no table) must not be
        # remembered under the new tag: the second call finds the table, whose functions accept only dlmap.Array.
        self.assertChild("__c_dlpack_exchange_api__", """
            class Publishes:
                __dlpack_c_exchange_api__ = dlmap.Array.__dlpack_c_exchange_api__

            class B1: pass
            old_mros = []

            def ACT():
                old_mros.append(C.__mro__)  # kept: only the remembered answer is under test here
                C.__bases__ = (Publishes, Producer)
                getattr(C, "anything", None)  # CPython gives the changed type a new version tag

            C = type("C", (B1, Producer), {Key("collider"): 1})
            x = C()
            getattr(C, "anything", None)
            armed.append(True)
            first = dlmap.from_dlpack(x).via
            try:
                second = dlmap.from_dlpack(x).via
            except TypeError as e:
                second = getattr(e, "dlmap_id", None)
            outcome = f"{first} {second}"
        """, "dltensor_versioned argument_type_invalid")


class ReplacedBuiltinsTest(unittest.TestCase):
    def test_exception_classes_come_from_the_builtins_module(self):
        # Code run under a replaced __builtins__ (every exception name an impostor class, one of them freeing itself
        # while dlmap constructs it) still gets the builtin classes, the same as without the replacement.
        rc, out, err = testing.run_child("""
            import builtins, gc
            import dlmap

            CALLS = '''[lambda: dlmap.empty("x"), lambda: dlmap.empty((2,), "nope"), lambda: dlmap.from_dlpack(1),
                        lambda: dlmap.empty((2 ** 62, 2 ** 62)), lambda: dlmap.empty(2).__dlpack__(stream=5)]'''

            def raised(calls):
                out = []
                for call in calls:
                    try:
                        call()
                        out.append(None)
                    except BaseException as e:
                        out.append(type(e))
                return out

            fake = {}

            class Vanishing(Exception):
                def __new__(cls, *args):
                    fake.clear()
                    return TypeError(*args)

            for name in dir(builtins):
                if name.endswith("Error"):
                    fake[name] = type(name, (Exception,), {})
            fake["TypeError"] = Vanishing
            del Vanishing
            fake_globals = {"__builtins__": fake, "dlmap": dlmap}
            under_fake = raised(eval(CALLS, fake_globals))
            expected = raised(eval(CALLS, {"dlmap": dlmap}))
            assert None not in expected, expected
            print("outcome", "same" if under_fake == expected else f"{under_fake} != {expected}")
        """, timeout=120)
        self.assertEqual(rc, 0, f"the child died (status {rc}):\n{err[-3000:]}")
        self.assertEqual(out.strip().splitlines()[-1], "outcome same", err[-3000:])


if __name__ == "__main__":
    unittest.main(verbosity=2)
