// Type and shape inference for whole modules.
//
// Runs the abstract interpreter (interpreter.h) over each function of a module,
// in definition order, and writes the inferred type of every value into the IR.
// With the mixed abstract/concrete domain (the default), small integer tensors
// such as shapes stay concrete, so Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape chains resolve to static shapes (paper Figure 4). With the pure shape
// domain, such shapes come out with dynamic extents ("?").
//
// Result types already present (annotated in the text) are checked: an inferred
// type must equal the annotation, except that an annotation may refine dynamic
// extents of the inferred type, in which case the annotation is kept.

#pragma once

#include "ir/function.h"
#include "support/status.h"

namespace distir {

enum class InferDomain {
  kMixed,  ///< abstract tensors, concrete small integer tensors (default)
  kShape,  ///< abstract only
};

struct InferOptions {
  InferDomain domain = InferDomain::kMixed;
};

/// Infers and stores the types of all values of `module`. On error, returns the
/// first ill-typed op's Status (located at the op) and leaves the types of the
/// values before it inferred and the rest as they were.
/// REQUIRES: VerifyModule(module).ok().
Status InferTypes(Module& module, const InferOptions& options = {});

}  // namespace distir
