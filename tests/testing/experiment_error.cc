#include "testing/experiment_error.h"

#include "search/experiment.h"
#include "testing/test_util.h"

namespace distir::testing {

std::string ExperimentErrorOf(const std::string& text) {
  StatusOr<search::Experiment> e =
      search::ParseExperiment(text, SourcePath("configs/experiments/t.yaml"));
  if (e.ok()) return "ok";
  std::string s = e.status().ToString();
  const std::string prefix = SourcePath("configs/experiments/");
  if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  return s;
}

}  // namespace distir::testing
