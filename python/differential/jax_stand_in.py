"""A stand-in "JAX" for jax_rows.py, to show that the JAX differential can fail (issue 46): dlmap's own `jax`-profile
module behind JAX's row interface, so it runs where JAX is not installed. It agrees with dlmap on every row by
construction, except where `deviate` is set: then its __dlpack__ answers max_version=(0, 4) as if (0, 5) had been
asked (as if JAX had dropped its lower bound, J-E4), which exactly one CPU row asks for (J-E4; J-E4-cuda is N/A
without a GPU). It calls itself "jax" at the lowest release the module's profile claims (`models:`), so that
differential_test.py compares it with that module, as it would the real JAX.
"""

import dlmap_jax_adapter
import profile_models  # codegen/profile_models.py (differential_test.py puts codegen/ on sys.path)


class StandInJax(dlmap_jax_adapter.DlmapJaxAdapter):
    DEVIATING_ROW = "J-E4"

    def __init__(self, deviate=True):
        super().__init__(None)
        peer, bounds = profile_models.parse(self.dlmap.profile_models())
        claimed = next(".".join(map(str, v)) for op, v in bounds if op in (">=", "=="))
        self.name = peer
        self.version = "%s (a stand-in: dlmap's %s profile%s)" % (
            claimed, self.dlmap.profile(), ", deviating on %s" % self.DEVIATING_ROW if deviate else "")
        self.deviate = deviate

    def export(self, arr, **kw):
        if self.deviate and kw.get("max_version") == (0, 4):
            kw["max_version"] = (0, 5)  # the deliberate difference
        return super().export(arr, **kw)
