// all-gather-sink (W8): an elementwise unary op after an all-gather runs on
// the pieces instead, and the gather moves after it (same bytes, 1/n of the
// compute and of the input memory).

#include "sharding/cleanup.h"
#include "sharding/cleanup_util.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

bool IsUnaryElementwise(OpKind kind) {
  switch (kind) {
    case OpKind::kRelu: case OpKind::kGelu: case OpKind::kTanh: case OpKind::kNeg:
    case OpKind::kExp: case OpKind::kSqrt: case OpKind::kErf: case OpKind::kIdentity:
    case OpKind::kCast: case OpKind::kNot: case OpKind::kSigmoid: case OpKind::kSin:
    case OpKind::kCos:
      return true;
    default:
      return false;
  }
}

bool Sink(const Op& op, const std::vector<int>& uses, Rebuilder& b) {
  const Op* ag = IsUnaryElementwise(op.kind()) && op.num_inputs() == 1
                     ? SingleUseProducer(op.input(0), OpKind::kMeshAllGather, uses)
                     : nullptr;
  const Value* x = ag == nullptr ? nullptr : ag->input(0);
  if (x == nullptr || x->sharding() == nullptr || x->sharding()->is_partial()) return false;
  const Value& res = *op.result(0);
  Value* local = b.Emit(op.kind(), {b.Map(x)}, op.attrs(),
                        b.Fresh(res.name().empty() ? "local" : res.name() + ".local"), op.loc(),
                        res.type(), x->sharding());
  b.Bind(&res, b.Emit(OpKind::kMeshAllGather, {local}, ag->attrs(), res.name(), op.loc(),
                      res.type(), res.sharding()));
  return true;
}

}  // namespace

bool AllGatherSink(Module& module, std::string function) {
  return RewriteOps(module, function, Sink);
}

}  // namespace distir::sharding
