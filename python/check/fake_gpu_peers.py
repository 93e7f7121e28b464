# dlmap conformance checker — test helpers for gpu_peers_fake_gpu_test.sh, imported in the checker's child
# interpreters: the real stream of the fake CUDA runtime (tests/gpu/fake_gpu_runtime.c, which accepts only the stream
# handles it made and the documented constants), and peers that crash the process they run in — as a producer's
# __dlpack__, while their array is made, and as a consumer — so that the run must report each crash as a row and go on.
import ctypes

_runtime = ctypes.CDLL("libdlmap_fake_gpu.so")
_runtime.fake_gpu_stream_create.restype = ctypes.c_void_p
_runtime.fake_gpu_stream_create.argtypes = []


def stream():
    """A stream the fake runtime made (its handle), for gpu_peers --stream."""
    return _runtime.fake_gpu_stream_create()


def _segfault():
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def _cuda_device_type():
    """The spec's device type for CUDA device memory."""
    from dlmap.check.rules import Rules
    return next(v for v, d in Rules().devices.items() if d["platform"] == "cuda" and d["memory"] == "device")


class Crashes:
    """A CUDA producer (it reports the spec's CUDA device memory, device 0) whose __dlpack__ crashes the process on
    every call."""

    def __dlpack_device__(self):
        return (_cuda_device_type(), 0)

    def __dlpack__(self, **kwargs):
        _segfault()


def crashes_when_made():
    """A peer whose array cannot be made without crashing (a framework that dies initialising the device)."""
    _segfault()


def crash(x):
    """A consumer that crashes on every producer."""
    _segfault()
