// Reshard plans: the collectives that turn one sharding of a value into
// another on the same mesh (SHARDING.md §3.3, §6).
//
// A plan is a list of steps, each a mesh collective or a local slice, in the
// order that moves the fewest bytes: reductions first (a partial axis that
// the target splits a dim over becomes a reduce-scatter, the others an
// all-reduce), then all-to-alls (an axis moving from the end of one dim to
// the end of another), then slices over axes no dim uses, then all-gathers
// (axes removed from the end of a dim), then the remaining slices. A
// non-suffix axis removed from a dim gathers the axes after it too (the plan
// is right, not minimal: MLIR and XLA reject that case).

#pragma once

#include <string>
#include <vector>

#include "ir/mesh.h"
#include "ir/op_registry.h"
#include "ir/sharding.h"
#include "support/status_or.h"

namespace distir::sharding {

struct ReshardStep {
  OpKind kind = OpKind::kMeshAllReduce;  ///< a Mesh* collective or MeshSlice
  std::vector<std::string> axes;
  int axis = -1;         ///< AllGather, ReduceScatter, Slice: the tensor dim
  int split_axis = -1;   ///< AllToAll: the dim that gets split
  int concat_axis = -1;  ///< AllToAll: the dim that gets gathered
  ReductionKind reduction = ReductionKind::kSum;
  Sharding result;       ///< the value's sharding after this step
};

/// The steps from `from` to `to` (both on `mesh`, same rank). Empty when they
/// are equal. Unimplemented when `to` is partial over an axis `from` is not
/// (a replicated value cannot be made partial by communication).
StatusOr<std::vector<ReshardStep>> PlanReshard(const Sharding& from, const Sharding& to,
                                               const Mesh& mesh);

}  // namespace distir::sharding
