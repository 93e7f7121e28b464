# dlmap conformance checker — the real streams the producer check hands a GPU-class producer (rules.MADE_STREAM): made
# in the child interpreter that holds the producer (calls.py evaluates one of these as module:expression there), kept
# alive for that process, and returned as the integer handle __dlpack__(stream=) takes. A stream handle means nothing
# outside the process that made it, and an integer that names no stream can crash a runtime: the check invents none.
import ctypes
import os

_KEEP = []  # the streams made here live as long as the process: a producer may use them after the call


def torch():
    """A new PyTorch CUDA stream's handle (torch.cuda.Stream().cuda_stream)."""
    import torch as framework
    stream = framework.cuda.Stream()
    _KEEP.append(stream)
    return int(stream.cuda_stream)


def cupy():
    """A new CuPy stream's handle (cupy.cuda.Stream(non_blocking=True).ptr)."""
    import cupy as framework
    stream = framework.cuda.Stream(non_blocking=True)
    _KEEP.append(stream)
    return int(stream.ptr)


# The vendor API's function that makes a stream, per spec platform. The spec lists the runtime functions dlmap's
# backend calls (platforms.yaml runtime.symbols), and dlmap never makes a stream; these are the APIs' own names.
RUNTIME_CREATE = {"cuda": "cudaStreamCreate", "rocm": "hipStreamCreate"}


def runtime(platform):
    """A new stream of the platform's runtime, made through ctypes: the runtime this process has loaded already (the
    producer's own instance), else the first of the spec's runtime libraries (platforms.yaml runtime.libraries) that
    loads. Raises RuntimeError when none loads or making the stream fails."""
    from .rules import Rules
    entry = Rules().platforms.get(platform)
    if entry is None or platform not in RUNTIME_CREATE or not entry.get("runtime"):
        raise RuntimeError("the check cannot make a %s stream (no runtime to make it with)" % platform)
    names = entry["runtime"]["libraries"]
    library = _loaded(names) or _load(names)
    if library is None:
        raise RuntimeError("none of %s loads here" % ", ".join(names))
    create = getattr(library, RUNTIME_CREATE[platform])
    create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    create.restype = ctypes.c_int
    handle = ctypes.c_void_p()
    status = create(ctypes.byref(handle))
    if status != 0 or not handle.value:
        raise RuntimeError("%s returned %d" % (RUNTIME_CREATE[platform], status))
    _KEEP.append(handle.value)
    return handle.value


def _loaded(names):
    for name in names:
        try:
            return ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        except OSError:
            continue
    return None


def _load(names):
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None
