#include "sharding/materialize.h"

#include <algorithm>

#include "sharding/rebuilder.h"
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

Value* EmitSteps(const std::vector<ReshardStep>& steps, const std::string& mesh, const Op& shard,
                 const std::string& last_name, Value* in, Function& out) {
  const std::string& name = shard.result(0)->name();
  for (size_t i = 0; i < steps.size(); ++i) {
    const ReshardStep& step = steps[i];
    // Intermediate steps get fresh names; the last one takes `last_name`.
    std::string result = i + 1 == steps.size() && !last_name.empty()
                             ? last_name
                             : out.UniqueName((name.empty() ? "r" : name) + ".step");
    Op* op = out.AddOp(step.kind, {in}, StepAttrs(step, mesh), {result}, shard.loc());
    op->result(0)->set_type(in->type());
    op->result(0)->set_sharding(step.result);
    in = op->result(0);
  }
  return in;
}

// `to` on mesh `b` is `from` on mesh `a` with the axes renamed position by
// position: the meshes have the same shape and device i of one holds what
// device i of the other must hold.
bool Corresponds(const Sharding& from, const Mesh& a, const Sharding& to, const Mesh& b) {
  if (a.num_axes() != b.num_axes()) return false;
  for (int i = 0; i < a.num_axes(); ++i) {
    if (a.axes()[i].size != b.axes()[i].size) return false;
  }
  auto rename = [&](const std::string& axis) { return b.axes()[a.AxisIndex(axis)].name; };
  Sharding mapped = from;
  mapped.mesh = b.name();
  for (auto& dim : mapped.dims) std::transform(dim.begin(), dim.end(), dim.begin(), rename);
  std::transform(mapped.partial.begin(), mapped.partial.end(), mapped.partial.begin(), rename);
  return mapped == to;
}

// A value moving to another mesh (a pipeline stage): gathered to replicated
// on its own mesh unless the two layouts correspond, transferred device by
// device, then sliced to the target layout.
StatusOr<Value*> EmitCrossMesh(const Op& shard, Value* in, const Module& module, Function& out) {
  const Sharding& to = shard.FindAttr("sharding")->AsSharding();
  const Sharding& from = *in->sharding();
  const Mesh& a = *module.LookupMesh(from.mesh);
  const Mesh& b = *module.LookupMesh(to.mesh);
  Sharding sent = to;
  Sharding leaving = from;
  if (!Corresponds(from, a, to, b)) {
    leaving = Sharding::Replicated(from.mesh, from.rank());
    sent = Sharding::Replicated(to.mesh, to.rank());
    if (a.num_devices() != b.num_devices())
      return Unimplemented(shard.loc()) << "moving " << shard.input(0)->Ref() << " from mesh @"
                                        << a.name() << " to mesh @" << b.name()
                                        << " of another size is not supported yet";
    DISTIR_ASSIGN_OR_RETURN(std::vector<ReshardStep> out_steps, PlanReshard(from, leaving, a));
    in = EmitSteps(out_steps, a.name(), shard, "", in, out);
  }
  const std::string& name = shard.result(0)->name();
  bool last = sent == to;
  std::string moved = last && !name.empty() ? name : out.UniqueName((name.empty() ? "r" : name) + ".step");
  Op* transfer = out.AddOp(OpKind::kMeshTransfer, {in}, {{"mesh", Attribute(b.name())}}, {moved},
                           shard.loc());
  transfer->result(0)->set_type(in->type());
  transfer->result(0)->set_sharding(sent);
  if (last) return transfer->result(0);
  DISTIR_ASSIGN_OR_RETURN(std::vector<ReshardStep> in_steps, PlanReshard(sent, to, b));
  return EmitSteps(in_steps, b.name(), shard, name, transfer->result(0), out);
}

// Emits the plan of `shard` (a Shard op of the old function) into `out`,
// starting from `in`; returns the value that replaces the Shard's result.
StatusOr<Value*> EmitReshard(const Op& shard, Value* in, const Module& module, Function& out) {
  const Sharding& to = shard.FindAttr("sharding")->AsSharding();
  if (in->sharding()->mesh != to.mesh) {
    StatusOr<Value*> moved = EmitCrossMesh(shard, in, module, out);
    if (moved.ok()) return moved;
    return InvalidArgument(shard.loc()) << moved.status().message() << " (for "
                                        << shard.result(0)->Ref() << ")";
  }
  const Mesh& mesh = *module.LookupMesh(to.mesh);
  StatusOr<std::vector<ReshardStep>> plan = PlanReshard(*in->sharding(), to, mesh);
  if (!plan.ok()) {
    return InvalidArgument(shard.loc()) << plan.status().message() << " (for "
                                        << shard.result(0)->Ref() << ")";
  }
  return EmitSteps(*plan, mesh.name(), shard, shard.result(0)->name(), in, out);
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
  Rebuilder b(*fn);
  for (const auto& op : fn->ops()) {
    if (op->kind() != OpKind::kShard) {
      b.Clone(*op);
      continue;
    }
    Value* in = b.Map(op->input(0));
    if (in->sharding() == nullptr)
      return FailedPrecondition(op->loc()) << op->input(0)->Ref()
                                           << " has no sharding: propagate shardings first";
    DISTIR_ASSIGN_OR_RETURN(Value* v, EmitReshard(*op, in, module, b.out()));
    b.Bind(op->result(0), v);
  }
  module.ReplaceFunction(b.Finish());
  return Status::Ok();
}

}  // namespace distir::sharding
