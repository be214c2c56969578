// gather-slice-cancel (W3): a slice undoing an all-gather, or an all-gather
// undoing a slice, cancels (cleanup.h).

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

// The value `op` may be replaced by, or null.
const Value* Cancelled(const Op& op, const std::vector<int>& uses) {
  OpKind inner = op.kind() == OpKind::kMeshSlice ? OpKind::kMeshAllGather : OpKind::kMeshSlice;
  if (op.kind() != OpKind::kMeshSlice && op.kind() != OpKind::kMeshAllGather) return nullptr;
  const Op* def = SingleUseProducer(op.input(0), inner, uses);
  if (def == nullptr || !Mirrors(op, *def)) return nullptr;
  // Round trip: the value comes back laid out as before.
  if (!SameSharding(def->input(0), op.result(0))) return nullptr;
  return def->input(0);
}

}  // namespace

bool GatherSliceCancel(Module& module, std::string function) {
  const Function& fn = *module.Lookup(function);
  std::vector<int> uses = CountUses(fn);
  Rebuilder b(fn);
  bool changed = false;
  for (const auto& op : fn.ops()) {
    const Value* x = Cancelled(*op, uses);
    if (x == nullptr) {
      b.Clone(*op);
      continue;
    }
    b.Bind(op->result(0), b.Map(x));
    changed = true;
  }
  if (!changed) return false;
  module.ReplaceFunction(b.Finish());
  RemoveDeadMeshOps(module, function);
  return true;
}

}  // namespace distir::sharding
