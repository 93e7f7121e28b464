# dlmap codegen — load and validate the `profile` section: the exchange policy of one build, checked against the facts.
"""The profile loader (schema: codegen/profile_settings.py, one row per key).

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
import profile_device_claims
import profile_models
import profile_settings

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
# The words of import.ask.retry: a TypeError from the versioned __dlpack__ call gets a plain retry always, or only
# when dl_device and copy are both None (NumPy).
ASK_RETRIES = ("any_type_error", "when_defaults")
# import.ask.keywords: the keywords of the versioned __dlpack__ call, in the C row's bit order (bit i: ASK_KEYWORDS[i]).
# The call passes the listed ones in the order listed, then the others in this order.
ASK_KEYWORDS = ("max_version", "stream", "dl_device", "copy")
# The C enumerator suffix (dlmap_memory_match in include/dlmap/profile.h) of each rule's memory match.
MEMORY_MATCH_C = {"any": "ANY", "host_pinned": "PINNED", "other": "UNPINNED"}


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
    """A loaded profile. Every setting of codegen/profile_settings.py is an attribute too (its `attr`), set by
    load_profile from the YAML or the row's default; the fields here are the tables, which have rows of their own."""
    source: str
    devices: List[DevicePolicy]  # one per device type, in spec order
    ranges: List[VersionRange]
    rules: List[DeviceRule]
    # error id → {kind | message | status: the profile it comes from}, for each field a profile replaces (the
    # profile itself or one it extends; codegen/profile_extends.py)
    error_origins: Dict[str, Dict[str, str]] = field(default_factory=dict)
    ask_retry_drops: tuple = ()               # import.ask.retry as a list: the keyword each retry drops, in order
    dtype_code_names: Optional[list] = None   # import.dtype_code_names: [(code, label)]; None: the enumerators
    device_names_without_type: list = field(default_factory=list)  # import.device_names_without_type: [names]
    device_texts: list = field(default_factory=list)  # device_texts: [(device type value, text)], spec order


class _Context:
    """What reading one profile needs: its file, the loaded facts, spec.py's field checkers (h) and lookups."""

    def __init__(self, source, spec, h):
        self.source, self.spec, self.h = source, spec, h
        self.devices_by_value = {d.value: d for d in spec.device_types}
        self.error_ids = {e.id: e for e in spec.errors}

    def where(self, path):
        return self.h._Where(self.source, ".".join(("profile",) + tuple(path)))

    def device_value(self, w, key, item):
        h = self.h
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            w.fail("key '%s': %r is not a device type (an enumerator, a spelling, an alias or a value)" % (key, item))
        found = self.devices_by_value.get(item) if isinstance(item, int) else \
            h.device_by_name(self.spec.device_types, self.spec.lookup, item)
        if found is None:
            w.fail("key '%s': unknown device type %r" % (key, item))
        return found.value

    def device_set(self, w, entry, key, keyword):
        """[types] → set of values; the keyword (served / any) → None, resolved per device type below."""
        value = entry[key]
        if value == keyword:
            return None
        if not isinstance(value, list):
            w.fail("key '%s' must be a list of device types or '%s', got %s" % (key, keyword,
                                                                              self.h._type_name(value)))
        values = [self.device_value(w, key, item) for item in value]
        if len(set(values)) != len(values):
            w.fail("key '%s' lists a device type twice" % key)
        return set(values)

    def error_id(self, w, entry, key, args=()):
        value = self.h._str(w, entry, key)
        if value not in self.error_ids:
            w.fail("key '%s': unknown error id '%s'" % (key, value))
        extra = [a for a in self.error_ids[value].args if a not in args]
        if extra:
            w.fail("key '%s': error '%s' needs %s, which this policy cannot supply (it gives: %s)"
                   % (key, value, ", ".join(extra), ", ".join(args) or "nothing"))
        return value


def _check_mappings(ctx, body, path=()):
    """Every mapping the schema has keys under: its keys known, the required ones present (profile_settings)."""
    allowed = profile_settings.keys_under(path)
    if not allowed:
        return
    required = [k for k, needed in allowed.items() if needed]
    ctx.h._check_keys(ctx.where(path), body, required, [k for k in allowed if k not in required])
    for key in allowed:
        if key in body:
            _check_mappings(ctx, body[key], path + (key,))


def _read_setting(ctx, row, body, profile):
    """A setting's resolved value: the YAML's, else its default read the same way (so a default is checked as a
    written value is)."""
    node = body
    for part in row.path[:-1]:
        node = node.get(part, {})
    key = row.path[-1]
    w = ctx.where(row.path[:-1])
    if key not in node:
        if row.default_from is not None:
            return getattr(profile, profile_settings.setting(row.default_from).attr)
        if row.default is None:
            return None
        node, given = {key: row.default}, False
    else:
        given = True
    h = ctx.h
    if row.type == "bool":
        return h._bool(w, node, key)
    if row.type == "int":
        return h._int(w, node, key, row.low, row.high)
    if row.type == "text":
        return h._str(w, node, key)
    if row.type == "word":
        return h._str(w, node, key, pattern=h._WORD, what="a lower-case word")
    if row.type == "identifier":
        value = h._str(w, node, key)
        if not h._IDENT.match(value):
            w.fail("key '%s': %r is not a Python identifier" % (key, value))
        return value
    if row.type == "words":
        return h._choice(w, node, key, row.choices())
    if row.type == "error":
        return ctx.error_id(w, node, key, row.error_args)
    return _CUSTOM[row.type](ctx, w, node, key, given, profile)


def load_profile(source, body, spec, helpers, origins=None):
    """body: the `profile` mapping from source, `extends` already resolved; spec: the loaded facts (a spec.Spec
    without a profile); helpers: the spec module (its _Where and field checkers); origins: as
    profile_extends.resolve_with_origins gives them. Applies the profile's error overrides to spec.errors."""
    ctx = _Context(source, spec, helpers)
    h = helpers
    _check_mappings(ctx, body)
    export, imp = body["export"], body["import"]
    dw = ctx.where(("export", "dl_device"))
    targets = ctx.device_set(dw, export["dl_device"], "accept", "served")
    sources = ctx.device_set(ctx.where(("export",)), export, "sources", "any")
    imported = ctx.device_set(ctx.where(("import",)), imp, "accept", "served")
    platforms = {p.name: p for p in spec.platforms}

    def served(device):
        return platforms[device.platform].backend != "none"

    devices = [DevicePolicy(d.value,
                            served(d) if targets is None else d.value in targets,
                            True if sources is None else d.value in sources,
                            served(d) if imported is None else d.value in imported)
               for d in spec.device_types]
    profile = Profile(source, devices, _ranges(source, export["max_version"]["ranges"], spec, h, ctx.error_id),
                      _device_rules(ctx, body["dlpack_device"]))
    for row in profile_settings.SETTINGS:
        setattr(profile, row.attr, _read_setting(ctx, row, body, profile))
    # Each setting as the YAML says it, defaults filled in (the docs print them; python/check reads the same).
    profile.yaml_settings = {row.key: profile_settings.raw(body, row) for row in profile_settings.SETTINGS}
    _cross_checks(ctx, profile)
    profile_arguments.check(source, h, profile)
    profile_device_texts.load(source, body, spec, h, ctx.device_value, profile)
    profile_import_allow.load(source, imp, spec, h, profile)
    _apply_errors(source, body.get("errors", []), spec, h)
    if origins is None:  # a body that extends nothing: its own entries
        origins = profile_extends.resolve_with_origins(body, {})[1]
    # In catalogue order; only the errors whose kind, text or status a profile replaces.
    profile.error_origins = {e.id: dict(origins[e.id]) for e in spec.errors if origins.get(e.id)}
    return profile


def _cross_checks(ctx, profile):
    """The checks a row cannot make alone: the models range parsed, and those that span several settings."""
    try:
        profile_models.parse(profile.models)
    except profile_models.ModelsError as e:
        ctx.where(()).fail("key 'models': %s" % e)
    if profile.absent_read_only != profile.absent_struct and profile.absent_read_only != "versioned":
        ctx.where(("export", "max_version")).fail(
            "key 'absent_read_only': only versioned may differ from absent (a read-only array asked for nothing "
            "gets the struct that can say read-only)")
    if profile.alignment & (profile.alignment - 1):
        ctx.where(("import",)).fail("key 'alignment': %d is not 0 or a power of two" % profile.alignment)
    # A stream= value is read by the reported device type's stream convention: without the query there is none.
    if profile.device_query == "never" and profile.ask_stream:
        ctx.where(("import",)).fail("key 'device_query': never needs import.ask.stream: false (a stream= value is "
                                    "read by the device type __dlpack_device__ reports)")


def _device_rules(ctx, dd):
    """dlpack_device.rules: derived, or the listed rules checked against the platforms and device types."""
    spec, h = ctx.spec, ctx.h
    if dd["rules"] == "derived":
        return _derived_rules(spec)
    if not isinstance(dd["rules"], list):
        ctx.where(("dlpack_device",)).fail("key 'rules' must be 'derived' or a list of rules, got %s"
                                          % h._type_name(dd["rules"]))
    platforms = {p.name: p for p in spec.platforms}
    devices_by_value = ctx.devices_by_value
    rules = []
    for i, rule in enumerate(dd["rules"]):
        rw = h._Where(ctx.source, "profile.dlpack_device.rules", i)
        h._check_keys(rw, rule, ("platform", "memory"), ("device_type", "error"))
        if ("device_type" in rule) == ("error" in rule):
            rw.fail("needs exactly one of 'device_type' and 'error'")
        platform = h._platform_name(rw, rule, "platform", spec.platforms, spec.lookup)
        if platform not in platforms:
            rw.fail("key 'platform': unknown platform '%s'" % platform)
        memory = h._choice(rw, rule, "memory", MEMORY_MATCH)
        device = ctx.device_value(rw, "device_type", rule["device_type"]) if "device_type" in rule else None
        if device is not None and devices_by_value[device].platform != platform:
            rw.fail("key 'device_type': %s belongs to platform %s, not %s"
                    % (devices_by_value[device].name, devices_by_value[device].platform, platform))
        if device is not None and devices_by_value[device].memory not in MEMORY_REPORTED[memory]:
            rw.fail("key 'device_type': %s has memory kind %s, which memory '%s' cannot be (a rule for it "
                    "reports a type of memory kind %s)" % (devices_by_value[device].name,
                                                           devices_by_value[device].memory, memory,
                                                           " or ".join(MEMORY_REPORTED[memory])))
        rules.append(DeviceRule(platform, memory, device, ctx.error_id(rw, rule, "error") if "error" in rule else None))
    return rules


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


def _stamp(ctx, w, node, key, given, profile):
    """export.stamp: None for negotiated, else the fixed spec.Version (checked against the max_version ranges)."""
    spec = ctx.spec
    if node[key] == "negotiated":
        return None
    stamp = ctx.h._version(w, node, key, {v.version for v in spec.versions})
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
    return stamp


def _versioned_call_only(w, key, given, profile):
    if given and profile.request != "versioned_first":
        w.fail("key '%s': only a versioned_first request sends max_version (import.request is %s)"
               % (key, profile.request))


def _ask_max_version(ctx, w, node, key, given, profile):
    """import.ask.max_version: current (abi.current) or a listed version at or after abi.versioned."""
    _versioned_call_only(w, key, given, profile)
    spec = ctx.spec
    if node[key] == "current":
        return spec.abi.current
    version = ctx.h._version(w, node, key, {v.version for v in spec.versions})
    if version < spec.abi.versioned.introduced:
        w.fail("key 'max_version': %s is below %s (abi.versioned), where a producer answers with a legacy "
               "capsule; write import.request: legacy instead" % (version, spec.abi.versioned.introduced))
    return version


def _ask_retry(ctx, w, node, key, given, profile):
    """import.ask.retry: a word (ASK_RETRIES), or a list of keywords, one dropped per retry (ask_retry_drops)."""
    _versioned_call_only(w, key, given, profile)
    if isinstance(node[key], list):
        profile.ask_retry_drops = _ask_keywords(w, node[key], key)
        return "any_type_error"
    return ctx.h._choice(w, node, key, ASK_RETRIES)


def _ask_keywords_setting(ctx, w, node, key, given, profile):
    _versioned_call_only(w, key, given, profile)
    return _ask_keywords(w, node[key], key)


_CUSTOM = {
    "stamp": _stamp,
    "version_or_current": _ask_max_version,
    "retry": _ask_retry,
    "keywords": _ask_keywords_setting,
    "claims": lambda ctx, w, node, key, given, profile: profile_device_claims.read(w, node[key], ctx.h),
    "dtype_list": lambda ctx, w, node, key, given, profile:
        None if node[key] == "any" else profile_import_allow.dtypes(w, node[key], ctx.spec, ctx.h, profile),
    "device_name_map": lambda ctx, w, node, key, given, profile:
        None if node[key] == "any" else profile_import_allow.device_names(w, node[key], ctx.spec, ctx.h, profile),
}
assert set(_CUSTOM) == set(profile_settings.CUSTOM_TYPES)


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
