# dlmap Python binding tests — a dlmap capsule whose name a consumer set to NULL (PyCapsule_SetName(capsule, NULL)), or
# a legacy one renamed to a name that is not "used_dltensor", is neither unconsumed nor consumed (python/capsule.c):
# when it dies, its destructor reports it as unraisable, with a context string (never the dying capsule), and does not
# run the deleter; whoever renamed it owns the tensor. Both capsule kinds, legacy and versioned.
import ctypes
import sys
import unittest

import dlmap
import testing
from testing import DlmapTestCase

CONTEXT = "the destructor of a dlmap DLPack capsule"


class NullNameTest(DlmapTestCase):
    def check(self, max_version, name, struct, new_name=None):
        a = dlmap.empty(3)
        capsule = a.__dlpack__(max_version=max_version)
        tensor = struct.from_address(testing.capsule_pointer(capsule, name))
        testing.rename_capsule(capsule, new_name)
        self.assertEqual(testing.capsule_name(capsule), None if new_name is None else new_name.decode())
        seen = []
        hook = sys.unraisablehook
        sys.unraisablehook = lambda args: seen.append((args.exc_type, args.object))
        try:
            del capsule
        finally:
            sys.unraisablehook = hook
        self.assertEqual(seen, [(ValueError, CONTEXT)])
        self.assertEqual(dlmap._stats()["live_exports"], 1, "the deleter did not run")
        testing.run_deleter(ctypes.pointer(tensor))  # the renamer's to release, once
        self.assertEqual(dlmap._stats()["live_exports"], 0)

    def test_versioned(self):
        self.check((1, 0), testing.NAME_VERSIONED, testing.DLManagedTensorVersioned)

    def test_legacy(self):
        self.check(None, testing.NAME_LEGACY, testing.DLManagedTensor)

    def test_legacy_renamed_to_another_name(self):
        # neither "dltensor" nor "used_dltensor": reported the same way (protocol_test.py does the versioned one)
        self.check(None, testing.NAME_LEGACY, testing.DLManagedTensor, testing.NAME_BOGUS)


if __name__ == "__main__":
    unittest.main()
