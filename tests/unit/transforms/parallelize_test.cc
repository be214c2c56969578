// Structure of the distributed programs: device layout, collectives, op
// counts, and the errors for invalid requests.

#include "transforms/parallelize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using ::testing::HasSubstr;

Module Sequential(const std::string& name) {
  StatusOr<Module> m = BuildModel(*LookupModel(name));
  EXPECT_OK(m.status());
  EXPECT_OK(InferTypes(*m));
  return std::move(*m);
}

ParallelOptions Options(int64_t d, int64_t t, int64_t p, int64_t k) {
  ParallelOptions o;
  o.dp = d;
  o.tp = t;
  o.pp = p;
  o.microbatches = k;
  return o;
}

std::map<OpKind, int> CountKinds(const Function& fn) {
  std::map<OpKind, int> counts;
  for (const auto& op : fn.ops()) ++counts[op->kind()];
  return counts;
}

TEST(ParallelizeTest, UsesEveryDeviceOfTheMeshWithTensorShardsAdjacent) {
  Module seq = Sequential("mlp-tiny");
  ASSERT_OK_AND_ASSIGN(DistributedProgram dist, Parallelize(*seq.entry(), Options(2, 2, 2, 2)));
  std::set<int> devices;
  for (const auto& op : dist.program().ops()) {
    for (const auto& r : op->results()) devices.insert(r->type().device().value());
    if (op->kind() == OpKind::kAllReduce && op->num_inputs() == 2) {
      // Tensor-parallel all-reduces join neighbours (t innermost); data-parallel
      // ones join devices P*T = 4 apart.
      const int a = op->input(0)->type().device().value();
      const int b = op->input(1)->type().device().value();
      EXPECT_TRUE(b - a == 1 || b - a == 4) << a << " " << b;
    }
  }
  EXPECT_EQ(devices, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// Op counts by construction (L = 8 layers, D = 2, T = 1, P = 2, K = 4):
// compute D K (4L + 2) = 272; sends D K 2 (P - 1) = 16; gradient accumulation
// Adds D (K - 1) L = 48 and loss Adds D (K - 1) = 6; DP all-reduces L = 8
// (one per weight, over the 2 replicas); SGD D L = 16.
TEST(ParallelizeTest, MlpOpCountsFollowTheFormula) {
  Module seq = Sequential("mlp-tiny");
  ASSERT_OK_AND_ASSIGN(DistributedProgram dist, Parallelize(*seq.entry(), Options(2, 1, 2, 4)));
  const auto counts = CountKinds(dist.program());
  EXPECT_EQ(counts.at(OpKind::kMatMul) + counts.at(OpKind::kRelu) + counts.at(OpKind::kMSELoss) +
                counts.at(OpKind::kMSELossGrad) + counts.at(OpKind::kReluGrad) +
                counts.at(OpKind::kMatMulGrad),
            2 * 4 * (4 * 8 + 2));
  EXPECT_EQ(counts.at(OpKind::kSend), 2 * 4 * 2 * 1);
  EXPECT_EQ(counts.at(OpKind::kAdd), 2 * 3 * 8 + 2 * 3);
  EXPECT_EQ(counts.at(OpKind::kAllReduce), 8);
  EXPECT_EQ(counts.at(OpKind::kSGD), 2 * 8);
  EXPECT_EQ(static_cast<int>(dist.program().ops().size()), 272 + 16 + 54 + 8 + 16);
}

// Megatron: one all-reduce per layer pair in the forward pass and one per pair
// in the backward pass, per microbatch (L = 8: 4 pairs).
TEST(ParallelizeTest, TensorParallelAllReducesOncePerPairEachWay) {
  Module seq = Sequential("mlp-tiny");
  ASSERT_OK_AND_ASSIGN(DistributedProgram dist, Parallelize(*seq.entry(), Options(1, 4, 1, 2)));
  EXPECT_EQ(CountKinds(dist.program()).at(OpKind::kAllReduce), 2 * (4 + 4));
}

TEST(ParallelizeTest, Gpt2AllReducesTwicePerBlock) {
  Module seq = Sequential("gpt2-tiny");
  ASSERT_OK_AND_ASSIGN(DistributedProgram dist, Parallelize(*seq.entry(), Options(1, 2, 1, 1)));
  EXPECT_EQ(CountKinds(dist.program()).at(OpKind::kAllReduce), 2 * 8);
}

TEST(ParallelizeTest, ProgramIsTheModuleEntryAndTypesAreInferred) {
  Module seq = Sequential("gpt2-tiny");
  ASSERT_OK_AND_ASSIGN(DistributedProgram dist, Parallelize(*seq.entry(), Options(2, 2, 2, 2)));
  EXPECT_EQ(dist.module.entry(), &dist.program());
  for (const auto& op : dist.program().ops()) {
    for (const auto& r : op->results()) EXPECT_FALSE(r->type().is_unknown()) << r->name();
  }
}

struct BadRequest {
  const char* model;
  ParallelOptions options;
  const char* message;
};

TEST(ParallelizeTest, InvalidRequestsSayWhichRuleFailed) {
  ParallelOptions zero_without_dp = Options(1, 1, 1, 1);
  zero_without_dp.zero_stage = 1;
  ParallelOptions zero_on_inference = Options(2, 1, 1, 1);
  zero_on_inference.zero_stage = 2;
  ParallelOptions wrong_world = Options(2, 2, 2, 1);
  wrong_world.num_devices = 16;
  const std::vector<BadRequest> cases = {
      {"mlp-tiny", Options(1, 3, 1, 1), "T = 3 does not divide the hidden width d (16)"},
      {"gpt2-tiny", Options(1, 16, 1, 1), "T = 16 does not divide the number of attention heads (8)"},
      {"mlp-tiny", Options(1, 1, 16, 1), "P = 16 exceeds the 8 layers"},
      {"mlp-tiny", Options(8, 1, 1, 8), "batch / (D*K) < 1: batch 32, D*K = 64"},
      {"mlp-tiny", Options(1, 1, 1, 3), "batch 32 is not divisible by D*K = 3"},
      {"mlp-tiny", Options(0, 1, 1, 1), "parallel degrees must be >= 1"},
      {"mlp-tiny", zero_without_dp, "needs D > 1"},
      {"gpt2-tiny", zero_on_inference, "inference model"},
      {"mlp-tiny", wrong_world, "D*T*P = 8 does not match the 16 devices"},
  };
  for (const BadRequest& c : cases) {
    Module seq = Sequential(c.model);
    auto result = Parallelize(*seq.entry(), c.options);
    ASSERT_FALSE(result.ok()) << c.message;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(result.status().message(), HasSubstr(c.message));
  }
}

TEST(ParallelizeTest, RejectsUnknownFunctions) {
  Module m = testing::ParseOrDie("func @f(%x: tensor<4xf32, d0>) {\n  %y = Relu(%x)\n  return %y\n}\n");
  auto result = Parallelize(*m.entry(), Options(1, 1, 1, 1));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("neither an MLP"));
}

}  // namespace
}  // namespace distir

namespace distir {
namespace {

// Peak memory (the maximum over devices) of an MLP training step distributed
// by `o`, simulated on the DGX-2 profile.
int64_t PeakMemory(const MlpOptions& mlp, const ParallelOptions& o) {
  StatusOr<Module> seq = BuildMlpTraining(mlp);
  EXPECT_OK(seq.status());
  EXPECT_OK(InferTypes(*seq));
  StatusOr<DistributedProgram> dist = Parallelize(*seq->entry(), o);
  EXPECT_OK(dist.status());
  StatusOr<sim::HardwareProfile> hw =
      sim::LoadHardwareProfile(testing::SourcePath("configs/hardware/dgx2-v100.yaml"));
  EXPECT_OK(hw.status());
  StatusOr<sim::SimulationResult> r = sim::Simulate(dist->module, dist->program(), *hw);
  EXPECT_OK(r.status());
  return r->PeakMemoryBytes();
}

// Paper Figure 8, generalised: recomputing each stage's activations in its
// backward task keeps only the stage inputs alive between forward and
// backward, so a deep pipeline with many microbatches in flight needs less.
TEST(ParallelizeMemoryTest, RecomputationLowersPeakMemory) {
  MlpOptions mlp;
  mlp.n_layer = 8;
  mlp.d_model = 64;
  mlp.batch = 1024;
  ParallelOptions o = Options(1, 1, 2, 8);
  const int64_t plain = PeakMemory(mlp, o);
  o.recompute = RecomputeKind::kFull;
  const int64_t recomputed = PeakMemory(mlp, o);
  EXPECT_LT(recomputed, plain);
}

// Paper Figure 9, generalised: ZeRO-1 shards Adam's moments over the D
// replicas, ZeRO-2 also the gradients, ZeRO-3 also the weights.
TEST(ParallelizeMemoryTest, ZeroStagesLowerPeakMemoryPerDevice) {
  MlpOptions mlp;
  mlp.n_layer = 4;
  mlp.d_model = 256;
  mlp.batch = 32;
  mlp.optimizer = MlpOptimizer::kAdam;
  std::vector<int64_t> peaks;
  for (int zero = 0; zero <= 3; ++zero) {
    ParallelOptions o = Options(4, 1, 1, 2);
    o.zero_stage = zero;
    peaks.push_back(PeakMemory(mlp, o));
  }
  EXPECT_LT(peaks[1], peaks[0]);
  EXPECT_LE(peaks[2], peaks[1]);
  EXPECT_LT(peaks[3], peaks[2]);
  // ZeRO-3 with D = 4 holds a quarter of weights and state, plus one layer's
  // gathered weight at a time: well under half of plain data parallelism.
  EXPECT_LT(peaks[3] * 2, peaks[0]);
}

}  // namespace
}  // namespace distir
