# dlmap codegen — load and validate the `profile` section: the exchange policy of one build, checked against the facts.
"""The profile loader (schema: the top of spec/profiles/jax.yaml).

spec.load() calls load_profile() once the facts are loaded, so every device type, version and error id a profile
names is checked against them; mistakes are SpecErrors naming the file, the key and the value. The result holds
only resolved data (device type values, error ids, per-type booleans): emit.py writes it out as rows.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import profile_extends
import profile_arguments
import profile_device_texts
import profile_import_allow
import profile_import_gates
import profile_device_claims
import profile_models

LEGACY_READ_ONLY = ("refuse", "drop")
STREAM_POLICIES = ("validate", "pass_through", "none_only")
OWN_TYPE = ("accept", "listed")
FALSY_TYPE = ("none", "refuse")
REQUESTS = ("versioned_first", "legacy")
HOST_STREAMS = ("none", "as_given")
LAYOUTS = ("any", "compact_permutation", "row_major")
OTHERWISE = ("copy", "refuse")
# A __dlpack_device__ rule matches the array's memory by the memory kinds' own words: host_pinned (page-locked host
# memory), other (anything else: device memory, or plain host memory) or any.
MEMORY_MATCH = ("any", "host_pinned", "other")
# The memory kinds a device type reported for each match may have: the query tells only pinned host memory from the
# rest, so a rule never reports managed memory, nor pinned host memory as device memory or the other way round.
# (`any` keeps JAX's oneAPI rule, which ignores the memory kind and reports device memory.)
MEMORY_REPORTED = {"host_pinned": ("host_pinned", "host"), "other": ("device", "host"),
                   "any": ("host", "host_pinned", "device")}
# Message styles a placeholder may carry, by the placeholder's type: {max_version:tuple} → (0, 4);
# {version:major} → 2;
# {takes:s} → "" for 1, else "s"; {given:was} → "was" for 1, else "were" (the word alone, not the number).
# A device: {device:tuple} → (2, 0) (its numbers), {device:text} → the profile's device_texts entry for its type.
STYLES = {"tuple": ("version", "device"), "packed": ("ints",), "major": ("version",), "s": ("int",), "was": ("int",),
          "text": ("device",)}
# The marker byte codegen writes before a placeholder's index in a compiled template: PLAIN_MARKER unstyled, else its
# style's. src/errors.c reads them from the generated DLMAP_STYLE_MARKER rows (placeholders.inc), never by value.
PLAIN_MARKER = "\x01"
STYLE_MARKERS = {"tuple": "\x02", "packed": "\x02", "major": "\x03", "s": "\x04", "was": "\x05", "text": "\x06"}
# import's optional keys (issue 27), and the words of import.ask.retry: a TypeError from the versioned __dlpack__
# call gets a plain retry always, or only when dl_device and copy are both None (NumPy).
IMPORT_OPTIONAL = ("ask", "legacy_read_only", "device_query", "refused_capsule") + profile_import_allow.KEYS + \
    profile_import_gates.KEYS + (profile_device_claims.KEY,)
ASK_RETRIES = ("any_type_error", "when_defaults")
COPY_ARGUMENTS = ("strict", "truth")  # export.copy_argument: __dlpack__'s copy a bool (or None), or any truth value
SCALAR_DIMS = ("null", "empty")  # export.scalar_dims: a 0-d export's shape and strides NULL, or zero-length arrays
MAX_VERSION_NEGATIVES = ("refuse", "zero")  # export.max_version.negative: a negative major/minor refused or read as 0
DEVICE_QUERIES = ("first", "never", "capsule")  # import.device_query: __dlpack_device__ first, never, or for the stream
# import.ask.keywords: the keywords of the versioned __dlpack__ call, in the C row's bit order (bit i: ASK_KEYWORDS[i]);
# the default is the call before the key (max_version and stream always, dl_device and copy only when set). The call
# passes them in the order listed, then the others in this order.
ASK_KEYWORDS = ("max_version", "stream", "dl_device", "copy")
ASK_KEYWORDS_DEFAULT = ("max_version", "stream")
REFUSED_CAPSULES = ("consume", "leave")  # import.refused_capsule: a refused capsule is renamed used_* and released, or
# left unconsumed (its name kept, its destructor runs the deleter)
# The C enumerator suffix (dlmap_memory_match in include/dlmap/profile.h) of each rule's memory match.
MEMORY_MATCH_C = {"any": "ANY", "host_pinned": "PINNED", "other": "UNPINNED"}
HOST_IDS = ("any", "zero")  # export.dl_device.host_id


@dataclass
class VersionRange:
    until: Optional[object]  # spec.Version; None for the last range
    struct: Optional[str]    # legacy | versioned, or None with an error
    error: Optional[str]


@dataclass
class DeviceRule:
    platform: str
    memory: str              # MEMORY_MATCH (emit.py writes the C enumerator: MEMORY_MATCH_C)
    device_type: Optional[int]
    error: Optional[str]


@dataclass
class DevicePolicy:
    value: int
    export_target: bool      # dl_device may name it
    export_source: bool      # an array on it may be exported
    import_accepted: bool    # a tensor on it may be imported


@dataclass
class Profile:
    name: str
    doc: str
    models: str                  # the peer release range it reproduces (codegen/profile_models.py)
    source: str
    devices: List[DevicePolicy]  # one per device type, in spec order
    own_type: str
    falsy_type: str
    absent_struct: str
    ranges: List[VersionRange]
    gating: str
    legacy_read_only: str
    stream: str
    rules: List[DeviceRule]
    otherwise: str
    request: str
    host_stream: str
    view_layout: str
    otherwise_layout: str
    alignment: int
    whole_bytes: bool
    scalar: bool
    # error id → {kind | message | status: the profile it comes from}, for each field a profile replaces (the
    # profile itself or one it extends; codegen/profile_extends.py)
    error_origins: Dict[str, Dict[str, str]]
    # optional keys (issue 27), with defaults that are the behaviour before them
    stamp: Optional[object] = None  # export.stamp: a spec.Version, or None for negotiated
    host_id: str = "any"            # export.dl_device.host_id
    # import.ask and import.legacy_read_only (optional keys; the defaults are the behaviour before them): set by
    # _import_ask below
    ask_max_version: Optional[object] = None  # spec.Version the versioned call sends (current: spec.abi.current)
    ask_retry: str = "any_type_error"         # ASK_RETRIES
    ask_retry_drops: tuple = ()               # import.ask.retry as a list: the keyword each retry drops, in order
    ask_stream: bool = True                   # from_dlpack has a stream= parameter
    legacy_read_only_import: bool = False     # a view of a legacy capsule's memory is read-only
    device_query: str = "first"               # DEVICE_QUERIES
    ask_keywords: tuple = ASK_KEYWORDS_DEFAULT  # passed on every versioned call, None included (ASK_KEYWORDS)
    refused_capsule: str = "consume"          # REFUSED_CAPSULES
    # import allow-lists (codegen/profile_import_allow.py; optional keys, defaults the behaviour before them)
    import_dtypes: Optional[list] = None      # import.dtypes: [(code, bits, lanes: 0 any)] imported; None: any
    device_names: Optional[list] = None       # import.device_names: [(name, device type)]; None: any type's name
    device_tuples: bool = True                # import.device_tuples: device= takes a (type, id) tuple
    unknown_flags: str = "refuse"             # import.unknown_flags
    dtype_errors: str = "one"                 # import.dtype_errors: how an import.dtypes refusal is told
    dtype_code_names: Optional[list] = None   # import.dtype_code_names: [(code, label)]; None: the enumerators
    max_version_negative: str = "refuse"      # export.max_version.negative: MAX_VERSION_NEGATIVES
    flag_is_copied: bool = True               # export.flag_is_copied: an export's copy sets IS_COPIED
    stream_no_sync: bool = False              # export.stream_no_sync: stream=-1 accepted on every device type
    scalar_dims: str = "null"                 # export.scalar_dims: a 0-d export's shape and strides (SCALAR_DIMS)
    copy_argument: str = "strict"             # export.copy_argument: what __dlpack__'s copy takes (COPY_ARGUMENTS)
    # import gates (codegen/profile_import_gates.py; optional keys, defaults the behaviour before them)
    import_gating: str = "strict"             # import.version_gating
    negative_strides: str = "accept"          # import.strides.negative
    capsule_arguments: str = "accept"         # import.capsule_arguments
    copy_trust: str = "flag"                  # import.copy_trust
    device_enum: bool = False                 # dlpack_device.enum: __dlpack_device__ answers a DLDeviceType member
    absent_read_only: str = "legacy"          # export.max_version.absent_read_only (load_profile: absent's default)
    # arguments: (codegen/profile_arguments.py; optional keys, defaults the behaviour before them)
    arg_max_version: str = "pair"             # arguments.max_version: MAX_VERSION_READINGS
    arg_dl_device: str = "pair"               # arguments.dl_device: DL_DEVICE_READINGS
    arg_read_only: str = "absent"             # arguments.read_only: READ_ONLY_ARGUMENTS
    signature_errors: str = "builtin"         # arguments.signature_errors: SIGNATURE_ERRORS
    method_owner: Optional[str] = None        # arguments.method_owner: __dlpack__ worded as this class's method
    from_dlpack_object: str = "x"             # arguments.from_dlpack_object: from_dlpack's first parameter
    device_texts: list = field(default_factory=list)  # device_texts: [(device type value, text)], spec order
    device_index: str = "none"                # import.device_index: DEVICE_INDEXES (profile_import_allow.py)
    device_names_without_type: list = field(default_factory=list)  # import.device_names_without_type: [names]
    device_claims: tuple = profile_device_claims.CLAIMS  # import.device_claims (codegen/profile_device_claims.py)


def load_profile(source, body, spec, helpers, origins=None):
    """body: the `profile` mapping from source, `extends` already resolved; spec: the loaded facts (a spec.Spec
    without a profile); helpers: the spec module (its _Where and field checkers); origins: as
    profile_extends.resolve_with_origins gives them. Applies the profile's error overrides to spec.errors."""
    h = helpers
    where = h._Where(source, "profile")
    h._check_keys(where, body, ("name", "doc", "models", "export", "dlpack_device", "import"),
                  ("errors", "arguments", "device_texts"))
    name = h._str(where, body, "name", pattern=h._WORD, what="a lower-case word")
    models = h._str(where, body, "models")
    try:
        profile_models.parse(models)
    except profile_models.ModelsError as e:
        where.fail("key 'models': %s" % e)
    devices_by_value = {d.value: d for d in spec.device_types}
    platforms = {p.name: p for p in spec.platforms}
    error_ids = {e.id: e for e in spec.errors}

    def device_value(w, key, item):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            w.fail("key '%s': %r is not a device type (an enumerator, a spelling, an alias or a value)" % (key, item))
        found = devices_by_value.get(item) if isinstance(item, int) else \
            h.device_by_name(spec.device_types, spec.lookup, item)
        if found is None:
            w.fail("key '%s': unknown device type %r" % (key, item))
        return found.value

    def device_set(w, entry, key, keyword):
        """[types] → set of values; the keyword (served / any) → None, resolved per device type below."""
        value = entry[key]
        if value == keyword:
            return None
        if not isinstance(value, list):
            w.fail("key '%s' must be a list of device types or '%s', got %s" % (key, keyword, h._type_name(value)))
        values = [device_value(w, key, item) for item in value]
        if len(set(values)) != len(values):
            w.fail("key '%s' lists a device type twice" % key)
        return set(values)

    def error_id(w, entry, key, args=()):
        value = h._str(w, entry, key)
        if value not in error_ids:
            w.fail("key '%s': unknown error id '%s'" % (key, value))
        extra = [a for a in error_ids[value].args if a not in args]
        if extra:
            w.fail("key '%s': error '%s' needs %s, which this policy cannot supply (it gives: %s)"
                   % (key, value, ", ".join(extra), ", ".join(args) or "nothing"))
        return value

    # export
    export = body["export"]
    w = h._Where(source, "profile.export")
    h._check_keys(w, export, ("dl_device", "sources", "max_version", "version_gating", "legacy_read_only", "stream"),
                  ("stamp", "flag_is_copied", "stream_no_sync", "scalar_dims",
                                                                                "copy_argument"))
    dw = h._Where(source, "profile.export.dl_device")
    h._check_keys(dw, export["dl_device"], ("accept", "own_type", "falsy_type"), ("host_id",))
    targets = device_set(dw, export["dl_device"], "accept", "served")
    sources = device_set(w, export, "sources", "any")
    mw = h._Where(source, "profile.export.max_version")
    h._check_keys(mw, export["max_version"], ("absent", "ranges"), ("negative", "absent_read_only"))
    absent = h._choice(mw, export["max_version"], "absent", ("legacy", "versioned"))
    # export.max_version.absent_read_only: what max_version=None gets for a read-only array (default: absent's)
    absent_read_only = h._choice(mw, export["max_version"], "absent_read_only", ("legacy", "versioned")) \
        if "absent_read_only" in export["max_version"] else absent
    if absent_read_only != absent and absent_read_only != "versioned":
        mw.fail("key 'absent_read_only': only versioned may differ from absent (a read-only array asked for nothing "
                "gets the struct that can say read-only)")
    ranges = _ranges(source, export["max_version"]["ranges"], spec, h, error_id)

    # __dlpack_device__
    dd = body["dlpack_device"]
    w = h._Where(source, "profile.dlpack_device")
    h._check_keys(w, dd, ("rules", "otherwise"), ("enum",))
    device_enum = h._bool(w, dd, "enum") if "enum" in dd else False
    otherwise = error_id(w, dd, "otherwise", ("platform",))
    if dd["rules"] == "derived":
        rules = _derived_rules(spec)
    elif isinstance(dd["rules"], list):
        rules = []
        for i, rule in enumerate(dd["rules"]):
            rw = h._Where(source, "profile.dlpack_device.rules", i)
            h._check_keys(rw, rule, ("platform", "memory"), ("device_type", "error"))
            if ("device_type" in rule) == ("error" in rule):
                rw.fail("needs exactly one of 'device_type' and 'error'")
            platform = h._platform_name(rw, rule, "platform", spec.platforms, spec.lookup)
            if platform not in platforms:
                rw.fail("key 'platform': unknown platform '%s'" % platform)
            memory = h._choice(rw, rule, "memory", MEMORY_MATCH)
            device = device_value(rw, "device_type", rule["device_type"]) if "device_type" in rule else None
            if device is not None and devices_by_value[device].platform != platform:
                rw.fail("key 'device_type': %s belongs to platform %s, not %s"
                        % (devices_by_value[device].name, devices_by_value[device].platform, platform))
            if device is not None and devices_by_value[device].memory not in MEMORY_REPORTED[memory]:
                rw.fail("key 'device_type': %s has memory kind %s, which memory '%s' cannot be (a rule for it "
                        "reports a type of memory kind %s)" % (devices_by_value[device].name,
                                                               devices_by_value[device].memory, memory,
                                                               " or ".join(MEMORY_REPORTED[memory])))
            rules.append(DeviceRule(platform, memory, device, error_id(rw, rule, "error") if "error" in rule else None))
    else:
        w.fail("key 'rules' must be 'derived' or a list of rules, got %s" % h._type_name(dd["rules"]))

    # import
    imp = body["import"]
    w = h._Where(source, "profile.import")
    h._check_keys(w, imp, ("accept", "request", "host_stream", "strides", "alignment", "whole_bytes", "scalar"),
                  IMPORT_OPTIONAL)
    imported = device_set(w, imp, "accept", "served")
    sw = h._Where(source, "profile.import.strides")
    h._check_keys(sw, imp["strides"], ("view", "otherwise"), profile_import_gates.STRIDES_KEYS)
    alignment = h._int(w, imp, "alignment", 0, 1 << 30)
    if alignment & (alignment - 1):
        w.fail("key 'alignment': %d is not 0 or a power of two" % alignment)

    def served(device):
        return platforms[device.platform].backend != "none"

    devices = [DevicePolicy(d.value,
                            served(d) if targets is None else d.value in targets,
                            True if sources is None else d.value in sources,
                            served(d) if imported is None else d.value in imported)
               for d in spec.device_types]

    profile = Profile(name, h._str(where, body, "doc"), models, source, devices,
                      h._choice(dw, export["dl_device"], "own_type", OWN_TYPE),
                      h._choice(dw, export["dl_device"], "falsy_type", FALSY_TYPE), absent, ranges,
                      h._choice(h._Where(source, "profile.export"), export, "version_gating",
                                profile_import_gates.VERSION_GATINGS),
                      h._choice(h._Where(source, "profile.export"), export, "legacy_read_only", LEGACY_READ_ONLY),
                      h._choice(h._Where(source, "profile.export"), export, "stream", STREAM_POLICIES),
                      rules, otherwise, h._choice(w, imp, "request", REQUESTS),
                      h._choice(w, imp, "host_stream", HOST_STREAMS), h._choice(sw, imp["strides"], "view", LAYOUTS),
                      h._choice(sw, imp["strides"], "otherwise", OTHERWISE), alignment,
                      h._bool(w, imp, "whole_bytes"), h._bool(w, imp, "scalar"), {})
    _export_options(source, export, spec, h, profile)
    profile.device_enum = device_enum
    if "flag_is_copied" in export:
        profile.flag_is_copied = h._bool(h._Where(source, "profile.export"), export, "flag_is_copied")
    if "stream_no_sync" in export:
        profile.stream_no_sync = h._bool(h._Where(source, "profile.export"), export, "stream_no_sync")
    if "scalar_dims" in export:
        profile.scalar_dims = h._choice(h._Where(source, "profile.export"), export, "scalar_dims", SCALAR_DIMS)
    if "copy_argument" in export:
        profile.copy_argument = h._choice(h._Where(source, "profile.export"), export, "copy_argument", COPY_ARGUMENTS)
    if "negative" in export["max_version"]:
        profile.max_version_negative = h._choice(mw, export["max_version"], "negative", MAX_VERSION_NEGATIVES)
    profile.absent_read_only = absent_read_only
    _import_ask(source, imp, spec, h, profile)
    profile_arguments.load(source, body, h, profile)
    profile_device_texts.load(source, body, spec, h, device_value, profile)
    profile_import_allow.load(source, imp, spec, h, profile)
    profile_import_gates.load(source, imp, h, profile)
    profile_device_claims.load(source, imp, h, profile)
    _apply_errors(source, body.get("errors", []), spec, h)
    if origins is None:  # a body that extends nothing: its own entries
        origins = profile_extends.resolve_with_origins(body, {})[1]
    # In catalogue order; only the errors whose kind, text or status a profile replaces.
    profile.error_origins = {e.id: dict(origins[e.id]) for e in spec.errors if origins.get(e.id)}
    return profile


def _ranges(source, body, spec, h, error_id):
    if not isinstance(body, list) or not body:
        h._Where(source, "profile.export.max_version").fail("key 'ranges' must be a non-empty list")
    known = {v.version for v in spec.versions}
    ranges, previous = [], None
    for i, entry in enumerate(body):
        w = h._Where(source, "profile.export.max_version.ranges", i)
        last = i == len(body) - 1
        h._check_keys(w, entry, (), ("until", "struct", "error"))
        if ("struct" in entry) == ("error" in entry):
            w.fail("needs exactly one of 'struct' and 'error'")
        if last == ("until" in entry):
            w.fail("every range but the last needs 'until'; the last has none" if not last
                   else "the last range has no 'until' (it runs to every newer version)")
        until = h._version(w, entry, "until", known) if "until" in entry else None
        if until is not None and previous is not None and until <= previous:
            w.fail("key 'until': %s does not follow %s (ranges are ascending)" % (until, previous))
        struct = h._choice(w, entry, "struct", ("legacy", "versioned")) if "struct" in entry else None
        # A consumer below the versioned ABI cannot read a versioned tensor.
        if struct == "versioned" and (previous is None or previous < spec.abi.versioned.introduced):
            w.fail("a versioned range must start at or after %s (abi.versioned)" % spec.abi.versioned.introduced)
        ranges.append(VersionRange(until, struct, error_id(w, entry, "error", ("min_version", "max_version"))
                                   if "error" in entry else None))
        previous = until
    return ranges


def _derived_rules(spec):
    """Per platform: host memory for a cpu-backend platform, else host_pinned when pinned and device when not."""
    rules = []
    for platform in spec.platforms:
        wanted = [("any", "host")] if platform.backend == "cpu" else [("host_pinned", "host_pinned"), ("other", "device")]
        for match, memory in wanted:
            found = next((d for d in spec.device_types if d.platform == platform.name and d.memory == memory), None)
            if found is not None:
                rules.append(DeviceRule(platform.name, match, found.value, None))
    return rules


def _apply_errors(source, body, spec, h):
    """The profile's kind, text and status word per error, replacing the catalogue's (and re-checked like it)."""
    if not isinstance(body, list):
        h._Where(source, "profile.errors").fail("must be a list, got %s" % h._type_name(body))
    errors = {e.id: e for e in spec.errors}
    kinds = {k.name for k in spec.exception_kinds}
    seen = set()
    for i, entry in enumerate(body):
        w = h._Where(source, "profile.errors", i, entry.get("id") if isinstance(entry, dict) else None)
        h._check_keys(w, entry, ("id",), ("kind", "message", "status", "when"))
        error = errors.get(h._str(w, entry, "id"))
        if error is None:
            w.fail("key 'id': unknown error id '%s'" % entry["id"])
        if error.id in seen:
            w.fail("key 'id': '%s' is listed twice" % error.id)
        seen.add(error.id)
        if len(entry) == 1:
            w.fail("names nothing to change (kind, message, status or when)")
        if "kind" in entry:
            error.kind = h._str(w, entry, "kind")
            if error.kind not in kinds:
                w.fail("key 'kind': unknown exception kind '%s'" % error.kind)
        if "message" in entry:
            error.message = h._str(w, entry, "message")
        if "when" in entry:  # what `dlmap explain` and the error's doc page say about when it happens
            error.when = h._str(w, entry, "when")
        if "status" in entry:
            error.status = h._str(w, entry, "status", pattern=h._STATUS, what="an upper-case status word")
        error.parts = h._split_message(w, error, {p.name: p.type for p in spec.placeholders})


def _export_options(source, export, spec, h, profile):
    """The optional export keys: export.stamp and export.dl_device.host_id (defaults: negotiated, any)."""
    dw = h._Where(source, "profile.export.dl_device")
    profile.host_id = h._choice(dw, export["dl_device"], "host_id", HOST_IDS) if "host_id" in export["dl_device"] \
        else "any"
    if "stamp" not in export or export["stamp"] == "negotiated":
        return
    w = h._Where(source, "profile.export")
    stamp = h._version(w, export, "stamp", {v.version for v in spec.versions})
    if stamp < spec.abi.versioned.introduced:
        w.fail("key 'stamp': %s is not a versioned DLPack version (the versioned struct starts at %s); write "
               "'negotiated' or a version from %s on" % (stamp, spec.abi.versioned.introduced,
                                                           spec.abi.versioned.introduced))
    # A versioned tensor never claims a major version newer than the consumer asked for: every consumer a versioned
    # range serves asks at least the range's start. A newer minor is readable (DLPack changes the struct only with the
    # major; the Array API's recommended producer answers a max_version of its own major with its own version: PyTorch
    # stamps 1.3 for (1, 0)).
    start = None
    for r in profile.ranges:
        if r.struct == "versioned" and start is not None and stamp.major > start.major:
            w.fail("key 'stamp': %s has a newer major version than %s, where a versioned max_version range starts (a "
                   "consumer asking for %s would get a tensor it cannot read)" % (stamp, start, start))
        start = r.until
    profile.stamp = stamp
def _import_ask(source, imp, spec, h, profile):
    """import.ask {max_version, retry, stream} and import.legacy_read_only, each optional, into profile."""
    w = h._Where(source, "profile.import")
    profile.ask_max_version = spec.abi.current
    if "legacy_read_only" in imp:
        profile.legacy_read_only_import = h._bool(w, imp, "legacy_read_only")
    if "device_query" in imp:
        profile.device_query = h._choice(w, imp, "device_query", DEVICE_QUERIES)
    if "refused_capsule" in imp:
        profile.refused_capsule = h._choice(w, imp, "refused_capsule", REFUSED_CAPSULES)
    if "ask" in imp:
        _import_ask_keys(source, imp, spec, h, profile)
    # A stream= value is read by the reported device type's stream convention: without the query there is none.
    if profile.device_query == "never" and profile.ask_stream:
        w.fail("key 'device_query': never needs import.ask.stream: false (a stream= value is read by the device "
               "type __dlpack_device__ reports)")


def _import_ask_keys(source, imp, spec, h, profile):
    ask = imp["ask"]
    aw = h._Where(source, "profile.import.ask")
    h._check_keys(aw, ask, (), ("max_version", "retry", "stream", "keywords"))
    if profile.request != "versioned_first":
        for key in ("max_version", "retry", "keywords"):
            if key in ask:
                aw.fail("key '%s': only a versioned_first request sends max_version (import.request is %s)"
                        % (key, profile.request))
    if ask.get("max_version", "current") != "current":
        version = h._version(aw, ask, "max_version", {v.version for v in spec.versions})
        if version < spec.abi.versioned.introduced:
            aw.fail("key 'max_version': %s is below %s (abi.versioned), where a producer answers with a legacy "
                    "capsule; write import.request: legacy instead" % (version, spec.abi.versioned.introduced))
        profile.ask_max_version = version
    if isinstance(ask.get("retry"), list):
        profile.ask_retry_drops = _ask_keywords(aw, ask["retry"], "retry")
    elif "retry" in ask:
        profile.ask_retry = h._choice(aw, ask, "retry", ASK_RETRIES)
    if "stream" in ask:
        profile.ask_stream = h._bool(aw, ask, "stream")
    if "keywords" in ask:
        profile.ask_keywords = _ask_keywords(aw, ask["keywords"], "keywords")


def _ask_keywords(aw, value, key):
    """import.ask.keywords, or retry as a list: distinct ASK_KEYWORDS naming max_version (the versioned call sends it;
    a retry ladder drops it at some step)."""
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        aw.fail("key '%s' must be a list of keyword names (%s)" % (key, ", ".join(ASK_KEYWORDS)))
    for k in value:
        if k not in ASK_KEYWORDS:
            aw.fail("key '%s': %r is not one of %s" % (key, k, ", ".join(ASK_KEYWORDS)))
    if len(set(value)) != len(value):
        aw.fail("key '%s' lists a keyword twice" % key)
    if "max_version" not in value:
        aw.fail("key '%s' must list max_version (the versioned call is the one that sends it)" % key)
    return tuple(value)
