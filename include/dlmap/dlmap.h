/* dlmap public API — the hand-written C interface over the tables generated from the YAML spec.
 *
 * Conventions
 * - Functions that can fail return a dlmap_status (DLMAP_OK is 0) and write results through
 *   out-parameters. They take an optional dlmap_error (NULL is fine) that receives the error's kind,
 *   id and formatted message in caller-provided memory. No error path allocates.
 * - Every string dlmap returns has static storage; the caller never frees anything here.
 * - Device types are int32_t: producers send values this build has never seen, and those are a
 *   clean error (or NULL / false), never undefined behaviour.
 * - Nothing in this header allocates or keeps state; every function is safe to call from any thread.
 *
 * - One lookup vocabulary (include/dlmap/NAMING.md): _find(key) → row or NULL, _at(index) → row or NULL,
 *   _lookup(key, &out, err) → status, _parse(text, len, &out) → bool, _name(value) → static string.
 *
 * Compiles as C99, C11 and C++ with -Wall -Wextra -Werror -pedantic.
 */
#ifndef DLMAP_DLMAP_H_
#define DLMAP_DLMAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dlmap/dlpack_compat.h"
#include "dlmap/generated/dlmap_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dlmap_error; /* defined under "errors" below */

/* ---- this library's own version (not a DLPack version) ------------------------------------------ */

/* The version of this header; the distributable archive's pkg-config file reads its version from these lines. */
#define DLMAP_VERSION_MAJOR 0
#define DLMAP_VERSION_MINOR 2
#define DLMAP_VERSION_PATCH 0

/* The version of the library linked in, "MAJOR.MINOR.PATCH": a program built against another header can tell. */
const char *dlmap_version_string(void);

/* ---- versions ---------------------------------------------------------------------------------- */

/* A DLPack version, major.minor (same layout as DLPackVersion). */
typedef struct dlmap_version {
  uint32_t major;
  uint32_t minor;
} dlmap_version;

/* Which managed-tensor struct a DLPack version exchanges. */
typedef enum dlmap_struct_kind {
  DLMAP_STRUCT_NONE = 0,      /* DLTensor only (0.1) or not a version dlmap knows */
  DLMAP_STRUCT_LEGACY = 1,    /* DLManagedTensor */
  DLMAP_STRUCT_VERSIONED = 2  /* DLManagedTensorVersioned */
} dlmap_struct_kind;

/* Negative, zero or positive as a is older than, equal to or newer than b. */
int dlmap_version_compare(dlmap_version a, dlmap_version b);

/* Whether the spec lists this exact version. */
bool dlmap_version_is_known(dlmap_version v);

/* The struct the spec says version v uses; for an unlisted minor of a known versioned major (a newer
 * producer), DLMAP_STRUCT_VERSIONED; otherwise DLMAP_STRUCT_NONE. */
dlmap_struct_kind dlmap_version_struct(dlmap_version v);

/* The version dlmap stamps on the tensors it produces (the spec's abi.current). */
dlmap_version dlmap_version_current(void);

/* A version the spec lists. */
typedef struct dlmap_version_info {
  dlmap_version version;
  dlmap_struct_kind structure; /* the struct it exchanges */
  const char *note;            /* what changed in it */
} dlmap_version_info;

/* Listed versions, oldest first: index 0 … DLMAP_VERSION_COUNT - 1; NULL past the end. */
const dlmap_version_info *dlmap_version_at(size_t index);

/* Whether a tensor of version v can carry the value: false for values the spec does not know or that
 * were introduced after v. */
bool dlmap_device_type_in_version(int32_t device_type, dlmap_version v);
bool dlmap_dtype_in_version(DLDataType dtype, dlmap_version v);
bool dlmap_flags_in_version(uint64_t flags, dlmap_version v);

/* One check for a whole tensor: device type, dtype and flags all expressible in version v, with the
 * catalogue error (device_type_not_in_version, dtype_not_in_version, flag_not_in_version,
 * flags_unknown, device_type_unknown, dtype_* validation errors) for the first that is not. */
int32_t dlmap_check_representable(int32_t device_type, DLDataType dtype, uint64_t flags, dlmap_version v,
                                  struct dlmap_error *err);

/* ---- errors ------------------------------------------------------------------------------------ */

/* Capacity of dlmap_error.message; longer messages are truncated with "..." and stay NUL-terminated. */
#define DLMAP_MESSAGE_CAPACITY 512

/* An error in caller-provided memory. */
typedef struct dlmap_error {
  int32_t code;           /* a dlmap_status; DLMAP_OK when no error */
  dlmap_error_kind kind;  /* the exception kind the spec gives the error */
  const char *id;         /* the stable id, e.g. "export_unsupported_device_type" (static) */
  char message[DLMAP_MESSAGE_CAPACITY];
} dlmap_error;

/* The type of a message argument; matches the spec's placeholder types. */
typedef enum dlmap_arg_type {
  DLMAP_ARG_TYPE_INT = 0,     /* int64_t, decimal */
  DLMAP_ARG_TYPE_UINT = 1,    /* uint64_t, decimal */
  DLMAP_ARG_TYPE_HEX = 2,     /* uint64_t, 0x… */
  DLMAP_ARG_TYPE_PTR = 3,     /* address, 0x… */
  DLMAP_ARG_TYPE_STR = 4,     /* NUL-terminated text; NULL prints as (null) */
  DLMAP_ARG_TYPE_VERSION = 5, /* major.minor */
  DLMAP_ARG_TYPE_INTS = 6,    /* list of int64_t, comma-separated; NULL prints as (null) */
  DLMAP_ARG_TYPE_DEVICE = 7   /* a DLDevice: (kDLCUDA, 0); styled (2, 0), or the profile's device text */
} dlmap_arg_type;

/* One named value for a message placeholder. Build it with the dlmap_arg_* helpers below. */
typedef struct dlmap_arg {
  dlmap_placeholder name;
  dlmap_arg_type type;
  union {
    int64_t i;
    uint64_t u;
    const void *p;
    const char *s;
    dlmap_version v;
    DLDevice d;
    struct {
      const int64_t *items;
      int32_t count;
    } list;
  } value;
} dlmap_arg;

static inline dlmap_arg dlmap_arg_int(dlmap_placeholder name, int64_t value) {
  dlmap_arg arg;
  arg.name = name;
  arg.type = DLMAP_ARG_TYPE_INT;
  arg.value.i = value;
  return arg;
}
static inline dlmap_arg dlmap_arg_uint(dlmap_placeholder name, uint64_t value) {
  dlmap_arg arg;
  arg.name = name;
  arg.type = DLMAP_ARG_TYPE_UINT;
  arg.value.u = value;
  return arg;
}
static inline dlmap_arg dlmap_arg_hex(dlmap_placeholder name, uint64_t value) {
  dlmap_arg arg;
  arg.name = name;
  arg.type = DLMAP_ARG_TYPE_HEX;
  arg.value.u = value;
  return arg;
}
static inline dlmap_arg dlmap_arg_ptr(dlmap_placeholder name, const void *value) {
  dlmap_arg arg;
  arg.name = name;
  arg.type = DLMAP_ARG_TYPE_PTR;
  arg.value.p = value;
  return arg;
}
static inline dlmap_arg dlmap_arg_str(dlmap_placeholder name, const char *value) {
  dlmap_arg arg;
  arg.name = name;
  arg.type = DLMAP_ARG_TYPE_STR;
  arg.value.s = value;
  return arg;
}
static inline dlmap_arg dlmap_arg_version(dlmap_placeholder name, dlmap_version value) {
  dlmap_arg arg;
  arg.name = name;
  arg.type = DLMAP_ARG_TYPE_VERSION;
  arg.value.v = value;
  return arg;
}
static inline dlmap_arg dlmap_arg_device(dlmap_placeholder name, DLDevice value) {
  dlmap_arg arg;
  arg.name = name;
  arg.type = DLMAP_ARG_TYPE_DEVICE;
  arg.value.d = value;
  return arg;
}
static inline dlmap_arg dlmap_arg_ints(dlmap_placeholder name, const int64_t *items, int32_t count) {
  dlmap_arg arg;
  arg.name = name;
  arg.type = DLMAP_ARG_TYPE_INTS;
  arg.value.list.items = items;
  arg.value.list.count = count;
  return arg;
}

/* A catalogue entry. */
typedef struct dlmap_error_info {
  int32_t code;                 /* the stable numeric code */
  const char *id;               /* the stable id */
  dlmap_error_kind kind;        /* DLMAP_KIND_COUNT only for the unknown-code fallback */
  const char *message_template; /* with {placeholder} fields, as in the spec */
  const char *meaning;          /* what it means */
  const char *when;             /* when it happens */
  const char *fix;              /* how to fix it */
  uint64_t args_mask;           /* bit p set: the C side supplies placeholder p */
} dlmap_error_info;

/* The catalogue entry for a code. Never NULL: an unknown code gets a static fallback entry whose id
 * is "unknown" and whose kind is DLMAP_KIND_COUNT (reported as RuntimeError). */
const dlmap_error_info *dlmap_error_describe(int32_t code);

/* The catalogue entry with this id, or NULL. */
const dlmap_error_info *dlmap_error_find_by_id(const char *id);

/* Catalogue entries in spec order: index 0 … DLMAP_ERROR_COUNT - 1; NULL past the end. */
const dlmap_error_info *dlmap_error_at(size_t index);

/* Writes up to cap related entries of code into out; returns how many the entry has. */
size_t dlmap_error_related(int32_t code, const dlmap_error_info **out, size_t cap);

/* The Python exception class name of a kind ("BufferError"); "RuntimeError" for DLMAP_KIND_COUNT. */
const char *dlmap_error_kind_name(dlmap_error_kind kind);

/* The name of a placeholder ("dl_device_type") and its declared type; NULL / false when out of range. */
const char *dlmap_placeholder_name(dlmap_placeholder name);
bool dlmap_placeholder_type(dlmap_placeholder name, dlmap_arg_type *out);

/* Formats the message of code with args into buf (cap bytes, always NUL-terminated when cap > 0),
 * truncating with "..." when it does not fit. A placeholder without a matching arg prints as
 * {name}. Returns the length of the message written, excluding the NUL. Never allocates. */
size_t dlmap_error_format(char *buf, size_t cap, int32_t code, const dlmap_arg *args, size_t nargs);

/* Fills err (when not NULL) with code, kind, id and the formatted message; returns code. DLMAP_OK clears err
 * (id "ok", empty message). Callers raise a known error through its typed dlmap_raise_<id> below. */
int32_t dlmap_error_set(dlmap_error *err, int32_t code, const dlmap_arg *args, size_t nargs);

/* ---- DLMAP_RAISE: raising an error --------------------------------------------------------------------------------
 * A known error: its generated, typed function, one per catalogue entry (<dlmap/generated/dlmap_raise.h>), whose
 * parameters are the error's `args:` typed by their placeholders. A site that disagrees with the spec does not compile:
 *   return dlmap_raise_dim_negative(err, i, extent);
 *   return dlmap_raise_no_local_hardware_id(err);
 * A code chosen at run time (an error the profile names for a policy; the spec loader checks that its args are among
 * those the site supplies) goes through DLMAP_RAISE, which takes any code and named arguments:
 *   return DLMAP_RAISE(err, profile->dlpack_device_otherwise, dlmap_arg_str(DLMAP_ARG_PLATFORM, name));
 * DLMAP_RAISE stays public for bindings built on dlmap (python/dlmap_python.h) that forward such codes; dlmap's own
 * sources never pass it a DLMAP_ERR_ constant (tests/raise: raise_sites_test).
 * DLMAP_CODE_AND_ARGS(code, arg...) expands to `code, array, count` for any function taking that triple; the count
 * is computed from the list, so it can never disagree with it. A terminating zero entry (never counted) keeps the
 * list non-empty when a message has no placeholders, which ISO C requires of both the macro and the array. */
#define DLMAP_CODE_AND_ARGS(...) DLMAP_CODE_AND_ARGS_(__VA_ARGS__, DLMAP_ARG_LIST_END_)
#define DLMAP_CODE_AND_ARGS_(code, ...) \
  (code), (const dlmap_arg[]){__VA_ARGS__}, (sizeof((const dlmap_arg[]){__VA_ARGS__}) / sizeof(dlmap_arg) - 1)
#define DLMAP_ARG_LIST_END_                        \
  {                                                \
    (dlmap_placeholder)0, (dlmap_arg_type)0, { 0 } \
  }
#define DLMAP_RAISE(err, ...) dlmap_error_set((err), DLMAP_CODE_AND_ARGS(__VA_ARGS__))

#include "dlmap/generated/dlmap_raise.h" /* dlmap_raise_<id>(err, args…), generated from the spec */

/* ---- platforms ---------------------------------------------------------------------------------- */

/* Which dlmap backend serves a platform. */
typedef enum dlmap_backend {
  DLMAP_BACKEND_CPU = 0,  /* always built */
  DLMAP_BACKEND_GPU = 1,  /* the CUDA/HIP backend, loaded at run time */
  DLMAP_BACKEND_NONE = 2  /* no dlmap backend */
} dlmap_backend;

typedef struct dlmap_platform_info {
  dlmap_platform platform;
  const char *name;                  /* "cuda" */
  dlmap_backend backend;
  const char *doc;
  const char *const *aliases;        /* NULL-terminated */
  const char *const *version_words;  /* NULL-terminated; words of a runtime's platform_version */
  const char *const *libraries;      /* NULL-terminated runtime libraries (gpu backend), else empty */
  const char *device_count_symbol;   /* NULL unless the platform has a runtime */
  const char *error_string_symbol;   /* NULL unless the platform has a runtime */
} dlmap_platform_info;

/* The platform's entry, or NULL when out of range. */
const dlmap_platform_info *dlmap_platform_find(dlmap_platform platform);

/* The platform's name ("cuda"), or NULL when out of range. */
const char *dlmap_platform_name(dlmap_platform platform);

/* The platform a runtime's platform_version string names (JAX's __dlpack_device__ rule: the first
 * platform whose word occurs in it). Error: unknown_gpu_platform. */
int32_t dlmap_platform_lookup_by_version(const char *platform_version, dlmap_platform *out, dlmap_error *err);

/* Whether this build and machine can serve a platform, and if not, why. */
typedef struct dlmap_platform_status {
  bool built;           /* this build contains the platform's backend */
  bool available;       /* built, and its runtime started with at least one device */
  int32_t device_count; /* devices the runtime reports (0 when unavailable; 1 for the host) */
  char reason[256];     /* why not available (vendor text where there is one); "" when available */
} dlmap_platform_status;

/* Probes the platform now (GPU runtimes are loaded with dlopen; nothing is linked). Safe on machines
 * without a driver: the vendor's error becomes the reason. */
void dlmap_platform_probe(dlmap_platform platform, dlmap_platform_status *out);

/* The state of the platform's strided-copy kernels (the device kernels that compact a strided tensor on its GPU; the
 * spec's runtime.kernels), as text: "loaded: … in 12.3 ms", "not loaded yet: …", "not used: <reason>; layout copies
 * take the memcpy path", "launch failed: …", or "none: …" for a platform the spec gives no kernels. Writes at most cap
 * bytes (NUL-terminated) and returns the length written. Loads nothing. */
size_t dlmap_platform_kernels(dlmap_platform platform, char *text, size_t cap);

/* Loads the platform's strided-copy kernels on device_id now, as its first layout copy would (the PTX load and JIT, or
 * the runtime compiler's build): for tools that report the first-use cost and state (`dlmap devices`). True when they
 * are usable; dlmap_platform_kernels then says how they loaded and how long it took, or why not. False without
 * effect when the platform is not available or the device id is out of range. The calling thread's device and
 * context are left as they were. */
bool dlmap_platform_kernels_load(dlmap_platform platform, int32_t device_id);

/* The platform's driver and whether it JIT-compiles the kernels' PTX (the spec's runtime.kernels.ptx: its floor and
 * the release → PTX ISA table), asked of the driver now: "driver 12040 (cuda 12.4): JIT-compiles PTX up to ISA 8.4;
 * the kernels' PTX (ISA 7.0, sm_75) loads", "…; too old for the kernels' PTX (…), which cuda 12.0's driver or newer
 * loads", "driver unknown: <why it could not be asked>", or "none: …" for a platform whose kernels load no PTX.
 * Writes at most cap bytes (NUL-terminated) and returns the length written. */
size_t dlmap_platform_driver(dlmap_platform platform, char *text, size_t cap);

/* Which allocator serves the platform's device copies (issue 64), as text: "stream-ordered:
 * cudaMallocAsync/cudaFreeAsync (runtime 12040; since 11020)" where the runtime has the spec's
 * runtime.stream_allocator, "synchronous: cudaMalloc/cudaFree (<why not the pool>)" where it does not, or "none:
 * <reason>" where the runtime is not loaded or the platform has no runtime. Writes at most cap bytes (NUL-terminated)
 * and returns the length written. Loads nothing. */
size_t dlmap_platform_allocator(dlmap_platform platform, char *text, size_t cap);

/* Loads, as dlmap_platform_probe would, the runtime of each GPU platform whose library (one of the spec's names for it)
 * the process has already loaded, such as a framework's libcudart, so that imports check device claims against it
 * (issue 48: they ask only runtimes dlmap has loaded). Platforms whose runtime dlmap has loaded are skipped; each other
 * GPU platform costs one dlopen(RTLD_NOLOAD) per library name. Nothing is loaded that the process had not loaded. For
 * bindings, where the process may have loaded a runtime since (the Python binding: when sys.modules changed). */
void dlmap_platform_adopt_loaded(void);

/* The vendor entry points the GPU backend resolves in a platform's runtime (the spec's symbol table), in
 * spec order: index 0, 1, …; NULL past the end and for platforms without a runtime. *op (may be NULL)
 * receives the spec's name of the operation ("malloc", "stream_wait_event"). */
const char *dlmap_platform_runtime_symbol_at(dlmap_platform platform, size_t index, const char **op);

/* ---- device types ------------------------------------------------------------------------------- */

/* How a device type reads the `stream` argument, as the spec's conventions classify a value. */
typedef enum dlmap_stream_meaning {
  DLMAP_STREAM_LEGACY_DEFAULT = 0,    /* the legacy default stream */
  DLMAP_STREAM_PER_THREAD_DEFAULT = 1, /* the per-thread default stream */
  DLMAP_STREAM_DEFAULT = 2,           /* the platform's default stream */
  DLMAP_STREAM_NO_SYNC = 3,           /* the consumer asks for no synchronisation */
  DLMAP_STREAM_HANDLE = 4,            /* the value is a stream handle */
  DLMAP_STREAM_HOST_SYNC = 5,         /* no stream: the producer synchronises before returning */
  DLMAP_STREAM_INVALID = 6            /* not allowed */
} dlmap_stream_meaning;

typedef struct dlmap_device_info {
  int32_t value;                 /* DLPack's value */
  const char *name;              /* current enumerator, "kDLCUDAHost" */
  const char *const *spellings;  /* NULL-terminated earlier enumerators */
  const char *const *aliases;    /* NULL-terminated lookup aliases */
  dlmap_platform platform;
  dlmap_memory_kind memory;
  dlmap_stream_convention stream;
  dlmap_version introduced;
  const char *doc;
  const char *note;              /* "" when none */
  bool upstream_main;            /* on DLPack's main branch after the `introduced` tag: that release lacks it */
  bool vendor;                   /* a vendor's own type, in no DLPack release (`introduced: vendor` in the spec);
                                    introduced is then the oldest listed version */
} dlmap_device_info;

/* The entry for a device type value, or NULL when the spec does not define it. */
const dlmap_device_info *dlmap_device_type_find(int32_t device_type);

/* Same, as a status: DLMAP_ERR_DEVICE_TYPE_UNKNOWN for values the spec does not define. */
int32_t dlmap_device_type_lookup(int32_t device_type, const dlmap_device_info **out, dlmap_error *err);

/* Entries in spec order: index 0 … DLMAP_DEVICE_TYPE_COUNT - 1; NULL past the end. */
const dlmap_device_info *dlmap_device_type_at(size_t index);

/* The enumerator of a value, or "unknown". */
const char *dlmap_device_type_name(int32_t device_type);

/* The memory kind's name ("host_pinned") and whether the host can read it without a copy. */
const char *dlmap_memory_kind_name(dlmap_memory_kind kind);
bool dlmap_memory_kind_host_accessible(dlmap_memory_kind kind);

/* The stream convention's name ("cuda") and rule text; NULL when out of range. */
const char *dlmap_stream_convention_name(dlmap_stream_convention convention);
const char *dlmap_stream_convention_rule(dlmap_stream_convention convention);

/* Classifies a stream argument for a device type (has_stream false means Python's None). Errors:
 * device_type_unknown, stream_invalid (with the convention's rule in the message), stream_not_a_handle (an integer
 * where handles are read but below the least a handle can be: the convention's handles_from). */
int32_t dlmap_stream_classify(int32_t device_type, bool has_stream, int64_t stream, dlmap_stream_meaning *out,
                              dlmap_error *err);

/* ---- data types --------------------------------------------------------------------------------- */

typedef struct dlmap_dtype_code_info {
  uint8_t code;
  const char *name;        /* "kDLFloat" */
  dlmap_version introduced;
  bool vector_lanes;       /* lanes > 1 allowed */
  const char *doc;
  bool upstream_main;      /* on DLPack's main branch after the `introduced` tag: that release lacks it */
} dlmap_dtype_code_info;

/* The entry for a code, or NULL when the spec does not define it. */
const dlmap_dtype_code_info *dlmap_dtype_code_find(uint8_t code);

/* The code's enumerator ("kDLFloat"), or NULL when the spec does not define it. */
const char *dlmap_dtype_code_name(uint8_t code);

/* Entries in spec order: index 0 … DLMAP_DTYPE_CODE_COUNT - 1; NULL past the end. */
const dlmap_dtype_code_info *dlmap_dtype_code_at(size_t index);

/* Whether (code, bits) is a valid width, and when it became expressible. */
bool dlmap_dtype_width_valid(uint8_t code, uint8_t bits, dlmap_version *introduced);

/* Validates code, bits and lanes against the spec. Errors: dtype_code_unknown, dtype_bits_invalid
 * (listing the valid widths), dtype_lanes_invalid. */
int32_t dlmap_dtype_validate(DLDataType dtype, dlmap_error *err);

/* Writes the valid widths of a code ("8, 16, 32, 64"; "none") into buf; returns the length. */
size_t dlmap_dtype_format_valid_bits(uint8_t code, char *buf, size_t cap);

/* The lookup name of (code, bits) ("float32"), or NULL when the width has none. Ignores lanes. */
const char *dlmap_dtype_width_name(uint8_t code, uint8_t bits);

/* Writes a readable dtype: "float32", "float32x4" for lanes, or "(code 2, bits 7, lanes 1)". */
size_t dlmap_dtype_format(DLDataType dtype, char *buf, size_t cap);

/* ---- name lookups (re2c matchers) ----------------------------------------------------------------
 * name points to len bytes (no NUL needed). Case rules come from the spec's `lookup` section. Return
 * false, leaving *out untouched, when the name is unknown. */

/* Enumerators, earlier spellings and aliases: "kDLCUDA", "kDLGPU", "kGPU", "cuda", "gpu" → 2. */
bool dlmap_device_type_parse(const char *name, size_t len, int32_t *out);

/* Platform names and aliases: "cuda", "hip" → DLMAP_PLATFORM_ROCM. */
bool dlmap_platform_parse(const char *name, size_t len, dlmap_platform *out);

/* Data type names: "float32" → (kDLFloat, 32, 1); "bf16" → (kDLBfloat, 16, 1). */
bool dlmap_dtype_parse(const char *name, size_t len, DLDataType *out);

/* ---- managed tensors ---------------------------------------------------------------------------- */

/* Runs a managed tensor's deleter: managed is a struct DLManagedTensorVersioned when versioned, else a
 * DLManagedTensor. Nothing for a NULL tensor or a NULL deleter. The deleter releases the tensor, so the caller
 * gives up ownership here and must not touch managed afterwards; it is the one way dlmap and its binding do this. */
void dlmap_managed_tensor_delete(void *managed, bool versioned);

#ifdef __cplusplus
} /* extern "C" */
#endif

#include "dlmap/exchange.h" /* export and import */
#include "dlmap/profile.h"  /* the exchange policy in force */

#endif /* DLMAP_DLMAP_H_ */
