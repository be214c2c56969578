#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/attribute.h"

namespace distir {
namespace {

std::vector<std::string> Keys(const AttrMap& m) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : m) keys.push_back(key);
  return keys;
}

TEST(AttrMapTest, KeepsKeysSortedAndTheFirstOfEqualKeys) {
  const AttrMap m = {{"task", int64_t{3}}, {"axis", int64_t{0}}, {"task", int64_t{9}}};
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"axis", "task"}));
  EXPECT_EQ(m.at("task").AsInt(), 3);
}

TEST(AttrMapTest, FindsInsertsAndErasesByName) {
  AttrMap m;
  EXPECT_TRUE(m.empty());
  m["mesh"] = Attribute("m");
  EXPECT_TRUE(m.emplace("axes", Attribute(std::vector<std::string>{"tp"})).second);
  EXPECT_FALSE(m.emplace("mesh", Attribute("other")).second);
  m.emplace_hint(m.end(), "device", Attribute(DeviceId(1)));
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"axes", "device", "mesh"}));
  EXPECT_EQ(m.find(std::string_view("mesh"))->second.AsString(), "m");
  EXPECT_EQ(m.count("task"), 0u);
  EXPECT_EQ(m.find("task"), m.end());
  EXPECT_EQ(m.erase("device"), 1u);
  EXPECT_EQ(m.erase("device"), 0u);
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"axes", "mesh"}));
  AttrMap same = {{"mesh", "m"}, {"axes", std::vector<std::string>{"tp"}}};
  EXPECT_EQ(m, same);
  same["mesh"] = Attribute("n");
  EXPECT_FALSE(m == same);
}

}  // namespace
}  // namespace distir
