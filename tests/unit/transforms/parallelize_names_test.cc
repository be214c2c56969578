// Value names of distributed programs are unique in every build mode. Release
// builds do not index names while the transform emits ops (ir/function.h), so
// this test is the check there; debug builds also check each name as it is made.

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "testing/test_util.h"
#include "transforms/parallelize.h"

namespace distir {
namespace {

void ExpectUniqueNames(const Function& fn, const std::string& what) {
  std::unordered_set<std::string> seen;
  auto check = [&](const Value& v) {
    if (v.name().empty()) return;
    EXPECT_TRUE(seen.insert(v.name()).second) << what << ": %" << v.name() << " twice";
  };
  for (const auto& p : fn.params()) check(*p);
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) check(*r);
  }
}

TEST(ParallelizeNamesTest, EveryGridProgramOfTheTinyModelsHasUniqueNames) {
  for (const std::string model : {"mlp-tiny", "gpt2-tiny"}) {
    StatusOr<Module> seq = BuildModel(*LookupModel(model));
    ASSERT_OK(seq.status());
    ASSERT_OK(InferTypes(*seq));
    for (int64_t d : {1, 2}) {
      for (int64_t t : {1, 2}) {
        for (int64_t p : {1, 2}) {
          for (int64_t k : {1, 2}) {
            if (p == 1 && k > 1) continue;
            ParallelOptions o;
            o.dp = d;
            o.tp = t;
            o.pp = p;
            o.microbatches = k;
            StatusOr<DistributedProgram> dist = Parallelize(*seq->entry(), o);
            ASSERT_OK(dist.status());
            ExpectUniqueNames(dist->program(), model + " " + DescribeParallelOptions(o));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace distir
