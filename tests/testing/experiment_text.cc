#include "testing/experiment_text.h"

#include <gtest/gtest.h>

#include <utility>

#include "testing/test_util.h"

namespace distir::testing {

search::Experiment ExperimentOf(const std::string& text) {
  StatusOr<search::Experiment> e =
      search::ParseExperiment(text, SourcePath("configs/experiments/t.yaml"));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return search::Experiment{};
  return std::move(*e);
}

}  // namespace distir::testing
