#include "testing/written_templates.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/printer.h"
#include "search/grid.h"
#include "search/grid_search.h"
#include "testing/same_result.h"

namespace distir::testing {

int64_t ExpectWrittenTemplatesExact(
    const search::Experiment& e, search::Evaluator& writing, search::Evaluator& building,
    const std::function<int64_t(const search::Evaluator&)>& written) {
  const std::vector<search::Config> configs = search::EnumerateConfigs(e);
  const std::vector<search::Slice> slices = search::AssignUnits(
      e, configs, 1, {}, [&](const search::Config& c) { return writing.TemplateKey(c); },
      [&](const search::Config& c) { return writing.MicroBatchOf(c); });
  int64_t evaluated = 0, checked = 0;
  for (const std::vector<int64_t>& unit : slices[0].units) {
    for (int64_t i : unit) {
      const search::Config& c = configs[static_cast<size_t>(i)];
      const int64_t before = written(writing);
      const search::ConfigResult a = writing.Evaluate(c), b = building.Evaluate(c);
      ++evaluated;
      const std::string what =
          DescribeParallelOptions(c.options) + " batch " + std::to_string(c.batch);
      if (written(writing) > before) {
        ++checked;
        const sharding::GridTemplate* tw = writing.last_template();
        const sharding::GridTemplate* tb = building.last_template();
        EXPECT_NE(tw, nullptr) << what;
        EXPECT_NE(tb, nullptr) << what;
        if (tw != nullptr && tb != nullptr) {
          EXPECT_EQ(PrintModule(tw->module), PrintModule(tb->module)) << what;
          EXPECT_EQ(tw->op_images, tb->op_images) << what;
          EXPECT_EQ(tw->keep_device, tb->keep_device) << what;
          EXPECT_EQ(tw->local, tb->local) << what;
          EXPECT_EQ(tw->part, tb->part) << what;
        }
      }
      ExpectSameResult(a, b, what);
      EXPECT_EQ(a.evaluation, b.evaluation) << what;
      EXPECT_EQ(a.num_ops, b.num_ops) << what;
      EXPECT_EQ(a.fits, b.fits) << what;
    }
  }
  EXPECT_EQ(evaluated, static_cast<int64_t>(configs.size()));
  EXPECT_EQ(checked, written(writing));
  return checked;
}

}  // namespace distir::testing
