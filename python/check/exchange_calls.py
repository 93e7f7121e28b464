# dlmap conformance checker — runs in the producer's child interpreter (calls.py): the C exchange API (DLPack 1.2/1.3)
# that the producer's type publishes, found and called the way a C consumer does, one part per command, each answered
# in plain values the parent judges (exchange_api.py). A part that crashes or hangs stops only this process: the
# parent gives that part's row the failure, and the next part finds the table again in a fresh child.
import ctypes
import gc
import sys

MAX_CHAIN = 16  # tables a prev_api walk reads before it calls the chain too long (one per major; DLPack has one)
# A prototype no allocator can serve: its element count overflows 64 bits.
UNSERVABLE = (2 ** 62, 2 ** 62)


def find(x, dlpack, readable):
    """The table type(x) publishes: how (form: capsule, int, none, other), its capsule's name, the prev_api chain's
    versions and how the walk ended (null, cycle, long), the functions left NULL in the table of the readable major,
    and that table's address (None where the chain has none)."""
    kind = type(x)
    attr = getattr(kind, dlpack.EXCHANGE_API_ATTRIBUTE, None)
    out = {"form": "none"}
    address = None
    if attr is not None:
        name = dlpack.capsule_name(attr)
        out = {"form": "capsule", "name": name} if name is not None else {"form": "other", "what": type(attr).__name__}
        if name == dlpack.EXCHANGE_API_CAPSULE:
            address = dlpack.capsule_pointer(attr, name)
    else:
        attr = getattr(kind, dlpack.EXCHANGE_API_ATTRIBUTE_1_2, None)
        if isinstance(attr, int) and not isinstance(attr, bool):
            out, address = {"form": "int"}, attr
        elif attr is not None:
            out = {"form": "other", "what": type(attr).__name__}
    start, chain, seen, found = address, [], set(), None
    while address and len(chain) < MAX_CHAIN and address not in seen:
        seen.add(address)
        header = dlpack.DLPackExchangeAPIHeader.from_address(address)
        chain.append([header.version.major, header.version.minor])
        if header.version.major == readable and found is None:
            found = address
        address = header.prev_api
    if start:
        out["chain"] = chain
        out["ended"] = "null" if not address else "cycle" if address in seen else "long"
    if found is not None:
        api = dlpack.DLPackExchangeAPI.from_address(found)
        out["null"] = [f for f in dlpack.EXCHANGE_API_FUNCTIONS if not getattr(api, f)]
        out["table"] = found
    return out


def _dltensor(tensor, dlpack):
    """A DLTensor's fields as plain values."""
    ndim = tensor.ndim
    out = {"device": [tensor.device.device_type, tensor.device.device_id],
           "dtype": [tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes], "ndim": ndim,
           "address": (tensor.data or 0) + tensor.byte_offset}
    if 0 <= ndim <= 64:
        out["shape"] = dlpack.read_ints(tensor.shape, ndim) if ndim else []
        out["strides"] = dlpack.read_ints(tensor.strides, ndim) if ndim else []
    return out


class Owned:
    """A DLManagedTensorVersioned a table handed out: its head and (at the readable major) its tensor as plain values,
    and a counting deleter in front of the producer's, which forwards the first run only."""

    def __init__(self, pointer, dlpack, readable, keep):
        self.pointer = pointer
        managed = dlpack.DLManagedTensorVersioned.from_address(pointer)
        self.fields = {"version": [managed.version.major, managed.version.minor], "flags": managed.flags,
                       "has_deleter": bool(managed.deleter)}
        if managed.version.major == readable:
            self.fields.update(_dltensor(managed.dl_tensor, dlpack))
        self.calls = [0]
        self.wrapper = None
        if managed.deleter:
            forward = dlpack.DELETER(managed.deleter)
            calls = self.calls

            def counting(address):
                calls[0] += 1
                if calls[0] == 1:
                    forward(address)

            self.wrapper = dlpack.DELETER(counting)
            keep.append((forward, self.wrapper))  # a producer may run it late
            managed.deleter = ctypes.cast(self.wrapper, ctypes.c_void_p).value

    def delete(self):
        """Runs the deleter, as the tensor's owner does once it is done with it; the runs so far."""
        if self.wrapper is not None:
            self.wrapper(self.pointer)
        return self.calls[0]


class Part:
    """What one command needs: the producer, the checker's ctypes module and helpers, the versions."""

    def __init__(self, x, dlpack, readable, current, raised, export, keep):
        self.x, self.dlpack, self.readable, self.current = x, dlpack, readable, current
        self.raised, self.export, self.keep = raised, export, keep

    def api(self):
        found = find(self.x, self.dlpack, self.readable)
        return self.dlpack.DLPackExchangeAPI.from_address(found["table"]) if "table" in found else None

    def protocol(self):
        """What x.__dlpack__(max_version=current) hands out, read and consumed: the path the table must agree with."""
        return self.export(self.x, {"max_version": tuple(self.current)}, True)

    def take(self):
        """managed_tensor_from_py_object_no_sync(x): (Owned, None) or (None, {"status": rc} / {"raised": …})."""
        api = self.api()
        if api is None or not api.managed_tensor_from_py_object_no_sync:
            return None, {"missing": True}
        out = ctypes.c_void_p()
        try:
            status = self.dlpack.FROM_PY_OBJECT(api.managed_tensor_from_py_object_no_sync)(self.x, ctypes.byref(out))
        except BaseException as error:  # the table's -1 with its exception, or a call the producer broke
            return None, {"raised": self.raised(error)}
        if status != 0 or not out.value:
            return None, {"status": status, "out_null": not out.value}
        return Owned(out.value, self.dlpack, self.readable, self.keep), None


def from_py_object(part):
    owned, failure = part.take()
    if failure is not None:
        return failure
    owned.delete()
    gc.collect()  # nothing else may run it: a second run would show here
    return {"status": 0, "tensor": owned.fields, "deleter_calls": owned.calls[0], "protocol": part.protocol()}


def to_py_object(part):
    owned, failure = part.take()
    if failure is not None:
        return failure
    api = part.api()
    if not api.managed_tensor_to_py_object_no_sync:
        owned.delete()
        return {"missing": True}
    out = ctypes.c_void_p()
    try:
        status = part.dlpack.TO_PY_OBJECT(api.managed_tensor_to_py_object_no_sync)(owned.pointer, ctypes.byref(out))
    except BaseException as error:
        owned.delete()  # not taken: still the caller's
        return {"raised": part.raised(error)}
    if status != 0 or not out.value:
        owned.delete()
        return {"status": status, "out_null": not out.value}
    obj = part.dlpack.take_object(out.value)
    held = owned.calls[0]  # the object owns the tensor now: nothing may have freed it yet
    kind = type(obj).__name__
    del obj
    gc.collect()
    return {"status": 0, "type": kind, "while_held": held, "after_release": owned.calls[0],
            "has_deleter": owned.fields["has_deleter"]}


def allocate(part):
    """managed_tensor_allocator for a (2, 3) tensor of x's dtype on x's device, then for one it cannot serve."""
    api = part.api()
    if api is None or not api.managed_tensor_allocator:
        return {"missing": True}
    like = part.protocol()
    if "dtype" not in like:
        return {"no_prototype": "x.__dlpack__(max_version=%s) gave no tensor to take the dtype and device from"
                % (tuple(part.current),)}
    allocator = part.dlpack.ALLOCATOR(api.managed_tensor_allocator)
    answers = {}
    for case, shape in (("served", (2, 3)), ("unservable", UNSERVABLE)):
        errors = []

        def set_error(ctx, kind, message):
            errors.append([(kind or b"").decode("utf-8", "replace"), (message or b"").decode("utf-8", "replace")])

        callback = part.dlpack.SET_ERROR(set_error)
        prototype = part.dlpack.DLTensor()
        extents = part.dlpack.int_array(list(shape))
        prototype.ndim = len(shape)
        prototype.shape = ctypes.cast(extents, ctypes.POINTER(ctypes.c_int64))
        prototype.dtype.code, prototype.dtype.bits, prototype.dtype.lanes = like["dtype"]
        prototype.device.device_type, prototype.device.device_id = like["device"]
        out = ctypes.c_void_p()
        status = allocator(ctypes.byref(prototype), ctypes.byref(out), None, callback)
        answer = {"status": status, "errors": errors, "exception_left": _exception_left()}
        if status == 0 and out.value:
            owned = Owned(out.value, part.dlpack, part.readable, part.keep)
            answer["tensor"] = owned.fields
            owned.delete()
        answer["out_set"] = bool(out.value)
        answers[case] = answer
    answers["asked"] = {"shape": [2, 3], "dtype": like["dtype"], "device": like["device"]}
    return answers


_err_occurred = ctypes.PYFUNCTYPE(ctypes.c_void_p)(("PyErr_Occurred", ctypes.pythonapi))
_err_clear = ctypes.PYFUNCTYPE(None)(("PyErr_Clear", ctypes.pythonapi))


def _exception_left():
    """Whether a call left a Python exception set (cleared here: it belongs to no one)."""
    if _err_occurred():
        _err_clear()
        return True
    return False


def dltensor_from_py_object(part):
    api = part.api()
    if api is None:
        return {"missing": True}
    if not api.dltensor_from_py_object_no_sync:
        return {"null": True}
    tensor = part.dlpack.DLTensor()
    before = sys.getrefcount(part.x)
    try:
        status = part.dlpack.DLTENSOR_FROM_PY_OBJECT(api.dltensor_from_py_object_no_sync)(part.x, ctypes.byref(tensor))
    except BaseException as error:
        return {"raised": part.raised(error), "protocol": part.protocol()}
    refs = sys.getrefcount(part.x) - before
    filled = _dltensor(tensor, part.dlpack) if status == 0 else None
    return {"status": status, "tensor": filled, "references": refs, "protocol": part.protocol()}


def current_work_stream(part):
    api = part.api()
    if api is None or not api.current_work_stream:
        return {"missing": True}
    try:
        device = [int(v) for v in part.x.__dlpack_device__()]
    except BaseException as error:
        return {"no_device": part.raised(error)["name"]}
    out = ctypes.c_void_p()
    try:
        status = part.dlpack.CURRENT_WORK_STREAM(api.current_work_stream)(device[0], device[1], ctypes.byref(out))
    except BaseException as error:
        return {"raised": part.raised(error), "device": device}
    return {"status": status, "stream": out.value, "device": device}


PARTS = {"from_py_object": from_py_object, "to_py_object": to_py_object, "allocate": allocate,
         "dltensor_from_py_object": dltensor_from_py_object, "current_work_stream": current_work_stream}


def answer(x, command, config, dlpack, raised, export, keep):
    readable = config["readable"]
    if command["part"] == "find":
        found = find(x, dlpack, readable)
        found.pop("table", None)  # an address means nothing to the parent
        return found
    part = Part(x, dlpack, readable, command["current"], raised, export, keep)
    return PARTS[command["part"]](part)
