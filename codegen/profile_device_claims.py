# dlmap codegen — the profile's import.device_claims (issue 48): which of a tensor's device claims an import checks
# against what the platform's runtime says of its memory, optional with a default of every claim.
"""Loaded by spec_profile.load_profile into the Profile (schema: the top of spec/profiles/jax.yaml).

import.device_claims: [claims] | none   the claims checked where the platform's runtime is loaded in dlmap (no
                                        runtime, no query): host_types, a host-side device type over memory the
                                        runtime says is device memory (device_claim_device_memory); device_types, a
                                        device-memory type over memory the runtime does not know
                                        (device_claim_host_memory); device_id, device memory on another device than
                                        the claimed id (device_claim_wrong_device). none: no claim is checked.
"""

KEY = "device_claims"
# The claims in the order of their bit in the emitted mask (DLMAP_DEVICE_CLAIM_* in include/dlmap/profile.h).
CLAIMS = ("host_types", "device_types", "device_id")


def load(source, imp, h, profile):
    """Sets profile.device_claims (a tuple of CLAIMS names, in CLAIMS order) where the key is given."""
    if KEY not in imp:
        return
    w = h._Where(source, "profile.import")
    value = imp[KEY]
    if value == "none":
        profile.device_claims = ()
        return
    if not isinstance(value, list) or not value:
        w.fail("key '%s' must be 'none' or a non-empty list of %s, got %s" %
               (KEY, ", ".join(CLAIMS), h._type_name(value) if value != [] else "an empty list"))
    for item in value:
        if item not in CLAIMS:
            w.fail("key '%s': %r is not one of %s" % (KEY, item, ", ".join(CLAIMS)))
        if value.count(item) > 1:
            w.fail("key '%s' names %r twice" % (KEY, item))
    profile.device_claims = tuple(c for c in CLAIMS if c in value)


def mask(profile):
    """The emitted bit mask: bit i for CLAIMS[i]."""
    return sum(1 << CLAIMS.index(c) for c in profile.device_claims)
