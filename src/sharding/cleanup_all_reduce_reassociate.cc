// all-reduce-reassociate (W1): op(AR(A)(x), AR(A)(y)) -> AR(A)(op(x, y)) when
// op distributes over the reduction (cleanup.h).

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

// The reduction an elementwise op distributes over: Add and Sub over sum,
// Max over max, Min over min; empty for anything else.
std::string DistributesOver(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd: case OpKind::kSub: return "sum";
    case OpKind::kMax: return "max";
    case OpKind::kMin: return "min";
    default: return "";
  }
}

// Both operands of `op` are single-use all-reduces of the same group and kind
// that `op` distributes over, of operands laid out alike.
bool Reassociable(const Op& op, const std::vector<int>& uses) {
  std::string kind = DistributesOver(op.kind());
  if (kind.empty() || op.num_inputs() != 2 || op.input(0) == op.input(1)) return false;
  const Op* a = SingleUseProducer(op.input(0), OpKind::kMeshAllReduce, uses);
  const Op* b = SingleUseProducer(op.input(1), OpKind::kMeshAllReduce, uses);
  if (a == nullptr || b == nullptr) return false;
  return MeshNameOf(*a) == MeshNameOf(*b) && SameAxisSet(AxesOf(*a), AxesOf(*b)) &&
         ReductionOf(*a) == kind && ReductionOf(*b) == kind &&
         SameSharding(a->input(0), b->input(0)) &&
         a->input(0)->type() == b->input(0)->type();
}

// The partial operands combine first; one all-reduce finishes the sum.
bool Reassociate(const Op& op, const std::vector<int>& uses, Rebuilder& b) {
  if (!Reassociable(op, uses)) return false;
  const Op& ar = *op.input(0)->def();
  const Value* x = ar.input(0);
  const Value* y = op.input(1)->def()->input(0);
  const Value& res = *op.result(0);
  Value* combined = b.Emit(op.kind(), {b.Map(x), b.Map(y)}, op.attrs(),
                           b.Fresh(res.name().empty() ? "partial" : res.name() + ".partial"),
                           op.loc(), res.type(), x->sharding());
  b.Bind(&res, b.Emit(OpKind::kMeshAllReduce, {combined},
                      AllReduceAttrs(MeshNameOf(ar), AxesOf(ar), ReductionOf(ar)), res.name(),
                      op.loc(), res.type(), res.sharding()));
  return true;
}

}  // namespace

bool AllReduceReassociate(Module& module, std::string function) {
  return RewriteOps(module, function, Reassociate);
}

}  // namespace distir::sharding
