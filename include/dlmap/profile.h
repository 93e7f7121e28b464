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

/* The profile's settings, one field per row of the profile schema (codegen/profile_settings.py): the fields, each with
 * its YAML key and meaning, are DLMAP_PROFILE_INFO_FIELDS in <dlmap/generated/dlmap_spec.h>, as are the
 * DLMAP_ASK_KEYWORD_* and DLMAP_DEVICE_CLAIM_* bits of ask_keywords and device_claims. The per-device-type tables are
 * read with dlmap_profile_device_policy, the other lists with the functions below. */
typedef struct dlmap_profile_info {
  DLMAP_PROFILE_INFO_FIELDS
} dlmap_profile_info;

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
