// The simulated memory of a transformer step by kind, against Korthikanti et
// al. 2022 (docs/cost_model.md §4.4): activations per layer at GPT-3 175B's
// sizes and the model state per parameter.

#include <gtest/gtest.h>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "models/transformer_metrics.h"
#include "search/step_metrics.h"
#include "sim/simulator.h"
#include "testing/test_util.h"

namespace distir {
namespace {

sim::HardwareProfile Hardware() {
  sim::HardwareProfile hw;
  hw.name = "test";
  hw.device.peak_flops_f16 = hw.device.peak_flops_bf16 = 1e15;
  hw.device.peak_flops_f32 = hw.device.peak_flops_f64 = 1e14;
  hw.device.vector_flops = 1e14;
  hw.device.dram_bandwidth = 3e12;
  hw.devices_per_node = 8;
  hw.num_nodes = 1;
  hw.intra_node = {"link", 1e11, 1e-6};
  hw.inter_node = {"net", 1e10, 1e-5};
  return hw;
}

struct KindBytes {
  sim::MemoryByKind at_peak{};
  sim::MemoryByKind own_peak{};
  int64_t peak = 0;
};

KindBytes SimulateKinds(const TransformerOptions& o) {
  StatusOr<Module> m = BuildTransformerTraining(o);
  EXPECT_OK(m.status());
  EXPECT_OK(InferTypes(*m));
  sim::SimulateOptions options;
  options.record_trace = false;
  options.record_memory_timeline = false;
  options.memory_kind = search::TransformerMemoryKind;
  StatusOr<sim::SimulationResult> r = sim::Simulate(*m, *m->entry(), Hardware(), options);
  EXPECT_OK(r.status());
  const sim::DeviceResult& d = r->devices.at(0);
  return {*d.memory_at_peak, *d.peak_memory_by_kind, d.peak_memory_bytes};
}

int64_t Of(const sim::MemoryByKind& bytes, sim::MemoryKind kind) {
  return bytes[static_cast<int>(kind)];
}

TransformerOptions Gpt3At(int64_t layers) {
  StatusOr<ModelSpec> spec = LookupModel("gpt3-175b");
  EXPECT_OK(spec.status());
  TransformerOptions o = spec->transformer;
  o.num_layers = layers;
  return o;
}

// Korthikanti et al. 2022, eq. (1) without the 5 a s / h term (FlashAttention
// keeps no scores) and without dropout masks, plus the copy of the attention
// output and FlashAttention's f32 log-sum-exp: 34 s b h + 4 a s b bytes.
TEST(TransformerMemoryTest, ActivationsPerLayerAreKorthikantisWithFlashAttention) {
  const int64_t s = 2048, b = 1, h = 12288, a = 96;
  const KindBytes two = SimulateKinds(Gpt3At(2));
  const KindBytes three = SimulateKinds(Gpt3At(3));
  const int64_t per_layer = Of(three.own_peak, sim::MemoryKind::kActivations) -
                            Of(two.own_peak, sim::MemoryKind::kActivations);
  const int64_t sbh = s * b * h;
  // Korthikanti's itemisation, without dropout masks (2 sbh) and scores
  // (5 a s^2 b), with the second attention-output copy (2 sbh) and the lse.
  const int64_t korthikanti_34 = 34 * sbh;
  const int64_t expected = korthikanti_34 - 2 * sbh + 2 * sbh + 4 * a * s * b;
  EXPECT_EQ(per_layer, expected) << "per layer " << per_layer << " B, 34 sbh = " << korthikanti_34;
  EXPECT_EQ(korthikanti_34, 855638016);  // 34 x 25,165,824
}

// Model state per parameter (docs/cost_model.md §4.4): resident bf16 weights
// (2 B), f32 masters (4 B) and moments (8 B); the step returns a new bf16
// weight (2 B) beside them, and for matrices a new f32 master (4 B: AdamW's
// decayed copy, which Adam then updates in place; biases and norm scales are
// not decayed, so their masters are updated in place). Megatron updates
// everything in place: 2 + 12 B.
TEST(TransformerMemoryTest, ModelStatePerParameter) {
  const TransformerOptions o = Gpt3At(2);
  const int64_t n = TransformerParameterCount(o);
  const KindBytes k = SimulateKinds(o);
  EXPECT_EQ(Of(k.own_peak, sim::MemoryKind::kWeights), 4 * n);
  // GPT's vectors: per layer QKV 3H, projection H, fc1 4H and fc2 H biases,
  // two LayerNorms 2 x 2H; the final LayerNorm 2H.
  const int64_t H = o.hidden_size;
  const int64_t vectors = 13 * H * o.num_layers + 2 * H;
  EXPECT_EQ(Of(k.own_peak, sim::MemoryKind::kOptimizerState), 12 * n + 4 * (n - vectors));
  // The bf16 gradients all live at the end of the backward pass, then an f32
  // main gradient at a time beside them.
  EXPECT_GE(Of(k.own_peak, sim::MemoryKind::kGradients), 2 * n);
  EXPECT_LT(Of(k.own_peak, sim::MemoryKind::kGradients), 6 * n);
  EXPECT_EQ(Of(k.at_peak, sim::MemoryKind::kInputs), 2 * 2048 * 8);  // tokens, labels (i64)
  int64_t sum = 0;
  for (int64_t bytes : k.at_peak) sum += bytes;
  EXPECT_EQ(sum, k.peak);
}

}  // namespace
}  // namespace distir
