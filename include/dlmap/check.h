/* dlmap public API — the DLPack conformance checker for C producers: dlmap_check_export() asks a producer's export
 * callback for every argument combination of the Python protocol's __dlpack__ (max_version, dl_device, copy, stream)
 * and judges each answer by the spec and profile this library was built from, so that a framework or an XLA-style
 * compiler can test its own export in its own test suite. Python's twin is `dlmap.check.producer` (python/check/).
 *
 * Compiles as C99, C11 and C++ with -Wall -Wextra -Werror -pedantic; nothing here allocates.
 */
#ifndef DLMAP_CHECK_H_
#define DLMAP_CHECK_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dlmap/dlmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One __dlpack__ call's arguments; a has_* flag false means the argument is None. */
typedef struct dlmap_check_request {
  bool has_max_version;
  dlmap_version max_version;
  bool has_dl_device;
  int32_t dl_device_type;
  int32_t dl_device_id;
  dlmap_copy_mode copy; /* copy=None / True / False, as everywhere (exchange.h) */
  bool has_stream;
  int64_t stream;
} dlmap_check_request;

/* The producer's answer: exactly one tensor, or no tensor and error_kind set. */
typedef struct dlmap_check_answer {
  DLManagedTensor *legacy;             /* out: ownership passes to the checker, which runs its deleter once */
  struct DLManagedTensorVersioned *versioned; /* out: likewise (a struct tag in DLPack 1.0 and 1.1) */
  const char *error_kind;              /* out: the exception kind raised ("BufferError", …), static; or NULL */
} dlmap_check_answer;

/* The export under test: answers one request. `answer` arrives zeroed. */
typedef void (*dlmap_check_export_fn)(void *context, const dlmap_check_request *request, dlmap_check_answer *answer);

/* What the checker knows of the source array: where __dlpack_device__ says it is, and whether it is read-only.
 * Starts with struct_size, as every struct a caller fills in (exchange.h): start from dlmap_check_source_default(). */
typedef struct dlmap_check_source {
  uint32_t struct_size; /* DLMAP_CHECK_SOURCE_STRUCT_SIZE */
  int32_t device_type;
  int32_t device_id;
  bool read_only;
} dlmap_check_source;

#define DLMAP_CHECK_SOURCE_STRUCT_SIZE DLMAP_STRUCT_SIZE(dlmap_check_source, read_only)

/* A source with struct_size set: host memory (kDLCPU, device 0), writable. */
static inline dlmap_check_source dlmap_check_source_default(void) {
  dlmap_check_source source;
  memset(&source, 0, sizeof source);
  source.struct_size = DLMAP_CHECK_SOURCE_STRUCT_SIZE;
  source.device_type = 1; /* kDLCPU */
  return source;
}

/* One violation: the request's row id, the rule broken, what was sent and what came back, and why. */
typedef struct dlmap_check_row {
  char id[8];          /* "P07": the request's number, in the order the checker sends them */
  const char *rule;    /* the rule's id, e.g. "P-version" (static); dlmap_check_rule_find() explains it */
  char sent[128];      /* "__dlpack__(max_version=(1, 0), copy=True)" */
  char got[128];       /* "versioned 1.3 kDLCPU:0 flags 0x0", "BufferError", or for a major the checker cannot read
                        * only its ABI-stable head: "versioned 2.0 flags 0x0" */
  char detail[192];    /* what the rule expected */
} dlmap_check_row;

/* Calls `fn` once per request (every max_version / dl_device / copy combination, the max_version the profile
 * refuses, each stream value some convention names) and writes every violation found, in request order, to `rows`
 * (at most `capacity`; `*count` receives the total, which may exceed it). `*requests` (optional) receives the number
 * of requests sent. The checker runs the deleter of every tensor the callback returns exactly once, before the next
 * request. Errors: invalid_argument for a NULL fn, source or count, or a source whose struct_size the
 * library does not know (exchange.h). */
int32_t dlmap_check_export(dlmap_check_export_fn fn, void *context, const dlmap_check_source *source,
                           dlmap_check_row *rows, size_t capacity, size_t *count, size_t *requests, dlmap_error *err);

/* One spec rule a tensor breaks: the rule's id and what is wrong ("kDLFloat has no 7-bit width"). */
typedef struct dlmap_check_problem {
  const char *rule;  /* "P-flags", "P-strides", "P-dtype" or "P-device" (static); dlmap_check_rule_find() explains it */
  char detail[112];
} dlmap_check_problem;

/* The most problems dlmap_check_tensor() finds in one tensor: one per flag bit, the strides, the dtype, the device. */
#define DLMAP_CHECK_TENSOR_PROBLEMS_MAX 67

/* The spec's judgement of one exported tensor's values, the one both checkers apply: dlmap_check_export and Python's
 * dlmap.check.producer (through the module's _judge_tensor). `version`: the version the values must be expressible
 * in: a versioned tensor's stamped version; for a legacy tensor the version its profile judges it in (the newest
 * legacy version under strict version gating), or NULL for any version the spec lists. `flags`: a versioned
 * tensor's flags (0 for a legacy one). Reads tensor's device type, dtype, ndim and whether strides is NULL, never
 * shape or data. Writes the problems, in this order, to `problems` (at most `capacity`): each flag bit set that the
 * spec does not know or that is newer than `version`, lowest bit first (P-flags); NULL strides with ndim != 0 from
 * the version whose `requires` lists non_null_strides (P-strides); a dtype code, width or lane count the spec does
 * not have, or a width newer than `version` (P-dtype); a device type the spec does not have, or newer than
 * `version` (P-device). Returns how many there are (0: none; at most DLMAP_CHECK_TENSOR_PROBLEMS_MAX). */
size_t dlmap_check_tensor(const DLTensor *tensor, uint64_t flags, const dlmap_version *version,
                          dlmap_check_problem *problems, size_t capacity);

/* The spec's judgement of a versioned tensor's stamped version, before anything past the struct's ABI-stable head
 * is read: false, with the problem (P-version) written to `problem` (optional), when it is outside the spec's
 * versioned range [abi.versioned.introduced, abi.versioned.until), whose struct layout the spec does not give. */
bool dlmap_check_version(dlmap_version stamped, dlmap_check_problem *problem);

/* The device-type part of dlmap_check_tensor() alone, for a device a producer reports (__dlpack_device__, any
 * integer): false, with the problem written to `problem` (optional), when device_type is not a spec device type, or
 * is newer than `version` (NULL: any version). */
bool dlmap_check_device_type(int64_t device_type, const dlmap_version *version, dlmap_check_problem *problem);

/* A rule dlmap_check_export reports: its id and what it means. */
typedef struct dlmap_check_rule_info {
  const char *id;
  const char *text;
} dlmap_check_rule_info;

/* The rule with this id (static), or NULL for any other text. */
const dlmap_check_rule_info *dlmap_check_rule_find(const char *id);
/* Every rule, in table order: index 0 …; NULL past the end. */
const dlmap_check_rule_info *dlmap_check_rule_at(size_t index);

#ifdef __cplusplus
}
#endif

#endif /* DLMAP_CHECK_H_ */
