// CalleesBottomUp: every callee before its callers, each once, no recursion.

#include "ir/call_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/parser.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::ParseOrDie;

std::vector<std::string> Names(const std::vector<const Function*>& fns) {
  std::vector<std::string> names;
  for (const Function* f : fns) names.push_back(f->name());
  return names;
}

// @top calls @left and @right, which both call @leaf; @unused is not reached.
constexpr char kDiamond[] = R"(
func @leaf(%x: tensor<4xf32>) {
  %y = Relu(%x)
  return %y
}
func @unused(%x: tensor<4xf32>) {
  return %x
}
func @left(%x: tensor<4xf32>) {
  %y = @leaf(%x)
  return %y
}
func @right(%x: tensor<4xf32>) {
  %y = @leaf(%x)
  %z = @leaf(%y)
  return %z
}
func @top(%x: tensor<4xf32>) {
  %a = @left(%x)
  %b = @right(%a)
  return %b
}
)";

TEST(CallGraphTest, ListsEachCalleeOnceAfterItsCallees) {
  Module m = ParseOrDie(kDiamond);
  EXPECT_EQ(Names(CalleesBottomUp(m, *m.Lookup("top"))),
            (std::vector<std::string>{"leaf", "left", "right", "top"}));
  EXPECT_EQ(Names(CalleesBottomUp(m, *m.Lookup("leaf"))), (std::vector<std::string>{"leaf"}));
}

TEST(CallGraphTest, KnownFunctionsAreNeitherListedNorEntered) {
  Module m = ParseOrDie(kDiamond);
  auto left_known = [](const Function& f) { return f.name() == "left"; };
  // @leaf is still reached through @right.
  EXPECT_EQ(Names(CalleesBottomUp(m, *m.Lookup("top"), left_known)),
            (std::vector<std::string>{"leaf", "right", "top"}));
  auto leaf_known = [](const Function& f) { return f.name() == "leaf"; };
  EXPECT_EQ(Names(CalleesBottomUp(m, *m.Lookup("top"), leaf_known)),
            (std::vector<std::string>{"left", "right", "top"}));
}

TEST(CallGraphTest, DeepChainsNeedNoNativeStack) {
  std::string text = "func @f0(%x: tensor<4xf32>) {\n  return %x\n}\n";
  constexpr int kDepth = 100000;
  for (int i = 1; i < kDepth; ++i) {
    text += "func @f" + std::to_string(i) + "(%x: tensor<4xf32>) {\n  %y = @f" +
            std::to_string(i - 1) + "(%x)\n  return %y\n}\n";
  }
  Module m = ParseOrDie(text);
  const std::vector<const Function*> order =
      CalleesBottomUp(m, *m.Lookup("f" + std::to_string(kDepth - 1)));
  ASSERT_EQ(order.size(), static_cast<size_t>(kDepth));
  EXPECT_EQ(order.front()->name(), "f0");
  EXPECT_EQ(order.back()->name(), "f99999");
}

}  // namespace
}  // namespace distir
