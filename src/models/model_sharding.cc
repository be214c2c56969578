#include "models/model_sharding.h"

#include "models/transformer_sharding.h"

namespace distir {

ModelSharding ModelShardingOf(ModelSpec& spec) {
  if (spec.family == ModelFamily::kTransformerTraining)
    return TransformerShardingOf(ResolveTransformerOptions(spec.transformer));
  ModelSharding s;
  if (spec.family == ModelFamily::kMlpTraining) {
    s.rules = MlpShardingRules();
    return s;
  }
  spec.gpt.grouped_qkv = true;
  s.rules = GptShardingRules();
  s.layer_pattern = kGptLayerPattern;
  s.tp_divisor = spec.gpt.n_head;
  s.tp_divisor_name = "the number of attention heads";
  return s;
}

}  // namespace distir
