// dlmap tests — dlmap_check_export (src/check_export.c), one crafted producer per rule: each follows the Array API
// profile except in the one thing it breaks, and the checker must report exactly that rule with its text, run every
// deleter once, and read nothing it may not. Built against //src:dlmap_array_api (tests/check/BUILD).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dlmap/check.h"
#include "dlmap/profile.h"

namespace {

struct Producer;

// One allocation per tensor: either struct, its shape and strides, and copied data.
struct Block {
  DLManagedTensor legacy;
  DLManagedTensorVersioned versioned;
  int64_t shape[2];
  int64_t strides[2];
  double copy[6];
  Producer *owner;
};

struct Producer {
  // The one thing broken, applied to each answer after it is made the Array API way (nullptr: nothing).
  std::function<void(Producer *, const dlmap_check_request *, dlmap_check_answer *, Block *)> tweak;
  double data[6] = {0, 1, 2, 3, 4, 5};
  int calls = 0;
  int made = 0;
  int deleted = 0;
  std::vector<Block *> kept;  // tensors whose deleter the tweak removed, freed by the test
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

// The Array API producer of tests/check/check_export_test.cc, which passes every request on the host; the tweak
// then breaks one thing.
void produce(void *context, const dlmap_check_request *r, dlmap_check_answer *answer) {
  Producer *p = static_cast<Producer *>(context);
  p->calls++;
  Block *b = nullptr;
  if (r->has_max_version && below(r->max_version, 0, 5)) {
    answer->error_kind = "BufferError";
  } else if (r->has_dl_device && r->dl_device_type != kDLCPU) {
    answer->error_kind = "BufferError";
  } else if (r->has_stream) {
    answer->error_kind = "ValueError";
  } else {
    bool copy = r->copy == DLMAP_COPY_ALWAYS;
    b = new Block();
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
    t.dtype = {kDLFloat, 64, 1};
    t.shape = b->shape;
    t.strides = b->strides;
    p->made++;
    if (r->has_max_version && !below(r->max_version, 1, 0)) {
      dlmap_version v = dlmap_version_current();
      if (below(r->max_version, v.major, v.minor)) v = r->max_version;
      b->versioned.version = {v.major, v.minor};
      b->versioned.manager_ctx = b;
      b->versioned.deleter = delete_versioned;
      b->versioned.flags = copy ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
      b->versioned.dl_tensor = t;
      answer->versioned = &b->versioned;
    } else {
      b->legacy.dl_tensor = t;
      b->legacy.manager_ctx = b;
      b->legacy.deleter = delete_legacy;
      answer->legacy = &b->legacy;
    }
  }
  if (p->tweak) p->tweak(p, r, answer, b);
}

// The tensor of an answer, whichever struct it is in.
DLTensor *tensor_of(dlmap_check_answer *answer) {
  return answer->versioned != nullptr ? &answer->versioned->dl_tensor
         : answer->legacy != nullptr  ? &answer->legacy->dl_tensor
                                      : nullptr;
}

bool plain(const dlmap_check_request *r) {
  return !r->has_max_version && !r->has_dl_device && !r->has_stream && r->copy == DLMAP_COPY_IF_NEEDED;
}

struct Result {
  std::vector<dlmap_check_row> rows;
  size_t count = 0;
  size_t requests = 0;
};

Result check(Producer *p, dlmap_check_source source = dlmap_check_source_default()) {
  Result out;
  out.rows.resize(1024);
  dlmap_error err;
  EXPECT_EQ(dlmap_check_export(produce, p, &source, out.rows.data(), out.rows.size(), &out.count, &out.requests, &err),
            DLMAP_OK);
  EXPECT_LE(out.count, out.rows.size());
  out.rows.resize(out.count);
  return out;
}

std::string dump(const Result &r) {
  std::string out;
  for (const auto &row : r.rows) {
    out += std::string(row.id) + " " + row.rule + " " + row.sent + " -> " + row.got + ": " + row.detail + "\n";
  }
  return out;
}

// The exception kind this profile gives an error code (the spec's catalogue with the profile's overrides).
std::string kind_of(int32_t code) {
  dlmap_error e;
  DLMAP_RAISE(&e, code);
  return dlmap_error_kind_name(e.kind);
}

TEST(CheckExportRules, TheUnbrokenProducerPassesAndEveryDeleterRunsOnce) {
  ASSERT_STREQ(dlmap_profile_current()->name, "array_api");
  Producer p;
  Result r = check(&p);
  EXPECT_EQ(r.count, 0u) << dump(r);
  EXPECT_GT(p.made, 0);
  EXPECT_EQ(p.deleted, p.made);
}

TEST(CheckExportRules, ArgumentsAndRowStorage) {
  EXPECT_EQ(dlmap_check_rule_find(nullptr), nullptr);
  dlmap_check_source source = dlmap_check_source_default();
  dlmap_error err;
  Producer p;
  EXPECT_EQ(dlmap_check_export(produce, &p, &source, nullptr, 0, nullptr, nullptr, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.id, "invalid_argument");
  EXPECT_NE(std::string(err.message).find("count"), std::string::npos) << err.message;
  EXPECT_EQ(p.calls, 0);  // refused before any request

  // No row storage: a nonzero capacity with rows NULL writes nothing, and every row is still counted.
  Producer broken;
  broken.tweak = [](Producer *, const dlmap_check_request *r, dlmap_check_answer *answer, Block *) {
    if (r->has_stream) answer->error_kind = "TypeError";
  };
  size_t count = 0;
  EXPECT_EQ(dlmap_check_export(produce, &broken, &source, nullptr, 64, &count, nullptr, &err), DLMAP_OK);
  EXPECT_EQ(count, 6u);  // the six stream values, each with the wrong kind
}

// P-answer: exactly one tensor or an error kind; a broken answer still has each tensor's deleter run once.
TEST(CheckExportRules, AnAnswerWithBothOrNeitherIsReported) {
  Producer both;  // a legacy and a versioned tensor for the plain export
  both.tweak = [](Producer *p, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
    if (!plain(r)) return;
    b->versioned = {};
    b->versioned.version = {1, 0};
    b->versioned.dl_tensor = b->legacy.dl_tensor;
    Block *second = new Block(*b);
    second->owner = p;
    second->versioned.manager_ctx = second;
    second->versioned.deleter = delete_versioned;
    p->made++;
    answer->versioned = &second->versioned;
  };
  Result r = check(&both);
  ASSERT_GE(r.count, 1u);
  EXPECT_STREQ(r.rows[0].rule, "P-answer") << dump(r);
  EXPECT_STREQ(r.rows[0].detail, "expected exactly one tensor or an error kind");
  EXPECT_STREQ(r.rows[0].id, "P01");
  EXPECT_EQ(both.deleted, both.made);

  Producer neither;  // no tensor and no error for copy=False
  neither.tweak = [](Producer *p, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
    if (r->copy != DLMAP_COPY_NEVER || b == nullptr) return;
    delete b;
    p->made--;
    answer->legacy = nullptr;
    answer->versioned = nullptr;
  };
  Result n = check(&neither);
  ASSERT_GT(n.count, 0u);
  for (const auto &row : n.rows) {
    EXPECT_STREQ(row.rule, "P-answer") << dump(n);
    EXPECT_STREQ(row.got, "nothing") << dump(n);
    EXPECT_NE(std::strstr(row.sent, "copy=False"), nullptr) << dump(n);
  }
  EXPECT_EQ(neither.deleted, neither.made);

  Producer tensor_and_error;  // a tensor and an error kind for copy=True
  tensor_and_error.tweak = [](Producer *, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
    if (r->copy == DLMAP_COPY_ALWAYS && b != nullptr) answer->error_kind = "BufferError";
  };
  Result t = check(&tensor_and_error);
  ASSERT_GT(t.count, 0u);
  for (const auto &row : t.rows) EXPECT_STREQ(row.rule, "P-answer") << dump(t);
  EXPECT_EQ(tensor_and_error.deleted, tensor_and_error.made);
}

// A tensor without a deleter is the producer's to free: the checker runs none and reports nothing.
TEST(CheckExportRules, ANullDeleterIsNotCalled) {
  Producer p;
  p.tweak = [](Producer *q, const dlmap_check_request *, dlmap_check_answer *answer, Block *b) {
    if (b == nullptr) return;
    if (answer->legacy != nullptr) answer->legacy->deleter = nullptr;
    if (answer->versioned != nullptr) answer->versioned->deleter = nullptr;
    q->kept.push_back(b);
  };
  Result r = check(&p);
  EXPECT_EQ(r.count, 0u) << dump(r);
  EXPECT_EQ(p.deleted, 0);
  EXPECT_EQ(p.kept.size(), static_cast<size_t>(p.made));
  for (Block *b : p.kept) delete b;
}

// P-raised: an error where no rule calls for one; with the plain export refused the checker has no baseline, so
// copy=True's shared data is not judged against it.
TEST(CheckExportRules, AnErrorNoRuleCallsForIsReportedAndLeavesNoBaseline) {
  Producer p;
  p.tweak = [](Producer *q, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
    if (plain(r)) {
      delete b;
      q->made--;
      answer->legacy = nullptr;
      answer->error_kind = "BufferError";
    } else if (r->copy == DLMAP_COPY_ALWAYS && b != nullptr) {  // shares the source's data, flag still set
      tensor_of(answer)->data = q->data;
    }
  };
  Result r = check(&p);
  ASSERT_EQ(r.count, 1u) << dump(r);
  EXPECT_STREQ(r.rows[0].rule, "P-raised");
  EXPECT_STREQ(r.rows[0].detail, "no rule calls for an error");
  EXPECT_STREQ(r.rows[0].sent, "__dlpack__()");
  EXPECT_STREQ(r.rows[0].got, "BufferError");
  EXPECT_EQ(p.deleted, p.made);
}

// P-no-error where max_version is refused: the answer is judged with no struct wanted (no P-struct row for it).
TEST(CheckExportRules, ATensorForARefusedMaxVersionIsPNoErrorOnly) {
  Producer p;
  p.tweak = [](Producer *q, const dlmap_check_request *r, dlmap_check_answer *answer, Block *) {
    if (!r->has_max_version || !below(r->max_version, 0, 5) || r->has_dl_device) return;
    Block *b = new Block();
    b->owner = q;
    b->shape[0] = 2;
    b->shape[1] = 3;
    b->strides[0] = 3;
    b->strides[1] = 1;
    b->legacy.dl_tensor.data = r->copy == DLMAP_COPY_ALWAYS ? b->copy : q->data;
    b->legacy.dl_tensor.device = {kDLCPU, 0};
    b->legacy.dl_tensor.ndim = 2;
    b->legacy.dl_tensor.dtype = {kDLFloat, 64, 1};
    b->legacy.dl_tensor.shape = b->shape;
    b->legacy.dl_tensor.strides = b->strides;
    b->legacy.manager_ctx = b;
    b->legacy.deleter = delete_legacy;
    q->made++;
    answer->error_kind = nullptr;
    answer->legacy = &b->legacy;
  };
  Result r = check(&p);
  ASSERT_GT(r.count, 0u);
  const std::string expected = "expected " + kind_of(DLMAP_ERR_MAX_VERSION_TOO_OLD);
  for (const auto &row : r.rows) {
    EXPECT_STREQ(row.rule, "P-no-error") << dump(r);
    EXPECT_EQ(row.detail, expected) << dump(r);
    EXPECT_NE(std::strstr(row.sent, "max_version=(0, "), nullptr) << dump(r);  // (0, 0) and (0, 4), below 0.5
  }
  EXPECT_EQ(p.deleted, p.made);
}

// P-device: every tensor on device id 1 of a source on kDLCPU:0.
TEST(CheckExportRules, ATensorElsewhereIsPDevice) {
  Producer p;
  p.tweak = [](Producer *, const dlmap_check_request *, dlmap_check_answer *answer, Block *b) {
    if (b != nullptr) tensor_of(answer)->device.device_id = 1;
  };
  Result r = check(&p);
  ASSERT_EQ(r.count, static_cast<size_t>(p.made)) << dump(r);
  for (const auto &row : r.rows) {
    EXPECT_STREQ(row.rule, "P-device") << dump(r);
    EXPECT_STREQ(row.detail, "expected kDLCPU:0") << dump(r);
  }
}

// A device type the spec does not have: the source's is named "unknown" in the rows, the tensor's is judged by
// dlmap_check_tensor, and a stream for it cannot be classified, so every stream must be refused.
TEST(CheckExportRules, ADeviceTypeOutsideTheSpec) {
  constexpr int32_t kUnknown = 999;
  ASSERT_EQ(dlmap_device_type_find(kUnknown), nullptr);
  dlmap_check_source source = dlmap_check_source_default();
  source.device_type = kUnknown;
  Producer p;  // keeps its tensors on kDLCPU
  Result r = check(&p, source);
  size_t device_rows = 0;
  for (const auto &row : r.rows) {
    if (std::strcmp(row.rule, "P-device") == 0) {
      EXPECT_STREQ(row.detail, "expected unknown:0") << dump(r);
      device_rows++;
    }
    EXPECT_EQ(std::strstr(row.sent, "stream="), nullptr) << dump(r);  // ValueError for each stream is right
  }
  EXPECT_GT(device_rows, 0u) << dump(r);

  Producer takes_streams;  // a tensor for every stream of a device type no convention covers
  takes_streams.tweak = [](Producer *q, const dlmap_check_request *r, dlmap_check_answer *answer, Block *) {
    if (!r->has_stream) return;
    Block *b = new Block();
    b->owner = q;
    b->shape[0] = 2;
    b->shape[1] = 3;
    b->legacy.dl_tensor.data = q->data;
    b->legacy.dl_tensor.device = {static_cast<DLDeviceType>(999), 0};
    b->legacy.dl_tensor.ndim = 2;
    b->legacy.dl_tensor.dtype = {kDLFloat, 64, 1};
    b->legacy.dl_tensor.shape = b->shape;
    b->legacy.manager_ctx = b;
    b->legacy.deleter = delete_legacy;
    q->made++;
    answer->error_kind = nullptr;
    answer->legacy = &b->legacy;
  };
  Result s = check(&takes_streams, source);
  const std::string expected = "expected " + kind_of(DLMAP_ERR_STREAM_INVALID);
  size_t refused = 0;
  for (const auto &row : s.rows) {
    if (std::strstr(row.sent, "stream=") == nullptr) continue;
    if (std::strcmp(row.rule, "P-no-error") == 0) {
      EXPECT_EQ(row.detail, expected) << dump(s);
      refused++;
    } else {  // the tensor's device type, judged by dlmap_check_tensor; the got text names it "unknown"
      EXPECT_STREQ(row.rule, "P-device") << dump(s);
      EXPECT_STREQ(row.detail, "device type 999 is not in the spec") << dump(s);
      EXPECT_NE(std::strstr(row.got, " unknown:0 "), nullptr) << dump(s);
    }
  }
  EXPECT_EQ(refused, 6u) << dump(s);
  EXPECT_EQ(takes_streams.deleted, takes_streams.made);
}

// A source in device memory: the other dl_device the checker asks for is a host type (kDLCPU, the spec's first).
TEST(CheckExportRules, ADeviceSourceIsAskedForAHostCopy) {
  dlmap_check_source source = dlmap_check_source_default();
  source.device_type = kDLCUDA;
  Producer p;
  p.tweak = [](Producer *, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
    if (b != nullptr) tensor_of(answer)->device.device_type = kDLCUDA;
    if (r->has_dl_device && r->dl_device_type == kDLCPU && b != nullptr) {
      delete b;
      answer->legacy = nullptr;
      answer->versioned = nullptr;
      answer->error_kind = "TypeError";  // no rule gives a copy to the host this kind
    }
  };
  Result r = check(&p, source);
  size_t host_rows = 0;
  for (const auto &row : r.rows) {
    if (std::strcmp(row.rule, "P-error-kind") != 0) continue;
    EXPECT_NE(std::strstr(row.sent, "dl_device=(1, 0)"), nullptr) << dump(r);
    host_rows++;
  }
  EXPECT_GT(host_rows, 0u) << dump(r);
}

// A versioned tensor of a major the checker cannot read, with a whole struct behind its head: P-version, the head's
// text only, no baseline from it, and its deleter run once (the death test in check_export_test.cc proves nothing
// past the head is read; this one runs in the test process, so its coverage is counted).
TEST(CheckExportRules, AFutureMajorIsReportedFromItsHead) {
  const dlmap_version current = dlmap_version_current();
  Producer p;
  p.tweak = [current](Producer *, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
    if (b == nullptr) return;
    if (answer->legacy != nullptr) {  // every tensor, the plain export's too, as a versioned one
      b->versioned.dl_tensor = b->legacy.dl_tensor;
      b->versioned.manager_ctx = b;
      b->versioned.deleter = delete_versioned;
      answer->legacy = nullptr;
      answer->versioned = &b->versioned;
    }
    b->versioned.version = {current.major + 1, 0};
    b->versioned.flags = r->copy == DLMAP_COPY_ALWAYS ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
  };
  Result r = check(&p);
  ASSERT_EQ(r.count, static_cast<size_t>(p.made)) << dump(r);
  const std::string head = "versioned " + std::to_string(current.major + 1) + ".0 flags 0x";
  for (const auto &row : r.rows) {
    EXPECT_STREQ(row.rule, "P-version") << dump(r);
    EXPECT_EQ(std::string(row.got).rfind(head, 0), 0u) << dump(r);
    EXPECT_EQ(std::strchr(row.got, ':'), nullptr) << dump(r);  // no device: it lies past the head
  }
  EXPECT_EQ(p.deleted, p.made);
}

// P-not-copied: copy=False must share the data and leave IS_COPIED clear.
TEST(CheckExportRules, CopyFalseThatCopiesIsPNotCopied) {
  Producer flagged;  // IS_COPIED on a shared tensor
  flagged.tweak = [](Producer *, const dlmap_check_request *r, dlmap_check_answer *answer, Block *) {
    if (r->copy == DLMAP_COPY_NEVER && answer->versioned != nullptr) {
      answer->versioned->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    }
  };
  Result f = check(&flagged);
  ASSERT_GT(f.count, 0u);
  for (const auto &row : f.rows) {
    EXPECT_STREQ(row.rule, "P-not-copied") << dump(f);
    EXPECT_STREQ(row.detail, "IS_COPIED set") << dump(f);
  }

  Producer moved;  // new data for copy=False
  moved.tweak = [](Producer *, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
    if (r->copy == DLMAP_COPY_NEVER && b != nullptr) tensor_of(answer)->data = b->copy;
  };
  Result m = check(&moved);
  ASSERT_GT(m.count, 0u);
  for (const auto &row : m.rows) {
    EXPECT_STREQ(row.rule, "P-not-copied") << dump(m);
    EXPECT_STREQ(row.detail, "the data is not the source's") << dump(m);
  }
}

// The copy rules compare addresses only against a plain export at a known, non-NULL place on the same device.
TEST(CheckExportRules, CopiesAreJudgedOnlyAgainstAKnownPlace) {
  auto shares_on_copy = [](Producer *q, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
    if (r->copy == DLMAP_COPY_ALWAYS && b != nullptr) tensor_of(answer)->data = q->data;  // IS_COPIED still set
  };
  Producer baseline;  // control: the plain export is where the source is, so copy=True's sharing is caught
  baseline.tweak = shares_on_copy;
  Result b = check(&baseline);
  ASSERT_GT(b.count, 0u);
  for (const auto &row : b.rows) EXPECT_STREQ(row.detail, "the data is the source's") << dump(b);

  Producer null_plain;  // the plain export's data is NULL: no place to compare with
  null_plain.tweak = [shares_on_copy](Producer *q, const dlmap_check_request *r, dlmap_check_answer *answer,
                                      Block *blk) {
    if (plain(r)) tensor_of(answer)->data = nullptr;
    shares_on_copy(q, r, answer, blk);
  };
  Result n = check(&null_plain);
  EXPECT_EQ(n.count, 0u) << dump(n);

  Producer other_id;  // the plain export reports device id 1 (its own P-device row): another place
  other_id.tweak = [shares_on_copy](Producer *q, const dlmap_check_request *r, dlmap_check_answer *answer,
                                    Block *blk) {
    if (plain(r)) tensor_of(answer)->device.device_id = 1;
    shares_on_copy(q, r, answer, blk);
  };
  Result o = check(&other_id);
  ASSERT_EQ(o.count, 1u) << dump(o);
  EXPECT_STREQ(o.rows[0].rule, "P-device");
  EXPECT_STREQ(o.rows[0].sent, "__dlpack__()");

  Producer no_shape;  // the plain export's shape is NULL with ndim 2: no baseline is kept, so no copy rule either
  no_shape.tweak = [shares_on_copy](Producer *q, const dlmap_check_request *r, dlmap_check_answer *answer,
                                    Block *blk) {
    if (plain(r)) tensor_of(answer)->shape = nullptr;
    shares_on_copy(q, r, answer, blk);
  };
  Result s = check(&no_shape);
  for (const auto &row : s.rows) {
    EXPECT_STREQ(row.sent, "__dlpack__()") << dump(s);  // only the plain export's own problems
  }

  // A scalar plain export (ndim 0, no shape) is a baseline: every later tensor, of ndim 2, differs from it.
  Producer scalar;
  scalar.tweak = [](Producer *, const dlmap_check_request *r, dlmap_check_answer *answer, Block *) {
    if (plain(r)) {
      tensor_of(answer)->ndim = 0;
      tensor_of(answer)->shape = nullptr;
      tensor_of(answer)->strides = nullptr;
    }
  };
  Result sc = check(&scalar);
  size_t consistent = 0;
  for (const auto &row : sc.rows) consistent += std::strcmp(row.rule, "P-consistent") == 0;
  EXPECT_EQ(consistent + 1, static_cast<size_t>(scalar.made)) << dump(sc);  // all but the plain export itself

  // An ndim the baseline cannot keep (negative, or past the 16 dimensions it holds): no baseline either.
  static int64_t kSeventeen[17] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3};
  for (int32_t ndim : {-1, 17}) {
    Producer odd;
    odd.tweak = [ndim, shares_on_copy](Producer *q, const dlmap_check_request *r, dlmap_check_answer *answer,
                                       Block *blk) {
      if (plain(r)) {
        tensor_of(answer)->ndim = ndim;
        tensor_of(answer)->shape = kSeventeen;
        tensor_of(answer)->strides = nullptr;
      }
      shares_on_copy(q, r, answer, blk);
    };
    Result o2 = check(&odd);
    for (const auto &row : o2.rows) EXPECT_STREQ(row.sent, "__dlpack__()") << ndim << "\n" << dump(o2);
    EXPECT_EQ(odd.deleted, odd.made);
  }
}

// P-consistent: every export has the plain export's ndim, shape and dtype (code, bits, lanes).
TEST(CheckExportRules, AShapeOrDtypeUnlikeThePlainExportsIsPConsistent) {
  const std::vector<std::pair<const char *, std::function<void(DLTensor *)>>> changes = {
      {"shape", [](DLTensor *t) { t->shape[1] = 2; }},
      {"ndim", [](DLTensor *t) { t->ndim = 1; }},
      {"code", [](DLTensor *t) { t->dtype.code = kDLInt; }},
      {"bits", [](DLTensor *t) { t->dtype.bits = 32; }},
      {"lanes", [](DLTensor *t) { t->dtype.lanes = 2; }},
      {"no shape", [](DLTensor *t) { t->shape = nullptr; }},
  };
  for (const auto &change : changes) {
    Producer p;
    std::function<void(DLTensor *)> apply = change.second;
    p.tweak = [apply](Producer *, const dlmap_check_request *r, dlmap_check_answer *answer, Block *b) {
      if (b != nullptr && r->copy == DLMAP_COPY_ALWAYS) apply(tensor_of(answer));
    };
    Result r = check(&p);
    size_t consistent = 0;
    for (const auto &row : r.rows) {
      if (std::strcmp(row.rule, "P-consistent") != 0) continue;
      EXPECT_STREQ(row.detail, "shape or dtype differs from the plain export's");
      EXPECT_NE(std::strstr(row.sent, "copy=True"), nullptr) << change.first << "\n" << dump(r);
      consistent++;
    }
    EXPECT_GT(consistent, 0u) << change.first << "\n" << dump(r);
    EXPECT_EQ(p.deleted, p.made);
  }
}

}  // namespace
