"""NumPy 2.x's DLPack contract as runnable rows (docs/contracts/numpy.md, issue 27).

Each row has the id of the table and run(lib), which makes the row's call against an adapter `lib` and
returns a normalised outcome:
  ("raises", kind, text)                                      an exception (its class name and str())
  ("ok", dtype, shape, strides, read_only, shares, extra)     an array or capsule: strides in elements (None:
                                                              NULL strides), read_only None where a legacy
                                                              capsule cannot say, shares: same memory as the
                                                              source; extra: a dict of what else the row checks
  ("value", v)                                                any other result (__dlpack_device__, call logs)
  ("n/a", why)                                                the adapter cannot make the row's input
The adapter interface (everything library-specific lives in the adapter; NumpyAdapter is the reference):
  name, version                       what is tested
  skip_reason() -> str | None         why this library cannot be tested here
  array(values, dtype="float64", shape=None, read_only=False) -> a producer array (C order)
  view(arr, kind) -> a view: "transpose", "step2", "reversed", "byte_strides" (strides not a multiple of
                     the itemsize), "row" (arr[1]); raise NotApplicable if the library cannot
  export(arr, *args, **kw) -> arr.__dlpack__(...)     dlpack_device(arr) -> arr.__dlpack_device__()
  from_dlpack(x, *args, **kw) -> the library's consumer
  describe(arr) -> {"dtype": str, "shape": tuple, "strides": tuple (elements), "read_only": bool, "data": int}
Crafted producers (capsules.py) are library-neutral and shared by every adapter.
Run: python3 numpy_rows.py   (prints every row's outcome against the installed NumPy)
"""

import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capsules as cap  # noqa: E402
import row_harness  # noqa: E402

ROWS, row = row_harness.registry()
NotApplicable = row_harness.NotApplicable  # e.g. a byte-swapped array in a library without one


def outcome(fn):
    """Run fn() and normalise: an exception becomes ("raises", kind, text)."""
    try:
        return fn()
    except NotApplicable as e:
        return ("n/a", str(e))
    except Exception as e:  # the row's subject: any exception is an outcome
        return ("raises", type(e).__name__, str(e))


def exported(lib, arr, *args, **kw):
    """Export arr and describe the capsule (not consumed; it is dropped afterwards)."""
    def go():
        src = lib.describe(arr)["data"]
        c = cap.read_capsule(lib.export(arr, *args, **kw))
        extra = {k: c[k] for k in ("capsule", "version", "copied", "device", "byte_offset", "shape_null")}
        return ("ok", c["dtype"], c["shape"], c["strides"], c["read_only"], c["data"] == src, extra)
    return outcome(go)


def imported(lib, producer, src_data, *args, **kw):
    """Import from producer with lib.from_dlpack and describe the result; src_data: the producer's address."""
    def go():
        d = lib.describe(lib.from_dlpack(producer, *args, **kw))
        return ("ok", d["dtype"], d["shape"], d["strides"], d["read_only"], d["data"] == src_data, {})
    return outcome(go)


def crafted(lib, *args, kind=cap.Crafted, producer=None, **tensor):
    """Import a crafted tensor (capsules.make_capsule's keywords); extra: the __dlpack__ calls, how often
    __dlpack_device__ was asked, the capsule's name afterwards, deleter runs once everything is dropped."""
    counter = cap.Counter()
    p = kind(counter, **(producer or {}), **tensor)

    def go():
        d = lib.describe(lib.from_dlpack(p, *args))
        return ("ok", d["dtype"], d["shape"], d["strides"], d["read_only"], d["data"] == p.data, {})
    res = outcome(go)
    extra = {"calls": [kw if not a else (a, kw) for a, kw in p.calls], "device_calls": p.device_calls,
             "capsule_after": [cap.capsule_name(c) for c in p.capsules]}
    del p
    gc.collect()
    extra["deleter_runs"] = counter.deleted
    return res[:6] + (extra,) if res[0] == "ok" else res + (extra,)


F64 = (2, 64, 1)
V1 = {"max_version": (1, 0)}


def arr23(lib, **kw):
    return lib.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], shape=(2, 3), **kw)


# ---- export: __dlpack__ -------------------------------------------------------------------------------------

@row("N-E1", "no keywords: a legacy capsule, explicit strides, same memory")
def _(lib):
    return exported(lib, arr23(lib))


@row("N-E2", "max_version=(1, 0): a versioned capsule stamped 1.0, flags 0")
def _(lib):
    return exported(lib, arr23(lib), **V1)


@row("N-E3", "max_version=(1, 7): still stamped 1.0 (fixed, not negotiated)")
def _(lib):
    return exported(lib, arr23(lib), max_version=(1, 7))


@row("N-E3a", "max_version=(2, 0): any major >= 1 gets the versioned 1.0 struct")
def _(lib):
    return exported(lib, arr23(lib), max_version=(2, 0))


@row("N-E4", "max_version=(0, 8): legacy")
def _(lib):
    return exported(lib, arr23(lib), max_version=(0, 8))


@row("N-E4a", "max_version=(-1, 0): legacy, no 'too old' error")
def _(lib):
    return exported(lib, arr23(lib), max_version=(-1, 0))


@row("N-E5", "max_version=1 (not a 2-tuple)")
def _(lib):
    return exported(lib, arr23(lib), max_version=1)


@row("N-E5a", "max_version=(1, 0, 0)")
def _(lib):
    return exported(lib, arr23(lib), max_version=(1, 0, 0))


@row("N-E6", "max_version=('1', 0): major not an int")
def _(lib):
    return exported(lib, arr23(lib), max_version=("1", 0))


@row("N-E6a", "max_version=(1, 'x'): the minor is never read")
def _(lib):
    return exported(lib, arr23(lib), max_version=(1, "x"))


@row("N-E7", "stream=1 on a CPU array")
def _(lib):
    return exported(lib, arr23(lib), stream=1)


@row("N-E7a", "stream=-1 on a CPU array")
def _(lib):
    return exported(lib, arr23(lib), stream=-1)


@row("N-E8", "read-only array, max_version None: refused")
def _(lib):
    return exported(lib, arr23(lib, read_only=True))


@row("N-E8a", "read-only array, max_version=(0, 8): refused")
def _(lib):
    return exported(lib, arr23(lib, read_only=True), max_version=(0, 8))


@row("N-E9", "read-only array, max_version=(1, 0): versioned with READ_ONLY")
def _(lib):
    return exported(lib, arr23(lib, read_only=True), **V1)


@row("N-E10", "read-only array, copy=True, legacy: the (writable) copy is exported")
def _(lib):
    return exported(lib, arr23(lib, read_only=True), copy=True)


@row("N-E11", "copy=True, max_version=(1, 0): a copy flagged IS_COPIED")
def _(lib):
    return exported(lib, arr23(lib), copy=True, **V1)


@row("N-E12", "copy=False: same memory, never an error on the host")
def _(lib):
    return exported(lib, arr23(lib), copy=False, **V1)


@row("N-E13", "copy='yes' (a string)")
def _(lib):
    return exported(lib, arr23(lib), copy="yes")


@row("N-E13a", "copy=2 (an int other than 0/1)")
def _(lib):
    return exported(lib, arr23(lib), copy=2, **V1)


@row("N-E14", "dl_device=(1, 0): the host, accepted")
def _(lib):
    return exported(lib, arr23(lib), dl_device=(1, 0), **V1)


@row("N-E14a", "dl_device=(1, 1): host with a non-zero id")
def _(lib):
    return exported(lib, arr23(lib), dl_device=(1, 1), **V1)


@row("N-E14b", "dl_device=(2, 0): kDLCUDA")
def _(lib):
    return exported(lib, arr23(lib), dl_device=(2, 0), **V1)


@row("N-E14c", "dl_device=(0, 0): type 0 is not 'no request'")
def _(lib):
    return exported(lib, arr23(lib), dl_device=(0, 0), **V1)


@row("N-E14d", "dl_device=(2, 0) with copy=True: still refused (no cross-device copy)")
def _(lib):
    return exported(lib, arr23(lib), dl_device=(2, 0), copy=True, **V1)


@row("N-E15", "dl_device=[1, 0] (a list)")
def _(lib):
    return exported(lib, arr23(lib), dl_device=[1, 0])


@row("N-E15a", "dl_device=(1,) (one element)")
def _(lib):
    return exported(lib, arr23(lib), dl_device=(1,))


@row("N-E15b", "dl_device=('cpu', 0)")
def _(lib):
    return exported(lib, arr23(lib), dl_device=("cpu", 0))


@row("N-E16", "a positional argument: __dlpack__(None)")
def _(lib):
    return exported(lib, arr23(lib), None)


@row("N-E16a", "an unknown keyword: __dlpack__(foo=1)")
def _(lib):
    return exported(lib, arr23(lib), foo=1)


@row("N-E17", "order: stream=1 with dl_device=(2, 0): the dl_device error wins")
def _(lib):
    return exported(lib, arr23(lib), stream=1, dl_device=(2, 0))


@row("N-E17a", "order: stream=1 with max_version=1: the max_version error wins")
def _(lib):
    return exported(lib, arr23(lib), stream=1, max_version=1)


@row("N-E17b", "order: stream=1 on a read-only array, legacy: the stream error wins")
def _(lib):
    return exported(lib, arr23(lib, read_only=True), stream=1)


@row("N-E18", "strides not a multiple of the itemsize")
def _(lib):
    return exported(lib, lib.view(arr23(lib), "byte_strides"), **V1)


@row("N-E19", "byte-swapped dtype (>f8)")
def _(lib):
    return exported(lib, lib.array([1.0, 2.0], dtype=">f8"), **V1)


@row("N-E20", "longdouble (80-bit x87, padded to 16 bytes)")
def _(lib):
    return exported(lib, lib.array([1.0, 2.0], dtype="longdouble"), **V1)


@row("N-E20a", "clongdouble")
def _(lib):
    return exported(lib, lib.array([1.0, 2.0], dtype="clongdouble"), **V1)


@row("N-E21", "object dtype")
def _(lib):
    return exported(lib, lib.array([1, 2], dtype="object"), **V1)


@row("N-E21a", "datetime64 dtype")
def _(lib):
    return exported(lib, lib.array([1, 2], dtype="datetime64[s]"), **V1)


@row("N-E22", "dtype table: each exportable dtype's DLPack (code, bits)")
def _(lib):
    out = {}
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128"):
        r = exported(lib, lib.array([0, 1], dtype=name), **V1)
        out[name] = r[1] if r[0] == "ok" else r
    return ("value", out)


@row("N-E23", "0-d array: shape and strides NULL (2.4+)")
def _(lib):
    return exported(lib, lib.array([7.0], shape=()), **V1)


@row("N-E24", "transposed view: strides in elements, same memory")
def _(lib):
    return exported(lib, lib.view(arr23(lib), "transpose"), **V1)


@row("N-E24a", "step-2 view")
def _(lib):
    return exported(lib, lib.view(lib.array(list(range(8)), dtype="int32"), "step2"), **V1)


@row("N-E24b", "reversed view: negative stride, data at the first logical element, byte_offset 0")
def _(lib):
    return exported(lib, lib.view(lib.array(list(range(6)), dtype="int64"), "reversed"), **V1)


@row("N-E25", "array imported from a kDLCUDAHost tensor, re-exported: keeps (3, 0)")
def _(lib):
    return _reexport(lib, {})


@row("N-E25a", "the same with dl_device=(1, 0): relabelled kDLCPU, same memory, no copy")
def _(lib):
    return _reexport(lib, {"dl_device": (1, 0)})


def _reexport(lib, kw):
    p = cap.Crafted(cap.Counter(), shape=(4,), dtype=F64, device=(cap.KDL_CUDA_HOST, 0))
    return outcome(lambda: exported(lib, lib.from_dlpack(p), max_version=(1, 0), **kw))


# ---- __dlpack_device__ ---------------------------------------------------------------------------------------

@row("N-D1", "an ordinary array: (1, 0)")
def _(lib):
    return outcome(lambda: ("value", tuple(lib.dlpack_device(arr23(lib)))))


@row("N-D2", "imported from a kDLCPU tensor with device_id 5: reports (1, 5)")
def _(lib):
    return _device_of_import(lib, (cap.KDL_CPU, 5), None)


@row("N-D3", "imported from kDLCUDAHost (3, 0): reports (3, 0)")
def _(lib):
    return _device_of_import(lib, (cap.KDL_CUDA_HOST, 0), None)


@row("N-D3a", "imported from kDLCUDAManaged (13, 2): reports (13, 2)")
def _(lib):
    return _device_of_import(lib, (cap.KDL_CUDA_MANAGED, 2), None)


@row("N-D3b", "a view (x[1]) of an array imported from (3, 0): reports (3, 0) (bases walked)")
def _(lib):
    return _device_of_import(lib, (cap.KDL_CUDA_HOST, 0), "row")


@row("N-D4", "__dlpack_device__(1): takes no arguments")
def _(lib):
    return outcome(lambda: ("value", arr23(lib).__dlpack_device__(1)))


def _device_of_import(lib, device, view):
    p = cap.Crafted(cap.Counter(), shape=(2, 2), dtype=F64, device=device)

    def go():
        x = lib.from_dlpack(p)
        return ("value", tuple(lib.dlpack_device(lib.view(x, view) if view else x)))
    return outcome(go)


# ---- import: from_dlpack -----------------------------------------------------------------------------------

@row("N-I1", "what from_dlpack asks: __dlpack__(dl_device=None, copy=None, max_version=(1, 0)), no stream")
def _(lib):
    return crafted(lib)


@row("N-I1a", "a NumPy-made array round trip: a writable view of the same memory")
def _(lib):
    a = arr23(lib)
    return imported(lib, a, lib.describe(a)["data"])


@row("N-I2", "device='cpu': asks dl_device=(1, 0)")
def _(lib):
    return _kw_import(lib, device="cpu")


@row("N-I3", "device='cuda'")
def _(lib):
    return _kw_import(lib, device="cuda")


@row("N-I3a", "device=(1, 0) (a DLPack tuple)")
def _(lib):
    return _kw_import(lib, device=(1, 0))


@row("N-I4", "a producer whose __dlpack__ takes no keywords: retried with no arguments at all")
def _(lib):
    return crafted(lib, producer={"legacy_signature": True}, versioned=False)


@row("N-I4a", "the same producer with copy=True: no retry, its TypeError propagates")
def _(lib):
    return _kw_import(lib, producer={"legacy_signature": True}, copy=True)


@row("N-I4b", "the same producer with device='cpu': no retry")
def _(lib):
    return _kw_import(lib, producer={"legacy_signature": True}, device="cpu")


@row("N-I5", "a producer raising BufferError: propagates, no retry")
def _(lib):
    return crafted(lib, producer={"raises": BufferError("producer says no")})


@row("N-I6", "from_dlpack(x, stream=None): no stream parameter")
def _(lib):
    return _kw_import(lib, stream=None)


@row("N-I6a", "from_dlpack(x, True): x is the only positional")
def _(lib):
    return outcome(lambda: lib.from_dlpack(arr23(lib), True))


@row("N-I6b", "from_dlpack() with no argument")
def _(lib):
    return outcome(lambda: lib.from_dlpack())


@row("N-I7", "a producer with no __dlpack_device__: imported (never asked)")
def _(lib):
    return crafted(lib, kind=cap.NoDevice)


@row("N-I7a", "__dlpack_device__ says (2, 0), the capsule (1, 0): the capsule wins")
def _(lib):
    return crafted(lib, producer={"query_device": (2, 0)})


@row("N-I8", "an object without __dlpack__ (a list)")
def _(lib):
    return outcome(lambda: lib.from_dlpack([1.0, 2.0]))


@row("N-I9", "versioned capsule with major version 2")
def _(lib):
    return crafted(lib, version=(2, 0))


@row("N-I9a", "versioned capsule stamped (1, 9): accepted")
def _(lib):
    return crafted(lib, version=(1, 9))


@row("N-I10", "versioned, flags 0: writable")
def _(lib):
    return crafted(lib)


@row("N-I10a", "versioned, READ_ONLY: read-only")
def _(lib):
    return crafted(lib, flags=cap.READ_ONLY)


@row("N-I10b", "legacy capsule: read-only (it cannot say)")
def _(lib):
    return crafted(lib, versioned=False)


@row("N-I10c", "versioned, IS_COPIED and an unknown flag bit 40: ignored")
def _(lib):
    return crafted(lib, flags=cap.IS_COPIED | (1 << 40))


@row("N-I11", "ndim 65 (> NPY_MAXDIMS 64)")
def _(lib):
    return crafted(lib, shape=(1,) * 65)


@row("N-I11a", "ndim 64: accepted")
def _(lib):
    return crafted(lib, shape=(1,) * 64)


@row("N-I11b", "ndim -1")
def _(lib):
    return crafted(lib, shape=(2,), ndim=-1)


@row("N-I12", "device kDLCUDA (2, 0)")
def _(lib):
    return crafted(lib, device=(cap.KDL_CUDA, 0))


@row("N-I12a", "device kDLCUDAHost (3, 0): a host view")
def _(lib):
    return crafted(lib, device=(cap.KDL_CUDA_HOST, 0))


@row("N-I12b", "device kDLROCMHost (11, 0)")
def _(lib):
    return crafted(lib, device=(cap.KDL_ROCM_HOST, 0))


@row("N-I12c", "device kDLCUDAManaged (13, 1)")
def _(lib):
    return crafted(lib, device=(cap.KDL_CUDA_MANAGED, 1))


@row("N-I12d", "device kDLCPU with device_id 7: the id is not checked")
def _(lib):
    return crafted(lib, device=(cap.KDL_CPU, 7))


@row("N-I13", "lanes 2")
def _(lib):
    return crafted(lib, dtype=(2, 32, 2))


@row("N-I14", "dtype table: which (code, bits) import, and the error for the rest")
def _(lib):
    out = {}
    for code, bits in ((6, 8), (6, 1), (0, 8), (0, 16), (0, 32), (0, 64), (0, 4), (1, 8), (1, 16), (1, 32),
                       (1, 64), (1, 1), (2, 16), (2, 32), (2, 64), (2, 8), (2, 128), (4, 16), (5, 64),
                       (5, 128), (5, 32), (7, 8), (255, 8)):
        r = crafted(lib, shape=(2,), dtype=(code, bits, 1))
        out["%d:%d" % (code, bits)] = r[1] if r[0] == "ok" else r[:3]
    return ("value", out)


@row("N-I15", "NULL strides: compact row-major")
def _(lib):
    return crafted(lib, shape=(2, 3))


@row("N-I15a", "column-major strides (1, 2): a view, no copy")
def _(lib):
    return crafted(lib, shape=(2, 3), strides=(1, 2))


@row("N-I15b", "broadcast stride 0: a view")
def _(lib):
    return crafted(lib, shape=(2, 3), strides=(0, 1))


@row("N-I15c", "negative stride: a view")
def _(lib):
    return crafted(lib, shape=(3,), strides=(-1,), byte_offset=16)


@row("N-I16", "byte_offset 8: folded into the data pointer")
def _(lib):
    return crafted(lib, shape=(3,), byte_offset=8)


@row("N-I17", "copy=True: forwarded; a producer that ignores it is not copied by NumPy")
def _(lib):
    return _kw_import(lib, copy=True)


@row("N-I17a", "copy=False: forwarded")
def _(lib):
    return _kw_import(lib, copy=False)


@row("N-I17b", "copy='yes': forwarded unchecked")
def _(lib):
    return _kw_import(lib, copy="yes")


@row("N-I18", "the capsule is already consumed (used_dltensor_versioned)")
def _(lib):
    return crafted(lib, producer={"returns": "consumed"})


@row("N-I18a", "the capsule is already consumed (used_dltensor)")
def _(lib):
    return crafted(lib, producer={"returns": "consumed"}, versioned=False)


@row("N-I19", "__dlpack__ returns an int")
def _(lib):
    return crafted(lib, producer={"returns": 7})


@row("N-I11c", "negative extent (-1, 3)")
def _(lib):
    return crafted(lib, shape=(-1, 3))


@row("N-I11d", "extents (2**62, 4): the size overflows")
def _(lib):
    return crafted(lib, shape=(2 ** 62, 4))


@row("N-I21", "NULL data for a non-empty tensor: accepted")
def _(lib):
    return crafted(lib, shape=(2,), null_data=True)


@row("N-I22", "data at an odd address (byte_offset 1, float64): a view, no alignment check")
def _(lib):
    return crafted(lib, shape=(3,), byte_offset=1)


def _kw_import(lib, producer=None, **kw):
    """from_dlpack(crafted, **kw); extra as in crafted()."""
    counter = cap.Counter()
    p = cap.Crafted(counter, **(producer or {}))

    def go():
        d = lib.describe(lib.from_dlpack(p, **kw))
        return ("ok", d["dtype"], d["shape"], d["strides"], d["read_only"], d["data"] == p.data, {})
    res = outcome(go)
    extra = {"calls": [c[1] if not c[0] else c for c in p.calls]}
    return res[:6] + (extra,) if res[0] == "ok" else res + (extra,)




# ---- the NumPy adapter ---------------------------------------------------------------------------------------

class NumpyAdapter:
    """The real NumPy: everything NumPy-specific is here."""

    def __init__(self):
        try:
            import numpy as np
        except ImportError:
            np = None
        self.np, self.name, self.version = np, "numpy", np.__version__ if np else "(absent)"

    def skip_reason(self):
        # Which releases are compared is the profiles' `models:` ranges (differential_test.py picks the module): NumPy
        # 2.2 exports without strides and refuses other kinds, so no profile claims it.
        if self.np is None:
            return "NumPy is not installed for %s" % sys.executable
        return None

    def array(self, values, dtype="float64", shape=None, read_only=False):
        a = self.np.array(values, dtype=dtype)
        if shape is not None:
            a = a.reshape(shape)
        a.flags.writeable = not read_only
        return a

    def view(self, arr, kind):
        np = self.np
        if kind == "transpose":
            return arr.T
        if kind == "step2":
            return arr[::2]
        if kind == "reversed":
            return arr[::-1]
        if kind == "row":
            return arr[1]
        if kind == "byte_strides":  # 3 float64 elements 12 bytes apart
            return np.ndarray((3,), dtype="f8", buffer=bytearray(64), strides=(12,))
        raise NotApplicable(kind)

    def export(self, arr, *args, **kw):
        return arr.__dlpack__(*args, **kw)

    def dlpack_device(self, arr):
        return arr.__dlpack_device__()

    def from_dlpack(self, *args, **kw):
        return self.np.from_dlpack(*args, **kw)

    def describe(self, arr):
        item = arr.dtype.itemsize
        return {"dtype": str(arr.dtype), "shape": tuple(arr.shape),
                "strides": tuple(s // item for s in arr.strides), "read_only": not arr.flags.writeable,
                "data": arr.__array_interface__["data"][0]}


def main(lib):
    return row_harness.print_rows(lib, ROWS, lambda r, lib_: r.run(lib_))


ADAPTER = NumpyAdapter  # the real system these rows describe (differential_test.py)

if __name__ == "__main__":
    sys.exit(main(NumpyAdapter()))
