// dlmap tests — dlmap_check_export (src/check_export.c) under the NumPy profile, whose rules the Array API profile
// lacks: every stream but None is refused (export.stream: none_only) and a dl_device of another type is no export
// target (export.dl_device.accept: [kDLCPU]). A producer that answers every request with a host tensor must get a
// P-no-error row, with the kind the profile gives, for each of those requests. Built against //src:dlmap_numpy.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dlmap/check.h"
#include "dlmap/profile.h"

namespace {

struct Producer {
  double data[4] = {0, 1, 2, 3};
  int made = 0;
  int deleted = 0;
};

struct Block {
  DLManagedTensor legacy;
  int64_t shape[1];
  Producer *owner;
};

void delete_legacy(DLManagedTensor *m) {
  Block *b = static_cast<Block *>(m->manager_ctx);
  b->owner->deleted++;
  delete b;
}

// A legacy host tensor for every request, whatever it asks.
void answer_everything(void *context, const dlmap_check_request *, dlmap_check_answer *answer) {
  Producer *p = static_cast<Producer *>(context);
  Block *b = new Block();
  b->owner = p;
  b->shape[0] = 4;
  b->legacy.dl_tensor.data = p->data;
  b->legacy.dl_tensor.device = {kDLCPU, 0};
  b->legacy.dl_tensor.ndim = 1;
  b->legacy.dl_tensor.dtype = {kDLFloat, 64, 1};
  b->legacy.dl_tensor.shape = b->shape;
  b->legacy.manager_ctx = b;
  b->legacy.deleter = delete_legacy;
  p->made++;
  answer->legacy = &b->legacy;
}

std::string expected_kind(int32_t code) {
  dlmap_error e;
  DLMAP_RAISE(&e, code);
  return std::string("expected ") + dlmap_error_kind_name(e.kind);
}

TEST(CheckExportNoneOnly, StreamsAndOtherDeviceTypesMustBeRefused) {
  const dlmap_profile_info *profile = dlmap_profile_current();
  ASSERT_EQ(profile->stream, DLMAP_STREAM_POLICY_NONE_ONLY);
  ASSERT_FALSE(dlmap_profile_device_policy(kDLCUDA).export_target);
  Producer p;
  std::vector<dlmap_check_row> rows(1024);
  size_t count = 0;
  size_t requests = 0;
  dlmap_check_source source = dlmap_check_source_default();
  dlmap_error err;
  ASSERT_EQ(dlmap_check_export(answer_everything, &p, &source, rows.data(), rows.size(), &count, &requests, &err),
            DLMAP_OK);
  ASSERT_LE(count, rows.size());
  size_t stream_rows = 0;
  size_t device_rows = 0;
  for (size_t i = 0; i < count; i++) {
    const dlmap_check_row &row = rows[i];
    if (std::strcmp(row.rule, "P-no-error") != 0) continue;
    if (std::strstr(row.sent, "stream=") != nullptr) {
      EXPECT_EQ(row.detail, expected_kind(DLMAP_ERR_STREAM_NOT_NONE)) << row.sent;
      stream_rows++;
    } else if (std::strstr(row.sent, "dl_device=(2, 0)") != nullptr) {  // kDLCUDA, the other device type
      EXPECT_EQ(row.detail, expected_kind(DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE)) << row.sent;
      device_rows++;
    }
  }
  EXPECT_EQ(stream_rows, 6u);  // streams -2 … 3, each refused by none_only
  EXPECT_EQ(device_rows, 6u * 3u);  // every max_version × copy with dl_device=kDLCUDA
  EXPECT_EQ(p.deleted, p.made);
  EXPECT_EQ(static_cast<size_t>(p.made), requests);
}

}  // namespace
