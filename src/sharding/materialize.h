// Materialisation: explicit collectives for every reshard of a propagated
// global-view program.
//
// After PropagateShardings (propagate.h) every value carries a sharding and
// every place where a value must change layout is a Shard op whose operand's
// sharding differs from its own. This pass replaces each such Shard op by the
// steps of its reshard plan (reshard_plan.h): MeshAllReduce,
// MeshReduceScatter, MeshAllToAll, MeshAllGather and MeshSlice ops, each
// result carrying its intermediate sharding; Shard ops that change nothing are
// removed. Afterwards every op's operands are laid out as the op needs, so each
// device can run the op on its own pieces (the partition step).

#pragma once

#include <string>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Materialises the reshards of `function` of `module`. REQUIRES: its values
/// carry shardings (PropagateShardings ran). A function without shardings is
/// left unchanged. Errors name the Shard op whose reshard cannot be planned.
Status MaterializeShardings(Module& module, std::string function);

}  // namespace distir::sharding
