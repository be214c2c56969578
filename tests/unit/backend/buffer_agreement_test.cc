// The simulator's buffers (sim/memory_tracker.h) and the executor's arena plan
// (backend/memory_plan.h) alias the same results to the same inputs: both take
// the facts from ir/op_alias.h. Checked value by value, on a hand-written rank
// program holding every aliasing op kind (views, in-place optimizers, tokens)
// and on the rank programs of mlp-tiny (SGD and Adam, pipelined and
// data-parallel) and gpt2-tiny (tensor-parallel), distributed by the sharding
// path (sharding/grid.h).

#include <gtest/gtest.h>

#include <set>
#include <span>
#include <vector>

#include "backend/executor.h"
#include "backend/memory_plan.h"
#include "interp/infer_types.h"
#include "ir/op_alias.h"
#include "models/model_zoo.h"
#include "search/model_grid.h"
#include "sim/memory_tracker.h"
#include "testing/test_util.h"

namespace distir::backend {
namespace {

using ::distir::testing::ParseAndInferOrDie;

std::vector<int32_t> SimBuffers(const sim::BufferPlan& plan, const Value& v) {
  std::span<const int32_t> b = plan.buffers_of(v.id());
  return {b.begin(), b.end()};
}

// For every result of every op of `fn`: the planner gives it the buffer of
// input i exactly when the simulator does, and exactly when AliasedInput says
// so. Returns how many results alias an input.
int ExpectSameAliasing(const Function& fn) {
  StatusOr<MemoryPlan> planned = MemoryPlan::Build(fn);
  StatusOr<sim::BufferPlan> simulated = sim::BufferPlan::Build(fn, nullptr, false, true, nullptr);
  EXPECT_OK(planned.status());
  EXPECT_OK(simulated.status());
  if (!planned.ok() || !simulated.ok()) return 0;
  int aliased = 0;
  for (const auto& op : fn.ops()) {
    for (int r = 0; r < op->num_results(); ++r) {
      const Value& out = *op->result(r);
      const int expected = AliasedInput(*op, r);
      aliased += expected >= 0 ? 1 : 0;
      for (int i = 0; i < op->num_inputs(); ++i) {
        const Value& in = *op->input(i);
        const bool plan_shares = planned->buffer_of(out.id()) == planned->buffer_of(in.id());
        const bool sim_shares = SimBuffers(*simulated, out) == SimBuffers(*simulated, in);
        EXPECT_EQ(plan_shares, i == expected) << op->Name() << " result " << r << " input " << i
                                              << " in @" << fn.name() << " (planner)";
        EXPECT_EQ(sim_shares, i == expected) << op->Name() << " result " << r << " input " << i
                                             << " in @" << fn.name() << " (simulator)";
      }
    }
  }
  return aliased;
}

TEST(BufferAgreementTest, EveryAliasingOpKindSharesTheSameBufferInBoth) {
  // Rank d1's program: views, SGD, Adam, a SendTo token, a Reduce whose root
  // is d2 (a token on d1), and ops with fresh results (MatMul, an AllReduce, a
  // Reduce rooted at d1).
  Module m = ParseAndInferOrDie(R"(
    func @rank_d1(%x: tensor<4x4xf32, d1>, %w: tensor<4x4xf32, d1>, %m: tensor<4x4xf32, d1>,
                  %v: tensor<4x4xf32, d1>) {
      %s = Constant() {device = d1, value = dense<2xi64>[2, 8]}
      %y = MatMul(%x, %w) : tensor<4x4xf32, d1>
      %r = Reshape(%y, %s) : tensor<2x8xf32, d1>
      %u = Unsqueeze(%r) {axes = [0]} : tensor<1x2x8xf32, d1>
      %q = Squeeze(%u) {axes = [0]} : tensor<2x8xf32, d1>
      %i = Identity(%q) : tensor<2x8xf32, d1>
      %w1 = SGD(%w, %y) {lr = 0.1} : tensor<4x4xf32, d1>
      %w2, %m2, %v2 = Adam(%w1, %y, %m, %v) : tensor<4x4xf32, d1>, tensor<4x4xf32, d1>, tensor<4x4xf32, d1>
      _ = SendTo(%i) {device = d2}
      %t = Collective(%y) {device = d2, group = [d1, d2], kind = "Reduce", rank = 0} : tensor<4x4xf32, d1>
      %a = Collective(%y) {group = [d1, d2], kind = "AllReduce", rank = 0} : tensor<4x4xf32, d1>
      %z = Collective(%a) {device = d1, group = [d1, d2], kind = "Reduce", rank = 0} : tensor<4x4xf32, d1>
      return %w2, %m2, %v2, %t, %z
    })");
  // Reshape, Unsqueeze, Squeeze, Identity, SGD, Adam x 3, SendTo, the d2-rooted Reduce.
  EXPECT_EQ(ExpectSameAliasing(*m.entry()), 10);
}

struct Case {
  const char* model;
  int64_t dp, tp, pp, k;
  bool adam;
};

TEST(BufferAgreementTest, RankProgramsOfTheTinyModelsAgree) {
  for (const Case& c : {Case{"mlp-tiny", 2, 1, 2, 2, false}, Case{"mlp-tiny", 2, 2, 1, 1, true},
                        Case{"mlp-tiny", 1, 1, 2, 2, true}, Case{"gpt2-tiny", 1, 2, 1, 1, false}}) {
    SCOPED_TRACE(::testing::Message() << c.model << " D" << c.dp << " T" << c.tp << " P" << c.pp
                                      << " K" << c.k << (c.adam ? " adam" : ""));
    ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(c.model));
    if (c.adam) spec.mlp.optimizer = MlpOptimizer::kAdam;
    ParallelOptions o;
    o.dp = c.dp;
    o.tp = c.tp;
    o.pp = c.pp;
    o.microbatches = c.k;
    ASSERT_OK_AND_ASSIGN(Module dist, search::DistributeModel(spec, o));
    ASSERT_OK_AND_ASSIGN(ExecutionPlan plan, PrepareExecution(dist, *dist.entry()));
    int aliased = 0;
    for (const RankProgram& p : plan.programs) aliased += ExpectSameAliasing(*p.function);
    EXPECT_GT(aliased, 0);
  }
}

}  // namespace
}  // namespace distir::backend
