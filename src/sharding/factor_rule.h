// Factor rules: how an op's tensor dimensions relate, for sharding.
//
// An op's rule (Shardy's OpShardingRule) names factors, each with a size, and
// says which factors every dimension of every operand and result is made of,
// major first. Sharding a factor over mesh axes shards every dimension that
// contains it the same way, so the op then runs locally on each device:
//   - a factor that appears in a result is pass-through (MatMul's m, n, batch);
//   - a factor that is absent from a result is summed over (reduced) for it:
//     sharding it leaves that result partial, with the factor's reduction kind
//     (MatMul's k: the result is partial(sum));
//   - a need-replication factor may not be sharded at all (Softmax's axis,
//     a Concat's axis): a sharded operand is gathered first.
// Dims of extent 1 that broadcast have no factor. One propagator (propagate.h)
// and one materialiser read these rules; the table of rules, one entry per op,
// is in sharding_rules.cc (BuildFactorRule).

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/sharding.h"
#include "support/status_or.h"

namespace distir::sharding {

struct Factor {
  int64_t size = 1;
  bool need_replication = false;
  /// How results that lack this factor combine the devices' pieces.
  ReductionKind reduction = ReductionKind::kSum;
  /// False when results lacking the factor cannot be expressed as a partial
  /// (ReduceMean's mean is not a sum of local means): then the factor is
  /// need-replication for propagation.
  bool reducible = true;
};

/// How partial operands may flow through the op unchanged (the op is linear).
enum class PartialFlow {
  kNone,   ///< every operand must be reduced first (non-linear ops)
  kAll,    ///< all operands partial on the same axes, or none (Add, Sub, Concat)
  kAny,    ///< any one operand partial on a given axis, the others not (MatMul, Mul)
  kFirst,  ///< only operand 0 may be partial (Div's numerator, Reshape's data)
};

/// For one tensor: per dim, the factors (indices into FactorRule::factors) it
/// is made of, major first; empty for a dim of extent 1 or one that carries
/// no factor (a shape operand).
using TensorFactors = std::vector<std::vector<int>>;

struct FactorRule {
  std::vector<Factor> factors;
  std::vector<TensorFactors> operands;  ///< one per op input (empty for non-tensors)
  std::vector<TensorFactors> results;   ///< one per op result
  /// Operands that carry data to shard: false for shape or index operands that
  /// stay replicated whatever the op's sharding (Reshape's target shape).
  std::vector<bool> shardable;
  PartialFlow partial_flow = PartialFlow::kNone;
  /// Only for kAll/kAny: the reduction kind that flows (Max passes max).
  ReductionKind flow_kind = ReductionKind::kSum;

  int AddFactor(int64_t size, bool need_replication = false);
  /// True when the op runs locally for any sharding of its factors.
  bool IsPassThrough() const;
};

/// The rule of `op`, whose operand and result types must be inferred tensors
/// with static shapes. Unimplemented (naming the op) for ops without a rule:
/// per-device communication ops, tuples, function calls.
StatusOr<FactorRule> BuildFactorRule(const Op& op);

/// The factorisation of a reshape from `in` to `out` (row-major): common
/// factors of matching dim groups; a group that has no common refinement (a
/// [6, 4] -> [4, 6]) becomes need-replication. Appends to `rule` and fills
/// the factors of operand 0 and result 0.
void AddReshapeFactors(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                       FactorRule& rule);

}  // namespace distir::sharding
