/* dlmap fuzz target — every name lookup: device type, platform and dtype names (the re2c matchers) and the
 * platform_version word scan, each on a heap buffer of exactly the input's length with no NUL terminator, so ASan
 * reports any read past its end; also the NUL-terminated entry points (dlmap_platform_lookup_by_version and
 * __dlpack_device__'s query). Invariants: a hit names a value the spec defines, a miss leaves the output alone, and
 * the same name always gives the same answer. */
#include "fuzz/harness.h"

/* The word scan behind dlmap_platform_lookup_by_version, called here on non-terminated text (see src/name_lookup.h). */
int dlmap__platform_from_words(const char *text, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *name = (char *)malloc(size == 0 ? 1 : size); /* exactly size bytes are the name; no terminator */
  if (size > 0) memcpy(name, data, size);
  const char *text = name;

  int32_t device_type = -12345;
  if (dlmap_device_type_parse(text, size, &device_type)) {
    const dlmap_device_info *info = dlmap_device_type_find(device_type);
    FUZZ_CHECK(info != NULL && info->value == device_type);
    int32_t again = -1;
    FUZZ_CHECK(dlmap_device_type_parse(text, size, &again) && again == device_type);
  } else {
    FUZZ_CHECK(device_type == -12345);
  }

  dlmap_platform platform = (dlmap_platform)-7;
  if (dlmap_platform_parse(text, size, &platform)) {
    FUZZ_CHECK(dlmap_platform_find(platform) != NULL);
  } else {
    FUZZ_CHECK((int)platform == -7);
  }

  DLDataType dtype = {0xEE, 0xEE, 0xEEEE};
  if (dlmap_dtype_parse(text, size, &dtype)) {
    FUZZ_CHECK(dtype.lanes == 1 && dlmap_dtype_width_valid(dtype.code, dtype.bits, NULL));
    FUZZ_CHECK(dlmap_dtype_validate(dtype, NULL) == DLMAP_OK);
  } else {
    FUZZ_CHECK(dtype.code == 0xEE && dtype.bits == 0xEE && dtype.lanes == 0xEEEE);
  }

  const int word = dlmap__platform_from_words(text, size);
  FUZZ_CHECK(word >= -1 && word < DLMAP_PLATFORM_COUNT);

  /* The NUL-terminated entry points see the text up to its first NUL. */
  char *terminated = (char *)malloc(size + 1);
  if (size > 0) memcpy(terminated, data, size);
  terminated[size] = '\0';
  const size_t len = strlen(terminated);
  dlmap_platform from_version = (dlmap_platform)-3;
  dlmap_error err;
  const int32_t status = dlmap_platform_lookup_by_version(terminated, &from_version, &err);
  const int expected = dlmap__platform_from_words(terminated, len);
  if (status == DLMAP_OK) {
    FUZZ_CHECK((int)from_version == expected);
  } else {
    fuzz_check_error(&err, status);
    FUZZ_CHECK(status == DLMAP_ERR_UNKNOWN_GPU_PLATFORM && expected == -1 && (int)from_version == -3);
  }
  /* __dlpack_device__ with the text as the platform, and as a "gpu" platform_version. */
  dlmap_device_query query = dlmap_device_query_default();
  query.num_shards = 1;
  query.has_local_hardware_id = size > 0 && (data[0] & 1);
  query.pinned_host = size > 0 && (data[0] & 2);
  query.local_hardware_id = 3;
  for (int pass = 0; pass < 2; pass++) {
    query.platform = pass == 0 ? terminated : "gpu";
    query.platform_version = terminated;
    int32_t type = -1, id = -1;
    const int32_t s = dlmap_dlpack_device(&query, &type, &id, &err);
    if (s == DLMAP_OK) {
      FUZZ_CHECK(dlmap_device_type_find(type) != NULL);
    } else {
      fuzz_check_error(&err, s);
      FUZZ_CHECK(type == -1 && id == -1);
    }
  }
  free(terminated);
  free(name);
  return 0;
}
