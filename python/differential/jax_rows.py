"""JAX's DLPack contract as runnable rows (issue 46; docs/contracts/jax.md says which JAX release the jax profile
models and which rows the H200 run corrected).

Each row feeds the same input to the running JAX (JaxAdapter below: `jax`, `jax.numpy`, `jax.dlpack.from_dlpack`,
`Array.__dlpack__` / `__dlpack_device__`) and to dlmap built with the `jax` profile (dlmap_jax_adapter.py), and
differential_test.py requires the same outcome. Ids are the contract's (J-E* export, J-D* __dlpack_device__, J-I*
import) with a suffix per case; rows marked "own" in their description are cases beyond the contract's table.

Outcomes (what is compared):
  ("raises", kind, text)     kind: the nearest builtin class of the exception (its first base class defined in
                             `builtins`): JAX's status-word errors are `jax.errors.JaxRuntimeError`, a RuntimeError
                             subclass, and dlmap raises the builtin RuntimeError, so both are recorded as RuntimeError.
                             text: str(exception), exact, except for the normalisations a row names (see _norm).
  ("capsule", name, device, dtype, shape, strides, zero_copy)
                             an export: the capsule's name ("dltensor"), its device pair, dtype, shape, strides in
                             elements (None: NULL), and whether its data is the source array's own memory.
  ("device", (type, id))     __dlpack_device__, as plain ints (JAX answers an IntEnum member).
  ("array", dtype, shape, device, zero_copy, asked)
                             an import: the result's dtype name, shape, __dlpack_device__ pair, whether it is a view of
                             the producer's memory (None for a tensor without elements: no element, no address), and
                             the keyword arguments of each __dlpack__ call the producer received (None where they are
                             not comparable: a CUDA producer is passed JAX's own stream handle, a number only that
                             process knows).
  ("n/a", why)               the adapter cannot make the row's input here (a row that needs a GPU where JAX has none).

Text normalisations, each applied only by the rows that declare it:
  devices   JAX prints its Device objects (CpuDevice(id=0), CudaDevice(id=0)) where dlmap prints DLPack pairs
            ((kDLCPU, 0)) in the copy-forbidden texts (J-E5, J-I4): JAX's reprs are rewritten to the pairs.
  backend   a device type in JAX's map whose platform has no backend here (J-E3b): JAX raises get_backend's
            RuntimeError, whose text lists the platforms this JAX has; dlmap raises platform_unavailable, whose text
            names its own backends' reasons. Both are recorded as ("raises", "RuntimeError", "<no backend here>").
  producer  J-I3's text embeds str(x) of the producer, which holds its address: each row's own producer's str() is
            rewritten to "<producer>".
A peer outcome that is JAX failing inside itself (a RuntimeError whose text starts with "INTERNAL: ", XLA's status for
an internal error, such as JAX 0.11.2's CUDA_ERROR_INVALID_HANDLE for a CUDA array's __dlpack__(stream=-1)) is not a
contract outcome: run_row reports it as the peer's ("skip", …) with JAX's words, so it shows as N/A, never as a
difference; dlmap's own outcomes are never reclassified.

Producers for import rows are made here with ctypes over capsules.py's structs: legacy "dltensor" capsules (the only
kind JAX imports) over 256-byte aligned memory (XLA's CPU client views only aligned data, J-I13), or over device
memory the adapter allocates for CUDA rows.

The adapter interface (JaxAdapter is the reference; dlmap_jax_adapter.DlmapJaxAdapter the dlmap side):
  name, version, skip_reason()         what is tested; why it cannot be here (None: it can)
  peer_internal_failures               True where INTERNAL: errors are the peer's own failures (JaxAdapter only)
  has_gpu()                            CUDA arrays can be made
  array(shape, dtype, gpu=False)       a zero-filled native array (C order) on the CPU or the first CUDA device
  pointer(arr)                         the address of its first element
  export(arr, **kw)                    arr.__dlpack__(**kw)
  dlpack_device(arr)                   arr.__dlpack_device__()
  from_dlpack(x, device=None, copy=None)   device as a DLPack pair (the JAX adapter turns it into a jax Device)
  describe(result)                     {"dtype", "shape", "device", "data"} of an imported result
  backend_unavailable(exc)             exc is the refusal of a device type whose platform has no backend here
  device_memory(nbytes)                (address, keep-alive) of CUDA device memory (only where has_gpu())
Run: python3 jax_rows.py   (prints every row's outcome against the installed JAX)
"""

import builtins
import ctypes as C
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capsules as cap  # noqa: E402
import row_harness  # noqa: E402

ROWS, row = row_harness.registry()
NotApplicable = row_harness.NotApplicable  # e.g. a row that needs a GPU where JAX has none


def builtin_kind(exc):
    """The nearest builtin class of an exception: JaxRuntimeError -> RuntimeError (see the module docstring)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins" and getattr(builtins, cls.__name__, None) is cls:
            return cls.__name__
    return type(exc).__name__


_DEVICE_REPR = re.compile(r"\b(Cpu|Cuda|Rocm)Device\(id=(\d+)\)")
_DEVICE_TYPE = {"Cpu": "kDLCPU", "Cuda": "kDLCUDA", "Rocm": "kDLROCM"}


def _norm(lib, exc, norms, producer=None):
    """("raises", kind, text) with the row's declared normalisations (module docstring)."""
    text = str(exc)
    if "backend" in norms and lib.backend_unavailable(exc):
        return ("raises", builtin_kind(exc), "<no backend here>")
    if "devices" in norms:
        text = _DEVICE_REPR.sub(lambda m: "(%s, %s)" % (_DEVICE_TYPE[m.group(1)], m.group(2)), text)
    if "producer" in norms and producer is not None:
        text = text.replace(str(producer), "<producer>")
    return ("raises", builtin_kind(exc), text)


# ---- producers ------------------------------------------------------------------------------------------------------

_KEEP = []  # every producer's memory and structs outlive the rows: JAX may release its views late
_NAMES = {n: C.create_string_buffer(n) for n in (b"dltensor", b"dltensor_versioned", b"used_dltensor")}
_new_capsule = C.pythonapi.PyCapsule_New
_new_capsule.restype, _new_capsule.argtypes = C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p]
_set_name = C.pythonapi.PyCapsule_SetName
_set_name.restype, _set_name.argtypes = C.c_int, [C.py_object, C.c_char_p]


@cap.DELETER
def _deleter(addr):  # the producer's memory lives in _KEEP; nothing to free
    pass


def compact(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.insert(0, acc)
        acc *= n
    return tuple(strides)


class Producer:
    """A DLPack producer over memory it owns (256-byte aligned, plus `misalign` bytes) or over `data` (an address).

    dtype (code, bits, lanes); strides "compact", a tuple or None (NULL); device: the capsule's pair; reported: what
    __dlpack_device__ answers (default: device); ndim overrides len(shape); returns: "versioned" (a dltensor_versioned
    capsule), "consumed" (a capsule already renamed used_dltensor) or None; raises: an exception __dlpack__ raises.
    `asked` logs the keyword arguments of each __dlpack__ call; `data` is the address of the first element.
    """

    def __init__(self, shape=(2, 3), dtype=(2, 32, 1), strides="compact", device=(cap.KDL_CPU, 0), reported=None,
                 ndim=None, byte_offset=0, misalign=0, data=None, returns=None, raises=None):
        self.buf = C.create_string_buffer(4096 + 512)
        base = (C.addressof(self.buf) + 255) // 256 * 256 + misalign if data is None else data
        self.base, self.byte_offset, self.data = base, byte_offset, base + byte_offset
        self.shape = (C.c_int64 * max(len(shape), 1))(*shape)
        strides = compact(shape) if strides == "compact" else strides
        self.strides = None if strides is None else (C.c_int64 * max(len(strides), 1))(*strides)
        self.dtype, self.device, self.ndim = dtype, device, len(shape) if ndim is None else ndim
        self.reported = reported or device
        self.returns, self.raises, self.asked = returns, raises, []
        _KEEP.append(self)

    def __dlpack_device__(self):
        return self.reported

    def __dlpack__(self, **kw):
        self.asked.append(dict(sorted(kw.items())))
        if self.raises is not None:
            raise self.raises
        versioned = self.returns == "versioned"
        managed = cap.DLManagedTensorVersioned() if versioned else cap.DLManagedTensor()
        if versioned:
            managed.version = cap.DLPackVersion(1, 0)
        t = managed.dl_tensor
        t.data, t.device = self.base, cap.DLDevice(*self.device)
        t.ndim, t.dtype, t.byte_offset = self.ndim, cap.DLDataType(*self.dtype), self.byte_offset
        t.shape = C.cast(self.shape, C.POINTER(C.c_int64))
        t.strides = None if self.strides is None else C.cast(self.strides, C.POINTER(C.c_int64))
        managed.deleter = _deleter
        _KEEP.append(managed)
        capsule = _new_capsule(C.addressof(managed), _NAMES[b"dltensor_versioned" if versioned else b"dltensor"], None)
        if self.returns == "consumed":
            _set_name(capsule, _NAMES[b"used_dltensor"])
        return capsule


# ---- the calls, normalised --------------------------------------------------------------------------------------------

def _gpu(lib):
    if not lib.has_gpu():
        raise NotApplicable("needs a CUDA device, and %s has none here" % lib.name)


def exported(lib, arr, norms=(), **kw):
    try:
        info = cap.read_capsule(lib.export(arr, **kw))
    except Exception as e:  # the row's subject: any exception is an outcome
        return _norm(lib, e, norms)
    if info is None:
        return ("raises", "<not a DLPack capsule>", "")
    return ("capsule", info["capsule"], info["device"], info["dtype"], info["shape"], info["strides"],
            info["data"] == lib.pointer(arr))


def imported(lib, producer, norms=(), asked=True, **kw):
    try:
        d = lib.describe(lib.from_dlpack(producer, **kw))
    except Exception as e:
        return _norm(lib, e, ("producer",) + tuple(norms), producer)
    size = 1
    for n in d["shape"]:
        size *= n
    zero_copy = (d["data"] == producer.data) if size else None
    return ("array", d["dtype"], d["shape"], d["device"], zero_copy,
            producer.asked if asked and isinstance(producer, Producer) else None)


def _cpu(lib, shape=(2, 3), dtype="float32"):
    return lib.array(shape, dtype)


def _cuda(lib, shape=(2, 3), dtype="float32"):
    _gpu(lib)
    return lib.array(shape, dtype, gpu=True)


def _cpu_on_gpu_machine(lib):
    """A CPU array, for rows that move it to a CUDA device."""
    _gpu(lib)
    return _cpu(lib)


# ---- export: Array.__dlpack__ (J-E*) ----------------------------------------------------------------------------------

def _export_row(rid, what, make=_cpu, norms=(), **kw):
    row(rid, what)(lambda lib: exported(lib, make(lib), norms, **kw))


_export_row("J-E4a", "no arguments: a legacy capsule, the array's own memory")
_export_row("J-E4", "max_version=(0, 4): below (0, 5)", max_version=(0, 4))
for _mv in ((0, 5), (0, 8), (1, 0), (1, 3), (2, 0)):
    _export_row("J-E4a-%d.%d" % _mv, "max_version=%r: legacy capsule%s" % (_mv, " (own)" if _mv == (2, 0) else ""),
                max_version=_mv)
_export_row("J-E4a-None", "max_version=None given", max_version=None)
for _s in (None, 0, 1, 2, -1):
    _export_row("J-E7-cpu-%s" % _s, "stream=%r on a CPU array" % (_s,), stream=_s)
for _c in (None, True, False):
    _export_row("J-E6-%s" % _c, "copy=%r, no dl_device: %s" % (_c, "a copy" if _c else "the array itself"), copy=_c)
    _export_row("J-E6-cpu-%s" % _c, "dl_device=(1, 0) (the array's own device), copy=%r" % (_c,),
                dl_device=(1, 0), copy=_c)
    _export_row("J-E3a-%s" % _c, "dl_device=(0, 0): type 0 is falsy, so no dl_device; copy=%r" % (_c,),
                dl_device=(0, 0), copy=_c)
_export_row("J-E3", "dl_device=(13, 0): kDLCUDAManaged is not in JAX's map", dl_device=(13, 0))
_export_row("J-E3-19", "dl_device=(19, 0): kDLTPU is not in the map (own)", dl_device=(19, 0))
_export_row("J-E3-4", "dl_device=(4, 0): kDLOpenCL (own)", dl_device=(4, 0))
_export_row("J-E3-13-copy", "dl_device=(13, 0), copy=True: still refused (own)", dl_device=(13, 0), copy=True)
for _t in (10, 11, 14, 20):
    # In the map; on a machine without that platform both refuse for want of a backend (normalised: J-E3b).
    _export_row("J-E3b-%d" % _t, "dl_device=(%d, 0): in the map, its platform's backend is absent here" % _t,
                norms=("backend",), dl_device=(_t, 0))
for _dt in ("bool", "int8", "uint16", "float16", "bfloat16", "complex64", "float8_e4m3fn", "float8_e5m2"):
    _export_row("J-E10-%s" % _dt, "a %s array: its dtype in a legacy capsule" % _dt,
                make=lambda lib, _dt=_dt: _cpu(lib, dtype=_dt), max_version=(1, 0))
_export_row("J-E-0d", "a 0-d array (own)", make=lambda lib: _cpu(lib, shape=()))
_export_row("J-E-empty", "a (0, 3) array (own)", make=lambda lib: _cpu(lib, shape=(0, 3)))

# CUDA arrays (a GPU where JAX has one)
_export_row("J-E8-cuda", "CUDA array, no arguments: kDLCUDA capsule, its own memory", make=_cuda)
for _s in (None, 0, 1, 2, -1):
    _export_row("J-E7-cuda-%s" % _s, "CUDA array, stream=%r" % (_s,), make=_cuda, stream=_s)
_export_row("J-E4-cuda", "CUDA array, max_version=(0, 4)", make=_cuda, max_version=(0, 4))
_export_row("J-E4a-cuda", "CUDA array, max_version=(1, 0): legacy", make=_cuda, max_version=(1, 0))
for _c in (None, True, False):
    _export_row("J-E5-host-%s" % _c, "CUDA array, dl_device=(1, 0), copy=%r: to the host" % (_c,), make=_cuda,
                norms=("devices",), dl_device=(1, 0), copy=_c)
    _export_row("J-E6-cuda-%s" % _c, "CUDA array, dl_device=(2, 0) (its own device), copy=%r" % (_c,), make=_cuda,
                dl_device=(2, 0), copy=_c)
    _export_row("J-E5-to-cuda-%s" % _c, "CPU array, dl_device=(2, 0), copy=%r: to the GPU" % (_c,),
                make=_cpu_on_gpu_machine, norms=("devices",), dl_device=(2, 0), copy=_c)
_export_row("J-E6-cudahost", "CUDA array, dl_device=(3, 0): kDLCUDAHost resolves to the same JAX device",
            make=_cuda, dl_device=(3, 0))
_export_row("J-E3-cuda-13", "CUDA array, dl_device=(13, 0): not in the map", make=_cuda, dl_device=(13, 0))


# ---- __dlpack_device__ (J-D*) -----------------------------------------------------------------------------------------

def _device(lib, arr):
    try:
        t, i = lib.dlpack_device(arr)
    except Exception as e:
        return _norm(lib, e, ())
    return ("device", (int(t), int(i)))


row("J-D2", "CPU array")(lambda lib: _device(lib, _cpu(lib)))
row("J-D3", "CUDA array")(lambda lib: _device(lib, _cuda(lib)))


# ---- import: jax.dlpack.from_dlpack (J-I*) ----------------------------------------------------------------------------

def _import_row(rid, what, norms=(), asked=True, gpu=False, kw=None, **producer):
    def run(lib):
        if gpu:
            _gpu(lib)
        return imported(lib, Producer(**producer), norms, asked, **(kw or {}))
    row(rid, what)(run)


_import_row("J-I-cpu", "kDLCPU float32 (2, 3): a view; asked __dlpack__(stream=None) only (J-I5)")
_import_row("J-I-copy", "copy=True: a copy (own)", kw={"copy": True})
_import_row("J-I-nocopy", "copy=False: a view (own)", kw={"copy": False})
_import_row("J-I-cpu-device", "device=(1, 0), copy=False: the producer's own device, a view (own)",
            kw={"device": (1, 0), "copy": False})
for _t in (2, 3, 10, 11, 14, 20):
    # Host memory behind a device type whose platform has no backend here: both refuse on the backend (J-E3b's
    # normalisation) before reading it. Where a GPU is, types 2 and 3 get rows of their own below.
    def _absent(lib, _t=_t):
        if _t in (2, 3) and lib.has_gpu():
            raise NotApplicable("%s has a CUDA device: J-I-cuda and J-I6 import this type" % lib.name)
        return imported(lib, Producer(device=(_t, 0)), ("backend",))
    row("J-I3b-%d" % _t, "device type %d (in JAX's map), its platform's backend absent here" % _t)(_absent)
for _t in (13, 4, 7, 8, 19, 99):
    _import_row("J-I3-%d" % _t, "device type %d: not in JAX's map, refused before __dlpack__" % _t, device=(_t, 0))
_import_row("J-I7-versioned", "a producer answering with a versioned capsule", returns="versioned")
_import_row("J-I7-consumed", "a capsule already consumed (named used_dltensor)", returns="consumed")
_import_row("J-I8", "ndim -1", ndim=-1)
for _name, _dtype in (("int4", (0, 4, 1)), ("uint4", (1, 4, 1)), ("uint1", (1, 1, 1)), ("int2", (0, 2, 1)),
                      ("float4_e2m1fn", (17, 4, 1)), ("float6_e2m3fn", (15, 6, 1))):
    _import_row("J-I10-%s" % _name, "%s: sub-byte" % _name, dtype=_dtype, shape=(6,))
_import_row("J-I11", "float32 with lanes=2", dtype=(2, 32, 2), shape=(3,))
_import_row("J-I11-int4x2", "int4 with lanes=2: which check comes first (own)", dtype=(0, 4, 2), shape=(3,))
_import_row("J-I12-bool16", "bool of 16 bits", dtype=(6, 16, 1))
_import_row("J-I12-complex32", "complex of 32 bits", dtype=(5, 32, 1))
_import_row("J-I12-code99", "unknown type code 99", dtype=(99, 8, 1))
_import_row("J-I12-bfloat32", "bfloat of 32 bits (own)", dtype=(4, 32, 1))
_import_row("J-I12-float8bits", "float of 8 bits (own)", dtype=(2, 8, 1))
_import_row("J-I12-handle", "opaque handle, code 3 (own)", dtype=(3, 64, 1))
for _name, _code in (("float8_e3m4", 7), ("float8_e4m3", 8), ("float8_e4m3b11fnuz", 9), ("float8_e4m3fn", 10),
                     ("float8_e4m3fnuz", 11), ("float8_e5m2", 12), ("float8_e5m2fnuz", 13), ("float8_e8m0fnu", 14)):
    _import_row("J-I12-%s" % _name, "%s (code %d)" % (_name, _code), dtype=(_code, 8, 1))
for _name, _dtype in (("bool", (6, 8, 1)), ("int8", (0, 8, 1)), ("uint16", (1, 16, 1)), ("float16", (2, 16, 1)),
                      ("bfloat16", (4, 16, 1)), ("complex64", (5, 64, 1)), ("int32", (0, 32, 1))):
    _import_row("J-I-%s" % _name, "%s: a view" % _name, dtype=_dtype)
_import_row("J-I14-float64", "float64: JAX canonicalises to float32 without x64", dtype=(2, 64, 1))
_import_row("J-I14-int64", "int64: JAX canonicalises to int32 without x64", dtype=(0, 64, 1))
_import_row("J-I9-broadcast", "broadcast strides (0, 1)", strides=(0, 1))
_import_row("J-I9-broadcast-copy", "broadcast strides (0, 1), copy=True: still refused", strides=(0, 1),
            kw={"copy": True})
_import_row("J-I9-gap", "strides (6, 1) for (2, 3): rows of a wider buffer (own)", strides=(6, 1))
_import_row("J-I9-negative", "a negative stride (-1,) (own)", shape=(3,), strides=(-1,), byte_offset=8)
_import_row("J-I9-transposed", "transposed strides (1, 2): a permutation of compact, accepted", strides=(1, 2))
_import_row("J-I9-size1", "a size-1 dimension with stride 99: not checked (own)", shape=(1, 3), strides=(99, 1))
_import_row("J-I9-empty", "a (0, 3) tensor with strides (0, 0): size 0 skips the check (own)", shape=(0, 3),
            strides=(0, 0))
_import_row("J-I-null-strides", "strides NULL: compact row-major (own)", strides=None)
_import_row("J-I-0d", "a 0-d tensor (own)", shape=(), strides=())
_import_row("J-I-offset", "byte_offset 256: the view starts there (own)", byte_offset=256)
_import_row("J-I13-copy-false", "data 1 byte off alignment, copy=False", misalign=1, dtype=(0, 8, 1),
            kw={"copy": False})
_import_row("J-I13-copy-none", "data 1 byte off alignment, copy=None", misalign=1, dtype=(0, 8, 1))
_import_row("J-I-raises", "the producer's __dlpack__ raises BufferError (own)", raises=BufferError("producer says no"))
row("J-I2", "an object without __dlpack__ / __dlpack_device__")(lambda lib: imported(lib, object()))
row("J-I2-capsule", "a bare capsule (no methods)")(lambda lib: imported(lib, lib.export(_cpu(lib))))


def _roundtrip(lib, gpu=False):
    """The library's own array back through its own from_dlpack: zero-copy (own)."""
    arr = _cuda(lib) if gpu else _cpu(lib)
    try:
        d = lib.describe(lib.from_dlpack(arr))
    except Exception as e:
        return _norm(lib, e, ())
    return ("array", d["dtype"], d["shape"], d["device"], d["data"] == lib.pointer(arr), None)


row("J-I-own", "its own CPU array back (own)")(_roundtrip)
row("J-I-own-cuda", "its own CUDA array back (own)")(lambda lib: _roundtrip(lib, gpu=True))


def _cuda_producer(lib, norms=(), kw=None, **producer):
    """A kDLCUDA producer over device memory the library allocated; the stream asked is not compared (docstring)."""
    _gpu(lib)
    address, keep = lib.device_memory(4096)
    _KEEP.append(keep)
    return imported(lib, Producer(data=address, device=(cap.KDL_CUDA, 0), **producer), norms, False, **(kw or {}))


row("J-I-cuda", "kDLCUDA producer: a view of device memory")(_cuda_producer)
row("J-I-cuda-copy", "kDLCUDA producer, copy=True")(lambda lib: _cuda_producer(lib, kw={"copy": True}))
row("J-I4", "kDLCUDA producer, device=(1, 0), copy=False: refused")(
    lambda lib: _cuda_producer(lib, ("devices",), kw={"device": (1, 0), "copy": False}))
row("J-I4-host", "kDLCUDA producer, device=(1, 0): copied to the host")(
    lambda lib: _cuda_producer(lib, kw={"device": (1, 0)}))
_import_row("J-I4-to-cuda", "kDLCPU producer, device=(2, 0), copy=False: refused", norms=("devices",), gpu=True,
            kw={"device": (2, 0), "copy": False})
_import_row("J-I6", "__dlpack_device__ (3, 0), capsule (1, 0): pinned-style producer, asked stream=None", gpu=True,
            reported=(3, 0))


# ---- running ----------------------------------------------------------------------------------------------------------

def run_row(row_, lib):
    """The row's outcome against lib; ("skip", why) where lib cannot make the input, or where the peer failed inside
    itself (an INTERNAL: status; module docstring)."""
    try:
        result = row_.run(lib)
    except NotApplicable as e:
        return ("skip", str(e))
    if (getattr(lib, "peer_internal_failures", False) and result[0] == "raises" and result[1] == "RuntimeError"
            and result[2].startswith("INTERNAL: ")):
        return ("skip", "%s failed inside itself, not a contract outcome: %s" % (lib.name, result[2]))
    return result


# ---- the real-JAX adapter ---------------------------------------------------------------------------------------------

class JaxAdapter:
    name = "jax"
    peer_internal_failures = True

    def __init__(self):
        self.version, self.error = None, None
        try:
            import jax
            import jax.dlpack
            import jax.numpy as jnp
            import numpy as np
        except Exception as e:  # not installed, or installed and broken: nothing to compare with
            self.jax, self.error = None, "JAX does not import here (%s: %s)" % (type(e).__name__, e)
            return
        # The contract describes JAX's defaults: 64-bit types canonicalised to 32-bit (J-I14).
        jax.config.update("jax_enable_x64", False)
        self.jax, self.jnp, self.np = jax, jnp, np
        self.version = jax.__version__  # the release differential_test.py matches with the profile's `models:` range
        self.cpu = jax.devices("cpu")[0]
        try:
            self.gpus = jax.devices("cuda")
        except RuntimeError:  # no CUDA backend in this JAX or on this machine
            self.gpus = []

    def skip_reason(self):
        return self.error

    def has_gpu(self):
        return bool(self.gpus)

    def _device(self, pair):
        kind, index = pair
        if int(kind) == cap.KDL_CPU:
            return self.jax.devices("cpu")[int(index)]
        return next(d for d in self.gpus if d.local_hardware_id == int(index))

    def array(self, shape, dtype, gpu=False):
        # by JAX's own scalar types (jnp.bfloat16, jnp.float8_e4m3fn: ml_dtypes), not by NumPy's name lookup
        host = self.np.zeros(shape, dtype=self.jnp.dtype(getattr(self.jnp, "bool_" if dtype == "bool" else dtype)))
        return self.jax.device_put(host, self.gpus[0] if gpu else self.cpu)

    def pointer(self, arr):
        return arr.unsafe_buffer_pointer()

    def export(self, arr, **kw):
        return arr.__dlpack__(**kw)

    def dlpack_device(self, arr):
        return arr.__dlpack_device__()

    def from_dlpack(self, x, device=None, copy=None):
        return self.jax.dlpack.from_dlpack(x, device=None if device is None else self._device(device), copy=copy)

    def describe(self, result):
        kind, index = result.__dlpack_device__()
        return {"dtype": str(result.dtype), "shape": tuple(result.shape), "device": (int(kind), int(index)),
                "data": result.unsafe_buffer_pointer()}

    _BACKEND = re.compile(r"^(Unknown backend|Backend '[^']*' (failed to initialize|is not in the list of known "
                          r"backends|provides no devices)|Could not initialize backend)")

    def backend_unavailable(self, exc):
        # xla_bridge.get_backend's refusals (jax/_src/xla_bridge.py), raised as plain RuntimeError
        return type(exc) is RuntimeError and bool(self._BACKEND.match(str(exc)))

    def device_memory(self, nbytes):
        arr = self.array((nbytes,), "uint8", gpu=True)
        return arr.unsafe_buffer_pointer(), arr


ADAPTER = JaxAdapter  # the real system these rows describe (differential_test.py)


def main():
    return row_harness.print_rows(JaxAdapter(), ROWS, run_row)


if __name__ == "__main__":
    sys.exit(main())
