// Megatron-LM's tensor and data parallelism for the transformer training
// step (transformer.h), as parameter sharding rules for the sharding path
// (sharding/annotate.h: "PATTERN=[{axes}, ...]", the first glob match wins).
//
// Tensor parallelism over the mesh axis tp is Megatron's (Shoeybi et al.
// 2019, §3): the fused QKV projection and the MLP's first linear(s) are
// column-parallel (their output features split), the attention output
// projection and the MLP's second linear row-parallel (their input features
// split, the result a partial sum all-reduced once per block and direction).
// The QKV columns are grouped per key/value group ([g, r + 2, d]), so a
// column split keeps whole groups on each shard and attention runs on
// g/T groups locally (FlashAttention's rule). A weight's master copy and
// Adam moments follow it. Data parallelism splits tokens and labels over dp;
// the weight gradients are then partial over dp and all-reduced before the
// optimizer. The embedding, the output layer, the norms and the row-parallel
// biases are replicated: a vocabulary-parallel cross-entropy (Megatron's) is
// not a factor rule yet, so the logits stay whole.

#pragma once

#include <string>
#include <vector>

#include "models/transformer.h"

namespace distir {

/// The rules of `variant` (GPT: biased QKV and MLP; LLaMA: SwiGLU's two
/// column-parallel projections), for BuildTransformerTraining's names
/// (docs/models.md). Every rule matches a parameter of that variant.
std::vector<std::string> TransformerShardingRules(TransformerVariant variant);

}  // namespace distir
