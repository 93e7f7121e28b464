"""The `dlmap` module as a row adapter (numpy_rows.py's interface), for the differential tests (issue 27).

dlmap has no array constructor from values and no slicing: a producer array is made by the reference library
(`peer`, the adapter of the real system the profile reproduces) and imported into a dlmap.Array with copy=True, and a
view is the peer's view of a dlmap array's memory imported back without a copy. What is then exported, reported or
imported is dlmap's own code, under the profile the module was built with.
"""


class NotApplicable(Exception):
    """Raised where dlmap cannot make a row's input; the rows module's own class is used when it has one."""


class DlmapAdapter:
    def __init__(self, peer, not_applicable=NotApplicable):
        import dlmap

        self.dlmap, self.peer, self.not_applicable = dlmap, peer, not_applicable
        self.name, self.version = "dlmap", "profile " + dlmap.profile()

    def skip_reason(self):
        return self.peer.skip_reason()

    def array(self, values, dtype="float64", shape=None, read_only=False):
        try:
            a = self.dlmap.from_dlpack(self.peer.array(values, dtype, shape), copy=True)
        except Exception as e:  # a dtype dlmap cannot hold (object, longdouble, byte-swapped): no such dlmap array
            raise self.not_applicable("dlmap cannot hold %s: %s: %s" % (dtype, type(e).__name__, e)) from None
        a.readonly = read_only
        return a

    def view(self, arr, kind):
        through_peer = self.peer.from_dlpack(arr)
        try:
            return self.dlmap.from_dlpack(self.peer.view(through_peer, kind), copy=False)
        except Exception as e:
            raise self.not_applicable("dlmap cannot view %s: %s: %s" % (kind, type(e).__name__, e)) from None

    def export(self, arr, *args, **kw):
        return arr.__dlpack__(*args, **kw)

    def dlpack_device(self, arr):
        return arr.__dlpack_device__()

    def from_dlpack(self, *args, **kw):
        return self.dlmap.from_dlpack(*args, **kw)

    def describe(self, arr):
        if not isinstance(arr, self.dlmap.Array):
            return self.peer.describe(arr)
        return {"dtype": arr.dtype, "shape": tuple(arr.shape), "strides": tuple(arr.strides),
                "read_only": bool(arr.readonly), "data": arr.data_ptr}
