#include "sharding/regather.h"

#include <vector>

#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

// The gather a MatMulGrad's x comes from, when another op reads it too.
const Op* SharedGather(const Op& op, const std::vector<int>& uses,
                       const std::vector<int>& grad_reads) {
  if (op.kind() != OpKind::kMatMulGrad) return nullptr;
  const Value* x = op.input(0);
  const Op* def = x->def();
  if (def == nullptr || def->kind() != OpKind::kMeshAllGather) return nullptr;
  return uses[x->id()] > grad_reads[x->id()] ? def : nullptr;
}

}  // namespace

bool RegatherLinearInputs(Module& module, std::string function) {
  const Function* fn = module.Lookup(function);
  if (fn == nullptr) return false;
  // Reads of each value as a MatMulGrad's x (a value read twice by one op
  // counts twice in CountUses, and once here per operand slot).
  std::vector<int> grad_reads(static_cast<size_t>(fn->num_values()), 0);
  for (const auto& op : fn->ops()) {
    if (op->kind() == OpKind::kMatMulGrad) ++grad_reads[op->input(0)->id()];
  }
  return RewriteOps(module, function, [&](const Op& op, const std::vector<int>& uses,
                                          Rebuilder& b) {
    const Op* gather = SharedGather(op, uses, grad_reads);
    if (gather == nullptr) return false;
    const Value& full = *gather->result(0);
    AttrMap attrs = gather->attrs();
    if (const Attribute* task = op.FindAttr("task")) attrs["task"] = *task;
    Value* again = b.Emit(OpKind::kMeshAllGather, {b.Map(gather->input(0))}, std::move(attrs),
                          b.Fresh(full.name() + ".regather"), op.loc(), full.type(),
                          full.sharding());
    Value* kept = b.Map(&full);
    b.Bind(&full, again);
    b.Clone(op);
    b.Bind(&full, kept);
    return true;
  });
}

}  // namespace distir::sharding
