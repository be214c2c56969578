// A built-in model at one grid point, as every tool distributes it: the
// model's own sharding rules (models/model_sharding.h) and the grid options of
// the sharding path (sharding/grid.h). `distir simulate --model`, `distir run`
// and the executor tests take it from here; the search reads the same rules
// from the experiment (experiment.h), where a user may replace them.

#pragma once

#include <utility>
#include <vector>

#include "ir/function.h"
#include "models/model_sharding.h"
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

/// The rule texts of `m` for a configuration with or without sequence
/// parallelism: the sequence-parallel rules go first with it (the first rule
/// that matches a weight wins, sharding/annotate.h).
std::vector<std::string> RuleTextsOf(const ModelSharding& m, bool sequence_parallel);

/// The grid options of the sharding path for `m` at `o` (sharding::GridOf
/// with m's layers, recomputation and stage transfers); `scatter_gather` off
/// keeps stage transfers whole.
sharding::GridOptions GridOptionsOf(const ModelSharding& m, const ParallelOptions& o,
                                    bool scatter_gather = true);

/// The parsed rules and grid options of `m` at `o`. InvalidArgument when T
/// does not divide m's tp_divisor, or a rule does not parse.
StatusOr<ModelGrid> ShardingGridOf(const ModelSharding& m, const ParallelOptions& o,
                                   bool scatter_gather = true);

/// The rules and grid options of `spec`'s model at `o` (ShardingGridOf of
/// ModelShardingOf(spec)); `scatter_gather`
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
