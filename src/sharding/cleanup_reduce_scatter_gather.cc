// reduce-scatter-gather-to-all-reduce (W4): gathering what a reduce-scatter
// spread is an all-reduce (cleanup.h).

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

bool ToAllReduce(const Op& op, const std::vector<int>& uses, Rebuilder& b) {
  const Op* rs = op.kind() == OpKind::kMeshAllGather
                     ? SingleUseProducer(op.input(0), OpKind::kMeshReduceScatter, uses)
                     : nullptr;
  if (rs == nullptr || !Mirrors(op, *rs)) return false;
  AttrMap attrs = {{"mesh", Attribute(MeshNameOf(*rs))}, {"axes", Attribute(AxesOf(*rs))}};
  if (const Attribute* r = rs->FindAttr("reduction")) attrs["reduction"] = *r;
  const Value& res = *op.result(0);
  b.Bind(&res, b.Emit(OpKind::kMeshAllReduce, {b.Map(rs->input(0))}, std::move(attrs),
                      res.name(), op.loc(), res.type(), res.sharding()));
  return true;
}

}  // namespace

bool ReduceScatterGatherToAllReduce(Module& module, std::string function) {
  return RewriteOps(module, function, ToAllReduce);
}

}  // namespace distir::sharding
