#include "search/experiment.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "search/evaluator.h"
#include "search/grid.h"
#include "testing/experiment_error.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::ExperimentErrorOf;
using ::distir::testing::SourcePath;

// Paths of every shipped experiment file, sorted.
std::vector<std::string> ShippedExperiments() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(SourcePath("configs/experiments"))) {
    if (entry.path().extension() == ".yaml") out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Configurations of `e` that the search would build (Evaluator::Validate:
// the grid, the world and the model's rules), nothing simulated.
int64_t CountValid(const Experiment& e, const std::vector<Config>& configs) {
  Evaluator evaluator(e);
  int64_t valid = 0;
  for (const Config& c : configs) valid += evaluator.Validate(c).ok() ? 1 : 0;
  return valid;
}

// A valid experiment; tests replace one line.
const char* const kBase =
    "name: t\n"                               // 1
    "model: mlp-tiny\n"                       // 2
    "hardware: ../hardware/dgx2-v100.yaml\n"  // 3
    "world_size: 8\n"                         // 4
    "space:\n"                                // 5
    "  batch: [32, 64]\n"                     // 6
    "  dp: all\n"                             // 7
    "  tp: all\n"                             // 8
    "  pp: all\n"                             // 9
    "  microbatches: {pow2: [1, 2]}\n"        // 10
    "constraints: {world: equal}\n";          // 11

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(ExperimentTest, EveryShippedExperimentParses) {
  const std::vector<std::string> files = ShippedExperiments();
  ASSERT_GE(files.size(), 7u);
  for (const std::string& path : files) {
    StatusOr<Experiment> e = LoadExperiment(path);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_FALSE(EnumerateConfigs(*e).empty()) << path;
    // The paper's workloads and the example run on a DGX-2; the CPU validation
    // experiment on the profile calibrated on this machine (docs/calibration.md);
    // the single-GPU follow-up experiments on an H200 (docs/backend.md); the
    // LLaMA-70B example on H100 nodes (README), GPT-3 175B on (up to) 1024 A100s.
    const bool cpu = path.ends_with("cpu-validation.yaml");
    const bool gpu = path.find("gpu-single-") != std::string::npos;
    const bool h100 = path.ends_with("llama-70b-h100.yaml");
    const bool a100 =
        path.ends_with("gpt3-175b-1024.yaml") || path.ends_with("gpt3-175b-space.yaml");
    EXPECT_EQ(e->hardware.name, cpu    ? "cpu-local"
                                : gpu  ? "h200"
                                : h100 ? "h100-sxm"
                                : a100 ? "dgx-a100"
                                       : "dgx2-v100")
        << path;
  }
}

// The transformer-training spaces shipped for issue #17: `configurations`
// of them, every one filling the world of `world` GPUs.
struct ShippedSpace {
  const char* file;
  size_t configurations;
  int64_t world;
};

class ShippedSpaceTest : public ::testing::TestWithParam<ShippedSpace> {};

TEST_P(ShippedSpaceTest, EnumeratesItsConfigurationsOverTheWholeWorld) {
  const ShippedSpace& s = GetParam();
  ASSERT_OK_AND_ASSIGN(Experiment e,
                       LoadExperiment(SourcePath(std::string("configs/experiments/") + s.file)));
  EXPECT_EQ(e.world_size, s.world);
  const std::vector<Config> configs = EnumerateConfigs(e);
  ASSERT_EQ(configs.size(), s.configurations);
  for (const Config& c : configs) EXPECT_EQ(c.options.world_size(), s.world);
}

// The README's worked example (LLaMA-70B on 32 nodes of 8 H100s) and item 3's
// 1024-GPU space over every recomputation setting (the search finds 1347 of
// its configurations invalid and prunes 1011 by the memory bounds).
INSTANTIATE_TEST_SUITE_P(Issue17, ShippedSpaceTest,
                         ::testing::Values(ShippedSpace{"llama-70b-h100.yaml", 36, 256},
                                           ShippedSpace{"gpt3-175b-1024.yaml", 3069, 1024}));

TEST(ExperimentTest, PaperGpt2GridHas1050ConfigurationsOf1035Valid) {
  ASSERT_OK_AND_ASSIGN(Experiment e,
                       LoadExperiment(SourcePath("configs/experiments/gpt2-1.6b.yaml")));
  EXPECT_EQ(e.world_size, 16);
  EXPECT_EQ(e.space.batch.size(), 14u);  // 2^7 .. 2^20
  const std::vector<Config> configs = EnumerateConfigs(e);
  ASSERT_EQ(configs.size(), 1050u);
  for (size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(configs[i].index, static_cast<int64_t>(i));
    EXPECT_EQ(configs[i].options.world_size(), 16);
  }
  EXPECT_EQ(CountValid(e, configs), 1035);
}

TEST(ExperimentTest, Mlp1bGridAtBatch8192Has75ValidConfigurations) {
  ASSERT_OK_AND_ASSIGN(Experiment e, LoadExperiment(SourcePath("configs/experiments/mlp-1b.yaml")));
  EXPECT_EQ(e.space.batch.front(), 128);
  EXPECT_EQ(e.space.batch.back(), 262144);
  const std::vector<Config> all = EnumerateConfigs(e);
  ASSERT_EQ(all.size(), 900u);
  EXPECT_EQ(CountValid(e, all), 885);  // the same 15 small-batch splits as GPT-2's
  e.space.batch = {8192};
  const std::vector<Config> configs = EnumerateConfigs(e);
  ASSERT_EQ(configs.size(), 75u);
  EXPECT_EQ(CountValid(e, configs), 75);
}

TEST(ExperimentTest, ExampleEnumeratesBothSchedulesOnlyWhenPipelined) {
  ASSERT_OK_AND_ASSIGN(Experiment e,
                       LoadExperiment(SourcePath("configs/experiments/example.yaml")));
  const std::vector<Config> configs = EnumerateConfigs(e);
  // Per batch: 4 (D, T) with P = 1, K = 1; 6 (D, T, P) with P > 1 x K in {2, 4} x 2 schedules.
  EXPECT_EQ(configs.size(), 2u * (4 + 6 * 2 * 2));
  for (const Config& c : configs) {
    if (c.options.pp == 1) {
      EXPECT_EQ(c.options.microbatches, 1);
      EXPECT_EQ(c.options.schedule, PipelineSchedule::kGpipe);  // the first listed
    }
  }
}

TEST(ExperimentTest, DefaultsAndForms) {
  ASSERT_OK_AND_ASSIGN(Experiment e, ParseExperiment(Replace(kBase, "  tp: all\n", "  tp: 2\n"),
                                                     SourcePath("configs/experiments/t.yaml")));
  EXPECT_EQ(e.space.dp, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(e.space.tp, (std::vector<int64_t>{2}));
  EXPECT_EQ(e.space.batch, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(e.space.microbatches, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(e.space.schedule, (std::vector<PipelineSchedule>{PipelineSchedule::k1F1B}));
  EXPECT_EQ(e.space.recompute, (std::vector<RecomputeKind>{RecomputeKind::kNone}));
  EXPECT_EQ(e.space.virtual_stages, (std::vector<int64_t>{1}));
  EXPECT_TRUE(e.space.micro_batch.empty());
  EXPECT_TRUE(e.space.chunk_layers.empty());
  EXPECT_EQ(e.space.zero, (std::vector<int>{0}));
  EXPECT_EQ(e.world_rule, WorldRule::kEqual);
  EXPECT_EQ(e.memory_limit_bytes, int64_t{32768} << 20);  // the profile's capacity
  EXPECT_EQ(e.traces, 3);
  EXPECT_EQ(e.output, "results.h5");
}

TEST(ExperimentTest, MemoryLimitUnitsAndInlineHardware) {
  std::string text = Replace(kBase, "constraints: {world: equal}\n",
                             "constraints: {world: at_most}\nmemory_limit: 1.5 GB\n");
  ASSERT_OK_AND_ASSIGN(Experiment e,
                       ParseExperiment(text, SourcePath("configs/experiments/t.yaml")));
  EXPECT_EQ(e.memory_limit_bytes, 1500000000);
  EXPECT_EQ(e.world_rule, WorldRule::kAtMost);
  text = Replace(kBase, "constraints: {world: equal}\n", "memory_limit: 2 GiB\n");
  ASSERT_OK_AND_ASSIGN(e, ParseExperiment(text, SourcePath("configs/experiments/t.yaml")));
  EXPECT_EQ(e.memory_limit_bytes, int64_t{2} << 30);

  const std::string hardware =
      "hardware:\n"
      "  name: tiny-node\n"
      "  device: {name: X, peak_flops: {f16: 100 TFLOP/s, f32: 10 TFLOP/s}, vector_flops: 10 "
      "TFLOP/s,\n"
      "           dram_bandwidth: 1 TB/s, memory_capacity: 16 GiB, kernel_launch_overhead: 5 us}\n"
      "  nodes: {devices_per_node: 8, num_nodes: 1}\n"
      "  intra_node: {name: nvlink, bandwidth: 100 GB/s, latency: 2 us}\n"
      "  collectives: {allreduce: ring, launch_overhead: 5 us}\n";
  ASSERT_OK_AND_ASSIGN(
      e, ParseExperiment(Replace(kBase, "hardware: ../hardware/dgx2-v100.yaml\n", hardware),
                         "inline.yaml"));
  EXPECT_EQ(e.hardware.name, "tiny-node");
  EXPECT_EQ(e.hardware_path, "");
  EXPECT_EQ(e.memory_limit_bytes, int64_t{16} << 30);
  EXPECT_NE(e.hardware_text.find("tiny-node"), std::string::npos);
}

TEST(ExperimentTest, UnknownKeyNamesItsPosition) {
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "world_size: 8\n", "world_size: 8\nworld: 8\n")),
            "t.yaml:5:1: error: unknown key 'world' in experiment; expected one of: name, model, "
            "hardware, world_size, space, constraints, memory_limit, traces, output, sharding, "
            "mesh, layers, strategy");
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  pp: all\n", "  pp: all\n  sched: [1f1b]\n")),
            "t.yaml:10:3: error: unknown key 'sched' in space; expected one of: batch, dp, tp, pp, "
            "microbatches, micro_batch, virtual_stages, num_layers_per_virtual_pipeline_stage, "
            "schedule, recompute, zero, sequence_parallel");
}

TEST(ExperimentTest, WrongTypeNamesTheValue) {
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "world_size: 8\n", "world_size: eight\n")),
            "t.yaml:4:13: error: world_size must be an integer, got 'eight'");
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  dp: all\n", "  dp: [1, two]\n")),
            "t.yaml:7:11: error: space.dp must be an integer, got 'two'");
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  batch: [32, 64]\n", "  batch: [32, 0]\n")),
            "t.yaml:6:15: error: space.batch must be >= 1, got 0");
}

TEST(ExperimentTest, Pow2OutOfRange) {
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  batch: [32, 64]\n", "  batch: {pow2: [7, 41]}\n")),
            "t.yaml:6:17: error: space.batch.pow2 must satisfy 0 <= lowest <= highest <= 40, got "
            "[7, 41]");
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  batch: [32, 64]\n", "  batch: {pow2: [5, 3]}\n")),
            "t.yaml:6:17: error: space.batch.pow2 must satisfy 0 <= lowest <= highest <= 40, got "
            "[5, 3]");
}

TEST(ExperimentTest, DegreeAboveWorldSize) {
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  dp: all\n", "  dp: [1, 16]\n")),
            "t.yaml:7:7: error: space.dp value 16 exceeds world_size 8");
}

TEST(ExperimentTest, MissingKey) {
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "world_size: 8\n", "")),
            "t.yaml:1:1: error: experiment is missing required key 'world_size'");
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  pp: all\n", "")),
            "t.yaml:6:3: error: space is missing required key 'pp' (or give the mesh shapes with "
            "mesh:)");
}

TEST(ExperimentTest, MalformedYaml) {
  const std::string error = ExperimentErrorOf(Replace(kBase, "  dp: all\n", "  dp: [1, 2\n"));
  EXPECT_EQ(error.rfind("t.yaml:", 0), 0u) << error;
  EXPECT_NE(error.find(": error: malformed YAML: "), std::string::npos) << error;
}

TEST(ExperimentTest, OtherRules) {
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "world_size: 8\n", "world_size: 32\n")),
            "t.yaml:4:13: error: world_size 32 exceeds the 16 devices of dgx2-v100");
  EXPECT_EQ(
      ExperimentErrorOf(Replace(kBase, "constraints: {world: equal}\n", "memory_limit: 32\n")),
      "ok");
  EXPECT_EQ(
      ExperimentErrorOf(Replace(kBase, "constraints: {world: equal}\n", "memory_limit: 32 GiBs\n")),
      "t.yaml:11:15: error: memory_limit must be a positive size with a unit (B, kB, MB, GB, "
      "TB, KiB, MiB, GiB, TiB), got '32 GiBs'");
  EXPECT_EQ(ExperimentErrorOf(
                Replace(kBase, "constraints: {world: equal}\n", "constraints: {world: exact}\n")),
            "t.yaml:11:22: error: constraints.world must be equal or at_most");
  EXPECT_EQ(
      ExperimentErrorOf(Replace(kBase, "model: mlp-tiny\n", "model: gpt2-tiny\n") + "traces: -1\n"),
      "t.yaml:12:9: error: traces must be >= 0");
  EXPECT_EQ(ExperimentErrorOf(Replace(Replace(kBase, "model: mlp-tiny\n", "model: gpt2-tiny\n"),
                                      "  pp: all\n", "  pp: all\n  recompute: [false, true]\n")),
            "t.yaml:10:14: error: space.recompute: recomputation applies to training; gpt2-tiny "
            "is an inference model");
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  pp: all\n", "  pp: all\n  zero: [0, 4]\n")),
            "t.yaml:10:13: error: space.zero must be 0, 1, 2 or 3");
}

// Issue 20: sizes past 64 bits are errors at the key, never wrapped values.
TEST(ExperimentTest, MemoryLimitBeyond64BitsIsAnError) {
  auto limit = [](const std::string& value) {
    return ExperimentErrorOf(
        Replace(kBase, "constraints: {world: equal}\n", "memory_limit: " + value + "\n"));
  };
  // Both used to be stored as INT64_MIN: "0 fit in memory".
  EXPECT_EQ(limit("1e30 B"),
            "t.yaml:11:15: error: memory_limit '1e30 B' is too large: it must be below 8 EiB (2^63 "
            "bytes); write 'none' for no limit");
  EXPECT_EQ(limit("9000000 TiB"),
            "t.yaml:11:15: error: memory_limit '9000000 TiB' is too large: it must be below 8 EiB "
            "(2^63 bytes); write 'none' for no limit");
  EXPECT_EQ(limit("inf B").find("t.yaml:11:15: error: memory_limit 'inf B' is too large"), 0u);
  EXPECT_EQ(limit("9223372036854775808"),
            "t.yaml:11:15: error: memory_limit '9223372036854775808' is too large: it must be "
            "below 8 EiB (2^63 bytes); write 'none' for no limit");
  // Below one byte truncated to 0, which means no limit.
  EXPECT_EQ(limit("0.5 B"),
            "t.yaml:11:15: error: memory_limit '0.5 B' is less than 1 byte; write 'none' for no "
            "limit");
  EXPECT_EQ(limit("8 EiB"),
            "t.yaml:11:15: error: memory_limit must be a positive size with a unit (B, kB, MB, "
            "GB, TB, KiB, MiB, GiB, TiB), got '8 EiB'");
  ASSERT_OK_AND_ASSIGN(Experiment e, ParseExperiment(Replace(kBase, "constraints: {world: equal}\n",
                                                             "memory_limit: 7 TiB\n"),
                                                     SourcePath("configs/experiments/t.yaml")));
  EXPECT_EQ(e.memory_limit_bytes, int64_t{7} << 40);
  ASSERT_OK_AND_ASSIGN(
      e, ParseExperiment(Replace(kBase, "constraints: {world: equal}\n", "memory_limit: none\n"),
                         SourcePath("configs/experiments/t.yaml")));
  EXPECT_EQ(e.memory_limit_bytes, 0);
}

TEST(ExperimentTest, ModelSizesBeyondTheLimitNameTheKey) {
  auto model = [](const std::string& line) {
    return ExperimentErrorOf(Replace(kBase, "model: mlp-tiny\n", line + "\n"));
  };
  // Status ok with a bogus peak before: every d x d weight wrapped.
  EXPECT_EQ(model("model: {name: mlp-tiny, d_model: 4294967296}"),
            "t.yaml:2:34: error: mlp option d_model 4294967296 is too large: a d_model x d_model "
            "weight of f32 would take more than 1 EiB (2^60 bytes), the most the simulator "
            "accepts");
  // A failed check in the collective rules before ("AllReduce of -9223372036854775808 bytes").
  EXPECT_EQ(model("model: {name: mlp-1b, d_model: 2147483648}"),
            "t.yaml:2:32: error: mlp option d_model 2147483648 is too large: a d_model x d_model "
            "weight of f16 would take more than 1 EiB (2^60 bytes), the most the simulator "
            "accepts");
  EXPECT_EQ(model("model: {name: gpt2-tiny, vocab: 4611686018427387904}"),
            "t.yaml:2:33: error: gpt2 option vocab 4611686018427387904 is too large: the vocab x "
            "d_model token embedding of f32 would take more than 1 EiB (2^60 bytes), the most the "
            "simulator accepts");
  EXPECT_EQ(model("model: {name: mlp-tiny, n_layer: 100000000}"),
            "t.yaml:2:34: error: mlp option n_layer 100000000 is too large: the model would have "
            "500000002 ops, more than the 134217728 the simulator accepts");
  // Each weight fits, all of them do not: the kind of tensor that takes the most is blamed.
  EXPECT_EQ(model("model: {name: mlp-tiny, d_model: 268435456, n_layer: 64}"),
            "t.yaml:2:34: error: mlp option d_model 268435456 is too large: the model's tensors "
            "would take more than 1 EiB (2^60 bytes) in all, the most the simulator accepts (most "
            "of it: a d_model x d_model weight of f32, and others like it)");
  // The smallest batch decides; its key is space.batch.
  EXPECT_EQ(
      ExperimentErrorOf(Replace(kBase, "  batch: [32, 64]\n", "  batch: [4611686018427387904]\n")),
      "t.yaml:6:10: error: mlp option batch 4611686018427387904 is too large: a batch x "
      "d_model activation of f32 would take more than 1 EiB (2^60 bytes), the most the "
      "simulator accepts");
  // A larger batch that is too large only makes its configurations invalid (Evaluator).
  EXPECT_EQ(ExperimentErrorOf(
                Replace(kBase, "  batch: [32, 64]\n", "  batch: [32, 4611686018427387904]\n")),
            "ok");
}

// Issue 19 item 4: options the model's builder refuses would make every
// configuration invalid ("0 of 28 fit in memory"); they are errors at the option.
TEST(ExperimentTest, ModelOptionsTheBuilderRefusesAreErrorsAtTheOption) {
  auto model = [](const std::string& line) {
    return ExperimentErrorOf(Replace(kBase, "model: mlp-tiny\n", line + "\n"));
  };
  EXPECT_EQ(model("model: {name: gpt2-tiny, n_head: 3}"),
            "t.yaml:2:34: error: gpt2 option n_head must divide d_model, got d_model 32 and "
            "n_head 3 (remainder 2)");
  // Only d_model given: the built-in n_head (8) does not divide it; d_model is blamed.
  EXPECT_EQ(model("model: {name: gpt2-tiny, d_model: 100}"),
            "t.yaml:2:35: error: gpt2 option n_head must divide d_model, got d_model 100 and "
            "n_head 8 (remainder 4)");
  EXPECT_EQ(model("model: {name: gpt2-tiny, seq_len: 17}"),
            "t.yaml:2:35: error: gpt2 option seq_len must be <= n_ctx (the rows of wpe), got "
            "seq_len 17 and n_ctx 16");
  EXPECT_EQ(model("model: {name: mlp-tiny, dtype: i32}"),
            "t.yaml:2:32: error: mlp option dtype must be a float type, got i32");
  // T not dividing the heads depends on the configuration: not a load-time error.
  EXPECT_EQ(model("model: {name: gpt2-tiny, n_head: 2, d_model: 32}"), "ok");
}

TEST(ExperimentTest, EmptySpaceNamesTheKeysAndTheProducts) {
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "  dp: all\n", "  dp: [2]\n")),
            "ok");  // 2 x 4 x 1 = 8
  EXPECT_EQ(ExperimentErrorOf(Replace(Replace(Replace(kBase, "  dp: all\n", "  dp: [2]\n"),
                                              "  tp: all\n", "  tp: [1, 2]\n"),
                                      "  pp: all\n", "  pp: 1\n")),
            "t.yaml:6:3: error: the search space has no configuration: no D*T*P of space.dp [2], "
            "space.tp [1, 2] and space.pp [1] equals world_size 8 (constraints.world: equal); "
            "the products are 2, 4");
}

// The experiment's text, or the named profile's for an error in the profile.
TEST(ExperimentTest, AnErrorComesWithTheTextItPointsInto) {
  const std::string dir = SourcePath("tests/lit/errors/Inputs/issue_19/");
  const std::string text = Replace(kBase, "hardware: ../hardware/dgx2-v100.yaml\n",
                                   "hardware: bad_value_profile.yaml\n");
  std::string source;
  StatusOr<Experiment> e = ParseExperiment(text, dir + "t.yaml", &source);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().loc().file, dir + "bad_value_profile.yaml");
  EXPECT_EQ(e.status().loc().line, 8);
  EXPECT_EQ(e.status().loc().col, 10);
  EXPECT_NE(source.find("name: bad-v100"), std::string::npos);
  e = ParseExperiment(Replace(kBase, "world_size: 8\n", "world_size: eight\n"), "t.yaml", &source);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(source, Replace(kBase, "world_size: 8\n", "world_size: eight\n"));
}

TEST(ExperimentTest, InlineProfileErrorsPointAtTheValue) {
  const std::string hardware =
      "hardware:\n"
      "  name: tiny-node\n"
      "  device:\n"
      "    name: X\n"
      "    peak_flops: {f16: 1 TFLOP/s, f32: 1 TFLOP/s}\n"
      "    vector_flops: 1 TFLOP/s\n"
      "    dram_bandwidth: -1 TB/s\n"
      "    memory_capacity: 1 GiB\n"
      "    kernel_launch_overhead: 1 us\n"
      "  nodes: {devices_per_node: 8, num_nodes: 1}\n"
      "  intra_node: {name: a, bandwidth: 1 GB/s, latency: 1 us}\n"
      "  collectives: {allreduce: ring, launch_overhead: 1 us}\n";
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "hardware: ../hardware/dgx2-v100.yaml\n", hardware)),
            "t.yaml:9:21: error: inline hardware profile: device.dram_bandwidth must be positive, "
            "got '-1 TB/s'");
}

TEST(ExperimentTest, AMissingProfileNamesThePathsTried) {
  EXPECT_EQ(ExperimentErrorOf(Replace(kBase, "hardware: ../hardware/dgx2-v100.yaml\n",
                                      "hardware: nothere.yaml\n")),
            "t.yaml:3:11: error: hardware profile 'nothere.yaml' not found: tried '" +
                SourcePath("configs/experiments/nothere.yaml") +
                "' (beside the experiment) and 'nothere.yaml' (from the current directory)");
}

// An inline profile with any number of nodes: world_size is bounded by device ids alone.
std::string ScaleOut(const std::string& world_size, const std::string& dp) {
  return "name: t\nmodel: mlp-tiny\n"
         "hardware: {name: scale-out, device: {name: X, peak_flops: {f16: 1 TFLOP/s, f32: 1 "
         "TFLOP/s}, vector_flops: 1 TFLOP/s, dram_bandwidth: 1 TB/s, memory_capacity: 1 GiB, "
         "kernel_launch_overhead: 1 us}, nodes: {devices_per_node: 8, num_nodes: any}, "
         "intra_node: {name: a, bandwidth: 1 GB/s, latency: 1 us}, inter_node: {name: b, "
         "bandwidth: 1 GB/s, latency: 1 us}, collectives: {allreduce: ring, launch_overhead: 1 "
         "us}}\n"
         "world_size: " +
         world_size +
         "\n"
         "space: {batch: [32], dp: " +
         dp + ", tp: [1], pp: [1]}\n";
}

TEST(ExperimentTest, WorldSizeIsBoundedByDeviceIdsAndAllStopsInRange) {
  EXPECT_EQ(ExperimentErrorOf(ScaleOut("9223372036854775807", "[1]")),
            "t.yaml:4:13: error: world_size 9223372036854775807 is too large: device ids are "
            "32-bit, so at most 2147483647 devices");
  // `all` doubled past INT64_MAX before (and then looped on 0).
  // At most: no power of two equals 2^31 - 1.
  ASSERT_OK_AND_ASSIGN(
      Experiment e,
      ParseExperiment(ScaleOut("2147483647", "all") + "constraints: {world: at_most}\n", "t.yaml"));
  ASSERT_EQ(e.space.dp.size(), 31u);
  EXPECT_EQ(e.space.dp.back(), int64_t{1} << 30);
  ASSERT_OK_AND_ASSIGN(e, ParseExperiment(ScaleOut("1024", "all"), "t.yaml"));
  EXPECT_EQ(e.space.dp.back(), 1024);
}

TEST(ExperimentTest, GridSkipsDegreesWhoseProductPasses64Bits) {
  ASSERT_OK_AND_ASSIGN(Experiment e, ParseExperiment(ScaleOut("1024", "[1024]"), "t.yaml"));
  e.world_rule = WorldRule::kAtMost;
  // As if listed: D*T*P = 2^93 wraps to 0 <= world_size in 64-bit arithmetic.
  e.space.dp = {int64_t{1} << 31};
  e.space.tp = {int64_t{1} << 31};
  e.space.pp = {int64_t{1} << 31, 1};
  EXPECT_TRUE(EnumerateConfigs(e).empty());
}

}  // namespace
}  // namespace distir::search
