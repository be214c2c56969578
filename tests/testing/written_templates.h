// The tests of templates the search writes rather than builds (micro-batches,
// sharding/retype_template.h; layers and stages, sharding/fold_layers.h and
// fold_stages.h): every configuration of an experiment evaluated in the
// search's order by an evaluator that writes templates and one that builds
// them. In distir_testing_search.

#pragma once

#include <cstdint>
#include <functional>

#include "search/evaluator.h"
#include "search/experiment.h"

namespace distir::testing {

/// Evaluates every configuration of `e` with `writing` and `building`, grouped
/// by template family as the search does (search::AssignUnits on one rank).
/// Wherever `written(writing)` grows, EXPECTs the last templates to print
/// alike with the same op images, kept devices and local parameters; every
/// result EXPECTs bit-identical (ExpectSameResult, the evaluation, op count
/// and fit). Returns how many templates were written.
int64_t ExpectWrittenTemplatesExact(
    const search::Experiment& e, search::Evaluator& writing, search::Evaluator& building,
    const std::function<int64_t(const search::Evaluator&)>& written);

}  // namespace distir::testing
