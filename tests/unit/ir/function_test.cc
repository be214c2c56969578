#include "ir/function.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"

namespace distir {
namespace {

// EraseOps drops ops nobody reads in place: the rest keep their order and
// names, op ids follow positions, value ids stay (the function prints as if
// the ops had never been written).
TEST(FunctionTest, EraseOpsDropsUnreadOpsInPlace) {
  const std::string text = R"(func @f(%x: tensor<4xf32>) {
  %a = Relu(%x)
  %dead = Relu(%a)
  %b = Relu(%a)
  %also.dead = Relu(%b)
  return %b
}
)";
  StatusOr<Module> m = ParseModule(text, "erase.distir");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Function& f = *m->Lookup("f");
  const int values = f.num_values();
  ASSERT_NE(f.LookupValue("dead"), nullptr);  // the name index is kept from here on
  f.EraseOps({false, true, false, true});
  ASSERT_EQ(f.ops().size(), 2u);
  EXPECT_EQ(f.ops()[0]->id(), 0);
  EXPECT_EQ(f.ops()[1]->id(), 1);
  EXPECT_EQ(f.ops()[1]->result(0)->name(), "b");
  EXPECT_EQ(f.num_values(), values);
  EXPECT_EQ(f.LookupValue("dead"), nullptr);
  EXPECT_EQ(f.LookupValue("also.dead"), nullptr);
  EXPECT_EQ(f.LookupValue("b"), f.ops()[1]->result(0));
  EXPECT_EQ(f.UniqueName("dead"), "dead");  // free again
  const std::string want = R"(func @f(%x: tensor<4xf32>) {
  %a = Relu(%x)
  %b = Relu(%a)
  return %b
}
)";
  StatusOr<Module> expected = ParseModule(want, "want.distir");
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(PrintFunction(f), PrintFunction(*expected->Lookup("f")));
}

}  // namespace
}  // namespace distir
