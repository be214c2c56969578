// The proof that the parallel transforms are right: for the tiny models, every
// valid (D, T, P, K) with D*T*P <= 8, both schedules, with and without
// recomputation and ZeRO, Execute(@collect, Execute(program, Execute(@init,
// inputs))) equals the sequential function's results (for training: the loss
// and every updated weight and optimizer state).
//
// Tolerance: rtol 1e-5, atol 1e-6 in f32. The distributed programs sum the
// same terms in a different order (microbatch and replica partial sums,
// all-reduced shard products), so they differ from the sequential result by
// rounding only: a few ulps of f32 on values of order 1.

#include <gtest/gtest.h>

#include "interp/infer_types.h"
#include "interp/reference_executor.h"
#include "models/model_zoo.h"
#include "testing/test_util.h"
#include "transforms/parallelize.h"

namespace distir {
namespace {

constexpr double kRtol = 1e-5;
constexpr double kAtol = 1e-6;

struct Case {
  std::string model;
  ParallelOptions options;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const ParallelOptions& o = info.param.options;
  std::string name = info.param.model + "_D" + std::to_string(o.dp) + "T" + std::to_string(o.tp) +
                     "P" + std::to_string(o.pp) + "K" + std::to_string(o.microbatches) + "_" +
                     std::string(ScheduleName(o.schedule));
  if (o.recompute != RecomputeKind::kNone) name += "_recompute";
  if (o.zero_stage) name += "_zero" + std::to_string(o.zero_stage);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.model << " " << DescribeParallelOptions(c.options);
}

// Under the sanitizers (the CI's second stage) a case costs 5-30x more and the
// full grid was 2 of that stage's 5.5 minutes, so there it keeps at most 4
// devices and K <= 2: still every transform (D, T, P, both schedules,
// recomputation, ZeRO 1-3) and their combinations; the plain build runs it all.
#ifdef DISTIR_SANITIZED_BUILD
constexpr bool kThinGrid = true;
#else
constexpr bool kThinGrid = false;
#endif

// Every valid case: batch / (D*K) >= 1 (gpt2-tiny has a batch of 16).
std::vector<Case> Cases(const std::string& model, bool training) {
  const int64_t batch = BatchOf(*LookupModel(model));
  std::vector<Case> cases;
  for (int64_t d : {1, 2, 4, 8}) {
    for (int64_t t : {1, 2, 4, 8}) {
      for (int64_t p : {1, 2, 4, 8}) {
        if (d * t * p > 8) continue;
        for (int64_t k : {1, 2, 4}) {
          if (d * k > batch) continue;
          if (kThinGrid && (d * t * p > 4 || k > 2)) continue;
          for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B}) {
            if ((p == 1 || k == 1) && schedule == PipelineSchedule::kGpipe) continue;  // same program
            for (bool recompute : {false, true}) {
              if (recompute && !training) continue;
              for (int zero = 0; zero <= (training && d > 1 ? 3 : 0); ++zero) {
                ParallelOptions o;
                o.dp = d;
                o.tp = t;
                o.pp = p;
                o.microbatches = k;
                o.schedule = schedule;
                o.recompute = recompute ? RecomputeKind::kFull : RecomputeKind::kNone;
                o.zero_stage = zero;
                cases.push_back({model, o});
              }
            }
          }
        }
      }
    }
  }
  return cases;
}

class EquivalenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(EquivalenceTest, DistributedEqualsSequential) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(GetParam().model));
  ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(spec));
  ASSERT_OK(InferTypes(seq));
  const Function& fn = *seq.entry();
  ASSERT_OK_AND_ASSIGN(DistributedProgram dist, Parallelize(fn, GetParam().options));

  RandomInputOptions random;
  random.int_max = 63;  // gpt2-tiny's vocabulary
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> inputs, RandomInputs(fn, 7, random));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> expected, Execute(seq, fn, inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> placed, Execute(dist.module, dist.init(), inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> results,
                       Execute(dist.module, dist.program(), std::move(placed)));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> actual,
                       Execute(dist.module, dist.collect(), std::move(results)));
  EXPECT_OK(AllClose(actual, expected, kRtol, kAtol));
}

INSTANTIATE_TEST_SUITE_P(Mlp, EquivalenceTest, ::testing::ValuesIn(Cases("mlp-tiny", true)),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(Gpt2, EquivalenceTest, ::testing::ValuesIn(Cases("gpt2-tiny", false)),
                         CaseName);

}  // namespace
}  // namespace distir
