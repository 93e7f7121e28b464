// dlmap tests — dlmap_check_export under the pytorch profile (export.max_version.absent_read_only: versioned): a
// read-only source asked with max_version=None may answer with the versioned struct the profile gives, and a legacy
// answer to it is then the wrong struct. The producer is dlmap's own export under the same profile.
#include <dlmap/check.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

struct Context {
  bool read_only;
  bool legacy_for_none;  // answer max_version=None with a writable legacy tensor, whatever the profile says
  float data[4] = {1, 2, 3, 4};
};

void produce(void *opaque, const dlmap_check_request *r, dlmap_check_answer *answer) {
  Context *c = static_cast<Context *>(opaque);
  static const int64_t shape[1] = {4};
  dlmap_array array = dlmap_array_default();
  array.data = c->data;
  array.device_type = kDLCPU;
  array.dtype.code = kDLFloat;
  array.dtype.bits = 32;
  array.dtype.lanes = 1;
  array.ndim = 1;
  array.shape = shape;
  array.read_only = c->read_only && !(c->legacy_for_none && !r->has_max_version);
  dlmap_export_request request = dlmap_export_request_default();
  request.has_max_version = r->has_max_version;
  request.max_version = r->max_version;
  request.has_dl_device = r->has_dl_device;
  request.dl_device_type = r->dl_device_type;
  request.dl_device_id = r->dl_device_id;
  request.copy = r->copy;
  request.has_stream = r->has_stream;
  request.stream = r->stream;
  dlmap_exported out;
  dlmap_error err;
  if (dlmap_export(&array, &request, &out, &err) != DLMAP_OK) {
    answer->error_kind = dlmap_error_kind_name(err.kind);
    return;
  }
  answer->legacy = out.legacy;
  answer->versioned = out.versioned;
}

std::vector<dlmap_check_row> check(Context *c) {
  std::vector<dlmap_check_row> rows(512);
  dlmap_check_source source = dlmap_check_source_default();
  source.read_only = c->read_only;
  size_t count = 0;
  dlmap_error err;
  EXPECT_EQ(dlmap_check_export(produce, c, &source, rows.data(), rows.size(), &count, nullptr, &err), DLMAP_OK);
  rows.resize(count < rows.size() ? count : rows.size());
  return rows;
}

// The violations of the requests that left max_version None, one line each ("" when there are none).
std::string none_rows(const std::vector<dlmap_check_row> &rows) {
  std::string out;
  for (const auto &row : rows) {
    if (std::strstr(row.sent, "max_version") != nullptr) continue;
    out += std::string(row.rule) + " " + row.sent + " -> " + row.got + ": " + row.detail + "\n";
  }
  return out;
}

TEST(CheckExportReadOnly, TheProfilesVersionedAnswerToNoneIsRight) {
  ASSERT_STREQ(dlmap_profile_current()->name, "pytorch");
  ASSERT_EQ(dlmap_profile_current()->absent_read_only_struct, DLMAP_STRUCT_VERSIONED);
  Context c{true, false};
  EXPECT_EQ(none_rows(check(&c)), "");
}

TEST(CheckExportReadOnly, ALegacyAnswerToNoneIsTheWrongStruct) {
  Context c{true, true};
  bool struct_reported = false;
  for (const auto &row : check(&c)) {
    if (std::strcmp(row.sent, "__dlpack__()") == 0 && std::strcmp(row.rule, "P-struct") == 0) struct_reported = true;
  }
  EXPECT_TRUE(struct_reported);
}

TEST(CheckExportReadOnly, AWritableSourceStillGetsLegacyForNone) {
  Context c{false, false};
  EXPECT_EQ(none_rows(check(&c)), "");
}

}  // namespace
