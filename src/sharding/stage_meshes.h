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
//
// With v model chunks per stage (Megatron's interleaving, stages.h) the
// tasks name P v virtual stages and chunk c runs on stage c mod P: values
// move between stages (not chunks), so chunk P - 1's output reaches chunk P
// by a transfer from stage P - 1 to stage 0, and a value two chunks of one
// stage share stays where it is. The tasks keep their chunks.

#pragma once

#include <string>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Moves the stages of `function` onto stage meshes; with `virtual_stages`
/// v the tasks' stages are chunks, P v of them. A function whose ops are all
/// on stage 0 is left unchanged. With `scatter_axis` (e.g. "tp", of size
/// T > 1), a transferred value replicated over that axis is sent as
/// Megatron's scatter-gather sends it (its --scatter-gather-tensors-in-
/// pipeline, on by default): a MeshSlice over the axis (the sender's task),
/// the transfer of the pieces, and a MeshAllGather on the receiving stage
/// (the task of its first reader there), along the longest dim whose pieces
/// divide by T; values with no such dim, or split or partial over the axis,
/// move as they are. With it, too, a value that is a MeshAllGather's result
/// crosses as the gather's input and is gathered on the receiving stage, and
/// gathers left unread on the sending stage are removed.
/// Errors: values on several meshes (FailedPrecondition), a mesh with
/// explicit devices or a stage mesh name already taken (Unimplemented,
/// InvalidArgument), v < 1 or a chunk count that is not a multiple of v
/// (InvalidArgument).
Status SplitStageMeshes(Module& module, std::string function, const std::string& outer_axis = "dp",
                        int64_t virtual_stages = 1, const std::string& scatter_axis = "");

}  // namespace distir::sharding
