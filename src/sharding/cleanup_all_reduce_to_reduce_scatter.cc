// all-reduce-to-reduce-scatter (W2): a local slice of an all-reduce over the
// same axes is a reduce-scatter (cleanup.h).

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
bool AllReduceToReduceScatter(Module& module, std::string function) {
  const Function& fn = *module.Lookup(function);
  std::vector<int> uses = CountUses(fn);
  Rebuilder b(fn);
  bool changed = false;
  for (const auto& op : fn.ops()) {
    const Op* ar = op->kind() == OpKind::kMeshSlice
                       ? SingleUseProducer(op->input(0), OpKind::kMeshAllReduce, uses)
                       : nullptr;
    if (ar == nullptr || MeshNameOf(*ar) != MeshNameOf(*op) ||
        !SameAxisSet(AxesOf(*ar), AxesOf(*op))) {
      b.Clone(*op);
      continue;
    }
    AttrMap attrs = {{"mesh", Attribute(MeshNameOf(*op))},
                     {"axes", Attribute(AxesOf(*op))},
                     {"axis", Attribute(op->GetInt("axis", 0))}};
    if (const Attribute* r = ar->FindAttr("reduction")) attrs["reduction"] = *r;
    const Value& res = *op->result(0);
    b.Bind(&res, b.Emit(OpKind::kMeshReduceScatter, {b.Map(ar->input(0))}, std::move(attrs),
                        res.name(), op->loc(), res.type(), res.sharding()));
    changed = true;
  }
  if (!changed) return false;
  module.ReplaceFunction(b.Finish());
  RemoveDeadMeshOps(module, function);
  return true;
}

}  // namespace distir::sharding
