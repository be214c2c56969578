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
  return RewriteOps(module, function, [](const Op& op, const std::vector<int>& uses, Rebuilder& b) {
    const Value* x = Cancelled(op, uses);
    if (x == nullptr) return false;
    b.Bind(op.result(0), b.Map(x));
    return true;
  });
}

}  // namespace distir::sharding
