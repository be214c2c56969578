// The error an experiment file gives, as the search's unit tests compare it.
//
// ParseExperiment (search/experiment.h) names an error by the file's full
// path; tests parse their YAML text as configs/experiments/t.yaml of the
// source tree (so that ../hardware/... resolves) and compare the error with
// that directory left off. In its own library, distir_testing_search, so that
// only the tests that link distir_search pull it in.

#pragma once

#include <string>

namespace distir::testing {

/// "t.yaml:L:C: error: message" for the experiment `text` parsed as
/// configs/experiments/t.yaml of the source tree (SourcePath, test_util.h),
/// or "ok" when it parses.
std::string ExperimentErrorOf(const std::string& text);

}  // namespace distir::testing
