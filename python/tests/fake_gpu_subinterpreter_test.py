# dlmap Python binding tests — a framework's device allocator installed in the main interpreter and used by a
# sub-interpreter (python/capsule.c's dlmap_py_run_in_interpreter, over the fake CUDA runtime of tests/gpu): the
# sub-interpreter's dlmap.empty on the device takes its buffer from the main interpreter's allocate, and dropping the
# array there, with the sub-interpreter's GIL held, gives it back through the main interpreter's release exactly once.
import ctypes
import importlib
import unittest

import dlmap
import testing
from testing import DlmapTestCase

# The copy of the fake runtime that dlmap.so loaded (found by its soname).
fake = ctypes.CDLL("libdlmap_fake_gpu.so")
fake.fakeMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
fake.fakeFree.argtypes = [ctypes.c_void_p]


class Ledger:
    """A device allocator over the fake's memory that records its calls and whether each ran in the main
    interpreter (its objects belong there)."""

    def __init__(self):
        self.calls, self.live = [], {}

    def allocate(self, nbytes, device, stream):
        pointer = ctypes.c_void_p()
        if fake.fakeMalloc(ctypes.byref(pointer), nbytes) != 0:
            return 0
        self.live[pointer.value] = nbytes
        self.calls.append(("allocate", device, in_main()))
        return pointer.value

    def release(self, pointer, stream):
        del self.live[pointer]  # a pointer it never made, or given back twice, raises
        fake.fakeFree(pointer)
        self.calls.append(("release", in_main()))


def _interpreters():
    for name in ("_interpreters", "_xxsubinterpreters"):  # 3.13+, 3.11 and 3.12
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


INTERPRETERS = _interpreters()


def in_main():
    """Whether the calling thread runs the main interpreter (the C module reads the current thread state)."""
    current, main = INTERPRETERS.get_current(), INTERPRETERS.get_main()
    return (current[0] if isinstance(current, tuple) else current) == (main[0] if isinstance(main, tuple) else main)


class SubinterpreterDeviceAllocatorTest(DlmapTestCase):
    def test_a_subinterpreters_device_buffer_goes_through_the_main_allocator(self):
        run, how = testing.subinterpreter_runner()
        if run is None or INTERPRETERS is None:
            self.fail(how if run is None else "no _interpreters or _xxsubinterpreters module")
        ledger = Ledger()
        dlmap.set_device_allocator(ledger.allocate, ledger.release)
        self.addCleanup(dlmap.set_device_allocator, None)
        run("""
            import dlmap
            a = dlmap.empty((4,), device=(2, 0))
            assert a.device == (2, 0), a.device
            del a  # released here, this interpreter's GIL held
        """)
        self.assertEqual(ledger.calls, [("allocate", (2, 0), True), ("release", True)],
                         f"one buffer, taken and given back in the main interpreter ({how})")
        self.assertEqual(ledger.live, {})


if __name__ == "__main__":
    unittest.main()
