# dlmap codegen — the profile's import.device_claims (issue 48): which of a tensor's device claims an import checks
# against what the platform's runtime says of its memory (a row of codegen/profile_settings.py).
"""The claims, in the order of their bit in the emitted mask (DLMAP_DEVICE_CLAIM_* in include/dlmap/profile.h)."""

KEY = "device_claims"
# The claims in the order of their bit in the emitted mask (DLMAP_DEVICE_CLAIM_* in include/dlmap/profile.h).
CLAIMS = ("host_types", "device_types", "device_id")


def read(w, value, h):
    """import.device_claims' value: a tuple of CLAIMS names, in CLAIMS order ('none': empty)."""
    if value == "none":
        return ()
    if not isinstance(value, list) or not value:
        w.fail("key '%s' must be 'none' or a non-empty list of %s, got %s" %
               (KEY, ", ".join(CLAIMS), h._type_name(value) if value != [] else "an empty list"))
    for item in value:
        if item not in CLAIMS:
            w.fail("key '%s': %r is not one of %s" % (KEY, item, ", ".join(CLAIMS)))
        if value.count(item) > 1:
            w.fail("key '%s' names %r twice" % (KEY, item))
    return tuple(c for c in CLAIMS if c in value)


def mask(profile):
    """The emitted bit mask: bit i for CLAIMS[i]."""
    return sum(1 << CLAIMS.index(c) for c in profile.device_claims)
