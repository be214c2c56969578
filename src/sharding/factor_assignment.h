// Factor assignment: which mesh axes shard each factor of one op.
//
// The step propagation (propagate.h) runs per op: project the shardings known
// for the op's tensors onto its factors (factor_rule.h), merge them per factor
// (strongest source first; at equal strength a longer compatible list, else
// the choice that reshards the fewest bytes, then the larger tensor, then an
// operand), then make the result consistent: an axis shards at most one
// factor, need-replication factors stay unsharded, a factor inside a compound
// dim takes only axes that divide it and only once the factors before it in
// that dim are fully sharded, and a required result keeps its own layout.
// From the assignment follow the sharding each operand must have and the one
// each result gets, partial axes included.

#pragma once

#include <climits>
#include <string>
#include <vector>

#include "ir/mesh.h"
#include "ir/op.h"
#include "ir/sharding.h"
#include "sharding/factor_rule.h"
#include "support/status_or.h"

namespace distir::sharding {

/// What is known of one operand or result of the op.
struct TensorSource {
  const TensorFactors* factors = nullptr;  ///< the rule's factors of this tensor
  const Sharding* sharding = nullptr;      ///< nullptr: nothing known yet
  int level = INT_MAX;                     ///< strength, smaller is stronger
  bool required = false;                   ///< a requirement, not inferred
  bool is_result = false;
  bool shardable = true;                   ///< false: a shape operand, always replicated
  double bytes = 0;                        ///< size of the global tensor
};

struct FactorAssignment {
  std::vector<std::vector<std::string>> axes;  ///< per factor, major -> minor
  /// Per factor: explicit shard boundaries (sharding offsets) of the source
  /// that decided it, when that source's dim is this factor alone; else empty.
  std::vector<std::vector<int64_t>> offsets;
  int level = INT_MAX;  ///< strongest source that decided a factor; INT_MAX: none
};

/// Merges what `sources` (operands first, then results, as in the rule)
/// say about each factor of `rule`.
FactorAssignment AssignFactors(const FactorRule& rule, const std::vector<TensorSource>& sources,
                               const Mesh& mesh);

/// The (non-partial) sharding a tensor with factors `tf` has under `fa`.
Sharding ImpliedSharding(const FactorRule& rule, const FactorAssignment& fa,
                         const TensorFactors& tf, const Mesh& mesh);

/// Which partial operands flow through the op unreduced (the op is linear in
/// them, rule.partial_flow), and the partial axes they give the results.
struct PartialFlowResult {
  std::vector<bool> keep;  ///< per operand
  std::vector<std::string> axes;
  ReductionKind kind = ReductionKind::kSum;
};

/// `operands[i]` is operand i's current sharding (ignored when not
/// shardable). Never fails today; StatusOr leaves room for rules that can.
StatusOr<PartialFlowResult> FlowPartials(const Op& op, const FactorRule& rule,
                                         const FactorAssignment& fa,
                                         const std::vector<Sharding>& operands);

/// Result `r`'s sharding: its dims from `fa`, partial over the axes of the
/// sharded factors it lacks and of the partial operands that flow.
/// Unimplemented when the two would mix reduction kinds.
StatusOr<Sharding> ResultSharding(const Op& op, const FactorRule& rule,
                                  const FactorAssignment& fa, int r,
                                  const PartialFlowResult& flow, const Mesh& mesh);

}  // namespace distir::sharding
