#include "sharding/recompute.h"

#include "sharding/pipeline_task.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

class Recomputer {
 public:
  explicit Recomputer(const Function& fn)
      : fn_(fn), b_(fn), clone_(fn.num_values(), nullptr) {}

  std::unique_ptr<Function> Run();

 private:
  // The forward value `v` recomputed for a backward op of (stage, microbatch)
  // `t`, or nullptr when `v` is not recomputed (kept from the forward task).
  Value* Recomputed(const Value* v, const TaskTag& t);

  const Function& fn_;
  Rebuilder b_;
  std::vector<Value*> clone_;  // by old value id
};

Value* Recomputer::Recomputed(const Value* v, const TaskTag& t) {
  if (v->def() == nullptr) return nullptr;
  std::optional<TaskTag> p = GetTask(*v->def());
  if (!p.has_value() || p->phase != TaskPhase::kForward || p->stage != t.stage ||
      p->microbatch != t.microbatch)
    return nullptr;
  if (clone_[v->id()] != nullptr) return clone_[v->id()];
  const Op& op = *v->def();
  std::vector<Value*> inputs;
  for (const Value* in : op.inputs()) {
    Value* rc = Recomputed(in, t);
    inputs.push_back(rc != nullptr ? rc : b_.Map(in));
  }
  std::vector<std::string> names;
  for (const auto& r : op.results())
    names.push_back(r->name().empty() ? r->name() : b_.Fresh(r->name() + ".rc"));
  Op* n = b_.out().AddOp(op.kind(), std::move(inputs), op.attrs(), names, op.loc());
  SetTask(*n, TaskTag{t.stage, t.microbatch, TaskPhase::kBackward});
  for (int i = 0; i < op.num_results(); ++i) {
    const Value& r = *op.result(i);
    n->result(i)->set_type(r.type());
    if (r.sharding() != nullptr) n->result(i)->set_sharding(*r.sharding());
    clone_[r.id()] = n->result(i);
  }
  return clone_[v->id()];
}

std::unique_ptr<Function> Recomputer::Run() {
  for (const auto& op : fn_.ops()) {
    std::optional<TaskTag> t = GetTask(*op);
    if (!t.has_value() || t->phase != TaskPhase::kBackward) {
      b_.Clone(*op);
      continue;
    }
    // Read the recomputed operands: bind them for the clone, then restore.
    std::vector<std::pair<const Value*, Value*>> kept;
    for (const Value* in : op->inputs()) {
      Value* rc = Recomputed(in, *t);
      if (rc == nullptr) continue;
      kept.emplace_back(in, b_.Map(in));
      b_.Bind(in, rc);
    }
    b_.Clone(*op);
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) b_.Bind(it->first, it->second);
  }
  return b_.Finish();
}

}  // namespace

Status RecomputeForward(Module& module, std::string function) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to recompute";
  bool backward = false;
  for (const auto& op : fn->ops()) {
    std::optional<TaskTag> t = GetTask(*op);
    backward = backward || (t.has_value() && t->phase == TaskPhase::kBackward);
  }
  if (!backward) return Status::Ok();
  module.ReplaceFunction(Recomputer(*fn).Run());
  return Status::Ok();
}

}  // namespace distir::sharding
