// The configurations of an experiment, in a fixed order.
//
// Order: batch, then D, T, P, K, schedule, recompute, ZeRO, each in the order
// the experiment lists them. Rules (docs/configs.md, "How the space is
// enumerated"):
//   - D*T*P equals world_size (constraints.world: equal) or is at most it;
//   - P = 1 runs K = 1 only (microbatches only pipeline); P > 1 takes the
//     listed K values;
//   - the schedule only matters when P > 1 and K > 1: otherwise only the first
//     listed schedule is enumerated;
//   - recompute and ZeRO only apply to training models, and ZeRO needs D > 1:
//     otherwise only `false` / stage 0 is enumerated.
// Configurations that pass these rules may still be invalid for the model
// (T not dividing the heads, batch / (D K) < 1): the search keeps them with
// the reason Parallelize gives.

#pragma once

#include <cstdint>
#include <vector>

#include "search/experiment.h"
#include "transforms/parallel_options.h"

namespace distir::search {

struct Config {
  int64_t index = 0;  ///< position in the enumeration (the row in results.h5)
  int64_t batch = 0;
  ParallelOptions options;
};

std::vector<Config> EnumerateConfigs(const Experiment& e);

}  // namespace distir::search
