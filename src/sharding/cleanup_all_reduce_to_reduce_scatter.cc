// all-reduce-to-reduce-scatter (W2): a local slice of an all-reduce over the
// same axes is a reduce-scatter (cleanup.h).

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

bool ToReduceScatter(const Op& op, const std::vector<int>& uses, Rebuilder& b) {
  const Op* ar = op.kind() == OpKind::kMeshSlice
                     ? SingleUseProducer(op.input(0), OpKind::kMeshAllReduce, uses)
                     : nullptr;
  // A log-sum-exp is reduced whole (partition.cc), never scattered.
  if (ar == nullptr || MeshNameOf(*ar) != MeshNameOf(op) || !SameAxisSet(AxesOf(*ar), AxesOf(op)) ||
      ReductionOf(*ar) == "logsumexp")
    return false;
  AttrMap attrs = {{"mesh", Attribute(MeshNameOf(op))},
                   {"axes", Attribute(AxesOf(op))},
                   {"axis", Attribute(op.GetInt("axis", 0))}};
  if (const Attribute* r = ar->FindAttr("reduction")) attrs["reduction"] = *r;
  const Value& res = *op.result(0);
  b.Bind(&res, b.Emit(OpKind::kMeshReduceScatter, {b.Map(ar->input(0))}, std::move(attrs),
                      res.name(), op.loc(), res.type(), res.sharding()));
  return true;
}

}  // namespace

bool AllReduceToReduceScatter(Module& module, std::string function) {
  return RewriteOps(module, function, ToReduceScatter);
}

}  // namespace distir::sharding
