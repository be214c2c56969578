// How a built-in model is distributed: the parameter sharding rules and the
// grid facts the sharding path (sharding/grid.h, docs/transforms.md §12)
// takes for it. Every distribution of a built-in model goes through these:
// the search (`sharding: model`, the default), `distir simulate --model` and
// `distir run` (search/model_grid.h).

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_zoo.h"

namespace distir {

struct ModelSharding {
  /// Parameter rules ("PATTERN=[{axes}, ...]", sharding/annotate.h).
  std::vector<std::string> rules;
  /// Megatron's sequence parallelism: put before `rules` with it (the
  /// transformer training models only; empty otherwise).
  std::vector<std::string> sequence_parallel_rules;
  /// The pipeline layers, named by their weights (sharding/stages.h); empty:
  /// every forward op that reads a weight.
  std::string layer_pattern;
  /// T must divide it (Megatron's shards hold whole heads or key/value
  /// groups); 0: any T.
  int64_t tp_divisor = 0;
  std::string tp_divisor_name;  ///< "the number of query groups"
  /// Recomputation keeps every layer's input (Megatron's full recomputation).
  bool recompute_layers = false;
  /// Stage transfers by Megatron's scatter-gather (sharding::GridOptions).
  bool scatter_gather_transfers = false;
  /// With sequence parallelism, the linear layers' gathered inputs are
  /// gathered again for the backward instead of kept (sharding/regather.h).
  bool sequence_parallel_regather = false;
};

/// The sharding of `spec`'s model: the MLP's Megatron pairs (MlpShardingRules),
/// GPT-2's blocks (GptShardingRules; sets spec.gpt.grouped_qkv, Megatron's
/// grouped QKV layout, so that c_attn's shards hold whole heads: build the
/// model from `spec` afterwards), the transformer training models' Megatron
/// layout (TransformerShardingOf).
ModelSharding ModelShardingOf(ModelSpec& spec);

}  // namespace distir
