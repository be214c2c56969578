// all-reduce-fold (W5): two all-reduces of one kind in a row are one over
// both groups of axes (cleanup.h).

#include <algorithm>

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

bool Fold(const Op& op, const std::vector<int>& uses, Rebuilder& b) {
  const Op* inner = op.kind() == OpKind::kMeshAllReduce
                        ? SingleUseProducer(op.input(0), OpKind::kMeshAllReduce, uses)
                        : nullptr;
  if (inner == nullptr || MeshNameOf(*inner) != MeshNameOf(op) ||
      ReductionOf(*inner) != ReductionOf(op))
    return false;
  std::vector<std::string> axes = AxesOf(*inner);
  for (const std::string& a : AxesOf(op)) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
  }
  const Value& res = *op.result(0);
  b.Bind(&res, b.Emit(OpKind::kMeshAllReduce, {b.Map(inner->input(0))},
                      AllReduceAttrs(MeshNameOf(op), axes, ReductionOf(op)), res.name(), op.loc(),
                      res.type(), res.sharding()));
  return true;
}

}  // namespace

bool AllReduceFold(Module& module, std::string function) {
  return RewriteOps(module, function, Fold);
}

}  // namespace distir::sharding
