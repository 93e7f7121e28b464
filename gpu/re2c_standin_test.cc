// dlmap GPU check — gpu/re2c_standin.py against re2c: gpu/check.sh builds the name lookups with the stand-in where re2c
// is missing, so both must answer every lookup alike. Asked: every rule's text of the generated *.re.inc files, in
// several cases, cut short, extended and embedded in other text, and a few thousand random strings over their letters.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlmap/dlmap.h"

extern "C" {
int dlmap__platform_from_words(const char *text, size_t len);  // src/name_lookup.h (C only)
bool standin_device_type_from_name(const char *name, size_t len, int32_t *out);
bool standin_platform_from_name(const char *name, size_t len, dlmap_platform *out);
bool standin_dtype_from_name(const char *name, size_t len, DLDataType *out);
int standin_platform_from_words(const char *text, size_t len);
}

namespace {

std::vector<std::string> g_files;  // the *.re.inc files, from the command line

std::vector<std::string> RuleTexts() {
  std::vector<std::string> texts;
  const std::regex rule(R"(^['"]([^'"]*)['"] \{)");
  for (const std::string &path : g_files) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_search(line, m, rule)) texts.push_back(m[1]);
    }
  }
  return texts;
}

std::string Flip(std::string s) {
  for (char &c : s) c = (c >= 'a' && c <= 'z') ? char(c - 32) : (c >= 'A' && c <= 'Z') ? char(c + 32) : c;
  return s;
}

std::vector<std::string> Inputs() {
  std::set<std::string> inputs = {"", " ", "x", "\xff", std::string("cuda\0", 5), "cuda 12.4", "ROCm 6.1", "oneapi",
                                  "xcudax", "cud", "rocmcuda", "jax gpu (cuda)"};
  const std::vector<std::string> texts = RuleTexts();
  EXPECT_GT(texts.size(), 100u) << "the rules were not read";
  std::string letters;
  for (const std::string &t : texts) {
    letters += t;
    for (const std::string &v : {t, Flip(t), t + "x", "x" + t, t + " ", t + t, "v " + t + " 1"}) inputs.insert(v);
    for (size_t n = 0; n < t.size(); n++) inputs.insert(t.substr(0, n));
  }
  std::mt19937 random(20240601);
  for (int i = 0; i < 5000; i++) {
    std::string s(random() % 12, ' ');
    for (char &c : s) c = letters[random() % letters.size()];
    inputs.insert(s);
  }
  return {inputs.begin(), inputs.end()};
}

TEST(Re2cStandin, AnswersEveryLookupAsRe2cDoes) {
  size_t found = 0;
  for (const std::string &s : Inputs()) {
    int32_t a = -7, b = -7;
    const bool ra = dlmap_device_type_parse(s.data(), s.size(), &a);
    const bool rb = standin_device_type_from_name(s.data(), s.size(), &b);
    ASSERT_EQ(ra, rb) << "device type '" << s << "'";
    if (ra) {
      ASSERT_EQ(a, b) << s;
    }
    dlmap_platform pa = DLMAP_PLATFORM_COUNT, pb = DLMAP_PLATFORM_COUNT;
    ASSERT_EQ(dlmap_platform_parse(s.data(), s.size(), &pa), standin_platform_from_name(s.data(), s.size(), &pb))
        << "platform '" << s << "'";
    ASSERT_EQ(pa, pb) << s;
    DLDataType da = {}, db = {};
    const bool ta = dlmap_dtype_parse(s.data(), s.size(), &da), tb = standin_dtype_from_name(s.data(), s.size(), &db);
    ASSERT_EQ(ta, tb) << "dtype '" << s << "'";
    if (ta) {
      ASSERT_TRUE(da.code == db.code && da.bits == db.bits && da.lanes == db.lanes) << s;
    }
    ASSERT_EQ(dlmap__platform_from_words(s.data(), s.size()), standin_platform_from_words(s.data(), s.size()))
        << "words '" << s << "'";
    found += ra;
  }
  EXPECT_GT(found, 50u) << "few inputs were names: the comparison proves little";
}

}  // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; i++) g_files.push_back(argv[i]);
  return RUN_ALL_TESTS();
}
