# dlmap codegen — the profile's `arguments:` section (issue 27): how the Python binding reads __dlpack__'s max_version
# and dl_device, whether it takes a read_only keyword, and how a call that binds wrongly is worded; optional, each
# default the behaviour before it.
"""Loaded by spec_profile.load_profile into the Profile (schema: the top of spec/profiles/jax.yaml).

arguments.max_version: pair | tuple_major | subscript_major
    pair: a tuple or list of two integers, else argument_type_max_version;
    tuple_major: a tuple of two items (else argument_type_max_version) whose first is read as a C long by Python's own
        conversion (its TypeError or OverflowError propagates); the minor is never read (NumPy 2);
    subscript_major: max_version[0], compared with each max_version range's major by Python's `<` (its errors
        propagate); nothing else is read (PyTorch 2).
    Both major-only readings need every range's `until` to have minor 0, no `error` range (the value an error would
    print is not the caller's) and a fixed export.stamp (a negotiated one would stamp a minor never read).
arguments.dl_device: pair | tuple_c_ints
    pair: a tuple of two integers (a tuple of another length: argument_length_dl_device, anything else:
        argument_type_dl_device);
    tuple_c_ints: the same catalogue errors for a non-tuple and a wrong length, then the two items read as C ints by
        Python's own conversion (its TypeError or OverflowError propagates: NumPy's PyArg_ParseTuple "ii").
arguments.read_only: absent | truth
    absent: __dlpack__ has no read_only keyword; truth: __dlpack__(read_only=x) exports the array as read-only when x
        is true (READ_ONLY in a versioned tensor; a legacy one gets export.legacy_read_only's policy) (PyTorch 2).
arguments.signature_errors: builtin | catalogue
    builtin: __dlpack__ and from_dlpack bind their arguments as C functions, in CPython's own words; catalogue: a
        positional too many, an unknown keyword, a missing or doubly given argument are argument_positional_count,
        argument_keyword_unknown, argument_missing and argument_given_twice, in the profile's words.
arguments.method_owner: word
    with catalogue only: __dlpack__ is worded as a Python class's method, {function} "word.__dlpack__" and self counted
        among the positional arguments (PyTorch 2: Tensor); without it, "__dlpack__" and no self (NumPy 2).
arguments.from_dlpack_object: word
    the name of from_dlpack's first parameter, which a call may also pass by keyword (default x, the Array API's;
        NumPy 2: obj, PyTorch 2: ext_tensor).
"""

import re

KEYS = ("max_version", "dl_device", "read_only", "signature_errors", "method_owner", "from_dlpack_object")
SIGNATURE_ERRORS = ("builtin", "catalogue")
# A Python identifier: a class name or a parameter name.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_VERSION_READINGS = ("pair", "tuple_major", "subscript_major")
DL_DEVICE_READINGS = ("pair", "tuple_c_ints")
READ_ONLY_ARGUMENTS = ("absent", "truth")


def load(source, body, h, profile):
    """Sets profile.arg_max_version, arg_dl_device, arg_read_only, signature_errors, method_owner and
    from_dlpack_object from body's `arguments:` (absent: the defaults), after the export keys they are checked
    against."""
    if "arguments" not in body:
        return
    w = h._Where(source, "profile.arguments")
    arguments = body["arguments"]
    if not isinstance(arguments, dict):
        w.fail("must be a mapping, got %s" % h._type_name(arguments))
    h._check_keys(w, arguments, (), KEYS)
    if "max_version" in arguments:
        profile.arg_max_version = h._choice(w, arguments, "max_version", MAX_VERSION_READINGS)
    if "dl_device" in arguments:
        profile.arg_dl_device = h._choice(w, arguments, "dl_device", DL_DEVICE_READINGS)
    if "read_only" in arguments:
        profile.arg_read_only = h._choice(w, arguments, "read_only", READ_ONLY_ARGUMENTS)
    if "signature_errors" in arguments:
        profile.signature_errors = h._choice(w, arguments, "signature_errors", SIGNATURE_ERRORS)
    for key in ("method_owner", "from_dlpack_object"):
        if key in arguments:
            value = h._str(w, arguments, key)
            if not IDENTIFIER.match(value):
                w.fail("key '%s': %r is not a Python identifier" % (key, value))
            setattr(profile, key, value)
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
