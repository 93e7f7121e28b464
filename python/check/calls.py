# dlmap conformance checker — runs in a child interpreter for the producer check (producer.py): makes the producer
# from its module:expression, then answers the parent's commands one at a time — the read-only state, the device
# report, one __dlpack__ call each, the device claim as dlmap's import judges it — with one JSON line per command on a
# dedicated pipe, in plain values the parent judges. A hang or crash stops only this process; the parent attributes
# it to the command it was waiting for and starts a fresh child for the rest. Nothing the producer prints (stdout,
# stderr) is read as an answer.
# usage: calls.py COMMAND_FD ANSWER_FD CONFIG_JSON
#        (CONFIG: target, names {struct: [capsule, consumed]}, readable, runtimes {platform: spec runtime entry})
import ctypes
import gc
import importlib
import importlib.util
import json
import os
import sys


def _load_sibling(name):
    """name.py beside this script, under a private name, with this directory off sys.path afterwards, so that the
    producer's own imports never find the checker's modules (rules, report, tables, …) in place of theirs."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_dlmap_check_" + name, os.path.join(here, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]
    return module


dlpack = _load_sibling("dlpack")
runtimes = _load_sibling("runtimes")
exchange_calls = _load_sibling("exchange_calls")
_KEEP = []  # counting deleters stay alive for the process: a producer may call them late


def _text(value, limit=100):
    """repr(value) cut to `limit` characters, or what its repr raised."""
    try:
        text = repr(value)
    except Exception as error:
        return "a %s whose repr raised %s" % (_type_name(value), _type_name(error))
    return text if len(text) <= limit else text[:limit] + "…"


def _type_name(value):
    try:
        name = type(value).__name__
        return name if isinstance(name, str) else "?"
    except Exception:  # a metaclass whose __name__ raises
        return "?"


def _message(error):
    try:
        text = str(error)
        return text if isinstance(text, str) else ""
    except Exception:
        return ""


def make(target):
    module_name, _, expression = target.partition(":")
    return eval(expression, dict(vars(importlib.import_module(module_name))))  # the caller's own expression


def readonly(x):
    """Whether x is read-only by the attributes array libraries have (None when x says nothing), and what each
    attribute read raised: a property or __getattr__ may raise anything, which is reported, never fatal."""
    raised = []

    def attribute(obj, path, name):
        try:
            return getattr(obj, name, None)
        except Exception as error:
            raised.append("x.%s raised %s" % (path, _type_name(error)))
            return None

    value = attribute(x, "readonly", "readonly")
    try:
        if isinstance(value, bool):
            return {"readonly": value, "raised": raised}
    except Exception as error:
        raised.append("x.readonly's value raised %s" % _type_name(error))
    flags = attribute(x, "flags", "flags")
    writeable = attribute(flags, "flags.writeable", "writeable") if flags is not None else None
    try:
        if isinstance(writeable, bool):
            return {"readonly": not writeable, "raised": raised}
    except Exception as error:
        raised.append("x.flags.writeable's value raised %s" % _type_name(error))
    try:
        return {"readonly": bool(memoryview(x).readonly), "raised": raised}
    except Exception:  # no buffer protocol (device arrays, torch tensors)
        return {"readonly": None, "raised": raised}


def device(x):
    """__dlpack_device__(): {"device": [type, id]}, {"raised": kind} or {"garbage": what came back}."""
    try:
        reported = x.__dlpack_device__()
    except BaseException as error:  # SystemExit and KeyboardInterrupt too: every exception is a result
        return {"raised": _type_name(error)}
    try:
        ok = isinstance(reported, tuple) and len(reported) == 2 and all(isinstance(i, int) for i in reported)
        if ok:
            return {"device": [int(reported[0]), int(reported[1])]}
    except Exception as error:  # an int subclass whose __int__ raises, a tuple subclass whose __len__ does, …
        return {"garbage": "%s (reading it raised %s)" % (_text(reported), _type_name(error))}
    return {"garbage": _text(reported)}


def _raised(error):
    """An exception as plain values: its class name, the names along its MRO, whether it is a TypeError, its message
    and its dlmap_id (dlmap's catalogue id, where it has one)."""
    dlmap_id = None
    try:
        dlmap_id = getattr(error, "dlmap_id", None)
    except Exception:
        pass
    mro = [getattr(c, "__name__", "?") for c in type(error).__mro__]
    error.__traceback__ = None
    return {"name": _type_name(error), "mro": [n for n in mro if isinstance(n, str)],
            "type_error": isinstance(error, TypeError), "message": _message(error),
            "dlmap_id": dlmap_id if isinstance(dlmap_id, str) else None}


def export(x, kwargs, consume, names, readable):
    """Calls x.__dlpack__(**kwargs) and reads the result; then consumes it (renamed, deleter called once) or drops it
    unconsumed, counting the deleter's runs until the capsule is gone. The outcome as plain values."""
    out = {}
    try:
        capsule = x.__dlpack__(**kwargs)
    except BaseException as error:  # every exception is a result to judge
        out["error"] = _raised(error)
        return out
    name = dlpack.capsule_name(capsule)
    out["name"] = name
    if name is None:
        out["returned"] = _type_name(capsule)
        return out
    struct = next((s for s, (unconsumed, _) in names.items() if unconsumed == name), None)
    out["struct"] = struct
    if struct is None:
        return out
    pointer = dlpack.capsule_pointer(capsule, name)
    managed = (dlpack.DLManagedTensorVersioned if struct == "versioned" else dlpack.DLManagedTensor) \
        .from_address(pointer)
    if struct == "versioned":  # the ABI-stable head: the only part of a versioned tensor of any major to read first
        out["version"] = [managed.version.major, managed.version.minor]
        out["flags"] = managed.flags
    if struct == "legacy" or out["version"][0] == readable:  # else only the deleter may be touched
        tensor = managed.dl_tensor
        out["device"] = [tensor.device.device_type, tensor.device.device_id]
        out["dtype"] = [tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes]
        out["ndim"] = tensor.ndim
        if 0 <= tensor.ndim <= 64:
            out["shape"] = dlpack.read_ints(tensor.shape, tensor.ndim) if tensor.ndim else []
        out["strides_null"] = not tensor.strides
        if 0 <= tensor.ndim <= 64 and tensor.strides:
            out["strides"] = dlpack.read_ints(tensor.strides, tensor.ndim) if tensor.ndim else []
        out["address"] = (tensor.data or 0) + tensor.byte_offset
        del tensor
    counter = [0]
    original = managed.deleter
    if original:
        out["has_deleter"] = True
        forward = dlpack.DELETER(original)

        def counting(address):
            counter[0] += 1
            if counter[0] == 1:  # a second run is counted, never forwarded: that would be a double free
                forward(address)

        wrapper = dlpack.DELETER(counting)
        _KEEP.append((forward, wrapper))
        managed.deleter = ctypes.cast(wrapper, ctypes.c_void_p).value
    if consume:
        dlpack.rename(capsule, names[struct][1])
        if original:
            wrapper(pointer)
    del capsule, managed
    gc.collect()
    out["deleter_calls"] = counter[0]
    return out


_STREAMS = {}  # module:expression → the handle it made in this process, or {"error": why it could not}


def made_stream(expression):
    """The handle of the stream `expression` makes (an int), made once in this child; {"error": text} when making it
    raised or gave no int."""
    if expression not in _STREAMS:
        try:
            handle = make(expression)
            _STREAMS[expression] = handle if isinstance(handle, int) and not isinstance(handle, bool) else \
                {"error": "%s gave a %s, not a stream handle" % (expression, _type_name(handle))}
        except BaseException as error:  # the check could not make one: said in the row, never an invented handle
            _STREAMS[expression] = {"error": "%s raised %s: %s" % (expression, _type_name(error),
                                                                   _message(error)[:160])}
    return _STREAMS[expression]


NO_RUNTIME = "no GPU runtime with a device is loaded in the producer's process, so nothing says where its memory is"


def claim(x, platforms):
    """x imported through dlmap, whose import checks a tensor's device claim against the memory wherever a platform's
    runtime is loaded (src/device_claim.c): {"imported": [type, id]}, {"error": raised} (a device_claim_* error is the
    row's failure), or {"skipped": why} where no runtime of `platforms` ({platform: spec runtime entry}) is loaded in
    this process, or none that is has a device, so that nothing can say where the memory is."""
    found = runtimes.loaded_platforms(platforms)
    if found:
        import dlmap  # the checker's own package: its import adopts the runtimes the process loaded
        # platform_status loads nothing new (the process's copy is tried first) and says whether it has a device
        found = [p for p in found if dlmap.platform_status(p)["available"]]
    if not found:
        # One text whether no runtime is loaded or a loaded one has no device (a runtime without a driver): the
        # committed tables of host producers then read the same on machines with and without a runtime installed.
        return {"skipped": NO_RUNTIME}
    try:
        imported = dlmap.from_dlpack(x)
    except BaseException as error:  # every exception is a result to judge
        return {"error": _raised(error)}
    try:
        where = [int(v) for v in imported.__dlpack_device__()]
    finally:
        del imported
        gc.collect()
    return {"imported": where}


def answer(x, command, config):
    op = command["op"]
    if op == "readonly":
        return readonly(x)
    if op == "device":
        return device(x)
    if op == "claim":
        return claim(x, config.get("runtimes", {}))
    if op == "exchange":  # the C exchange API the type publishes (exchange_calls.py)
        def read(y, kwargs, consume):
            return export(y, kwargs, consume, config["names"], config["readable"])
        return exchange_calls.answer(x, command, config, dlpack, _raised, read, _KEEP)
    kwargs = dict(command["kwargs"])
    for key in ("max_version", "dl_device"):  # JSON has no tuples; the protocol passes them
        if key in kwargs:
            kwargs[key] = tuple(kwargs[key])
    if command.get("made_stream"):  # a real stream made here (streams.py), once per child, never an invented handle
        handle = made_stream(command["made_stream"])
        if not isinstance(handle, int):
            return {"no_stream": handle["error"]}
        kwargs["stream"] = handle
    return export(x, kwargs, command["consume"], config["names"], config["readable"])


def main(command_fd, answer_fd, config_json):
    config = json.loads(config_json)
    commands = os.fdopen(command_fd, "rb")
    answers = os.fdopen(answer_fd, "wb", buffering=0)

    def send(value):
        answers.write(json.dumps(value).encode() + b"\n")

    try:
        x = make(config["target"])
    except BaseException as error:
        send({"made": False, "error": "%s: %s" % (_type_name(error), _message(error)[:200])})
        return
    send({"made": True, "type": _type_name(x)})
    for line in commands:
        try:
            result = answer(x, json.loads(line), config)
        except BaseException as error:  # the checker could not read what came back: said, not raised
            result = {"unreadable": "%s: %s" % (_type_name(error), _message(error)[:200])}
        send(result)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
