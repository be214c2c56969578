// Dispatch of Domain: the most precise matching rule wins, ties go to the rule
// registered first, and a missing rule is a clean Unimplemented error.

#include "interp/domain.h"

#include <gtest/gtest.h>

#include "ir/function.h"
#include "testing/test_util.h"

namespace distir {

// A toy value: concrete or not, and which rule produced it.
struct Toy {
  bool concrete = false;
  int rule = 0;
};

template <>
struct ValueTraits<Toy> {
  static bool IsConcrete(const Toy& v) { return v.concrete; }
  static Toy FromType(const Type& /*type*/) { return {}; }
  static const Type& TypeOf(const Toy& /*v*/) {
    static const Type* const kUnknown = new Type();
    return *kUnknown;
  }
  static Toy WithDevice(const Toy& v, DeviceId /*device*/) { return v; }
};

namespace {

using testing::StatusIs;

template <int kTag>
StatusOr<std::vector<Toy>> Tagged(const Op& /*op*/, ArgList<Toy> /*args*/) {
  return std::vector<Toy>{Toy{false, kTag}};
}

// An op of `kind` with `n` inputs, and the Toy arguments for it.
class DispatchTest : public ::testing::Test {
 protected:
  const Op& MakeOp(OpKind kind, int n) {
    std::vector<Value*> inputs;
    for (int i = 0; i < n; ++i)
      inputs.push_back(fn_.AddParam("p" + std::to_string(count_++), Type()));
    return *fn_.AddOp(kind, inputs, {}, {"r" + std::to_string(count_++)});
  }

  // Applies `domain` to `op` with arguments whose concreteness is `concrete`.
  int Dispatch(const Domain<Toy>& domain, const Op& op, std::vector<bool> concrete) {
    std::vector<Toy> values;
    for (bool c : concrete) values.push_back(Toy{c, 0});
    std::vector<const Toy*> ptrs;
    for (const Toy& v : values) ptrs.push_back(&v);
    StatusOr<std::vector<Toy>> out = domain.Apply(op, ArgList<Toy>(ptrs.data(), ptrs.size()));
    if (!out.ok()) return -1;
    return (*out)[0].rule;
  }

  Function fn_{"f"};
  int count_ = 0;
};

TEST_F(DispatchTest, ConcreteRuleBeatsAbstractRule) {
  Domain<Toy> domain("toy");
  domain.Register(OpKind::kAdd, Tagged<1>);  // abstract, registered first
  domain.Register(OpKind::kAdd, Tagged<2>, ArgPattern::AllConcrete());
  const Op& add = MakeOp(OpKind::kAdd, 2);
  EXPECT_EQ(Dispatch(domain, add, {true, true}), 2);
  EXPECT_EQ(Dispatch(domain, add, {true, false}), 1);
  EXPECT_EQ(Dispatch(domain, add, {false, false}), 1);
}

TEST_F(DispatchTest, PatternPositionsAndArityMatter) {
  Domain<Toy> domain("toy");
  domain.Register(OpKind::kReshape, Tagged<1>);
  domain.Register(OpKind::kReshape, Tagged<2>, ArgPattern::ConcreteAt({1}));
  domain.Register(OpKind::kReshape, Tagged<3>, ArgPattern::ConcreteAt({0, 1}));
  domain.Register(OpKind::kReshape, Tagged<4>, ArgPattern::ConcreteAt({0}, /*arity=*/3));
  const Op& reshape = MakeOp(OpKind::kReshape, 2);
  EXPECT_EQ(Dispatch(domain, reshape, {false, true}), 2);
  EXPECT_EQ(Dispatch(domain, reshape, {true, true}), 3);   // two concrete positions beat one
  EXPECT_EQ(Dispatch(domain, reshape, {true, false}), 1);  // rule 4 needs 3 inputs
  EXPECT_EQ(Dispatch(domain, reshape, {false, false}), 1);
}

TEST_F(DispatchTest, EquallyPreciseRulesGoByRegistrationOrder) {
  Domain<Toy> domain("toy");
  domain.Register(OpKind::kMul, Tagged<1>, ArgPattern::ConcreteAt({0}));
  domain.Register(OpKind::kMul, Tagged<2>, ArgPattern::ConcreteAt({1}));
  const Op& mul = MakeOp(OpKind::kMul, 2);
  EXPECT_EQ(Dispatch(domain, mul, {true, true}), 1);
  EXPECT_EQ(Dispatch(domain, mul, {false, true}), 2);
  // Neither matches and there is no abstract rule or fallback.
  EXPECT_EQ(Dispatch(domain, mul, {false, false}), -1);
}

TEST_F(DispatchTest, AllConcreteCountsEveryInput) {
  Domain<Toy> domain("toy");
  domain.Register(OpKind::kConcat, Tagged<1>, ArgPattern::ConcreteAt({0, 1}));
  domain.Register(OpKind::kConcat, Tagged<2>, ArgPattern::AllConcrete());
  const Op& concat = MakeOp(OpKind::kConcat, 3);
  EXPECT_EQ(Dispatch(domain, concat, {true, true, true}), 2);  // precision 3 > 2
  EXPECT_EQ(Dispatch(domain, concat, {true, true, false}), 1);
}

TEST_F(DispatchTest, FallbackRunsWhenNoRuleMatches) {
  Domain<Toy> domain("toy");
  domain.Register(OpKind::kAdd, Tagged<1>, ArgPattern::AllConcrete());
  domain.SetFallback(Tagged<9>);
  EXPECT_EQ(Dispatch(domain, MakeOp(OpKind::kAdd, 2), {true, false}), 9);
  EXPECT_EQ(Dispatch(domain, MakeOp(OpKind::kRelu, 1), {false}), 9);
  EXPECT_FALSE(domain.HasRule(OpKind::kRelu));
}

// FallsBackOnAbstract: whether all-abstract arguments would reach the fallback.
TEST_F(DispatchTest, FallsBackOnAbstractAsksWhetherAnyRuleMatchesAbstractArguments) {
  Domain<Toy> d("toy");
  d.SetFallback(Tagged<9>);
  d.Register(OpKind::kAdd, Tagged<1>, ArgPattern::AllConcrete());
  d.Register(OpKind::kReshape, Tagged<2>, ArgPattern::ConcreteAt({1}));
  d.Register(OpKind::kShape, Tagged<3>);
  d.Register(OpKind::kSlice, Tagged<4>, ArgPattern::ConcreteAt({}, 3));
  d.Register(OpKind::kConcat, Tagged<5>, ArgPattern::AllConcrete());
  EXPECT_TRUE(d.FallsBackOnAbstract(MakeOp(OpKind::kAdd, 2)));
  EXPECT_TRUE(d.FallsBackOnAbstract(MakeOp(OpKind::kReshape, 2)));
  EXPECT_TRUE(d.FallsBackOnAbstract(MakeOp(OpKind::kRelu, 1)));  // no rule at all
  EXPECT_FALSE(d.FallsBackOnAbstract(MakeOp(OpKind::kShape, 1)));
  EXPECT_FALSE(d.FallsBackOnAbstract(MakeOp(OpKind::kSlice, 3)));
  EXPECT_TRUE(d.FallsBackOnAbstract(MakeOp(OpKind::kSlice, 4)));  // arity differs
  // With no inputs, "all inputs concrete" holds vacuously.
  EXPECT_FALSE(d.FallsBackOnAbstract(MakeOp(OpKind::kConcat, 0)));
  // It agrees with what Apply does on abstract arguments.
  EXPECT_EQ(Dispatch(d, MakeOp(OpKind::kAdd, 2), {false, false}), 9);
  EXPECT_EQ(Dispatch(d, MakeOp(OpKind::kShape, 1), {false}), 3);
}

TEST_F(DispatchTest, MissingRuleIsUnimplementedNamingOpAndDomain) {
  Domain<Toy> domain("shape");
  const Op& op = MakeOp(OpKind::kSoftmax, 1);
  Toy arg;
  const Toy* ptr = &arg;
  StatusOr<std::vector<Toy>> out = domain.Apply(op, ArgList<Toy>(&ptr, 1));
  EXPECT_THAT(out,
              StatusIs(StatusCode::kUnimplemented, "no rule for op Softmax in domain 'shape'"));
}

}  // namespace
}  // namespace distir
