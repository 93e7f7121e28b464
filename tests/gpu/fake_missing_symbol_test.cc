// dlmap GPU tests — a runtime library that loads but lacks an entry point of the spec's table: the backend reports
// the symbol and closes the library again (nothing of it ran), instead of keeping a handle it will never use.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"

namespace {

// The spec's library name: relative to the test's working directory, dlmap's runfiles root, which is not where Bazel
// starts the test when a consumer runs `bazel test @dlmap//...` (DLMAP_ROOT says where it is then).
constexpr const char *kLibrary = "tests/gpu/libdlmap_fake_gpu.so";

const bool kInDlmapRoot = [] {
  const char *root = std::getenv("DLMAP_ROOT");
  return root == nullptr || chdir(root) == 0;
}();

TEST(FakeMissingSymbol, TheLibraryIsClosedAgain) {
  ASSERT_TRUE(kInDlmapRoot) << "cannot change to $DLMAP_ROOT";
  ASSERT_EQ(dlopen(kLibrary, RTLD_NOW | RTLD_NOLOAD), nullptr) << "the test must start without the library loaded";
  dlmap_platform_status status;
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  EXPECT_TRUE(status.built);
  EXPECT_FALSE(status.available);
  EXPECT_STREQ(status.reason, "the runtime lacks fakeMallocThatDoesNotExist");
  void *still_loaded = dlopen(kLibrary, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(still_loaded, nullptr) << "the backend kept the handle of a runtime it cannot use";
  if (still_loaded != nullptr) dlclose(still_loaded);
  // A second probe tries again (a failed load is not remembered) and closes it again.
  dlmap_platform_probe(DLMAP_PLATFORM_CUDA, &status);
  EXPECT_STREQ(status.reason, "the runtime lacks fakeMallocThatDoesNotExist");
  EXPECT_EQ(dlopen(kLibrary, RTLD_NOW | RTLD_NOLOAD), nullptr);
}

}  // namespace
