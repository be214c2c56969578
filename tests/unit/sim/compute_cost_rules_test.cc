// Closed-form checks of every compute cost rule (docs/cost_model.md).
//
// TestHardware(): DRAM B = 1e11 B/s, vector V = 1e12 FLOP/s, matrix f32 1e13
// and f16 1e14 FLOP/s, launch L = 1e-5 s. A roofline kernel costs
// max(bytes/B, flops/V) + L; a matmul max(bytes/B, flops/peak(dtype)) + L.

#include <gtest/gtest.h>

#include "sim/cost_model.h"
#include "sim_test_util.h"

namespace distir::sim {
namespace {

using testing::F16;
using testing::F32;
using testing::I64;
using testing::MakeOp;
using testing::TestHardware;

double Cost(OpKind kind, const std::vector<Type>& in, const std::vector<Type>& out,
            const HardwareProfile& hw = TestHardware(), AttrMap attrs = {}) {
  testing::OneOp one = MakeOp(kind, in, out, std::move(attrs));
  CostModel model(hw, nullptr);
  StatusOr<double> cost = model.OpCost(*one.op);
  EXPECT_TRUE(cost.ok()) << cost.status().ToString();
  return cost.ok() ? *cost : -1;
}

void ExpectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * expected + 1e-18) << "expected " << expected;
}

TEST(ComputeCostRulesTest, EveryOpKindHasARule) {
  CostRuleTable table;
  RegisterComputeCostRules(table);
  RegisterCommunicationCostRules(table);
  for (const OpInfo& info : AllOps()) {
    EXPECT_NE(table.Find(info.kind), nullptr) << "no cost rule for " << info.name;
  }
}

TEST(ComputeCostRulesTest, AddIsMemoryBound) {
  // 1024x1024 f32 + 1024x1024 f32: bytes 3 * 4 MiB = 12582912 -> 1.2582912e-4 s;
  // flops 2^20 / 1e12 = 1.05e-6 s; max + L = 1.3582912e-4 s.
  ExpectSeconds(Cost(OpKind::kAdd, {F32({1024, 1024}), F32({1024, 1024})}, {F32({1024, 1024})}),
                1.3582912e-4);
}

TEST(ComputeCostRulesTest, BroadcastOperandMovesItsOwnSize) {
  // [1024,1024] + [1024]: 4194304 + 4096 + 4194304 = 8392704 B -> 8.392704e-5 + L.
  ExpectSeconds(Cost(OpKind::kAdd, {F32({1024, 1024}), F32({1024})}, {F32({1024, 1024})}),
                9.392704e-5);
}

TEST(ComputeCostRulesTest, UnaryElementwise) {
  // Relu of 1000 f32: 8000 B -> 8e-8 s (flops 1e-9 s) + L = 1.008e-5.
  for (OpKind k : {OpKind::kRelu, OpKind::kNeg, OpKind::kSqrt, OpKind::kExp, OpKind::kErf,
                   OpKind::kTanh, OpKind::kSin, OpKind::kCos}) {
    ExpectSeconds(Cost(k, {F32({1000})}, {F32({1000})}), 1.008e-5);
  }
  // Cast f32 -> f16 of 1000: 4000 + 2000 B -> 6e-8 + L.
  ExpectSeconds(Cost(OpKind::kCast, {F32({1000})}, {F16({1000})}), 1.006e-5);
  // ReluGrad(dy, x) -> dx: 3 x 4000 B -> 1.2e-7 + L.
  ExpectSeconds(Cost(OpKind::kReluGrad, {F32({1000}), F32({1000})}, {F32({1000})}), 1.012e-5);
}

TEST(ComputeCostRulesTest, ComputeBoundElementwiseTakesTheFlopsSide) {
  // Gelu of 1e6 f16 with V = 1e9: bytes 4e6 / 1e11 = 4e-5 s, flops 5e6 / 1e9 = 5e-3 s;
  // max, not sum: 5e-3 + L = 5.01e-3.
  HardwareProfile hw = TestHardware();
  hw.device.vector_flops = 1e9;
  ExpectSeconds(Cost(OpKind::kGelu, {F16({1000, 1000})}, {F16({1000, 1000})}, hw), 5.01e-3);
  // GeluGrad(dy, x) counts 10 flops per element: 1e7 / 1e9 = 1e-2 + L.
  ExpectSeconds(
      Cost(OpKind::kGeluGrad, {F16({1000, 1000}), F16({1000, 1000})}, {F16({1000, 1000})}, hw),
      1.001e-2);
}

TEST(ComputeCostRulesTest, SigmoidAndSigmoidGradCountThreeFlops) {
  // With V = 1e9, 1e6 f16 elements: Sigmoid moves 4e6 B (4e-5 s) and does 3e6 flops
  // (exp, add, divide): 3e-3 + L = 3.01e-3. SigmoidGrad(y, dy) moves 6e6 B (6e-5 s)
  // and does dy·y·(1 − y), 3e6 flops: 3.01e-3 as well.
  HardwareProfile hw = TestHardware();
  hw.device.vector_flops = 1e9;
  const Type t = F16({1000, 1000});
  ExpectSeconds(Cost(OpKind::kSigmoid, {t}, {t}, hw), 3.01e-3);
  ExpectSeconds(Cost(OpKind::kSigmoidGrad, {t, t}, {t}, hw), 3.01e-3);
  // Memory-bound at V = 1e12: Sigmoid of 1000 f32 is 8000 B -> 8e-8 s; + L.
  ExpectSeconds(Cost(OpKind::kSigmoid, {F32({1000})}, {F32({1000})}), 1.008e-5);
}

TEST(ComputeCostRulesTest, VariadicSum) {
  // Sum of 3 x 1000 f32: bytes 16000 -> 1.6e-7 s; flops 2000 -> 2e-9 s; + L.
  ExpectSeconds(Cost(OpKind::kSum, {F32({1000}), F32({1000}), F32({1000})}, {F32({1000})}),
                1.016e-5);
}

TEST(ComputeCostRulesTest, SoftmaxLayerNormAndReductions) {
  // Softmax [64,1000] f32: 2 x 256000 B = 5.12e-6 s; 5 x 64000 flops = 3.2e-7 s; + L.
  ExpectSeconds(Cost(OpKind::kSoftmax, {F32({64, 1000})}, {F32({64, 1000})}), 1.512e-5);
  // LayerNorm(x [64,1000], scale [1000], bias [1000]): 256000 + 4000 + 4000 + 256000 B
  // = 520000 B -> 5.2e-6 s (8 x 64000 flops = 5.12e-7 s); + L.
  ExpectSeconds(Cost(OpKind::kLayerNormalization, {F32({64, 1000}), F32({1000}), F32({1000})},
                     {F32({64, 1000})}),
                1.52e-5);
  // ReduceSum [64,1000] -> [1000]: 256000 + 4000 B -> 2.6e-6 s; + L.
  ExpectSeconds(Cost(OpKind::kReduceSum, {F32({64, 1000})}, {F32({1000})}), 1.26e-5);
  ExpectSeconds(Cost(OpKind::kReduceMean, {F32({64, 1000})}, {F32({1000})}), 1.26e-5);
}

TEST(ComputeCostRulesTest, RMSNormalizationAndItsGradient) {
  // RMSNormalization(x [64,1000], scale [1000]) -> y: 256000 + 4000 + 256000 B =
  // 516000 B -> 5.16e-6 s (4 x 64000 flops = 2.56e-7 s); + L = 1.516e-5.
  const Type x = F32({64, 1000});
  const Type scale = F32({1000});
  ExpectSeconds(Cost(OpKind::kRMSNormalization, {x, scale}, {x}), 1.516e-5);
  // RMSNormalizationGrad(x, scale, dy) -> (dx, dscale): 3 x 256000 + 2 x 4000 B =
  // 776000 B -> 7.76e-6 s (11 x 64000 flops = 7.04e-7 s); + L = 1.776e-5.
  ExpectSeconds(Cost(OpKind::kRMSNormalizationGrad, {x, scale, x}, {x, scale}), 1.776e-5);
  // Compute-bound at V = 1e9: 704000 flops -> 7.04e-4 s; + L = 7.14e-4.
  HardwareProfile hw = TestHardware();
  hw.device.vector_flops = 1e9;
  ExpectSeconds(Cost(OpKind::kRMSNormalizationGrad, {x, scale, x}, {x, scale}, hw), 7.14e-4);
}

TEST(ComputeCostRulesTest, GatherAndSliceReadOnlyWhatTheyWrite) {
  // Gather(data [50000,1024] f32, idx [8,16] i64) -> [8,16,1024]: the rows read and
  // written, 2 x 524288 B, plus 1024 B of indices = 1049600 B -> 1.0496e-5 s; + L.
  ExpectSeconds(Cost(OpKind::kGather, {F32({50000, 1024}), I64({8, 16})}, {F32({8, 16, 1024})}),
                2.0496e-5);
  // Slice([100,100] f32, starts [1] i64, ends [1] i64) -> [10,100]: 2 x 4000 + 16 B
  // = 8016 B -> 8.016e-8 s; + L.
  ExpectSeconds(Cost(OpKind::kSlice, {F32({100, 100}), I64({1}), I64({1})}, {F32({10, 100})}),
                1.008016e-5);
}

TEST(ComputeCostRulesTest, DataMovement) {
  // Transpose [1024,512] f32: 2 x 2097152 B -> 4.194304e-5 s; + L.
  ExpectSeconds(Cost(OpKind::kTranspose, {F32({1024, 512})}, {F32({512, 1024})}), 5.194304e-5);
  // Concat 2 x [10,10] -> [20,10] and Split back: 1600 B -> 1.6e-8 s; + L.
  ExpectSeconds(Cost(OpKind::kConcat, {F32({10, 10}), F32({10, 10})}, {F32({20, 10})}, TestHardware(),
                     {{"axis", 0}}),
                1.0016e-5);
  ExpectSeconds(Cost(OpKind::kSplit, {F32({20, 10})}, {F32({10, 10}), F32({10, 10})}), 1.0016e-5);
}

TEST(ComputeCostRulesTest, MetadataOpsAreFree) {
  EXPECT_EQ(Cost(OpKind::kReshape, {F32({4, 4}), I64({1})}, {F32({16})}), 0);
  EXPECT_EQ(Cost(OpKind::kShape, {F32({4, 4})}, {I64({2})}), 0);
  EXPECT_EQ(Cost(OpKind::kUnsqueeze, {F32({4})}, {F32({1, 4})}), 0);
  EXPECT_EQ(Cost(OpKind::kSqueeze, {F32({1, 4})}, {F32({4})}), 0);
  EXPECT_EQ(Cost(OpKind::kIdentity, {F32({4})}, {F32({4})}), 0);
  EXPECT_EQ(Cost(OpKind::kConstant, {}, {I64({2})}), 0);
  Type pair = Type::Tuple({F32({4}), F32({4})});
  EXPECT_EQ(Cost(OpKind::kTuple, {F32({4}), F32({4})}, {pair}), 0);
  EXPECT_EQ(Cost(OpKind::kUnpackTuple, {pair}, {F32({4}), F32({4})}), 0);
}

TEST(ComputeCostRulesTest, MatMulF32IsComputeBound) {
  // 1024^3 f32: flops 2 x 1024^3 = 2147483648 / 1e13 = 2.147483648e-4 s; bytes
  // 3 x 4 MiB = 1.2582912e-4 s; max + L = 2.247483648e-4 s.
  ExpectSeconds(Cost(OpKind::kMatMul, {F32({1024, 1024}), F32({1024, 1024})}, {F32({1024, 1024})}),
                2.247483648e-4);
}

TEST(ComputeCostRulesTest, MatMulF16UsesTensorCorePeak) {
  // f16: flops 2147483648 / 1e14 = 2.15e-5 s; bytes 3 x 2 MiB = 6.291456e-5 s (memory
  // bound); + L = 7.291456e-5 s.
  ExpectSeconds(Cost(OpKind::kMatMul, {F16({1024, 1024}), F16({1024, 1024})}, {F16({1024, 1024})}),
                7.291456e-5);
}

TEST(ComputeCostRulesTest, BatchedMatMul) {
  // [4,128,64] x [64,32] -> [4,128,32]: flops 2 x 16384 x 64 = 2097152 -> 2.1e-7 s;
  // bytes (32768 + 2048 + 16384) x 4 = 204800 -> 2.048e-6 s; + L.
  ExpectSeconds(Cost(OpKind::kMatMul, {F32({4, 128, 64}), F32({64, 32})}, {F32({4, 128, 32})}),
                1.2048e-5);
}

TEST(ComputeCostRulesTest, GemmWithTransposedAAndBias) {
  // transA: A [512,1024] -> M = 1024, K = 512; B [512,256], C [256]; Y [1024,256].
  // flops 2 x 1024 x 256 x 512 + 1024 x 256 = 268697600 -> 2.687e-5 s; bytes
  // (524288 + 131072 + 256 + 262144) x 4 = 3671040 -> 3.67104e-5 s; + L.
  ExpectSeconds(Cost(OpKind::kGemm, {F32({512, 1024}), F32({512, 256}), F32({256})},
                     {F32({1024, 256})}, TestHardware(), {{"transA", 1}}),
                4.67104e-5);
  // 4096^3 without bias: flops 2 x 4096^3 = 137438953472 -> 1.37438953472e-2 s; + L.
  ExpectSeconds(Cost(OpKind::kGemm, {F32({4096, 4096}), F32({4096, 4096})}, {F32({4096, 4096})}),
                1.37538953472e-2);
}

TEST(ComputeCostRulesTest, MatMulGradIsTwoMatMuls) {
  // x [1024,512], w [512,256], dy [1024,256]: each GEMM 2 x 524288 x 256 = 268435456
  // flops (2.68e-5 s) and 917504 x 4 = 3670016 B (3.670016e-5 s): 2 x (3.670016e-5 + L).
  ExpectSeconds(Cost(OpKind::kMatMulGrad, {F32({1024, 512}), F32({512, 256}), F32({1024, 256})},
                     {F32({1024, 512}), F32({512, 256})}),
                9.340032e-5);
}

TEST(ComputeCostRulesTest, CalibratedMatMulRegression) {
  // 2e-5 + 1e-13 x 2147483648 + 1e-11 x 12582912 = 3.605774848e-4 s (no extra launch).
  HardwareProfile hw = TestHardware();
  hw.device.matmul_regression = MatMulRegression{2e-5, 1e-13, 1e-11};
  ExpectSeconds(
      Cost(OpKind::kMatMul, {F32({1024, 1024}), F32({1024, 1024})}, {F32({1024, 1024})}, hw),
      3.605774848e-4);
}

TEST(ComputeCostRulesTest, MatMulRegressionOfOneDtypeTimesOnlyThatDtype) {
  // A bf16 regression: 1e-5 + 1e-15 x 2147483648 + 0 = 1.2147483648e-5 s for bf16.
  // f32 has none of its own and no single regression: the roofline, as without.
  HardwareProfile hw = TestHardware();
  hw.device.matmul_regressions.emplace_back(DType::kBF16, MatMulRegression{1e-5, 1e-15, 0});
  const Type b = Type::Tensor(DType::kBF16, {1024, 1024});
  ExpectSeconds(Cost(OpKind::kMatMul, {b, b}, {b}, hw), 1.2147483648e-5);
  const double roofline =
      Cost(OpKind::kMatMul, {F32({1024, 1024}), F32({1024, 1024})}, {F32({1024, 1024})});
  ExpectSeconds(
      Cost(OpKind::kMatMul, {F32({1024, 1024}), F32({1024, 1024})}, {F32({1024, 1024})}, hw),
      roofline);
  // A single regression times every dtype without one of its own.
  hw.device.matmul_regression = MatMulRegression{2e-5, 1e-13, 1e-11};
  ExpectSeconds(
      Cost(OpKind::kMatMul, {F32({1024, 1024}), F32({1024, 1024})}, {F32({1024, 1024})}, hw),
      3.605774848e-4);
  ExpectSeconds(Cost(OpKind::kMatMul, {b, b}, {b}, hw), 1.2147483648e-5);
}

TEST(ComputeCostRulesTest, LossReadsPredictionsAndLabels) {
  // MSELoss(p, y) [64,1000] -> scalar: 2 x 256000 + 4 B = 512004 -> 5.12004e-6 s; + L.
  ExpectSeconds(Cost(OpKind::kMSELoss, {F32({64, 1000}), F32({64, 1000})}, {F32({})}),
                1.512004e-5);
  // MSELossGrad(p, y) -> dp: 3 x 256000 B -> 7.68e-6 s; + L.
  ExpectSeconds(Cost(OpKind::kMSELossGrad, {F32({64, 1000}), F32({64, 1000})}, {F32({64, 1000})}),
                1.768e-5);
}

TEST(ComputeCostRulesTest, OptimizersCountEveryPass) {
  // SGD(w, dw) [1000,1000] f32: reads w, dw, writes w: 3 x 4e6 B -> 1.2e-4 s; + L.
  ExpectSeconds(Cost(OpKind::kSGD, {F32({1000, 1000}), F32({1000, 1000})}, {F32({1000, 1000})}),
                1.3e-4);
  // Adam(w, dw, m, v) -> (w, m, v): 7 x 4e6 B -> 2.8e-4 s (12e6 flops = 1.2e-5 s); + L.
  Type t = F32({1000, 1000});
  ExpectSeconds(Cost(OpKind::kAdam, {t, t, t, t}, {t, t, t}), 2.9e-4);
}

}  // namespace
}  // namespace distir::sim

namespace distir::sim {
namespace {

TEST(ComputeCostRulesTest, FlashAttentionIsAMatrixKernelOfFourBhsTdFlops) {
  // q, k, v, o [1, 8, 4096, 128] f16 (8 MiB each), lse [1, 8, 4096] f32 (128 KiB).
  // Forward: 4 x (8 x 4096 x 128) x 4096 = 68719476736 FLOPs -> 6.8719476736e-4 s at
  // 1e14; bytes 4 x 8388608 + 131072 = 33685504 -> 3.3685504e-4 s; + L.
  const Type x = F16({1, 8, 4096, 128});
  const Type lse = F32({1, 8, 4096});
  ExpectSeconds(Cost(OpKind::kFlashAttention, {x, x, x}, {x, lse}), 6.9719476736e-4);
  // Causal: half the FLOPs, 3.4359738368e-4 s, still above the bytes' 3.3685504e-4.
  ExpectSeconds(Cost(OpKind::kFlashAttention, {x, x, x}, {x, lse}, TestHardware(),
                     {{"causal", int64_t{1}}}),
                3.5359738368e-4);
  // Backward: 2.5 x the forward, 1.7179869184e-3 s; bytes (q k v o do dq dk dv) 8 x
  // 8388608 + 131072 -> 6.7239936e-4 s; + L.
  ExpectSeconds(Cost(OpKind::kFlashAttentionGrad, {x, x, x, x, lse, x}, {x, x, x}),
                1.7279869184e-3);
}

TEST(ComputeCostRulesTest, GroupedQueryAttentionReadsSmallerKeysAndValues) {
  // q [2, 8, 1024, 64] f16 (2 MiB), k, v [2, 2, 1024, 64] (512 KiB), causal:
  // 4 x 1048576 x 1024 / 2 = 2147483648 FLOPs -> 2.147483648e-5 s; bytes 2 x 2097152 +
  // 2 x 524288 + 65536 = 5308416 -> 5.308416e-5 s (memory bound); + L.
  const Type q = F16({2, 8, 1024, 64});
  const Type kv = F16({2, 2, 1024, 64});
  ExpectSeconds(Cost(OpKind::kFlashAttention, {q, kv, kv}, {q, F32({2, 8, 1024})}, TestHardware(),
                     {{"causal", int64_t{1}}}),
                6.308416e-5);
}

TEST(ComputeCostRulesTest, EmbeddingGradScattersIntoAZeroedTable) {
  // ids [4, 256] i64 (8192 B), dy [4, 256, 1024] f32 (4 MiB), dW [32000, 1024] f32
  // (131072000 B): bytes 8192 + 4194304 + 131072000 + 2 x 4194304 = 143663104 ->
  // 1.43663104e-3 s; FLOPs 1048576 -> 1.05e-6 s; + L.
  ExpectSeconds(Cost(OpKind::kEmbeddingGrad, {I64({4, 256}), F32({4, 256, 1024})},
                     {F32({32000, 1024})}, TestHardware(), {{"num_rows", int64_t{32000}}}),
                1.44663104e-3);
}

TEST(ComputeCostRulesTest, CrossEntropyStreamsTheLogits) {
  // logits [8, 1000] f32 (32000 B), labels [8] i64 (64 B), loss f32 (4 B): 32068 B ->
  // 3.2068e-7 s; FLOPs 4 x 8000 -> 3.2e-8 s; + L. The gradient writes dlogits too:
  // 64064 B -> 6.4064e-7 s; 7 x 8000 FLOPs -> 5.6e-8 s.
  ExpectSeconds(Cost(OpKind::kCrossEntropy, {F32({8, 1000}), I64({8})}, {F32({})}), 1.032068e-5);
  ExpectSeconds(Cost(OpKind::kCrossEntropyGrad, {F32({8, 1000}), I64({8})}, {F32({8, 1000})}),
                1.064064e-5);
}

}  // namespace
}  // namespace distir::sim
