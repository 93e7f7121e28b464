# dlmap codegen — the profile's import lists (issue 27): the readings of import.dtypes and import.device_names, and the
# tables import.dtype_code_names and import.device_names_without_type.
"""import.dtypes and import.device_names are rows of codegen/profile_settings.py, read through dtypes() and
device_names(); load() reads the two tables once the settings are read. What each key means: the schema."""


def load(source, imp, spec, h, profile):
    """Sets profile.dtype_code_names (None: the enumerators; else a sorted list of (code, label)) and
    profile.device_names_without_type (a list of names), once the settings are read (import.dtypes and
    import.device_names through dtypes() and device_names() below)."""
    w = h._Where(source, "profile.import")
    if "dtype_code_names" in imp:
        profile.dtype_code_names = _code_names(w, imp["dtype_code_names"], spec, h)
    if profile.import_dtypes is None and (profile.dtype_errors != "one" or profile.dtype_code_names is not None):
        w.fail("keys 'dtype_errors' and 'dtype_code_names' tell how import.dtypes refuses a dtype, and 'dtypes' is any")
    if "device_names_without_type" in imp:
        profile.device_names_without_type = _names_without_type(w, imp["device_names_without_type"], h, profile)


def dtypes(w, value, spec, h, profile):
    if not isinstance(value, list) or not value:
        w.fail("key 'dtypes' must be 'any' or a non-empty list of dtype names, got %s" %
               (h._type_name(value) if value != [] else "an empty list"))
    by_name = {}
    for code in spec.dtype_codes:
        for width in code.widths:
            for text in ([width.name] if width.name else []) + width.aliases:
                by_name[h._fold(spec.lookup, "dtypes", text)] = (code.value, width.bits, code.lanes)
    found = []
    for item in value:
        lanes = 0
        if isinstance(item, dict):
            item, lanes = _vector(w, item, h)
        key = h._fold(spec.lookup, "dtypes", item) if isinstance(item, str) else None
        if key not in by_name:
            w.fail("key 'dtypes': %r is not a dtype name of the spec (spec/dtypes.yaml)" % (item,))
        code, bits, code_lanes = by_name[key]
        if (code, bits) in [entry[:2] for entry in found]:
            w.fail("key 'dtypes': %r names (code %d, %d bits) a second time" % (item, code, bits))
        if profile.whole_bytes and bits % 8:
            w.fail("key 'dtypes': %s has %d bits, which import.whole_bytes refuses" % (item, bits))
        if lanes > 1 and code_lanes != "vector":
            w.fail("key 'dtypes': %s has %d lanes, and its code is scalar (spec/dtypes.yaml)" % (item, lanes))
        found.append((code, bits, lanes))
    return sorted(found)


def _vector(w, item, h):
    """{name: dtype name, lanes: N}: the dtype with exactly N lanes (a plain name: any lanes, import.scalar's)."""
    if set(item) != {"name", "lanes"}:
        w.fail("key 'dtypes': an entry that is a mapping has exactly the keys name and lanes, got %s" %
               ", ".join(sorted(map(str, item))))
    lanes = item["lanes"]
    if not isinstance(lanes, int) or isinstance(lanes, bool) or not 1 <= lanes <= 65535:
        w.fail("key 'dtypes': %r: lanes must be an integer from 1 to 65535, got %r" % (item["name"], lanes))
    return item["name"], lanes


def _code_names(w, value, spec, h):
    if not isinstance(value, dict) or not value:
        w.fail("key 'dtype_code_names' must be a non-empty mapping of code enumerator: label, got %s" %
               (h._type_name(value) if value != {} else "an empty mapping"))
    by_name = {code.name: code.value for code in spec.dtype_codes}
    names = []
    for name, label in value.items():
        if name not in by_name:
            w.fail("key 'dtype_code_names': %r is not a code enumerator of the spec (spec/dtypes.yaml)" % (name,))
        if not isinstance(label, str) or not label:
            w.fail("key 'dtype_code_names': %s: the label must be a non-empty string, got %r" % (name, label))
        names.append((by_name[name], label))
    return sorted(names)


def device_names(w, value, spec, h, profile):
    if not isinstance(value, dict) or not value:
        w.fail("key 'device_names' must be 'any' or a non-empty mapping of name: device type, got %s" %
               h._type_name(value))
    names = []
    for name, device in value.items():
        if not isinstance(name, str) or not name:
            w.fail("key 'device_names': %r is not a name (a non-empty string)" % (name,))
        found = h.device_by_name(spec.device_types, spec.lookup, device) if isinstance(device, str) else \
            next((d for d in spec.device_types if d.value == device and not isinstance(device, bool)), None)
        if found is None:
            w.fail("key 'device_names': %s: unknown device type %r" % (name, device))
        policy = next(d for d in profile.devices if d.value == found.value)
        if not policy.import_accepted:
            w.fail("key 'device_names': %s names %s, which import.accept does not list" % (name, found.name))
        names.append((name, found.value))
    return names


def _names_without_type(w, value, h, profile):
    """A non-empty list of distinct names, none of them a name the profile's own device_names maps to a type (the
    spec's names are not checked: a framework's device vocabulary is its own, and a spec entry added later must not
    turn a profile red)."""
    key = "key 'device_names_without_type'"
    if not isinstance(value, list) or not value:
        w.fail("%s must be a non-empty list of names, got %s" %
               (key, h._type_name(value) if value != [] else "an empty list"))
    taken = {name for name, _ in profile.device_names or []}
    for name in value:
        if not isinstance(name, str) or not name:
            w.fail("%s: %r is not a name (a non-empty string)" % (key, name))
        if value.count(name) > 1:
            w.fail("%s names %r twice" % (key, name))
        if name in taken:
            w.fail("%s: %r is also a name import.device_names maps to a device type" % (key, name))
    return list(value)
