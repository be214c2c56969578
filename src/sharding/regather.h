// Sequence-parallel linear layers keep their input sharded (Megatron-LM).
//
// With sequence parallelism a column-parallel linear layer (QKV, fc1, the LM
// head) all-gathers its sequence-split input over tp before its GEMM.
// Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication saves only
// the local shard for the backward pass and all-gathers it again there for
// the weight gradient (`_all_gather_base` in its backward); the activation
// memory of Korthikanti et al. 2022 (34 s b h / t per layer with sequence
// parallelism) counts the shard. Without this pass the gathered input lives
// from the forward to the backward: t times the bytes.
//
// RegatherLinearInputs rewrites a materialised global view with tasks (after
// clean-up, before stage meshes and partitioning): a MatMulGrad whose x is
// the result of a MeshAllGather that other ops read as well (the forward
// GEMM) reads a fresh MeshAllGather of the same shard instead, emitted just
// before it, in its task. The forward gather's result then dies after its
// forward readers and the shard lives until the backward. The fresh gather is
// blocking on the compute stream like every collective of a single-stream
// simulation (Megatron overlaps it with the input-gradient GEMM).

#pragma once

#include <string>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Gives every MatMulGrad reading a shared MeshAllGather result as x its own
/// gather (above). Returns whether anything changed.
bool RegatherLinearInputs(Module& module, std::string function);

}  // namespace distir::sharding
