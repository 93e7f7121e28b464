# dlmap codegen — the profile schema: every profile key declared once, as data. The loader (spec_profile.py) loops
# over these rows, emit.py writes the C struct's fields (dlmap_spec.h) and their designated initialiser (profile.inc)
# from them, emit_docs.py the docs' settings table (docs/devices.md), and the conformance checker (python/check, which ships a
# copy of this file) reads a profile's settings through them, defaults included.
"""The rows of the profile schema. Plain data, importable without the rest of codegen.

A Setting is one scalar key of the `profile:` mapping:
  key       its YAML path under `profile:` ("export.dl_device.own_type");
  type      how its value is read: bool, int, text (a non-empty string), word (a lower-case word), identifier (a
            Python identifier), words (one of `words`' keys), error (an error id of the catalogue, which must need no
            argument but `error_args`), or one of CUSTOM_TYPES, whose reading spec_profile.py defines;
  default   the value an absent key has, written as YAML would write it (REQUIRED: the key must be given);
            default_from names another setting whose value it takes instead;
  attr      the Profile attribute the loader sets (the resolved value: a word, a bool, a spec.Version, …);
  field     the C field(s) of dlmap_profile_info (include/dlmap/profile.h) it fills, with c_type their C type(s): a
            string, or a tuple where one setting fills several fields (then each word's C value is a tuple too);
  words     for type words: each word's C value;
  doc       what it means, for the struct's comment and the schema page.
A Table is a key whose value is a list or mapping with rows of its own (profile.inc's other row kinds); the schema
names it so that the loader knows every key and the page documents it.
"""

REQUIRED = object()  # a Setting's default: no default, the key must be given

# The types whose reading (and C value) spec_profile.py and emit.py define by name, beyond the plain ones.
CUSTOM_TYPES = ("stamp", "version_or_current", "retry", "keywords", "claims", "dtype_list", "device_name_map")
PLAIN_TYPES = ("bool", "int", "text", "word", "identifier", "words", "error")


class Setting:
    def __init__(self, key, type, attr, field, c_type, doc, default=REQUIRED, words=None, default_from=None,
                 error_args=(), low=None, high=None):
        self.key, self.type, self.attr, self.field, self.c_type, self.doc = key, type, attr, field, c_type, doc
        self.default, self.words, self.default_from, self.error_args = default, words, default_from, error_args
        self.low, self.high = low, high
        self.path = tuple(key.split("."))

    @property
    def required(self):
        return self.default is REQUIRED and self.default_from is None

    def fields(self):
        """(C field, C type) pairs, in order."""
        if isinstance(self.field, tuple):
            return list(zip(self.field, self.c_type))
        return [(self.field, self.c_type)]

    def choices(self):
        return tuple(self.words) if self.words else ()


class Table:
    def __init__(self, key, doc, required=True):
        self.key, self.doc, self.required = key, doc, required
        self.path = tuple(key.split("."))


def _bools(first, second, true):
    """Two words in the order the schema lists them, `true` the one whose C value is true."""
    return {w: "true" if w == true else "false" for w in (first, second)}


def _enum(prefix, words):
    return {w: prefix + w.upper() for w in words}


STRUCTS = {"legacy": "DLMAP_STRUCT_LEGACY", "versioned": "DLMAP_STRUCT_VERSIONED"}
GATINGS = _enum("DLMAP_GATING_", ("strict", "known"))

SETTINGS = (
    Setting("name", "word", "name", "name", "const char *", "the profile's name (printed by `dlmap devices` and "
            "`dlmap explain`; a child's must not be its parent's)"),
    Setting("doc", "text", "doc", "doc", "const char *", "one paragraph: what the profile reproduces"),
    Setting("models", "text", "models", "models", "const char *",
            "the peer releases the profile reproduces, \"peer op version[, op version]\" with ops >=, >, <=, <, == "
            "(\"numpy >= 2.5\"; codegen/profile_models.py): printed by `dlmap --version` and profile_models(); the "
            "differential tests compare a peer only with the profile whose range holds its release"),
    # export
    Setting("export.dl_device.own_type", "words", "own_type", "dl_device_own_type", "bool",
            "accept: the array's own device type is a valid dl_device even when `accept` does not list it",
            words=_bools("accept", "listed", "accept")),
    Setting("export.dl_device.falsy_type", "words", "falsy_type", "dl_device_falsy_is_none", "bool",
            "none: dl_device=(0, id) means dl_device=None (device type 0 is falsy); refuse: it is checked as given",
            words=_bools("none", "refuse", "none")),
    Setting("export.dl_device.host_id", "words", "host_id", "host_id_zero", "bool",
            "zero: a dl_device of a host-memory type (cpu backend) whose id is not 0 is export_host_id_not_zero, "
            "unless it is the array's own device; any: the host is one device whatever its id",
            default="any", words={"any": "false", "zero": "true"}),
    Setting("export.max_version.absent", "words", "absent_struct", "absent_struct", "dlmap_struct_kind",
            "the struct max_version=None gets", words=STRUCTS),
    Setting("export.max_version.absent_read_only", "words", "absent_read_only", "absent_read_only_struct",
            "dlmap_struct_kind", "the struct max_version=None gets for a read-only array (only versioned may differ "
            "from absent: PyTorch's ReadOnlyTensorWrapper asks for (1, 0))",
            words=STRUCTS, default_from="export.max_version.absent"),
    Setting("export.max_version.negative", "words", "max_version_negative", "max_version_negative_zero", "bool",
            "refuse: a negative major or minor of max_version is invalid_argument; zero: it reads as 0 and the "
            "ranges decide (NumPy)", default="refuse", words=_bools("refuse", "zero", "zero")),
    Setting("export.version_gating", "words", "gating", "gating", "dlmap_version_gating",
            "strict: every device type, dtype and flag must be expressible in the negotiated version; known: a legacy "
            "export carries any value the spec knows (JAX, PyTorch: fp8)", words=GATINGS),
    Setting("export.legacy_read_only", "words", "legacy_read_only", "legacy_drops_read_only", "bool",
            "a read-only array asked for a legacy tensor (which cannot say so): refused, or exported without the flag",
            words=_bools("refuse", "drop", "drop")),
    Setting("export.stream", "words", "stream", "stream", "dlmap_stream_policy",
            "validate: a stream is checked by the device type's stream convention (stream_invalid); pass_through: a "
            "value the convention forbids is accepted and the host waits for the producer instead; none_only: every "
            "stream but None is stream_not_none, on every device type",
            words=_enum("DLMAP_STREAM_POLICY_", ("validate", "pass_through", "none_only"))),
    Setting("export.stamp", "stamp", "stamp", ("stamp_fixed", "stamp"), ("bool", "dlmap_version"),
            "the version every versioned tensor is stamped with: negotiated, min(max_version, current); or \"M.m\", "
            "always that version, a versioned one the spec lists, of no newer major than the start of any versioned "
            "max_version range", default="negotiated"),
    Setting("export.flag_is_copied", "bool", "flag_is_copied", "flag_is_copied", "bool",
            "a copy an export makes (copy=True, or to another device) sets IS_COPIED in a versioned tensor; false: "
            "never set (PyTorch)", default=True),
    Setting("export.stream_no_sync", "bool", "stream_no_sync", "stream_no_sync", "bool",
            "true: a stream value some convention reads as no_sync (-1) is accepted on every device type, no "
            "synchronisation, even where the device type's convention allows only None (PyTorch)", default=False),
    Setting("export.scalar_dims", "words", "scalar_dims", "scalar_dims_empty", "bool",
            "a 0-d tensor's shape and strides: NULL, or pointers to zero-length arrays (PyTorch)",
            default="null", words=_bools("null", "empty", "empty")),
    Setting("export.byte_offset", "words", "byte_offset", "byte_offset_folded", "bool",
            "keep: a view's byte_offset is the array's; fold: where data is an address (a device type a dlmap backend "
            "serves), data points at the first element and byte_offset is 0, for consumers that require it "
            "(NVIDIA/cutlass#3450, pytorch/pytorch#193213; JAX and NumPy export so); handle-based memory (OpenCL, Metal) "
            "keeps it either way", default="keep", words=_bools("keep", "fold", "fold")),
    Setting("export.copy_argument", "words", "copy_argument", "copy_argument_truth", "bool",
            "strict: __dlpack__'s copy is True, False, None or a boolean scalar (else argument_type_copy); truth: "
            "None, or any other object but a str by its truth value (NumPy 2)",
            default="strict", words=_bools("strict", "truth", "truth")),
    # __dlpack_device__
    Setting("dlpack_device.otherwise", "error", "otherwise", "dlpack_device_otherwise", "int32_t",
            "the error for a platform no rule matches (given platform)", error_args=("platform",)),
    Setting("dlpack_device.enum", "bool", "device_enum", "dlpack_device_enum", "bool",
            "the Python __dlpack_device__ answers the device type as a member of the module's DLDeviceType IntEnum "
            "(the spec's enumerators), not a plain int (PyTorch)", default=False),
    # import
    Setting("import.request", "words", "request", "request", "dlmap_import_request_style",
            "how the Python binding calls __dlpack__: versioned_first asks with max_version (and dl_device, copy), "
            "then falls back to a plain call; legacy passes stream only and accepts only legacy capsules",
            words=_enum("DLMAP_REQUEST_", ("versioned_first", "legacy"))),
    Setting("import.host_stream", "words", "host_stream", "host_stream_none", "bool",
            "none: device types whose stream convention is `none` are asked with stream=None; as_given: as passed",
            words=_bools("none", "as_given", "none")),
    Setting("import.strides.view", "words", "view_layout", "view_layout", "dlmap_layout_policy",
            "the strides a view may have", words=_enum("DLMAP_LAYOUT_", ("any", "compact_permutation", "row_major"))),
    Setting("import.strides.otherwise", "words", "otherwise_layout", "other_layouts_refused", "bool",
            "other strides are copied, or refused even with copy=True (strides_not_compact)",
            words=_bools("copy", "refuse", "refuse")),
    Setting("import.strides.negative", "words", "negative_strides", "negative_strides_refused", "bool",
            "refuse: a tensor with elements and a negative stride on a dimension of more than one element is "
            "strides_negative, whatever copy says", default="accept", words=_bools("accept", "refuse", "refuse")),
    Setting("import.alignment", "int", "alignment", "alignment", "uint64_t",
            "bytes the first element must be aligned to for a view (0: none; a power of two); else a copy",
            low=0, high=1 << 30),
    Setting("import.whole_bytes", "bool", "whole_bytes", "whole_bytes", "bool",
            "refuse dtypes whose bits are not a multiple of 8 (dtype_bits_not_whole_bytes)"),
    Setting("import.scalar", "bool", "scalar", "scalar", "bool", "refuse lanes != 1 (dtype_lanes_not_one)"),
    Setting("import.ask.max_version", "version_or_current", "ask_max_version", "ask_max_version", "dlmap_version",
            "the max_version a versioned_first call sends: current (abi.current) or a listed version at or after "
            "abi.versioned", default="current"),
    Setting("import.ask.retry", "retry", "ask_retry", "ask_retry_any_type_error", "bool",
            "which TypeError of the versioned call gets a plain __dlpack__() retry: any_type_error, or "
            "when_defaults (only when dl_device and copy are None, else it propagates: NumPy); or a list of keywords "
            "(max_version among them): after any TypeError the call is made again without the next one listed, one "
            "retry per entry, the last call's TypeError propagating (PyTorch)", default="any_type_error"),
    Setting("import.ask.stream", "bool", "ask_stream", "ask_stream", "bool",
            "from_dlpack has a stream= parameter (false: stream= is a TypeError and no stream is passed)",
            default=True),
    Setting("import.ask.keywords", "keywords", "ask_keywords", "ask_keywords", "uint32_t",
            "the keywords (max_version, stream, dl_device, copy) the versioned call passes every time, None included, "
            "in the order listed (the others only when they carry a value); must list max_version: "
            "DLMAP_ASK_KEYWORD_* bits", default=["max_version", "stream"]),
    Setting("import.legacy_read_only", "bool", "legacy_read_only_import", "legacy_import_read_only", "bool",
            "a view of a legacy (unversioned) tensor's memory is read-only, as the READ_ONLY flag would make it "
            "(NumPy)", default=False),
    Setting("import.device_query", "words", "device_query", ("device_query_first", "device_report_stream_only"),
            ("bool", "bool"),
            "first: __dlpack_device__ is called (and required) before __dlpack__, its type checked against `accept`; "
            "never: only __dlpack__ is needed and called (needs ask.stream: false); capsule: called and required "
            "first, but its answer only chooses the stream, the capsule's own device decides (PyTorch)",
            default="first", words={"first": ("true", "false"), "never": ("false", "false"),
                                    "capsule": ("true", "true")}),
    Setting("import.refused_capsule", "words", "refused_capsule", "refused_capsule_left", "bool",
            "a capsule whose tensor import refuses: consume renames it used_* and runs the deleter; leave gives it "
            "its name back, unconsumed, and its destructor runs the deleter (NumPy)",
            default="consume", words=_bools("consume", "leave", "leave")),
    Setting("import.dtypes", "dtype_list", "import_dtypes", "import_dtypes_listed", "bool",
            "any, or the dtypes (the spec's dtype names or aliases, each its (code, bits)) a tensor may carry, others "
            "dtype_not_imported; an entry {name: dtype, lanes: N} takes that (code, bits) only with N lanes and "
            "exempts its code from `scalar` (PyTorch's float4_e2m1fn pair)", default="any"),
    Setting("import.dtype_errors", "words", "dtype_errors", "dtype_errors_per_field", "bool",
            "how a dtype `dtypes` refuses is told: one, dtype_not_imported; per_field, by the first field that "
            "fails: dtype_code_not_imported, dtype_bits_not_imported, dtype_lanes_not_imported (ATen)",
            default="one", words=_bools("one", "per_field", "per_field")),
    Setting("import.device_names", "device_name_map", "device_names", "device_names_listed", "bool",
            "any (every device type's name, spelling or alias), or {name: type}: the strings from_dlpack's device= "
            "takes, each a type `accept` lists; others import_device_not_understood", default="any"),
    Setting("import.device_tuples", "bool", "device_tuples", "device_tuples", "bool",
            "device= takes a (device_type, device_id) tuple; false: every value but None or a string is "
            "import_device_not_understood (NumPy)", default=True),
    Setting("import.device_index", "words", "device_index", "device_index_colon", "bool",
            "none: a device= name is device 0; colon: a name may end in \":N\", device id N (PyTorch: \"cuda:1\")",
            default="none", words=_bools("none", "colon", "colon")),
    Setting("import.unknown_flags", "words", "unknown_flags", "unknown_flags_ignored", "bool",
            "a versioned tensor's flag bits the spec does not know: flags_unknown (refuse), or dropped as if unset "
            "(ignore: NumPy)", default="refuse", words=_bools("refuse", "ignore", "ignore")),
    Setting("import.version_gating", "words", "import_gating", "import_gating", "dlmap_version_gating",
            "strict: a versioned tensor's device type, dtype and flags must be in the version it is stamped with; "
            "known: any the spec knows, whatever its stamp (PyTorch: fp8 at 1.0)", default="strict", words=GATINGS),
    Setting("import.capsule_arguments", "words", "capsule_arguments", "capsule_arguments_refused", "bool",
            "refuse: from_dlpack(capsule, device=..., copy=...) with either not None is capsule_with_arguments, before "
            "either is read, the capsule untouched (PyTorch)", default="accept", words=_bools("accept", "refuse", "refuse")),
    Setting("import.copy_trust", "words", "copy_trust", "copy_trust_producer", "bool",
            "from_dlpack(copy=True) whose answering __dlpack__ was passed copy=True: flag makes no second copy only "
            "where the tensor says IS_COPIED; producer never does (PyTorch)",
            default="flag", words=_bools("flag", "producer", "producer")),
    Setting("import.device_claims", "claims", "device_claims", "device_claims", "uint32_t",
            "where the platform's runtime is loaded, which claims of a tensor an import checks against what the "
            "runtime says of its data: host_types (a host-side type over device-only memory), device_types (a "
            "device-memory type over memory the runtime does not know), device_id (memory of another device); none: "
            "trust the producer. DLMAP_DEVICE_CLAIM_* bits",
            default=["host_types", "device_types", "device_id"]),
    # arguments: how the Python binding reads __dlpack__'s arguments
    Setting("arguments.max_version", "words", "arg_max_version", "max_version_reading", "dlmap_max_version_reading",
            "pair: a tuple or list of two integers (else argument_type_max_version); tuple_major: a tuple of two "
            "items whose first is read as a C long by Python's own conversion, the minor never read (NumPy); "
            "subscript_major: max_version[0] compared with each range's major by Python's <, nothing else read "
            "(PyTorch). Both major-only readings need every `until` of minor 0, no `error` range and a fixed stamp",
            default="pair", words=_enum("DLMAP_MAX_VERSION_", ("pair", "tuple_major", "subscript_major"))),
    Setting("arguments.dl_device", "words", "arg_dl_device", "dl_device_c_ints", "bool",
            "pair: a tuple of two integers (argument_length_dl_device for another length, else "
            "argument_type_dl_device); tuple_c_ints: the same for a non-tuple or a wrong length, then both items read "
            "as C ints by Python's own conversion, its errors propagating (NumPy)",
            default="pair", words=_bools("pair", "tuple_c_ints", "tuple_c_ints")),
    Setting("arguments.read_only", "words", "arg_read_only", "read_only_argument", "bool",
            "absent: __dlpack__ takes no read_only keyword; truth: __dlpack__(read_only=x) exports the array as "
            "read-only where x is true (PyTorch)", default="absent", words=_bools("absent", "truth", "truth")),
    Setting("arguments.signature_errors", "words", "signature_errors", "signature_errors_catalogue", "bool",
            "builtin: a call of __dlpack__ or from_dlpack that binds wrongly gets CPython's own text; catalogue: "
            "argument_positional_count, argument_keyword_unknown, argument_missing or argument_given_twice",
            default="builtin", words=_bools("builtin", "catalogue", "catalogue")),
    Setting("arguments.method_owner", "identifier", "method_owner", "method_owner", "const char *",
            "with catalogue: __dlpack__ is worded as this Python class's method, \"word.__dlpack__\", self counted "
            "(PyTorch: Tensor); absent (NULL): \"__dlpack__\", no self", default=None),
    Setting("arguments.from_dlpack_object", "identifier", "from_dlpack_object", "from_dlpack_object", "const char *",
            "the name of from_dlpack's first parameter (NumPy: obj, PyTorch: ext_tensor)", default="x"),
)

TABLES = (
    Table("extends", "name: a shipped profile (spec/profiles/, by its `name`) this one starts from; then only the keys "
          "that change are written, merged over it: mappings key by key, lists and scalars whole, `errors:` entries "
          "by id field by field (codegen/profile_extends.py); `name` and `doc` are still required", required=False),
    Table("export.dl_device.accept", "[types] | served: the device types dl_device may name (served: every type "
          "whose platform has a dlmap backend)"),
    Table("export.sources", "[types] | any: the device types an array may be exported from (others: "
          "source_not_exchangeable)"),
    Table("export.max_version.ranges", "[{until: \"M.m\", struct: legacy | versioned} | {until, error: id}, …, "
          "{struct: …}]: ascending, the last without until; an error gets min_version and max_version"),
    Table("dlpack_device.rules", "derived | [{platform, memory: host_pinned | other | any, device_type | error}]: "
          "first match wins"),
    Table("import.accept", "[types] | served: the device types a tensor may be on (others: "
          "import_unsupported_device_type)"),
    Table("import.dtype_code_names", "{code: label}: dtype_bits_not_imported's {code_label} per code enumerator",
          required=False),
    Table("import.device_names_without_type", "[names]: device= names the framework knows that no DLPack device "
          "type describes (import_device_without_type; PyTorch: meta)", required=False),
    Table("device_texts", "{type: text}: how {device:text} prints a device of each listed type, \"{id}\" its id",
          required=False),
    Table("errors", "[{id, kind, message, status, when}]: per catalogue error, what this profile raises instead: an "
          "exception kind, the exact text with the error's own placeholders (styles: {version:tuple} (0, 5), "
          "{shape:packed} 2,3,4, {device:text} the device_texts entry, {version:major} 2, {takes:s} and {given:was} "
          "plurals), a status word shown as \"WORD: \", and when it happens (`dlmap explain`)", required=False),
)


assert all(s.type in PLAIN_TYPES + CUSTOM_TYPES for s in SETTINGS), "a setting of an unknown type"
assert len({s.key for s in SETTINGS + TABLES}) == len(SETTINGS) + len(TABLES), "a key declared twice"


def setting(key):
    """The Setting of a YAML path ("export.stamp")."""
    return next(s for s in SETTINGS if s.key == key)


def keys_under(path):
    """{key: required} for the keys allowed directly under a mapping path (a tuple; () is `profile:` itself):
    settings, tables and the mappings that hold them. A mapping is required when anything under it is."""
    found = {}
    for row in SETTINGS + TABLES:
        if len(row.path) > len(path) and row.path[:len(path)] == path:
            key = row.path[len(path)]
            found[key] = found.get(key, False) or row.required
    return found


def raw(body, row):
    """The value a profile mapping (`profile:`'s body) gives a row, or the row's default where absent; REQUIRED where a
    required key is absent."""
    node = body
    for part in row.path:
        if not isinstance(node, dict) or part not in node:
            if getattr(row, "default_from", None):
                return raw(body, setting(row.default_from))
            return getattr(row, "default", REQUIRED) if isinstance(row, Setting) else REQUIRED
        node = node[part]
    return node
