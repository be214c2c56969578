#include "search/model_grid.h"

#include <string>

#include "interp/infer_types.h"
#include "models/transformer_sharding.h"

namespace distir::search {

std::vector<std::string> RuleTextsOf(const ModelSharding& m, bool sequence_parallel) {
  std::vector<std::string> texts =
      sequence_parallel ? m.sequence_parallel_rules : std::vector<std::string>{};
  texts.insert(texts.end(), m.rules.begin(), m.rules.end());
  return texts;
}

sharding::GridOptions GridOptionsOf(const ModelSharding& m, const ParallelOptions& o,
                                    bool scatter_gather) {
  sharding::GridOptions grid = sharding::GridOf(o, m.layer_pattern, m.recompute_layers,
                                                m.scatter_gather_transfers && scatter_gather);
  grid.regather_linear_inputs = o.sequence_parallel && m.sequence_parallel_regather;
  return grid;
}

StatusOr<ModelGrid> ShardingGridOf(const ModelSharding& m, const ParallelOptions& o,
                                   bool scatter_gather) {
  DISTIR_RETURN_IF_ERROR(CheckTpDivides(o.tp, m.tp_divisor, m.tp_divisor_name));
  ModelGrid g;
  DISTIR_ASSIGN_OR_RETURN(g.rules, sharding::ParseParamRules(RuleTextsOf(m, o.sequence_parallel)));
  g.grid = GridOptionsOf(m, o, scatter_gather);
  return g;
}

StatusOr<ModelGrid> ModelGridOf(ModelSpec& spec, const ParallelOptions& o, bool scatter_gather) {
  return ShardingGridOf(ModelShardingOf(spec), o, scatter_gather);
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
