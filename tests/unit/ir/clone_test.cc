#include "ir/clone.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"

namespace distir {
namespace {

// The copy prints exactly as the original (types, shardings, attributes,
// names, anonymous values), and outlives it.
TEST(CloneTest, CopyPrintsAsTheOriginal) {
  const std::string text = R"(mesh @m = <[t = 2]>

func @f(%x: tensor<4x8xf32> <@m, [{}, {t}]>, %w: tensor<8x8xf32>) {
  %y = MatMul(%x, %w) : tensor<4x8xf32> <@m, [{}, {}], partial = sum[t]>
  %0, %1 = Split(%y) {axis = 1, task = [0, 1, 0]}
  %z = Add(%0, %1)
  return %z, %y
}
)";
  StatusOr<Module> m = ParseModule(text, "clone.distir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *m->Lookup("f");
  const std::string want = PrintFunction(f);
  std::unique_ptr<Function> copy = CloneFunction(f);
  EXPECT_EQ(PrintFunction(*copy), want);
  EXPECT_EQ(copy->num_values(), f.num_values());
  EXPECT_EQ(copy->ops()[0]->result(0)->loc().line, f.ops()[0]->result(0)->loc().line);
  m = Module();  // the copy shares nothing with the original
  EXPECT_EQ(PrintFunction(*copy), want);
}

}  // namespace
}  // namespace distir
