# dlmap conformance checker — runs in a child interpreter for one deleter row (deleters.py): makes the producer from
# its module:expression, takes one capsule from it as a consumer does (renamed, so that the capsule never runs the
# deleter), and calls the producer's deleter one way: with the GIL released, on a native thread Python never saw,
# after the producer and the capsule are gone, or at exit once the interpreter has finalised. It writes what happened
# up to the call to the verdict file the parent named; a crash or a deadlock in the deleter is this process's end,
# which the parent reports. Nothing the producer prints is read as an answer.
# usage: deleter_calls.py CONFIG_JSON VERDICT_PATH   (CONFIG: target, kwargs, way, names {struct: [capsule, consumed]})
import ctypes
import gc
import importlib
import json
import sys

try:
    from . import dlpack  # imported as dlmap.check.deleter_calls
except ImportError:
    import dlpack  # run as a script, with this directory on sys.path

_libc = ctypes.CDLL(None)
# pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *): the deleter is the start routine
# (one pointer argument; its return value is not read). Called with the GIL released, as is the join.
_pthread_create = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_void_p)(("pthread_create", _libc))
_pthread_join = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(("pthread_join", _libc))
# A start routine that ends its thread at once (pthread_exit takes the one pointer argument).
_PTHREAD_EXIT = ctypes.cast(_libc.pthread_exit, ctypes.c_void_p).value


def _on_native_thread(start, argument):
    """Runs start(argument) on a new native thread and waits for it: 0, or pthread_create's error number. Between the
    create and the join the main thread holds the GIL for a few bytecodes; a deleter that reads the thread state
    without the GIL meets a NULL one unless it runs in that window (Python 3.11 keeps one current state per process)."""
    thread = ctypes.c_ulong()
    status = _pthread_create(ctypes.byref(thread), None, start, argument)
    if status == 0:
        _pthread_join(thread.value, None)
    return status


def _write(path, verdict):
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(verdict))


def take(x, kwargs, names):
    """x.__dlpack__(**kwargs) taken as a consumer takes it: (capsule, pointer, deleter address) or a verdict dict."""
    try:
        capsule = x.__dlpack__(**kwargs)
    except BaseException as error:  # the producer refuses this struct: the row has nothing to call
        return {"refused": type(error).__name__}
    name = dlpack.capsule_name(capsule)
    struct = next((s for s, (unconsumed, _) in names.items() if unconsumed == name), None)
    if struct is None:
        return {"refused": "a capsule named %r" % name}
    pointer = dlpack.capsule_pointer(capsule, name)
    managed = (dlpack.DLManagedTensorVersioned if struct == "versioned" else dlpack.DLManagedTensor) \
        .from_address(pointer)
    if not managed.deleter:
        return {"no_deleter": True}
    dlpack.rename(capsule, names[struct][1])  # consumed: the deleter is the consumer's to call now
    return capsule, pointer, managed.deleter


def main(config_json, verdict_path):
    config = json.loads(config_json)
    module_name, _, expression = config["target"].partition(":")
    x = eval(expression, dict(vars(importlib.import_module(module_name))))  # the caller's own expression
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in config["kwargs"].items()}  # JSON has no tuples
    taken = take(x, kwargs, config["names"])
    if isinstance(taken, dict):
        _write(verdict_path, taken)
        return
    capsule, pointer, deleter = taken
    way = config["way"]
    if way == "shutdown":
        import dlmap  # the checker's own package: its C atexit handler calls the deleter after finalisation
        dlmap._call_deleter_at_exit(deleter, pointer)
        _write(verdict_path, {"at_exit": True})
        return
    if way == "objects_gone":
        del capsule, x
        gc.collect()
    if way == "foreign_thread":
        # The same calls once with a thread that only exits, so that the window above is as short as it can be (a
        # process forked from the checker's fork server otherwise takes its first page faults on the way: copy on
        # write).
        status = _on_native_thread(_PTHREAD_EXIT, None) or _on_native_thread(deleter, pointer)
        if status != 0:
            _write(verdict_path, {"no_thread": status})
            return
    else:  # no_gil, objects_gone: a ctypes call releases the GIL around the deleter
        dlpack.DELETER(deleter)(pointer)
    _write(verdict_path, {"returned": True})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
