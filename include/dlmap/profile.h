/* dlmap public API — the profile in force: the exchange policy this build was generated with (a file under spec/profiles/),
 * as export, import, __dlpack_device__, the Python binding and the CLI read it. Included by <dlmap/dlmap.h>, after
 * exchange.h; the same conventions apply (static strings, nothing allocates). */
#ifndef DLMAP_PROFILE_H_
#define DLMAP_PROFILE_H_

#ifndef DLMAP_DLMAP_H_
#error "include <dlmap/dlmap.h>, which includes this header"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* export.version_gating: which values a tensor of the negotiated version may carry. */
typedef enum dlmap_version_gating {
  DLMAP_GATING_STRICT = 0, /* every device type, dtype and flag expressible in the negotiated version */
  DLMAP_GATING_KNOWN = 1   /* a legacy export carries any value the spec knows (JAX and PyTorch send fp8 so) */
} dlmap_version_gating;

/* export.stream: what a stream value the device type's convention forbids does. */
typedef enum dlmap_stream_policy {
  DLMAP_STREAM_POLICY_VALIDATE = 0,    /* stream_invalid */
  DLMAP_STREAM_POLICY_PASS_THROUGH = 1, /* accepted; the host waits for the producer instead (JAX: unchecked) */
  DLMAP_STREAM_POLICY_NONE_ONLY = 2     /* any stream but None: stream_not_none, on every device type */
} dlmap_stream_policy;

/* import.request: how a Python consumer calls a producer's __dlpack__. */
typedef enum dlmap_import_request_style {
  DLMAP_REQUEST_VERSIONED_FIRST = 0, /* max_version (with dl_device, copy), then a plain call for old producers */
  DLMAP_REQUEST_LEGACY = 1           /* __dlpack__(stream=…) only; only legacy capsules are accepted (JAX) */
} dlmap_import_request_style;

/* arguments.max_version: how the Python binding reads __dlpack__'s max_version. */
typedef enum dlmap_max_version_reading {
  DLMAP_MAX_VERSION_PAIR = 0,           /* a tuple or list of two integers, else argument_type_max_version */
  DLMAP_MAX_VERSION_TUPLE_MAJOR = 1,    /* a tuple of two items, else argument_type_max_version; item 0 read as a C
                                         * long by Python's own conversion (its errors propagate); the minor unread */
  DLMAP_MAX_VERSION_SUBSCRIPT_MAJOR = 2 /* max_version[0], compared with each range's major by Python's < (its
                                         * errors propagate); nothing else read */
} dlmap_max_version_reading;

/* The profile's settings; the per-device-type tables are read with dlmap_device_policy. */
typedef struct dlmap_profile_info {
  const char *name;                    /* "jax" */
  const char *doc;
  /* export */
  bool dl_device_own_type;             /* the array's own device type is a valid dl_device even when not listed */
  bool dl_device_falsy_is_none;        /* dl_device=(0, id) means dl_device=None (device type 0 is falsy) */
  dlmap_struct_kind absent_struct;     /* what max_version=None gets */
  dlmap_version_gating gating;
  bool legacy_drops_read_only;         /* a read-only array in a legacy tensor: exported without the flag */
  dlmap_stream_policy stream;
  /* __dlpack_device__: the error for a platform no rule matches */
  int32_t dlpack_device_otherwise;
  /* import */
  dlmap_import_request_style request;
  bool host_stream_none;               /* types whose stream convention is `none` are asked with stream=None */
  dlmap_layout_policy view_layout;     /* strides a view may have */
  bool other_layouts_refused;          /* other strides: refused even with a copy (else copied) */
  uint64_t alignment;                  /* bytes the first element needs for a view (0: none), else a copy */
  bool whole_bytes;                    /* dtypes whose bits are not a multiple of 8 are refused */
  bool scalar;                         /* lanes != 1 is refused */
  /* export, optional keys (issue 27) */
  bool stamp_fixed;                    /* export.stamp "M.m": every versioned tensor is stamped stamp, else negotiated */
  dlmap_version stamp;                 /* with stamp_fixed: the version; else {0, 0} */
  bool host_id_zero;                   /* export.dl_device.host_id zero: a host-memory dl_device id other than 0 is
                                          export_host_id_not_zero (else the host is one device whatever its id) */
  /* import.ask, import.legacy_read_only (optional keys; their defaults are the behaviour before them) */
  dlmap_version ask_max_version;       /* the max_version a versioned_first request sends (default: the newest) */
  bool ask_retry_any_type_error;       /* any TypeError of the versioned call gets a plain retry; false: only when
                                        * dl_device and copy are None (else it propagates) */
  bool ask_stream;                     /* from_dlpack takes stream= (false: the keyword is a TypeError) */
  bool legacy_import_read_only;        /* a view of a legacy (unversioned) tensor's memory is read-only */
  bool device_query_first;             /* import.device_query: __dlpack_device__ is asked (and required) first;
                                        * false: never asked, and a producer needs only __dlpack__ */
  bool device_report_stream_only;      /* import.device_query capsule: __dlpack_device__'s answer only chooses the
                                        * stream (none for a type the profile does not import from); the tensor's
                                        * own device decides (else the report is checked and weighed at import) */
  uint32_t ask_keywords;               /* import.ask.keywords: DLMAP_ASK_KEYWORD_* bits passed on every versioned
                                        * call, None included; the others only when they carry a value */
  bool refused_capsule_left;           /* import.refused_capsule leave: a capsule import refuses keeps its name and
                                        * its destructor runs the deleter (else: renamed used_*, deleter run) */
  /* import allow-lists (optional keys; their defaults are the behaviour before them) */
  bool import_dtypes_listed;           /* import.dtypes: only the (code, bits) dlmap_profile_import_dtype_allowed
                                        * lists are imported (dtype_not_imported); false: any */
  bool device_names_listed;            /* import.device_names: from_dlpack's device= takes only the names
                                        * dlmap_profile_device_name_at lists; false: every device type's name */
  bool device_tuples;                  /* import.device_tuples: device= takes a (device_type, device_id) tuple */
  bool unknown_flags_ignored;          /* import.unknown_flags ignore: flag bits the spec does not know are dropped
                                        * from an imported versioned tensor (else flags_unknown) */
  bool max_version_negative_zero;      /* export.max_version.negative zero: a negative major or minor of __dlpack__'s
                                        * max_version reads as 0 (the ranges decide); false: invalid_argument */
  bool flag_is_copied;                 /* export.flag_is_copied: a copy export makes sets IS_COPIED in a versioned
                                        * tensor (false: never set, PyTorch) */
  bool stream_no_sync;                 /* export.stream_no_sync: stream=-1 (no synchronisation) is accepted on every
                                        * device type, even where the stream convention allows only None */
  /* import gates (optional keys; their defaults are the behaviour before them) */
  dlmap_version_gating import_gating;  /* import.version_gating: STRICT, a versioned tensor's device type, dtype and
                                        * flags must be in its stamped version; KNOWN: any the spec knows */
  bool negative_strides_refused;       /* import.strides.negative refuse: a negative stride that reaches an element
                                        * is strides_negative (else accepted) */
  bool capsule_arguments_refused;      /* import.capsule_arguments refuse: from_dlpack(capsule, device=, copy=) with
                                        * either not None is capsule_with_arguments (else the usual path) */
  bool dtype_errors_per_field;         /* import.dtype_errors per_field: a dtype import.dtypes refuses is
                                        * dtype_code_not_imported, dtype_bits_not_imported or
                                        * dtype_lanes_not_imported, by the first field that fails (else always
                                        * dtype_not_imported) */
  bool copy_trust_producer;            /* import.copy_trust producer: a producer that was passed copy=True made the
                                        * copy, whatever its flags say (else only where it sets IS_COPIED) */
  bool scalar_dims_empty;              /* export.scalar_dims empty: a 0-d export's shape and strides point to
                                        * zero-length arrays (PyTorch); else both are NULL */
  bool copy_argument_truth;            /* export.copy_argument truth: __dlpack__'s copy is read by its truth value (a
                                        * str is still argument_type_copy; NumPy 2); else True, False, None or a
                                        * boolean scalar */
  bool dlpack_device_enum;             /* dlpack_device.enum: the Python __dlpack_device__ answers its device type as
                                        * a member of the module's DLDeviceType IntEnum (PyTorch; else a plain int) */
  dlmap_struct_kind absent_read_only_struct; /* export.max_version.absent_read_only: what max_version=None gets for a
                                        * read-only array (default absent_struct; PyTorch's ReadOnlyTensorWrapper) */
  /* arguments: how the Python binding reads __dlpack__'s arguments (optional keys; defaults the behaviour before) */
  dlmap_max_version_reading max_version_reading;
  bool dl_device_c_ints;               /* arguments.dl_device tuple_c_ints: a 2-tuple's items are read as C ints by
                                        * Python's own conversion, its errors propagating (else the catalogue's) */
  bool read_only_argument;             /* arguments.read_only truth: __dlpack__ takes read_only=, and a true value
                                        * exports the array as read-only (else no such keyword) */
  bool signature_errors_catalogue;     /* arguments.signature_errors catalogue: a call to __dlpack__ or from_dlpack
                                        * that binds wrongly raises argument_positional_count, _keyword_unknown,
                                        * argument_missing or argument_given_twice (else CPython's own texts) */
  const char *method_owner;            /* arguments.method_owner: __dlpack__ is worded "owner.__dlpack__", self
                                        * counted (NULL: "__dlpack__", no self) */
  const char *from_dlpack_object;      /* arguments.from_dlpack_object: from_dlpack's first parameter ("x") */
  bool device_index_colon;             /* import.device_index colon: from_dlpack's device= name may end in ":N",
                                        * device id N (else a name is device 0) */
  const char *models;                  /* models: the peer releases the profile reproduces ("numpy >= 2.5") */
  uint32_t device_claims;              /* import.device_claims: DLMAP_DEVICE_CLAIM_* bits, the claims an import checks
                                        * against the memory where the platform's runtime is loaded (0: none) */
} dlmap_profile_info;

/* import.device_claims, as bits of dlmap_profile_info.device_claims (codegen/profile_device_claims.py CLAIMS order). */
#define DLMAP_DEVICE_CLAIM_HOST_TYPES 0x1u   /* a host-side device type over device-only memory */
#define DLMAP_DEVICE_CLAIM_DEVICE_TYPES 0x2u /* a device-memory type over memory the runtime does not know */
#define DLMAP_DEVICE_CLAIM_DEVICE_ID 0x4u    /* device or managed memory of another device than the tensor's id */

/* import.ask.keywords, as bits of dlmap_profile_info.ask_keywords (codegen/spec_profile.py ASK_KEYWORDS order). */
#define DLMAP_ASK_KEYWORD_MAX_VERSION 0x1u
#define DLMAP_ASK_KEYWORD_STREAM 0x2u
#define DLMAP_ASK_KEYWORD_DL_DEVICE 0x4u
#define DLMAP_ASK_KEYWORD_COPY 0x8u

/* import.ask.retry as a list: the DLMAP_ASK_KEYWORD_* bit the index-th retry after a TypeError drops; 0 past the end
 * (and always where the profile lists none: one plain retry, as ask_retry_any_type_error allows). */
uint32_t dlmap_profile_ask_retry_drop_at(size_t index);

/* The DLMAP_ASK_KEYWORD_* bit of the index-th keyword a versioned __dlpack__ call passes (import.ask.keywords in the
 * order listed, then the others in bit order); 0 past the last. */
uint32_t dlmap_profile_ask_keyword_at(size_t index);

/* The profile this library was generated with. Never NULL. */
const dlmap_profile_info *dlmap_profile_current(void);

/* import.dtypes: whether a tensor of this dtype may be imported (always true when the profile lists none). A listed
 * (code, bits) takes any lanes (import.scalar's concern) unless its entry names the one lane count it takes. */
bool dlmap_profile_import_dtype_allowed(DLDataType dtype);

/* import.dtypes: whether an entry of this code names its lanes ({name, lanes}); import.scalar then leaves the code's
 * lanes to the list (PyTorch's float4_e2m1fn pair). */
bool dlmap_profile_import_lanes_listed(uint8_t code);

/* import.dtypes: raises the error a dtype dlmap_profile_import_dtype_allowed refuses gets (import.dtype_errors, with
 * import.dtype_code_names' label for its code) and returns its status. */
int32_t dlmap_profile_import_dtype_refuse(DLDataType dtype, dlmap_error *err);

/* import.device_names: the index-th name from_dlpack's device= takes and its device type; NULL past the end (and
 * always when device_names_listed is false). */
typedef struct dlmap_device_name {
  const char *name;
  int32_t device_type;
} dlmap_device_name;

const dlmap_device_name *dlmap_profile_device_name_at(size_t index);

/* import.device_names_without_type: whether the len bytes at name (compared exactly) are a device name the profile's
 * framework knows and no DLPack device type describes (import_device_without_type); false when it lists none. */
bool dlmap_profile_device_name_without_type(const char *name, size_t len);

/* What the profile does with one device type. */
typedef struct dlmap_device_policy {
  bool export_target;   /* __dlpack__'s dl_device may name it (else export_unsupported_device_type) */
  bool export_source;   /* an array on it may be exported (else source_not_exchangeable) */
  bool import_accepted; /* a tensor on it may be imported (else import_unsupported_device_type) */
} dlmap_device_policy;

/* The profile's row for a device type; all false for a value the spec does not define. */
dlmap_device_policy dlmap_profile_device_policy(int32_t device_type);

/* The struct an export answers max_version with (has_max_version false: None). Errors: the profile's error for the
 * range (max_version_too_old by default), with min_version and max_version. */
int32_t dlmap_profile_struct_lookup(bool has_max_version, dlmap_version max_version, dlmap_struct_kind *out,
                                 dlmap_error *err);

/* device_texts: how an error message's {device:text} prints a device of this type ("{id}" stands for its id);
 * NULL where the profile words none (the device prints as (kDLCUDA, 0)). */
const char *dlmap_profile_device_text(int32_t device_type);

/* The index-th max_version range's upper bound (`until`, exclusive), ascending: false past the last bounded range. */
bool dlmap_profile_range_until_at(size_t index, dlmap_version *until);

/* __dlpack_device__ rules, in order (first match wins): platform, which memory they match, and the device type, or
 * the error (device_type -1). index 0 …; NULL past the end. */
typedef enum dlmap_memory_match {
  DLMAP_MATCH_ANY = 0,      /* pinned or not */
  DLMAP_MATCH_PINNED = 1,   /* pinned host memory */
  DLMAP_MATCH_UNPINNED = 2  /* anything else (device memory) */
} dlmap_memory_match;

typedef struct dlmap_device_rule {
  dlmap_platform platform;
  dlmap_memory_match memory;
  int32_t device_type;      /* -1 with an error */
  int32_t error;            /* DLMAP_OK with a device type */
} dlmap_device_rule;

const dlmap_device_rule *dlmap_profile_device_rule_at(size_t index);

/* Where an error's kind, text and status word come from: for each, the name of the profile that replaced the
 * catalogue's (spec/errors.yaml) with its own, which is this build's profile or one it `extends:` ("jax"), or NULL
 * where the catalogue's own applies. All NULL for a code the profile leaves alone, or does not know. */
typedef struct dlmap_error_origin {
  const char *kind;    /* the exception kind */
  const char *message; /* the message text */
  const char *status;  /* the status word shown before the message */
} dlmap_error_origin;

dlmap_error_origin dlmap_profile_error_origin(int32_t code);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLMAP_PROFILE_H_ */
