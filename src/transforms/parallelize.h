// Parallelize(): the D x T x P x K transform of a sequential model (paper §4).
//
// From a sequential function built by src/models (MLP training or GPT-2
// inference) and ParallelOptions, builds a module with three functions:
//
//   @init     sequential parameters (all on d0) -> every device's inputs:
//             the batch split over replicas and microbatches, weights split
//             Megatron-style over the T shards (and over replicas for ZeRO-3),
//             copied to every stage that uses them. Not simulated (the
//             original's init_fn); it documents the data layout and lets the
//             reference executor check the transform.
//   @<name>_dist  the distributed program: its parameters are @init's results
//             in order; the pipeline schedule is its op order. This is what the
//             simulator times.
//   @collect  the program's results -> the sequential function's results on
//             d0 (microbatch/replica losses summed, updated weight shards
//             concatenated, per-microbatch outputs concatenated).
//
// Execute(@collect, Execute(@dist, Execute(@init, x))) equals Execute(seq, x)
// up to rounding; tests/unit/transforms/equivalence_test.cc checks it for every
// valid (D, T, P, K) with D*T*P <= 8, both schedules, recomputation and ZeRO.
//
// The model's structure (layers, weights, loss, optimizer) is found by the
// value names src/models documents (models/mlp.h, models/gpt.h).

#pragma once

#include <string>

#include "ir/function.h"
#include "support/status_or.h"
#include "transforms/parallel_options.h"

namespace distir {

struct DistributedProgram {
  Module module;  ///< @init, the program, @collect; verified; result types inferred
  std::string init_name;
  std::string program_name;
  std::string collect_name;
  ParallelOptions options;

  const Function& init() const { return *module.Lookup(init_name); }
  const Function& program() const { return *module.Lookup(program_name); }
  const Function& collect() const { return *module.Lookup(collect_name); }
};

/// Distributes `seq` (a function built by BuildMlpTraining or BuildGpt2Inference,
/// types inferred or not) according to `options`.
///
/// Errors (InvalidArgument, naming the rule that failed): a degree < 1; D*T*P
/// different from options.num_devices; T not dividing the hidden width (MLP) or
/// the head count (GPT-2); P greater than the number of layers; batch not
/// divisible by D*K or batch / (D*K) < 1; ZeRO or recomputation on an inference
/// model; ZeRO stage outside 0..3; virtual_stages != 1 (interleaving is the
/// sharding path's, sharding/grid.h); an unrecognized function.
StatusOr<DistributedProgram> Parallelize(const Function& seq, const ParallelOptions& options);

/// The validity checks of Parallelize() alone (no program is built): Ok when
/// Parallelize(seq, options) would not fail with InvalidArgument. Cheap; a
/// search uses it to enumerate and to keep invalid configurations' reasons.
Status CheckParallelOptions(const Function& seq, const ParallelOptions& options);

}  // namespace distir
