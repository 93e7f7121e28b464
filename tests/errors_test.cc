// Tests of src/errors.c (and src/writer.c through it): the error catalogue, kind names, placeholders and message formatting.
#include <climits>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dlmap/dlmap.h"
#include "generated/spec_facts.h"
#include "gtest/gtest.h"
#include "tests/c_callers.h"

namespace {

// Formats code with args into a buffer of cap bytes and returns the text; checks the returned length.
std::string Format(int32_t code, const std::vector<dlmap_arg> &args, size_t cap = DLMAP_MESSAGE_CAPACITY) {
  std::vector<char> buf(cap + 1, '\x7f');
  const size_t n = dlmap_error_format(buf.data(), cap, code, args.empty() ? nullptr : args.data(), args.size());
  std::string text(buf.data());
  EXPECT_EQ(n, text.size()) << "return value must be the length written";
  return text;
}

dlmap_version V(uint32_t major, uint32_t minor) {
  dlmap_version v;
  v.major = major;
  v.minor = minor;
  return v;
}

// Whether text is well-formed UTF-8 (no cut multi-byte sequence).
bool ValidUtf8(const std::string &text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t extra;
    if (c < 0x80) {
      extra = 0;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
    } else {
      return false;
    }
    if (i + extra >= text.size()) return false;  // a sequence cut by the end
    for (size_t k = 1; k <= extra; k++) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += extra + 1;
  }
  return true;
}

// The {name} placeholders of a template ("{{" and "}}" are literal braces), a style ({name:style}) left off.
std::vector<std::string> TemplatePlaceholders(const std::string &tmpl) {
  std::vector<std::string> names;
  for (size_t i = 0; i < tmpl.size(); i++) {
    if (tmpl.compare(i, 2, "{{") == 0 || tmpl.compare(i, 2, "}}") == 0) {
      i++;
      continue;
    }
    if (tmpl[i] == '{') {
      const size_t end = tmpl.find('}', i);
      if (end == std::string::npos) {
        names.push_back("<unterminated>");
        break;
      }
      const std::string field = tmpl.substr(i + 1, end - i - 1);
      names.push_back(field.substr(0, field.find(':')));
      i = end;
    }
  }
  return names;
}

// The template as the formatter prints it when no argument is supplied: placeholders stay {name} (a style is not
// shown), "{{" and "}}" become single braces.
std::string Unescape(const std::string &tmpl) {
  std::string out;
  bool in_field = false, in_style = false;
  for (size_t i = 0; i < tmpl.size(); i++) {
    const bool doubled = (tmpl[i] == '{' || tmpl[i] == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == tmpl[i];
    if (!doubled && tmpl[i] == '{') in_field = true;
    if (!doubled && tmpl[i] == '}') in_field = in_style = false;
    if (in_field && tmpl[i] == ':') in_style = true;
    if (!in_style) out += tmpl[i];
    if (doubled) i++;
  }
  return out;
}

int PlaceholderByName(const std::string &name) {
  for (int p = 0; p < DLMAP_ARG_COUNT; p++) {
    const char *n = dlmap_placeholder_name(static_cast<dlmap_placeholder>(p));
    if (n != nullptr && name == n) return p;
  }
  return -1;
}

const int64_t kShape[] = {2, 3};

// One argument for placeholder p, of the type the spec declares for it, with a plausible value.
dlmap_arg ArgFor(dlmap_placeholder p) {
  dlmap_arg_type type = DLMAP_ARG_TYPE_STR;
  EXPECT_TRUE(dlmap_placeholder_type(p, &type));
  switch (type) {
    case DLMAP_ARG_TYPE_INT:
      return dlmap_arg_int(p, 42);
    case DLMAP_ARG_TYPE_UINT:
      return dlmap_arg_uint(p, 7);
    case DLMAP_ARG_TYPE_HEX:
      return dlmap_arg_hex(p, 0xff);
    case DLMAP_ARG_TYPE_PTR:
      return dlmap_arg_ptr(p, reinterpret_cast<const void *>(uintptr_t{0x1000}));
    case DLMAP_ARG_TYPE_STR:
      return dlmap_arg_str(p, "text");
    case DLMAP_ARG_TYPE_VERSION:
      return dlmap_arg_version(p, V(1, 3));
    case DLMAP_ARG_TYPE_INTS:
      return dlmap_arg_ints(p, kShape, 2);
    case DLMAP_ARG_TYPE_DEVICE: {
      DLDevice device;
      device.device_type = kDLCPU;
      device.device_id = 0;
      return dlmap_arg_device(p, device);
    }
  }
  ADD_FAILURE() << "placeholder " << p << " has an unknown type " << type;
  return dlmap_arg_str(p, "?");
}

// ---- lookup -------------------------------------------------------------------------------------

TEST(ErrorInfo, ByCode) {
  const dlmap_error_info *info = dlmap_error_describe(DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->code, 201);
  EXPECT_STREQ(info->id, "export_unsupported_device_type");
  EXPECT_EQ(info->kind, DLMAP_KIND_BUFFER_ERROR);
  EXPECT_STREQ(info->message_template,
               "The device specification passed to to_dlpack contains an unsupported device type "
               "(DLDeviceType: {dl_device_type})");
  EXPECT_EQ(info->args_mask, uint64_t{1} << DLMAP_ARG_DL_DEVICE_TYPE);
  EXPECT_STREQ(info->meaning,
               "The dl_device requested from __dlpack__ names a device type this build's spec does not know or maps "
               "to no platform.");

  info = dlmap_error_describe(DLMAP_ERR_DLPACK_SHARDED);
  EXPECT_STREQ(info->id, "dlpack_sharded");
  EXPECT_EQ(info->args_mask, 0u);

  info = dlmap_error_describe(704);
  EXPECT_STREQ(info->id, "name_unknown");
  EXPECT_EQ(info->kind, DLMAP_KIND_VALUE_ERROR);
}

TEST(ErrorInfo, NumericCodesAreStable) {
  // Codes are part of the ABI: written out by hand, never read back from the table.
  EXPECT_EQ(DLMAP_OK, 0);
  EXPECT_EQ(DLMAP_ERR_MAX_VERSION_TOO_OLD, 101);
  EXPECT_EQ(DLMAP_ERR_FLAGS_UNKNOWN, 107);
  EXPECT_EQ(DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, 201);
  EXPECT_EQ(DLMAP_ERR_UNKNOWN_GPU_PLATFORM, 206);
  EXPECT_EQ(DLMAP_ERR_DEVICE_TYPE_UNKNOWN, 210);
  EXPECT_EQ(DLMAP_ERR_PLATFORM_NOT_EXCHANGEABLE, 213);
  EXPECT_EQ(DLMAP_ERR_IMPORT_UNSUPPORTED_TARGET_DEVICE, 214);
  EXPECT_EQ(DLMAP_ERR_DTYPE_CODE_UNKNOWN, 301);
  EXPECT_EQ(DLMAP_ERR_SUBBYTE_PADDING_INVALID, 304);
  EXPECT_EQ(DLMAP_ERR_READ_ONLY_NOT_WRITABLE, 411);
  EXPECT_EQ(DLMAP_ERR_STREAM_INVALID, 502);
  EXPECT_EQ(DLMAP_ERR_NOT_IMPLEMENTED, 603);
  EXPECT_EQ(DLMAP_ERR_NAME_UNKNOWN, 704);
  EXPECT_EQ(DLMAP_ERR_DEVICE_REPORT_MISMATCH, 215);
  EXPECT_EQ(DLMAP_ERR_SOURCE_NOT_EXCHANGEABLE, 216);
  EXPECT_EQ(DLMAP_ERR_TPU_MEMORY_NOT_PINNED, 217);
  EXPECT_EQ(DLMAP_ERR_FROM_DLPACK_MULTI_DEVICE, 218);
  EXPECT_EQ(DLMAP_ERR_DTYPE_BITS_NOT_WHOLE_BYTES, 305);
  EXPECT_EQ(DLMAP_ERR_DTYPE_LANES_NOT_ONE, 306);
}

TEST(ErrorInfo, ById) {
  const dlmap_error_info *info = dlmap_error_find_by_id("unknown_gpu_platform");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->code, 206);
  EXPECT_EQ(info, dlmap_error_describe(206));
  EXPECT_EQ(dlmap_error_find_by_id("stream_invalid")->code, 502);
  EXPECT_EQ(dlmap_error_find_by_id("nope"), nullptr);
  EXPECT_EQ(dlmap_error_find_by_id(""), nullptr);
  EXPECT_EQ(dlmap_error_find_by_id("unknown"), nullptr) << "the fallback is not a catalogue entry";
  EXPECT_EQ(dlmap_error_find_by_id("STREAM_INVALID"), nullptr) << "ids are exact";
  EXPECT_EQ(dlmap_error_find_by_id("stream_invalid "), nullptr);
  EXPECT_EQ(dlmap_error_find_by_id(nullptr), nullptr);
}

TEST(ErrorInfo, ByIndex) {
  ASSERT_NE(dlmap_error_at(0), nullptr);
  EXPECT_EQ(dlmap_error_at(0)->code, 101);
  EXPECT_STREQ(dlmap_error_at(0)->id, "max_version_too_old");
  ASSERT_NE(dlmap_error_at(DLMAP_ERROR_COUNT - 1), nullptr);
  EXPECT_STREQ(dlmap_error_at(DLMAP_ERROR_COUNT - 1)->id, spec_facts_errors[SPEC_FACTS_ERROR_COUNT - 1].id);
  EXPECT_EQ(dlmap_error_at(DLMAP_ERROR_COUNT), nullptr);
  EXPECT_EQ(dlmap_error_at(SIZE_MAX), nullptr);
}

// Whether the spec's catalogue has an error with this code.
bool SpecCode(int32_t code) {
  for (const spec_facts_error &f : spec_facts_errors) {
    if (f.code == code) return true;
  }
  return false;
}

TEST(ErrorInfo, UnknownCodeFallback) {
  for (int32_t code : {0, -1, 1, 100, 108, 200, 299, 999, 65535, INT32_MIN, INT32_MAX}) {
    if (SpecCode(code)) continue;
    SCOPED_TRACE(code);
    const dlmap_error_info *info = dlmap_error_describe(code);
    ASSERT_NE(info, nullptr);
    EXPECT_STREQ(info->id, "unknown");
    EXPECT_EQ(info->kind, DLMAP_KIND_COUNT);
    EXPECT_STREQ(dlmap_error_kind_name(info->kind), "RuntimeError");
    EXPECT_EQ(info->args_mask, 0u);
    EXPECT_NE(info->meaning, nullptr);
    EXPECT_NE(info->when, nullptr);
    EXPECT_NE(info->fix, nullptr);
    EXPECT_NE(info->message_template, nullptr);
  }
  EXPECT_EQ(Format(9999, {}), "unknown dlmap status code 9999");
  EXPECT_EQ(Format(-7, {}), "unknown dlmap status code -7");
  EXPECT_EQ(Format(INT32_MIN, {}), "unknown dlmap status code -2147483648");
}

TEST(ErrorInfo, Related) {
  const dlmap_error_info *out[8] = {};
  ASSERT_EQ(dlmap_error_related(DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, out, 8), 3u);
  EXPECT_STREQ(out[0]->id, "import_unsupported_device_type");
  EXPECT_STREQ(out[1]->id, "platform_unavailable");
  EXPECT_STREQ(out[2]->id, "device_type_unknown");
  EXPECT_EQ(out[3], nullptr);

  ASSERT_EQ(dlmap_error_related(DLMAP_ERR_VERSION_MAJOR_UNSUPPORTED, out, 8), 3u);
  EXPECT_EQ(out[0]->code, 101);
  EXPECT_EQ(out[1]->code, 103);
  EXPECT_EQ(out[2]->code, 104);

  ASSERT_EQ(dlmap_error_related(DLMAP_ERR_STREAM_INVALID, out, 8), 1u);
  EXPECT_STREQ(out[0]->id, "stream_sync_failed");
}

TEST(ErrorInfo, RelatedRespectsCapacity) {
  const dlmap_error_info *out[2] = {nullptr, nullptr};
  // platform_unavailable relates to three errors; only cap are written, the total is returned.
  EXPECT_EQ(dlmap_error_related(DLMAP_ERR_PLATFORM_UNAVAILABLE, out, 1), 3u);
  ASSERT_NE(out[0], nullptr);
  EXPECT_STREQ(out[0]->id, "export_unsupported_device_type");
  EXPECT_EQ(out[1], nullptr);
  EXPECT_EQ(dlmap_error_related(DLMAP_ERR_PLATFORM_UNAVAILABLE, nullptr, 0), 3u);
  EXPECT_EQ(dlmap_error_related(DLMAP_ERR_PLATFORM_UNAVAILABLE, nullptr, 5), 3u);
}

TEST(ErrorInfo, NoRelated) {
  const dlmap_error_info *out[4] = {};
  EXPECT_EQ(dlmap_error_related(DLMAP_ERR_NOT_IMPLEMENTED, out, 4), 0u);
  EXPECT_EQ(dlmap_error_related(DLMAP_OK, out, 4), 0u);
  EXPECT_EQ(dlmap_error_related(9999, out, 4), 0u);
  EXPECT_EQ(dlmap_error_related(-1, out, 4), 0u);
  EXPECT_EQ(out[0], nullptr);
}

// ---- kinds and placeholders ------------------------------------------------------------------------

TEST(ErrorKind, EverySpecKind) {
  ASSERT_EQ(DLMAP_KIND_COUNT, SPEC_FACTS_EXCEPTION_KIND_COUNT);
  for (int k = 0; k < DLMAP_KIND_COUNT; k++) {
    EXPECT_STREQ(dlmap_error_kind_name(static_cast<dlmap_error_kind>(k)), spec_facts_exception_kinds[k].name);
  }
}

TEST(ErrorKind, Names) {
  EXPECT_STREQ(dlmap_error_kind_name(DLMAP_KIND_BUFFER_ERROR), "BufferError");
  EXPECT_STREQ(dlmap_error_kind_name(DLMAP_KIND_TYPE_ERROR), "TypeError");
  EXPECT_STREQ(dlmap_error_kind_name(DLMAP_KIND_VALUE_ERROR), "ValueError");
  EXPECT_STREQ(dlmap_error_kind_name(DLMAP_KIND_ATTRIBUTE_ERROR), "AttributeError");
  EXPECT_STREQ(dlmap_error_kind_name(DLMAP_KIND_RUNTIME_ERROR), "RuntimeError");
  EXPECT_STREQ(dlmap_error_kind_name(DLMAP_KIND_MEMORY_ERROR), "MemoryError");
  EXPECT_STREQ(dlmap_error_kind_name(DLMAP_KIND_NOT_IMPLEMENTED_ERROR), "NotImplementedError");
  EXPECT_STREQ(dlmap_error_kind_name(DLMAP_KIND_COUNT), "RuntimeError");
  EXPECT_STREQ(c_error_kind_name(99), "RuntimeError");
  EXPECT_STREQ(c_error_kind_name(-1), "RuntimeError");
  EXPECT_STREQ(c_error_kind_name(0), "BufferError");
}

TEST(ErrorKind, OfErrors) {
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE)->kind, DLMAP_KIND_BUFFER_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_FROM_DLPACK_MISSING_METHODS)->kind, DLMAP_KIND_ATTRIBUTE_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_DEVICE_TYPE_UNKNOWN)->kind, DLMAP_KIND_VALUE_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_STREAM_INVALID)->kind, DLMAP_KIND_VALUE_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_STREAM_SYNC_FAILED)->kind, DLMAP_KIND_RUNTIME_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_OUT_OF_MEMORY)->kind, DLMAP_KIND_MEMORY_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_NOT_IMPLEMENTED)->kind, DLMAP_KIND_NOT_IMPLEMENTED_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_ARGUMENT_TYPE_INVALID)->kind, DLMAP_KIND_TYPE_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_IMPORT_COPY_TO_DEVICE_FORBIDDEN)->kind, DLMAP_KIND_VALUE_ERROR);
  EXPECT_EQ(dlmap_error_describe(DLMAP_ERR_EXPORT_COPY_TO_DEVICE_FORBIDDEN)->kind, DLMAP_KIND_BUFFER_ERROR);
}

TEST(Placeholder, NamesAndTypes) {
  struct Row {
    dlmap_placeholder p;
    const char *name;
    dlmap_arg_type type;
  };
  const Row rows[] = {
      {DLMAP_ARG_DL_DEVICE_TYPE, "dl_device_type", DLMAP_ARG_TYPE_INT},
      {DLMAP_ARG_DEVICE_TYPE_NAME, "device_type_name", DLMAP_ARG_TYPE_STR},
      {DLMAP_ARG_PLATFORM_VERSION, "platform_version", DLMAP_ARG_TYPE_STR},
      {DLMAP_ARG_MIN_VERSION, "min_version", DLMAP_ARG_TYPE_VERSION},
      {DLMAP_ARG_CODE, "code", DLMAP_ARG_TYPE_UINT},
      {DLMAP_ARG_FLAGS, "flags", DLMAP_ARG_TYPE_HEX},
      {DLMAP_ARG_UNKNOWN_FLAGS, "unknown_flags", DLMAP_ARG_TYPE_HEX},
      {DLMAP_ARG_SHAPE, "shape", DLMAP_ARG_TYPE_INTS},
      {DLMAP_ARG_STRIDES, "strides", DLMAP_ARG_TYPE_INTS},
      {DLMAP_ARG_POINTER, "pointer", DLMAP_ARG_TYPE_PTR},
      {DLMAP_ARG_STREAM, "stream", DLMAP_ARG_TYPE_INT},
      {DLMAP_ARG_NAME, "name", DLMAP_ARG_TYPE_STR},
      {DLMAP_ARG_DEVICE, "device", DLMAP_ARG_TYPE_DEVICE},
      {DLMAP_ARG_SOURCE_DEVICE, "source_device", DLMAP_ARG_TYPE_DEVICE},
  };
  for (const Row &row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_STREQ(dlmap_placeholder_name(row.p), row.name);
    dlmap_arg_type type = row.type == DLMAP_ARG_TYPE_INT ? DLMAP_ARG_TYPE_STR : DLMAP_ARG_TYPE_INT;
    EXPECT_TRUE(dlmap_placeholder_type(row.p, &type));
    EXPECT_EQ(type, row.type);
  }
  EXPECT_TRUE(dlmap_placeholder_type(DLMAP_ARG_NAME, nullptr));
}

TEST(Placeholder, EverySpecPlaceholder) {
  ASSERT_EQ(DLMAP_ARG_COUNT, SPEC_FACTS_PLACEHOLDER_COUNT);
  for (int p = 0; p < DLMAP_ARG_COUNT; p++) {
    const spec_facts_placeholder &f = spec_facts_placeholders[p];
    SCOPED_TRACE(f.name);
    EXPECT_STREQ(dlmap_placeholder_name(static_cast<dlmap_placeholder>(p)), f.name);
    dlmap_arg_type type = DLMAP_ARG_TYPE_INTS;
    ASSERT_TRUE(dlmap_placeholder_type(static_cast<dlmap_placeholder>(p), &type));
    const std::string want = f.type;
    const dlmap_arg_type expected = want == "int"       ? DLMAP_ARG_TYPE_INT
                                    : want == "uint"    ? DLMAP_ARG_TYPE_UINT
                                    : want == "hex"     ? DLMAP_ARG_TYPE_HEX
                                    : want == "ptr"     ? DLMAP_ARG_TYPE_PTR
                                    : want == "str"     ? DLMAP_ARG_TYPE_STR
                                    : want == "version" ? DLMAP_ARG_TYPE_VERSION
                                    : want == "device"  ? DLMAP_ARG_TYPE_DEVICE
                                                        : DLMAP_ARG_TYPE_INTS;
    EXPECT_EQ(type, expected) << want;
  }
}

// A device placeholder prints its type's enumerator and its id (JAX's J-E9 text, unchanged by the device type); an
// unknown type prints as dlmap_device_type_name names it.
TEST(Placeholder, DevicePrintsEnumeratorAndId) {
  dlmap_error err;
  DLDevice device;
  device.device_type = kDLCUDA;
  device.device_id = 1;
  dlmap_raise_source_not_exchangeable(&err, device);
  EXPECT_STREQ(err.message, "Device (kDLCUDA, 1) cannot be used as a DLPack device.");
  device.device_type = static_cast<DLDeviceType>(99999);
  device.device_id = -7;
  dlmap_raise_source_not_exchangeable(&err, device);
  EXPECT_EQ(std::string(err.message),
            std::string("Device (") + dlmap_device_type_name(99999) + ", -7) cannot be used as a DLPack device.");
}

TEST(Placeholder, OutOfRange) {
  dlmap_arg_type type = DLMAP_ARG_TYPE_HEX;
  EXPECT_EQ(dlmap_placeholder_name(DLMAP_ARG_COUNT), nullptr);
  EXPECT_FALSE(dlmap_placeholder_type(DLMAP_ARG_COUNT, &type));
  EXPECT_EQ(type, DLMAP_ARG_TYPE_HEX) << "out untouched";
  for (int p : {-1, static_cast<int>(DLMAP_ARG_COUNT), 63, 64, 1000, INT_MIN, INT_MAX}) {
    int out = -12345;
    EXPECT_EQ(c_placeholder_name(p), nullptr) << p;
    EXPECT_FALSE(c_placeholder_type(p, &out)) << p;
    EXPECT_EQ(out, -12345) << "out untouched";
  }
}

// ---- exact messages ------------------------------------------------------------------------------------

TEST(FormatMessage, SeedExportUnsupportedDeviceType) {
  const dlmap_arg arg = dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 200);
  char buf[DLMAP_MESSAGE_CAPACITY];
  const size_t n = dlmap_error_format(buf, sizeof buf, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, &arg, 1);
  const char *expected =
      "The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: 200)";
  EXPECT_STREQ(buf, expected);
  EXPECT_EQ(n, strlen(expected));
}

TEST(FormatMessage, ExactTexts) {
  EXPECT_EQ(Format(DLMAP_ERR_DLPACK_SHARDED, {}), "__dlpack__ only supported for unsharded arrays.");
  EXPECT_EQ(Format(DLMAP_ERR_UNKNOWN_GPU_PLATFORM, {dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, "cuda-ish")}),
            "Unknown GPU platform for __dlpack__: cuda-ish");
  EXPECT_EQ(Format(DLMAP_ERR_NO_LOCAL_HARDWARE_ID, {}), "Couldn't get local_hardware_id for __dlpack__");
  EXPECT_EQ(Format(DLMAP_ERR_FROM_DLPACK_MISSING_METHODS, {}),
            "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.");
  EXPECT_EQ(Format(DLMAP_ERR_TO_DLPACK_MULTI_DEVICE, {dlmap_arg_int(DLMAP_ARG_NUM_DEVICES, 8)}),
            "to_dlpack can only pack a dlpack tensor from an array on a singular device, but an array with a "
            "Sharding over 8 devices was provided.");
  EXPECT_EQ(Format(DLMAP_ERR_MAX_VERSION_TOO_OLD,
                   {dlmap_arg_version(DLMAP_ARG_MIN_VERSION, V(0, 5)), dlmap_arg_version(DLMAP_ARG_MAX_VERSION, V(0, 4))}),
            "dlmap does not support any DLPack version below 0.5 but version 0.4 was requested.");
  EXPECT_EQ(Format(DLMAP_ERR_IMPORT_UNSUPPORTED_DEVICE_TYPE,
                   {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 9), dlmap_arg_str(DLMAP_ARG_ARRAY, "f32[2,3]")}),
            "Array passed to from_dlpack is on unsupported device type (DLDeviceType: 9, array: f32[2,3])");
  EXPECT_EQ(Format(DLMAP_ERR_DEVICE_ID_OUT_OF_RANGE,
                   {dlmap_arg_int(DLMAP_ARG_DEVICE_ID, 3), dlmap_arg_str(DLMAP_ARG_PLATFORM, "cuda"),
                    dlmap_arg_int(DLMAP_ARG_DEVICE_COUNT, 2)}),
            "Device id 3 is out of range for platform cuda, which has 2 device(s).");
  EXPECT_EQ(Format(DLMAP_ERR_BACKEND_CALL_FAILED,
                   {dlmap_arg_str(DLMAP_ARG_CALL, "cudaMalloc"), dlmap_arg_str(DLMAP_ARG_REASON, "out of memory"),
                    dlmap_arg_str(DLMAP_ARG_PLATFORM, "cuda")}),
            "cuda runtime call cudaMalloc failed: out of memory")
      << "args are matched by name, not position";
  EXPECT_EQ(Format(DLMAP_ERR_CAPSULE_CONSUMED,
                   {dlmap_arg_str(DLMAP_ARG_EXPECTED, "dltensor"), dlmap_arg_str(DLMAP_ARG_GOT, "used_dltensor")}),
            "DLPack tensor must be a capsule with name \"dltensor\", got \"used_dltensor\". Note that a DLPack tensor "
            "may be consumed at most once.");
  EXPECT_EQ(Format(DLMAP_ERR_FLAGS_UNKNOWN,
                   {dlmap_arg_hex(DLMAP_ARG_FLAGS, 0x9), dlmap_arg_hex(DLMAP_ARG_UNKNOWN_FLAGS, 0x8)}),
            "The DLPack tensor's flags 0x9 contain bits this build does not know (0x8).");
  const int64_t shape[] = {2, 3};
  const int64_t strides[] = {1, 2};
  EXPECT_EQ(Format(DLMAP_ERR_STRIDES_NOT_COMPACT,
                   {dlmap_arg_ints(DLMAP_ARG_SHAPE, shape, 2), dlmap_arg_ints(DLMAP_ARG_STRIDES, strides, 2)}),
            "Only DLPack tensors with trivial (compact) striding are supported; i.e., tensors whose striding "
            "represents a transposition of the underlying buffer but not broadcasting. Dimensions were: [2, 3], "
            "strides were [1, 2].");
  EXPECT_EQ(Format(DLMAP_ERR_UNALIGNED_DATA,
                   {dlmap_arg_ptr(DLMAP_ARG_POINTER, reinterpret_cast<const void *>(uintptr_t{0x1001})),
                    dlmap_arg_uint(DLMAP_ARG_ALIGNMENT, 64)}),
            "Can't create a view of buffer with unaligned data, ptr: 0x1001 is not aligned to 64 bytes.");
  EXPECT_EQ(Format(DLMAP_ERR_NAME_UNKNOWN, {dlmap_arg_str(DLMAP_ARG_WHAT, "device type"),
                                            dlmap_arg_str(DLMAP_ARG_NAME, "cud")}),
            "Unknown device type name 'cud'");
  EXPECT_EQ(Format(DLMAP_ERR_DTYPE_CODE_UNKNOWN, {dlmap_arg_uint(DLMAP_ARG_CODE, 200)}),
            "Unknown or invalid DLPack type code 200");
}

// ---- every argument type --------------------------------------------------------------------------------

std::string DeviceTypeMessage(const std::string &value) {
  return "The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: " + value +
         ")";
}

TEST(FormatArgs, Int) {
  const int32_t code = DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE;
  EXPECT_EQ(Format(code, {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 0)}), DeviceTypeMessage("0"));
  EXPECT_EQ(Format(code, {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, -1)}), DeviceTypeMessage("-1"));
  EXPECT_EQ(Format(code, {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, INT64_MIN)}),
            DeviceTypeMessage("-9223372036854775808"));
  EXPECT_EQ(Format(code, {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, INT64_MAX)}),
            DeviceTypeMessage("9223372036854775807"));
  EXPECT_EQ(Format(code, {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 1000000)}), DeviceTypeMessage("1000000"));
}

TEST(FormatArgs, Uint) {
  const int32_t code = DLMAP_ERR_DTYPE_CODE_UNKNOWN;
  EXPECT_EQ(Format(code, {dlmap_arg_uint(DLMAP_ARG_CODE, 0)}), "Unknown or invalid DLPack type code 0");
  EXPECT_EQ(Format(code, {dlmap_arg_uint(DLMAP_ARG_CODE, 10)}), "Unknown or invalid DLPack type code 10");
  EXPECT_EQ(Format(code, {dlmap_arg_uint(DLMAP_ARG_CODE, UINT64_MAX)}),
            "Unknown or invalid DLPack type code 18446744073709551615");
}

TEST(FormatArgs, Hex) {
  const int32_t code = DLMAP_ERR_FLAGS_UNKNOWN;
  EXPECT_EQ(Format(code, {dlmap_arg_hex(DLMAP_ARG_FLAGS, 0), dlmap_arg_hex(DLMAP_ARG_UNKNOWN_FLAGS, 0xABCDEF)}),
            "The DLPack tensor's flags 0x0 contain bits this build does not know (0xabcdef).");
  EXPECT_EQ(Format(code, {dlmap_arg_hex(DLMAP_ARG_FLAGS, UINT64_MAX),
                          dlmap_arg_hex(DLMAP_ARG_UNKNOWN_FLAGS, uint64_t{1} << 40)}),
            "The DLPack tensor's flags 0xffffffffffffffff contain bits this build does not know (0x10000000000).");
}

TEST(FormatArgs, Ptr) {
  const int32_t code = DLMAP_ERR_BYTE_OFFSET_OVERFLOW;
  EXPECT_EQ(Format(code, {dlmap_arg_uint(DLMAP_ARG_BYTE_OFFSET, 16), dlmap_arg_ptr(DLMAP_ARG_POINTER, nullptr)}),
            "byte_offset 16 added to data pointer 0x0 overflows the address space");
  EXPECT_EQ(Format(code, {dlmap_arg_uint(DLMAP_ARG_BYTE_OFFSET, UINT64_MAX),
                          dlmap_arg_ptr(DLMAP_ARG_POINTER, reinterpret_cast<const void *>(uintptr_t{0xdeadbeef}))}),
            "byte_offset 18446744073709551615 added to data pointer 0xdeadbeef overflows the address space");
  EXPECT_EQ(Format(code, {dlmap_arg_uint(DLMAP_ARG_BYTE_OFFSET, 1),
                          dlmap_arg_ptr(DLMAP_ARG_POINTER, reinterpret_cast<const void *>(UINTPTR_MAX))}),
            "byte_offset 1 added to data pointer 0xffffffffffffffff overflows the address space");
}

TEST(FormatArgs, Str) {
  const int32_t code = DLMAP_ERR_UNKNOWN_GPU_PLATFORM;
  EXPECT_EQ(Format(code, {dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, nullptr)}),
            "Unknown GPU platform for __dlpack__: (null)");
  EXPECT_EQ(Format(code, {dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, "")}), "Unknown GPU platform for __dlpack__: ");
  EXPECT_EQ(Format(code, {dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, "{platform_version}")}),
            "Unknown GPU platform for __dlpack__: {platform_version}")
      << "argument text is copied, never re-interpreted";
  EXPECT_EQ(Format(code, {dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, "%s %n\x01\x02")}),
            "Unknown GPU platform for __dlpack__: %s %n\x01\x02");
}

TEST(FormatArgs, Version) {
  const int32_t code = DLMAP_ERR_VERSION_MAJOR_UNSUPPORTED;
  EXPECT_EQ(Format(code, {dlmap_arg_version(DLMAP_ARG_VERSION, V(2, 0)),
                          dlmap_arg_version(DLMAP_ARG_SUPPORTED_VERSION, V(1, 3))}),
            "The DLPack tensor has version 2.0, whose major version this build cannot read (it supports up to 1.3); "
            "the tensor was released.");
  EXPECT_EQ(Format(code, {dlmap_arg_version(DLMAP_ARG_VERSION, V(UINT32_MAX, UINT32_MAX)),
                          dlmap_arg_version(DLMAP_ARG_SUPPORTED_VERSION, V(0, 0))}),
            "The DLPack tensor has version 4294967295.4294967295, whose major version this build cannot read (it "
            "supports up to 0.0); the tensor was released.");
}

std::string OverflowMessage(const std::string &shape, const std::string &strides) {
  return "The DLPack tensor's element count or byte extent overflows (shape [" + shape + "], strides [" + strides +
         "])";
}

TEST(FormatArgs, Ints) {
  const int32_t code = DLMAP_ERR_SIZE_OVERFLOW;
  const int64_t three[] = {2, 3, 4};
  const int64_t extremes[] = {INT64_MIN, -1, 0, INT64_MAX};
  const int64_t one[] = {7};
  EXPECT_EQ(Format(code, {dlmap_arg_ints(DLMAP_ARG_SHAPE, three, 3), dlmap_arg_ints(DLMAP_ARG_STRIDES, nullptr, 3)}),
            OverflowMessage("2, 3, 4", "(null)"));
  EXPECT_EQ(Format(code, {dlmap_arg_ints(DLMAP_ARG_SHAPE, extremes, 4), dlmap_arg_ints(DLMAP_ARG_STRIDES, one, 1)}),
            OverflowMessage("-9223372036854775808, -1, 0, 9223372036854775807", "7"));
  EXPECT_EQ(Format(code, {dlmap_arg_ints(DLMAP_ARG_SHAPE, three, 0), dlmap_arg_ints(DLMAP_ARG_STRIDES, nullptr, 0)}),
            OverflowMessage("", "(null)"));
  EXPECT_EQ(Format(code, {dlmap_arg_ints(DLMAP_ARG_SHAPE, three, -5), dlmap_arg_ints(DLMAP_ARG_STRIDES, three, 2)}),
            OverflowMessage("", "2, 3"))
      << "a negative count prints no items";
}

TEST(FormatArgs, MissingArgShowsPlaceholder) {
  EXPECT_EQ(Format(DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, {}), DeviceTypeMessage("{dl_device_type}"));
  // An argument for another placeholder does not stand in.
  EXPECT_EQ(Format(DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, {dlmap_arg_int(DLMAP_ARG_DEVICE_ID, 5)}),
            DeviceTypeMessage("{dl_device_type}"));
  EXPECT_EQ(Format(DLMAP_ERR_DEVICE_TYPE_NOT_IN_VERSION, {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 14)}),
            "Device type {device_type_name} (14) cannot be expressed in DLPack {version}; it was introduced in "
            "{introduced}.");
  // args == NULL with nargs > 0, and args != NULL with nargs == 0, both mean "no arguments".
  char buf[256];
  dlmap_error_format(buf, sizeof buf, DLMAP_ERR_UNKNOWN_GPU_PLATFORM, nullptr, 3);
  EXPECT_STREQ(buf, "Unknown GPU platform for __dlpack__: {platform_version}");
  const dlmap_arg arg = dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, "cuda");
  dlmap_error_format(buf, sizeof buf, DLMAP_ERR_UNKNOWN_GPU_PLATFORM, &arg, 0);
  EXPECT_STREQ(buf, "Unknown GPU platform for __dlpack__: {platform_version}");
}

// ---- truncation -------------------------------------------------------------------------------------------

constexpr size_t kGuard = 32;
constexpr char kCanary = '\xA5';

// Formats into a buffer of cap bytes surrounded by guard bytes; fails if a guard byte changed.
std::string FormatGuarded(size_t cap, int32_t code, const std::vector<dlmap_arg> &args, size_t *returned) {
  std::vector<char> block(kGuard + cap + kGuard, kCanary);
  char *buf = block.data() + kGuard;
  *returned = dlmap_error_format(buf, cap, code, args.empty() ? nullptr : args.data(), args.size());
  for (size_t i = 0; i < kGuard; i++) {
    EXPECT_EQ(block[i], kCanary) << "write before the buffer at -" << (kGuard - i) << " (cap " << cap << ")";
    EXPECT_EQ(block[kGuard + cap + i], kCanary) << "write past the buffer at +" << i << " (cap " << cap << ")";
  }
  if (cap == 0) {
    return std::string();
  }
  const void *nul = memchr(buf, '\0', cap);
  EXPECT_NE(nul, nullptr) << "not NUL-terminated within cap " << cap;
  return nul != nullptr ? std::string(buf) : std::string(buf, cap);
}

TEST(Truncation, TinyBuffersNeverOverflow) {
  const std::vector<dlmap_arg> args = {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 200)};
  const std::string full = DeviceTypeMessage("200");
  ASSERT_EQ(full.size(), 100u);
  for (size_t cap : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5}, size_t{10}, size_t{50},
                     size_t{99}, size_t{100}, size_t{101}, size_t{102}, size_t{511}}) {
    SCOPED_TRACE(cap);
    size_t n = 99999;
    const std::string text = FormatGuarded(cap, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, args, &n);
    EXPECT_EQ(n, text.size());
    if (cap == 0) {
      EXPECT_EQ(n, 0u);
    } else if (full.size() < cap) {
      EXPECT_EQ(text, full);
    } else if (cap < 4) {
      EXPECT_EQ(text, full.substr(0, cap - 1)) << "no room for an ellipsis: a plain cut";
    } else {
      EXPECT_EQ(text.size(), cap - 1);
      EXPECT_EQ(text, full.substr(0, cap - 4) + "...");
    }
  }
}

TEST(Truncation, ExactCapacities) {
  size_t n = 0;
  const std::vector<dlmap_arg> none;
  EXPECT_EQ(FormatGuarded(4, DLMAP_ERR_DLPACK_SHARDED, none, &n), "...");
  EXPECT_EQ(FormatGuarded(10, DLMAP_ERR_DLPACK_SHARDED, none, &n), "__dlpa...");
  EXPECT_EQ(n, 9u);
  EXPECT_EQ(FormatGuarded(2, DLMAP_ERR_DLPACK_SHARDED, none, &n), "_");
  EXPECT_EQ(FormatGuarded(1, DLMAP_ERR_DLPACK_SHARDED, none, &n), "");
  EXPECT_EQ(n, 0u);
  // Cut inside an argument, inside a {name} placeholder and inside an unknown-code message.
  EXPECT_EQ(FormatGuarded(10, DLMAP_ERR_UNKNOWN_GPU_PLATFORM, {dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, "x")}, &n),
            "Unknow...");
  EXPECT_EQ(FormatGuarded(42, DLMAP_ERR_UNKNOWN_GPU_PLATFORM, none, &n),
            "Unknown GPU platform for __dlpack__: {...");
  EXPECT_EQ(FormatGuarded(10, 9999, none, &n), "unknow...");
  EXPECT_EQ(FormatGuarded(43, DLMAP_ERR_UNKNOWN_GPU_PLATFORM, none, &n),
            "Unknown GPU platform for __dlpack__: {p...");
}

TEST(Truncation, NullBufferWithZeroCapacity) {
  const dlmap_arg arg = dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 200);
  EXPECT_EQ(dlmap_error_format(nullptr, 0, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, &arg, 1), 0u);
  EXPECT_EQ(dlmap_error_format(nullptr, 0, 9999, nullptr, 0), 0u);
}

TEST(Truncation, EveryCapacityOfEveryArgumentType) {
  // Long lists, long strings and big numbers, cut at every length.
  const int64_t items[] = {INT64_MIN, 1, 22, 333, INT64_MAX};
  const std::vector<std::pair<int32_t, std::vector<dlmap_arg>>> cases = {
      {DLMAP_ERR_SIZE_OVERFLOW, {dlmap_arg_ints(DLMAP_ARG_SHAPE, items, 5), dlmap_arg_ints(DLMAP_ARG_STRIDES, items, 5)}},
      {DLMAP_ERR_FLAGS_UNKNOWN,
       {dlmap_arg_hex(DLMAP_ARG_FLAGS, UINT64_MAX), dlmap_arg_hex(DLMAP_ARG_UNKNOWN_FLAGS, UINT64_MAX)}},
      {DLMAP_ERR_VERSION_MAJOR_UNSUPPORTED,
       {dlmap_arg_version(DLMAP_ARG_VERSION, V(UINT32_MAX, 7)),
        dlmap_arg_version(DLMAP_ARG_SUPPORTED_VERSION, V(1, UINT32_MAX))}},
      {DLMAP_ERR_BYTE_OFFSET_OVERFLOW,
       {dlmap_arg_uint(DLMAP_ARG_BYTE_OFFSET, UINT64_MAX),
        dlmap_arg_ptr(DLMAP_ARG_POINTER, reinterpret_cast<const void *>(UINTPTR_MAX))}},
      {DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, INT64_MIN)}},
      {DLMAP_ERR_DEVICE_TYPE_NOT_IN_VERSION, {}},
  };
  for (const auto &c : cases) {
    const std::string full = Format(c.first, c.second, 4096);
    for (size_t cap = 0; cap <= full.size() + 2; cap++) {
      SCOPED_TRACE(testing::Message() << "code " << c.first << " cap " << cap);
      size_t n = 0;
      const std::string text = FormatGuarded(cap, c.first, c.second, &n);
      EXPECT_EQ(n, text.size());
      if (cap > full.size()) {
        EXPECT_EQ(text, full);
      } else if (cap >= 4) {
        EXPECT_EQ(text, full.substr(0, cap - 4) + "...");
      } else if (cap > 0) {
        EXPECT_EQ(text, full.substr(0, cap - 1));
      }
    }
  }
}

TEST(Truncation, EllipsisNeverSplitsUtf8) {
  // "Ω" is two bytes and "€" three: cutting at every capacity must leave whole characters before the "...".
  const std::string version = "\xCE\xA9\xE2\x82\xAC\xCE\xA9\xE2\x82\xAC\xCE\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 end";
  const std::vector<dlmap_arg> args = {dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, version.c_str())};
  const std::string full = Format(DLMAP_ERR_UNKNOWN_GPU_PLATFORM, args, 4096);
  ASSERT_EQ(full, "Unknown GPU platform for __dlpack__: " + version);
  for (size_t cap = 4; cap <= full.size(); cap++) {
    SCOPED_TRACE(cap);
    size_t n = 0;
    const std::string text = FormatGuarded(cap, DLMAP_ERR_UNKNOWN_GPU_PLATFORM, args, &n);
    EXPECT_TRUE(ValidUtf8(text)) << text;
    ASSERT_GE(text.size(), 3u);
    EXPECT_EQ(text.substr(text.size() - 3), "...");
    EXPECT_LE(text.size(), cap - 1);
    EXPECT_EQ(full.compare(0, text.size() - 3, text, 0, text.size() - 3), 0) << "a prefix of the full message";
  }
}

TEST(Truncation, ErrorMessageCapacity) {
  const std::string long_version(2000, 'v');
  const dlmap_arg arg = dlmap_arg_str(DLMAP_ARG_PLATFORM_VERSION, long_version.c_str());
  dlmap_error err;
  memset(&err, 0, sizeof err);
  EXPECT_EQ(dlmap_error_set(&err, DLMAP_ERR_UNKNOWN_GPU_PLATFORM, &arg, 1), DLMAP_ERR_UNKNOWN_GPU_PLATFORM);
  const std::string message(err.message);
  EXPECT_EQ(message.size(), DLMAP_MESSAGE_CAPACITY - 1);
  EXPECT_EQ(message.substr(message.size() - 3), "...");
  EXPECT_EQ(message.compare(0, 37, "Unknown GPU platform for __dlpack__: "), 0);
}

// ---- dlmap_error_set ------------------------------------------------------------------------------------------

TEST(ErrorSet, FillsTheError) {
  dlmap_error err;
  memset(&err, 0x5a, sizeof err);
  const dlmap_arg arg = dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 200);
  EXPECT_EQ(dlmap_error_set(&err, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, &arg, 1), 201);
  EXPECT_EQ(err.code, 201);
  EXPECT_EQ(err.kind, DLMAP_KIND_BUFFER_ERROR);
  EXPECT_STREQ(err.id, "export_unsupported_device_type");
  EXPECT_EQ(std::string(err.message), DeviceTypeMessage("200"));
}

TEST(ErrorSet, NullErrorReturnsCode) {
  const dlmap_arg arg = dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 200);
  EXPECT_EQ(dlmap_error_set(nullptr, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, &arg, 1),
            DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE);
  EXPECT_EQ(dlmap_error_set(nullptr, DLMAP_ERR_DLPACK_SHARDED, nullptr, 0), 202);
  EXPECT_EQ(dlmap_error_set(nullptr, 9999, nullptr, 0), 9999);
}

TEST(ErrorSet, UnknownCode) {
  dlmap_error err;
  memset(&err, 0, sizeof err);
  EXPECT_EQ(dlmap_error_set(&err, 4242, nullptr, 0), 4242);
  EXPECT_EQ(err.code, 4242);
  EXPECT_EQ(err.kind, DLMAP_KIND_COUNT);
  EXPECT_STREQ(err.id, "unknown");
  EXPECT_STREQ(dlmap_error_kind_name(err.kind), "RuntimeError");
  EXPECT_STREQ(err.message, "unknown dlmap status code 4242");
}

// ---- every catalogue entry ---------------------------------------------------------------------------------

TEST(Catalogue, EveryEntry) {
  std::vector<dlmap_arg> all;
  for (int p = 0; p < DLMAP_ARG_COUNT; p++) all.push_back(ArgFor(static_cast<dlmap_placeholder>(p)));

  std::set<std::string> ids;
  std::set<int32_t> codes;
  size_t count = 0;
  for (size_t i = 0; dlmap_error_at(i) != nullptr; i++) {
    const dlmap_error_info *e = dlmap_error_at(i);
    count++;
    ASSERT_NE(e->id, nullptr);
    SCOPED_TRACE(e->id);

    EXPECT_GT(e->code, 0);
    EXPECT_LE(e->code, 65535);
    EXPECT_TRUE(codes.insert(e->code).second) << "duplicate code " << e->code;
    EXPECT_TRUE(ids.insert(e->id).second) << "duplicate id";
    EXPECT_STRNE(e->id, "");
    EXPECT_STRNE(e->id, "unknown");
    for (const char *c = e->id; *c != '\0'; c++) {
      EXPECT_TRUE((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_') << "id is not snake_case";
    }
    EXPECT_GE(static_cast<int>(e->kind), 0);
    EXPECT_LT(static_cast<int>(e->kind), static_cast<int>(DLMAP_KIND_COUNT));
    ASSERT_NE(e->message_template, nullptr);
    ASSERT_NE(e->meaning, nullptr);
    ASSERT_NE(e->when, nullptr);
    ASSERT_NE(e->fix, nullptr);
    EXPECT_STRNE(e->message_template, "");
    EXPECT_STRNE(e->meaning, "");
    EXPECT_STRNE(e->when, "");
    EXPECT_STRNE(e->fix, "");
    EXPECT_EQ(e->args_mask >> DLMAP_ARG_COUNT, 0u) << "args_mask names a placeholder that does not exist";

    // Lookups lead back to the same entry.
    EXPECT_EQ(dlmap_error_describe(e->code), e);
    EXPECT_EQ(dlmap_error_find_by_id(e->id), e);

    // The template uses only placeholders the C side supplies (args_mask).
    for (const std::string &name : TemplatePlaceholders(e->message_template)) {
      const int p = PlaceholderByName(name);
      EXPECT_GE(p, 0) << "template names unknown placeholder {" << name << "}";
      if (p >= 0) {
        EXPECT_TRUE(e->args_mask & (uint64_t{1} << p)) << "{" << name << "} is not in args";
      }
    }

    // Every placeholder supplied: nothing left unformatted, no marker bytes, fits a dlmap_error.
    const std::string text = Format(e->code, all, DLMAP_MESSAGE_CAPACITY);
    const std::string wide = Format(e->code, all, 8192);
    EXPECT_EQ(text, wide) << "truncated in a " << DLMAP_MESSAGE_CAPACITY << "-byte buffer";
    EXPECT_LT(text.size(), size_t{DLMAP_MESSAGE_CAPACITY} - 1);
    EXPECT_EQ(text.find('\x01'), std::string::npos) << text;
    EXPECT_FALSE(text.empty());
    for (int p = 0; p < DLMAP_ARG_COUNT; p++) {
      if (!(e->args_mask & (uint64_t{1} << p))) continue;
      const std::string braced = std::string("{") + dlmap_placeholder_name(static_cast<dlmap_placeholder>(p)) + "}";
      EXPECT_EQ(text.find(braced), std::string::npos) << braced << " left in: " << text;
    }
    if (std::string(e->message_template).find('{') == std::string::npos) {
      EXPECT_EQ(text, e->message_template);
    }

    // No arguments: the template with its placeholders as {name} (and "{{" / "}}" unescaped).
    EXPECT_EQ(Format(e->code, {}, 8192), Unescape(e->message_template));

    // dlmap_error_set agrees with the entry and with dlmap_error_format.
    dlmap_error err;
    memset(&err, 0, sizeof err);
    EXPECT_EQ(dlmap_error_set(&err, e->code, all.data(), all.size()), e->code);
    EXPECT_EQ(err.code, e->code);
    EXPECT_EQ(err.kind, e->kind);
    EXPECT_EQ(err.id, e->id);
    EXPECT_EQ(std::string(err.message), text);

    // Related entries are real catalogue entries other than this one.
    const dlmap_error_info *related[64];
    const size_t n = dlmap_error_related(e->code, related, 64);
    ASSERT_LE(n, 64u);
    std::set<int32_t> seen;
    for (size_t k = 0; k < n; k++) {
      ASSERT_NE(related[k], nullptr);
      EXPECT_STRNE(related[k]->id, "unknown");
      EXPECT_NE(related[k], e) << "related to itself";
      EXPECT_TRUE(seen.insert(related[k]->code).second) << "related twice to " << related[k]->id;
    }
  }
  EXPECT_EQ(count, size_t{DLMAP_ERROR_COUNT});
}

// Every error of the spec's YAML, in catalogue order: found by code and by id with the spec's kind and text, and its
// message formatted with exactly its declared placeholders leaves none of them unfilled.
TEST(Catalogue, EverySpecError) {
  ASSERT_EQ(DLMAP_ERROR_COUNT, SPEC_FACTS_ERROR_COUNT);
  for (size_t i = 0; i < SPEC_FACTS_ERROR_COUNT; i++) {
    const spec_facts_error &f = spec_facts_errors[i];
    SCOPED_TRACE(f.id);
    const dlmap_error_info *e = dlmap_error_at(i);
    ASSERT_NE(e, nullptr);
    EXPECT_STREQ(e->id, f.id);
    EXPECT_EQ(e->code, f.code);
    EXPECT_EQ(dlmap_error_describe(f.code), e);
    EXPECT_EQ(dlmap_error_find_by_id(f.id), e);
    EXPECT_STREQ(dlmap_error_kind_name(e->kind), f.kind);
    EXPECT_STREQ(e->message_template, f.message);

    std::vector<dlmap_arg> declared;
    uint64_t mask = 0;
    for (const char *const *name = f.args; *name != nullptr; name++) {
      const int p = PlaceholderByName(*name);
      ASSERT_GE(p, 0) << "undeclared placeholder " << *name;
      declared.push_back(ArgFor(static_cast<dlmap_placeholder>(p)));
      mask |= uint64_t{1} << p;
    }
    EXPECT_EQ(e->args_mask, mask);
    const std::string text = Format(f.code, declared);
    EXPECT_FALSE(text.empty());
    for (const char *const *name = f.args; *name != nullptr; name++) {
      EXPECT_EQ(text.find(std::string("{") + *name), std::string::npos) << *name << " left in: " << text;
    }
    if (declared.empty()) {
      EXPECT_EQ(text, Unescape(f.message));
    }
  }
}

// ---- threads -----------------------------------------------------------------------------------------------------

TEST(Threads, FormattingIsStateless) {
  // Nothing in the catalogue keeps state: many threads formatting at once get exactly the single-threaded text.
  std::vector<std::string> expected;
  for (size_t i = 0; dlmap_error_at(i) != nullptr; i++) {
    expected.push_back(Format(dlmap_error_at(i)->code, {dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 7)}));
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < mismatches.size(); t++) {
    threads.emplace_back([t, &expected, &mismatches] {
      const dlmap_arg arg = dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 7);
      for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < expected.size(); i++) {
          dlmap_error err;
          dlmap_error_set(&err, dlmap_error_at(i)->code, &arg, 1);
          if (expected[i] != err.message) mismatches[t]++;
        }
      }
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace

TEST(ErrorSet, OkClearsTheErrorObject) {
  dlmap_error err;
  const dlmap_arg arg = dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 4);
  dlmap_error_set(&err, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, &arg, 1);
  ASSERT_NE(err.message[0], '\0');
  EXPECT_EQ(dlmap_error_set(&err, DLMAP_OK, nullptr, 0), DLMAP_OK);
  EXPECT_EQ(err.code, DLMAP_OK);
  EXPECT_STREQ(err.id, "ok");
  EXPECT_STREQ(err.message, "");
}
