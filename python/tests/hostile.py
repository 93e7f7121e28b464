# dlmap Python binding tests — hostile scenarios for hostile_property_test.py, run one per child interpreter: a JSON
# description (producers, arguments and exchange tables that misbehave) is rebuilt into objects here, handed to dlmap,
# and everything dlmap promises is checked — a result or a clean error, deleters exactly once, no leak, no host view of
# device memory. `python3 -c "import hostile; hostile.main()" '<json>'` prints one JSON line with the outcome.
import ctypes
import gc
import json
import os
import sys

import testing
from testing import dlmap  # the module under test (testing.MODULE)

# DLMAP_HOSTILE_PLATFORM=cuda (hostile_property_fake_gpu_test): the platform's runtime is loaded before the scenario,
# so every import checks the tensor's device claim against what the (fake) runtime says of its memory (issue 48).
if os.environ.get("DLMAP_HOSTILE_PLATFORM"):
    dlmap.platform_status(os.environ["DLMAP_HOSTILE_PLATFORM"])


class Hostile(Exception):
    """What hostile objects raise: allowed to come out of dlmap unchanged."""


class HostileTypeError(Hostile, TypeError):
    """A hostile TypeError (from __dlpack__, where TypeError means "retry without keywords")."""


# Device types whose memory the host can read (kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged in the spec), and the
# device-memory types the scenarios use with addresses that must never be read on the host (kDLCUDA, kDLROCM).
HOST_READABLE = {1, 3, 11, 13}
DEVICE_MEMORY = {2, 10}
FAKE_DEVICE_ADDRESS = 0x10000


# ---- argument values ---------------------------------------------------------------------------------------------


class Index:
    """An integer argument with a __index__ that may return a value, raise, return a non-int or change the list that
    holds it."""

    def __init__(self, spec):
        self.spec, self.container = spec, None

    def __index__(self):
        action = self.spec.get("action", "value")
        if action == "raise":
            raise Hostile("from __index__")
        if action == "non_int":
            return "not an int"
        if self.container is not None:
            if action == "clear":
                self.container.clear()
            elif action == "append":
                self.container.extend([7] * 40)
            elif action == "pop" and self.container:
                self.container.pop()
            elif action == "replace":
                for i in range(len(self.container)):
                    self.container[i] = object()
        return self.spec["value"]


class BoolScalar:
    """A boolean scalar in the array-protocol sense (ndim 0, dtype.kind 'b'), or one whose attributes raise."""

    class _Dtype:
        def __init__(self, owner):
            self.owner = owner

        @property
        def kind(self):
            if self.owner.fails == "kind":
                raise Hostile("from dtype.kind")
            return self.owner.kind

    def __init__(self, value, fails=None, kind="b", ndim=0):
        self.value, self.fails, self.kind, self._ndim = value, fails, kind, ndim

    @property
    def ndim(self):
        if self.fails == "ndim":
            raise Hostile("from ndim")
        return self._ndim

    @property
    def dtype(self):
        if self.fails == "dtype":
            raise Hostile("from dtype")
        return BoolScalar._Dtype(self)

    def __bool__(self):
        if self.fails == "bool":
            raise Hostile("from __bool__")
        return self.value


def value(spec):
    """A Python value from its JSON description."""
    if not isinstance(spec, dict):
        return spec  # ints, strings, None, bools as they are
    kind = next(iter(spec))
    if kind in ("tuple", "list"):
        items = [value(item) for item in spec[kind]]
        if kind == "tuple":
            return tuple(items)
        for item in items:
            if isinstance(item, Index):
                item.container = items
        return items
    if kind == "index":
        return Index(spec["index"])
    if kind == "bool_scalar":
        return BoolScalar(**spec["bool_scalar"])
    if kind == "float":
        return float(spec["float"])
    if kind == "object":
        return object()
    raise ValueError(f"unknown value description {spec!r}")


# ---- hand-made tensors with counting deleters ----------------------------------------------------------------------

_tensors = {}  # address → {"calls": n, "keep": [...], "tag": ...}
_buffers = []  # (address, size) of real host buffers handed out as tensor data
_deleter_raises = [False]


def _deleted(address):
    entry = _tensors.get(address)
    if entry is None:
        raise AssertionError(f"a deleter ran on an unknown tensor at {address:#x}")
    entry["calls"] += 1
    if _deleter_raises[0]:
        raise Hostile("from a deleter")  # ctypes reports it as unraisable; the call still counts


@testing.VERSIONED_DELETER
def _versioned_deleter(tensor):
    _deleted(ctypes.addressof(tensor.contents))


@testing.LEGACY_DELETER
def _legacy_deleter(tensor):
    _deleted(ctypes.addressof(tensor.contents))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # The producer's side of the protocol: an unconsumed capsule releases its tensor (never revive the capsule).
    for name in (testing.NAME_VERSIONED, testing.NAME_LEGACY):
        if testing._capsule_is_valid_raw(capsule, name):
            _deleted(testing._capsule_get_pointer_raw(capsule, name))


_DESTRUCTOR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


def make_tensor(spec, versioned, tag):
    """A managed tensor from its description; returns its address. Its deleter counts calls."""
    ndim = len(spec["shape"])
    shape = (ctypes.c_int64 * max(ndim, 1))(*spec["shape"])
    strides = None if spec.get("strides") is None else (ctypes.c_int64 * max(ndim, 1))(*spec["strides"])
    managed = testing.DLManagedTensorVersioned() if versioned else testing.DLManagedTensor()
    t = managed.dl_tensor
    keep = [managed, shape, strides]
    device_type = spec["device"][0]
    data = spec.get("data", "buffer")
    if data == "buffer" and device_type not in DEVICE_MEMORY:
        buffer = ctypes.create_string_buffer(spec.get("buffer_bytes", 256))
        keep.append(buffer)
        t.data = ctypes.addressof(buffer)
        _buffers.append((ctypes.addressof(buffer), ctypes.sizeof(buffer)))
    elif data == "null":
        t.data = None
    else:
        t.data = FAKE_DEVICE_ADDRESS  # device memory: only ever compared, never read on the host
    t.device = testing.DLDevice(*spec["device"])
    t.ndim = ndim
    t.dtype = testing.DLDataType(*spec["dtype"])
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)) if ndim else None
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None
    t.byte_offset = spec.get("byte_offset", 0)
    deleter = spec.get("deleter", "count")
    if versioned:
        managed.version = testing.DLPackVersion(*spec.get("version", (1, 3)))
        managed.flags = spec.get("flags", 0)
        managed.deleter = testing.deleter_address(_versioned_deleter if deleter != "null" else None)
    else:
        managed.deleter = testing.deleter_address(_legacy_deleter if deleter != "null" else None)
    address = ctypes.addressof(managed)
    # A NULL deleter is DLPack's "nothing to release": such a tensor is not counted.
    _tensors[address] = {"calls": 0, "keep": keep, "tag": tag, "counted": deleter != "null"}
    return address


def make_capsule(spec, versioned, tag):
    """A capsule as the description says: right, wrong or consumed name (only a right one carries a destructor)."""
    address = make_tensor(spec, versioned, tag)
    right = testing.NAME_VERSIONED if versioned else testing.NAME_LEGACY
    name = {"right": right, "wrong": testing.NAME_BOGUS,
            "used": testing.NAME_VERSIONED_USED if versioned else testing.NAME_LEGACY_USED}[spec.get("name", "right")]
    if name != right:
        _tensors[address]["counted"] = False  # dlmap must refuse it; nobody owns it
    return testing._capsule_new(address, name, _DESTRUCTOR if name == right else None)


# ---- scenarios -----------------------------------------------------------------------------------------------------


def _producer(spec):
    """A Python producer whose __dlpack__ / __dlpack_device__ misbehave as described."""
    tensor = spec["tensor"]
    answer = spec.get("answer", "capsule")
    report = spec.get("report", "truthful")

    class Producer:
        calls = 0

        def __dlpack_device__(self):
            if report == "truthful":
                return tuple(tensor["device"])
            if report == "raise":
                raise Hostile("from __dlpack_device__")
            return value(report)

        def __dlpack__(self, **kwargs):
            Producer.calls += 1
            if spec.get("legacy_only") and "max_version" in kwargs:
                raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
            if answer == "raise":
                raise Hostile("from __dlpack__")
            if answer == "raise_type_error":
                raise HostileTypeError("from __dlpack__")
            if answer == "not_capsule":
                return value(spec.get("not_capsule", 42))
            if answer == "self":
                return self
            versioned = "max_version" in kwargs and spec.get("struct", "as_asked") == "as_asked"
            return make_capsule(tensor, versioned, "python")

    return Producer


def _table(spec):
    """A DLPackExchangeAPI table (ctypes memory) with hostile entries, and what must stay alive with it."""
    table = testing.DLPackExchangeAPI()
    keep = [table]
    table.header.version = testing.DLPackVersion(spec.get("major", 1), 0)
    chain = spec.get("prev", "none")
    if chain == "self":
        table.header.prev_api = ctypes.pointer(table.header)
    elif chain == "major1":
        inner, inner_keep = _table(dict(spec, major=1, prev="none"))
        keep += inner_keep
        table.header.prev_api = ctypes.pointer(inner.header)
    from_py = spec.get("from_py", "tensor")
    if from_py != "null":
        @testing.FROM_PY_OBJECT
        def from_py_object(obj, out):
            if from_py == "fail_silently":
                return -1
            if from_py == "raise":
                raise Hostile("from managed_tensor_from_py_object_no_sync")
            if from_py == "null_tensor":
                return 0
            address = make_tensor(spec["tensor"], True, "c")
            out[0] = ctypes.cast(ctypes.c_void_p(address), ctypes.POINTER(testing.DLManagedTensorVersioned))
            return 0

        keep.append(from_py_object)
        table.managed_tensor_from_py_object_no_sync = from_py_object
    if spec.get("stream", "none") != "null":
        @testing.CURRENT_WORK_STREAM
        def current_stream(device_type, device_id, out):
            out[0] = None
            return 0

        keep.append(current_stream)
        table.current_work_stream = current_stream
    return table, keep


def _exchange_producer(spec):
    """A producer type publishing a (forged) exchange table as the 1.3 capsule and/or the 1.2 int, with Python
    methods behind it."""
    base = _producer(spec["python"])
    attrs = {}
    keep = []
    if "capsule" in spec:
        table, keep = _table(spec["capsule"])
        name = testing.NAME_EXCHANGE_API if spec["capsule"].get("name", "right") == "right" else testing.NAME_BOGUS
        attrs["__dlpack_c_exchange_api__"] = testing._capsule_new(ctypes.addressof(table), name, None)
    if "int" in spec:
        if spec["int"] == "table":
            table, more = _table(spec.get("int_table", {"tensor": spec["python"]["tensor"]}))
            keep += more
            attrs["__c_dlpack_exchange_api__"] = ctypes.addressof(table)
        else:
            attrs["__c_dlpack_exchange_api__"] = value(spec["int"])
    cls = type("Forged", (base,), attrs)
    cls.keep = keep
    return cls


def _call(fn, *args, **kwargs):
    try:
        return {"outcome": "ok"}, fn(*args, **kwargs)
    except BaseException as e:  # noqa: B902 - every exception is examined
        return {"outcome": "error", "type": type(e).__name__, "message": str(e)[:300],
                "dlmap_id": getattr(e, "dlmap_id", None), "hostile": isinstance(e, Hostile)}, None


def _clean_error(result, problems):
    """A dlmap error must be the catalogue's, the hostile object's own, or Python's about a broken __index__."""
    if result["outcome"] != "error" or result["dlmap_id"] is not None or result["hostile"]:
        return
    if result["type"] == "TypeError" and result["message"].startswith("__index__ returned non-int"):
        return
    problems.append(f"not a clean error: {result['type']}: {result['message']}")


def _inside_buffers(a):
    """Whether every byte a host view reaches lies in one of the buffers handed out (then it may be read)."""
    count = 1
    for extent in a.shape:
        count *= extent
    if count == 0:
        return True
    if a.nbytes % count != 0:
        return False  # packed sub-byte data: the buffer protocol refuses it before reading anything
    itemsize = a.nbytes // count
    lo = hi = 0
    for extent, stride in zip(a.shape, a.strides):
        step = (extent - 1) * stride
        lo, hi = (lo + step, hi) if step < 0 else (lo, hi + step)
    start, end = a.data_ptr + lo * itemsize, a.data_ptr + (hi + 1) * itemsize
    return any(base <= start and end <= base + size for base, size in _buffers)


def _check_array(a, problems):
    """What an Array dlmap returned may be used for: host views of host memory only, readable where it is dlmap's
    copy or lies inside a real buffer."""
    device_type = a.device[0]
    start = a.data_ptr - a.byte_offset
    if device_type in HOST_READABLE and start == FAKE_DEVICE_ADDRESS:  # a.copied too: IS_COPIED may lie
        problems.append(f"a host view of device memory: {a!r}")
        return
    # a.copied also counts a producer's IS_COPIED, which may lie: dlmap's copy is one outside every producer buffer.
    dlmap_copy = a.copied and not any(base <= start < base + size for base, size in _buffers)
    if device_type in HOST_READABLE and (dlmap_copy or _inside_buffers(a)):
        try:
            bytes(memoryview(a))
        except (NotImplementedError, BufferError):
            pass  # formats the buffer protocol does not carry


def run(spec):
    if spec["kind"].startswith("heads_"):  # issue 23's scenarios: future-major heads, chains, sub-interpreters
        return __import__("hostile_heads").run(spec)
    baseline = dlmap._stats()
    _deleter_raises[0] = spec.get("deleter_raises", False)
    problems = []
    kind = spec["kind"]
    if kind == "empty":
        kwargs = {} if spec.get("device") is None else {"device": value(spec["device"])}
        args = [value(spec["shape"])] + ([] if spec.get("dtype") is None else [value(spec["dtype"])])
        result, out = _call(dlmap.empty, *args, **kwargs)
        if out is not None:
            _check_array(out, problems)
            expected = spec.get("expected_shape")
            if expected is not None and list(out.shape) != expected:
                problems.append(f"shape {out.shape} for a shape that read as {expected}")
    elif kind == "export":
        # A dtype the module's profile does not make (the jax profile: int4) is a clean refusal, checked as any other.
        result, a = _call(dlmap.empty, tuple(spec["shape"]), spec.get("dtype", "float32"))
        if a is not None:
            a.readonly = spec.get("readonly", False)
            result, out = _call(a.__dlpack__, **{k: value(v) for k, v in spec["kwargs"].items()})
            if out is not None and testing.capsule_name(out) not in ("dltensor", "dltensor_versioned"):
                problems.append(f"__dlpack__ returned {out!r}")
        del a
    elif kind in ("from_dlpack", "exchange"):
        cls = _producer(spec) if kind == "from_dlpack" else _exchange_producer(spec)
        kwargs = {k: value(v) for k, v in spec.get("kwargs", {}).items()}
        result, out = _call(dlmap.from_dlpack, cls(), **kwargs)
        if out is not None:
            _check_array(out, problems)
            result["via"] = out.via
    elif kind == "types":  # hostile_types.py: classes that change while dlmap looks them up (issue 23)
        import hostile_types
        result, out = hostile_types.run(spec, sys.modules[__name__])
    else:
        raise ValueError(f"unknown scenario {kind!r}")
    _clean_error(result, problems)
    out = None
    return finish(baseline, problems, result)


def finish(baseline, problems, result):
    """After a scenario: every hand-made tensor's deleter ran as often as promised, dlmap's counters are back at
    `baseline`; the problems found go into `result`, which is returned."""
    gc.collect()
    for address, entry in _tensors.items():
        if entry["counted"] and entry["calls"] != 1:
            problems.append(f"the deleter of a {entry['tag']} tensor ran {entry['calls']} times")
        if not entry["counted"] and entry["calls"] != 0:
            problems.append(f"the deleter of a refused {entry['tag']} tensor ran {entry['calls']} times")
    after = dlmap._stats()
    for counter in ("live_allocations", "live_exports"):
        if after[counter] != baseline[counter]:
            problems.append(f"{counter}: {baseline[counter]} before, {after[counter]} after")
    result["problems"] = problems
    return result


def main():
    print(json.dumps(run(json.loads(sys.argv[1]))), flush=True)
