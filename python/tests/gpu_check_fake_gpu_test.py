# dlmap Python binding — python/gpu_check.py's rows and verdict over the fake CUDA runtime of tests/gpu
# (//python:fake_gpu/dlmap.so: host memory posing as device memory): gpu_check's own rows run against stand-in
# frameworks whose arrays live in the fake's device memory. A framework that refuses a stream value itself (as JAX
# 0.11.2 refuses __dlpack__(stream=-1) on CUDA) is a PEER row in its own words and cannot turn the verdict FAIL; a
# dlmap that misbehaves (a wrong data pointer, a refusal of its own) still makes it FAIL.
import contextlib
import ctypes
import importlib.util
import io
import os
import unittest

import numpy as np

import dlmap

GPU_CHECK = os.path.abspath(os.environ.get("GPU_CHECK", "python/gpu_check.py"))
_spec = importlib.util.spec_from_file_location("gpu_check", GPU_CHECK)
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)

# The copy of the fake runtime that dlmap.so loaded (found by its soname): its streams and its synchronisation.
fake = ctypes.CDLL("libdlmap_fake_gpu.so")
fake.fake_gpu_stream_create.restype = ctypes.c_void_p
fake.fake_gpu_stream_create.argtypes = []
fake.fake_gpu_synchronize_all.restype = ctypes.c_int

# JAX 0.11.2's words for __dlpack__(stream=-1) on the H200 (../shared/reference/h200-2026-12-04/gpu-check.log).
REFUSAL = "INTERNAL: CUDA error: : CUDA_ERROR_INVALID_HANDLE: invalid resource handle"


class PeerRuntimeError(RuntimeError):
    """The stand-in framework's own exception class, as JAX raises JaxRuntimeError."""


class Everything:
    """A `refuses` that holds every stream value, None (no stream argument) included."""

    def __contains__(self, stream):
        return True


class StandInArray:
    """A stand-in framework's array: a dlmap array in the fake's device memory behind the framework's own
    __dlpack__, which refuses the framework's `refuses` stream values and serves the others."""

    def __init__(self, fw, array):
        self.fw, self.array = fw, array

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if stream in self.fw.refuses:
            raise PeerRuntimeError(REFUSAL)
        asked = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
        return self.array.__dlpack__(stream=stream, **{k: v for k, v in asked.items() if v is not None})

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class StandIn:
    """A framework over the fake CUDA runtime with gpu_check's interface: arrays on fake device 0, real streams of the
    fake runtime, and an import (from_dlpack) that passes a stream of its own. No asynchronous producer, so the stream
    ordering rows skip. Accepts every stream value and sets up with -1, as PyTorch and CuPy."""

    name = "standin"
    version = "0 (fake CUDA runtime)"
    setup_stream = -1
    refuses = ()

    def __init__(self):
        self.consumer_stream = fake.fake_gpu_stream_create()

    def make(self, n=1 << 12):
        host = dlmap.empty((n,), "float32")
        np.asarray(memoryview(host))[:] = np.arange(n, dtype=np.float32)
        return StandInArray(self, dlmap.from_dlpack(host, device=(2, 0)))  # a copy to the fake device

    def ptr(self, x):
        return x.array.data_ptr

    def new_stream(self):
        return fake.fake_gpu_stream_create()

    def stream_handle(self, s):
        return s

    def produce_on(self, s, n=1 << 12):
        return self.make(n)

    def host(self, x):
        return np.asarray(memoryview(dlmap.from_dlpack(x.array, device=(1, 0))))

    def from_dlpack(self, obj):
        return StandInArray(self, dlmap.from_dlpack(obj, stream=self.consumer_stream))

    def synchronize(self):
        assert fake.fake_gpu_synchronize_all() == 0

    def ordering(self, dlmap, mode):
        raise gpu_check.Skip("the stand-in's producer has no work in flight to race with")


class JaxLike(StandIn):
    """As JAX 0.11.2 on the H200: refuses stream=-1 itself, and sets up with no stream argument."""

    name = "jaxlike"
    setup_stream = None
    refuses = (-1,)


class JaxLikeOldSetup(JaxLike):
    """JaxLike with the setup gpu_check used before (stream=-1): five rows start with the value it refuses."""

    name = "jaxlike_old_setup"
    setup_stream = -1


class RefusesEverything(StandIn):
    name = "refuses_everything"
    refuses = Everything()


class Misplaced:
    """A dlmap array that reports a data pointer one element past its memory."""

    def __init__(self, array):
        self._array = array

    def __getattr__(self, name):
        return getattr(self._array, name)

    @property
    def data_ptr(self):
        return self._array.data_ptr + 4

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class MisplacingDlmap:
    """A dlmap whose from_dlpack results lie about their data pointer: a defect of dlmap's."""

    def __getattr__(self, name):
        return getattr(dlmap, name)

    def from_dlpack(self, x, **kwargs):
        return Misplaced(dlmap.from_dlpack(x, **kwargs))


class NoSyncRefusingDlmap:
    """A dlmap that raises on stream=-1 itself, where the framework accepts it: a defect of dlmap's, never a PEER."""

    def __getattr__(self, name):
        return getattr(dlmap, name)

    def from_dlpack(self, x, **kwargs):
        if kwargs.get("stream") == -1:
            raise BufferError("this dlmap refuses stream=-1")
        return dlmap.from_dlpack(x, **kwargs)


def run(frameworks, module=dlmap):
    """gpu_check.main with these frameworks and this dlmap: (exit status, everything it printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = gpu_check.main(dlmap=module, frameworks=frameworks)
    return status, out.getvalue()


def rows(out, word):
    return [line[6:] for line in out.splitlines() if line.startswith(word + "  ")]


# gpu_check's rows that check dlmap and can run over the fake (the two stream ordering rows skip here).
DLMAP_ROWS = [
    "{0} -> dlmap, versioned capsule with the consumer's stream (pointer and version)",
    "{0} -> dlmap, default stream (C exchange API when published)",
    "{0} -> dlmap, stream=-1 (no synchronisation)",
    "dlmap -> {0}, the consumer passes its stream",
    "dlmap -> {0}, stream=-1 after explicit synchronisation",
    "{0} -> dlmap -> dlmap on CUDA through dlmap's C exchange API",
    "{0} CUDA array -> host through dl_device=(1, 0)",
]


class GpuCheckOverFakeGpu(unittest.TestCase):
    def test_the_fake_is_a_cuda_device(self):
        self.assertEqual(dlmap.platform_status("cuda")["available"], True)

    def test_a_framework_that_accepts_every_stream_passes_every_row(self):
        status, out = run((StandIn,))
        self.assertEqual(status, gpu_check.EXIT_PASS, out)
        self.assertEqual({row.split(": ")[0] for row in rows(out, "PASS")}, {r.format("standin") for r in DLMAP_ROWS},
                         out)
        self.assertEqual((rows(out, "FAIL"), rows(out, "PEER")), ([], []), out)

    def test_a_peer_refusing_stream_minus_one_is_a_peer_row_and_the_verdict_passes(self):
        status, out = run((JaxLike,))
        self.assertEqual(status, gpu_check.EXIT_PASS, out)
        self.assertEqual(rows(out, "PEER"),
                         ["jaxlike __dlpack__(stream=-1), called without dlmap: PeerRuntimeError: " + REFUSAL], out)
        self.assertEqual(rows(out, "FAIL"), [], out)
        no_sync = DLMAP_ROWS[2].format("jaxlike")
        self.assertIn(no_sync + ": jaxlike itself refuses __dlpack__(stream=-1) (the PEER row", out)
        # Every other row that checks dlmap ran and passed: the setup used a stream value the peer accepts.
        self.assertEqual({row.split(": ")[0] for row in rows(out, "PASS")},
                         {r.format("jaxlike") for r in DLMAP_ROWS} - {no_sync}, out)
        self.assertIn("gpu_check: 6 passed, 0 failed, 3 skipped, 1 refused by the peer", out)

    def test_a_refused_setup_stream_skips_rows_but_never_fails_them(self):
        # The H200's case before the fix: rows that set up with the refused value are SKIPs naming the PEER row (one
        # PEER row, not one per row), the verdict is not FAIL.
        status, out = run((JaxLikeOldSetup,))
        self.assertEqual(status, gpu_check.EXIT_PASS, out)
        self.assertEqual(len(rows(out, "PEER")), 1, out)
        self.assertEqual(rows(out, "FAIL"), [], out)
        refused = [row for row in rows(out, "SKIP") if "itself refuses __dlpack__(stream=-1)" in row]
        self.assertEqual(len(refused), 5, out)
        self.assertEqual(len(rows(out, "PASS")), 2, out)

    def test_a_peer_refusing_every_stream_is_nothing_checked(self):
        status, out = run((RefusesEverything,))
        self.assertEqual(status, gpu_check.EXIT_NOTHING_CHECKED, out)
        self.assertEqual((rows(out, "PASS"), rows(out, "FAIL")), ([], []), out)
        self.assertGreaterEqual(len(rows(out, "PEER")), 2, out)  # no stream argument, -1, the consumer's stream
        self.assertIn("nothing was checked: every check skipped or was refused by its peer", out)

    def test_a_dlmap_failure_fails_beside_a_peer_row(self):
        status, out = run((JaxLike,), MisplacingDlmap())
        self.assertEqual(status, gpu_check.EXIT_FAIL, out)
        self.assertEqual(len(rows(out, "PEER")), 1, out)  # the peer's refusal is still reported as the peer's
        failed = {row.split(": ")[0] for row in rows(out, "FAIL")}
        self.assertIn(DLMAP_ROWS[1].format("jaxlike"), failed, out)  # default stream: "not zero-copy"
        self.assertIn(DLMAP_ROWS[3].format("jaxlike"), failed, out)
        self.assertEqual(rows(out, "PASS"), [], out)

    def test_dlmap_refusing_a_stream_the_peer_accepts_is_a_failure_not_a_peer_row(self):
        status, out = run((StandIn,), NoSyncRefusingDlmap())
        self.assertEqual(status, gpu_check.EXIT_FAIL, out)
        self.assertEqual(rows(out, "PEER"), [], out)
        self.assertIn("FAIL  " + DLMAP_ROWS[2].format("standin") + ": BufferError: this dlmap refuses stream=-1", out)
        self.assertIn("gpu_check: 2 passed, 5 failed, 2 skipped, 0 refused by the peer", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
