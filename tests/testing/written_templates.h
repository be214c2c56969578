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

// Under the sanitizers (5-20x slower) the tests' grids thin to one value of a
// knob whose code paths the others repeat; the Release stage runs them whole.
#ifdef DISTIR_SANITIZED_BUILD
#define DISTIR_THIN(whole, thin) thin
#else
#define DISTIR_THIN(whole, thin) whole
#endif

namespace distir::testing {

/// A grid of such a test: its name, its experiment text, and how many of its
/// templates at least are written.
struct TemplateGrid {
  const char* name;
  const char* text;
  int64_t min_written;
};

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
