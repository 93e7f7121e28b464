// Tests of the re2c name matchers (src/name_lookup.re): device type, platform and dtype names, and platform_version words.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dlmap/dlmap.h"
#include "gtest/gtest.h"

namespace {

// A heap copy of text with no NUL after it, so AddressSanitizer catches any read past len.
class Unterminated {
 public:
  explicit Unterminated(const std::string &text) : len_(text.size()), data_(new char[text.size() == 0 ? 1 : text.size()]) {
    memcpy(data_.get(), text.data(), text.size());
  }
  const char *data() const { return data_.get(); }
  size_t size() const { return len_; }

 private:
  size_t len_;
  std::unique_ptr<char[]> data_;
};

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

constexpr int32_t kUntouched = -777;

// The device type a name finds through an exactly-sized, unterminated buffer, or kUntouched.
int32_t Device(const std::string &name) {
  const Unterminated copy(name);
  int32_t value = kUntouched;
  const bool found = dlmap_device_type_parse(copy.data(), copy.size(), &value);
  EXPECT_EQ(found, value != kUntouched) << "out written only on success: " << name;
  return value;
}

// The platform a name finds, or kUntouched. Looked up twice with different sentinels (an enum cannot hold an
// out-of-range marker in C++), so an untouched out-parameter is seen as such.
int Platform(const std::string &name) {
  const Unterminated copy(name);
  dlmap_platform first = DLMAP_PLATFORM_CPU, second = DLMAP_PLATFORM_NONE;
  const bool found = dlmap_platform_parse(copy.data(), copy.size(), &first);
  EXPECT_EQ(dlmap_platform_parse(copy.data(), copy.size(), &second), found) << name;
  if (!found) {
    EXPECT_EQ(first, DLMAP_PLATFORM_CPU) << "out untouched: " << name;
    EXPECT_EQ(second, DLMAP_PLATFORM_NONE) << "out untouched: " << name;
    return kUntouched;
  }
  EXPECT_EQ(first, second) << name;
  return static_cast<int>(first);
}

// "code/bits/lanes" of the dtype a name finds, or "none".
std::string Dtype(const std::string &name) {
  const Unterminated copy(name);
  DLDataType d;
  d.code = 99;
  d.bits = 99;
  d.lanes = 99;
  if (!dlmap_dtype_parse(copy.data(), copy.size(), &d)) {
    EXPECT_EQ(d.code, 99) << "out untouched: " << name;
    EXPECT_EQ(d.bits, 99) << name;
    EXPECT_EQ(d.lanes, 99) << name;
    return "none";
  }
  return std::to_string(d.code) + "/" + std::to_string(d.bits) + "/" + std::to_string(d.lanes);
}

// ---- device type names ----------------------------------------------------------------------------------

TEST(DeviceName, EnumeratorsSpellingsAliases) {
  EXPECT_EQ(Device("kDLCUDA"), 2);
  EXPECT_EQ(Device("kDLGPU"), 2);
  EXPECT_EQ(Device("kGPU"), 2);
  EXPECT_EQ(Device("cuda"), 2);
  EXPECT_EQ(Device("gpu"), 2);
  EXPECT_EQ(Device("kDLCPU"), 1);
  EXPECT_EQ(Device("kCPU"), 1);
  EXPECT_EQ(Device("host"), 1);
  EXPECT_EQ(Device("kCPUPinned"), 3);
  EXPECT_EQ(Device("kDLCPUPinned"), 3);
  EXPECT_EQ(Device("pinned"), 3);
  EXPECT_EQ(Device("kDLROCMHost"), 11);
  EXPECT_EQ(Device("hip"), 10);
  EXPECT_EQ(Device("hip_host"), 11);
  EXPECT_EQ(Device("managed"), 13);
  EXPECT_EQ(Device("xpu"), 14);
  EXPECT_EQ(Device("mps"), 8);
  EXPECT_EQ(Device("trainium"), 18);
  EXPECT_EQ(Device("tpu_host"), 20);
  EXPECT_EQ(Device("npu"), 21);
}

TEST(DeviceName, CaseInsensitive) {
  EXPECT_EQ(Device("KDLCUDA"), 2);
  EXPECT_EQ(Device("kdlcuda"), 2);
  EXPECT_EQ(Device("CUDA"), 2);
  EXPECT_EQ(Device("Cuda"), 2);
  EXPECT_EQ(Device("KDLCUDAHOST"), 3);
  EXPECT_EQ(Device("kdlrocmhost"), 11);
  EXPECT_EQ(Device("ONEAPI"), 14);
}

TEST(DeviceName, PrefixesAndSuffixesDoNotMatch) {
  for (const char *name : {"cud", "cudax", "cuda_", "kDLCUD", "kDLCUDAx", "kDLCUDAHos", "kDLCUDAHostx", "kDL", "k",
                           "c", " cuda", "cuda ", "cuda\n", "kDLCPU ", "xkDLCPU", "gpus", "kDLTPUHos", "kDLROCMHost_",
                           "kDLTrn2", "nvidia", "rocmhost", "kDLCUDAManaged2", "hipp", "5", "2"}) {
    EXPECT_EQ(Device(name), kUntouched) << "'" << name << "'";
  }
}

TEST(DeviceName, EmbeddedNul) {
  // The length, not a NUL, ends the name: "kDLCPU\0x" is eight bytes and no name.
  const std::string with_nul("kDLCPU\0x", 8);
  EXPECT_EQ(Device(with_nul), kUntouched);
  EXPECT_EQ(Device(std::string("kDLCPU\0", 7)), kUntouched);
  EXPECT_EQ(Device(std::string("\0kDLCPU", 7)), kUntouched);
  int32_t value = kUntouched;
  EXPECT_TRUE(dlmap_device_type_parse(with_nul.data(), 6, &value));
  EXPECT_EQ(value, 1);
}

TEST(DeviceName, LengthBoundsTheName) {
  int32_t value = kUntouched;
  const char *text = "kDLCUDAHost";
  EXPECT_TRUE(dlmap_device_type_parse(text, 7, &value));  // "kDLCUDA"
  EXPECT_EQ(value, 2);
  EXPECT_TRUE(dlmap_device_type_parse(text, 11, &value));
  EXPECT_EQ(value, 3);
  value = kUntouched;
  EXPECT_FALSE(dlmap_device_type_parse(text, 10, &value));
  EXPECT_FALSE(dlmap_device_type_parse(text, 0, &value));
  EXPECT_EQ(value, kUntouched);
  EXPECT_TRUE(dlmap_device_type_parse("cudax", 4, &value));
  EXPECT_EQ(value, 2);
}

TEST(DeviceName, EmptyAndNull) {
  int32_t value = kUntouched;
  EXPECT_FALSE(dlmap_device_type_parse("", 0, &value));
  EXPECT_FALSE(dlmap_device_type_parse(nullptr, 0, &value));
  EXPECT_FALSE(dlmap_device_type_parse(nullptr, 6, &value));
  EXPECT_EQ(value, kUntouched);
  EXPECT_EQ(Device(""), kUntouched);
}

TEST(DeviceName, EveryNameThroughUnterminatedBuffers) {
  for (size_t i = 0; dlmap_device_type_at(i) != nullptr; i++) {
    const dlmap_device_info *info = dlmap_device_type_at(i);
    std::vector<std::string> names = {info->name};
    for (const char *const *s = info->spellings; *s != nullptr; s++) names.push_back(*s);
    for (const char *const *s = info->aliases; *s != nullptr; s++) names.push_back(*s);
    for (const std::string &name : names) {
      EXPECT_EQ(Device(name), info->value) << name;
      EXPECT_EQ(Device(Upper(name)), info->value) << name;
      EXPECT_EQ(Device(Lower(name)), info->value) << name;
      // Every proper prefix and one-character extension is no name (unless it is another entry's name).
      for (size_t len = 0; len < name.size(); len++) {
        const int32_t found = Device(name.substr(0, len));
        if (found != kUntouched) {
          EXPECT_STRNE(dlmap_device_type_name(found), "unknown");
        }
      }
      EXPECT_EQ(Device(name + "_"), kUntouched) << name;
      EXPECT_EQ(Device(name + std::string(1, '\0')), kUntouched) << name;
    }
  }
}

// ---- platform names ---------------------------------------------------------------------------------------------

TEST(PlatformName, NamesAndAliases) {
  EXPECT_EQ(Platform("cpu"), DLMAP_PLATFORM_CPU);
  EXPECT_EQ(Platform("host"), DLMAP_PLATFORM_CPU);
  EXPECT_EQ(Platform("cuda"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(Platform("nvidia"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(Platform("rocm"), DLMAP_PLATFORM_ROCM);
  EXPECT_EQ(Platform("hip"), DLMAP_PLATFORM_ROCM);
  EXPECT_EQ(Platform("amd"), DLMAP_PLATFORM_ROCM);
  EXPECT_EQ(Platform("oneapi"), DLMAP_PLATFORM_ONEAPI);
  EXPECT_EQ(Platform("sycl"), DLMAP_PLATFORM_ONEAPI);
  EXPECT_EQ(Platform("metal"), DLMAP_PLATFORM_METAL);
  EXPECT_EQ(Platform("mps"), DLMAP_PLATFORM_METAL);
  EXPECT_EQ(Platform("neuron"), DLMAP_PLATFORM_TRN);
  EXPECT_EQ(Platform("tpu"), DLMAP_PLATFORM_TPU);
  EXPECT_EQ(Platform("npu"), DLMAP_PLATFORM_ASCEND);
  EXPECT_EQ(Platform("none"), DLMAP_PLATFORM_NONE);
}

TEST(PlatformName, CaseInsensitive) {
  EXPECT_EQ(Platform("CUDA"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(Platform("NVIDIA"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(Platform("Hip"), DLMAP_PLATFORM_ROCM);
  EXPECT_EQ(Platform("OneAPI"), DLMAP_PLATFORM_ONEAPI);
}

TEST(PlatformName, NonNames) {
  for (const char *name : {"gpu", "cud", "cudax", "kDLCUDA", "rocm6", " cpu", "nvidia ", "", "pinned", "xla"}) {
    EXPECT_EQ(Platform(name), kUntouched) << "'" << name << "'";
  }
  EXPECT_EQ(Platform(std::string("cuda\0", 5)), kUntouched);
  dlmap_platform platform = DLMAP_PLATFORM_TPU;
  EXPECT_FALSE(dlmap_platform_parse(nullptr, 0, &platform));
  EXPECT_FALSE(dlmap_platform_parse(nullptr, 4, &platform));
  EXPECT_EQ(platform, DLMAP_PLATFORM_TPU);
  EXPECT_TRUE(dlmap_platform_parse("rocmx", 4, &platform));
  EXPECT_EQ(platform, DLMAP_PLATFORM_ROCM);
}

TEST(PlatformName, EveryPlatform) {
  for (int p = 0; p < DLMAP_PLATFORM_COUNT; p++) {
    const dlmap_platform_info *info = dlmap_platform_find(static_cast<dlmap_platform>(p));
    ASSERT_NE(info, nullptr);
    std::vector<std::string> names = {info->name};
    for (const char *const *a = info->aliases; *a != nullptr; a++) names.push_back(*a);
    for (const std::string &name : names) {
      EXPECT_EQ(Platform(name), p) << name;
      EXPECT_EQ(Platform(Upper(name)), p) << name;
      EXPECT_EQ(Platform(name + "x"), kUntouched) << name;
    }
  }
}

// ---- dtype names -----------------------------------------------------------------------------------------------------

TEST(DtypeName, NamesAndAliases) {
  EXPECT_EQ(Dtype("float32"), "2/32/1");
  EXPECT_EQ(Dtype("f32"), "2/32/1");
  EXPECT_EQ(Dtype("bfloat16"), "4/16/1");
  EXPECT_EQ(Dtype("bf16"), "4/16/1");
  EXPECT_EQ(Dtype("float8_e4m3fn"), "10/8/1");
  EXPECT_EQ(Dtype("float8_e4m3"), "8/8/1");
  EXPECT_EQ(Dtype("float8_e4m3fnuz"), "11/8/1");
  EXPECT_EQ(Dtype("bool"), "6/8/1");
  EXPECT_EQ(Dtype("complex64"), "5/64/1");
  EXPECT_EQ(Dtype("int4"), "0/4/1");
  EXPECT_EQ(Dtype("uint1"), "1/1/1");
  EXPECT_EQ(Dtype("fp4"), "17/4/1");
  EXPECT_EQ(Dtype("bcomplex32"), "18/32/1");
}

TEST(DtypeName, CaseInsensitive) {
  EXPECT_EQ(Dtype("FLOAT32"), "2/32/1");
  EXPECT_EQ(Dtype("Float32"), "2/32/1");
  EXPECT_EQ(Dtype("BF16"), "4/16/1");
  EXPECT_EQ(Dtype("Float8_E4M3FN"), "10/8/1");
}

TEST(DtypeName, NonNames) {
  for (const char *name : {"float", "float3", "float322", "float32x4", "float32 ", " float32", "f", "", "int", "int3",
                           "float8", "float8_e4m3f", "float8_e4m3fnu", "kDLFloat", "bfloat", "bool16", "complex"}) {
    EXPECT_EQ(Dtype(name), "none") << "'" << name << "'";
  }
  EXPECT_EQ(Dtype(std::string("float32\0", 8)), "none");
  DLDataType d = {};
  d.code = 99;
  EXPECT_FALSE(dlmap_dtype_parse(nullptr, 0, &d));
  EXPECT_FALSE(dlmap_dtype_parse(nullptr, 7, &d));
  EXPECT_EQ(d.code, 99);
  EXPECT_TRUE(dlmap_dtype_parse("float16x8", 7, &d));
  EXPECT_EQ(d.code, 2);
  EXPECT_EQ(d.bits, 16);
  EXPECT_FALSE(dlmap_dtype_parse("float32", 5, &d)) << "\"float\" is no name";
}

// ---- platform_version words --------------------------------------------------------------------------------------------

// The platform dlmap_platform_lookup_by_version finds, or kUntouched; the message when it fails.
int FromVersion(const char *text, std::string *message = nullptr) {
  dlmap_platform first = DLMAP_PLATFORM_CPU, second = DLMAP_PLATFORM_NONE;
  dlmap_error err;
  memset(&err, 0, sizeof err);
  const int32_t status = dlmap_platform_lookup_by_version(text, &first, &err);
  EXPECT_EQ(dlmap_platform_lookup_by_version(text, &second, nullptr), status);
  EXPECT_EQ(dlmap_platform_lookup_by_version(text, nullptr, nullptr), status);
  if (message != nullptr) *message = err.message;
  if (status != DLMAP_OK) {
    EXPECT_EQ(status, DLMAP_ERR_UNKNOWN_GPU_PLATFORM);
    EXPECT_EQ(err.code, DLMAP_ERR_UNKNOWN_GPU_PLATFORM);
    EXPECT_EQ(err.kind, DLMAP_KIND_BUFFER_ERROR);
    EXPECT_STREQ(err.id, "unknown_gpu_platform");
    EXPECT_EQ(first, DLMAP_PLATFORM_CPU) << "out untouched on error";
    EXPECT_EQ(second, DLMAP_PLATFORM_NONE) << "out untouched on error";
    return kUntouched;
  }
  EXPECT_EQ(err.code, DLMAP_OK) << "err untouched on success";
  EXPECT_EQ(first, second);
  return static_cast<int>(first);
}

TEST(PlatformVersion, Words) {
  EXPECT_EQ(FromVersion("cuda 12.4"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(FromVersion("rocm-6.0"), DLMAP_PLATFORM_ROCM);
  EXPECT_EQ(FromVersion("something oneapi"), DLMAP_PLATFORM_ONEAPI);
  EXPECT_EQ(FromVersion("cuda"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(FromVersion("PJRT C API\ncuda 12030"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(FromVersion("PJRT C API\nrocm 60032"), DLMAP_PLATFORM_ROCM);
  EXPECT_EQ(FromVersion("xcudax"), DLMAP_PLATFORM_CUDA) << "a word anywhere, as JAX's `in` test";
  EXPECT_EQ(FromVersion("ccuda"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(FromVersion("cucuda"), DLMAP_PLATFORM_CUDA);
}

TEST(PlatformVersion, FirstInSpecOrderWins) {
  EXPECT_EQ(FromVersion("rocm 6.0 built with cuda headers"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(FromVersion("oneapi cuda"), DLMAP_PLATFORM_CUDA);
  EXPECT_EQ(FromVersion("oneapi rocm"), DLMAP_PLATFORM_ROCM);
  EXPECT_EQ(FromVersion("rocmcuda"), DLMAP_PLATFORM_CUDA);
}

TEST(PlatformVersion, UnknownPlatform) {
  std::string message;
  EXPECT_EQ(FromVersion("metal", &message), kUntouched);
  EXPECT_EQ(message, "Unknown GPU platform for __dlpack__: metal");
  EXPECT_EQ(FromVersion("CUDA 12.4", &message), kUntouched) << "platform_version words are case-sensitive";
  EXPECT_EQ(message, "Unknown GPU platform for __dlpack__: CUDA 12.4");
  EXPECT_EQ(FromVersion("", &message), kUntouched);
  EXPECT_EQ(message, "Unknown GPU platform for __dlpack__: ");
  for (const char *text : {"cud", "cud a", "roc", "rocM", "oneap", "one api", "nvidia", "hip", "gpu", "c u d a"}) {
    EXPECT_EQ(FromVersion(text), kUntouched) << text;
  }
}

TEST(PlatformVersion, Null) {
  std::string message;
  EXPECT_EQ(FromVersion(nullptr, &message), kUntouched);
  EXPECT_EQ(message, "Unknown GPU platform for __dlpack__: (null)");
}

TEST(PlatformVersion, LongText) {
  std::string text(10000, 'c');
  EXPECT_EQ(FromVersion(text.c_str()), kUntouched);
  text += "uda";
  EXPECT_EQ(FromVersion(text.c_str()), DLMAP_PLATFORM_CUDA);
  std::string message;
  const std::string long_unknown(5000, 'm');
  EXPECT_EQ(FromVersion(long_unknown.c_str(), &message), kUntouched);
  EXPECT_EQ(message.size(), size_t{DLMAP_MESSAGE_CAPACITY} - 1);
  EXPECT_EQ(message.substr(message.size() - 3), "...");
}

}  // namespace
