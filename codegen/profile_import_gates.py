# dlmap codegen — the profile's import gates (issue 27): import.version_gating, import.strides.negative and
# import.capsule_arguments, each optional with a default that is the behaviour before it.
"""Loaded by spec_profile.load_profile into the Profile (schema: the top of spec/profiles/jax.yaml).

import.version_gating: strict | known    strict: a versioned tensor's dtype, device type and flags must be in the
                                         version it is stamped with; known: any the spec knows (PyTorch: fp8 at 1.0)
import.strides.negative: accept | refuse refuse: a tensor whose negative stride reaches an element is refused
                                         (strides_negative)
import.capsule_arguments: accept | refuse  refuse: from_dlpack(capsule, device=…, copy=…) with either not None is
                                         capsule_with_arguments, the capsule untouched
"""

KEYS = ("version_gating", "capsule_arguments")   # under import; `negative` is a key of import.strides
STRIDES_KEYS = ("negative",)
VERSION_GATINGS = ("strict", "known")
NEGATIVE_STRIDES = ("accept", "refuse")
CAPSULE_ARGUMENTS = ("accept", "refuse")


def load(source, imp, h, profile):
    """Sets profile.import_gating, profile.negative_strides and profile.capsule_arguments where the keys are given."""
    w = h._Where(source, "profile.import")
    if "version_gating" in imp:
        profile.import_gating = h._choice(w, imp, "version_gating", VERSION_GATINGS)
    if "negative" in imp["strides"]:
        profile.negative_strides = h._choice(h._Where(source, "profile.import.strides"), imp["strides"], "negative",
                                             NEGATIVE_STRIDES)
    if "capsule_arguments" in imp:
        profile.capsule_arguments = h._choice(w, imp, "capsule_arguments", CAPSULE_ARGUMENTS)
