// Tests of src/dlpack_device.c (dlmap_dlpack_device, __dlpack_device__): a hand-written table of platform queries and
// the (device type, device id) or exact error each gives, following JAX's rules as the spec drives them.
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"

namespace {

struct Row {
  std::string name;
  const char *platform;
  const char *platform_version;
  bool pinned_host;
  int32_t num_shards;
  bool has_id;
  int32_t id;
  // success: code DLMAP_OK and the pair; error: code, id, exception kind and exact message
  int32_t code;
  int32_t device_type, device_id;
  const char *error_id, *exception, *message;
};

void PrintTo(const Row &row, std::ostream *os) { *os << row.name; }

Row Query(const char *name, const char *platform, const char *version, bool pinned, int32_t shards, bool has_id,
          int32_t id) {
  return Row{name, platform, version, pinned, shards, has_id, id, DLMAP_OK, 0, 0, nullptr, nullptr, nullptr};
}

Row Gives(Row row, int32_t device_type, int32_t device_id) {
  row.device_type = device_type;
  row.device_id = device_id;
  return row;
}

Row Fails(Row row, int32_t code, const char *id, const char *exception, const char *message) {
  row.code = code;
  row.error_id = id;
  row.exception = exception;
  row.message = message;
  return row;
}

constexpr bool kPinned = true, kDevice = false, kId = true, kNoId = false;

#define NOT_EXCHANGEABLE(p) "__dlpack__ device only supported for platforms with a DLPack device type, got platform: " p

std::vector<Row> Rows() {
  return {
      // cpu: (kDLCPU, 0) whatever the hardware id (JAX hard-codes 0)
      Gives(Query("cpu", "cpu", nullptr, kDevice, 1, kNoId, 0), 1, 0),
      Gives(Query("cpu_ignores_id", "cpu", nullptr, kDevice, 1, kId, 3), 1, 0),
      Gives(Query("cpu_alias_host", "host", nullptr, kDevice, 1, kNoId, 0), 1, 0),
      // gpu: the runtime's platform_version picks the platform; the memory kind picks device or pinned host
      Gives(Query("gpu_cuda", "gpu", "cuda 12.4", kDevice, 1, kId, 0), 2, 0),
      Gives(Query("gpu_cuda_id_3", "gpu", "cuda 12.4", kDevice, 1, kId, 3), 2, 3),
      Gives(Query("gpu_cuda_pinned", "gpu", "cuda 12.4", kPinned, 1, kId, 3), 3, 3),
      Gives(Query("gpu_rocm", "gpu", "rocm 6.1", kDevice, 1, kId, 1), 10, 1),
      Gives(Query("gpu_rocm_pinned", "gpu", "rocm 6.1", kPinned, 1, kId, 1), 11, 1),
      Gives(Query("gpu_oneapi", "gpu", "oneapi", kDevice, 1, kId, 2), 14, 2),
      Gives(Query("cuda_by_name", "cuda", nullptr, kDevice, 1, kId, 5), 2, 5),
      Gives(Query("rocm_by_name_pinned", "rocm", nullptr, kPinned, 1, kId, 0), 11, 0),
      Fails(Query("gpu_metal", "gpu", "metal", kDevice, 1, kId, 0), 206, "unknown_gpu_platform", "BufferError",
            "Unknown GPU platform for __dlpack__: metal"),
      Fails(Query("gpu_version_null", "gpu", nullptr, kDevice, 1, kId, 0), 206, "unknown_gpu_platform", "BufferError",
            "Unknown GPU platform for __dlpack__: (null)"),
      Fails(Query("gpu_no_hardware_id", "gpu", "cuda 12.4", kDevice, 1, kNoId, 0), 207, "no_local_hardware_id",
            "BufferError", "Couldn't get local_hardware_id for __dlpack__"),
      Fails(Query("gpu_pinned_no_hardware_id", "gpu", "rocm 6.1", kPinned, 1, kNoId, 0), 207, "no_local_hardware_id",
            "BufferError", "Couldn't get local_hardware_id for __dlpack__"),
      // sharded arrays: the first check, whatever the platform
      Fails(Query("sharded_gpu", "gpu", "cuda 12.4", kDevice, 2, kId, 0), 202, "dlpack_sharded", "BufferError",
            "__dlpack__ only supported for unsharded arrays."),
      Fails(Query("sharded_cpu", "cpu", nullptr, kDevice, 8, kNoId, 0), 202, "dlpack_sharded", "BufferError",
            "__dlpack__ only supported for unsharded arrays."),
      Fails(Query("sharded_before_platform", "metalx", nullptr, kDevice, 2, kNoId, 0), 202, "dlpack_sharded",
            "BufferError", "__dlpack__ only supported for unsharded arrays."),
      // tpu: pinned host memory is kDLTPUHost (what JAX exchanges); device memory is kDLTPU in this spec
      Gives(Query("tpu_pinned", "tpu", nullptr, kPinned, 1, kId, 2), 20, 2),
      Gives(Query("tpu_device", "tpu", nullptr, kDevice, 1, kId, 2), 19, 2),
      Fails(Query("tpu_no_hardware_id", "tpu", nullptr, kPinned, 1, kNoId, 0), 207, "no_local_hardware_id",
            "BufferError", "Couldn't get local_hardware_id for __dlpack__"),
      // platforms the spec does not know, or knows without a device type of that memory kind
      Fails(Query("unknown_platform", "metalx", nullptr, kDevice, 1, kId, 0), 213, "platform_not_exchangeable",
            "BufferError", NOT_EXCHANGEABLE("metalx")),
      Fails(Query("unknown_platform_no_id", "metalx", nullptr, kDevice, 1, kNoId, 0), 213, "platform_not_exchangeable",
            "BufferError", NOT_EXCHANGEABLE("metalx")),
      Fails(Query("metal_pinned_has_no_type", "metal", nullptr, kPinned, 1, kId, 0), 213, "platform_not_exchangeable",
            "BufferError", NOT_EXCHANGEABLE("metal")),
  };
}

class DlpackDeviceTable : public ::testing::TestWithParam<Row> {};

TEST_P(DlpackDeviceTable, Row) {
  const Row &row = GetParam();
  dlmap_device_query query = dlmap_device_query_default();
  query.platform = row.platform;
  query.platform_version = row.platform_version;
  query.pinned_host = row.pinned_host;
  query.num_shards = row.num_shards;
  query.has_local_hardware_id = row.has_id;
  query.local_hardware_id = row.id;
  int32_t type = -12345, id = -12345;
  dlmap_error err;
  std::memset(&err, 0, sizeof err);
  const int32_t status = dlmap_dlpack_device(&query, &type, &id, &err);
  if (row.code == DLMAP_OK) {
    ASSERT_EQ(status, DLMAP_OK) << err.message;
    EXPECT_EQ(type, row.device_type);
    EXPECT_EQ(id, row.device_id);
  } else {
    EXPECT_EQ(status, row.code);
    EXPECT_EQ(err.code, row.code);
    EXPECT_STREQ(err.id, row.error_id);
    EXPECT_STREQ(dlmap_error_kind_name(err.kind), row.exception);
    EXPECT_STREQ(err.message, row.message);
    EXPECT_EQ(type, -12345) << "outputs are untouched on error";
    EXPECT_EQ(id, -12345);
  }
  // err is optional
  int32_t type2 = 0, id2 = 0;
  EXPECT_EQ(dlmap_dlpack_device(&query, &type2, &id2, nullptr), row.code);
}

std::string RowName(const ::testing::TestParamInfo<Row> &info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Rules, DlpackDeviceTable, ::testing::ValuesIn(Rows()), RowName);

TEST(DlpackDevice, NullArgumentsAreInvalid) {
  dlmap_device_query query = dlmap_device_query_default();
  query.platform = "cpu";
  query.num_shards = 1;
  int32_t type = 0, id = 0;
  const char *const message = "Invalid argument query: query, its platform and both outputs must not be NULL";
  dlmap_error err;
  EXPECT_EQ(dlmap_dlpack_device(nullptr, &type, &id, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.id, "invalid_argument");
  EXPECT_STREQ(dlmap_error_kind_name(err.kind), "ValueError");
  EXPECT_STREQ(err.message, message);
  EXPECT_EQ(dlmap_dlpack_device(&query, nullptr, &id, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, message);
  EXPECT_EQ(dlmap_dlpack_device(&query, &type, nullptr, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, message);
  query.platform = nullptr;
  EXPECT_EQ(dlmap_dlpack_device(&query, &type, &id, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, message);
}

}  // namespace
