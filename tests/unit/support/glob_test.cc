#include "support/glob.h"

#include <fnmatch.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace distir {
namespace {

bool Fnmatch(const std::string& p, const std::string& s) {
  return fnmatch(p.c_str(), s.c_str(), 0) == 0;
}

// Every string of at most `max` characters over `alphabet`, shortest first.
std::vector<std::string> AllStrings(const std::string& alphabet, size_t max) {
  std::vector<std::string> out = {""};
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].size() == max) continue;
    for (char c : alphabet) out.push_back(out[i] + c);
  }
  return out;
}

TEST(GlobTest, WildcardsMatchAsFnmatch) {
  const std::vector<std::string> patterns = {"",
                                             "*",
                                             "**",
                                             "?",
                                             "a",
                                             "a*",
                                             "*a",
                                             "*a*",
                                             "a?c",
                                             "layers.*.attention.qkv.mm",
                                             "layers.*.mlp.fc1",
                                             "embedding.weight.grad*",
                                             "*.grad",
                                             "a*b*c",
                                             "a*?",
                                             "?*?",
                                             "*.*.*",
                                             "layers.*.input.grad",
                                             "x*y*",
                                             "[ab]c",
                                             "a\\*",
                                             "*\\?",
                                             "a[!b]*",
                                             "layers.?.mlp.fc1"};
  const std::vector<std::string> names = {"",
                                          "a",
                                          "ab",
                                          "abc",
                                          "aXc",
                                          "ba",
                                          "layers.3.attention.qkv.mm",
                                          "layers.12.attention.qkv.mm.grad",
                                          "layers.3.mlp.fc1",
                                          "layers.3.mlp.fc1.mm",
                                          "embedding.weight.grad",
                                          "embedding.weight.grad.sum",
                                          "logits.grad",
                                          "aXbYc",
                                          "aaa",
                                          "x.y.z",
                                          "layers.0.input.grad",
                                          "xyxy",
                                          "ac",
                                          "bc",
                                          "a*",
                                          "q?",
                                          "abb",
                                          "layers..mlp.fc1",
                                          "layers.\xc3\xa9.mlp.fc1"};
  for (const std::string& p : patterns) {
    for (const std::string& s : names) {
      EXPECT_EQ(GlobMatch(p, s), Fnmatch(p, s)) << p << " / " << s;
      EXPECT_EQ(GlobPattern(p).Matches(s), Fnmatch(p, s)) << p << " / " << s;
    }
  }
}

TEST(GlobTest, BacksUpToTheLastStar) {
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYbZc"));
  EXPECT_TRUE(GlobMatch("*ab", "aaab"));
  EXPECT_FALSE(GlobMatch("*ab", "aaba"));
  EXPECT_TRUE(GlobMatch("layers.*.out", "layers.1.attention.out"));
}

// Every pattern of up to five characters over `a`, `b`, `*` and `?` against
// every name of up to six over `a` and `b`: the `*`-only patterns take the
// segment search, the others the greedy match, all as fnmatch.
TEST(GlobTest, EverySmallPatternMatchesAsFnmatch) {
  const std::vector<std::string> names = AllStrings("ab", 6);
  for (const std::string& p : AllStrings("ab*?", 5)) {
    const GlobPattern pattern(p);
    for (const std::string& s : names) {
      ASSERT_EQ(pattern.Matches(s), Fnmatch(p, s)) << p << " / " << s;
    }
  }
}

}  // namespace
}  // namespace distir
