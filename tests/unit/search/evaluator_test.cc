#include "search/evaluator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "search/experiment.h"
#include "search/grid.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::SourcePath;

Experiment Parse(const std::string& text) {
  StatusOr<Experiment> e = ParseExperiment(text, SourcePath("configs/experiments/t.yaml"));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(*e);
}

// Simulating one replica of an inference model changes nothing: every
// configuration of a tiny GPT-2 grid over 8 and 16 devices of a DGX-2 and 16
// devices of 8-GPU DGX A100 nodes gives bit-identical times, memory and op
// counts with and without replica symmetry.
void ExpectReplicaSymmetryExact(const std::string& hardware, int world) {
  const Experiment e = Parse("name: t\nmodel: gpt2-tiny\nhardware: ../hardware/" + hardware +
                             "\nworld_size: " + std::to_string(world) +
                             "\nspace:\n  batch: [16, 64]\n  dp: all\n  tp: all\n  pp: all\n"
                             "  microbatches: [2, 4]\n  schedule: [gpipe, 1f1b]\n");
  const std::vector<Config> configs = EnumerateConfigs(e);
  Evaluator fast(e), exact(e, EvaluatorOptions{.replica_symmetry = false});
  int collapsed = 0;
  for (const Config& c : configs) {
    const ConfigResult a = fast.Evaluate(c), b = exact.Evaluate(c);
    const std::string what = DescribeParallelOptions(c.options) + " batch " + std::to_string(c.batch);
    collapsed += SimulatesOneReplica(e, c) ? 1 : 0;
    EXPECT_EQ(a.status, b.status) << what << ": " << a.reason << " vs " << b.reason;
    EXPECT_EQ(a.reason, b.reason) << what;
    EXPECT_EQ(a.iteration_time_s, b.iteration_time_s) << what;
    EXPECT_EQ(a.throughput, b.throughput) << what;
    EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes) << what;
    EXPECT_EQ(a.num_ops, b.num_ops) << what;
    EXPECT_EQ(a.fits, b.fits) << what;
  }
  EXPECT_GT(collapsed, 10) << hardware;
}

TEST(EvaluatorTest, OneReplicaStandsForAllOnADgx2) { ExpectReplicaSymmetryExact("dgx2-v100.yaml", 8); }

TEST(EvaluatorTest, OneReplicaStandsForAllAcrossDgxA100Nodes) {
  ExpectReplicaSymmetryExact("dgx-a100.yaml", 16);
}

TEST(EvaluatorTest, TrainingIsNeverSimulatedAsOneReplica) {
  const Experiment e = Parse(
      "name: t\nmodel: mlp-tiny\nhardware: ../hardware/dgx2-v100.yaml\nworld_size: 8\n"
      "space:\n  batch: [32]\n  dp: all\n  tp: all\n  pp: all\n");
  for (const Config& c : EnumerateConfigs(e)) EXPECT_FALSE(SimulatesOneReplica(e, c));
}

}  // namespace
}  // namespace distir::search
