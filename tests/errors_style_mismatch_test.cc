// dlmap tests — dlmap_error_format (src/errors.c) given arguments whose type the placeholder's style does not fit: a
// caller-built argument list may pair any type with any placeholder. The plural styles ({takes:s}, {given:was}) word
// only an int; any other type prints as its type always does. A type outside dlmap_arg_type prints a marker instead
// of reading the union. Against the Array API profile, whose argument_positional_count text is the spec's:
// "{function}() takes {takes} positional argument{takes:s} but {given} {given:was} given".
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "dlmap/dlmap.h"

namespace {

std::string Format(int32_t code, const dlmap_arg *args, size_t nargs) {
  char buf[DLMAP_MESSAGE_CAPACITY];
  const size_t n = dlmap_error_format(buf, sizeof buf, code, args, nargs);
  EXPECT_EQ(n, std::strlen(buf));
  return buf;
}

TEST(ErrorsStyleMismatch, PluralStylesWordOnlyInts) {
  const dlmap_arg ints[3] = {dlmap_arg_str(DLMAP_ARG_FUNCTION, "f"), dlmap_arg_int(DLMAP_ARG_TAKES, 1),
                             dlmap_arg_int(DLMAP_ARG_GIVEN, 2)};
  EXPECT_EQ(Format(DLMAP_ERR_ARGUMENT_POSITIONAL_COUNT, ints, 3),
            "f() takes 1 positional argument but 2 were given");  // control: the ints are worded
  const dlmap_arg others[3] = {dlmap_arg_str(DLMAP_ARG_FUNCTION, "f"), dlmap_arg_str(DLMAP_ARG_TAKES, "one"),
                               dlmap_arg_uint(DLMAP_ARG_GIVEN, 2)};
  EXPECT_EQ(Format(DLMAP_ERR_ARGUMENT_POSITIONAL_COUNT, others, 3),
            "f() takes one positional argumentone but 2 2 given");
}

TEST(ErrorsStyleMismatch, AnArgumentTypeOutsideTheEnumPrintsAMarker) {
  dlmap_arg args[3] = {dlmap_arg_str(DLMAP_ARG_FUNCTION, "f"), dlmap_arg_int(DLMAP_ARG_TAKES, 1),
                       dlmap_arg_int(DLMAP_ARG_GIVEN, 1)};
  const int bad = 1000;  // written as bytes: an enum value outside the range is undefined in C++, not in the C library
  static_assert(sizeof(args[1].type) == sizeof bad, "dlmap_arg_type is an int-sized enum");
  std::memcpy(&args[1].type, &bad, sizeof bad);
  EXPECT_EQ(Format(DLMAP_ERR_ARGUMENT_POSITIONAL_COUNT, args, 3),
            "f() takes (bad argument type) positional argument(bad argument type) but 1 was given");
}

}  // namespace
