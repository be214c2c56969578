// The configurations of an experiment, in a fixed order.
//
// Order: batch, then D, T, P, v, K (or micro batch), schedule, recompute,
// ZeRO, each in the order the experiment lists them. Rules (docs/configs.md, "How the space is
// enumerated"):
//   - D*T*P equals world_size (constraints.world: equal) or is at most it;
//   - P = 1 runs K = 1 only (microbatches only pipeline); P > 1 takes the
//     listed K values; with space.micro_batch, K = batch / (D micro_batch)
//     at every P (Megatron's global batch; gradient accumulation at P = 1);
//   - P = 1 runs v = 1 only (no pipeline to interleave); P > 1 takes the
//     listed v, or L / (P N) of num_layers_per_virtual_pipeline_stage;
//   - the schedule only matters when P > 1 and K > 1: otherwise only the first
//     listed schedule is enumerated;
//   - recompute and ZeRO only apply to training models, and ZeRO needs D > 1:
//     otherwise only `none` / stage 0 is enumerated.
// Configurations that pass these rules may still be invalid for the model
// (T not dividing the heads, batch / (D K) < 1): the search keeps them with
// the reason the sharding path gives (Evaluator::Validate).

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/experiment.h"
#include "transforms/parallel_options.h"

namespace distir::search {

struct Config {
  int64_t index = 0;  ///< position in the enumeration (the row in results.h5)
  int64_t batch = 0;
  /// Megatron's micro batch, batch / (D K): the listed space.micro_batch,
  /// else derived from K; 0 where D K does not divide the batch.
  int64_t micro_batch = 0;
  /// Why the configuration is invalid before it is distributed (a micro
  /// batch not dividing the batch, chunks not dividing the layers), as the
  /// results' reason; then K or v is 0 in `options`. Empty: not known yet.
  std::string invalid;
  ParallelOptions options;
};

std::vector<Config> EnumerateConfigs(const Experiment& e);

}  // namespace distir::search
