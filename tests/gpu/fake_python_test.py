# dlmap GPU tests — the Python binding over the fake GPU runtime (tests/gpu:fake_python/dlmap.so): from_dlpack's
# stream argument reaches the import's copy as the runtime's stream handle (issue 14: the copy ran on the legacy
# default stream whatever the consumer passed, so with non-blocking streams it could read unfinished data).
import ctypes
import sys
import unittest

import dlmap

FAKE = ctypes.CDLL("libdlmap_fake_gpu.so")  # the copy dlmap.so loaded (same soname)
FAKE.fake_gpu_last_memcpy_stream.restype = ctypes.c_void_p
FAKE.fake_gpu_reset.argtypes = [ctypes.c_int]
FAKE.fake_gpu_stream_create.restype = ctypes.c_void_p  # the only explicit stream handles the fake accepts
FAKE.fake_gpu_stream_destroy.argtypes = [ctypes.c_void_p]

CUDA = 2


class Producer:
    """Hands out one fake-CUDA capsule and remembers the stream it was asked to order its work before."""

    def __init__(self, capsule):
        self.capsule = capsule
        self.streams = []

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        return self.capsule

    def __dlpack_device__(self):
        return (CUDA, 0)


def device_capsule():
    """A legacy capsule of fake device memory (no IS_COPIED flag, so dlmap copies again when asked to)."""
    return dlmap.empty((64,)).__dlpack__(dl_device=(CUDA, 0))


class StreamOfImportCopies(unittest.TestCase):
    def setUp(self):
        status = dlmap.platform_status("cuda")
        self.assertTrue(status["available"], status["reason"])
        FAKE.fake_gpu_reset(2)

    def copy_stream(self, **kwargs):
        producer = Producer(device_capsule())
        FAKE.fake_gpu_reset(2)
        a = dlmap.from_dlpack(producer, copy=True, **kwargs)
        self.assertEqual(a.device, (CUDA, 0))
        return producer.streams[-1], FAKE.fake_gpu_last_memcpy_stream()

    def test_a_stream_handle_is_the_copys_stream(self):
        stream = FAKE.fake_gpu_stream_create()
        try:
            asked, copied_on = self.copy_stream(stream=stream)
        finally:
            FAKE.fake_gpu_stream_destroy(stream)
        self.assertEqual(asked, stream)
        self.assertEqual(copied_on, stream)

    def test_default_streams_are_the_runtimes_handles(self):
        self.assertEqual(self.copy_stream(stream=1), (1, 1))  # cudaStreamLegacy
        self.assertEqual(self.copy_stream(stream=2), (2, 2))  # cudaStreamPerThread
        self.assertEqual(self.copy_stream(), (None, 1))       # None: the legacy default stream

    def test_no_sync_copies_on_the_default_stream(self):
        self.assertEqual(self.copy_stream(stream=-1), (-1, None))

    def test_an_invalid_stream_is_refused_before_the_producer_is_asked(self):
        producer = Producer(device_capsule())
        with self.assertRaises(ValueError):
            dlmap.from_dlpack(producer, copy=True, stream=0)
        self.assertEqual(producer.streams, [])


if __name__ == "__main__":
    sys.exit(unittest.main())
