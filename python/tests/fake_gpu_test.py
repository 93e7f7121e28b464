# dlmap Python binding tests — the binding's GPU paths over the fake CUDA runtime of tests/gpu (device memory the host
# cannot touch, every runtime call checked; //python:fake_gpu/dlmap.so): copies between device and host memory in
# both directions, the GIL released around GPU work, and producer deleters that still run with the GIL.
import array
import ctypes
import os
import unittest

import dlmap
import testing
from testing import DlmapTestCase, Producer

# The copy of the fake runtime that dlmap.so loaded (found by its soname).
fake = ctypes.CDLL("libdlmap_fake_gpu.so")
fake.fakeMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
fake.fakeFree.argtypes = [ctypes.c_void_p]
fake.fake_gpu_stream_calls.argtypes = [ctypes.c_void_p]
fake.fake_gpu_poke.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]


def device_floats(values):
    """Fake device memory holding float32 values; freed by the caller with fake.fakeFree."""
    pointer = ctypes.c_void_p()
    if fake.fakeMalloc(ctypes.byref(pointer), 4 * len(values)) != 0:
        raise RuntimeError("fakeMalloc failed")
    host = array.array("f", values)
    # The fake's device memory is sealed (a host store through it faults, as on a GPU): its bytes are written through
    # the fake's own view.
    if fake.fake_gpu_poke(pointer.value, host.buffer_info()[0], 4 * len(values)) != 0:
        raise RuntimeError("fake_gpu_poke failed")
    return pointer.value


def without_gil():
    return dlmap._stats()["allocations_without_gil"]


class FakeGpuTest(DlmapTestCase):
    def test_the_fake_is_a_cuda_platform(self):
        status = dlmap.platform_status("cuda")
        self.assertEqual((status["built"], status["available"], status["device_count"]), (True, True, 2))

    def test_copies_both_ways(self):
        a = dlmap.empty((2, 3), device=(2, 1))
        self.assertEqual((a.device, a.nbytes), ((2, 1), 24))
        h = dlmap.from_dlpack(a, device=(1, 0))  # dlmap.Array's __dlpack__ copies to the host (the producer copied)
        self.assertEqual((h.device, h.via, memoryview(h).tolist()), ((1, 0), "dltensor_versioned", [[0.0] * 3] * 2))
        self.assertNotEqual(h.data_ptr, a.data_ptr)
        data = device_floats([1.0, 2.0, 3.0, 4.0])
        try:
            p = Producer(None, (2, 32, 1), (2, 2), strides=(1, 2), device=(2, 0), data=data)
            h = dlmap.from_dlpack(p, device=(1, 0))  # a transposed device tensor, copied compact to the host
            self.assertEqual((h.device, memoryview(h).tolist()), ((1, 0), [[1.0, 3.0], [2.0, 4.0]]))
        finally:
            fake.fakeFree(data)

    def test_empty_fills_on_the_device(self):
        # dlmap.empty on a GPU: the runtime's memset zero-fills the new memory on the device (issue 24 item 7); no
        # zero-filled host buffer is uploaded. The fake's fresh memory is not zero, so the zeros are the memset's.
        for shape, dtype in (((4, 4), "float32"), ((3,), "int8"), ((2, 5), "uint16")):
            memsets, uploads = fake.fake_gpu_memset_calls(), fake.fake_gpu_host_to_device_copies()
            a = dlmap.empty(shape, dtype, device=(2, 1))
            self.assertEqual(fake.fake_gpu_host_to_device_copies(), uploads, "a host-to-device copy")
            self.assertEqual(fake.fake_gpu_memset_calls(), memsets + 1)
            h = dlmap.from_dlpack(a, device=(1, 0))
            self.assertEqual(set(memoryview(h).cast("B").tolist()), {0}, (shape, dtype))

    def test_gil_released_around_gpu_work(self):
        # Host copies of device data take their host memory from dlmap's counted allocator, which counts the
        # allocations made by a thread that does not hold the GIL while watched (issue 14: GPU copies held it
        # throughout).
        dlmap._watch_gil(True)
        self.addCleanup(dlmap._watch_gil, False)
        a = dlmap.empty((4, 4), device=(2, 0))
        before = without_gil()
        cap = a.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=True)
        self.assertEqual(without_gil(), before + 1, "export's device-to-host copy")
        self.assertEqual(testing.versioned_tensor(cap).dl_tensor.device.device_type, 1)
        del cap
        data = device_floats([5.0, 6.0])
        try:
            before = without_gil()
            h = dlmap.from_dlpack(Producer(None, (2, 32, 1), (2,), device=(2, 0), data=data), device=(1, 0))
            self.assertEqual((without_gil(), memoryview(h).tolist()), (before + 1, [5.0, 6.0]), "import's copy")
        finally:
            fake.fakeFree(data)
        # Host-only work keeps the GIL: releasing it costs more than the work.
        before = without_gil()
        dlmap.from_dlpack(dlmap.empty(3), copy=True)
        dlmap.empty(3).__dlpack__(copy=True)
        self.assertEqual(without_gil(), before)

    def test_producer_deleters_run_with_the_gil(self):
        # The deleter here is CPython's PyErr_Occurred, which crashes on a thread without the GIL (it reads the
        # thread state): dlmap's release of the producer during a GPU import (after a copy, or on an error) is
        # deferred until the GIL is back. In a child, so that a crash is a failure here.
        rc, out, err = testing.run_child("""
            import array, ctypes
            import dlmap, testing
            from fake_gpu_test import device_floats, fake

            crashes_without_gil = ctypes.cast(ctypes.pythonapi.PyErr_Occurred, ctypes.c_void_p).value
            data = device_floats([1.0, 2.0, 3.0])
            keep = []

            class OnDevice:
                def __dlpack_device__(self):
                    return (2, 0)

                def __dlpack__(self, **kwargs):
                    m = testing.DLManagedTensorVersioned()
                    m.version = testing.DLPackVersion(1, 3)
                    m.deleter = crashes_without_gil
                    shape = (ctypes.c_int64 * 1)(3)
                    m.dl_tensor.data = data
                    m.dl_tensor.device = testing.DLDevice(2, 0)
                    m.dl_tensor.ndim = 1
                    m.dl_tensor.dtype = testing.DLDataType(2, 32, 1)
                    m.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
                    keep.append((m, shape))
                    return testing._capsule_new(ctypes.addressof(m), testing.NAME_VERSIONED, None)

            copied = dlmap.from_dlpack(OnDevice(), device=(1, 0))  # released after the copy
            print("copy", memoryview(copied).tolist())
            try:
                dlmap.from_dlpack(OnDevice(), device=(1, 0), copy=False)  # released on the error
            except ValueError as e:
                print("error", type(e).__name__)
            view = dlmap.from_dlpack(OnDevice(), stream=-1)  # released when the view dies
            print("view", view.device)
            del view
            fake.fakeFree(data)
            print("ok")
        """)
        self.assertEqual((rc, out, err), (0, "copy [1.0, 2.0, 3.0]\nerror ValueError\nview (2, 0)\nok\n", ""))



class HostileDeviceTest(DlmapTestCase):
    """Issue 48 over the fake runtime: invented stream handles and lying device claims are catalogue errors, the
    producer's deleter run once, no runtime call given a refused stream."""

    def test_small_integer_streams_are_refused_before_any_runtime_call(self):
        a = dlmap.empty((4,), device=(2, 0))
        for stream in (3, 100, 4095):
            calls = fake.fake_gpu_calls()
            with self.assertRaises(ValueError) as raised:
                a.__dlpack__(stream=stream)
            self.assertIn("stream=%d cannot be a stream handle for device type kDLCUDA (2)" % stream,
                          str(raised.exception))
            p = Producer(None, (2, 32, 1), (4,), device=(2, 0), data=a.data_ptr)
            with self.assertRaises(ValueError):
                dlmap.from_dlpack(p, stream=stream)
            self.assertEqual(p.calls, [], "the producer was asked with a stream that cannot be a handle")
            self.assertEqual(fake.fake_gpu_calls(), calls, "a runtime call was made")
            self.assertEqual(fake.fake_gpu_stream_calls(stream), 0)

    def test_a_host_claim_over_device_memory_is_refused(self):
        data = device_floats([1.0, 2.0])
        try:
            for device in ((1, 0), (3, 0), (13, 0)):  # kDLCPU, kDLCUDAHost, kDLCUDAManaged over cudaMalloc memory
                testing.deleted.clear()
                p = Producer(None, (2, 32, 1), (2,), device=device, data=data, tag="liar")
                with self.assertRaises(BufferError) as raised:
                    dlmap.from_dlpack(p)
                self.assertIn("the cuda runtime says its data", str(raised.exception))
                self.assertEqual(testing.deleted, ["liar"], device)
        finally:
            fake.fakeFree(data)

    def test_a_device_claim_over_host_memory_or_another_device_is_refused(self):
        host = array.array("f", [1.0, 2.0])
        p = Producer(host, (2, 32, 1), (2,), device=(2, 0), tag="host")
        testing.deleted.clear()
        with self.assertRaises(BufferError) as raised:
            dlmap.from_dlpack(p, stream=-1)
        self.assertIn("does not know its data", str(raised.exception))
        data = device_floats([1.0, 2.0])  # on device 0
        try:
            for device, text in (((2, 1), "belongs to device 0"), ((2, 5), "Device id 5 is out of range")):
                p = Producer(None, (2, 32, 1), (2,), device=device, data=data, tag="wrong")
                with self.assertRaises((BufferError, ValueError)) as raised:
                    dlmap.from_dlpack(p, stream=-1)
                self.assertIn(text, str(raised.exception))
        finally:
            fake.fakeFree(data)
        self.assertEqual(testing.deleted, ["host", "wrong", "wrong"])

    def test_runtime_failures_are_catalogue_errors(self):
        # A failed runtime copy or allocation names the step, the tensor's device, shape and byte extent, the target
        # and the runtime's own text (runtime_copy_failed), never the bare call; the producer's deleter runs once.
        data = device_floats([1.0, 2.0, 3.0, 4.0])
        try:
            p = Producer(None, (2, 32, 1), (4,), device=(2, 0), data=data, tag="copied")
            testing.deleted.clear()
            fake.fake_gpu_fail_next(b"memcpy", 1)
            with self.assertRaises(RuntimeError) as raised:
                dlmap.from_dlpack(p, device=(1, 0))
            text = str(raised.exception)
            self.assertIn("Copying the data failed for the tensor on", text)
            self.assertIn("(shape [4], 16 bytes) being copied to", text)
            self.assertIn("the cuda runtime says fake error 1", text)
            self.assertNotIn("fakeMemcpy", text)
            self.assertEqual(testing.deleted, ["copied"])
            # A tensor longer than its allocation never reaches the copy (issue 56): the claim is refused first.
            p = Producer(None, (2, 32, 1), (5,), device=(2, 0), data=data, tag="long")
            with self.assertRaises(BufferError) as raised:
                dlmap.from_dlpack(p, device=(1, 0))
            self.assertIn("past the end of the cuda memory", str(raised.exception))
            self.assertEqual(testing.deleted, ["copied", "long"])
        finally:
            fake.fakeFree(data)
        fake.fake_gpu_fail_next(b"malloc", 2)
        with self.assertRaises(RuntimeError) as raised:
            dlmap.empty((2, 3), device=(2, 0))
        text = str(raised.exception)
        self.assertIn("Allocating the copy's memory failed for the tensor on", text)
        self.assertIn("(shape [2, 3], 24 bytes)", text)
        self.assertIn("the cuda runtime says fake error 2", text)
        a = dlmap.empty((4,), device=(2, 0))
        fake.fake_gpu_fail_next(b"memcpy", 1)
        with self.assertRaises(RuntimeError) as raised:
            a.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=True)
        self.assertIn("(shape [4], 16 bytes) being copied to", str(raised.exception))
        self.assertIn("the cuda runtime says fake error 1", str(raised.exception))

    def test_a_runtime_only_a_framework_loaded_is_asked(self):
        # The H200 crash path: only the framework loaded the runtime (here: ctypes, as torch loads libcudart when
        # imported), dlmap never did, and a producer claims kDLCPU over device memory. The binding adopts a runtime
        # the process has loaded once sys.modules has changed, so the claim is refused, not handed to the host as a
        # view. In a child without testing.py (which asks dlmap.platform_status, loading the runtime), since this
        # process's dlmap loaded the runtime long ago.
        with open("/proc/self/maps") as maps:  # where this process found the fake runtime (by its soname)
            runtime = next(line.split()[-1] for line in maps if line.rstrip().endswith("/libdlmap_fake_gpu.so"))
        structs = os.path.join(os.path.dirname(os.path.abspath(testing.__file__)), os.pardir, "check", "dlpack.py")
        rc, out, err = testing.run_child("""
            import ctypes, importlib.util, sys
            framework = ctypes.CDLL(%r)  # the framework's runtime, loaded before dlmap is used
            framework.fakeMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
            framework.fakeFree.argtypes = [ctypes.c_void_p]
            import dlmap
            spec = importlib.util.spec_from_file_location("dlpack_structs", %r)
            dl = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(dl)
            pointer = ctypes.c_void_p()
            assert framework.fakeMalloc(ctypes.byref(pointer), 8) == 0
            deleted = []

            @dl.DELETER
            def deleter(address):
                deleted.append("liar")

            shape = (ctypes.c_int64 * 1)(2)
            m = dl.DLManagedTensorVersioned()
            m.version = dl.DLPackVersion(1, 3)
            m.deleter = ctypes.cast(deleter, ctypes.c_void_p).value
            m.dl_tensor.data = pointer.value
            m.dl_tensor.device = dl.DLDevice(1, 0)  # kDLCPU, over the runtime's device memory
            m.dl_tensor.ndim = 1
            m.dl_tensor.dtype = dl.DLDataType(2, 32, 1)
            m.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))

            class Liar:
                def __dlpack_device__(self):
                    return (1, 0)

                def __dlpack__(self, **kwargs):
                    return dl.new_capsule(ctypes.addressof(m), "dltensor_versioned", None)

            import colorsys  # a module imported since dlmap was
            try:
                print("a view", dlmap.from_dlpack(Liar()).device)
            except BufferError as e:
                print("the cuda runtime says its data" in str(e), deleted)
            framework.fakeFree(pointer)
        """ % (runtime, structs))
        self.assertEqual((rc, out, err), (0, "True ['liar']\n", ""))


fake.fakeMallocAsync.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_void_p]
fake.fakeFreeAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p]


class Ledger:
    """A framework's device allocator over the fake's pool (issue 64), keeping what dlmap took and gave back."""

    def __init__(self, fail=None):
        self.live, self.calls, self.fail = {}, [], fail

    def allocate(self, nbytes, device, stream):
        self.calls.append(("allocate", nbytes, device, stream))
        if self.fail is not None:
            return self.fail()
        pointer = ctypes.c_void_p()
        if fake.fakeMallocAsync(ctypes.byref(pointer), nbytes, None if stream == -1 else stream) != 0:
            return 0
        self.live[pointer.value] = nbytes
        return pointer.value

    def release(self, pointer, stream):
        self.calls.append(("release", pointer, stream))
        del self.live[pointer]  # a pointer it never made, or given back twice, raises (the unraisable hook reports it)
        fake.fakeFreeAsync(pointer, None if stream == -1 else stream)

    def count(self, what):
        return sum(1 for call in self.calls if call[0] == what)


class FrameworkDeviceAllocatorTest(DlmapTestCase):
    def install(self, ledger):
        dlmap.set_device_allocator(ledger.allocate, ledger.release)
        self.addCleanup(dlmap.set_device_allocator, None)
        return ledger

    def test_every_device_buffer_comes_from_it_and_goes_back_once(self):
        ledger = self.install(Ledger())
        a = dlmap.empty((4, 4), device=(2, 0))  # one device buffer
        b = dlmap.from_dlpack(a, device=(2, 1), copy=True)  # device 0 to device 1
        c = a.__dlpack__(max_version=(1, 3), dl_device=(2, 0), copy=True, stream=-1)  # a capsule a consumer holds
        data = device_floats([1.0, 2.0, 3.0, 4.0])
        try:
            p = Producer(None, (2, 32, 1), (2, 2), strides=(1, 2), device=(2, 0), data=data)
            h = dlmap.from_dlpack(p, device=(1, 0))  # transposed to the host: compacted in a device buffer first
            self.assertEqual(memoryview(h).tolist(), [[1.0, 3.0], [2.0, 4.0]])
        finally:
            fake.fakeFree(data)
        self.assertGreaterEqual(ledger.count("allocate"), 3)
        self.assertEqual(b.device, (2, 1))
        self.assertEqual([call[2] for call in ledger.calls if call[0] == "allocate"][:2], [(2, 0), (2, 1)])
        del a, b, c, h
        self.assertEqual(ledger.live, {}, "every buffer given back")
        self.assertEqual(ledger.count("release"), ledger.count("allocate"), "and exactly once")
        self.assertIn(-1, [call[2] for call in ledger.calls if call[0] == "release"],
                      "a holder that named no stream: the release says so with -1")

    def test_a_failing_allocator_is_out_of_memory_with_its_cause(self):
        def exhausted():
            raise ValueError("the pool is exhausted")
        for fail, cause in ((exhausted, ValueError), (lambda: 0, None), (lambda: "0x10", TypeError),
                            (lambda: -8, OverflowError)):
            ledger = self.install(Ledger(fail))
            with self.assertRaises(MemoryError) as caught:
                dlmap.empty((4,), device=(2, 0))
            self.assertIn("a device copy", str(caught.exception))
            self.assertIs(type(caught.exception.__cause__), cause) if cause else \
                self.assertIsNone(caught.exception.__cause__)
            self.assertEqual(ledger.count("release"), 0)

    def test_buffers_go_back_to_the_pair_that_made_them(self):
        first = self.install(Ledger())
        a = dlmap.empty((8,), device=(2, 0))
        second = self.install(Ledger())
        dlmap.set_device_allocator(None)  # then the runtime's own
        b = dlmap.empty((8,), device=(2, 0))
        del a, b
        self.assertEqual((first.count("allocate"), first.count("release"), first.live), (1, 1, {}))
        self.assertEqual(second.calls, [])

    def test_a_release_on_a_thread_without_the_gil(self):
        ledger = self.install(Ledger())
        a = dlmap.empty((8,), device=(2, 0))
        capsule = a.__dlpack__(max_version=(1, 3), dl_device=(2, 1), copy=True)
        tensor = testing.versioned_tensor(capsule)
        testing.rename_capsule(capsule, b"used_dltensor_versioned")  # this test is the consumer now
        testing.run_deleter(ctypes.pointer(tensor))  # ctypes releases the GIL around the call
        self.assertEqual(ledger.count("release"), 1)
        del a
        self.assertEqual(ledger.live, {})

    def test_an_array_viewed_on_several_streams_is_freed_after_every_consumer(self):
        # dlmap.empty's memory, from the runtime's stream-ordered pool, exported as views to two consumers on two
        # streams; each queues a read, drops its capsule, then the array dies (its memory freed on its own stream):
        # under every schedule of the fake's deferred streams the free runs after both reads.
        fake.fake_gpu_stream_create.restype = ctypes.c_void_p
        fake.fake_gpu_stream_destroy.argtypes = [ctypes.c_void_p]
        fake.fakeMemcpyAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                         ctypes.c_void_p]
        streams = [fake.fake_gpu_stream_create(), fake.fake_gpu_stream_create()]
        theirs = [device_floats([0.0] * 64), device_floats([0.0] * 64)]
        try:
            for seed in range(1, 41):
                fake.fake_gpu_set_deferred(1, seed)
                a = dlmap.empty((64,), device=(2, 0))
                for stream, buffer in zip(streams, theirs):
                    capsule = a.__dlpack__(max_version=(1, 3), stream=stream)
                    data = testing.versioned_tensor(capsule).dl_tensor.data
                    self.assertEqual(fake.fakeMemcpyAsync(buffer, data, 256, 3, stream), 0)
                    del capsule  # the consumer is done with it: its read may still be queued
                del a
                self.assertEqual(fake.fake_gpu_synchronize_all(), 0)
                self.assertEqual(fake.fake_gpu_freed_accesses(), 0, f"seed {seed}: freed under a consumer's read")
                fake.fake_gpu_set_deferred(0, 0)
        finally:
            fake.fake_gpu_set_deferred(0, 0)
            for buffer in theirs:
                fake.fakeFree(buffer)
            for stream in streams:
                fake.fake_gpu_stream_destroy(stream)

    def test_arguments_are_checked(self):
        with self.assertRaises(ValueError):
            dlmap.set_device_allocator(print)
        with self.assertRaises(ValueError):
            dlmap.set_device_allocator(1, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
