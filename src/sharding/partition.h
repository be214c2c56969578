// Partitioning: from a materialised global-view program to the per-device
// program that DistIR's simulator, lowering and executors run.
//
// Every value of the global view becomes one local value per device of its
// mesh, with the local shape its sharding gives that device (uneven shards
// give different shapes on different devices, never padding); every op is
// emitted once per device on the local values. Mesh collectives become one
// global-form collective per group of devices that differ only along the
// collective's axes (AllReduce, AllGather, ReduceScatter, AllToAll; an uneven
// reduce-scatter or all-to-all becomes an all-reduce or all-gather and a local
// Slice); MeshSlice becomes a local Slice. Shape operands that spell global
// extents (a Reshape target, an Expand shape, a ConstantOfShape shape) get
// per-device Constants with the local extents; Shape becomes a Constant of the
// global shape; a sharded Constant is sliced; MSELoss and MSELossGrad keep
// dividing by the global element count. Parameters become one per device,
// named `<name>.d<device>`, in parameter-major, mesh-device-minor order; so do
// the returned values.

#pragma once

#include <string>
#include <vector>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Replaces `function` of `module` by its per-device program and infers its
/// types (each local type is checked against the sharding's local shape).
/// REQUIRES: MaterializeShardings ran (every value has a sharding, every op's
/// operands are laid out as it needs). A function without shardings is left
/// unchanged. Errors (Unimplemented, naming the op): reductions other than
/// sum across devices, a sharded Range, ops whose local form is not known.
Status PartitionShardings(Module& module, std::string function);

/// The part of the per-device program on some devices (DevicePart::keep),
/// for a simulation that stands one data-parallel replica for all
/// (docs/cost_model.md §3.2) without building the others: only the kept
/// devices' ops and parameters are emitted, and a collective whose group
/// holds a kept device is emitted whole, its other members' operands being
/// parameters of their local types (so it is costed over all its
/// participants, as sharding::ExpandMicrobatches' restriction keeps it).
/// `images` gets, per op of the result, how many ops of the whole program it
/// stands for (the whole's count of that global op over the part's: N / kept
/// for per-device ops, groups / groups emitted for collectives), so that
/// their sum over the part is the whole program's op count. With `even_axis`,
/// every value that axis splits (or holds partial) must split evenly: the
/// devices along it then hold pieces of the same shapes, so that some of them
/// can stand for the others (the tensor-parallel ranks of docs/cost_model.md
/// §3.2). With `last_apart` too, the last device along `even_axis` is kept
/// and simulated apart, so only the others must hold equal pieces: a split
/// whose ceil-chunks (Sharding::ShardRange) leave only the last piece smaller,
/// as GPT-2's vocabulary of 50257 over 4, 8 or 16 ranks. Errors: those of
/// PartitionShardings; FailedPrecondition where a transfer joins a kept and
/// another device, or a value is uneven over `even_axis` (beyond its last
/// piece, with `last_apart`).
struct DevicePart {
  std::vector<char> keep;  ///< by device id: nonzero for the devices emitted
  std::string even_axis;   ///< "": none
  std::vector<double> images;
  bool last_apart = false;
};
Status PartitionShardingsPart(Module& module, std::string function, DevicePart& part);

}  // namespace distir::sharding
