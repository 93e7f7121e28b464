# dlmap Python binding tests — the testing hooks' own contracts (python/testing_hooks.c): how dlmap._fail_allocations,
# dlmap._watch_gil, dlmap._call_deleter_on_thread and dlmap._call_deleter_at_exit refuse bad arguments, that every
# deleter registered at exit runs even when stderr is gone, how the guarded capsule destructor treats a capsule without
# a callback and a callback that raises, and what dlmap._counts_references says about this build.
import ctypes
import sys
import unittest

import dlmap
import testing
from testing import DlmapTestCase, profile_error

PROFILE = "array_api"  # //python/array_api:dlmap.so, the module this test runs on (python/BUILD)


def catalogue_text(error_id, **args):
    """(exception class, text) of a catalogue error under this module's profile, its template filled in."""
    kind, template = profile_error(PROFILE, error_id)
    return kind, template.format(**args)


class RaisingBool:
    """An object whose truth value cannot be read."""

    def __bool__(self):
        raise ZeroDivisionError("no truth here")


class ArgumentTest(DlmapTestCase):
    def test_fail_allocations_takes_an_int(self):
        with self.assertRaises(TypeError):
            dlmap._fail_allocations("1")
        with self.assertRaises(OverflowError):
            dlmap._fail_allocations(2 ** 70)
        self.assertIsNotNone(dlmap.empty(3), "a refused count arms no failure")
        dlmap._fail_allocations(-1)  # -1 is a count (none), not PyLong_AsLongLong's error value
        self.assertIsNotNone(dlmap.empty(3), "a negative count arms no failure")

    def test_watch_gil_passes_on_a_truth_value_error(self):
        with self.assertRaisesRegex(ZeroDivisionError, "^no truth here$"):
            dlmap._watch_gil(RaisingBool())
        dlmap.empty(3)
        self.assertEqual(dlmap._stats()["allocations_without_gil"], 0, "watching stays off")

    def test_call_deleter_on_thread_takes_only_unconsumed_capsules(self):
        kind, text = catalogue_text("capsule_consumed", expected="dltensor_versioned", got="NULL")
        e = self.assertRaisesExactly(kind, text, dlmap._call_deleter_on_thread, 42)
        self.assertEqual(e.dlmap_id, "capsule_consumed")
        nameless = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
            ("PyCapsule_New", ctypes.pythonapi))(1, None, None)  # a capsule named NULL, no destructor
        self.assertRaisesExactly(kind, text, dlmap._call_deleter_on_thread, nameless)
        a = dlmap.empty(3)
        capsule = a.__dlpack__(max_version=(1, 0))
        dlmap._call_deleter_on_thread(capsule)  # consumes it: its deleter ran once, on another thread
        self.assertEqual(testing.capsule_name(capsule), "used_dltensor_versioned")
        kind, text = catalogue_text("capsule_consumed", expected="dltensor_versioned", got="used_dltensor_versioned")
        self.assertRaisesExactly(kind, text, dlmap._call_deleter_on_thread, capsule)
        del capsule
        self.assertEqual(dlmap._stats()["live_exports"], 0, "the export was released exactly once")


# A child registers free(NULL) (a deleter that does nothing) or puts(text) at exit: the C library's own functions, so
# that the deleter and what it reads outlive the interpreter's finalisation.
CHILD_PRELUDE = """
    import ctypes
    import dlmap
    libc = ctypes.CDLL(None)
    FREE = ctypes.cast(libc.free, ctypes.c_void_p).value
    PUTS = ctypes.cast(libc.puts, ctypes.c_void_p).value
    libc.malloc.restype = ctypes.c_void_p

    def c_text(text):
        # a NUL-terminated copy in malloc'ed memory, never freed: still there after Py_FinalizeEx
        data = text.encode() + b"\\0"
        address = libc.malloc(len(data))
        ctypes.memmove(address, data, len(data))
        return address

    def refusal(*args):
        try:
            dlmap._call_deleter_at_exit(*args)
        except Exception as e:
            return f"{type(e).__name__}|{getattr(e, 'dlmap_id', None)}|{e}"
        return "accepted"
"""

RETURNED = "dlmap: a deleter returned at exit\n"
AT_EXIT_MAX = 8  # DLMAP_PY_AT_EXIT_MAX in python/testing_hooks.c: the slots the checker's shutdown row needs


class AtExitTest(unittest.TestCase):
    def test_refusals_and_the_limit(self):
        rc, out, err = testing.run_child(CHILD_PRELUDE + f"""
    print(refusal("x", 0))
    print(refusal(0, 0))
    print([refusal(FREE, 0) for _ in range({AT_EXIT_MAX})].count("accepted"))
    print(refusal(FREE, 0))
""")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("TypeError|None|"), lines[0])
        kind, text = catalogue_text("invalid_argument", argument="deleter", reason="must not be NULL")
        self.assertEqual(lines[1], f"{kind.__name__}|invalid_argument|{text}")
        self.assertEqual(lines[2], str(AT_EXIT_MAX), "every slot takes a deleter")
        kind, text = catalogue_text("invalid_argument", argument="deleter", reason="too many at exit")
        self.assertEqual(lines[3], f"{kind.__name__}|invalid_argument|{text}")
        self.assertEqual(err, RETURNED * AT_EXIT_MAX, "each registered deleter ran once at exit, the refused ones never")

    def test_every_deleter_runs_when_stderr_is_gone(self):
        # The line after each deleter cannot be written once fd 2 is closed: the next deleter must still run.
        rc, out, err = testing.run_child(CHILD_PRELUDE + """
    import os
    print(refusal(PUTS, c_text("first deleter")), flush=True)
    print(refusal(PUTS, c_text("second deleter")), flush=True)
    os.close(2)
""")
        self.assertEqual(rc, 0)
        self.assertEqual(err, "", "nothing could be written to the closed stderr")
        self.assertEqual(out.splitlines(), ["accepted", "accepted", "first deleter", "second deleter"])


class GuardedDestructorTest(DlmapTestCase):
    NAME = b"guarded_destructor_test"  # a capsule's name must outlive it: a class attribute

    def setUp(self):
        super().setUp()
        self.unraisable = []
        hook = sys.unraisablehook
        sys.unraisablehook = self.unraisable.append
        self.addCleanup(setattr, sys, "unraisablehook", hook)
        self.new_capsule = ctypes.pythonapi.PyCapsule_New
        self.new_capsule.restype = ctypes.py_object
        self.new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

    def test_without_a_callback_nothing_is_called(self):
        capsule = self.new_capsule(1, self.NAME, dlmap._guarded_capsule_destructor())
        del capsule
        self.assertEqual(self.unraisable, [])

    def test_a_callback_is_called_once_with_the_capsule(self):
        calls = []
        capsule, keep = testing._dlpack.new_capsule_calling(1, self.NAME.decode(), calls.append)
        self.assertIsNone(keep, "dlmap's C destructor holds the callback in the capsule's context")
        address = id(capsule)
        del capsule
        self.assertEqual(calls, [address])
        self.assertEqual(self.unraisable, [])

    def test_a_raising_callback_is_reported_and_released(self):
        calls = []

        def callback(address):
            calls.append(address)
            raise KeyError("callback failed")

        capsule, keep = testing._dlpack.new_capsule_calling(1, self.NAME.decode(), callback)
        self.assertIsNone(keep, "dlmap's C destructor holds the callback in the capsule's context")
        address = id(capsule)
        references = sys.getrefcount(callback)
        del capsule
        self.assertEqual(calls, [address])
        self.assertEqual(len(self.unraisable), 1)
        self.assertIs(type(self.unraisable[0].exc_value), KeyError)
        self.assertIs(self.unraisable[0].object, callback)
        del self.unraisable[:]  # the report held the callback
        self.assertEqual(sys.getrefcount(callback), references - 1, "the context's reference was released")


class CountsReferencesTest(unittest.TestCase):
    def test_matches_the_interpreter_this_module_was_built_for(self):
        # The module under test is built for the interpreter running it (python/BUILD): the debug one counts.
        self.assertIs(dlmap._counts_references(), hasattr(sys, "gettotalrefcount"))


if __name__ == "__main__":
    unittest.main()
