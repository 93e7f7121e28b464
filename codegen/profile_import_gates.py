# dlmap codegen — the profile's import gates (issue 27): import.version_gating, import.strides.negative,
# import.capsule_arguments and import.copy_trust, each optional with a default that is the behaviour before it.
"""Loaded by spec_profile.load_profile into the Profile (schema: the top of spec/profiles/jax.yaml).

import.version_gating: strict | known    strict: a versioned tensor's dtype, device type and flags must be in the
                                         version it is stamped with; known: any the spec knows (PyTorch: fp8 at 1.0)
import.strides.negative: accept | refuse refuse: a tensor whose negative stride reaches an element is refused
                                         (strides_negative)
import.capsule_arguments: accept | refuse  refuse: from_dlpack(capsule, device=…, copy=…) with either not None is
                                         capsule_with_arguments, the capsule untouched
import.copy_trust: flag | producer       where from_dlpack(copy=True) passed copy=True to the producer that answered:
                                         flag: no second copy only where its tensor says IS_COPIED; producer: never
                                         a second copy (PyTorch)
"""

KEYS = ("version_gating", "capsule_arguments", "copy_trust")  # under import; `negative` is import.strides'
COPY_TRUSTS = ("flag", "producer")
STRIDES_KEYS = ("negative",)
VERSION_GATINGS = ("strict", "known")
NEGATIVE_STRIDES = ("accept", "refuse")
CAPSULE_ARGUMENTS = ("accept", "refuse")


def load(source, imp, h, profile):
    """Sets profile.import_gating, profile.negative_strides, profile.capsule_arguments and profile.copy_trust where
    the keys are given."""
    w = h._Where(source, "profile.import")
    if "version_gating" in imp:
        profile.import_gating = h._choice(w, imp, "version_gating", VERSION_GATINGS)
    if "negative" in imp["strides"]:
        profile.negative_strides = h._choice(h._Where(source, "profile.import.strides"), imp["strides"], "negative",
                                             NEGATIVE_STRIDES)
    if "capsule_arguments" in imp:
        profile.capsule_arguments = h._choice(w, imp, "capsule_arguments", CAPSULE_ARGUMENTS)
    if "copy_trust" in imp:
        profile.copy_trust = h._choice(w, imp, "copy_trust", COPY_TRUSTS)
