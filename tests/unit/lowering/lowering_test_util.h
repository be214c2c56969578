// Helpers shared by the lowering tests: reading the example programs and
// finding ops in rank programs by their printed text.

#pragma once

#include <string>

#include "ir/function.h"

namespace distir::testing {

/// Contents of data/examples/`name` in the source tree, or fails the test.
std::string ReadExample(const std::string& name);

/// Parses, verifies and infers `data/examples/name`.
Module LoadExample(const std::string& name);

}  // namespace distir::testing
