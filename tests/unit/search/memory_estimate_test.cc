// The estimate of distir's own memory per configuration, and the too-large
// status it gives (issue 20, "bounded resources").

#include "search/memory_estimate.h"

#include <gtest/gtest.h>

#include <string>

#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "support/byte_size.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::SourcePath;

TEST(MemoryEstimateTest, ProgramOpsFollowTheDocumentedFormula) {
  Function seq("f");  // n = 0 ops: only the 4 P sends per microbatch remain
  ParallelOptions o;
  o.dp = 4, o.tp = 2, o.pp = 8, o.microbatches = 16;
  // R T (K (m n + 4 P) + n) = 4 * 2 * (16 * (0 + 32) + 0) = 4096.
  EXPECT_EQ(EstimateProgramOps(seq, o, /*one_replica=*/false), 4096);
  EXPECT_EQ(EstimateProgramOps(seq, o, /*one_replica=*/true), 1024);
}

TEST(MemoryEstimateTest, MemoryIsTheBasePlusBytesPerOp) {
  EXPECT_EQ(EstimateMemoryBytes(1000, false), kBaseMemoryBytes + 1000 * kMemoryBytesPerOp);
  EXPECT_EQ(EstimateMemoryBytes(1000, true),
            kBaseMemoryBytes + 1000 * (kMemoryBytesPerOp + kTraceMemoryBytesPerOp));
}

TEST(MemoryEstimateTest, AnEstimateAboveTheLimitSaysBoth) {
  EXPECT_TRUE(CheckMemoryEstimate(2e9, 1e6, 0).ok());  // no limit
  EXPECT_TRUE(CheckMemoryEstimate(2e9, 1e6, 2000000000).ok());
  Status s = CheckMemoryEstimate(3.0 * (int64_t{1} << 30), 3.4e7, int64_t{1} << 30);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "needs about 3.00 GiB of memory to build and simulate its program of about 3.4e+07 "
            "ops, above the limit of 1.00 GiB (--max-memory)");
}

TEST(MemoryEstimateTest, MaxMemoryTakesSizesAndNone) {
  EXPECT_EQ(*ParseMaxMemory("16GiB"), int64_t{16} << 30);
  EXPECT_EQ(*ParseMaxMemory("1.5 GB"), 1500000000);
  EXPECT_EQ(*ParseMaxMemory("none"), 0);
  for (const char* bad : {"", "-1GiB", "0 B", "1e30 B", "12 parsecs", "nan GiB"}) {
    StatusOr<int64_t> r = ParseMaxMemory(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  // A plain number is bytes, as in memory_limit.
  EXPECT_EQ(ParseByteSize("4096"), 4096.0);
}

TEST(MemoryEstimateTest, DefaultIsAShareOfTheMachine) {
  const std::optional<int64_t> machine = MachineMemoryBytes();
  ASSERT_TRUE(machine.has_value());  // Linux
  EXPECT_NEAR(static_cast<double>(DefaultMaxMemory(1)), 0.8 * static_cast<double>(*machine), 1.0);
  EXPECT_NEAR(static_cast<double>(DefaultMaxMemory(4)), 0.2 * static_cast<double>(*machine), 1.0);
}

// An mlp-tiny grid (42 sequential ops) under a limit that only the T = 1
// program fits: T = 8 is too-large, with the estimate, and never built.
TEST(MemoryEstimateTest, ConfigurationsAboveTheLimitAreTooLarge) {
  StatusOr<Experiment> e = ParseExperiment(
      "name: t\nmodel: mlp-tiny\nhardware: ../hardware/dgx2-v100.yaml\nworld_size: 8\n"
      "space:\n  batch: [32]\n  dp: [1]\n  tp: [1, 8]\n  pp: [1]\n"
      "constraints: {world: at_most}\n",
      SourcePath("configs/experiments/t.yaml"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EvaluatorOptions options;
  options.max_memory_bytes = static_cast<int64_t>(kBaseMemoryBytes) + 1600 * 1024;
  Evaluator evaluator(*e, options);
  const std::vector<Config> configs = EnumerateConfigs(*e);
  ASSERT_EQ(configs.size(), 2u);
  const ConfigResult one = evaluator.Evaluate(configs[0]);
  EXPECT_EQ(one.status, ConfigStatus::kOk) << one.reason;
  const ConfigResult eight = evaluator.Evaluate(configs[1]);
  EXPECT_EQ(eight.status, ConfigStatus::kTooLarge);
  EXPECT_STREQ(StatusName(eight.status), "too-large");
  // 8 * (1.25 * 42 + 4 + 42) = 788 ops, from kinds of segments of a template
  // of as many (EstimateSegmentedMemoryBytes): 64 MiB + 42 x 24 KiB +
  // 2 x 788 x 768 B + 788 x 8 B.
  EXPECT_EQ(eight.reason,
            "needs about 66.14 MiB of memory to build and simulate its program of about 788 ops, "
            "above the limit of 65.56 MiB (--max-memory)");
  EXPECT_EQ(evaluator.PredictedCost(configs[1]), 0);
}

}  // namespace
}  // namespace distir::search
