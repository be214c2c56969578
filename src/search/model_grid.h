// A built-in model at one grid point, as every tool distributes it: the
// model's own sharding rules (models/model_sharding.h) and the grid options of
// the sharding path (sharding/grid.h). `distir simulate --model`, `distir run`
// and the executor tests take it from here; the search reads the same rules
// from the experiment (experiment.h), where a user may replace them.

#pragma once

#include <utility>
#include <vector>

#include "ir/function.h"
#include "models/model_zoo.h"
#include "sharding/annotate.h"
#include "sharding/grid.h"
#include "support/status_or.h"
#include "transforms/parallel_options.h"

namespace distir::search {

struct ModelGrid {
  std::vector<sharding::ParamRule> rules;  ///< sequence-parallel rules first with it
  sharding::GridOptions grid;
};

/// The rules and grid options of `spec`'s model at `o`; `scatter_gather`
/// off keeps stage transfers whole even where the model uses Megatron's
/// scatter-gather. Sets spec's GPT-2 layout (ModelShardingOf): build the model
/// from `spec` afterwards. InvalidArgument when T does not divide the heads
/// or query groups.
StatusOr<ModelGrid> ModelGridOf(ModelSpec& spec, const ParallelOptions& o,
                                bool scatter_gather = true);

/// `spec`'s model, types inferred, distributed at `o` by the sharding path
/// (sharding::DistributeGrid); the module's entry is the per-device program.
StatusOr<Module> DistributeModel(ModelSpec spec, const ParallelOptions& o);

}  // namespace distir::search
