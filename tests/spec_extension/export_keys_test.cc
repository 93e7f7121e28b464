// Spec-extension test — the shipped numpy profile (//src:dlmap_numpy, spec/profiles/numpy.yaml: array_api plus the
// optional export keys export.stamp, export.dl_device.host_id and export.stream none_only) exports as the keys say,
// with NumPy's texts (pinned: they are NumPy's contract) and the profile's errors[].when (read from the YAML through
// :numpy_facts). Each case fails without its key: array_api stamps min(max_version, current), takes any host id and
// validates streams by convention (stream=-1 on the host is accepted there).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"

namespace {

struct Exported {
  dlmap_exported out;
  int32_t status;
  dlmap_error err;
  ~Exported() {
    if (status != DLMAP_OK) return;
    if (out.legacy != nullptr) out.legacy->deleter(out.legacy);
    if (out.versioned != nullptr) out.versioned->deleter(out.versioned);
  }
};

// numpy.yaml's entry for an error (the profile's kind, text and `when` over the catalogue's), read by spec_facts.py.
const spec_facts_error &Fact(const std::string &id) {
  for (const spec_facts_error &f : spec_facts_errors) {
    if (id == f.id) return f;
  }
  ADD_FAILURE() << id << " is not in the spec facts";
  return spec_facts_errors[0];
}

float g_data[6];
int64_t g_shape[2] = {2, 3};

void Export(const dlmap_export_request &request, Exported *e) {
  dlmap_array array = dlmap_array_default();
  array.device_type = DLMAP_DEVICE_CPU;
  array.device_id = 0;
  array.dtype = DLDataType{DLMAP_DTYPE_FLOAT, 32, 1};
  array.ndim = 2;
  array.shape = g_shape;
  array.data = g_data;
  memset(&e->out, 0, sizeof e->out);
  e->status = dlmap_export(&array, &request, &e->out, &e->err);
}

TEST(ExportKeys, ProfileInfo) {
  const dlmap_profile_info *p = dlmap_profile_current();
  EXPECT_STREQ(p->name, SPEC_FACTS_PROFILE);
  EXPECT_TRUE(p->stamp_fixed);
  EXPECT_EQ(p->stamp.major, 1u);
  EXPECT_EQ(p->stamp.minor, 0u);
  EXPECT_TRUE(p->host_id_zero);
  EXPECT_EQ(p->stream, DLMAP_STREAM_POLICY_NONE_ONLY);
}

TEST(ExportKeys, VersionedTensorsAreStampedWithTheFixedVersion) {
  const dlmap_version current = dlmap_version_current();
  ASSERT_GT(dlmap_version_compare(current, dlmap_version{1, 0}), 0) << "the spec's current version must be above 1.0";
  for (const dlmap_version asked : {dlmap_version{1, 0}, dlmap_version{1, 1}, current, dlmap_version{7, 9}}) {
    dlmap_export_request request = dlmap_export_request_default();
    request.has_max_version = true;
    request.max_version = asked;
    Exported e;
    Export(request, &e);
    ASSERT_EQ(e.status, DLMAP_OK) << e.err.message;
    ASSERT_EQ(e.out.structure, DLMAP_STRUCT_VERSIONED);
    EXPECT_EQ(e.out.versioned->version.major, 1u) << "max_version " << asked.major << "." << asked.minor;
    EXPECT_EQ(e.out.versioned->version.minor, 0u) << "max_version " << asked.major << "." << asked.minor;
    EXPECT_EQ(e.out.version.minor, 0u);
  }
}

TEST(ExportKeys, HostDeviceIdOtherThanZeroIsRefused) {
  dlmap_export_request request = dlmap_export_request_default();
  request.has_dl_device = true;
  request.dl_device_type = DLMAP_DEVICE_CPU;
  request.dl_device_id = 1;
  Exported e;
  Export(request, &e);
  ASSERT_EQ(e.status, DLMAP_ERR_EXPORT_HOST_ID_NOT_ZERO);
  EXPECT_EQ(e.err.kind, DLMAP_KIND_BUFFER_ERROR);
  EXPECT_STREQ(e.err.message, "unsupported device requested");
  request.dl_device_id = 0;
  Exported ok;
  Export(request, &ok);
  EXPECT_EQ(ok.status, DLMAP_OK) << ok.err.message;
}

TEST(ExportKeys, EveryStreamButNoneIsRefused) {
  for (const int64_t stream : {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{42}}) {
    dlmap_export_request request = dlmap_export_request_default();
    request.has_stream = true;
    request.stream = stream;
    Exported e;
    Export(request, &e);
    ASSERT_EQ(e.status, DLMAP_ERR_STREAM_NOT_NONE) << "stream " << stream;
    EXPECT_EQ(e.err.kind, DLMAP_KIND_VALUE_ERROR);  // NumPy 2.5's kind (numpy_2_4: RuntimeError)
    EXPECT_STREQ(e.err.message, "NumPy only supports stream=None.");
  }
  Exported none;
  Export(dlmap_export_request_default(), &none);
  EXPECT_EQ(none.status, DLMAP_OK) << none.err.message;
}

TEST(ExportKeys, ProfileWordsWhenAnErrorHappens) {
  // errors[].when replaces the catalogue's text (`dlmap explain`, the doc page); kind and text origins are unchanged.
  const spec_facts_error &fact = Fact("stream_not_none");
  ASSERT_STRNE(fact.when, "") << "numpy.yaml's stream_not_none has no `when:`";
  EXPECT_STREQ(dlmap_error_describe(DLMAP_ERR_STREAM_NOT_NONE)->when, fact.when);
  EXPECT_STRNE(dlmap_error_describe(DLMAP_ERR_STREAM_NOT_NONE)->when,
               "__dlpack__(stream=s) or an export with a stream, s being anything but None (even -1).")
      << "the catalogue's `when` (spec/errors.yaml), not the profile's";
  EXPECT_STREQ(dlmap_profile_error_origin(DLMAP_ERR_STREAM_NOT_NONE).message, SPEC_FACTS_PROFILE);
}

}  // namespace
