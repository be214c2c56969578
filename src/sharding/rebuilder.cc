#include "sharding/rebuilder.h"

namespace distir::sharding {

Rebuilder::Rebuilder(const Function& fn)
    : fn_(fn), out_(std::make_unique<Function>(fn.name())), map_(fn.num_values(), nullptr) {
  out_->set_loc(fn.loc());
  for (const auto& p : fn.params()) {
    Value* np = out_->AddParam(p->name(), p->type(), p->loc());
    np->CopyShardingFrom(*p);
    map_[p->id()] = np;
  }
}

Op* Rebuilder::Clone(const Op& op) {
  std::vector<Value*> inputs;
  inputs.reserve(op.inputs().size());
  for (const Value* v : op.inputs()) inputs.push_back(Map(v));
  // Moved into the results (the const& overload would copy each name again).
  std::vector<std::string> names;
  names.reserve(op.results().size());
  for (const auto& r : op.results()) names.push_back(r->name());
  Op* n = out_->AddOp(op.kind(), std::move(inputs), op.attrs(), std::move(names), op.loc(),
                      op.is_call() ? op.callee() : std::string());
  for (int i = 0; i < op.num_results(); ++i) {
    const Value& r = *op.result(i);
    n->result(i)->set_type(r.type());
    n->result(i)->set_loc(r.loc());
    n->result(i)->CopyShardingFrom(r);
    map_[r.id()] = n->result(i);
  }
  return n;
}

Value* Rebuilder::Emit(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                       const std::string& name, const SourceLoc& loc, const Type& type,
                       const Sharding* sharding) {
  Op* n = out_->AddOp(kind, std::move(inputs), std::move(attrs), {name}, loc);
  n->result(0)->set_type(type);
  if (sharding != nullptr) n->result(0)->set_sharding(*sharding);
  return n->result(0);
}

std::unique_ptr<Function> Rebuilder::Finish() {
  std::vector<Value*> returns;
  for (const Value* v : fn_.returns()) returns.push_back(Map(v));
  out_->SetReturns(std::move(returns), fn_.return_loc());
  return std::move(out_);
}

std::vector<int> CountUses(const Function& fn) {
  std::vector<int> uses(fn.num_values(), 0);
  for (const auto& op : fn.ops()) {
    for (const Value* v : op->inputs()) ++uses[v->id()];
  }
  for (const Value* v : fn.returns()) ++uses[v->id()];
  return uses;
}

Rebuilder::Rebuilder(const Function& fn, ProbeTag)
    : fn_(fn), out_(std::make_unique<Function>(fn.name())), map_(fn.num_values(), nullptr) {
  for (const auto& p : fn.params()) map_[p->id()] = p.get();
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) map_[r->id()] = r.get();
  }
}

Rebuilder Rebuilder::Probe(const Function& fn) { return Rebuilder(fn, ProbeTag{}); }

bool RewriteOps(Module& module, std::string function,
                const std::function<bool(const Op&, const std::vector<int>&, Rebuilder&)>& rewrite) {
  const Function& fn = *module.Lookup(function);
  std::vector<int> uses = CountUses(fn);
  // Most calls of a clean-up to a fixpoint rewrite nothing: find out before
  // copying the function (the copy was most of the clean-up's time).
  bool applies = false;
  {
    Rebuilder probe = Rebuilder::Probe(fn);
    for (const auto& op : fn.ops()) {
      if ((applies = rewrite(*op, uses, probe))) break;
    }
  }
  if (!applies) return false;
  Rebuilder b(fn);
  bool changed = false;
  for (const auto& op : fn.ops()) {
    if (rewrite(*op, uses, b)) {
      changed = true;
      continue;
    }
    b.Clone(*op);
  }
  if (!changed) return false;
  module.ReplaceFunction(b.Finish());
  RemoveDeadMeshOps(module, function);
  return true;
}

bool RemoveDeadMeshOps(Module& module, std::string function) {
  const Function& fn = *module.Lookup(function);
  // Walk backwards so that a chain of dead collectives goes in one call.
  std::vector<int> uses = CountUses(fn);
  std::vector<bool> dead(fn.ops().size(), false);
  bool any = false;
  for (auto it = fn.ops().rbegin(); it != fn.ops().rend(); ++it) {
    const Op& op = **it;
    bool mesh_op = IsMeshCollective(op.kind()) || op.kind() == OpKind::kMeshSlice;
    if (!mesh_op || uses[op.result(0)->id()] != 0) continue;
    dead[op.id()] = true;
    any = true;
    for (const Value* v : op.inputs()) --uses[v->id()];
  }
  if (!any) return false;
  // In place: a few ops of a large function, which a copy would rebuild whole.
  module.Lookup(function)->EraseOps(dead);
  return true;
}

}  // namespace distir::sharding
