#include "models/transformer_sharding.h"

namespace distir {

std::vector<std::string> TransformerShardingRules(const TransformerOptions& o) {
  const TransformerVariant variant = o.variant;
  // `*` after a weight's name also matches its .master, .exp_avg and
  // .exp_avg_sq, which are laid out as the weight (the optimizer is elementwise).
  std::vector<std::string> rules = {"tokens=[{dp}, {}]",
                                    "labels=[{dp}, {}]",
                                    "embedding.weight*=[{tp}, {}]",
                                    "layers.*.attention.qkv.weight*=[{}, {tp}]",
                                    "layers.*.attention.proj.weight*=[{tp}, {}]",
                                    "layers.*.mlp.fc2.weight*=[{tp}, {}]"};
  if (variant == TransformerVariant::kGpt) {
    rules.insert(rules.end(),
                 {"layers.*.attention.qkv.bias*=[{tp}]", "layers.*.mlp.fc1.weight*=[{}, {tp}]",
                  "layers.*.mlp.fc1.bias*=[{tp}]"});
  } else {
    rules.insert(rules.end(), {"layers.*.mlp.fc1_gate.weight*=[{}, {tp}]",
                               "layers.*.mlp.fc1_up.weight*=[{}, {tp}]"});
  }
  if (o.untie_embeddings_and_output_weights.value_or(false))
    rules.push_back("output_layer.weight*=[{}, {tp}]");
  return rules;
}

TransformerSharding TransformerShardingOf(const TransformerOptions& o) {
  TransformerSharding s;
  s.rules = TransformerShardingRules(o);
  s.layer_pattern = kTransformerLayerPattern;
  s.tp_divisor = o.num_query_groups;
  s.tp_divisor_name = "the number of query groups";
  return s;
}

Status CheckTpDivides(int64_t tp, int64_t divisor, const std::string& divisor_name) {
  if (divisor == 0 || divisor % tp == 0) return Status::Ok();
  return InvalidArgument() << "T = " << tp << " does not divide " << divisor_name << " (" << divisor
                           << ")";
}

}  // namespace distir
