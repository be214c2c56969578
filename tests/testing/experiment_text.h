// An experiment written in a test, parsed as the search's unit tests parse
// them: as configs/experiments/t.yaml of the source tree (SourcePath,
// test_util.h), so that ../hardware/... resolves. In distir_testing_search
// with experiment_error.h, for the tests that link distir_search.

#pragma once

#include <string>

#include "search/experiment.h"

namespace distir::testing {

/// The experiment `text`; a parse error fails the test (EXPECT, with the
/// error) and returns a default Experiment.
search::Experiment ExperimentOf(const std::string& text);

}  // namespace distir::testing
