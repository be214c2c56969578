// Two evaluations of one configuration compared field by field, bit for bit,
// as the tests of the search's exact shortcuts (replica symmetry, written
// templates) require. In distir_testing_search.

#pragma once

#include <string>

#include "search/evaluator.h"

namespace distir::testing {

/// EXPECTs every field of `a` and `b` equal but the evaluation (how it was
/// simulated), each failure naming `what`.
void ExpectSameResult(const search::ConfigResult& a, const search::ConfigResult& b,
                      const std::string& what);

}  // namespace distir::testing
