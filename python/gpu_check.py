# dlmap Python binding — GPU interop check with JAX, PyTorch and CuPy: versioned capsules and CUDA streams in both
# directions, stream ordering on the producer's current stream (a slow producer, a reader on the consumer's stream, and
# a control run without the wait that shows the check can see a race), import copies on the consumer's stream, the C
# exchange API on CUDA tensors; prints one line per check, each skip with its reason, and a verdict line last.
# Row words: PASS, FAIL (dlmap did something wrong), SKIP (with the reason), and PEER: the framework itself refused a
# stream value a row would hand it. Before a row hands a framework's array to dlmap with a stream value, the bare call
# `x.__dlpack__(stream=v)`, made without dlmap, is tried once per value; when that raises, a PEER row gives the
# framework's own words (exception type and text) and the rows that needed the value are SKIPs naming it (JAX 0.11.2
# refuses stream=-1 on CUDA: CUDA_ERROR_INVALID_HANDLE). A row fails only for what dlmap did; each framework's rows
# set up with a stream value the framework accepts (its `setup_stream`).
# Exit: 0 at least one check ran on the GPU and passed, none failed (PEER rows never fail the run); 1 a check failed;
# 3 nothing was checked (no framework sees a CUDA device, NumPy is missing, or no row passed: every one skipped or was
# a peer's refusal; the reasons are printed): gpu/check.sh reads 3 as "nothing checked".
#
# Run: gpu/check.sh (builds dlmap.so for this machine's Python and runs this), or bazel run //python:gpu_check, or
#      PYTHONPATH=<dir of dlmap.so> python3 python/gpu_check.py
#      A test passes its own stand-in frameworks and dlmap: main(dlmap=..., frameworks=(...)) (tests over the fake
#      CUDA runtime: python/tests/gpu_check_fake_gpu_test.py).
import sys
import traceback

RESULTS = []  # (status, name, detail)
EXIT_PASS, EXIT_FAIL, EXIT_NOTHING_CHECKED = 0, 1, 3


def report(status, name, detail=""):
    RESULTS.append((status, name, detail))
    print(f"{status:4}  {name}{': ' + detail if detail else ''}", flush=True)


def check(name):
    """Runs fn as one named check: PASS when it returns, SKIP when it raises Skip, FAIL with the error otherwise."""
    def decorate(fn):
        def run(*args):
            try:
                detail = fn(*args)
                report("PASS", name, detail or "")
            except Skip as s:
                report("SKIP", name, str(s))
            except Exception as e:  # noqa: BLE001 - every failure is reported, none stops the others
                report("FAIL", name, f"{type(e).__name__}: {e}")
                traceback.print_exc(limit=3)
        return run
    return decorate


class Skip(Exception):
    pass


class PeerRefused(Skip):
    """A row skipped because the framework itself refuses a stream value the row needs (the PEER row says how)."""


PEER_PROBES = {}  # (framework name, stream value) -> None (the framework accepts it) or the PEER row's name


def show_stream(stream):
    return "__dlpack__()" if stream is None else f"__dlpack__(stream={stream})"


def peer_accepts(fw, stream):
    """Raises PeerRefused unless the framework itself accepts `stream` (None: no stream argument): the bare call on a
    fresh small array of its own, without dlmap, once per value. The first refusal is a PEER row with the framework's
    own exception type and text. Call it outside any stream context of the row: a probe that records an event on the
    producer's stream would make the consumer wait and hide what the row checks."""
    key = (fw.name, stream)
    if key not in PEER_PROBES:
        probe = fw.make(16)  # a framework that cannot make one raises Skip here: a skip, not a peer's refusal
        try:
            capsule = probe.__dlpack__() if stream is None else probe.__dlpack__(stream=stream)
            del capsule  # never consumed: the capsule's destructor releases it
            PEER_PROBES[key] = None
        except Exception as e:  # noqa: BLE001 - whatever the framework raises is its refusal, reported in its words
            PEER_PROBES[key] = f"{fw.name} {show_stream(stream)}, called without dlmap"
            report("PEER", PEER_PROBES[key], f"{type(e).__name__}: {e}")
    if PEER_PROBES[key] is not None:
        raise PeerRefused(f"{fw.name} itself refuses {show_stream(stream)} (the PEER row \"{PEER_PROBES[key]}\")")


def hand_off(dlmap, fw, x, stream, **kwargs):
    """dlmap.from_dlpack(x, stream=stream, **kwargs) (no stream argument for None) once the framework is known to
    accept that stream value itself (peer_accepts)."""
    peer_accepts(fw, stream)
    if stream is not None:
        kwargs["stream"] = stream
    return dlmap.from_dlpack(x, **kwargs)


ORDER_ITERATIONS = 40
ORDER_N = 1 << 22


# ---- the frameworks, behind one small interface ----------------------------------------------------------------------


class Torch:
    name = "torch"
    setup_stream = -1  # the stream value rows hand the array over with before they check something else: no sync

    def __init__(self):
        import torch
        self.t = torch
        if not torch.cuda.is_available():
            raise Skip(f"torch {torch.__version__}: no CUDA device")
        self.version = torch.__version__

    def make(self, n=1 << 20):
        return self.t.arange(n, dtype=self.t.float32, device="cuda")

    def ptr(self, x):
        return x.data_ptr()

    def new_stream(self):
        return self.t.cuda.Stream()

    def stream_handle(self, s):
        return s.cuda_stream

    def produce_on(self, s, n=1 << 20):
        with self.t.cuda.stream(s):
            x = self.t.empty(n, dtype=self.t.float32, device="cuda")
            for _ in range(20):  # long enough that an unsynchronised reader would see unfinished data
                x.copy_(self.t.arange(n, dtype=self.t.float32, device="cuda"))
        return x

    def host(self, x):
        return x.cpu().numpy()

    def from_dlpack(self, obj):
        return self.t.from_dlpack(obj)

    def synchronize(self):
        self.t.cuda.synchronize()

    def device_allocator(self):
        """torch's caching allocator as dlmap.set_device_allocator takes it (issue 64): (nbytes, device, stream) -> int
        and (pointer, stream); -1, no stream named, is torch's current stream of that device."""
        cuda = self.t.cuda
        return (lambda nbytes, device, stream: cuda.caching_allocator_alloc(nbytes, device[1],
                                                                            None if stream == -1 else stream),
                lambda pointer, stream: cuda.caching_allocator_delete(pointer))

    def delay(self):
        """Holds the current stream ~1 ms, so an unordered reader runs before the producer's next write."""
        if hasattr(self.t.cuda, "_sleep"):
            self.t.cuda._sleep(2_000_000)
        else:
            scratch = self.t.ones(1 << 20, device="cuda")
            for _ in range(50):
                scratch = scratch * 1.0001

    def ordering(self, dlmap, mode):
        """Iterations whose reader on the consumer stream saw anything but what the producer wrote. mode: "none" (no
        hand-off: the control), "view" (from_dlpack with the consumer's stream, inside the producer's stream context,
        where torch records its event) or "copy" (the same with copy=True: dlmap copies on the consumer's stream)."""
        t = self.t
        producer, consumer = t.cuda.Stream(), t.cuda.Stream()
        if mode != "none":
            peer_accepts(self, consumer.cuda_stream)  # here, not inside the producer's stream context (see there)
        keep, results = [], []
        for it in range(ORDER_ITERATIONS):
            value = it + 1
            with t.cuda.stream(producer):
                x = t.zeros(ORDER_N, dtype=t.int32, device="cuda")
                self.delay()
                x.fill_(value)
                read = x
                if mode == "view":
                    a = dlmap.from_dlpack(x, stream=consumer.cuda_stream)
                    assert a.data_ptr == x.data_ptr(), "not zero-copy"
                elif mode == "copy":  # a legacy producer, so that dlmap (not torch) makes the copy
                    a = dlmap.from_dlpack(LegacyOnly(x), stream=consumer.cuda_stream, copy=True)
                    assert a.data_ptr != x.data_ptr(), "not a copy"
                    read = t.from_dlpack(NoSync(a))
                    keep.append(a)
            x.record_stream(consumer)
            with t.cuda.stream(consumer):
                results.append((read != value).sum())
            keep += [x, read]
        t.cuda.synchronize()
        return sum(int(r.item()) != 0 for r in results)


class CuPy:
    name = "cupy"
    setup_stream = -1

    def __init__(self):
        import cupy
        self.c = cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise Skip(f"cupy {cupy.__version__}: no CUDA device")
        self.version = cupy.__version__

    def make(self, n=1 << 20):
        return self.c.arange(n, dtype=self.c.float32)

    def ptr(self, x):
        return x.data.ptr

    def new_stream(self):
        return self.c.cuda.Stream(non_blocking=True)

    def stream_handle(self, s):
        return s.ptr

    def produce_on(self, s, n=1 << 20):
        with s:
            x = self.c.empty(n, dtype=self.c.float32)
            for _ in range(20):
                x[...] = self.c.arange(n, dtype=self.c.float32)
        return x

    def host(self, x):
        return self.c.asnumpy(x)

    def from_dlpack(self, obj):
        return self.c.from_dlpack(obj)

    def synchronize(self):
        self.c.cuda.runtime.deviceSynchronize()

    def delay(self):
        """Holds the current stream ~1 ms (a spinning kernel where NVRTC works, else a chain of elementwise ops)."""
        c = self.c
        try:
            if not hasattr(self, "_spin"):
                self._spin = c.RawKernel(r"""extern "C" __global__ void spin(long long cycles) {
                    long long start = clock64();
                    while (clock64() - start < cycles) {}
                }""", "spin")
            self._spin((1,), (1,), (c.int64(2_000_000),))
        except Exception:  # noqa: BLE001 - no NVRTC: a slower way to wait
            scratch = c.ones(1 << 20, dtype=c.float32)
            for _ in range(50):
                scratch = scratch * c.float32(1.0001)

    def ordering(self, dlmap, mode):
        """As Torch.ordering, with CuPy's current-stream context (where cupy records its event)."""
        c = self.c
        if mode == "copy":
            raise Skip("checked with PyTorch")
        producer, consumer = c.cuda.Stream(non_blocking=True), c.cuda.Stream(non_blocking=True)
        if mode != "none":
            peer_accepts(self, consumer.ptr)
        keep, results = [], []
        for it in range(ORDER_ITERATIONS):
            value = it + 1
            with producer:
                x = c.zeros(ORDER_N, dtype=c.int32)
                self.delay()
                x.fill(value)
                if mode == "view":
                    a = dlmap.from_dlpack(x, stream=consumer.ptr)
                    assert a.data_ptr == x.data.ptr, "not zero-copy"
            with consumer:
                results.append((x != value).sum())
            keep.append(x)
        c.cuda.runtime.deviceSynchronize()
        return sum(int(r) != 0 for r in results)


class Jax:
    name = "jax"
    # No stream argument (dlmap's default): JAX 0.11.2 refuses stream=-1 on CUDA (CUDA_ERROR_INVALID_HANDLE, also
    # without dlmap) and accepted from_dlpack(x) with no stream on the H200 (2026-12-04).
    setup_stream = None

    def __init__(self):
        import jax
        import jax.numpy as jnp
        self.j, self.jnp = jax, jnp
        try:
            self.gpus = jax.devices("gpu")
        except RuntimeError as e:
            raise Skip(f"jax {jax.__version__}: no GPU backend ({e})")
        self.version = jax.__version__

    def make(self, n=1 << 20):
        return self.j.device_put(self.jnp.arange(n, dtype=self.jnp.float32), self.gpus[0])

    def ptr(self, x):
        return x.unsafe_buffer_pointer()

    def new_stream(self):
        raise Skip("JAX exposes no stream objects; its producer and consumer sides pick streams themselves")

    def stream_handle(self, s):
        return None

    def produce_on(self, s, n=1 << 20):
        raise Skip("JAX exposes no stream objects")

    def host(self, x):
        import numpy as np
        return np.asarray(x)

    def from_dlpack(self, obj):
        return self.j.dlpack.from_dlpack(obj)

    def synchronize(self):
        pass

    def ordering(self, dlmap, mode):
        raise Skip("JAX exposes no stream objects; its producer and consumer sides pick streams themselves")


class LegacyOnly:
    """A producer of DLPack before 1.0: __dlpack__(stream) only, so a consumer asked for copy=True copies itself."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class NoSync:
    """Hands an array to a consumer with stream=-1 (no synchronisation), after the caller synchronised itself."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        kwargs["stream"] = -1
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


# ---- the checks -------------------------------------------------------------------------------------------------------


def run_framework(dlmap, np, fw):
    device = None
    setup = fw.setup_stream  # how rows that check something else hand the array over: a value the framework accepts

    @check(f"{fw.name} -> dlmap, versioned capsule with the consumer's stream (pointer and version)")
    def producer_with_stream():
        nonlocal device
        s = fw.new_stream()
        x = fw.produce_on(s)
        consumer = fw.new_stream()
        a = hand_off(dlmap, fw, x, fw.stream_handle(consumer))  # the producer makes `consumer` wait
        assert a.device[0] == 2, a.device
        assert a.data_ptr == fw.ptr(x), "not zero-copy"
        assert a.via in ("dltensor_versioned", "c_exchange_api"), a.via
        assert a.version[0] == 1, f"version {a.version}"
        device = a.device
        return f"via {a.via}, version {a.version}, device {a.device}"

    @check(f"{fw.name} -> dlmap, default stream (C exchange API when published)")
    def producer_default():
        x = fw.make()
        a = hand_off(dlmap, fw, x, None)
        assert a.data_ptr == fw.ptr(x) and a.device[0] == 2
        return f"via {a.via}, version {a.version}"

    @check(f"{fw.name} -> dlmap, stream=-1 (no synchronisation)")
    def producer_no_sync():
        x = fw.make()
        fw.synchronize()
        a = hand_off(dlmap, fw, x, -1)
        assert a.data_ptr == fw.ptr(x)
        return f"via {a.via}"

    @check(f"{fw.name}'s own allocator serves dlmap's device copies (set_device_allocator)")
    def framework_allocator():
        if not hasattr(fw, "device_allocator"):
            raise Skip(f"{fw.name} publishes no allocator dlmap.set_device_allocator could install")
        allocate, release = fw.device_allocator()
        x = fw.make()
        fw.synchronize()
        before = fw.t.cuda.memory_allocated()
        dlmap.set_device_allocator(allocate, release)
        try:
            a = dlmap.from_dlpack(x, copy=True)  # a device copy: its memory from the framework's pool
            grown = fw.t.cuda.memory_allocated() - before
            assert grown >= a.nbytes, f"the framework's pool grew by {grown} bytes for a {a.nbytes}-byte copy"
            np.testing.assert_array_equal(fw.host(fw.from_dlpack(a)), fw.host(x))
            del a
            fw.synchronize()
            assert fw.t.cuda.memory_allocated() == before, "the copy's memory did not go back to the framework"
        finally:
            dlmap.set_device_allocator(None)
        return f"{grown} bytes from and back to {fw.name}'s pool"

    @check(f"dlmap -> {fw.name}, the consumer passes its stream")
    def consumer_with_stream():
        x = fw.make()
        a = hand_off(dlmap, fw, x, setup)
        fw.synchronize()
        y = fw.from_dlpack(a)  # dlmap must make the consumer's stream wait: needs dlmap's GPU backend
        assert fw.ptr(y) == a.data_ptr
        np.testing.assert_array_equal(fw.host(y), fw.host(x))

    @check(f"dlmap -> {fw.name}, stream=-1 after explicit synchronisation")
    def consumer_no_sync():
        x = fw.make()
        a = hand_off(dlmap, fw, x, setup)
        fw.synchronize()
        y = fw.from_dlpack(NoSync(a))
        assert fw.ptr(y) == a.data_ptr, "not zero-copy"
        np.testing.assert_array_equal(fw.host(y), fw.host(x))
        cap = a.__dlpack__(max_version=(1, 3), stream=-1)
        assert "dltensor_versioned" in repr(cap), repr(cap)

    @check(f"{fw.name} -> dlmap -> dlmap on CUDA through dlmap's C exchange API")
    def dlmap_to_dlmap():
        x = fw.make()
        a = hand_off(dlmap, fw, x, setup)
        b = dlmap.from_dlpack(a, stream=-1)  # dlmap to dlmap: dlmap's own stream=-1
        assert (b.via, b.data_ptr) == ("c_exchange_api", a.data_ptr), (b.via, b.data_ptr, a.data_ptr)

    @check(f"{fw.name} CUDA array -> host through dl_device=(1, 0)")
    def to_host():
        x = fw.make(1024)
        a = hand_off(dlmap, fw, x, setup)
        c = a.__dlpack__(max_version=(1, 3), dl_device=(1, 0), stream=None)  # a device-to-host copy: GPU backend
        h = dlmap.from_dlpack(NoSyncCapsule(c))
        np.testing.assert_array_equal(np.asarray(memoryview(h)), fw.host(x))

    @check(f"{fw.name} -> dlmap, stream ordering on the producer's current stream")
    def producer_ordering():
        control = fw.ordering(dlmap, "none")
        raced = fw.ordering(dlmap, "view")
        assert raced == 0, f"{raced}/{ORDER_ITERATIONS} iterations raced: the consumer read before the producer wrote"
        return (f"0/{ORDER_ITERATIONS} raced; the control without a hand-off raced in {control}"
                + ("" if control else " (WARNING: no race provoked here, so this check is not sensitive)"))

    @check(f"{fw.name} -> dlmap, copy=True on the consumer's stream")
    def producer_copy_ordering():
        raced = fw.ordering(dlmap, "copy")
        assert raced == 0, f"{raced}/{ORDER_ITERATIONS} copies read before the producer wrote"
        return f"0/{ORDER_ITERATIONS} raced"

    for step in (producer_with_stream, producer_ordering, producer_copy_ordering, producer_default, producer_no_sync,
                 consumer_with_stream, consumer_no_sync, dlmap_to_dlmap, to_host):
        step()


class NoSyncCapsule:
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


FRAMEWORKS = (Torch, CuPy, Jax)


def nothing_checked(reason):
    print(f"SKIP  gpu_check: nothing was checked: {reason}")
    print("\ngpu_check: NOTHING CHECKED")
    return EXIT_NOTHING_CHECKED


def main(dlmap=None, frameworks=None):
    """Runs every framework's rows and returns the exit status. dlmap: the module to check (default: `import dlmap`);
    frameworks: the framework classes to try (default: FRAMEWORKS, read when called). Tests pass stand-ins of both."""
    RESULTS.clear()
    PEER_PROBES.clear()
    if dlmap is None:
        try:
            import dlmap
        except ImportError as e:
            print(f"FAIL  cannot import dlmap on {sys.executable}: {e} (gpu/check.sh builds dlmap.so for this Python "
                  "and puts it on PYTHONPATH)")
            return EXIT_FAIL
    try:
        import numpy as np
    except ImportError as e:
        return nothing_checked(f"NumPy, which the checks compare with, is not installed for {sys.executable} ({e})")
    available, skipped = [], []
    for cls in FRAMEWORKS if frameworks is None else frameworks:
        try:
            available.append(cls())
        except ImportError as e:
            skipped.append(f"{cls.name}: not installed ({e})")
        except Skip as e:
            skipped.append(str(e))
        except Exception as e:  # noqa: BLE001 - a broken framework install is a reason to skip it, said aloud
            skipped.append(f"{cls.name}: unusable ({type(e).__name__}: {e})")
    for reason in skipped:
        print(f"SKIP  {reason}")
    if not available:
        return nothing_checked(f"no CUDA device with JAX, PyTorch or CuPy for {sys.executable} (reasons above)")
    print(f"gpu_check on {sys.executable}: " + ", ".join(f"{fw.name} {fw.version}" for fw in available))
    for fw in available:
        run_framework(dlmap, np, fw)
    counts = {word: sum(r[0] == word for r in RESULTS) for word in ("PASS", "FAIL", "SKIP", "PEER")}
    print(f"\ngpu_check: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped, "
          f"{counts['PEER']} refused by the peer")
    if counts["FAIL"]:  # only dlmap's failures: a peer's refusal is a PEER row
        return EXIT_FAIL
    if not counts["PASS"]:  # every check skipped or was refused by its peer: nothing ran on the GPU
        return nothing_checked("every check skipped or was refused by its peer (reasons above)")
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
