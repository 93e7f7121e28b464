// dlmap tests — dlmap_check_export (src/check_export.c): a hand-written producer that follows the library's profile
// gets no row; producers that break one rule each get that rule's rows; every tensor's deleter runs exactly once.
// Built against both profiles' libraries (tests/check/BUILD); the producer's policy follows dlmap_profile_current()->name.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "dlmap/check.h"
#include "dlmap/profile.h"

namespace {

struct Producer {
  // What this producer does; the defaults follow the Array API profile.
  bool legacy_always = false;        // JAX: a legacy tensor for every max_version
  bool versioned_for_none = false;   // broken: a versioned tensor for max_version=None
  bool stamp_current = false;        // broken: stamps its own version above max_version
  bool set_is_copied = true;
  bool validate_stream = true;
  bool copy_ignored = false;         // broken: copy=True shares the data
  bool null_strides = false;         // broken from DLPack 1.2 on (non_null_strides)
  uint8_t dtype_code = kDLFloat;     // broken: a code the spec does not have
  const char *unavailable_kind = "BufferError";
  const char *copy_forbidden_kind = "BufferError";
  const char *stream_kind = "ValueError";
  // State.
  double data[6] = {0, 1, 2, 3, 4, 5};
  int made = 0;
  int deleted = 0;
};

struct Block {  // one allocation per tensor: either struct, its shape and strides, and copied data
  DLManagedTensor legacy;
  DLManagedTensorVersioned versioned;
  int64_t shape[2];
  int64_t strides[2];
  double copy[6];
  Producer *owner;
};

void delete_legacy(DLManagedTensor *m) {
  Block *b = static_cast<Block *>(m->manager_ctx);
  b->owner->deleted++;
  delete b;
}

void delete_versioned(DLManagedTensorVersioned *m) {
  Block *b = static_cast<Block *>(m->manager_ctx);
  b->owner->deleted++;
  delete b;
}

bool below(dlmap_version a, uint32_t major, uint32_t minor) {
  return a.major < major || (a.major == major && a.minor < minor);
}

void produce(void *context, const dlmap_check_request *r, dlmap_check_answer *answer) {
  Producer *p = static_cast<Producer *>(context);
  if (r->has_max_version && below(r->max_version, 0, 5)) {
    answer->error_kind = "BufferError";
    return;
  }
  if (r->has_dl_device && r->dl_device_type != kDLCPU) {  // no GPU is used here
    answer->error_kind = r->copy == DLMAP_COPY_NEVER ? p->copy_forbidden_kind : p->unavailable_kind;
    return;
  }
  if (r->has_stream && p->validate_stream) {  // host memory takes no stream
    answer->error_kind = p->stream_kind;
    return;
  }
  bool copy = r->copy == DLMAP_COPY_ALWAYS && !p->copy_ignored;
  Block *b = new Block();
  b->owner = p;
  b->shape[0] = 2;
  b->shape[1] = 3;
  b->strides[0] = 3;
  b->strides[1] = 1;
  if (copy) std::memcpy(b->copy, p->data, sizeof p->data);
  DLTensor t{};
  t.data = copy ? b->copy : p->data;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {p->dtype_code, 64, 1};
  t.shape = b->shape;
  t.strides = p->null_strides ? nullptr : b->strides;
  bool versioned = !p->legacy_always &&
                   (p->versioned_for_none || (r->has_max_version && !below(r->max_version, 1, 0)));
  p->made++;
  if (versioned) {
    dlmap_version v = dlmap_version_current();
    if (!p->stamp_current && r->has_max_version && below(r->max_version, v.major, v.minor)) v = r->max_version;
    b->versioned.version = {v.major, v.minor};
    b->versioned.manager_ctx = b;
    b->versioned.deleter = delete_versioned;
    b->versioned.flags = copy && p->set_is_copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
    b->versioned.dl_tensor = t;
    answer->versioned = &b->versioned;
  } else {
    b->legacy.dl_tensor = t;
    b->legacy.manager_ctx = b;
    b->legacy.deleter = delete_legacy;
    answer->legacy = &b->legacy;
  }
}

bool jax_profile() { return std::strcmp(dlmap_profile_current()->name, "jax") == 0; }

// The producer that follows this library's profile.
Producer following_the_profile() {
  Producer p;
  if (jax_profile()) {
    p.legacy_always = true;
    p.validate_stream = false;
    p.unavailable_kind = "RuntimeError";
    p.copy_forbidden_kind = "ValueError";
  }
  return p;
}

struct Result {
  std::vector<dlmap_check_row> rows;
  size_t count = 0;
  size_t requests = 0;
};

Result check(Producer *p, bool read_only = false, size_t capacity = 512) {
  Result out;
  out.rows.resize(capacity);
  dlmap_check_source source = dlmap_check_source_default();
  source.read_only = read_only;
  dlmap_error err;
  EXPECT_EQ(dlmap_check_export(produce, p, &source, out.rows.data(), capacity, &out.count, &out.requests, &err),
            DLMAP_OK);
  out.rows.resize(out.count < capacity ? out.count : capacity);
  return out;
}

std::set<std::string> rules(const Result &r) {
  std::set<std::string> out;
  for (const auto &row : r.rows) out.insert(row.rule);
  return out;
}

std::string dump(const Result &r) {
  std::string out;
  for (const auto &row : r.rows) out += std::string(row.id) + " " + row.rule + " " + row.sent + " -> " + row.got +
                                        ": " + row.detail + "\n";
  return out;
}

TEST(CheckExport, AProducerFollowingTheProfilePassesEveryRequest) {
  Producer p = following_the_profile();
  Result r = check(&p);
  EXPECT_EQ(r.count, 0u) << dump(r);
  EXPECT_GE(r.requests, 6u * 3u * 3u);  // every max_version × dl_device × copy, then the refused version and streams
  EXPECT_EQ(p.deleted, p.made);         // the checker ran each deleter exactly once
  EXPECT_GT(p.made, 0);
}

TEST(CheckExport, ReadOnlySourceNeedsReadOnlyOrRefusal) {
  Producer p = following_the_profile();  // never sets READ_ONLY
  Result r = check(&p, true);
  if (jax_profile()) {
    EXPECT_EQ(r.count, 0u) << dump(r);  // JAX drops read-only in its legacy tensors
  } else {
    EXPECT_EQ(rules(r).count("P-read-only"), 1u) << dump(r);
    EXPECT_EQ(rules(r).count("P-no-error"), 1u) << dump(r);  // read_only_needs_versioned for legacy requests
  }
}

TEST(CheckExport, VersionedForNoneIsReported) {
  Producer p = following_the_profile();
  p.legacy_always = false;
  p.versioned_for_none = true;
  p.stamp_current = true;  // the current version for max_version (1, 0): a newer minor, which is allowed
  Result r = check(&p);
  EXPECT_EQ(rules(r).count("P-version"), 1u) << dump(r);
  EXPECT_STREQ(r.rows.at(0).id, "P01");  // the plain __dlpack__() got a versioned tensor
  EXPECT_STREQ(r.rows.at(0).sent, "__dlpack__()");
  for (const auto &row : r.rows) {  // (1, 3) for max_version=(1, 0) is no P-version row
    if (std::strcmp(row.rule, "P-version") == 0) {
      EXPECT_EQ(std::strstr(row.sent, "max_version=(1,"), nullptr) << dump(r);
    }
  }
}

// The values are judged by dlmap_check_tensor, one row per problem with the Python checker's text (issue 66).
TEST(CheckExport, TensorValuesAreJudgedByCheckTensor) {
  Producer p = following_the_profile();
  p.null_strides = true;
  Result r = check(&p);
  size_t strides_rows = 0;
  for (const auto &row : r.rows) {
    ASSERT_STREQ(row.rule, "P-strides") << dump(r);
    EXPECT_EQ(std::string(row.detail).rfind("NULL strides with ndim 2 in (1, ", 0), 0u) << dump(r);
    EXPECT_EQ(std::strstr(row.got, "versioned 1.0 "), nullptr) << dump(r);  // 1.0 allows NULL strides
    strides_rows++;
  }
  EXPECT_EQ(strides_rows > 0, !jax_profile()) << dump(r);  // JAX's legacy tensors have no strides rule

  Producer bad_dtype = following_the_profile();
  bad_dtype.dtype_code = 200;
  Result d = check(&bad_dtype);
  ASSERT_GT(d.count, 0u);
  for (const auto &row : d.rows) {  // every tensor, legacy ones under either version gating too
    EXPECT_STREQ(row.rule, "P-dtype") << dump(d);
    EXPECT_STREQ(row.detail, "dtype code 200 is not in the spec") << dump(d);
  }
  EXPECT_EQ(d.count, static_cast<size_t>(bad_dtype.made)) << dump(d);  // one row per tensor the producer made
}

TEST(CheckExport, CopiesAreChecked) {
  Producer p = following_the_profile();
  p.set_is_copied = false;
  p.copy_ignored = true;
  Result r = check(&p);
  EXPECT_EQ(rules(r).count("P-copied"), 1u) << dump(r);
}

TEST(CheckExport, ErrorKindsComeFromTheProfile) {
  Producer p = following_the_profile();
  p.unavailable_kind = "TypeError";
  Result r = check(&p);
  EXPECT_EQ(rules(r).count("P-error-kind"), 1u) << dump(r);
}

TEST(CheckExport, JaxStyleProducerBreaksTheArrayApiProfile) {
  if (jax_profile()) GTEST_SKIP() << "the JAX profile is what this producer follows";
  Producer p;
  p.legacy_always = true;
  p.validate_stream = false;
  Result r = check(&p);
  EXPECT_EQ(rules(r).count("P-struct"), 1u) << dump(r);    // legacy for max_version >= (1, 0)
  EXPECT_EQ(rules(r).count("P-no-error"), 1u) << dump(r);  // stream values host memory forbids
}

TEST(CheckExport, EveryViolationIsCountedBeyondCapacity) {
  Producer p = following_the_profile();
  p.unavailable_kind = "TypeError";
  Result all = check(&p);
  Producer q = following_the_profile();
  q.unavailable_kind = "TypeError";
  Result two = check(&q, false, 2);
  EXPECT_EQ(two.count, all.count);
  ASSERT_EQ(two.rows.size(), 2u);
  EXPECT_STREQ(two.rows[1].id, all.rows[1].id);
  for (const auto &row : all.rows) {
    ASSERT_NE(dlmap_check_rule_find(row.rule), nullptr) << row.rule;
    EXPECT_STREQ(dlmap_check_rule_find(row.rule)->id, row.rule);
  }
}

TEST(CheckExport, NullArgumentsAreCleanErrors) {
  size_t count = 0;
  dlmap_check_source source = dlmap_check_source_default();
  dlmap_error err;
  EXPECT_EQ(dlmap_check_export(nullptr, nullptr, &source, nullptr, 0, &count, nullptr, &err),
            DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.id, "invalid_argument");
  EXPECT_EQ(dlmap_check_export(produce, nullptr, nullptr, nullptr, 0, &count, nullptr, nullptr),
            DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlmap_check_rule_find("no such rule"), nullptr);
  dlmap_check_source older = dlmap_check_source_default();
  older.struct_size -= 4;  // a caller built with a header whose struct was smaller
  EXPECT_EQ(dlmap_check_export(produce, nullptr, &older, nullptr, 0, &count, nullptr, &err),
            DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("struct_size"), std::string::npos) << err.message;
}

// A producer of a future major version whose tensor is only the ABI-stable head (version, manager_ctx, deleter,
// flags), placed right before an inaccessible page: the checker may read the head and run the deleter, nothing past it.
struct HeadOnly {
  DLManagedTensorVersioned *head = nullptr;
  int made = 0;
  int deleted = 0;
};

void delete_head(DLManagedTensorVersioned *m) { static_cast<HeadOnly *>(m->manager_ctx)->deleted++; }

void produce_head_only(void *context, const dlmap_check_request *, dlmap_check_answer *answer) {
  HeadOnly *p = static_cast<HeadOnly *>(context);
  p->made++;
  answer->versioned = p->head;
}

// Checks the head-only producer: 0 when every request is answered with a P-version row, no device read and every
// deleter run once; another value says what went wrong. Run in a death-test child, where a read past the head crashes.
int check_head_only(dlmap_version future) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *mapped = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return 2;
  char *pages = static_cast<char *>(mapped);
  if (mprotect(pages + page, page, PROT_NONE) != 0) return 2;
  size_t head_size = offsetof(DLManagedTensorVersioned, dl_tensor);
  HeadOnly p;
  p.head = reinterpret_cast<DLManagedTensorVersioned *>(pages + page - head_size);
  p.head->version = {future.major, future.minor};
  p.head->manager_ctx = &p;
  p.head->deleter = delete_head;
  p.head->flags = 0;
  std::vector<dlmap_check_row> rows(512);
  size_t count = 0;
  size_t requests = 0;
  dlmap_check_source source = dlmap_check_source_default();
  dlmap_error err;
  if (dlmap_check_export(produce_head_only, &p, &source, rows.data(), rows.size(), &count, &requests, &err) !=
      DLMAP_OK) {
    return 3;
  }
  if (p.made == 0 || p.deleted != p.made) return 4;  // every head's deleter ran exactly once
  bool version_reported = false;
  for (size_t i = 0; i < count && i < rows.size(); i++) {
    version_reported = version_reported || std::strcmp(rows[i].rule, "P-version") == 0;
    if (std::strchr(rows[i].got, ':') != nullptr) return 5;  // a device:id, which lies past the head
  }
  munmap(mapped, 2 * page);
  return version_reported ? 0 : 6;
}

TEST(CheckExport, AFutureMajorIsReadNoFurtherThanTheStableHead) {
  dlmap_version future = {dlmap_version_current().major + 1, 0};
  ASSERT_NE(dlmap_version_struct(future), DLMAP_STRUCT_VERSIONED);  // a major the versioned struct does not cover
  EXPECT_EXIT(std::_Exit(check_head_only(future)), ::testing::ExitedWithCode(0), "");
}

}  // namespace
