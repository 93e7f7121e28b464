// struct_size, PJRT's way (include/dlmap/exchange.h, src/struct_size.h): a caller writes the end of its header's last
// field (DLMAP_STRUCT_SIZE); the library accepts every size it knows, 0.2.0's sizeof included, reads the fields past
// a caller's size as zero and refuses any other size with invalid_argument.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dlmap/check.h"
#include "dlmap/dlmap.h"
#include "gtest/gtest.h"
#include "src/struct_size.h"

namespace {

// The end of a field, computed here rather than with the header's macro (what a caller does by hand): for the layouts
// released before this header's, whose last fields are history (each struct's current last field is named once, in
// its size macro beside it in the public header).
#define FIELDS_END(type, last) static_cast<uint32_t>(offsetof(type, last) + sizeof(type::last))

bool Knows(const dlmap__layouts &known, uint32_t size) {
  for (size_t i = 0; i < known.count; i++) {
    if (known.layout[i].struct_size == size && known.layout[i].fields_end == size) return true;
  }
  return false;
}

// Every struct of the list (src/struct_size.h), by this header's size of it, which src/struct_size.c checks at compile
// time to be the end of the struct's last field: its _default() writes that size, and the library knows it as a
// layout whose fields end there.
TEST(StructSize, EachStructsDefaultWritesThisHeadersSize) {
  size_t structs = 0;
#define EXPECT_THIS_HEADERS_SIZE(type, size)                                           \
  EXPECT_EQ(type##_default().struct_size, size) << #type;                              \
  EXPECT_LE(size, sizeof(type)) << #type;                                              \
  EXPECT_TRUE(Knows(dlmap__layouts_##type, size)) << #type << ": no layout of " #size; \
  structs++;
  DLMAP__CALLER_STRUCTS(EXPECT_THIS_HEADERS_SIZE)
#undef EXPECT_THIS_HEADERS_SIZE
  EXPECT_GT(structs, 0u);
  EXPECT_LT(DLMAP_ARRAY_STRUCT_SIZE, sizeof(dlmap_array)) << "sizeof counts the tail padding";
}

float g_value = 1.0f;

dlmap_array HostArray(uint32_t struct_size) {
  dlmap_array array = dlmap_array_default();
  array.struct_size = struct_size;
  array.data = &g_value;
  array.dtype.code = kDLFloat;
  array.dtype.bits = 32;
  array.dtype.lanes = 1;
  return array;
}

// Exports a host scalar with these struct sizes and imports it back with that import size; the status of the first
// step that fails, or DLMAP_OK.
int32_t RoundTrip(uint32_t array_size, uint32_t export_size, uint32_t import_size, dlmap_error *err) {
  dlmap_array array = HostArray(array_size);
  dlmap_export_request request = dlmap_export_request_default();
  request.struct_size = export_size;
  request.has_max_version = true;
  request.max_version = dlmap_version_current();
  dlmap_exported out;
  int32_t status = dlmap_export(&array, &request, &out, err);
  if (status != DLMAP_OK) return status;
  dlmap_import_request want = dlmap_import_request_default();
  want.struct_size = import_size;
  dlmap_imported imported;
  status = dlmap_import_versioned(out.versioned, &want, &imported, err);
  if (status != DLMAP_OK) return status;
  EXPECT_EQ(*static_cast<float *>(imported.tensor.data), 1.0f);
  dlmap_imported_release(&imported);
  return DLMAP_OK;
}

// Every size a caller may write today: this header's (DLMAP_*_STRUCT_SIZE, the end of the last field), 0.2.0's
// (sizeof, which its _default() wrote; the same fields) and, for the requests, the sizes before device_allocator was
// appended (issue 64): the end of defer_stream_sync / num_shards, and 0.2.0's sizeof of that layout, which is where
// device_allocator begins.
TEST(StructSize, ThisHeadersSizeAndTheReleasedSizesAreAllAccepted) {
  dlmap_error err;
  EXPECT_EQ(RoundTrip(DLMAP_ARRAY_STRUCT_SIZE, DLMAP_EXPORT_REQUEST_STRUCT_SIZE, DLMAP_IMPORT_REQUEST_STRUCT_SIZE,
                      &err),
            DLMAP_OK)
      << err.message;
  EXPECT_EQ(RoundTrip(sizeof(dlmap_array), FIELDS_END(dlmap_export_request, defer_stream_sync),
                      FIELDS_END(dlmap_import_request, num_shards), &err),
            DLMAP_OK)
      << "a caller built before device_allocator: " << err.message;
  EXPECT_EQ(RoundTrip(sizeof(dlmap_array), static_cast<uint32_t>(offsetof(dlmap_export_request, device_allocator)),
                      static_cast<uint32_t>(offsetof(dlmap_import_request, device_allocator)), &err),
            DLMAP_OK)
      << "a caller built against 0.2.0: " << err.message;

  dlmap_device_query query = dlmap_device_query_default();
  query.struct_size = DLMAP_DEVICE_QUERY_STRUCT_SIZE;
  query.platform = "cpu";
  int32_t type = -1, id = -1;
  EXPECT_EQ(dlmap_dlpack_device(&query, &type, &id, &err), DLMAP_OK) << err.message;
  EXPECT_EQ(type, DLMAP_DEVICE_CPU);
}

TEST(StructSize, UnknownSizesAreInvalidArgument) {
  const uint32_t wrong[] = {0, 4, DLMAP_EXPORT_REQUEST_STRUCT_SIZE - 1, DLMAP_EXPORT_REQUEST_STRUCT_SIZE + 1,
                            static_cast<uint32_t>(sizeof(dlmap_export_request)) + 8};
  for (uint32_t size : wrong) {
    dlmap_error err;
    EXPECT_EQ(RoundTrip(DLMAP_ARRAY_STRUCT_SIZE, size, DLMAP_IMPORT_REQUEST_STRUCT_SIZE, &err),
              DLMAP_ERR_INVALID_ARGUMENT)
        << size;
    EXPECT_NE(std::strstr(err.message, "request->struct_size"), nullptr) << err.message;
  }
  dlmap_device_query query = dlmap_device_query_default();
  query.platform = "cpu";
  query.struct_size = DLMAP_DEVICE_QUERY_STRUCT_SIZE + 8;
  int32_t type = -1, id = -1;
  dlmap_error err;
  EXPECT_EQ(dlmap_dlpack_device(&query, &type, &id, &err), DLMAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(err.message, "query->struct_size"), nullptr) << err.message;
}

// An array of structs is walked by the stride the caller's struct_size implies (rounded up to the alignment), not by
// the struct_size itself: dlmap_array's last field ends 4 bytes before its sizeof.
TEST(StructSize, StreamWaitBatchStridesByTheCallersSizeof) {
  for (uint32_t size : {DLMAP_ARRAY_STRUCT_SIZE, static_cast<uint32_t>(sizeof(dlmap_array))}) {
    std::vector<dlmap_array> arrays(3, HostArray(size));
    size_t waits = 99;
    dlmap_error err;
    EXPECT_EQ(dlmap_stream_wait_batch(arrays.data(), arrays.size(), false, 0, &waits, &err), DLMAP_OK)
        << size << ": " << err.message;
    EXPECT_EQ(waits, 0u);
  }
}

// A newer library reading a caller built against this header: dlmap_export_request with one field appended (the
// next layout, as a future header would declare it). The library of that future knows today's sizes and the new one.
struct export_request_next {
  uint32_t struct_size;
  bool has_max_version;
  dlmap_version max_version;
  bool has_dl_device;
  int32_t dl_device_type;
  int32_t dl_device_id;
  dlmap_copy_mode copy;
  bool has_stream;
  int64_t stream;
  const dlmap_allocator *allocator;
  bool defer_stream_sync;
  const dlmap_device_allocator *device_allocator;
  bool added;  // the field the future appends
};
static_assert(offsetof(export_request_next, device_allocator) == offsetof(dlmap_export_request, device_allocator),
              "the next layout starts with today's fields");

dlmap__layouts NextLayouts(std::vector<dlmap__layout> *rows) {
  const dlmap__layouts &today = dlmap__layouts_dlmap_export_request;
  rows->assign(today.layout, today.layout + today.count);
  rows->push_back({FIELDS_END(export_request_next, added), FIELDS_END(export_request_next, added)});
  return {rows->data(), rows->size()};
}

TEST(StructSize, ANewerLibraryReadsAnOlderCallersMissingFieldsAsZero) {
  std::vector<dlmap__layout> rows;
  const dlmap__layouts next = NextLayouts(&rows);
  // Today's caller, as 0.2.0 (sizeof of its layout) and as this header (DLMAP_STRUCT_SIZE) write it, in memory whose
  // bytes past its fields are garbage (a stack or a heap neighbour): the appended field must read as zero either way.
  for (uint32_t size : {static_cast<uint32_t>(offsetof(dlmap_export_request, device_allocator)),
                        DLMAP_EXPORT_REQUEST_STRUCT_SIZE}) {
    unsigned char memory[sizeof(export_request_next) + 16];
    std::memset(memory, 0xAB, sizeof memory);
    dlmap_export_request caller = dlmap_export_request_default();
    caller.struct_size = size;
    caller.has_stream = true;
    caller.stream = 7;
    caller.defer_stream_sync = true;
    if (size != DLMAP_EXPORT_REQUEST_STRUCT_SIZE) {  // past an older caller's fields: garbage, never read
      caller.device_allocator = reinterpret_cast<const dlmap_device_allocator *>(uintptr_t{0xABAB});
    }
    std::memcpy(memory, &caller, DLMAP_EXPORT_REQUEST_STRUCT_SIZE);  // only its fields: the rest stays garbage
    export_request_next read;
    std::memset(&read, 0xCD, sizeof read);
    ASSERT_TRUE(dlmap__struct_read(memory, &read, sizeof read, &next)) << size;
    EXPECT_FALSE(read.added) << size << ": a field past the caller's layout reads as zero";
    EXPECT_TRUE(read.has_stream && read.stream == 7 && read.defer_stream_sync) << size;
    EXPECT_EQ(read.device_allocator, nullptr) << size;
  }
  // A caller of the next layout is read whole; a size between two layouts is refused.
  export_request_next newer;
  std::memset(&newer, 0, sizeof newer);
  newer.struct_size = FIELDS_END(export_request_next, added);
  newer.added = true;
  export_request_next read;
  ASSERT_TRUE(dlmap__struct_read(&newer, &read, sizeof read, &next));
  EXPECT_TRUE(read.added);
  newer.struct_size += 1;
  EXPECT_FALSE(dlmap__struct_read(&newer, &read, sizeof read, &next));
}

}  // namespace
