# dlmap codegen — the checks that tie the profile's `arguments:` settings (how the Python binding reads __dlpack__'s
# arguments; rows of codegen/profile_settings.py) to its export keys.
"""Called by spec_profile.load_profile once every setting is read."""


def check(source, h, profile):
    """The checks that tie the arguments: settings (read by the schema's rows) to the export keys."""
    w = h._Where(source, "profile.arguments")
    if profile.method_owner is not None and profile.signature_errors != "catalogue":
        w.fail("key 'method_owner' words the catalogue's signature errors: it needs signature_errors: catalogue")
    if profile.arg_max_version != "pair":
        why = "max_version %s reads only the major" % profile.arg_max_version
        for r in profile.ranges:
            if r.until is not None and r.until.minor != 0:
                w.fail("%s: export.max_version range until %s has a minor" % (why, r.until))
            if r.error is not None:
                w.fail("%s: export.max_version range error %s would print a version the caller did not pass"
                       % (why, r.error))
        if profile.stamp is None:
            w.fail("%s: export.stamp must be a fixed version (negotiated would stamp a minor never read)" % why)
