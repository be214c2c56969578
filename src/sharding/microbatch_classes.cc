#include "sharding/microbatch_classes.h"

#include <algorithm>

namespace distir::sharding {

bool IsTaskPhase(const std::optional<TaskTag>& t) {
  return t.has_value() && (t->phase == TaskPhase::kForward || t->phase == TaskPhase::kBackward);
}

Status ClassifyTemplate(const Function& fn, const std::set<std::string>& batch,
                        MicrobatchClasses& c) {
  const auto& ops = fn.ops();
  c.per_op.assign(ops.size(), false);
  c.per_value.assign(fn.num_values(), false);
  c.summed.assign(fn.num_values(), false);
  c.task.assign(ops.size(), std::nullopt);
  for (const auto& p : fn.params()) c.per_value[p->id()] = batch.count(p->name()) != 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = *ops[i];
    if (op.is_call()) return FailedPrecondition(op.loc()) << op.Name() << " is a call";
    c.task[i] = GetTask(op);
    bool reads_per = std::any_of(op.inputs().begin(), op.inputs().end(),
                                 [&](const Value* v) { return c.per_value[v->id()]; });
    // A constant a task owns (partition's shape operands of a microbatch's
    // Reshape) is made for each microbatch, as splitting first makes it.
    if (op.num_inputs() == 0 && IsTaskPhase(c.task[i])) reads_per = true;
    if (!reads_per) continue;
    if (!c.task[i].has_value())
      return FailedPrecondition(op.loc()) << op.Name() << " reads a microbatch but has no task";
    if (!IsTaskPhase(c.task[i])) continue;  // a shared reader: the sums below
    c.per_op[i] = true;
    c.last_per = i + 1;
    for (const auto& r : op.results()) c.per_value[r->id()] = true;
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (c.per_op[i]) continue;
    for (const Value* v : ops[i]->inputs()) {
      if (!c.per_value[v->id()]) continue;
      if (i < c.last_per)
        return FailedPrecondition(ops[i]->loc())
               << ops[i]->Name() << " reads " << v->Ref() << " before the last microbatch's work";
      c.summed[v->id()] = true;
    }
  }
  for (const Value* v : fn.returns()) {
    if (c.per_value[v->id()] && v->def() != nullptr && v->type().is_tensor() &&
        v->type().rank() == 0)
      c.summed[v->id()] = true;
  }
  return Status::Ok();
}

}  // namespace distir::sharding
