#include "models/transformer_sharding.h"

namespace distir {

std::vector<std::string> TransformerShardingRules(TransformerVariant variant) {
  // `*` after a weight's name also matches its .master, .exp_avg and
  // .exp_avg_sq, which are laid out as the weight (the optimizer is elementwise).
  std::vector<std::string> rules = {"tokens=[{dp}, {}]", "labels=[{dp}, {}]",
                                    "layers.*.attention.qkv.weight*=[{}, {tp}]",
                                    "layers.*.attention.proj.weight*=[{tp}, {}]",
                                    "layers.*.mlp.fc2.weight*=[{tp}, {}]"};
  if (variant == TransformerVariant::kGpt) {
    rules.insert(rules.end(), {"layers.*.attention.qkv.bias*=[{tp}]",
                               "layers.*.mlp.fc1.weight*=[{}, {tp}]",
                               "layers.*.mlp.fc1.bias*=[{tp}]"});
  } else {
    rules.insert(rules.end(), {"layers.*.mlp.fc1_gate.weight*=[{}, {tp}]",
                               "layers.*.mlp.fc1_up.weight*=[{}, {tp}]"});
  }
  return rules;
}

}  // namespace distir
