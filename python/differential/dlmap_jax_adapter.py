"""The `dlmap` module built with the `jax` profile as a row adapter of jax_rows.py's interface (issue 46).

Arrays are dlmap's own (`dlmap.empty`, zero-filled, on the host or on CUDA device 0), so what each row exports,
reports or imports is dlmap's code under the profile the module was built with (`dlmap.profile()`), and nothing of
the peer is needed to make them; the peer only says whether the rows can run here (skip_reason).
"""


class DlmapJaxAdapter:
    peer_internal_failures = False  # dlmap's outcomes are compared as they are (jax_rows.run_row)

    def __init__(self, peer=None, not_applicable=None):
        import dlmap

        self.dlmap, self.peer = dlmap, peer
        models = dlmap.profile_models() if hasattr(dlmap, "profile_models") else None
        self.name = "dlmap"
        self.version = "profile %s%s" % (dlmap.profile(), " (models %s)" % models if models else "")

    def skip_reason(self):
        return self.peer.skip_reason() if self.peer is not None else None

    def has_gpu(self):
        return bool(self.dlmap.platform_status("cuda").get("available"))

    def array(self, shape, dtype, gpu=False):
        return self.dlmap.empty(shape, dtype, device=(2, 0) if gpu else None)

    def pointer(self, arr):
        return arr.data_ptr

    def export(self, arr, **kw):
        return arr.__dlpack__(**kw)

    def dlpack_device(self, arr):
        return arr.__dlpack_device__()

    def from_dlpack(self, x, device=None, copy=None):
        return self.dlmap.from_dlpack(x, device=device, copy=copy)

    def describe(self, result):
        return {"dtype": result.dtype, "shape": tuple(result.shape), "device": tuple(result.device),
                "data": result.data_ptr}

    def backend_unavailable(self, exc):
        return getattr(exc, "dlmap_id", None) == "platform_unavailable"

    def device_memory(self, nbytes):
        arr = self.array((nbytes,), "uint8", gpu=True)
        return arr.data_ptr, arr
