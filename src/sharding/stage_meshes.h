// Stage meshes: a materialised global-view program whose ops carry pipeline
// stages (stages.h) moves each stage onto a sub-mesh of its own
// (docs/transforms.md §12.7).
//
// The program lives on one mesh @M (say [dp = 2, tp = 4]). The world is @M
// with a pipeline axis of size P inserted right after `outer_axis` (first
// when @M has no such axis), so [dp, pp, tp]: device (r, s, t) is
// d((r P + s) T + t), a tensor-parallel group on neighbouring devices.
// Stage s is the sub-mesh @M.s<s> = <[dp = 2, tp = 4], devices = [...]> at
// pipeline coordinate s, declared here. Every value moves to the mesh of
// its producer's stage (a parameter: of its first reader's), mesh
// collectives run on their stage's mesh, and a value read on another stage
// reaches it through one MeshTransfer per (value, stage) whose layout
// corresponds axis by axis, so that partitioning (partition.h) sends each
// piece device to device. The transfer belongs to the producer's task.
// A weight read on several stages has a resident copy on each; when it is
// trained (a tied embedding), each of those stages repeats its update ops on
// its own copy and optimizer state, from the summed gradient transferred to
// it (Megatron's embedding group: gradient all-reduce, both copies stepped).
// Ops without a task inherit one first (pipeline_task.h).

#pragma once

#include <string>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Moves the stages of `function` onto stage meshes. A function whose ops
/// are all on stage 0 is left unchanged.
/// Errors: values on several meshes (FailedPrecondition), a mesh with
/// explicit devices or a stage mesh name already taken (Unimplemented,
/// InvalidArgument).
Status SplitStageMeshes(Module& module, std::string function, const std::string& outer_axis = "dp");

}  // namespace distir::sharding
