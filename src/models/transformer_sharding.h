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
// optimizer. The vocabulary is split over tp as in Megatron's
// VocabParallelEmbedding and ColumnParallelLinear output layer: the embedding
// table by rows (a lookup is masked to the rows a device holds, then summed),
// the untied output layer by columns, so the logits are split by vocabulary
// and the loss is Megatron's vocab-parallel cross-entropy (each token's
// log-sum-exp reduced across the pieces). The position embedding, the norms
// and the row-parallel biases are replicated.

#pragma once

#include <string>
#include <vector>

#include "models/model_sharding.h"
#include "models/transformer.h"
#include "support/status.h"

namespace distir {

/// The rules of `o`'s variant (GPT: biased QKV and MLP; LLaMA: SwiGLU's two
/// column-parallel projections; an untied output layer's), for
/// BuildTransformerTraining's names (docs/models.md). Every rule matches a
/// parameter of the model.
std::vector<std::string> TransformerShardingRules(const TransformerOptions& o);

/// Megatron's sequence parallelism (Korthikanti et al. 2022, §4.2.2), as
/// rules to put before TransformerShardingRules': the norms, the residual
/// adds and their gradients run on s / t tokens of each sequence ([b, s, h]
/// split along s over tp); the input of every column-parallel product (and
/// of the LM head) is all-gathered along the sequence, and every
/// row-parallel product (and column-parallel input gradient) is
/// reduce-scattered along it instead of all-reduced: a value rule keeps the
/// product partial, a `@users` rule gives its readers the sequence split.
/// Weight gradients are pinned to their weights' layouts so that the
/// products gather activations, never weights. The same collectives per
/// block as Megatron's: two all-gathers and two reduce-scatters forward,
/// as many backward; the norms' weight gradients are all-reduced over tp.
std::vector<std::string> SequenceParallelRules(const TransformerOptions& o);

/// The sharding of a transformer training step as Megatron distributes it;
/// the search and `distir simulate` take it through ModelShardingOf
/// (model_sharding.h).
ModelSharding TransformerShardingOf(const TransformerOptions& o);

/// OK when `tp` divides `divisor` (or divisor is 0: any T), else
/// InvalidArgument "T = 3 does not divide the number of query groups (8)".
Status CheckTpDivides(int64_t tp, int64_t divisor, const std::string& divisor_name);

}  // namespace distir
