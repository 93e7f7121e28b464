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


class Crafted:
    """A producer whose capsules say exactly what the case says, whatever the consumer asks for."""

    def __init__(self, case):
        self.case, self.keep, self.asked, self.produced = case, [], [], 0

    def __dlpack_device__(self):
        return tuple(self.case.get("reported", self.case["device"]))

    def __dlpack__(self, **kwargs):
        self.asked.append(sorted(kwargs))
        case = self.case
        if case.get("returns") == "int":
            return 42
        struct = case["struct"]
        if struct == "auto":  # what a conforming producer answers
            struct = "versioned" if kwargs.get("max_version") and tuple(kwargs["max_version"]) >= \
                tuple(case["versioned_since"]) else "legacy"
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
        managed.deleter = ctypes.cast(_deleter, ctypes.c_void_p).value
        if struct == "versioned":
            managed.version.major, managed.version.minor = case["version"]
            managed.flags = case.get("flags", 0)
        names = case["names"][struct]
        name = names[1] if case.get("consumed") else names[0]

        def destructor(capsule_address):  # the producer's duty: run the deleter of an unconsumed capsule
            pointer = dlpack.raw_capsule_pointer(capsule_address, names[0])
            if case.get("destructor") == "always":  # a buggy producer: runs it for a consumed capsule too
                pointer = ctypes.addressof(managed)
            if pointer is not None:
                ctypes.cast(managed.deleter, dlpack.DELETER)(pointer)

        capsule, keep = dlpack.new_capsule_calling(ctypes.addressof(managed), name, destructor)
        self.keep.append((managed, shape, strides, data, keep))
        if not case.get("consumed"):
            self.produced += 1
        return capsule


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
    producer = Crafted(case)
    outcome = {"outcome": "accepted"}
    try:
        result = consume(producer)
        del result
    except Exception as error:  # a clean error is an outcome; only the exception's class is reported
        outcome = {"outcome": "error", "kind": type(error).__name__}
        error.__traceback__ = None
        del error
    gc.collect()
    outcome.update(produced=producer.produced, deleter_calls=deleter_calls[0], asked=producer.asked)
    _verdict(verdict_path, outcome)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
