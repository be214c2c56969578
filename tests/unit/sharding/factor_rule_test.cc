// Factor rules (src/sharding/factor_rule.h): the reshape factorisation and the
// rules of the ops the golden cases lean on.

#include "sharding/factor_rule.h"

#include <gtest/gtest.h>

#include "interp/infer_types.h"
#include "testing/test_util.h"

namespace distir::sharding {
namespace {

using ::distir::testing::ParseOrDie;
using ::distir::testing::StatusIs;

FactorRule Reshape(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  FactorRule rule;
  rule.operands.resize(1);
  rule.results.resize(1);
  AddReshapeFactors(in, out, rule);
  return rule;
}

std::vector<int64_t> Sizes(const FactorRule& rule, const std::vector<int>& factors) {
  std::vector<int64_t> sizes;
  for (int f : factors) sizes.push_back(rule.factors[f].size);
  return sizes;
}

TEST(ReshapeFactorsTest, SplitsADimIntoCommonFactors) {
  // G08: [1430, 1] -> [10, 11, 13]; the input dim is 10 * 11 * 13, major first.
  FactorRule rule = Reshape({1430, 1}, {10, 11, 13});
  EXPECT_EQ(Sizes(rule, rule.operands[0][0]), (std::vector<int64_t>{10, 11, 13}));
  EXPECT_TRUE(rule.operands[0][1].empty());
  EXPECT_EQ(rule.results[0][0], std::vector<int>{rule.operands[0][0][0]});
  for (const Factor& f : rule.factors) EXPECT_FALSE(f.need_replication);
}

TEST(ReshapeFactorsTest, MergesTrailingDims) {
  // G12: [8, 16, 64] -> [8, 1024]: the 1024 is the factors 16 and 64.
  FactorRule rule = Reshape({8, 16, 64}, {8, 1024});
  EXPECT_EQ(Sizes(rule, rule.results[0][1]), (std::vector<int64_t>{16, 64}));
  EXPECT_EQ(rule.results[0][0], rule.operands[0][0]);
}

TEST(ReshapeFactorsTest, GroupsWithoutACommonRefinementNeedReplication) {
  FactorRule rule = Reshape({6, 4}, {4, 6});
  ASSERT_EQ(rule.operands[0][0].size(), 1u);
  EXPECT_TRUE(rule.factors[rule.operands[0][0][0]].need_replication);
  EXPECT_TRUE(rule.factors[rule.results[0][1][0]].need_replication);
}

TEST(FactorRuleTest, MatMulContractionIsAbsentFromTheResult) {
  Module m = ParseOrDie(R"(
func @f(%a: tensor<2x16x8xf32>, %b: tensor<2x8x32xf32>) {
  %c = MatMul(%a, %b)
  return %c
})");
  ASSERT_OK(InferTypes(m));
  ASSERT_OK_AND_ASSIGN(FactorRule rule, BuildFactorRule(*m.entry()->ops()[0]));
  int k = rule.operands[0][2][0];
  EXPECT_EQ(rule.operands[1][1][0], k);
  EXPECT_EQ(rule.factors[k].size, 8);
  for (const auto& dim : rule.results[0]) EXPECT_EQ(std::count(dim.begin(), dim.end(), k), 0);
  EXPECT_EQ(rule.partial_flow, PartialFlow::kAny);
  EXPECT_FALSE(rule.IsPassThrough());
}

TEST(FactorRuleTest, BroadcastDimsHaveNoFactor) {
  Module m = ParseOrDie(R"(
func @f(%a: tensor<4x8xf32>, %b: tensor<1x8xf32>) {
  %c = Add(%a, %b)
  return %c
})");
  ASSERT_OK(InferTypes(m));
  ASSERT_OK_AND_ASSIGN(FactorRule rule, BuildFactorRule(*m.entry()->ops()[0]));
  EXPECT_TRUE(rule.operands[1][0].empty());
  EXPECT_EQ(rule.operands[1][1], rule.results[0][1]);
  EXPECT_TRUE(rule.IsPassThrough());
}

TEST(FactorRuleTest, SoftmaxAxisNeedsReplication) {
  Module m = ParseOrDie(R"(
func @f(%x: tensor<8x1024xf32>) {
  %y = Softmax(%x) {axis = 1}
  return %y
})");
  ASSERT_OK(InferTypes(m));
  ASSERT_OK_AND_ASSIGN(FactorRule rule, BuildFactorRule(*m.entry()->ops()[0]));
  EXPECT_FALSE(rule.factors[rule.operands[0][0][0]].need_replication);
  EXPECT_TRUE(rule.factors[rule.operands[0][1][0]].need_replication);
}

// Grouped-query attention: q's 8 heads are the factors g = 2 (shared with k
// and v's heads) and r = 4 (q only), major g; so dk and dv lack r: sharding
// a group's query heads leaves them partial(sum).
TEST(FactorRuleTest, FlashAttentionSplitsHeadsAsGroupsTimesQueriesPerGroup) {
  Module m = ParseOrDie(R"(
func @f(%q: tensor<2x8x16x4xf32>, %k: tensor<2x2x16x4xf32>, %v: tensor<2x2x16x4xf32>) {
  %o, %lse = FlashAttention(%q, %k, %v) {causal = 1}
  %dq, %dk, %dv = FlashAttentionGrad(%q, %k, %v, %o, %lse, %o) {causal = 1}
  return %dq, %dk, %dv
})");
  ASSERT_OK(InferTypes(m));
  ASSERT_OK_AND_ASSIGN(FactorRule fwd, BuildFactorRule(*m.entry()->ops()[0]));
  ASSERT_EQ(fwd.operands[0][1].size(), 2u);
  const int g = fwd.operands[0][1][0], r = fwd.operands[0][1][1];
  EXPECT_EQ(Sizes(fwd, {g, r}), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(fwd.operands[1][1], std::vector<int>{g});
  EXPECT_EQ(fwd.results[1][1], (std::vector<int>{g, r}));             // lse [b, h, s]
  EXPECT_FALSE(fwd.factors[fwd.operands[0][0][0]].need_replication);  // batch
  EXPECT_TRUE(fwd.factors[fwd.operands[0][2][0]].need_replication);   // sequence
  EXPECT_TRUE(fwd.factors[fwd.operands[0][3][0]].need_replication);   // head width
  ASSERT_OK_AND_ASSIGN(FactorRule bwd, BuildFactorRule(*m.entry()->ops()[1]));
  EXPECT_EQ(bwd.results[1][1], std::vector<int>{bwd.operands[0][1][0]});
  for (const auto& dim : bwd.results[2]) {
    EXPECT_EQ(std::count(dim.begin(), dim.end(), bwd.operands[0][1][1]), 0);
  }
}

TEST(FactorRuleTest, CrossEntropyVocabularyNeedsReplicationAndTokensAreSummed) {
  Module m = ParseOrDie(R"(
func @f(%l: tensor<4x8x32xf32>, %y: tensor<4x8xi64>, %dy: tensor<4x8x16xf32>) {
  %loss = CrossEntropy(%l, %y)
  %dw = EmbeddingGrad(%y, %dy) {num_rows = 64}
  return %loss, %dw
})");
  ASSERT_OK(InferTypes(m));
  ASSERT_OK_AND_ASSIGN(FactorRule ce, BuildFactorRule(*m.entry()->ops()[0]));
  EXPECT_TRUE(ce.factors[ce.operands[0][2][0]].need_replication);
  EXPECT_FALSE(ce.factors[ce.operands[0][0][0]].need_replication);
  EXPECT_EQ(ce.operands[1][0], ce.operands[0][0]);
  EXPECT_TRUE(ce.results[0].empty());  // rank 0: the token factors are summed over
  ASSERT_OK_AND_ASSIGN(FactorRule eg, BuildFactorRule(*m.entry()->ops()[1]));
  // The 64 rows may be split (a vocab-parallel table): no operand has them.
  EXPECT_FALSE(eg.factors[eg.results[0][0][0]].need_replication);
  EXPECT_EQ(eg.results[0][1], eg.operands[1][2]);  // the width passes
}

// Megatron's vocab-parallel loss: LogSumExp reduces the vocabulary with
// kind logsumexp; given the lse, CrossEntropy sums the vocabulary (partial
// sum) and CrossEntropyGrad passes it through.
TEST(FactorRuleTest, GivenTheLogSumExpTheVocabularyMayBeSplit) {
  Module m = ParseOrDie(R"(
func @f(%l: tensor<4x8x32xf32>, %y: tensor<4x8xi64>) {
  %lse = LogSumExp(%l)
  %loss = CrossEntropy(%l, %y, %lse)
  %g = CrossEntropyGrad(%l, %y, %lse)
  return %loss, %g
})");
  ASSERT_OK(InferTypes(m));
  ASSERT_OK_AND_ASSIGN(FactorRule lse, BuildFactorRule(*m.entry()->ops()[0]));
  const int v = lse.operands[0][2][0];
  EXPECT_FALSE(lse.factors[v].need_replication);
  EXPECT_EQ(lse.factors[v].reduction, ReductionKind::kLogSumExp);
  EXPECT_EQ(lse.results[0], (TensorFactors{lse.operands[0][0], lse.operands[0][1]}));
  ASSERT_OK_AND_ASSIGN(FactorRule ce, BuildFactorRule(*m.entry()->ops()[1]));
  EXPECT_FALSE(ce.factors[ce.operands[0][2][0]].need_replication);
  EXPECT_EQ(ce.factors[ce.operands[0][2][0]].reduction, ReductionKind::kSum);
  EXPECT_EQ(ce.operands[2], ce.operands[1]);  // lse has the labels' token dims
  EXPECT_TRUE(ce.results[0].empty());
  ASSERT_OK_AND_ASSIGN(FactorRule g, BuildFactorRule(*m.entry()->ops()[2]));
  EXPECT_EQ(g.results[0], g.operands[0]);
}

TEST(FactorRuleTest, CallsHaveNoRule) {
  Module m = ParseOrDie(R"(
func @g(%x: tensor<4xf32>) {
  %y = Relu(%x)
  return %y
}
func @f(%x: tensor<4xf32>) {
  %y = @g(%x)
  return %y
})");
  ASSERT_OK(InferTypes(m));
  EXPECT_THAT(BuildFactorRule(*m.entry()->ops()[0]).status(),
              StatusIs(StatusCode::kUnimplemented, "no sharding rule for @g"));
}

}  // namespace
}  // namespace distir::sharding
