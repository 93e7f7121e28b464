# dlmap codegen — load and validate: YAML spec files → one checked, immutable Spec (no output here).
"""Strict loader for the dlmap spec.

Every mistake is a SpecError whose text names the file, the entry and the key, e.g.
  spec/devices.yaml: device_types[3] (kDLROCMHost): unknown platform 'rcom'
Several files may be given: list sections are concatenated in order (an overlay adds entries),
mapping sections (abi, lookup) may appear in one file only.
"""

import re
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import yaml

import profile_extends
import spec_kernel_ptx
from runtime_interface import (DEFAULT_STREAMS, KERNEL_COMPILER_OPS, KERNEL_OPS, MEMCPY_KINDS, POINTER_ATTRIBUTE_FIELDS,
                               POINTER_ATTRIBUTES_BYTES, RUNTIME_CONTEXT_OPS, RUNTIME_FLAGS, RUNTIME_STATUSES,
                               RUNTIME_SYMBOLS, STREAM_ALLOCATOR_OPS, STREAM_POOL_OPS)
import spec_profile as profile_loader
from names import enumerator, upper_snake  # noqa: F401  (spec.enumerator: emitters and tests use it)


class SpecError(Exception):
    """A spec mistake, with a message that names where it is."""


# ---- YAML with duplicate-key detection ------------------------------------------------------------

class _StrictConstruction:
    """What the spec's loaders construct differently from PyYAML's safe loader (mixed into both, below)."""

    def construct_object(self, node, deep=False):
        # PyYAML's own constructors raise plain Python errors for values that parse but cannot be built
        # (`2001-13-40`, `!!int x`, `!!bool maybe`, `!!map [1]`): report them like any YAML error, at the node.
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as error:
            raise yaml.constructor.ConstructorError(
                None, None, "bad !!%s value: %s" % (node.tag.rsplit(":", 1)[-1], error), node.start_mark)


class _StrictLoader(_StrictConstruction, yaml.SafeLoader):
    pass


def _construct_mapping(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            continue  # SafeLoader.construct_mapping reports "found unhashable key" as a YAML error
        if key in seen:
            raise SpecError("line %d: duplicate key %r (first at line %d)"
                            % (key_node.start_mark.line + 1, key, seen[key]))
        seen[key] = key_node.start_mark.line + 1
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

# The same loader over libyaml's parser where PyYAML has it (python3-yaml does): 10-15x faster, which the generator's
# many spec loads (every build of every profile, the generator's tests) feel. Its composer recurses in C and overflows
# the stack on collections nested some 30000 deep, so it only loads text whose nesting (read from libyaml's event
# stream, which does not recurse) is shallow; any other text, and any text it rejects, goes through the Python loader,
# whose answer (data, or the error and where) is the one reported.
_CStrictLoader = None
if hasattr(yaml, "CSafeLoader"):
    class _CStrictLoader(_StrictConstruction, yaml.CSafeLoader):
        pass

    _CStrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_C_MOST_NESTED = 64  # far deeper than any spec file, far shallower than either loader's limit


def _load_yaml(text):
    if _CStrictLoader is not None:
        try:
            depth = 0
            for event in yaml.parse(text, Loader=yaml.CSafeLoader):
                if isinstance(event, yaml.CollectionStartEvent):
                    depth += 1
                    if depth > _C_MOST_NESTED:
                        break
                elif isinstance(event, yaml.CollectionEndEvent):
                    depth -= 1
            else:
                return yaml.load(text, Loader=_CStrictLoader)
        except Exception:  # noqa: BLE001 — the Python loader below says what is wrong, as it always has
            pass
    return yaml.load(text, Loader=_StrictLoader)


# ---- model ----------------------------------------------------------------------------------------

@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int

    def __str__(self):
        return "%d.%d" % (self.major, self.minor)


@dataclass
class VersionInfo:
    version: Version
    struct: str
    note: str
    requires: tuple = ()  # the tensor rules (TENSOR_RULES) this release introduces, kept by every later one


@dataclass
class Range:
    introduced: Version
    until: Version


@dataclass
class Abi:
    current: Version
    legacy: Range
    versioned: Range


@dataclass
class ProducerState:
    attribute: str
    read: str          # PRODUCER_STATE_READS
    other_than: Optional[str]
    action: str        # PRODUCER_STATE_ACTIONS
    doc: str


@dataclass
class Flag:
    name: str
    bit: int
    introduced: Version
    doc: str


@dataclass
class MemoryLayout:
    from_version: int            # the runtime_version value this layout applies from
    memory_types: Dict[str, int]  # memory kind → the runtime's memory-type enum value


@dataclass
class PointerAttributes:
    device_offset: int
    device_pointer_offset: int
    managed_offset: Optional[int]
    layouts: List[MemoryLayout]


@dataclass
class RuntimeContext:
    """The driver's per-thread context query (optional): where a runtime's set_device creates a context, the
    backend asks whether the calling thread had one before it switches devices, and restores that state."""
    library: str       # the driver library the symbols live in (dlopen'ed by this name)
    get_current: str   # f(void **context)
    set_current: str   # f(void *context)
    retain_primary: str  # f(void **context, int device): the device's primary context, not made current


@dataclass
class KernelCompiler:
    """A runtime compiler (NVRTC, HIPRTC) that builds the strided-copy kernels' source at first use."""
    libraries: List[str]        # sonames, tried in order with dlopen
    symbols: Dict[str, str]     # op → C symbol, in KERNEL_COMPILER_OPS order


@dataclass
class RuntimeToolkit:
    """Where the host detection records the platform's toolkit runtime (optional): dlmap_config.h's macros."""
    libdir: str                 # a string macro: the library directory, "" when the detection found none
    soname: str                 # a string macro: the runtime's soname in that directory


@dataclass
class RuntimeAddressRange:
    """The entry point that names the allocation holding an address (optional): an import's device claim is judged
    over every byte its layout reaches in one allocation."""
    library: Optional[str]      # the library holding the symbol; None: the runtime's own library
    symbol: str                 # f(void **base, size_t *bytes, const void *ptr)


@dataclass
class RuntimeStreamAllocator:
    """The runtime's stream-ordered allocator (optional): device memory for a copy is taken from the device's pool on
    the stream the copy is ordered on, and given back on the stream its holder named, so that neither call waits for
    the device. Runtimes older than from_version (runtime_version's value), or libraries lacking the symbols, fall back
    to the synchronous malloc/free."""
    malloc_async: str           # f(void **pointer, size_t bytes, void *stream)
    free_async: str             # f(void *pointer, void *stream)
    from_version: int           # the oldest runtime_version that has both
    not_supported: int          # what malloc_async returns on a device without a pool: the synchronous pair serves it
    pools: Optional["RuntimeStreamPools"] = None


@dataclass
class RuntimeStreamPool:
    """One memory kind the runtime's default pools serve: the location and allocation type its default pool is asked
    for by, and whether the pool's memory is mapped for every device before first use (host memory pools are
    reachable only from the host until then)."""
    memory: str                 # a listed memory kind
    location: int               # the location type (cudaMemLocationType)
    allocation: int             # the allocation type (cudaMemAllocationType)
    grant_devices: bool


@dataclass
class RuntimeStreamPools:
    """The runtime's default pools of the memory kinds other than device memory (optional): pinned host and managed
    copies are taken from them on the copy's stream (malloc_from_pool) and given back like device pool memory
    (free_async), so that neither waits for the device as the host and managed allocators do."""
    get_default: str            # f(void **pool, const void *location, int allocation_type)
    malloc_from_pool: str       # f(void **pointer, size_t bytes, void *pool, void *stream)
    set_access: str             # f(void *pool, const void *descriptors, size_t count)
    from_version: int           # the oldest runtime_version that has the three
    device_location: int        # the location type of a device, in set_access's descriptors
    read_write: int             # the access flags that map the pool for a device's reads and writes
    memory: List[RuntimeStreamPool]


@dataclass
class RuntimeKernels:
    """How the GPU backend loads and launches its strided-copy kernels (src/backends/kernels/): a module API that
    takes a code image (PTX or a compiled object), and where the image comes from."""
    library: Optional[str]      # the library holding the module API; None: the runtime's own library
    symbols: Dict[str, str]     # op → C symbol, in KERNEL_OPS order
    ptx: bool                   # the committed PTX artifact is loaded first
    compiler: Optional[KernelCompiler]  # builds the source when there is no PTX or the driver refused it
    module_lost: Tuple[int, ...] = ()   # launch statuses after which the image is loaded again and the launch retried
    ptx_floor: Optional["spec_kernel_ptx.KernelPtx"] = None  # the PTX's ISA floor and drivers (where ptx applies)


@dataclass
class Runtime:
    libraries: List[str]
    symbols: Dict[str, str]       # op → C symbol, in RUNTIME_SYMBOLS order
    memcpy_kinds: Dict[str, int]  # in MEMCPY_KINDS order
    flags: Dict[str, int]         # in RUNTIME_FLAGS order
    streams: Dict[str, int]       # default-stream meaning → handle, in DEFAULT_STREAMS order
    pointer_attributes: PointerAttributes
    statuses: Dict[str, int]      # in RUNTIME_STATUSES order: the error-enum values the backend interprets
    context: Optional["RuntimeContext"] = None
    kernels: Optional["RuntimeKernels"] = None
    address_range: Optional["RuntimeAddressRange"] = None
    toolkit: Optional["RuntimeToolkit"] = None
    stream_allocator: Optional["RuntimeStreamAllocator"] = None

    @property
    def device_count(self):
        return self.symbols["device_count"]

    @property
    def error_string(self):
        return self.symbols["error_string"]


@dataclass
class Platform:
    name: str
    backend: str
    version_words: List[str]
    aliases: List[str]
    runtime: Optional[Runtime]
    doc: str
    value: int = 0  # the public dlmap_platform value (see PUBLIC_VALUES)


@dataclass
class MemoryKind:
    name: str
    host_accessible: bool
    doc: str
    value: int = 0  # the public dlmap_memory_kind value
    refines: Optional[str] = None  # the memory kind this one is a registered form of (host_pinned: host)


@dataclass
class StreamConvention:
    name: str
    absent: str
    values: Dict[int, str]
    handles_above: Optional[int]
    rule: str
    value: int = 0  # the public dlmap_stream_convention value
    handles_from: Optional[int] = None  # the least integer that can be a handle (None: handles_above + 1)


@dataclass
class DeviceType:
    value: int
    name: str
    spellings: List[str]
    aliases: List[str]
    introduced: Version
    platform: str
    memory: str
    stream: str
    doc: str
    note: str
    upstream: str = ""  # "main": on DLPack's main branch after the tag of `introduced`, so that release lacks it
    vendor: bool = False  # `introduced: vendor`: no DLPack release defines it (introduced is then the oldest listed
    #                      version: the vendor's producers stamp what they speak, so no version refuses it)


@dataclass
class Width:
    bits: int
    name: Optional[str]
    aliases: List[str]
    introduced: Version


@dataclass
class DtypeCode:
    value: int
    name: str
    introduced: Version
    lanes: str
    widths: List[Width]
    doc: str
    upstream: str = ""  # as DeviceType.upstream


@dataclass
class ExceptionKind:
    name: str
    doc: str
    value: int = 0  # the public dlmap_error_kind value


@dataclass
class Placeholder:
    name: str
    type: str
    doc: str
    value: int = 0  # the public dlmap_placeholder value (also its bit in an error's args mask)


@dataclass
class Error:
    id: str
    code: int
    kind: str
    message: str
    args: List[str]
    meaning: str
    when: str
    fix: str
    related: List[str]
    status: str = ""  # a status word the profile shows before the message ("INVALID_ARGUMENT: …"); "" for none
    # the message split into literal text and placeholder names, alternating: [text, name, text, …]
    parts: List[str] = field(default_factory=list)


@dataclass
class Spec:
    versions: List[VersionInfo]
    abi: Abi
    flags: List[Flag]
    platforms: List[Platform]
    memory_kinds: List[MemoryKind]
    stream_conventions: List[StreamConvention]
    lookup: Dict[str, str]
    device_types: List[DeviceType]
    dtype_codes: List[DtypeCode]
    exception_kinds: List[ExceptionKind]
    placeholders: List[Placeholder]
    errors: List[Error]
    sources: List[str]
    profile: object = None  # profile.Profile: the exchange policy (spec/profiles/*.yaml)
    producer_states: List[ProducerState] = field(default_factory=list)  # exchange_api.producer_states


# ---- constants the C side gives meaning to ---------------------------------------------------------

STRUCTS = ("none", "legacy", "versioned")
BACKENDS = ("cpu", "gpu", "none")
LANES = ("vector", "scalar")
# Where an entry is defined when no DLPack release has it yet: `upstream: main` marks a value added on DLPack's main
# branch after the tag of its `introduced` version (whose headers main still carries), so that release lacks it.
UPSTREAM = ("main",)
# A vendor's own device type (`introduced: vendor`): in no DLPack release. Its value must lie in this range, far above
# DLPack's own values (which grow one at a time from 1) and above every dlmap error code (1…65535), so that a number
# never names both a DLPack device type and a vendor's, nor a device type and an error.
VENDOR = "vendor"
VENDOR_DEVICE_VALUES = (0x10000, 2**31 - 1)
PLACEHOLDER_TYPES = ("int", "uint", "hex", "ptr", "str", "version", "ints", "device")
STREAM_MEANINGS = ("legacy_default", "per_thread_default", "default", "no_sync", "handle",
                   "host_sync", "invalid")
CASE_RULES = ("sensitive", "insensitive")
# What the GPU backend calls and passes in a vendor runtime (the C signatures, the value names) is
# runtime_interface.py's; a spec's runtime table is checked against it.
LOOKUPS = ("device_types", "platforms", "dtypes", "platform_version")

LIST_SECTIONS = ("versions", "flags", "platforms", "memory_kinds", "stream_conventions",
                 "device_types", "dtype_codes", "exception_kinds", "placeholders", "errors")
MAP_SECTIONS = ("abi", "lookup", "profile")
# Map sections a spec may leave out: released_values (spec/released_values.yaml) records the public value of every
# entry dlmap has released, and the loader refuses a spec that changes or reuses one.
OPTIONAL_MAP_SECTIONS = ("released_values", "exchange_api")
# The lists whose entries are public C enumerators: each entry carries its number as `value:` (never its position, so
# inserting an entry renumbers nothing). The values are exactly 0…N-1 (C tables are indexed by them and callers count
# up to the _COUNT enumerator), so a released entry stays listed; an entry added later takes the next free value.
PUBLIC_VALUES = {"platforms": "dlmap_platform", "memory_kinds": "dlmap_memory_kind",
                 "stream_conventions": "dlmap_stream_convention", "exception_kinds": "dlmap_error_kind",
                 "placeholders": "dlmap_placeholder"}
TENSOR_RULES = ("non_null_strides",)  # versions[].requires
# exchange_api.producer_states: how the consumer reads a state on the producer object, and what it does when it holds.
PRODUCER_STATE_READS = ("value", "call")
PRODUCER_STATE_ACTIONS = ("ask_producer", "refuse")
# The catalogue error a `refuse` state raises (its args: the attribute's name, the state's doc).
PRODUCER_STATE_ERROR = "from_dlpack_producer_state"

# An overlay's `overrides` section edits entries of earlier files, found by their identity key:
#   overrides: {errors: [{id: from_dlpack_missing_methods, kind: TypeError}], device_types: [...]}
# Each override replaces the keys it names; the result is validated like any entry.
IDENTITY = {"versions": "version", "flags": "name", "platforms": "name", "memory_kinds": "name",
            "stream_conventions": "name", "device_types": "value", "dtype_codes": "value",
            "exception_kinds": "name", "placeholders": "name", "errors": "id"}

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WORD = re.compile(r"^[a-z][a-z0-9_]*$")
_LOOKUP_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_VERSION = re.compile(r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$")
_STATUS = re.compile(r"^[A-Z][A-Z0-9_]*$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


# ---- field checking -------------------------------------------------------------------------------

class _Where:
    """Names a place in the spec: 'spec/devices.yaml: device_types[3] (kDLROCMHost)'."""

    def __init__(self, source, section, index=None, name=None):
        self.source, self.section, self.index, self.name = source, section, index, name

    def __str__(self):
        text = "%s: %s" % (self.source, self.section)
        if self.index is not None:
            text += "[%d]" % self.index
        if self.name:
            text += " (%s)" % self.name
        return text

    def fail(self, message):
        raise SpecError("%s: %s" % (self, message))


def _type_name(value):
    return {bool: "a boolean", int: "an integer", str: "a string", list: "a list", dict: "a mapping",
            float: "a number", type(None): "empty"}.get(type(value), type(value).__name__)


def _check_keys(where, entry, required, optional=()):
    if not isinstance(entry, dict):
        where.fail("must be a mapping, got %s" % _type_name(entry))
    for key in entry:
        if key not in required and key not in optional:
            where.fail("unknown key '%s' (allowed: %s)" % (key, ", ".join(list(required) + list(optional))))
    for key in required:
        if key not in entry:
            where.fail("missing key '%s'" % key)


def _str(where, entry, key, default=None, pattern=None, what=None):
    if key not in entry:
        return default
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        where.fail("key '%s' must be a non-empty string, got %s" % (key, _type_name(value)))
    if pattern is not None and not pattern.match(value):
        where.fail("key '%s': %r is not %s" % (key, value, what))
    return value


def _int(where, entry, key, low, high):
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, int):
        where.fail("key '%s' must be an integer, got %s" % (key, _type_name(value)))
    if not low <= value <= high:
        where.fail("key '%s': %d is out of range %d…%d" % (key, value, low, high))
    return value


def _bool(where, entry, key):
    value = entry[key]
    if not isinstance(value, bool):
        where.fail("key '%s' must be true or false, got %s" % (key, _type_name(value)))
    return value


def _choice(where, entry, key, choices):
    value = _str(where, entry, key)
    if value not in choices:
        where.fail("key '%s': %r is not one of %s" % (key, value, ", ".join(choices)))
    return value


def _str_list(where, entry, key, pattern=None, what=None):
    value = entry.get(key, [])
    if not isinstance(value, list):
        where.fail("key '%s' must be a list, got %s" % (key, _type_name(value)))
    for item in value:
        if not isinstance(item, str) or (pattern is not None and not pattern.match(item)):
            where.fail("key '%s': %r is not %s" % (key, item, what or "a string"))
    if len(set(value)) != len(value):
        where.fail("key '%s' lists a name twice" % key)
    return value


def parse_version(text):
    """'1.3' → Version(1, 3); None when the text is not a version."""
    if not isinstance(text, str):
        return None
    match = _VERSION.match(text)
    return Version(int(match.group(1)), int(match.group(2))) if match else None


def _version(where, entry, key, known=None):
    value = entry[key]
    version = parse_version(value)
    if version is None:
        where.fail("key '%s': %r is not a version; write it quoted as \"major.minor\", e.g. \"1.3\""
                   % (key, value))
    if known is not None and version not in known:
        where.fail("key '%s': version %s is not listed under versions" % (key, version))
    return version


# ---- loading --------------------------------------------------------------------------------------

def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise SpecError("%s: cannot read: %s" % (path, error.strerror))
    except UnicodeDecodeError as error:
        raise SpecError("%s: not UTF-8 text: byte %d (0x%02x) cannot be decoded"
                        % (path, error.start, error.object[error.start]))
    try:
        data = _load_yaml(text)
    except SpecError as error:
        raise SpecError("%s: %s" % (path, error))
    except RecursionError:  # PyYAML composes nested collections recursively
        raise SpecError("%s: not valid YAML: collections nested too deeply" % path)
    except yaml.YAMLError as error:
        mark, problem = getattr(error, "problem_mark", None), getattr(error, "problem", error)
        if mark is None and isinstance(error, yaml.reader.ReaderError):  # a character YAML forbids
            start = text.rfind("\n", 0, error.position) + 1
            mark = yaml.Mark(path, error.position, text.count("\n", 0, start), error.position - start, None, None)
            problem = "unacceptable character #x%04x" % error.character
        where = " line %d column %d" % (mark.line + 1, mark.column + 1) if mark else ""
        raise SpecError("%s:%s: not valid YAML: %s" % (path, where, " ".join(str(problem).split())))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SpecError("%s: the top level must be a mapping of sections, got %s" % (path, _type_name(data)))
    return data


def _gather(paths):
    """Merge the files' sections: lists → [(source, index, entry)], mappings → (source, mapping)."""
    lists = {name: [] for name in LIST_SECTIONS}
    maps = {}
    for path in paths:
        for section, body in _read(path).items():
            if section == "overrides":
                _apply_overrides(path, body, lists)
            elif section in LIST_SECTIONS:
                if not isinstance(body, list):
                    raise SpecError("%s: %s: must be a list, got %s" % (path, section, _type_name(body)))
                lists[section].extend((path, i, entry) for i, entry in enumerate(body))
            elif section in MAP_SECTIONS + OPTIONAL_MAP_SECTIONS:
                if not isinstance(body, dict):
                    raise SpecError("%s: %s: must be a mapping, got %s" % (path, section, _type_name(body)))
                if section in maps:
                    raise SpecError("%s: %s: already defined in %s; it may appear in one file only"
                                    % (path, section, maps[section][0]))
                maps[section] = (path, body)
            else:
                raise SpecError("%s: unknown section '%s' (known: %s)"
                                % (path, section, ", ".join(LIST_SECTIONS + MAP_SECTIONS + OPTIONAL_MAP_SECTIONS + ("overrides",))))
    for section in LIST_SECTIONS:
        if not lists[section]:
            raise SpecError("spec: section '%s' is missing or empty (given: %s)" % (section, ", ".join(paths)))
    for section in MAP_SECTIONS:
        if section not in maps:
            raise SpecError("spec: section '%s' is missing (given: %s)" % (section, ", ".join(paths)))
    return lists, maps


def _apply_overrides(path, body, lists):
    """Replaces keys of entries read from earlier files (or earlier in this one)."""
    if not isinstance(body, dict):
        raise SpecError("%s: overrides: must be a mapping of section → list, got %s" % (path, _type_name(body)))
    for section, items in body.items():
        if section == "profile":
            raise SpecError("%s: overrides: cannot change the profile; use `extends: <profile>` in a profile file "
                            "with only the keys that change (README \"Write your own profile\")"
                            % path)
        if section not in IDENTITY:
            raise SpecError("%s: overrides: unknown section '%s' (known: %s)" % (path, section, ", ".join(IDENTITY)))
        if not isinstance(items, list):
            raise SpecError("%s: overrides.%s: must be a list, got %s" % (path, section, _type_name(items)))
        key = IDENTITY[section]
        for i, override in enumerate(items):
            where = _Where(path, "overrides.%s" % section, i,
                           str(override[key]) if isinstance(override, dict) and key in override else None)
            if not isinstance(override, dict) or key not in override:
                where.fail("must be a mapping with the identity key '%s'" % key)
            found = [n for n, (_, _, entry) in enumerate(lists[section])
                     if isinstance(entry, dict) and entry.get(key) == override[key]]
            if not found:
                where.fail("no %s entry with %s %r to override" % (section, key, override[key]))
            if len(override) == 1:
                where.fail("names no key to override")
            source, index, entry = lists[section][found[0]]
            entry.update(override)
            # Later messages about this entry name both files.
            lists[section][found[0]] = ("%s (overridden by %s)" % (source.split(" (overridden by")[0], path), index, entry)


class _Unique:
    """Detects a second entry with the same value of some key, naming the first."""

    def __init__(self, what):
        self.what, self.seen = what, {}

    def add(self, where, key, shown=None):
        if key in self.seen:
            where.fail("duplicate %s %s (already used by %s)" % (self.what, repr(shown if shown is not None else key), self.seen[key]))
        self.seen[key] = str(where)


def _entries(lists, section):
    for source, index, entry in lists[section]:
        name = entry.get("name", entry.get("id", entry.get("version"))) if isinstance(entry, dict) else None
        yield _Where(source, section, index, name if isinstance(name, str) else None), entry


def load(paths, base_profiles=()):
    """Load, merge and validate spec files; returns a Spec or raises SpecError.

    base_profiles: profile files (dlmap's shipped spec/profiles/*.yaml) that the spec's profile may name in
    `extends:`, by their `name:`; read only when it extends one.

    One loader per section, in dependency order: each checks its entries and the references they make to the
    sections loaded before it (a device type's platform, an error's kind), so a mistake names the entry that makes it.
    """
    lists, maps = _gather(paths)
    versions = _load_versions(lists)
    known = {v.version for v in versions}
    abi = _load_abi(maps, versions, known)
    flags = _load_flags(lists, known)
    lookup = _load_lookup(maps)
    platforms = _load_platforms(lists, lookup)
    memory_kinds = _load_memory_kinds(lists)
    _check_layout_memory_kinds(lists, memory_kinds)
    conventions = _load_stream_conventions(lists)
    devices = _load_device_types(lists, known, lookup, platforms, memory_kinds, conventions)
    _check_runtime_streams(platforms, conventions, devices, lists)
    codes = _load_dtype_codes(lists, known, lookup)
    kinds = _load_exception_kinds(lists)
    placeholders = _load_placeholders(lists)
    errors = _load_errors(lists, kinds, placeholders)
    spec = Spec(versions, abi, flags, platforms, memory_kinds, conventions, lookup, devices, codes, kinds,
                placeholders, errors, list(paths))
    if "released_values" in maps:
        _check_released_values(spec, *maps["released_values"])
    if "exchange_api" in maps:
        spec.producer_states = _load_exchange_api(maps, errors)
    source, body = maps["profile"]
    if not isinstance(body, dict):
        raise SpecError("%s: profile: must be a mapping, got %s" % (source, _type_name(body)))
    try:
        body, origins = profile_extends.resolve_with_origins(
            body, _base_profiles(base_profiles) if "extends" in body else {})
    except profile_extends.ExtendsError as error:
        raise SpecError("%s: profile: %s" % (source, error))
    # The profile loader checks fields with this module's helpers (passed in, as spec imports spec_profile).
    spec.profile = profile_loader.load_profile(source, body, spec, sys.modules[__name__], origins)
    return spec


def _base_profiles(paths):
    """{name: profile mapping} of the profile files an `extends:` may name (the first file of a name wins)."""
    bases = {}
    for path in paths:
        body = _read(path).get("profile")
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            raise SpecError("%s: not a profile file (no `profile` section with a name)" % path)
        bases.setdefault(body["name"], body)
    return bases


def _fold(lookup, kind, name):
    """A lookup name as the lookup `kind` compares it (its case rule under `lookup`)."""
    return name.lower() if lookup[kind] == "insensitive" else name


def _check_public_values(lists, section, items):
    """The `value:`s of a public list: each used once, together exactly 0…N-1 (see PUBLIC_VALUES)."""
    used = _Unique("value")
    for (where, _), item in zip(_entries(lists, section), items):
        used.add(where, item.value)
        if item.value >= len(items):
            where.fail("key 'value': %d leaves a gap: the %d %s take exactly the values 0…%d (a released entry stays "
                       "listed; a new one takes the next free value)" % (item.value, len(items), section, len(items) - 1))


def _check_released_values(spec, source, body):
    """Every entry released_values records keeps its value, and no other entry takes it."""
    for section, record in body.items():
        if section not in PUBLIC_VALUES:
            raise SpecError("%s: released_values: unknown list '%s' (known: %s)"
                            % (source, section, ", ".join(PUBLIC_VALUES)))
        if not isinstance(record, dict):
            raise SpecError("%s: released_values.%s: must be a mapping of name → value, got %s"
                            % (source, section, _type_name(record)))
        current = {item.name: item.value for item in getattr(spec, section)}
        owner = {value: name for name, value in current.items()}
        for name, value in record.items():
            where = "%s: released_values.%s.%s" % (source, section, name)
            if name not in current:
                raise SpecError("%s: released %s '%s' (value %s) is no longer listed; a released entry stays, so that "
                                "no value is reused" % (where, section, name, value))
            if current[name] != value:
                raise SpecError("%s: %s '%s' was released as value %s and is now %d; a released value never changes "
                                "(%s is public ABI)" % (where, section, name, value, current[name],
                                                        PUBLIC_VALUES[section]))
        for value, name in owner.items():
            if name not in record and value in record.values():
                raise SpecError("%s: released_values.%s: '%s' takes value %d, released for another entry"
                                % (source, section, name, value))


def _load_versions(lists):
    """versions: oldest first, each with the struct it uses."""
    versions = []
    for where, e in _entries(lists, "versions"):
        _check_keys(where, e, ("version", "struct", "note"), ("requires",))
        version = _version(where, e, "version")
        # Tensor rules a release introduces; the conformance judgement (src/check_tensor.c) reads them.
        requires = tuple(_str_list(where, e, "requires"))
        for rule in requires:
            if rule not in TENSOR_RULES:
                where.fail("key 'requires': unknown rule '%s' (known: %s)" % (rule, ", ".join(TENSOR_RULES)))
        if versions and version <= versions[-1].version:
            where.fail("versions must be listed oldest first; %s follows %s" % (version, versions[-1].version))
        versions.append(VersionInfo(version, _choice(where, e, "struct", STRUCTS), _str(where, e, "note"), requires))
    return versions


def _load_abi(maps, versions, known):
    """abi: the current version and the legacy and versioned ranges, consistent with the versions' structs."""
    source, body = maps["abi"]
    where = _Where(source, "abi")
    _check_keys(where, body, ("current", "legacy", "versioned"))
    current = _version(where, body, "current", known)
    if current != versions[-1].version:
        where.fail("key 'current': %s is not the newest listed version (%s)" % (current, versions[-1].version))
    ranges = {}
    for key, struct in (("legacy", "legacy"), ("versioned", "versioned")):
        sub = _Where(source, "abi.%s" % key)
        _check_keys(sub, body[key], ("introduced", "until"), ("capsule", "consumed"))
        for name_key in ("capsule", "consumed"):  # the Python protocol's capsule names, read by python/check
            _str(sub, body[key], name_key, pattern=re.compile(r"^[a-z_]+$"), what="a capsule name")
        introduced = _version(sub, body[key], "introduced", known)
        until = _version(sub, body[key], "until")
        if until <= introduced:
            sub.fail("key 'until': %s is not after introduced %s" % (until, introduced))
        wrong = [str(v.version) for v in versions if introduced <= v.version < until and v.struct != struct]
        if wrong:
            sub.fail("versions %s in this range do not use the %s struct" % (", ".join(wrong), struct))
        ranges[key] = Range(introduced, until)
    if ranges["legacy"].until > ranges["versioned"].introduced:
        where.fail("the legacy range overlaps the versioned range")
    if not ranges["versioned"].introduced <= current < ranges["versioned"].until:
        where.fail("key 'current': %s is outside the versioned range" % current)
    return Abi(current, ranges["legacy"], ranges["versioned"])


def _load_exchange_api(maps, errors):
    """exchange_api: the producer object states a DLPack tensor cannot carry, read before a producer's C table."""
    source, body = maps["exchange_api"]
    _check_keys(_Where(source, "exchange_api"), body, ("producer_states",))
    entries = body["producer_states"]
    if not isinstance(entries, list) or not entries:
        _Where(source, "exchange_api").fail("key 'producer_states' must be a non-empty list, got %s"
                                            % _type_name(entries))
    states, names = [], _Unique("attribute")
    for index, e in enumerate(entries):
        name = e.get("attribute") if isinstance(e, dict) and isinstance(e.get("attribute"), str) else None
        where = _Where(source, "exchange_api.producer_states", index, name)
        _check_keys(where, e, ("attribute", "read", "action", "doc"), ("other_than",))
        state = ProducerState(_str(where, e, "attribute", pattern=_IDENT, what="a Python identifier"),
                              _choice(where, e, "read", PRODUCER_STATE_READS), _str(where, e, "other_than"),
                              _choice(where, e, "action", PRODUCER_STATE_ACTIONS), _str(where, e, "doc"))
        names.add(where, (state.attribute, state.read, state.other_than), state.attribute)
        if state.action == "refuse" and not any(err.id == PRODUCER_STATE_ERROR for err in errors):
            where.fail("action refuse needs the error '%s' in the catalogue" % PRODUCER_STATE_ERROR)
        states.append(state)
    return states


def _load_flags(lists, known):
    """flags: DLManagedTensorVersioned.flags bits, unique by name and bit."""
    flags, flag_names, flag_bits = [], _Unique("flag name"), _Unique("flag bit")
    for where, e in _entries(lists, "flags"):
        _check_keys(where, e, ("name", "bit", "introduced", "doc"))
        flag = Flag(_str(where, e, "name", pattern=_IDENT, what="a C identifier"), _int(where, e, "bit", 0, 63),
                    _version(where, e, "introduced", known), _str(where, e, "doc"))
        flag_names.add(where, flag.name)
        _check_reserved(where, "flag", flag.name.upper())
        flag_bits.add(where, flag.bit, flag.bit)
        flags.append(flag)
    return flags


def _load_lookup(maps):
    """lookup: the case rule of each name lookup."""
    source, body = maps["lookup"]
    where = _Where(source, "lookup")
    _check_keys(where, body, LOOKUPS)
    return {key: _choice(where, body, key, CASE_RULES) for key in LOOKUPS}


def _load_platforms(lists, lookup):
    """platforms: names and aliases unique under the lookup's case rule, version words no prefix of another's."""
    platforms, platform_names, words = [], _Unique("platform lookup name"), _Unique("version word")
    word_owner = {}  # folded version word → platform name
    for where, e in _entries(lists, "platforms"):
        _check_keys(where, e, ("name", "value", "backend", "version_words", "doc"), ("aliases", "runtime"))
        name = _str(where, e, "name", pattern=_WORD, what="a lower-case word")
        backend = _choice(where, e, "backend", BACKENDS)
        runtime = None
        if "runtime" in e:
            if backend != "gpu":
                where.fail("key 'runtime': only platforms with backend gpu load a vendor runtime")
            runtime = _runtime(_Where(where.source, "%s[%d].runtime" % (where.section, where.index), None, name),
                               e["runtime"])
        platform = Platform(name, backend,
                            _str_list(where, e, "version_words", _LOOKUP_NAME, "a lookup word"),
                            _str_list(where, e, "aliases", _LOOKUP_NAME, "a lookup name"),
                            runtime, _str(where, e, "doc"), _int(where, e, "value", 0, 2**31 - 2))
        _check_reserved(where, "platform", name.upper())
        for text in [name] + platform.aliases:
            platform_names.add(where, _fold(lookup, "platforms", text), text)
        for word in platform.version_words:
            folded = _fold(lookup, "platform_version", word)
            words.add(where, folded, word)
            for other, owner in word_owner.items():
                if owner != name and (other.startswith(folded) or folded.startswith(other)):
                    (short, short_owner), (long, long_owner) = sorted(
                        ((folded, name), (other, owner)), key=lambda pair: len(pair[0]))
                    where.fail("key 'version_words': version word '%s' (%s) is a prefix of '%s' (%s); "
                               "a platform_version containing the longer word would match both"
                               % (short, short_owner, long, long_owner))
            word_owner[folded] = name
        platforms.append(platform)
    if "cpu" not in {p.name for p in platforms}:
        raise SpecError("spec: platforms: the cpu platform is required (the CPU backend serves it)")
    _check_public_values(lists, "platforms", platforms)
    return platforms


def _load_memory_kinds(lists):
    """memory_kinds: unique names; `refines` names another listed kind."""
    memory_kinds, memory_names, refining = [], _Unique("memory kind"), []
    for where, e in _entries(lists, "memory_kinds"):
        _check_keys(where, e, ("name", "value", "host_accessible", "doc"), optional=("refines",))
        kind = MemoryKind(_str(where, e, "name", pattern=_WORD, what="a lower-case word"),
                          _bool(where, e, "host_accessible"), _str(where, e, "doc"), _int(where, e, "value", 0, 2**31 - 2),
                          _str(where, e, "refines", pattern=_WORD, what="a memory kind"))
        memory_names.add(where, kind.name)
        _check_reserved(where, "memory kind", kind.name.upper())
        memory_kinds.append(kind)
        if kind.refines is not None:
            refining.append((where, kind))
    _check_public_values(lists, "memory_kinds", memory_kinds)
    names = {m.name for m in memory_kinds}
    for where, kind in refining:
        if kind.refines not in names or kind.refines == kind.name:
            where.fail("key 'refines': '%s' is not another listed memory kind" % kind.refines)
    return memory_kinds


def _check_layout_memory_kinds(lists, memory_kinds):
    """Every memory kind a runtime's pointer_attributes layout maps is a listed memory kind."""
    names = {m.name for m in memory_kinds}
    for where, e in _entries(lists, "platforms"):
        runtime = e.get("runtime")
        for j, layout in enumerate(runtime["pointer_attributes"]["layouts"] if runtime else []):
            for kind in layout["memory_types"]:
                if kind not in names:
                    _Where(where.source, "%s[%d].runtime.pointer_attributes.layouts" % (where.section, where.index),
                           j, e["name"]).fail("key 'memory_types': unknown memory kind '%s'" % kind)
        pools = ((runtime or {}).get("stream_allocator") or {}).get("pools") or {}
        for kind in pools.get("memory") or {}:
            if kind not in names or kind == "device":
                _Where(where.source, "%s[%d].runtime.stream_allocator.pools" % (where.section, where.index), None,
                       e["name"]).fail("key 'memory': '%s' is not a listed memory kind other than device (device "
                                       "memory is the stream-ordered pair's)" % kind)


def _load_stream_conventions(lists):
    """stream_conventions: the meaning of each special `stream` value, and where handles begin."""
    conventions, convention_names = [], _Unique("stream convention")
    for where, e in _entries(lists, "stream_conventions"):
        _check_keys(where, e, ("name", "value", "absent", "handles_above", "rule"), ("values", "handles_from"))
        name = _str(where, e, "name", pattern=_WORD, what="a lower-case word")
        convention_names.add(where, name)
        _check_reserved(where, "stream convention", name.upper())
        values = e.get("values", {})
        if not isinstance(values, dict):
            where.fail("key 'values' must be a mapping of integer → meaning, got %s" % _type_name(values))
        for value, meaning in values.items():
            if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value <= 2**31:
                where.fail("key 'values': %r is not an integer of -1 or more" % (value,))
            if meaning not in STREAM_MEANINGS or meaning == "handle":
                where.fail("key 'values': %r is not one of %s" % (meaning, ", ".join(m for m in STREAM_MEANINGS if m != "handle")))
        handles_above = e["handles_above"]
        if handles_above is not None:
            handles_above = _int(where, e, "handles_above", -1, 2**31)
            shadowed = [v for v in values if v > handles_above]
            if shadowed:
                where.fail("key 'values': %s lie above handles_above (%d)" % (shadowed, handles_above))
        handles_from = None
        if "handles_from" in e:
            if handles_above is None:
                where.fail("key 'handles_from': this convention has no handles (handles_above is null)")
            handles_from = _int(where, e, "handles_from", handles_above + 1, 2**31)
        absent = _choice(where, e, "absent", [m for m in STREAM_MEANINGS if m not in ("handle", "invalid")])
        conventions.append(StreamConvention(name, absent, dict(sorted(values.items())), handles_above,
                                            _str(where, e, "rule"), _int(where, e, "value", 0, 2**31 - 2),
                                            handles_from))
    _check_public_values(lists, "stream_conventions", conventions)
    return conventions


def _load_device_types(lists, known, lookup, platforms, memory_kinds, conventions):
    """device_types: unique values, enumerators and lookup names; platform, memory kind and convention exist."""
    platform_set = {p.name for p in platforms}
    memory_set = {m.name for m in memory_kinds}
    convention_set = {c.name for c in conventions}
    devices, device_values, device_names, enumerators = [], _Unique("device type value"), \
        _Unique("device type lookup name"), _Unique("C enumerator")
    for where, e in _entries(lists, "device_types"):
        _check_keys(where, e, ("value", "name", "introduced", "platform", "memory", "stream", "doc"),
                    ("spellings", "aliases", "note", "upstream"))
        vendor = e.get("introduced") == VENDOR
        device = DeviceType(_int(where, e, "value", 0, 2**31 - 1),
                            _str(where, e, "name", pattern=_IDENT, what="a C identifier"),
                            _str_list(where, e, "spellings", _IDENT, "a C identifier"),
                            _str_list(where, e, "aliases", _LOOKUP_NAME, "a lookup name"),
                            min(known) if vendor else _version(where, e, "introduced", known),
                            _platform_name(where, e, "platform", platforms, lookup),
                            _str(where, e, "memory"), _str(where, e, "stream"),
                            _str(where, e, "doc"), _str(where, e, "note", default=""),
                            _choice(where, e, "upstream", UPSTREAM) if "upstream" in e else "", vendor)
        if vendor and not VENDOR_DEVICE_VALUES[0] <= device.value <= VENDOR_DEVICE_VALUES[1]:
            where.fail("key 'value': %d is outside the vendor range %d…%d (0x%x…0x%x) that `introduced: vendor` "
                       "types use" % ((device.value,) + VENDOR_DEVICE_VALUES * 2))
        if vendor and device.upstream:
            where.fail("key 'upstream': a vendor device type is in no DLPack release, nor on its main branch")
        device_values.add(where, device.value, device.value)
        enumerators.add(where, enumerator(device.name), enumerator(device.name))
        _check_reserved(where, "device type", enumerator(device.name))
        for text in [device.name] + device.spellings + device.aliases:
            device_names.add(where, _fold(lookup, "device_types", text), text)
        if device.platform not in platform_set:
            where.fail("unknown platform '%s'" % device.platform)
        if device.memory not in memory_set:
            where.fail("unknown memory kind '%s'" % device.memory)
        if device.stream not in convention_set:
            where.fail("unknown stream convention '%s'" % device.stream)
        devices.append(device)
    return devices


def _platform_name(where, entry, key, platforms, lookup):
    """entry[key] names a platform by its name or an alias (under the lookup's case rule) → the platform's name."""
    text = _str(where, entry, key)
    if text is None:
        where.fail("missing key '%s'" % key)
    return platform_by_name(platforms, lookup, text) or text  # an unknown name is reported by the caller


def platform_by_name(platforms, lookup, text):
    """The name of the platform whose name or alias text is (under the platform lookup's case rule), or None."""
    folded = _fold(lookup, "platforms", text) if isinstance(text, str) else None
    return next((p.name for p in platforms for n in [p.name] + p.aliases if _fold(lookup, "platforms", n) == folded),
                None)


def device_by_name(devices, lookup, text):
    """The device type whose name, spelling or alias text is (under the device lookup's case rule), or None."""
    folded = _fold(lookup, "device_types", text) if isinstance(text, str) else None
    return next((d for d in devices for n in [d.name] + d.spellings + d.aliases
                 if _fold(lookup, "device_types", n) == folded), None)


def _load_dtype_codes(lists, known, lookup):
    """dtype_codes: unique values and enumerators; each code's widths unique, named uniquely under the case rule."""
    codes, code_values, code_enums, dtype_names = [], _Unique("dtype code"), _Unique("C enumerator"), \
        _Unique("dtype lookup name")
    for where, e in _entries(lists, "dtype_codes"):
        _check_keys(where, e, ("value", "name", "introduced", "lanes", "widths", "doc"), ("upstream",))
        introduced = _version(where, e, "introduced", known)
        if not isinstance(e["widths"], list):
            where.fail("key 'widths' must be a list, got %s" % _type_name(e["widths"]))
        widths, bits_seen = [], _Unique("width")
        for j, w in enumerate(e["widths"]):
            sub = _Where(where.source, "%s[%d].widths" % (where.section, where.index), j, e.get("name"))
            _check_keys(sub, w, ("bits",), ("name", "aliases", "introduced"))
            width = Width(_int(sub, w, "bits", 1, 255), _str(sub, w, "name", pattern=_LOOKUP_NAME, what="a lookup name"),
                          _str_list(sub, w, "aliases", _LOOKUP_NAME, "a lookup name"),
                          _version(sub, w, "introduced", known) if "introduced" in w else introduced)
            if width.introduced < introduced:
                sub.fail("key 'introduced': %s is before the code itself (%s)" % (width.introduced, introduced))
            if width.aliases and not width.name:
                sub.fail("key 'aliases' needs a 'name'")
            bits_seen.add(sub, width.bits, "%d bits" % width.bits)
            for text in ([width.name] if width.name else []) + width.aliases:
                dtype_names.add(sub, _fold(lookup, "dtypes", text), text)
            widths.append(width)
        code = DtypeCode(_int(where, e, "value", 0, 255),
                         _str(where, e, "name", pattern=_IDENT, what="a C identifier"), introduced,
                         _choice(where, e, "lanes", LANES), sorted(widths, key=lambda w: w.bits),
                         _str(where, e, "doc"), _choice(where, e, "upstream", UPSTREAM) if "upstream" in e else "")
        code_values.add(where, code.value, code.value)
        code_enums.add(where, enumerator(code.name), enumerator(code.name))
        _check_reserved(where, "dtype code", enumerator(code.name))
        codes.append(code)
    return codes


def _load_exception_kinds(lists):
    """exception_kinds: Python class names, unique also as the C enumerators they become."""
    kinds, kind_names, kind_enums = [], _Unique("exception kind"), _Unique("C enumerator")
    for where, e in _entries(lists, "exception_kinds"):
        _check_keys(where, e, ("name", "value", "doc"))
        kind = ExceptionKind(_str(where, e, "name", pattern=_IDENT, what="a Python class name"), _str(where, e, "doc"),
                             _int(where, e, "value", 0, 2**31 - 2))
        kind_names.add(where, kind.name)
        kind_enum = upper_snake(kind.name)
        kind_enums.add(where, kind_enum, "DLMAP_KIND_" + kind_enum)
        _check_reserved(where, "exception kind", kind_enum)
        kinds.append(kind)
    _check_public_values(lists, "exception_kinds", kinds)
    return kinds


def _load_placeholders(lists):
    """placeholders: the named values a message can show, at most 64 (the C side's mask)."""
    placeholders, placeholder_names = [], _Unique("placeholder")
    for where, e in _entries(lists, "placeholders"):
        _check_keys(where, e, ("name", "value", "type", "doc"))
        placeholder = Placeholder(_str(where, e, "name", pattern=_WORD, what="a lower-case word"),
                                  _choice(where, e, "type", PLACEHOLDER_TYPES), _str(where, e, "doc"),
                                  _int(where, e, "value", 0, 2**31 - 2))
        placeholder_names.add(where, placeholder.name)
        _check_reserved(where, "placeholder", placeholder.name.upper())
        placeholders.append(placeholder)
        if len(placeholders) > 64:
            where.fail("more than 64 placeholders; the C side tracks them in a 64-bit mask")
    _check_public_values(lists, "placeholders", placeholders)
    return placeholders


def _load_errors(lists, kinds, placeholders):
    """errors: unique ids and codes, a known kind, args among the placeholders, messages that use only the args,
    related errors that exist."""
    kind_set = {k.name for k in kinds}
    placeholder_types = {p.name: p.type for p in placeholders}
    errors, error_ids, error_codes = [], _Unique("error id"), _Unique("error code")
    for where, e in _entries(lists, "errors"):
        _check_keys(where, e, ("id", "code", "kind", "message", "meaning", "when", "fix"), ("args", "related"))
        error = Error(_str(where, e, "id", pattern=_WORD, what="a snake_case id"), _int(where, e, "code", 1, 65535),
                      _str(where, e, "kind"), _str(where, e, "message"),
                      _str_list(where, e, "args", _WORD, "a placeholder name"),
                      _str(where, e, "meaning"), _str(where, e, "when"), _str(where, e, "fix"),
                      _str_list(where, e, "related", _WORD, "an error id"))
        error_ids.add(where, error.id)
        error_codes.add(where, error.code, error.code)
        if error.kind not in kind_set:
            where.fail("key 'kind': unknown exception kind '%s'" % error.kind)
        for arg in error.args:
            if arg not in placeholder_types:
                where.fail("key 'args': '%s' is not a declared placeholder" % arg)
        errors.append(error)
    for (where, _), error in zip(_entries(lists, "errors"), errors):
        error.parts = _split_message(where, error, placeholder_types)
    for where, e in _entries(lists, "errors"):
        for related in e.get("related", []):
            if related not in error_ids.seen:
                where.fail("key 'related': unknown error id '%s'" % related)
            if related == e["id"]:
                where.fail("key 'related': an error cannot be related to itself")
    return errors


def _int_map(where, entry, key, names, low, high, distinct=False):
    """entry[key]: a mapping of names to integers in low…high. names: the exact keys required (a tuple), or
    a function that checks the mapping's keys and returns them. Errors name the key as 'key.name'."""
    body = entry[key]
    if not isinstance(body, dict):
        where.fail("key '%s' must be a mapping, got %s" % (key, _type_name(body)))
    if isinstance(names, tuple):
        for name in body:
            if name not in names:
                where.fail("key '%s': unknown key '%s' (allowed: %s)" % (key, name, ", ".join(names)))
        for name in names:
            if name not in body:
                where.fail("key '%s': missing key '%s'" % (key, name))
    else:
        names = names(body)
    values, owners = {}, {}
    for name in names:
        if name not in body:
            continue
        value = body[name]
        if isinstance(value, bool) or not isinstance(value, int):
            where.fail("key '%s.%s' must be an integer, got %s" % (key, name, _type_name(value)))
        if not low <= value <= high:
            where.fail("key '%s.%s': %d is out of range %d…%d" % (key, name, value, low, high))
        if distinct and value in owners:
            where.fail("key '%s': %s and %s share the value %d; the runtime could not tell them apart"
                       % (key, owners[value], name, value))
        values[name], owners[value] = value, name
    return values


def _runtime(where, e):
    """platforms[i].runtime: libraries, the symbol table and the runtime's enum values."""
    _check_keys(where, e, ("libraries", "symbols", "memcpy_kinds", "flags", "streams", "pointer_attributes", "statuses"),
                ("context", "kernels", "address_range", "toolkit", "stream_allocator"))
    libraries = _str_list(where, e, "libraries")
    if not libraries:
        where.fail("key 'libraries' must name at least one library")
    if not isinstance(e["symbols"], dict):
        where.fail("key 'symbols' must be a mapping of op → C symbol, got %s" % _type_name(e["symbols"]))
    sub = _Where(where.source, "%s.symbols" % where.section, None, where.name)
    _check_keys(sub, e["symbols"], RUNTIME_SYMBOLS)
    symbols, ops = {}, {}
    for op in RUNTIME_SYMBOLS:
        symbols[op] = _str(sub, e["symbols"], op, pattern=_IDENT, what="a C symbol")
        if symbols[op] in ops:
            sub.fail("key '%s': symbol %s is already the '%s' op; each op needs its own entry point"
                     % (op, symbols[op], ops[symbols[op]]))
        ops[symbols[op]] = op
    memcpy_kinds = _int_map(where, e, "memcpy_kinds", MEMCPY_KINDS, 0, 2**31 - 1, distinct=True)
    flags = _int_map(where, e, "flags", RUNTIME_FLAGS, 0, 2**32 - 1)

    def known_streams(body):
        for meaning in body:
            if meaning not in DEFAULT_STREAMS:
                where.fail("key 'streams': %r is not one of %s" % (meaning, ", ".join(DEFAULT_STREAMS)))
        return DEFAULT_STREAMS
    streams = _int_map(where, e, "streams", known_streams, 0, 2**63 - 1)

    body = e["pointer_attributes"]
    sub = _Where(where.source, "%s.pointer_attributes" % where.section, None, where.name)
    _check_keys(sub, body, tuple(key for key, _, required in POINTER_ATTRIBUTE_FIELDS if required) + ("layouts",),
                tuple(key for key, _, required in POINTER_ATTRIBUTE_FIELDS if not required))
    # Byte 0-3 hold the memory type; each field lies after it, inside POINTER_ATTRIBUTES_BYTES.
    fields = [(key, size) for key, size, required in POINTER_ATTRIBUTE_FIELDS if required or key in body]
    offsets = {key: _int(sub, body, key, 4, POINTER_ATTRIBUTES_BYTES - size) for key, size in fields}
    spans = sorted((offsets[key], offsets[key] + size, key) for key, size in fields)
    for (_, end, first), (start, _, second) in zip(spans, spans[1:]):
        if start < end:
            sub.fail("key '%s': bytes %d… overlap the field '%s'" % (second, start, first))
    if not isinstance(body["layouts"], list) or not body["layouts"]:
        sub.fail("key 'layouts' must be a non-empty list of {from_version, memory_types}")
    layouts = []
    for j, layout in enumerate(body["layouts"]):
        lwhere = _Where(where.source, "%s.pointer_attributes.layouts" % where.section, j, where.name)
        _check_keys(lwhere, layout, ("from_version", "memory_types"))
        from_version = _int(lwhere, layout, "from_version", 0, 2**31 - 1)
        if layouts and from_version <= layouts[-1].from_version:
            lwhere.fail("key 'from_version': %d does not follow %d; list layouts oldest first"
                        % (from_version, layouts[-1].from_version))
        types = _int_map(lwhere, layout, "memory_types", list, -2**31, 2**31 - 1, distinct=True)
        if not types:
            lwhere.fail("key 'memory_types' must map at least one memory kind")
        layouts.append(MemoryLayout(from_version, types))
    statuses = _int_map(where, e, "statuses", RUNTIME_STATUSES, 1, 2**31 - 1)
    context = None
    if "context" in e:
        sub = _Where(where.source, "%s.context" % where.section, None, where.name)
        _check_keys(sub, e["context"], ("library",) + RUNTIME_CONTEXT_OPS)
        library = _str(sub, e["context"], "library")
        ops = [_str(sub, e["context"], op, pattern=_IDENT, what="a C symbol") for op in RUNTIME_CONTEXT_OPS]
        for i, op in enumerate(ops):
            if op in ops[:i]:
                sub.fail("key '%s': symbol %s is already the '%s' op; each op needs its own entry point"
                         % (RUNTIME_CONTEXT_OPS[i], op, RUNTIME_CONTEXT_OPS[ops.index(op)]))
        context = RuntimeContext(library, *ops)
    kernels = _runtime_kernels(_Where(where.source, "%s.kernels" % where.section, None, where.name),
                               e["kernels"]) if "kernels" in e else None
    address_range = _runtime_address_range(_Where(where.source, "%s.address_range" % where.section, None, where.name),
                                           e["address_range"]) if "address_range" in e else None
    toolkit = _runtime_toolkit(_Where(where.source, "%s.toolkit" % where.section, None, where.name),
                               e["toolkit"]) if "toolkit" in e else None
    stream_allocator = _runtime_stream_allocator(
        _Where(where.source, "%s.stream_allocator" % where.section, None, where.name),
        e["stream_allocator"], symbols) if "stream_allocator" in e else None
    pointer = PointerAttributes(layouts=layouts, **{key: offsets.get(key) for key, _, _ in POINTER_ATTRIBUTE_FIELDS})
    return Runtime(libraries, symbols, memcpy_kinds, flags, streams, pointer, statuses, context, kernels,
                   address_range, toolkit, stream_allocator)


def _runtime_stream_allocator(where, e, symbols):
    """platforms[i].runtime.stream_allocator: the two entry points and the oldest runtime version that has them."""
    if not isinstance(e, dict):
        where.fail("must be a mapping {malloc_async, free_async, from_version}, got %s" % _type_name(e))
    _check_keys(where, e, STREAM_ALLOCATOR_OPS + ("from_version", "not_supported"), ("pools",))
    ops = _symbol_table(where, {op: e[op] for op in STREAM_ALLOCATOR_OPS}, STREAM_ALLOCATOR_OPS)
    for op, symbol in ops.items():
        if symbol in symbols.values():
            where.fail("key '%s': symbol %s is already a runtime op; the stream-ordered pair needs its own entry points"
                       % (op, symbol))
    pools = _runtime_stream_pools(_Where(where.source, "%s.pools" % where.section, None, where.name), e["pools"],
                                  set(symbols.values()) | set(ops.values())) if "pools" in e else None
    return RuntimeStreamAllocator(ops["malloc_async"], ops["free_async"],
                                  _int(where, e, "from_version", 0, 2**31 - 1),
                                  _int(where, e, "not_supported", 1, 2**31 - 1), pools)


def _runtime_stream_pools(where, e, taken):
    """platforms[i].runtime.stream_allocator.pools: the default-pool entry points, their release, the access
    descriptor's values and each memory kind's pool (listed memory kinds: checked with the pointer layouts')."""
    if not isinstance(e, dict):
        where.fail("must be a mapping {%s, from_version, device_location, read_write, memory}, got %s"
                   % (", ".join(STREAM_POOL_OPS), _type_name(e)))
    _check_keys(where, e, STREAM_POOL_OPS + ("from_version", "device_location", "read_write", "memory"))
    ops = _symbol_table(where, {op: e[op] for op in STREAM_POOL_OPS}, STREAM_POOL_OPS)
    for op, symbol in ops.items():
        if symbol in taken:
            where.fail("key '%s': symbol %s is already a runtime op; the pools need their own entry points"
                       % (op, symbol))
    memory = e["memory"]
    if not isinstance(memory, dict) or not memory:
        where.fail("key 'memory' must be a non-empty mapping memory kind → {location, allocation, grant_devices}")
    pools = []
    for kind, body in memory.items():
        kwhere = _Where(where.source, "%s.memory.%s" % (where.section, kind), None, where.name)
        _check_keys(kwhere, body, ("location", "allocation", "grant_devices"))
        pools.append(RuntimeStreamPool(kind, _int(kwhere, body, "location", 0, 2**31 - 1),
                                       _int(kwhere, body, "allocation", 0, 2**31 - 1),
                                       _bool(kwhere, body, "grant_devices")))
    return RuntimeStreamPools(ops["get_default"], ops["malloc_from_pool"], ops["set_access"],
                              _int(where, e, "from_version", 0, 2**31 - 1),
                              _int(where, e, "device_location", 0, 2**31 - 1),
                              _int(where, e, "read_write", 0, 2**31 - 1), pools)


def _runtime_toolkit(where, e):
    """platforms[i].runtime.toolkit: the dlmap_config.h macros of the toolkit runtime's directory and soname."""
    _check_keys(where, e, ("libdir", "soname"))
    return RuntimeToolkit(*(_str(where, e, key, pattern=_IDENT, what="a C macro") for key in ("libdir", "soname")))


def _runtime_address_range(where, e):
    """platforms[i].runtime.address_range: the optional library and the symbol."""
    _check_keys(where, e, ("symbol",), ("library",))
    library = _str(where, e, "library") if "library" in e else None
    return RuntimeAddressRange(library, _str(where, e, "symbol", pattern=_IDENT, what="a C symbol"))


def _symbol_table(where, body, ops):
    """A mapping op → C symbol with exactly `ops` as keys, each op its own entry point."""
    _check_keys(where, body, ops)
    symbols, owners = {}, {}
    for op in ops:
        symbols[op] = _str(where, body, op, pattern=_IDENT, what="a C symbol")
        if symbols[op] in owners:
            where.fail("key '%s': symbol %s is already the '%s' op; each op needs its own entry point"
                       % (op, symbols[op], owners[symbols[op]]))
        owners[symbols[op]] = op
    return symbols


def _runtime_kernels(where, e):
    """platforms[i].runtime.kernels: the module API, whether the committed PTX applies, the optional compiler."""
    _check_keys(where, e, ("symbols", "ptx"), ("library", "compiler", "module_lost"))
    library = _str(where, e, "library") if "library" in e else None
    symbols = _symbol_table(_Where(where.source, "%s.symbols" % where.section, None, where.name), e["symbols"],
                            KERNEL_OPS)
    ptx_floor = spec_kernel_ptx.load(where, e["ptx"], lambda section, index: _Where(
        where.source, "%s.%s" % (where.section, section), index, where.name))
    compiler = None
    if "compiler" in e:
        sub = _Where(where.source, "%s.compiler" % where.section, None, where.name)
        _check_keys(sub, e["compiler"], ("libraries", "symbols"))
        libraries = _str_list(sub, e["compiler"], "libraries")
        if not libraries:
            sub.fail("key 'libraries' must name at least one library")
        compiler = KernelCompiler(libraries, _symbol_table(
            _Where(where.source, "%s.compiler.symbols" % where.section, None, where.name), e["compiler"]["symbols"],
            KERNEL_COMPILER_OPS))
    if ptx_floor is not None and library is None:
        where.fail("key 'ptx' needs key 'library': the driver library that JIT-compiles the PTX and answers "
                   "ptx.driver_version")
    if ptx_floor is None and compiler is None:
        where.fail("gives the kernels no code: give ptx its floor or name a compiler")
    return RuntimeKernels(library, symbols, ptx_floor is not None, compiler,
                          _module_lost(where, e.get("module_lost", [])), ptx_floor)


def _module_lost(where, statuses):
    """runtime.kernels.module_lost: distinct nonzero status values (0 is a launch that succeeded)."""
    if not isinstance(statuses, list) or any(type(s) is not int for s in statuses):
        where.fail("key 'module_lost' must be a list of status integers, got %r" % (statuses,))
    for s in statuses:
        if not 0 < s < 2**31:
            where.fail("key 'module_lost': %d is no failed status (1 … 2^31-1)" % s)
        if statuses.count(s) > 1:
            where.fail("key 'module_lost' lists %d twice" % s)
    return tuple(statuses)


def _check_runtime_streams(platforms, conventions, devices, lists):
    """Every default-stream meaning a device type of a GPU platform can receive has a handle in its runtime."""
    by_name = {c.name: c for c in conventions}
    entries = {p.name: where for (where, _), p in zip(_entries(lists, "platforms"), platforms)}
    for platform in platforms:
        if platform.runtime is None:
            continue
        for device in devices:
            if device.platform != platform.name:
                continue
            convention = by_name[device.stream]
            for meaning in [convention.absent] + list(convention.values.values()):
                if meaning in DEFAULT_STREAMS and meaning not in platform.runtime.streams:
                    where = entries[platform.name]
                    _Where(where.source, "%s[%d].runtime" % (where.section, where.index), None,
                           platform.name).fail(
                        "key 'streams': no handle for %s, which device type %s (stream convention %s) can receive"
                        % (meaning, device.name, convention.name))


def placeholder_style(part):
    """A message part naming a placeholder → (name, style): 'max_version:tuple' → ('max_version', 'tuple')."""
    name, _, style = part.partition(":")
    return name, style


def _split_message(where, error, placeholder_types):
    """'a {x} b' → ['a ', 'x', ' b'], checking braces, placeholders (against the error's args) and styles."""
    parts, text, i, message = [], "", 0, error.message
    while i < len(message):
        char = message[i]
        if message.startswith("{{", i) or message.startswith("}}", i):
            text += char
            i += 2
        elif char == "{":
            end = message.find("}", i)
            name = message[i + 1:end] if end != -1 else None
            if name is None or "{" in name:
                where.fail("key 'message': unbalanced '{' at character %d (write '{{' for a literal brace)" % i)
            name, style = placeholder_style(name)
            styles = ", ".join("%s for %s placeholders" % (s, " or ".join(types))
                               for s, types in profile_loader.STYLES.items())
            if style and style not in profile_loader.STYLES:
                where.fail("key 'message': {%s:%s}: unknown style '%s' (styles: %s)" % (name, style, style, styles))
            if style and name in placeholder_types and placeholder_types[name] not in profile_loader.STYLES[style]:
                where.fail("key 'message': {%s:%s}: style '%s' is for %s placeholders, and %s is of type %s "
                           "(styles: %s)" % (name, style, style, " or ".join(profile_loader.STYLES[style]), name,
                                             placeholder_types[name], styles))
            if name not in error.args:
                where.fail("key 'message': placeholder {%s} is not supplied by the C side for this error "
                           "(args: %s)" % (name, ", ".join(error.args) or "none"))
            parts += [text, name + (":" + style if style else "")]
            text, i = "", end + 1
        elif char == "}":
            where.fail("key 'message': unbalanced '}' at character %d (write '}}' for a literal brace)" % i)
        else:
            text += char
            i += 1
    parts.append(text)
    return parts


# Generated C names that spec entries must not take (the enum sentinels and table sizes).
RESERVED = {
    "placeholder": {"COUNT"}, "platform": {"COUNT"}, "stream convention": {"COUNT"},
    "memory kind": {"KIND_COUNT"}, "exception kind": {"COUNT"}, "flag": {"COUNT"},
    "device type": {"TYPE_COUNT"}, "dtype code": {"CODE_COUNT"},
}


def _check_reserved(where, what, c_name):
    if c_name in RESERVED[what]:
        where.fail("the %s name gives the C name %s, which dlmap reserves for a table size" % (what, c_name))

