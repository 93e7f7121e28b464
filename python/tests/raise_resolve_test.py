# dlmap Python binding tests — how the public helpers of dlmap_python.h resolve each kind's exception class
# (python/exceptions.c), seen from an extension of their own (tests/raise_ext.c, whose PyInit does not resolve them):
# from the builtins module, on first use, once; a name there that is not a builtin exception class defined in C gives
# RuntimeError; a first use whose lookup fails (Python out of memory) gives RuntimeError and resolves on the next use.
# Each case needs a process whose extension has not resolved yet: a child of this one.
"""usage: raise_resolve_test.py RAISE_EXT_SO (dlmap.so's directory is on sys.path: run_python.sh)"""
import os
import subprocess
import sys
import textwrap
import unittest

EXT_DIR = os.path.dirname(os.path.abspath(sys.argv[1]))
sys.path.insert(0, EXT_DIR)

import dlmap_raise_ext as ext  # noqa: E402 - found through the path set just above


def _child(code):
    """Runs code in a fresh interpreter that finds both extensions; returns its stdout's last line."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([EXT_DIR] + sys.path[1:])
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise AssertionError("child failed (%d): %s" % (done.returncode, done.stderr))
    return done.stdout.strip().splitlines()[-1]


# The builtin class each kind resolves to here (a profile may map kinds to any builtin exception class).
KINDS = [ext.exception_type(kind).__name__ for kind in range(ext.kind_count())]


class RaiseResolveTest(unittest.TestCase):
    def test_init_again_keeps_the_classes(self):
        classes = [ext.exception_type(kind) for kind in range(len(KINDS))]
        self.assertEqual(ext.errors_init(), 0)
        self.assertEqual(ext.errors_init(), 0)
        self.assertEqual([ext.exception_type(kind) for kind in range(len(KINDS))], classes)

    def test_not_a_builtin_exception_class_gives_runtime_error(self):
        # Before the first use, builtins' names of four kinds are replaced: by a class from a class statement (a
        # heap type), by something not a class, by a builtin class that is no exception class, and removed. Those
        # kinds give RuntimeError; the others their class.
        self.assertGreaterEqual(len(set(KINDS)), 4, KINDS)
        names = sorted(set(KINDS))[:4]
        line = _child("""
            import builtins
            import dlmap_raise_ext as ext
            kinds = %r
            names = %r
            saved = {name: getattr(builtins, name) for name in names}
            class Impostor(Exception):
                pass
            setattr(builtins, names[0], Impostor)
            setattr(builtins, names[1], 42)
            setattr(builtins, names[2], dict)
            delattr(builtins, names[3])
            got = [ext.exception_type(kind) for kind in range(len(kinds))]
            for name, cls in saved.items():
                setattr(builtins, name, cls)
            print([cls.__name__ for cls in got])
            """ % (KINDS, names))
        want = ["RuntimeError" if name in names else name for name in KINDS]
        self.assertEqual(line, repr(want))

    def test_first_use_out_of_memory_resolves_later(self):
        # Python's first allocation under the first use fails (the lookup of the builtins module by name): that use
        # gives RuntimeError, raising nothing, and the next resolves every kind.
        line = _child("""
            import dlmap
            import dlmap_raise_ext as ext
            failed, result, exception = dlmap._call_failing_python_allocation(1, ext.exception_type, 0)
            print([failed, result.__name__, exception, [ext.exception_type(k).__name__ for k in range(%d)]])
            """ % len(KINDS))
        self.assertEqual(line, repr([True, "RuntimeError", None, KINDS]))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
