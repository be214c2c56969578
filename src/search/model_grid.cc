#include "search/model_grid.h"

#include <string>

#include "interp/infer_types.h"
#include "models/model_sharding.h"
#include "models/transformer_sharding.h"

namespace distir::search {

StatusOr<ModelGrid> ModelGridOf(ModelSpec& spec, const ParallelOptions& o, bool scatter_gather) {
  const ModelSharding m = ModelShardingOf(spec);
  DISTIR_RETURN_IF_ERROR(CheckTpDivides(o.tp, m.tp_divisor, m.tp_divisor_name));
  std::vector<std::string> texts =
      o.sequence_parallel ? m.sequence_parallel_rules : std::vector<std::string>{};
  texts.insert(texts.end(), m.rules.begin(), m.rules.end());
  ModelGrid g;
  DISTIR_ASSIGN_OR_RETURN(g.rules, sharding::ParseParamRules(texts));
  g.grid = sharding::GridOf(o, m.layer_pattern, m.recompute_layers,
                            m.scatter_gather_transfers && scatter_gather);
  return g;
}

StatusOr<Module> DistributeModel(ModelSpec spec, const ParallelOptions& o) {
  DISTIR_ASSIGN_OR_RETURN(ModelGrid g, ModelGridOf(spec, o));
  DISTIR_ASSIGN_OR_RETURN(Module m, BuildModel(spec));
  DISTIR_RETURN_IF_ERROR(InferTypes(m));
  const std::string name = m.entry()->name();
  DISTIR_RETURN_IF_ERROR(sharding::DistributeGrid(m, name, g.grid, g.rules));
  return m;
}

}  // namespace distir::search
