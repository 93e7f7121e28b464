# dlmap Python binding tests — the public C helpers for raising dlmap's errors (python/dlmap_python.h) from an
# extension of its own (tests/raise_ext.c, over the default library): every catalogue error raises the class its kind
# names under the library's profile (a profile may change a kind), with its id and code.
"""usage: raise_test.py SPEC_FACTS_PY SPEC_FILE... (the default library's spec, in order)"""
import importlib.util
import sys
import unittest

import dlmap_raise_ext as ext


def _spec():
    spec = importlib.util.spec_from_file_location("spec_facts", sys.argv[1])
    spec_facts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(spec_facts)
    return spec_facts.read(sys.argv[2:])


SPEC = _spec()


class RaiseTest(unittest.TestCase):
    def test_every_error_raises_its_kinds_class(self):
        import builtins
        for error in SPEC["errors"]:
            with self.subTest(error=error["id"]):
                with self.assertRaises(Exception) as caught:
                    ext.raise_code(error["code"])
                self.assertIs(type(caught.exception), getattr(builtins, error["kind"]))
                self.assertEqual(caught.exception.dlmap_id, error["id"])
                self.assertEqual(caught.exception.dlmap_code, error["code"])

    def test_exception_type_by_kind(self):
        import builtins
        kinds = [k["name"] for k in SPEC["exception_kinds"]]
        self.assertEqual(ext.kind_count(), len(kinds))
        for value, name in enumerate(kinds):
            self.assertIs(ext.exception_type(value), getattr(builtins, name))
        # The unknown-code fallback, and any value out of range.
        for value in (len(kinds), len(kinds) + 7, -1):
            self.assertIs(ext.exception_type(value), RuntimeError)

    def test_unknown_code(self):
        with self.assertRaises(RuntimeError) as caught:
            ext.raise_code(65535 if all(e["code"] != 65535 for e in SPEC["errors"]) else 0)
        self.assertEqual(caught.exception.dlmap_id, "unknown")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
