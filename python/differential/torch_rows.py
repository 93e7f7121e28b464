#!/usr/bin/env python3
"""PyTorch 2.x's DLPack contract as runnable rows (issue 27; docs/contracts/pytorch.md has the table).

Each row has the id of its line in docs/contracts/pytorch.md (T-E* export, T-D* __dlpack_device__, T-I* import,
T-X* the C exchange API table) and a function run(lib) that performs the row's call against an adapter `lib` and
returns a normalised outcome, so that the same rows can later be run against dlmap's `pytorch` profile and the two
outcomes compared row by row:

  ("raises", kind, text)                         the exception's class name and str()
  ("ok", dtype, shape, strides, read_only, shares[, extra])
                                                 dtype a DLPack-style name ("float64", "uint16", "float8_e4m3fn");
                                                 strides in elements (None: the capsule's strides pointer is NULL);
                                                 read_only: the READ_ONLY flag (export) or the result's read-only
                                                 state (import); shares: the result's data lies in the source's
                                                 memory; extra (export and table rows only): capsule name, version
                                                 stamp, flags and device of the exported struct
  ("device", (device_type, device_id))           __dlpack_device__ rows
  ("asks", [kwargs of each __dlpack__ call])     import rows about what the consumer asks the producer
  ("skip", reason)                               the adapter cannot make the row's producer here (e.g. no CUDA)

The adapter interface (TorchAdapter below is the real-PyTorch one):
  name, skip_reason()              a reason to skip every row, or None
  array_f64(values, read_only)     a native producer (1-D float64 on the host); read_only may raise Skip
  special(kind)                    a native producer with one property (see TorchAdapter.special); may raise Skip
  dlpack(x, **kw), dlpack_device(x), to_dlpack(x), from_dlpack(obj, **kw)
  data_ptr(x)                      address of x's first element
  view(t)                          (dtype, shape, strides, read_only, data_ptr, nbytes) of an imported result
  write_first(t, value)            write an imported result's first element
  exchange_api(x)                  the __dlpack_c_exchange_api__ capsule of type(x), or raise Skip

Import rows feed the consumer a FakeProducer: a library-neutral producer built with ctypes that writes any field
(dtype, device, strides, flags, version, byte offset) into a legacy or versioned capsule, and records what it is
asked. Plain Python 3; no dlmap, no NumPy. Run: python3 python/differential/torch_rows.py [row ids…]
"""

import ast
import ctypes
import re
import subprocess
import sys

# --- DLPack structs (dlpack.h 1.3) -------------------------------------------------------------------------------


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class DLPackExchangeAPI(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("prev_api", ctypes.c_void_p),
                ("managed_tensor_allocator", ctypes.c_void_p),
                ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
                ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
                ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
                ("current_work_stream", ctypes.c_void_p)]


READ_ONLY, IS_COPIED = 1, 2
kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLCUDAManaged = 1, 2, 3, 10, 13
_CODES = {0: "int", 1: "uint", 2: "float", 3: "handle", 4: "bfloat", 5: "complex", 6: "bool", 7: "float8_e3m4",
          8: "float8_e4m3", 9: "float8_e4m3b11fnuz", 10: "float8_e4m3fn", 11: "float8_e4m3fnuz",
          12: "float8_e5m2", 13: "float8_e5m2fnuz", 14: "float8_e8m0fnu", 15: "float6_e2m3fn",
          16: "float6_e3m2fn", 17: "float4_e2m1fn"}

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_NAMES = {False: b"dltensor", True: b"dltensor_versioned"}   # module constants: capsules keep these pointers
_KEEP = []                                                    # fake producers' memory outlives every row


class Skip(Exception):
    """The adapter cannot make this row's producer here."""


def dtype_name(code, bits, lanes=1):
    """int32, bool, float8_e4m3fn; a width other than the name's own as :bits, lanes as xN (float4_e2m1fn x2)."""
    base = _CODES.get(code, "code%d" % code)
    fixed = {"bool": 8, "float8": 8, "float6": 6, "float4": 4}
    own = next((w for k, w in fixed.items() if base.startswith(k)), None)
    name = "%s%d" % (base, bits) if own is None else (base if bits == own else "%s:%d" % (base, bits))
    return name if lanes == 1 else "%s x%d" % (name, lanes)


def read_capsule(capsule):
    """The struct behind a DLPack capsule, read without consuming it."""
    name = _api.PyCapsule_GetName(capsule)
    versioned = name.endswith(b"versioned")
    ptr = _api.PyCapsule_GetPointer(capsule, name)
    managed = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(ptr)
    t = managed.dl_tensor
    return {"capsule": name.decode(), "version": (managed.version.major, managed.version.minor) if versioned else None,
            "flags": managed.flags if versioned else None, "tensor": t}


def describe(t):
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    return dtype_name(t.dtype.code, t.dtype.bits, t.dtype.lanes), shape, strides


def exported(capsule, source_ptr):
    """Normalise an exported capsule against the address of the source's first element."""
    info = read_capsule(capsule)
    t = info["tensor"]
    dtype, shape, strides = describe(t)
    flags = info["flags"] or 0
    shares = source_ptr is not None and (t.data or 0) + t.byte_offset == source_ptr
    extra = {"capsule": info["capsule"], "version": info["version"], "flags": info["flags"],
             "device": (t.device.device_type, t.device.device_id), "byte_offset": t.byte_offset}
    return ("ok", dtype, shape, strides, bool(flags & READ_ONLY), shares, extra)


def outcome(fn):
    try:
        return fn()
    except Skip as e:
        return ("skip", str(e))
    except Exception as e:  # every exception is a row's outcome, reported by kind and text
        return ("raises", type(e).__name__, clean(str(e)))


def clean(text):
    """A message without the C++ backtrace c10 appends (addresses vary) or a dispatcher's backend list."""
    if "\nException raised from" in text:
        text = text.split("\nException raised from")[0] + " [+ C++ backtrace]"
    if "\n" in text:
        text = text.split("\n")[0] + " [...]"
    return text


class FakeProducer:
    """A library-neutral producer: writes any DLPack field into a fresh capsule on each __dlpack__ call.

    accepts: the keyword arguments __dlpack__ takes (others raise TypeError, as Python would), or None for all.
    versioned: None (answer versioned iff max_version >= (1, 0) is asked), True or False (always that struct).
    """

    def __init__(self, values=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0), shape=(6,), strides="compact", code=2, bits=64,
                 lanes=1, device=(kDLCPU, 0), reported_device=None, versioned=None, version=(1, 0), flags=0,
                 byte_offset=0, misalign=0, ndim=None, accepts=None, raises=None):
        import struct
        payload = b"".join(struct.pack("<d", v) for v in values)
        self.buf = (ctypes.c_ubyte * (len(payload) + 128))()
        self.base = (ctypes.addressof(self.buf) + 63) // 64 * 64 + misalign
        ctypes.memmove(self.base, payload, len(payload))
        self.nbytes = len(payload)
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        if strides == "compact":
            strides, acc = [], 1
            for n in reversed(shape):
                strides.insert(0, acc)
                acc *= n
        self.strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        self.fields = dict(code=code, bits=bits, lanes=lanes, device=device, ndim=len(shape) if ndim is None else ndim,
                           byte_offset=byte_offset)
        self.reported_device = reported_device or device
        self.versioned, self.version, self.flags = versioned, version, flags
        self.accepts, self.raises, self.asks, self.structs = accepts, raises, [], []
        _KEEP.append(self)

    def __dlpack_device__(self):
        return self.reported_device

    def __dlpack__(self, **kw):
        self.asks.append(dict(kw))
        if self.accepts is not None and set(kw) - set(self.accepts):
            raise TypeError("__dlpack__() got an unexpected keyword argument %r" % sorted(set(kw) - set(self.accepts))[0])
        if self.raises is not None:
            raise self.raises
        mv = kw.get("max_version")
        versioned = self.versioned if self.versioned is not None else (mv is not None and tuple(mv) >= (1, 0))
        return self.capsule(versioned)

    def capsule(self, versioned):
        managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        if versioned:
            managed.version.major, managed.version.minor = self.version
            managed.flags = self.flags
        f, t = self.fields, managed.dl_tensor
        t.data = self.base
        t.device.device_type, t.device.device_id = f["device"]
        t.ndim, t.byte_offset = f["ndim"], f["byte_offset"]
        t.dtype.code, t.dtype.bits, t.dtype.lanes = f["code"], f["bits"], f["lanes"]
        t.shape = self.shape
        t.strides = self.strides
        self.structs.append(managed)
        return _api.PyCapsule_New(ctypes.addressof(managed), _NAMES[bool(versioned)], None)

    def holds(self, ptr):
        return self.base - 64 <= ptr < self.base + self.nbytes + 64


def imported(lib, producer, **kw):
    """from_dlpack(producer, **kw), normalised; shares: the result lies in the producer's memory."""
    t = lib.from_dlpack(producer, **kw)
    dtype, shape, strides, read_only, ptr, nbytes = lib.view(t)
    if isinstance(producer, FakeProducer):
        shares = producer.holds(ptr)
    else:
        shares = ptr == lib.data_ptr(producer)
    return ("ok", dtype, shape, strides, read_only, shares)


def export(lib, x, **kw):
    return exported(lib.dlpack(x, **kw), lib.data_ptr(x))


def asks(lib, producer, **kw):
    outcome_ = outcome(lambda: imported(lib, producer, **kw))
    return ("asks", producer.asks, outcome_[0] if outcome_[0] != "raises" else outcome_)


# --- the C exchange API table (__dlpack_c_exchange_api__) --------------------------------------------------------

_FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
_DLT_FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
_TO_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


def table(lib, x):
    capsule = lib.exchange_api(x)
    name = _api.PyCapsule_GetName(capsule)
    return name, DLPackExchangeAPI.from_address(_api.PyCapsule_GetPointer(capsule, name))


def table_export(lib, x):
    """managed_tensor_from_py_object_no_sync(x): the versioned struct it makes, then its deleter."""
    _, api = table(lib, x)
    out = ctypes.c_void_p()
    _FROM_PY(api.managed_tensor_from_py_object_no_sync)(x, ctypes.byref(out))
    managed = DLManagedTensorVersioned.from_address(out.value)
    dtype, shape, strides = describe(managed.dl_tensor)
    t = managed.dl_tensor
    result = ("ok", dtype, shape, strides, bool(managed.flags & READ_ONLY),
              (t.data or 0) + t.byte_offset == lib.data_ptr(x),
              {"version": (managed.version.major, managed.version.minor), "flags": managed.flags,
               "device": (t.device.device_type, t.device.device_id)})
    if managed.deleter:
        _DELETER(managed.deleter)(out.value)
    return result


def table_dltensor(lib, x):
    _, api = table(lib, x)
    t = DLTensor()
    _DLT_FROM_PY(api.dltensor_from_py_object_no_sync)(x, ctypes.byref(t))
    dtype, shape, strides = describe(t)
    return ("ok", dtype, shape, strides, None, (t.data or 0) + t.byte_offset == lib.data_ptr(x),
            {"device": (t.device.device_type, t.device.device_id)})


def table_import(lib, producer, versioned_flags):
    """managed_tensor_to_py_object_no_sync on a FakeProducer's versioned struct."""
    _, api = table(lib, lib.array_f64([0.0]))
    producer.flags = versioned_flags
    capsule = producer.capsule(True)
    ptr = _api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    out = ctypes.c_void_p()
    _TO_PY(api.managed_tensor_to_py_object_no_sync)(ptr, ctypes.byref(out))
    obj = ctypes.cast(out, ctypes.py_object).value
    ctypes.pythonapi.Py_DecRef(ctypes.py_object(obj))   # the table returned a new reference; ours holds it now
    dtype, shape, strides, read_only, data, _ = lib.view(obj)
    return ("ok", dtype, shape, strides, read_only, producer.holds(data))


def table_header(lib):
    """The table's capsule name, major version, prev_api and slots. The minor is left out: it is the DLPack header each
    library was built with (PyTorch 2.14.1: 1.3; dlmap: its spec's current version), a build fact, not behaviour."""
    name, api = table(lib, lib.array_f64([0.0]))
    return ("ok", name.decode(), api.version.major, bool(api.prev_api),
            [f for f, _ in DLPackExchangeAPI._fields_[2:] if getattr(api, f)])


def table_stream(lib, device_type):
    _, api = table(lib, lib.array_f64([0.0]))
    out = ctypes.c_void_p(12345)
    rc = _STREAM(api.current_work_stream)(device_type, 0, ctypes.byref(out))
    return ("ok", rc, out.value)


# --- the rows ----------------------------------------------------------------------------------------------------

class Row:
    def __init__(self, id, doc, run, isolate=False):
        self.id, self.doc, self.run, self.isolate = id, doc, run, isolate

    @property
    def what(self):   # differential_test.py's name for the description
        return self.doc


def _x(lib):
    return lib.array_f64([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])


def _sp(kind):
    return lambda lib: lib.special(kind)


def _exp(make, **kw):
    return lambda lib: export(lib, make(lib), **kw)


def _to_dlpack(make):
    def run(lib):
        x = make(lib)
        return exported(lib.to_dlpack(x), lib.data_ptr(x))
    return run


def _imp(producer_kw=None, **kw):
    return lambda lib: imported(lib, FakeProducer(**(producer_kw or {})), **kw)


def _asks(producer_kw=None, **kw):
    return lambda lib: asks(lib, FakeProducer(**(producer_kw or {})), **kw)


def _twice(lib):
    capsule = lib.dlpack(_x(lib))
    lib.from_dlpack(capsule)
    return imported(lib, capsule)


ROWS = [
    # export: Tensor.__dlpack__ / torch.utils.dlpack.to_dlpack
    Row("T-E1", "requires_grad tensor", _exp(_sp("requires_grad"))),
    Row("T-E2", "conjugate bit set", _exp(_sp("conj"))),
    Row("T-E3", "negative bit set", _exp(_sp("neg"))),
    Row("T-E4", "sparse COO layout", _exp(_sp("sparse"))),
    Row("T-E5", "quantized qint8", _exp(_sp("quantized"))),
    Row("T-E6", "meta device tensor", _exp(_sp("meta"))),
    Row("T-E7", "max_version absent: legacy capsule", _exp(_x)),
    Row("T-E8", "max_version=(0, 8): legacy capsule", _exp(_x, max_version=(0, 8))),
    Row("T-E9", "max_version=(1, 0): versioned, stamped with the library's own version", _exp(_x, max_version=(1, 0))),
    Row("T-E10", "max_version=(2, 0): versioned (only the major is compared with 1)", _exp(_x, max_version=(2, 0))),
    Row("T-E11", "max_version=(0, 1): legacy (no lower bound)", _exp(_x, max_version=(0, 1))),
    Row("T-E12", "max_version=1 (not a tuple)", _exp(_x, max_version=1)),
    Row("T-E13", "stream=5 on a CPU tensor", _exp(_x, stream=5)),
    Row("T-E14", "stream='s' (not int)", _exp(_x, stream="s")),
    Row("T-E15", "stream=None on a CPU tensor", _exp(_x, stream=None)),
    Row("T-E16", "stream=True (bool is not int)", _exp(_x, stream=True)),
    Row("T-E17", "read_only=True, versioned", _exp(_x, max_version=(1, 0), read_only=True)),
    Row("T-E18", "read_only=True, legacy", _exp(_x, read_only=True)),
    Row("T-E19", "copy=True, versioned: a copy; IS_COPIED?", _exp(_x, max_version=(1, 0), copy=True)),
    Row("T-E20", "copy=False, same device", _exp(_x, max_version=(1, 0), copy=False)),
    Row("T-E21", "dl_device=(kDLCPU, 0) on a CPU tensor", _exp(_x, dl_device=(kDLCPU, 0))),
    Row("T-E22", "dl_device=(kDLCUDA, 0), copy=False, CPU tensor", _exp(_x, dl_device=(kDLCUDA, 0), copy=False)),
    Row("T-E23", "dl_device=(kDLCUDA, 0), copy=None, CPU tensor", _exp(_x, dl_device=(kDLCUDA, 0))),
    Row("T-E24", "dl_device=(99, 0)", _exp(_x, dl_device=(99, 0))),
    Row("T-E25", "dl_device=(0, 0) (type 0)", _exp(_x, dl_device=(0, 0))),
    Row("T-E26", "dl_device=(kDLCUDAHost, 0) on a CPU tensor", _exp(_x, dl_device=(kDLCUDAHost, 0))),
    Row("T-E27", "size-1 dims: strides rewritten to 1", _exp(_sp("size1"))),
    Row("T-E28", "transposed view: strides kept", _exp(_sp("transposed"))),
    Row("T-E29", "broadcast view (stride 0): strides kept", _exp(_sp("broadcast"))),
    Row("T-E30", "view with storage offset: data points at the first element", _exp(_sp("offset"))),
    Row("T-E31", "0-d tensor", _exp(_sp("scalar"))),
    Row("T-E32", "zero-size tensor", _exp(_sp("empty"))),
    Row("T-E33", "bool", _exp(_sp("bool"))),
    Row("T-E34", "uint16", _exp(_sp("uint16"))),
    Row("T-E35", "uint64", _exp(_sp("uint64"))),
    Row("T-E36", "bfloat16", _exp(_sp("bfloat16"))),
    Row("T-E37", "complex32 (ComplexHalf)", _exp(_sp("complex32"))),
    Row("T-E38", "float8_e4m3fn, legacy capsule", _exp(_sp("float8_e4m3fn"))),
    Row("T-E39", "float8_e5m2, versioned", _exp(_sp("float8_e5m2"), max_version=(1, 0))),
    Row("T-E40", "float4_e2m1fn_x2", _exp(_sp("float4_e2m1fn_x2"))),
    Row("T-E41", "unknown keyword", _exp(_x, foo=1)),
    Row("T-E51", "a positional argument", lambda lib: exported(_x(lib).__dlpack__(None), None)),
    Row("T-E52", "dl_device='cpu' (not a tuple)", _exp(_x, dl_device="cpu")),
    Row("T-E53", "dl_device=(1,) (one item)", _exp(_x, dl_device=(1,))),
    Row("T-E54", "copy='yes' (not bool)", _exp(_x, copy="yes")),
    Row("T-E55", "max_version=('a', 'b')", _exp(_x, max_version=("a", "b"))),
    Row("T-E56", "max_version=(1,) (one item)", _exp(_x, max_version=(1,))),
    Row("T-E57", "max_version=[1, 0] (a list)", _exp(_x, max_version=[1, 0])),
    Row("T-E58", "read_only='yes', legacy (truthy)", _exp(_x, read_only="yes")),
    Row("T-E59", "stream=-1 on a CPU tensor", _exp(_x, stream=-1)),
    Row("T-E42", "to_dlpack(x): legacy capsule", _to_dlpack(_x)),
    Row("T-E43", "to_dlpack on a requires_grad tensor", _to_dlpack(_sp("requires_grad"))),
    Row("T-E44", "to_dlpack on a conjugate-bit tensor", _to_dlpack(_sp("conj"))),
    Row("T-E45", "to_dlpack on a sparse tensor", _to_dlpack(_sp("sparse"))),
    Row("T-E46", "pinned host tensor: capsule device", _exp(_sp("pinned"))),
    Row("T-E47", "ReadOnlyTensorWrapper, max_version absent", _exp(_sp("readonly_wrapper"))),
    Row("T-E48", "torch.int4 (sub-byte)", _exp(_sp("int4"))),
    Row("T-E49", "CUDA tensor, stream=2 (per-thread default)", _exp(_sp("cuda"), stream=2)),
    Row("T-E50", "CUDA tensor, stream=0 (CUDA: forbidden)", _exp(_sp("cuda"), stream=0)),
    # __dlpack_device__
    Row("T-D1", "CPU tensor", lambda lib: ("device", lib.dlpack_device(_x(lib)))),
    Row("T-D2", "pinned host tensor", lambda lib: ("device", lib.dlpack_device(lib.special("pinned")))),
    Row("T-D3", "CUDA tensor", lambda lib: ("device", lib.dlpack_device(lib.special("cuda")))),
    Row("T-D4", "meta tensor", lambda lib: ("device", lib.dlpack_device(lib.special("meta")))),
    Row("T-D5", "device type is an IntEnum", lambda lib: ("ok", type(lib.dlpack_device(_x(lib))[0]).__name__)),
    # import: torch.from_dlpack / torch.utils.dlpack.from_dlpack
    Row("T-I1", "not a producer nor a capsule (an int)", lambda lib: imported(lib, 5)),
    Row("T-I2", "what is asked of a CPU producer", _asks()),
    Row("T-I3", "a producer that takes stream only (legacy): the retries", _asks({"accepts": ("stream",)})),
    Row("T-I4", "copy=True, producer without copy: asks, then a clone", _asks({"accepts": ("stream", "dl_device")}, copy=True)),
    Row("T-I5", "device='cpu': asks", _asks(device="cpu")),
    Row("T-I6", "versioned capsule: a view", _imp()),
    Row("T-I7", "legacy capsule: a view", _imp({"versioned": False})),
    Row("T-I8", "versioned READ_ONLY", _imp({"versioned": True, "flags": READ_ONLY})),
    Row("T-I9", "versioned IS_COPIED", _imp({"versioned": True, "flags": IS_COPIED})),
    Row("T-I10", "versioned major 2", _imp({"versioned": True, "version": (2, 0)})),
    Row("T-I11", "versioned 1.99 (newer minor)", _imp({"versioned": True, "version": (1, 99)})),
    Row("T-I12", "a capsule consumed twice", _twice),
    Row("T-I13", "lanes=2", _imp({"lanes": 2, "shape": (3,)})),
    Row("T-I14", "int12", _imp({"code": 0, "bits": 12})),
    Row("T-I15", "unknown type code 99", _imp({"code": 99, "bits": 8})),
    Row("T-I16", "bool 16 bits", _imp({"code": 6, "bits": 16})),
    Row("T-I17", "uint16", _imp({"code": 1, "bits": 16})),
    Row("T-I18", "float8_e4m3fn", _imp({"code": 10, "bits": 8})),
    Row("T-I19", "bool 8 bits", _imp({"code": 6, "bits": 8})),
    Row("T-I20", "complex32", _imp({"code": 5, "bits": 32, "shape": (12,)})),
    Row("T-I21", "device type 99", _imp({"device": (99, 0)})),
    Row("T-I22", "kDLCUDAHost capsule", _imp({"device": (kDLCUDAHost, 0)})),
    Row("T-I23", "kDLCUDAManaged capsule", _imp({"device": (kDLCUDAManaged, 0)})),
    Row("T-I24", "__dlpack_device__ kDLCUDAHost, capsule kDLCPU", _asks({"reported_device": (kDLCUDAHost, 0)})),
    Row("T-I25", "transposed strides", _imp({"shape": (2, 3), "strides": (1, 2)})),
    Row("T-I26", "broadcast (stride 0)", _imp({"shape": (2, 3), "strides": (0, 1)})),
    Row("T-I27", "negative stride", _imp({"shape": (3,), "strides": (-1,)})),
    Row("T-I28", "strides NULL", _imp({"shape": (2, 3), "strides": None})),
    Row("T-I29", "ndim 0", _imp({"shape": (), "strides": ()})),
    Row("T-I30", "byte_offset 8: where the result's data starts", lambda lib: data_offset(lib, byte_offset=8, shape=(5,))),
    Row("T-I31", "data misaligned by 1 byte", _imp({"misalign": 1})),
    Row("T-I32", "ndim -1", _imp({"ndim": -1}), isolate=True),
    Row("T-I33", "copy=True, producer takes copy (and ignores it): no 2nd copy", _imp(copy=True)),
    Row("T-I42", "copy=True, producer without copy: torch clones", _imp({"accepts": ("stream", "max_version", "dl_device")}, copy=True)),
    Row("T-I43", "versioned READ_ONLY, then a write through the result", lambda lib: write_through(lib)),
    Row("T-I44", "float4_e2m1fn, lanes 1", _imp({"code": 17, "bits": 4})),
    Row("T-I45", "float4_e2m1fn, lanes 2 (torch's packed pair)", _imp({"code": 17, "bits": 4, "lanes": 2, "shape": (3,)})),
    Row("T-I46", "float8_e8m0fnu", _imp({"code": 14, "bits": 8})),
    Row("T-I47", "opaque handle (code 3)", _imp({"code": 3, "bits": 64})),
    Row("T-I48", "float6_e2m3fn", _imp({"code": 15, "bits": 6})),
    Row("T-I49", "float8_e4m3 (code 8, not fn)", _imp({"code": 8, "bits": 8})),
    Row("T-I50", "bfloat32 (code 4, bits 32)", _imp({"code": 4, "bits": 32})),
    Row("T-I51", "device='cuda' (no index), copy=False, CPU producer", _imp(device="cuda", copy=False)),
    Row("T-I52", "device='cuda:1', copy=False, CPU producer", _imp(device="cuda:1", copy=False)),
    Row("T-I34", "copy=False: a view", _imp(copy=False)),
    Row("T-I35", "device=5 (an int)", _imp(device=5)),
    Row("T-I36", "device='meta', copy=False", _imp(device="meta", copy=False)),
    Row("T-I37", "capsule with copy=True", lambda lib: imported(lib, lib.dlpack(_x(lib)), copy=True)),
    Row("T-I38", "producer's __dlpack__ raises BufferError", _imp({"raises": BufferError("nope")})),
    Row("T-I39", "a torch tensor itself", lambda lib: imported(lib, _x(lib))),
    Row("T-I40", "device='cuda' from a CPU producer", _imp(device="cuda")),
    Row("T-I41", "kDLCUDA producer: the stream asked", _asks({"reported_device": (kDLCUDA, 0), "device": (kDLCUDA, 0)})),
    # the C exchange API table
    Row("T-X1", "the table's capsule, header and slots", table_header),
    Row("T-X2", "from_py_object on a plain tensor", lambda lib: table_export(lib, _x(lib))),
    Row("T-X3", "from_py_object, conjugate bit", lambda lib: table_export(lib, lib.special("conj"))),
    Row("T-X4", "from_py_object, negative bit", lambda lib: table_export(lib, lib.special("neg"))),
    Row("T-X5", "from_py_object, requires_grad", lambda lib: table_export(lib, lib.special("requires_grad"))),
    Row("T-X6", "from_py_object, sparse", lambda lib: table_export(lib, lib.special("sparse"))),
    Row("T-X7", "from_py_object, quantized", lambda lib: table_export(lib, lib.special("quantized"))),
    Row("T-X8", "from_py_object on a non-tensor", lambda lib: table_export_of(lib, 5)),
    Row("T-X9", "ReadOnlyTensorWrapper's table", lambda lib: table_export(lib, lib.special("readonly_wrapper"))),
    Row("T-X10", "dltensor_from_py_object, conjugate bit", lambda lib: table_dltensor(lib, lib.special("conj"))),
    Row("T-X11", "to_py_object, READ_ONLY struct", lambda lib: table_import(lib, FakeProducer(), READ_ONLY)),
    Row("T-X12", "to_py_object, major 2", lambda lib: table_import(lib, FakeProducer(version=(2, 0)), 0)),
    Row("T-X13", "current_work_stream(kDLCPU)", lambda lib: table_stream(lib, kDLCPU)),
    Row("T-X14", "from_py_object, size-1 dims", lambda lib: table_export(lib, lib.special("size1"))),
    Row("T-X15", "from_py_object, meta tensor", lambda lib: table_export(lib, lib.special("meta"))),
    Row("T-X16", "to_py_object, lanes 2", lambda lib: table_import(lib, FakeProducer(lanes=2, shape=(3,)), 0)),
]


def data_offset(lib, **producer_kw):
    """Import a FakeProducer; also report where the result's data starts, in bytes from the producer's data."""
    producer = FakeProducer(**producer_kw)
    t = lib.from_dlpack(producer)
    return imported(lib, producer) + ({"data_offset": lib.view(t)[4] - producer.base},)


def write_through(lib):
    """A READ_ONLY versioned tensor imported, then written: does the write reach the producer's memory?"""
    producer = FakeProducer(versioned=True, flags=READ_ONLY)
    t = lib.from_dlpack(producer)
    lib.write_first(t, 42.0)
    return ("ok", "producer's first element after the write", ctypes.c_double.from_address(producer.base).value)


def table_export_of(lib, obj):
    """The table of torch.Tensor called on an object that is not a tensor."""
    _, api = table(lib, lib.array_f64([0.0]))
    out = ctypes.c_void_p()
    _FROM_PY(api.managed_tensor_from_py_object_no_sync)(obj, ctypes.byref(out))
    return ("ok", out.value)


# --- the real-PyTorch adapter ------------------------------------------------------------------------------------

class TorchAdapter:
    name = "torch"

    def __init__(self):
        try:
            import torch
            import torch.utils.dlpack
        except ImportError as e:
            self.torch, self.error, self.version = None, "PyTorch is not installed (%s)" % e, None
            return
        self.torch, self.error = torch, None
        self.version = torch.__version__

    def skip_reason(self):
        if self.torch is None:
            return self.error
        # Which releases are compared is the pytorch profile's `models:` range (differential_test.py): 2.6 has no
        # max_version, dl_device or copy keywords, so the profile does not claim it.
        return None

    def array_f64(self, values, read_only=False):
        t = self.torch.tensor(list(values), dtype=self.torch.float64)
        return self.special("readonly_wrapper", t) if read_only else t

    def special(self, kind, base=None):
        torch = self.torch
        x = torch.arange(6, dtype=torch.float64) if base is None else base
        cuda = torch.cuda.is_available()
        makers = {
            "requires_grad": lambda: x.clone().requires_grad_(True),
            "conj": lambda: torch.tensor([1 + 1j, 2, 3], dtype=torch.complex64).conj(),
            "neg": lambda: torch._neg_view(torch.tensor([1 + 1j, 2, 3], dtype=torch.complex64)),
            "sparse": lambda: torch.eye(3).to_sparse(),
            "quantized": lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 10, torch.qint8),
            "meta": lambda: torch.empty(3, device="meta"),
            "size1": lambda: torch.arange(6.0).reshape(1, 6),
            "transposed": lambda: torch.arange(6.0).reshape(2, 3).t(),
            "broadcast": lambda: torch.arange(3.0).expand(2, 3),
            "offset": lambda: torch.arange(6.0)[2:],
            "scalar": lambda: torch.tensor(1.5),
            "empty": lambda: torch.empty(0, 3),
            "bool": lambda: torch.tensor([True, False]),
            "uint16": lambda: torch.arange(3).to(torch.uint16),
            "uint64": lambda: torch.arange(3).to(torch.uint64),
            "bfloat16": lambda: torch.arange(3.0).to(torch.bfloat16),
            "complex32": lambda: torch.zeros(3, dtype=torch.complex32),
            "float8_e4m3fn": lambda: torch.zeros(3).to(torch.float8_e4m3fn),
            "float8_e5m2": lambda: torch.zeros(3).to(torch.float8_e5m2),
            "float4_e2m1fn_x2": lambda: torch.zeros(3, dtype=torch.uint8).view(torch.float4_e2m1fn_x2),
            "int4": lambda: torch.empty(4, dtype=torch.int4),
            "readonly_wrapper": lambda: torch.utils.dlpack.ReadOnlyTensorWrapper(x),
            "pinned": lambda: torch.arange(3.0).pin_memory(),
            "cuda": lambda: torch.arange(3.0, device="cuda"),
        }
        if kind in ("pinned", "cuda") and not cuda:
            raise Skip("no CUDA device here")
        if kind == "readonly_wrapper" and not hasattr(torch.utils.dlpack, "ReadOnlyTensorWrapper"):
            raise Skip("no ReadOnlyTensorWrapper in this PyTorch")
        try:
            return makers[kind]()
        except (AttributeError, RuntimeError, TypeError) as e:
            raise Skip("cannot make %s here: %s: %s" % (kind, type(e).__name__, str(e).splitlines()[0]))

    def dlpack(self, x, **kw):
        return x.__dlpack__(**kw) if hasattr(x, "__dlpack__") else x

    def dlpack_device(self, x):
        return x.__dlpack_device__()

    def to_dlpack(self, x):
        return self.torch.utils.dlpack.to_dlpack(x)

    def from_dlpack(self, obj, **kw):
        return self.torch.from_dlpack(obj, **kw)

    def data_ptr(self, x):
        with self.torch._C.DisableTorchFunctionSubclass():   # ReadOnlyTensorWrapper refuses other calls
            if x.layout != self.torch.strided or x.is_quantized or x.device.type == "meta":
                return None
            return x.data_ptr()

    def view(self, t):
        name = str(t.dtype).replace("torch.", "")
        name = {"float64": "float64", "complex32": "complex32"}.get(name, name)
        name = re.sub(r"_x([0-9]+)$", r"x\1", name)  # packed vector: torch's float4_e2m1fn_x2, the spec's …fnx2
        read_only = bool(getattr(t, "_is_read_only", lambda: False)()) if hasattr(t, "_is_read_only") else False
        return name, tuple(t.shape), tuple(t.stride()), read_only, t.data_ptr(), t.nbytes

    def write_first(self, t, value):
        t.view(-1)[0] = value

    def exchange_api(self, x):
        api = getattr(type(x), "__dlpack_c_exchange_api__", None)
        if api is None:
            raise Skip("no __dlpack_c_exchange_api__ on %s" % type(x).__name__)
        return api


ADAPTER = TorchAdapter     # the real system these rows describe (differential_test.py)
NotApplicable = Skip       # differential_test.py's name for "the adapter cannot make this row's input"


# --- running ------------------------------------------------------------------------------------------------------

def run_row(row, lib):
    """The row's outcome against lib. A row that may crash PyTorch runs in a child process (with TorchAdapter); an
    adapter with isolate = False (dlmap's, which must never crash) runs it in-process."""
    if row.isolate and getattr(lib, "isolate", True):
        proc = subprocess.run([sys.executable, __file__, "--one", row.id], capture_output=True, text=True, timeout=300)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            return ("crash", proc.returncode, "killed by signal %d" % -proc.returncode if proc.returncode < 0 else "")
        return ast.literal_eval(lines[-1])
    return outcome(lambda: row.run(lib))


def main(argv):
    lib = TorchAdapter()
    if argv[:1] == ["--one"]:
        print(repr(outcome(lambda: next(r for r in ROWS if r.id == argv[1]).run(lib))))
        return 0
    wanted = set(argv)
    rows = [r for r in ROWS if not wanted or r.id in wanted]
    reason = lib.skip_reason()
    counts = {}
    if lib.torch is not None:
        print("# torch %s, python %s" % (lib.torch.__version__, sys.version.split()[0]))
    for row in rows:
        if reason:
            print("%-6s SKIP: %s" % (row.id, reason))
            counts["skip"] = counts.get("skip", 0) + 1
            continue
        result = run_row(row, lib)
        counts[result[0]] = counts.get(result[0], 0) + 1
        print("%-6s %-55s %r" % (row.id, row.doc[:55], result))
    print("# %d rows: %s" % (len(rows), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
