# dlmap Python binding tests — device_allocator_callbacks_test: dlmap.set_device_allocator's callables misbehaving, on
# the extension built over the fake CUDA runtime of tests/gpu (//python:fake_gpu/dlmap.so), where dlmap takes device
# memory from them.
"""A release that raises has no caller to raise to: its exception goes to sys.unraisablehook, naming the callable,
and the buffer still counts as given back. An allocate that is a C function raising without a Python frame (no
traceback) still becomes the catalogue's out_of_memory with that exception as its __cause__."""

import ctypes
import sys
import unittest

import dlmap
import testing

# The copy of the fake runtime that dlmap.so loaded (found by its soname).
fake = ctypes.CDLL("libdlmap_fake_gpu.so")
fake.fakeMallocAsync.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_void_p]
fake.fakeFreeAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p]


class Pool:
    """A framework's allocator over the fake's pool whose release gives the memory back, then raises."""

    def __init__(self):
        self.live = {}
        self.raised = []

    def allocate(self, nbytes, device, stream):
        pointer = ctypes.c_void_p()
        if fake.fakeMallocAsync(ctypes.byref(pointer), nbytes, None if stream == -1 else stream) != 0:
            return 0
        self.live[pointer.value] = nbytes
        return pointer.value

    def release(self, pointer, stream):
        fake.fakeFreeAsync(pointer, None if stream == -1 else stream)
        del self.live[pointer]
        error = KeyError(f"release of {pointer:#x}")
        self.raised.append(error)
        raise error


class CallbacksTest(testing.DlmapTestCase):
    def setUp(self):
        super().setUp()
        self.addCleanup(dlmap.set_device_allocator, None)
        self.unraisable = []
        hook = sys.unraisablehook
        sys.unraisablehook = self.unraisable.append
        self.addCleanup(setattr, sys, "unraisablehook", hook)

    def test_release_that_raises_goes_to_the_unraisable_hook(self):
        pool = Pool()
        dlmap.set_device_allocator(pool.allocate, pool.release)
        a = dlmap.empty((4,), device=(2, 0))
        self.assertEqual(len(pool.live), 1)
        del a
        self.assertEqual(pool.live, {}, "the buffer was given back")
        self.assertEqual(len(pool.raised), 1, "release called once")
        self.assertEqual(len(self.unraisable), 1)
        self.assertIs(self.unraisable[0].exc_value, pool.raised[0])
        self.assertEqual(self.unraisable[0].object, pool.release)

    def test_allocate_that_raises_without_a_traceback(self):
        # divmod(nbytes, device, stream): a C function refusing three arguments, with no Python frame in between
        dlmap.set_device_allocator(divmod, print)
        kind, template = testing.profile_error(dlmap.profile(), "out_of_memory")
        with self.assertRaises(kind) as ctx:
            dlmap.empty((4,), device=(2, 0))
        self.assertEqual(str(ctx.exception), template.format(nbytes=16, what="a device copy"))
        cause = ctx.exception.__cause__
        self.assertIs(type(cause), TypeError)
        self.assertEqual(str(cause), "divmod expected 2 arguments, got 3")
        self.assertIsNone(cause.__traceback__)
        self.assertEqual(self.unraisable, [])


if __name__ == "__main__":
    unittest.main()
