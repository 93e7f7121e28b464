# dlmap Python binding tests — a device buffer whose release would call a framework's Python device allocator after
# the interpreter has finalised (python/capsule.c's dlmap_py_run_in_interpreter, over the fake CUDA runtime of
# tests/gpu): the deleter of a device copy, run by a C atexit handler (dlmap._call_deleter_at_exit), returns without
# calling into the finalised interpreter (NumPy's rule: leak rather than crash), and the process exits normally.
import unittest

import testing

CHILD = """
    import ctypes
    import dlmap, testing
    fake = ctypes.CDLL("libdlmap_fake_gpu.so")  # the copy dlmap.so loaded (found by its soname)
    fake.fakeMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    fake.fakeFree.argtypes = [ctypes.c_void_p]
    calls = []

    def allocate(nbytes, device, stream):
        pointer = ctypes.c_void_p()
        if fake.fakeMalloc(ctypes.byref(pointer), nbytes) != 0:
            return 0
        calls.append("allocate")
        return pointer.value

    def release(pointer, stream):
        calls.append("release")
        fake.fakeFree(pointer)

    dlmap.set_device_allocator(allocate, release)
    host = dlmap.empty((4,))
    capsule = host.__dlpack__(max_version=(1, 3), dl_device=(2, 0), copy=True)  # a device copy from the allocator
    tensor = testing.versioned_tensor(capsule)
    testing.rename_capsule(capsule, testing.NAME_VERSIONED_USED)  # consumed: the deleter is the at-exit handler's
    dlmap._call_deleter_at_exit(tensor.deleter, ctypes.addressof(tensor))
    print(calls, flush=True)
"""


class AfterFinalizationTest(unittest.TestCase):
    def test_a_device_copy_released_after_finalization_leaks(self):
        rc, out, err = testing.run_child(CHILD)
        self.assertEqual((rc, out), (0, "['allocate']\n"), err)
        self.assertEqual(err, "dlmap: a deleter returned at exit\n", "the deleter returned, no release attempted")


if __name__ == "__main__":
    unittest.main()
