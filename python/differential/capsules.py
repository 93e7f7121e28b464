"""DLPack capsules by ctypes, for the differential rows: read any producer's capsule, craft a producer.

Library-neutral on purpose: nothing here imports NumPy or dlmap, so the same crafted producers and the
same capsule reader serve every adapter (numpy_rows.py). Plain Python 3 and ctypes only.
"""

import ctypes as C

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_ROCM_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 11, 13
READ_ONLY, IS_COPIED = 1 << 0, 1 << 1
LEGACY, VERSIONED = b"dltensor", b"dltensor_versioned"


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)),
                ("byte_offset", C.c_uint64)]


DELETER = C.CFUNCTYPE(None, C.c_void_p)
CAPSULE_DESTRUCTOR = C.CFUNCTYPE(None, C.c_void_p)


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", C.c_void_p), ("deleter", DELETER),
                ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


def _api(name, restype, *argtypes):
    fn = getattr(C.pythonapi, name)
    fn.restype, fn.argtypes = restype, list(argtypes)
    return fn


_new = _api("PyCapsule_New", C.py_object, C.c_void_p, C.c_char_p, C.c_void_p)
_get_name = _api("PyCapsule_GetName", C.c_char_p, C.py_object)
_get_pointer = _api("PyCapsule_GetPointer", C.c_void_p, C.py_object, C.c_char_p)
# The destructor gets a raw PyObject*: these prototypes take it as a plain pointer.
_raw_is_valid = C.PYFUNCTYPE(C.c_int, C.c_void_p, C.c_char_p)(("PyCapsule_IsValid", C.pythonapi))
_raw_get_pointer = C.PYFUNCTYPE(C.c_void_p, C.c_void_p, C.c_char_p)(("PyCapsule_GetPointer", C.pythonapi))

# Capsule names must outlive their capsules: module-level buffers.
_NAMES = {LEGACY: C.create_string_buffer(LEGACY), VERSIONED: C.create_string_buffer(VERSIONED)}
_LIVE = {}  # managed address -> (record kept alive until the deleter runs, counter)


class Counter:
    """How often a crafted tensor's deleter ran (the DLPack contract: exactly once)."""

    def __init__(self):
        self.deleted = 0


@DELETER
def _deleter(addr):
    record = _LIVE.pop(addr, None)
    if record is not None:
        record[1].deleted += 1


@CAPSULE_DESTRUCTOR
def _capsule_destructor(ptr):
    # An unconsumed capsule owns its tensor (the standard's rule); a renamed one was taken over.
    for name, struct in ((LEGACY, DLManagedTensor), (VERSIONED, DLManagedTensorVersioned)):
        if _raw_is_valid(ptr, name):
            addr = _raw_get_pointer(ptr, name)
            struct.from_address(addr).deleter(addr)
            return


def capsule_name(cap):
    try:
        name = _get_name(cap)
    except Exception:  # not a capsule
        return None
    return name.decode() if name is not None else None


DTYPE_NAMES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
               (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
               (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
               (4, 16): "bfloat16", (5, 64): "complex64", (5, 128): "complex128", (6, 8): "bool"}
DTYPE_CODES = {name: key for key, name in DTYPE_NAMES.items()}


def dtype_name(code, bits, lanes=1):
    name = DTYPE_NAMES.get((code, bits), "code%d:bits%d" % (code, bits))
    return name if lanes == 1 else "%sx%d" % (name, lanes)


def read_capsule(cap):
    """What a capsule says, as a dict (never consumes it); None when it is not a live DLPack capsule."""
    name = capsule_name(cap)
    if name not in (LEGACY.decode(), VERSIONED.decode()):
        return None
    addr = _get_pointer(cap, name.encode())
    versioned = name == VERSIONED.decode()
    managed = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(addr)
    t = managed.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim)) if t.shape else ()
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    return {"capsule": name, "version": (managed.version.major, managed.version.minor) if versioned else None,
            "flags": managed.flags if versioned else None,
            "read_only": bool(managed.flags & READ_ONLY) if versioned else None,
            "copied": bool(managed.flags & IS_COPIED) if versioned else None,
            "dtype": dtype_name(t.dtype.code, t.dtype.bits, t.dtype.lanes), "shape": shape,
            "strides": strides, "shape_null": not t.shape, "device": (t.device.device_type, t.device.device_id),
            "data": (t.data or 0) + t.byte_offset, "byte_offset": t.byte_offset}


def make_capsule(counter, *, dtype=(2, 64, 1), shape=(2, 3), strides=None, device=(KDL_CPU, 0),
                 versioned=True, version=(1, 0), flags=0, ndim=None, byte_offset=0, null_data=False):
    """A fresh DLPack capsule over a private buffer; returns (capsule, data address + byte_offset)."""
    n = len(shape)
    shape_arr = (C.c_int64 * max(n, 1))(*shape)
    strides_arr = (C.c_int64 * max(n, 1))(*strides) if strides is not None else None
    buf = C.create_string_buffer(4096)
    struct = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = struct.dl_tensor
    t.data = None if null_data else C.addressof(buf)
    t.device = DLDevice(*device)
    t.ndim = n if ndim is None else ndim
    t.dtype = DLDataType(*dtype)
    t.shape = C.cast(shape_arr, C.POINTER(C.c_int64)) if n or ndim else None
    t.strides = C.cast(strides_arr, C.POINTER(C.c_int64)) if strides_arr is not None else None
    t.byte_offset = byte_offset
    struct.deleter = _deleter
    if versioned:
        struct.version = DLPackVersion(*version)
        struct.flags = flags
    addr = C.addressof(struct)
    _LIVE[addr] = ((struct, shape_arr, strides_arr, buf), counter)
    name = VERSIONED if versioned else LEGACY
    cap = _new(addr, C.cast(_NAMES[name], C.c_char_p), C.cast(_capsule_destructor, C.c_void_p))
    return cap, (t.data or 0) + byte_offset


class Crafted:
    """A producer with __dlpack__ / __dlpack_device__ that logs how it was called.

    tensor: make_capsule's keywords. legacy_signature: __dlpack__ takes no keywords (a pre-2023 producer:
    TypeError on any). raises: an exception __dlpack__ raises. returns: a value returned instead of a capsule
    ("consumed": a capsule already renamed). query_device: what __dlpack_device__
    returns (default: the capsule's device; NoDevice: no such method).
    """

    def __init__(self, counter, legacy_signature=False, raises=None, returns=None, query_device=None, **tensor):
        self.counter, self.tensor, self.legacy_signature = counter, tensor, legacy_signature
        self.raises, self.returns = raises, returns
        self.device = query_device or tensor.get("device", (KDL_CPU, 0))
        self.calls, self.device_calls, self.capsules, self.data = [], 0, [], None

    def __dlpack__(self, *args, **kw):
        self.calls.append((args, dict(sorted(kw.items()))))
        if self.legacy_signature and (args or kw):
            raise TypeError("__dlpack__() got an unexpected keyword argument %r" % next(iter(kw), args[:1]))
        if self.raises is not None:
            raise self.raises
        if self.returns == "consumed":
            cap, self.data = make_capsule(self.counter, **self.tensor)
            C.pythonapi.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]
            C.pythonapi.PyCapsule_SetName(cap, b"used_dltensor_versioned" if self.tensor.get("versioned", True)
                                          else b"used_dltensor")
            self.capsules.append(cap)
            return cap
        if self.returns is not None:
            return self.returns
        cap, self.data = make_capsule(self.counter, **self.tensor)
        self.capsules.append(cap)
        return cap

    def __dlpack_device__(self):
        self.device_calls += 1
        return self.device


class NoDevice(Crafted):
    """A crafted producer without any __dlpack_device__ attribute."""

    def __getattribute__(self, name):
        if name == "__dlpack_device__":
            raise AttributeError(name)
        return object.__getattribute__(self, name)
