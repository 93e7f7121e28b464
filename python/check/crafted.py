# dlmap conformance checker — runs in a child interpreter: builds one crafted producer from a JSON case (see
# consumer.py), hands it to the consumer function named by module:expression, releases the result, and writes its
# verdict as JSON to the file the parent named (never to stdout, where the consumer may print anything): accepted or
# the exception's kind, how many unconsumed capsules it produced, how often its deleter ran; or skipped, for a case
# over device memory where no runtime starts with a device. A crash kills only this process; the parent reports the
# signal.
import ctypes
import gc
import importlib
import json
import sys

try:
    from . import dlpack, runtimes  # imported as dlmap.check.crafted (the checker's own tests)
except ImportError:
    import dlpack  # run as a script in the child interpreter, with this directory on sys.path
    import runtimes

deleter_calls = [0]


@dlpack.DELETER
def _deleter(address):
    deleter_calls[0] += 1


# A broken deleter for the checker's own tests: PyErr_Clear, which reads the calling thread's Python state, called as
# a deleter without the GIL (or after finalisation) touches state the thread does not hold and crashes.
_TOUCHES_PYTHON = ctypes.cast(ctypes.pythonapi.PyErr_Clear, ctypes.c_void_p)


class Crafted:
    """A producer whose capsules say exactly what the case says, whatever the consumer asks for."""

    def __init__(self, case):
        self.case, self.keep, self.asked, self.produced = case, [], [], 0

    def __dlpack_device__(self):
        return tuple(self.case.get("reported", self.case["device"]))

    def managed(self, struct, case=None):
        """A DLManagedTensor (legacy) or DLManagedTensorVersioned saying what the case says, with the counting deleter;
        and what must live as long as it."""
        case = case or self.case
        managed = (dlpack.DLManagedTensorVersioned if struct == "versioned" else dlpack.DLManagedTensor)()
        tensor = managed.dl_tensor
        shape = dlpack.int_array(case["shape"])
        strides = dlpack.int_array(case["strides"]) if case.get("strides") is not None else None
        data = ctypes.create_string_buffer(max(case.get("nbytes", 64), 1))
        address = case.get("address", ctypes.addressof(data))  # device memory the runtime gave (main), else host
        tensor.data = None if case.get("data") == "null" else address + case.get("data_offset", 0)
        tensor.device.device_type, tensor.device.device_id = case["device"]
        tensor.ndim = case["ndim"]
        tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = case["dtype"]
        tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None
        managed.deleter = ctypes.cast(_deleter if case.get("deleter") != "touches_python" else _TOUCHES_PYTHON,
                                      ctypes.c_void_p).value
        if struct == "versioned":
            managed.version.major, managed.version.minor = case["version"]
            managed.flags = case.get("flags", 0)
        return managed, (managed, shape, strides, data)

    def __dlpack__(self, **kwargs):
        self.asked.append(sorted(kwargs))
        case = self.case
        if case.get("returns") == "int":
            return 42
        struct = case["struct"]
        if struct == "auto":  # what a conforming producer answers
            struct = "versioned" if kwargs.get("max_version") and tuple(kwargs["max_version"]) >= \
                tuple(case["versioned_since"]) else "legacy"
        managed, keep = self.managed(struct)
        names = case["names"][struct]
        name = names[1] if case.get("consumed") else names[0]

        def destructor(capsule_address):  # the producer's duty: run the deleter of an unconsumed capsule
            pointer = dlpack.raw_capsule_pointer(capsule_address, names[0])
            if case.get("destructor") == "always":  # a buggy producer: runs it for a consumed capsule too
                pointer = ctypes.addressof(managed)
            if pointer is not None:
                ctypes.cast(managed.deleter, dlpack.DELETER)(pointer)

        capsule, keep_capsule = dlpack.new_capsule_calling(ctypes.addressof(managed), name, destructor)
        self.keep.append((keep, keep_capsule))
        if not case.get("consumed"):
            self.produced += 1
        return capsule


# The lies a crafted C exchange API table can tell (with_table): the consumer check's table cases, and the producer
# check's own tests of its E rows.
TABLE_LIES = ("wrong_major", "null_functions", "cycle", "fails_silently", "version_disagrees", "wrong_shape",
              "allocator_ignores_prototype", "allocator_serves_anything", "frees_while_held")
table_calls = [0]  # calls of any crafted table's functions, in this process
_TABLES = []  # a type's table lives as long as the process, with its callbacks


def _compact(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= max(extent, 1)
    return strides


class _Held:
    """What a crafted table's managed_tensor_to_py_object_no_sync hands out: the owner of a tensor, which runs its
    deleter once, when released."""

    def __init__(self, pointer):
        self.pointer = pointer

    def release(self):
        pointer, self.pointer = self.pointer, None
        if pointer:
            deleter = dlpack.DLManagedTensorVersioned.from_address(pointer).deleter
            if deleter:
                dlpack.DELETER(deleter)(pointer)

    def __del__(self):
        self.release()


def with_table(case, lie=None):
    """A Crafted producer whose type publishes a C exchange API table (the 1.3 capsule) over Python callbacks, the
    case's version, telling `lie` (one of TABLE_LIES) or none."""
    major, minor = case["version"]
    data = ctypes.create_string_buffer(max(case.get("nbytes", 64), 1))
    case = dict(case, address=case.get("address", ctypes.addressof(data)))  # one buffer: the table's and __dlpack__'s
    keep = [data]

    def from_py_object(obj, out):
        table_calls[0] += 1
        if lie == "fails_silently":
            return -1  # and no exception set
        fields = dict(obj.case)
        if lie == "wrong_shape":
            fields["shape"] = list(reversed(fields["shape"]))
            fields["strides"] = _compact(fields["shape"])
        if lie == "version_disagrees":
            fields["version"] = [major + 1, 0]
        managed, held = obj.managed("versioned", fields)
        obj.keep.append(held)
        obj.produced += 1
        out[0] = ctypes.addressof(managed)
        return 0

    def allocator(prototype, out, ctx, set_error):
        table_calls[0] += 1
        p = prototype.contents
        shape = dlpack.read_ints(p.shape, p.ndim) if p.ndim else []
        count = 1
        for extent in shape:
            count *= extent
        if count >= 2 ** 63 and lie != "allocator_serves_anything":
            set_error(ctx, b"MemoryError", b"the prototype's element count overflows 64 bits")
            return -1
        if lie == "allocator_ignores_prototype":
            shape = [1]
        fields = dict(case, ndim=len(shape), shape=shape, strides=_compact(shape), nbytes=64,
                      dtype=[p.dtype.code, p.dtype.bits, p.dtype.lanes],
                      device=[p.device.device_type, p.device.device_id])
        managed, held = Crafted.managed(None, "versioned", fields)
        keep.append(held)
        out[0] = ctypes.addressof(managed)
        return 0

    def to_py_object(tensor, out):
        table_calls[0] += 1
        holder = _Held(tensor)
        if lie == "frees_while_held":
            holder.release()
        dlpack._incref(holder)  # the reference the caller takes
        out[0] = id(holder)
        return 0

    def dltensor_from_py_object(obj, tensor):
        table_calls[0] += 1
        managed, held = obj.managed("versioned")
        obj.keep.append(held)
        ctypes.memmove(tensor, ctypes.addressof(managed.dl_tensor), ctypes.sizeof(dlpack.DLTensor))
        return 0

    def current_work_stream(device_type, device_id, out):
        table_calls[0] += 1
        out[0] = None
        return 0

    callbacks = [dlpack.ALLOCATOR(allocator), dlpack.FROM_PY_OBJECT(from_py_object),
                 dlpack.TO_PY_OBJECT(to_py_object), dlpack.DLTENSOR_FROM_PY_OBJECT(dltensor_from_py_object),
                 dlpack.CURRENT_WORK_STREAM(current_work_stream)]
    api = dlpack.DLPackExchangeAPI()
    api.header.version.major, api.header.version.minor = major, minor
    if lie in ("wrong_major", "cycle"):
        api.header.version.major = major + 1
    if lie == "cycle":
        api.header.prev_api = ctypes.addressof(api)
    if lie != "null_functions":
        for name, callback in zip(dlpack.EXCHANGE_API_FUNCTIONS, callbacks):
            setattr(api, name, ctypes.cast(callback, ctypes.c_void_p).value)
    capsule = dlpack.new_table_capsule(ctypes.addressof(api))
    _TABLES.append((api, callbacks, keep, capsule))
    kind = type("CraftedWithTable", (Crafted,), {dlpack.EXCHANGE_API_ATTRIBUTE: capsule})
    return kind(case)


def with_runtime(case):
    """For a case that lies about device memory (consumer.liars): its platform's runtime started, as a framework
    would (the spec's libraries and entry points), and device memory from it where the case wants some, in
    case["address"]; None, or why the case cannot run here (no library of the runtime starts with a device)."""
    runtime = runtimes.start(case["runtime"]) if case["runtime"].get("libraries") else None
    if runtime is None:
        return "no %s device here (no library of the spec's %s runtime starts with a device)" % (
            (case["runtime"]["platform"],) * 2)
    if case["memory"] == "device":
        case["address"] = runtime.device_memory(case["nbytes"], 0)
    return None


def _verdict(verdict_path, outcome):
    with open(verdict_path, "w", encoding="utf-8") as verdict:
        verdict.write(json.dumps(outcome))


def main(case_json, target, verdict_path):
    case = json.loads(case_json)
    module_name, _, expression = target.partition(":")
    consume = eval(expression, dict(vars(importlib.import_module(module_name))))
    if "memory" in case:
        why = with_runtime(case)
        if why is not None:
            _verdict(verdict_path, {"outcome": "skipped", "reason": why})
            return
    producer = with_table(case, case["table"]) if "table" in case else Crafted(case)
    outcome = {"outcome": "accepted"}
    try:
        result = consume(producer)
        del result
    except Exception as error:  # a clean error is an outcome; only the exception's class is reported
        outcome = {"outcome": "error", "kind": type(error).__name__}
        error.__traceback__ = None
        del error
    gc.collect()
    outcome.update(produced=producer.produced, deleter_calls=deleter_calls[0], asked=producer.asked,
                   table_calls=table_calls[0])
    _verdict(verdict_path, outcome)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
