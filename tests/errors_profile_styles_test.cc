// dlmap tests — dlmap_error_format (src/errors.c) with the placeholder styles only a profile's own texts use: JAX's
// {shape:packed} (ints joined without spaces) and PyTorch's {version:major} (a version's major alone; any other type
// prints as its type does). Built once per profile library (tests/BUILD), each build compiling its profile's case.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "dlmap/dlmap.h"
#include "dlmap/profile.h"

namespace {

std::string Format(int32_t code, const dlmap_arg *args, size_t nargs) {
  char buf[DLMAP_MESSAGE_CAPACITY];
  const size_t n = dlmap_error_format(buf, sizeof buf, code, args, nargs);
  EXPECT_EQ(n, std::strlen(buf));
  return buf;
}

#if defined(PROFILE_JAX)
TEST(ErrorsProfileStyles, JaxPacksShapeAndStrides) {
  ASSERT_STREQ(dlmap_profile_current()->name, "jax");
  const int64_t shape[2] = {2, 3}, strides[2] = {0, 1};
  const dlmap_arg args[2] = {dlmap_arg_ints(DLMAP_ARG_SHAPE, shape, 2), dlmap_arg_ints(DLMAP_ARG_STRIDES, strides, 2)};
  const std::string text = Format(DLMAP_ERR_STRIDES_NOT_COMPACT, args, 2);
  EXPECT_NE(text.find("Dimensions were: [2,3], strides were [0,1]."), std::string::npos) << text;
}
#elif defined(PROFILE_PYTORCH)
TEST(ErrorsProfileStyles, PytorchPrintsAVersionsMajorAndOtherTypesAsThemselves) {
  ASSERT_STREQ(dlmap_profile_current()->name, "pytorch");
  const dlmap_arg versions[2] = {dlmap_arg_version(DLMAP_ARG_VERSION, {3, 7}),
                                 dlmap_arg_version(DLMAP_ARG_SUPPORTED_VERSION, {1, 3})};
  EXPECT_EQ(Format(DLMAP_ERR_VERSION_MAJOR_UNSUPPORTED, versions, 2),
            "unsupported DLPack capsule major version: 3. Maximum supported version: 1");
  const dlmap_arg others[2] = {dlmap_arg_int(DLMAP_ARG_VERSION, 3), dlmap_arg_str(DLMAP_ARG_SUPPORTED_VERSION, "one")};
  EXPECT_EQ(Format(DLMAP_ERR_VERSION_MAJOR_UNSUPPORTED, others, 2),
            "unsupported DLPack capsule major version: 3. Maximum supported version: one");
}
#else
#error "build with PROFILE_JAX or PROFILE_PYTORCH (tests/BUILD)"
#endif

}  // namespace
