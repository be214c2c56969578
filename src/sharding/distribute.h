// The whole sharding pipeline in one call: from a global-view program
// (meshes, shardings on parameters and Shard ops) to its per-device program.
//
// Propagate (propagate.h), materialise (materialize.h), clean up (cleanup.h)
// and partition (partition.h), in that order. `distir simulate` and the
// search call this on annotated programs; `distir opt` runs the passes one by
// one for golden tests.

#pragma once

#include <string>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// True when `module` declares a mesh and `function` mentions one (a sharding
/// on a parameter or a Shard op): a global-view program to distribute.
bool IsGlobalView(const Module& module, const std::string& function);

/// Replaces `function` by its per-device program. A function that is not a
/// global view is left unchanged. Errors as the passes give them.
Status DistributeGlobalView(Module& module, std::string function);

}  // namespace distir::sharding
