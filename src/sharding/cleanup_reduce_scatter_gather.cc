// reduce-scatter-gather-to-all-reduce (W4): gathering what a reduce-scatter
// spread is an all-reduce (cleanup.h).

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
bool ReduceScatterGatherToAllReduce(Module& module, std::string function) {
  const Function& fn = *module.Lookup(function);
  std::vector<int> uses = CountUses(fn);
  Rebuilder b(fn);
  bool changed = false;
  for (const auto& op : fn.ops()) {
    const Op* rs = op->kind() == OpKind::kMeshAllGather
                       ? SingleUseProducer(op->input(0), OpKind::kMeshReduceScatter, uses)
                       : nullptr;
    if (rs == nullptr || !Mirrors(*op, *rs)) {
      b.Clone(*op);
      continue;
    }
    AttrMap attrs = {{"mesh", Attribute(MeshNameOf(*rs))}, {"axes", Attribute(AxesOf(*rs))}};
    if (const Attribute* r = rs->FindAttr("reduction")) attrs["reduction"] = *r;
    const Value& res = *op->result(0);
    b.Bind(&res, b.Emit(OpKind::kMeshAllReduce, {b.Map(rs->input(0))}, std::move(attrs),
                        res.name(), op->loc(), res.type(), res.sharding()));
    changed = true;
  }
  if (!changed) return false;
  module.ReplaceFunction(b.Finish());
  RemoveDeadMeshOps(module, function);
  return true;
}

}  // namespace distir::sharding
