"""The `dlmap` module as a row adapter of torch_rows.py's interface, for the PyTorch differential test (issue 27).

dlmap has no constructor from values and no slicing: a producer array is made by PyTorch (the `peer` adapter) and
imported into a dlmap.Array with copy=True; a view (transposed, broadcast, offset, size-1 dims) is PyTorch's view
imported without a copy, so its strides are PyTorch's and its memory PyTorch's. What is then exported, reported or
imported is dlmap's own code under the profile the module was built with. Tensors no dlmap array can be (autograd,
conjugate or negative bits, sparse, quantized, meta, int4, PyTorch's packed float4 pair, pinned or CUDA memory here)
raise the rows' Skip, so the row is reported as inapplicable with that reason.
"""

import struct

import torch_rows


class DlmapTorchAdapter:
    isolate = False   # dlmap must never crash: a row PyTorch runs in a child process runs here in-process

    # The special tensors that are plain strided host memory, which a dlmap array can hold or view.
    _VIEWS = ("size1", "transposed", "broadcast", "offset")
    _COPIES = ("scalar", "empty", "bool", "uint16", "uint64", "bfloat16", "complex32", "float8_e4m3fn", "float8_e5m2")
    _NONE = {
        "requires_grad": "a dlmap array has no autograd state",
        "conj": "a dlmap array has no conjugate bit",
        "neg": "a dlmap array has no negative bit",
        "sparse": "a dlmap array is strided",
        "quantized": "a dlmap array has no quantized dtype",
        "meta": "a dlmap array always has memory",
        "int4": "PyTorch's int4 storage is not a DLPack dtype",
        "float4_e2m1fn_x2": "a dlmap array holds no 2-lane vector dtype",
    }

    def __init__(self, peer, not_applicable=None):   # the rows' Skip is the inapplicable outcome here
        import dlmap

        self.dlmap, self.peer = dlmap, peer
        self.name, self.version = "dlmap", "profile " + dlmap.profile()

    def skip_reason(self):
        return self.peer.skip_reason()

    def array_f64(self, values, read_only=False):
        a = self.dlmap.from_dlpack(self.peer.array_f64(values), copy=True)
        a.readonly = read_only
        return a

    def special(self, kind):
        if kind in self._NONE:
            raise torch_rows.Skip(self._NONE[kind])
        if kind == "readonly_wrapper":   # PyTorch's read-only export wrapper: dlmap's read-only array
            return self.array_f64(range(6), read_only=True)
        source = self.peer.special(kind)   # raises Skip where PyTorch cannot make it here (pinned, cuda)
        if kind in self._VIEWS:
            return self.dlmap.from_dlpack(source, copy=False)
        if kind in self._COPIES:
            return self.dlmap.from_dlpack(source, copy=True)
        raise torch_rows.Skip("no dlmap array of kind %r" % kind)

    def dlpack(self, x, **kw):
        return x.__dlpack__(**kw) if hasattr(x, "__dlpack__") else x

    def dlpack_device(self, x):
        return x.__dlpack_device__()

    def to_dlpack(self, x):
        raise torch_rows.Skip("dlmap's module has no to_dlpack function: __dlpack__ is its export")

    def from_dlpack(self, obj, **kw):
        return self.dlmap.from_dlpack(obj, **kw)

    def data_ptr(self, x):
        return x.data_ptr if isinstance(x, self.dlmap.Array) else self.peer.data_ptr(x)

    def view(self, t):
        return t.dtype, tuple(t.shape), tuple(t.strides), bool(t.readonly), t.data_ptr, t.nbytes

    def write_first(self, t, value):
        """Through the buffer protocol, as any Python code writes a dlmap array (a read-only one refuses)."""
        memoryview(t).cast("B")[0:8] = struct.pack("=d", value)

    def exchange_api(self, x):
        api = getattr(type(x), "__dlpack_c_exchange_api__", None)
        if api is None:
            raise torch_rows.Skip("no __dlpack_c_exchange_api__ on %s" % type(x).__name__)
        return api
