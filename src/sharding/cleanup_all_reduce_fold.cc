// all-reduce-fold (W5): two all-reduces of one kind in a row are one over
// both groups of axes (cleanup.h).

#include <algorithm>

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
bool AllReduceFold(Module& module, std::string function) {
  const Function& fn = *module.Lookup(function);
  std::vector<int> uses = CountUses(fn);
  Rebuilder b(fn);
  bool changed = false;
  for (const auto& op : fn.ops()) {
    const Op* inner = op->kind() == OpKind::kMeshAllReduce
                          ? SingleUseProducer(op->input(0), OpKind::kMeshAllReduce, uses)
                          : nullptr;
    if (inner == nullptr || MeshNameOf(*inner) != MeshNameOf(*op) ||
        ReductionOf(*inner) != ReductionOf(*op)) {
      b.Clone(*op);
      continue;
    }
    std::vector<std::string> axes = AxesOf(*inner);
    for (const std::string& a : AxesOf(*op)) {
      if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
    }
    const Value& res = *op->result(0);
    b.Bind(&res, b.Emit(OpKind::kMeshAllReduce, {b.Map(inner->input(0))},
                        AllReduceAttrs(MeshNameOf(*op), axes, ReductionOf(*op)), res.name(),
                        op->loc(), res.type(), res.sharding()));
    changed = true;
  }
  if (!changed) return false;
  module.ReplaceFunction(b.Finish());
  RemoveDeadMeshOps(module, function);
  return true;
}

}  // namespace distir::sharding
