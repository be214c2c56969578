#include "sharding/materialize.h"

#include "sharding/reshard_plan.h"

namespace distir::sharding {
namespace {

AttrMap StepAttrs(const ReshardStep& step, const std::string& mesh) {
  AttrMap attrs = {{"mesh", Attribute(mesh)}, {"axes", Attribute(step.axes)}};
  if (step.axis >= 0) attrs["axis"] = Attribute(int64_t{step.axis});
  if (step.split_axis >= 0) attrs["split_axis"] = Attribute(int64_t{step.split_axis});
  if (step.concat_axis >= 0) attrs["concat_axis"] = Attribute(int64_t{step.concat_axis});
  bool reduces = step.kind == OpKind::kMeshAllReduce || step.kind == OpKind::kMeshReduceScatter;
  if (reduces && step.reduction != ReductionKind::kSum)
    attrs["reduction"] = Attribute(std::string(ReductionKindName(step.reduction)));
  return attrs;
}

// Emits the plan of `shard` (a Shard op of the old function) into `out`,
// starting from `in`; returns the value that replaces the Shard's result.
StatusOr<Value*> EmitReshard(const Op& shard, Value* in, const Mesh& mesh, Function& out) {
  const Sharding& to = shard.FindAttr("sharding")->AsSharding();
  StatusOr<std::vector<ReshardStep>> plan = PlanReshard(*in->sharding(), to, mesh);
  if (!plan.ok()) {
    return InvalidArgument(shard.loc()) << plan.status().message() << " (for "
                                        << shard.result(0)->Ref() << ")";
  }
  const std::string& name = shard.result(0)->name();
  for (size_t i = 0; i < plan->size(); ++i) {
    const ReshardStep& step = (*plan)[i];
    // Intermediate steps get fresh names; the last one takes the Shard's.
    std::string result = i + 1 == plan->size() && !name.empty()
                             ? name
                             : out.UniqueName((name.empty() ? "r" : name) + ".step");
    Op* op = out.AddOp(step.kind, {in}, StepAttrs(step, mesh.name()), {result}, shard.loc());
    op->result(0)->set_type(in->type());
    op->result(0)->set_sharding(step.result);
    in = op->result(0);
  }
  return in;
}

}  // namespace

Status MaterializeShardings(Module& module, std::string function) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to materialise";
  const Mesh* mesh = nullptr;
  for (const auto& p : fn->params()) {
    if (p->sharding() != nullptr) mesh = module.LookupMesh(p->sharding()->mesh);
  }
  for (const auto& op : fn->ops()) {
    for (const auto& r : op->results()) {
      if (r->sharding() != nullptr) mesh = module.LookupMesh(r->sharding()->mesh);
    }
  }
  if (mesh == nullptr) return Status::Ok();
  auto out = std::make_unique<Function>(fn->name());
  out->set_loc(fn->loc());
  std::vector<Value*> map(fn->num_values(), nullptr);
  for (const auto& p : fn->params()) {
    Value* np = out->AddParam(p->name(), p->type(), p->loc());
    if (p->sharding() != nullptr) np->set_sharding(*p->sharding());
    map[p->id()] = np;
  }
  for (const auto& op : fn->ops()) {
    if (op->kind() == OpKind::kShard) {
      Value* in = map[op->input(0)->id()];
      if (in->sharding() == nullptr)
        return FailedPrecondition(op->loc()) << op->input(0)->Ref()
                                             << " has no sharding: propagate shardings first";
      DISTIR_ASSIGN_OR_RETURN(map[op->result(0)->id()], EmitReshard(*op, in, *mesh, *out));
      continue;
    }
    std::vector<Value*> inputs;
    for (const Value* v : op->inputs()) inputs.push_back(map[v->id()]);
    std::vector<std::string> names;
    for (const auto& r : op->results()) names.push_back(r->name());
    Op* nop = out->AddOp(op->kind(), std::move(inputs), op->attrs(), names, op->loc(),
                         op->is_call() ? op->callee() : std::string());
    for (int r = 0; r < op->num_results(); ++r) {
      nop->result(r)->set_type(op->result(r)->type());
      nop->result(r)->set_loc(op->result(r)->loc());
      if (op->result(r)->sharding() != nullptr)
        nop->result(r)->set_sharding(*op->result(r)->sharding());
      map[op->result(r)->id()] = nop->result(r);
    }
  }
  std::vector<Value*> returns;
  for (const Value* v : fn->returns()) returns.push_back(map[v->id()]);
  out->SetReturns(std::move(returns), fn->return_loc());
  module.ReplaceFunction(std::move(out));
  return Status::Ok();
}

}  // namespace distir::sharding
