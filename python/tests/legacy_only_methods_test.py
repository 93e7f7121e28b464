# dlmap Python binding tests — which refusals of max_version from_dlpack remembers per producer type
# (python/producers.c) for the method shapes protocol_test.py leaves out: a class attribute whose __get__ binds
# itself to the instance as a method (remembered: every instance gets the same method); an instance whose own
# __dlpack__ refuses while its class is remembered (not the type's refusal: the class is forgotten and asked
# versioned again); a __dlpack__ only the instance has (never remembered); and a remembered type evicted from the
# table by its own failing plain call (the TypeError propagates, the other entries untouched); an instance's own C
# method of another object (asked versioned, the class still remembered). What is remembered
# shows in dlmap._stats()["legacy_only_types"] and in the reference the table holds to the class.
import array
import sys
import types
import unittest

import dlmap
from testing import DlmapTestCase, Producer

TABLE = 8  # DLMAP_PY_LEGACY_TYPES (python/producers.c): the producer types remembered at once, replaced in turn


def float_buffer(n):
    return array.array("f", [float(i) for i in range(n)])


class PlainDlpack:
    """A __dlpack__ that is a callable object taking no max_version: a versioned call fails binding its __call__
    before any of its code runs, so the refusal is the same for every instance."""

    def __init__(self, producer):
        self.producer = producer

    def __call__(self, stream=None):
        return self.producer.__dlpack__(stream=stream)


class SelfBinding:
    """A class attribute that binds itself to the instance: x.__dlpack__ is types.MethodType(this object, x)."""

    def __init__(self, producer):
        self.producer = producer
        self.instances = []

    def __get__(self, instance, owner):
        return self if instance is None else types.MethodType(self, instance)

    def __call__(self, instance, stream=None):
        self.instances.append(instance)
        return self.producer.__dlpack__(stream=stream)


def remembered():
    return dlmap._stats()["legacy_only_types"]


def churn_table():
    """Fills the table with TABLE throwaway legacy types, replacing whatever a test remembered: every run of a test
    then leaves the table as full and holding as many references (Python's debug build runs each test again and
    counts them)."""
    for _ in range(TABLE):
        class Throwaway:
            __dlpack__ = PlainDlpack(Producer(float_buffer(3), (2, 32, 1), (3,)))

            def __dlpack_device__(self):
                return (1, 0)

        dlmap.from_dlpack(Throwaway())


class LegacyOnlyMethodTest(DlmapTestCase):
    def setUp(self):
        churn_table()
        super().setUp()

    def tearDown(self):
        churn_table()
        super().tearDown()

    def test_a_method_bound_from_the_types_own_attribute_is_remembered(self):
        producer = Producer(float_buffer(3), (2, 32, 1), (3,))

        class Legacy:
            __dlpack__ = SelfBinding(producer)

            def __dlpack_device__(self):
                return (1, 0)

        xs = [Legacy() for _ in range(3)]
        before, count = sys.getrefcount(Legacy), remembered()
        self.assertEqual([dlmap.from_dlpack(x).via for x in xs], ["dltensor"] * 3)
        self.assertEqual(Legacy.__dict__["__dlpack__"].instances, xs, "each bound to its instance, called plainly")
        self.assertEqual(producer.calls, [{"stream": None}] * 3, "one plain call per import after the first refusal")
        self.assertEqual((sys.getrefcount(Legacy), remembered()), (before + 1, min(count + 1, TABLE)), "remembered")

    def test_an_instances_own_refusal_forgets_the_class(self):
        class Legacy:
            __dlpack__ = PlainDlpack(Producer(float_buffer(3), (2, 32, 1), (3,)))

            def __dlpack_device__(self):
                return (1, 0)

        before, count = sys.getrefcount(Legacy), remembered()
        self.assertEqual(dlmap.from_dlpack(Legacy()).via, "dltensor")
        self.assertEqual((sys.getrefcount(Legacy), remembered()), (before + 1, min(count + 1, TABLE)), "remembered")
        held = remembered()
        own = Legacy()
        inner = Producer(float_buffer(3), (2, 32, 1), (3,))
        own.__dlpack__ = PlainDlpack(inner)  # refuses too, but it is this instance's, not the type's
        self.assertEqual(dlmap.from_dlpack(own).via, "dltensor")
        self.assertEqual(inner.calls, [{"stream": None}], "asked versioned (refused), then plainly")
        del own  # its reference to the class
        self.assertEqual((sys.getrefcount(Legacy), remembered()), (before, held - 1), "the class is forgotten")

    def test_an_instances_own_c_method_is_asked_versioned(self):
        # The class is remembered; an instance carries a C method bound to another object (a dlmap array's
        # __dlpack__): not the type's method, so the instance is asked versioned, and its answer is versioned.
        class Legacy:
            __dlpack__ = PlainDlpack(Producer(float_buffer(3), (2, 32, 1), (3,)))

            def __dlpack_device__(self):
                return (1, 0)

        before = sys.getrefcount(Legacy)
        self.assertEqual(dlmap.from_dlpack(Legacy()).via, "dltensor")
        self.assertEqual(sys.getrefcount(Legacy), before + 1, "remembered")
        own = Legacy()
        inner = dlmap.empty(3)
        own.__dlpack__ = inner.__dlpack__
        self.assertEqual(dlmap.from_dlpack(own).via, "dltensor_versioned")
        del own
        self.assertEqual(sys.getrefcount(Legacy), before + 1, "still remembered: the instance's method took it")

    def test_an_instance_only_method_is_not_the_types(self):
        class Bare:  # no __dlpack__ of its own: the instance carries it
            def __dlpack_device__(self):
                return (1, 0)

        x = Bare()
        inner = Producer(float_buffer(3), (2, 32, 1), (3,))
        x.__dlpack__ = PlainDlpack(inner)
        before, count = sys.getrefcount(Bare), remembered()
        self.assertEqual([dlmap.from_dlpack(x).via for _ in range(2)], ["dltensor"] * 2)
        self.assertEqual(inner.calls, [{"stream": None}] * 2)
        self.assertEqual((sys.getrefcount(Bare), remembered()), (before, count), "not remembered")

    def test_a_type_evicted_during_its_own_failing_plain_call(self):
        # The remembered type's plain call imports eight other legacy types (the table holds eight, replaced in
        # turn), evicting this one, then raises TypeError: the error propagates and forgetting the type, no longer in
        # the table, touches none of the others' entries.
        def legacy_class():
            class Other:
                __dlpack__ = PlainDlpack(Producer(float_buffer(3), (2, 32, 1), (3,)))

                def __dlpack_device__(self):
                    return (1, 0)
            return Other

        class Evicting(PlainDlpack):
            fail = False

            def __call__(self, stream=None):
                if not self.fail:
                    return super().__call__(stream=stream)
                self.others = [legacy_class() for _ in range(TABLE)]
                for other in self.others:
                    dlmap.from_dlpack(other())
                raise TypeError("not a tensor today")

        class Legacy:
            __dlpack__ = Evicting(Producer(float_buffer(3), (2, 32, 1), (3,)))

            def __dlpack_device__(self):
                return (1, 0)

        before = sys.getrefcount(Legacy)
        self.assertEqual(dlmap.from_dlpack(Legacy()).via, "dltensor")
        self.assertEqual(sys.getrefcount(Legacy), before + 1, "remembered")
        method = Legacy.__dict__["__dlpack__"]
        method.fail = True
        self.assertRaisesExactly(TypeError, "not a tensor today", dlmap.from_dlpack, Legacy())
        self.assertEqual(sys.getrefcount(Legacy), before, "evicted by the other types")
        self.assertEqual(remembered(), TABLE, "the eight others stay remembered")
        del method.others


if __name__ == "__main__":
    unittest.main()
