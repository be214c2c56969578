#include "sharding/pipeline_task.h"

#include <algorithm>
#include <vector>

namespace distir::sharding {

std::optional<TaskTag> GetTask(const Op& op) {
  const Attribute* a = op.FindAttr("task");
  if (a == nullptr || a->type() != AttrType::kInts || a->AsInts().size() != 3) return std::nullopt;
  const std::vector<int64_t>& v = a->AsInts();
  if (v[2] < 0 || v[2] > static_cast<int64_t>(TaskPhase::kUpdate)) return std::nullopt;
  return TaskTag{v[0], v[1], static_cast<TaskPhase>(v[2])};
}

Attribute TaskAttribute(const TaskTag& task) {
  return Attribute(
      std::vector<int64_t>{task.stage, task.microbatch, static_cast<int64_t>(task.phase)});
}

void SetTask(Op& op, const TaskTag& task) { op.SetAttr("task", TaskAttribute(task)); }

void InheritTasks(Function& fn) {
  // Programs built by replication (replicate.h) arrive fully tagged.
  if (std::all_of(fn.ops().begin(), fn.ops().end(),
                  [](const auto& op) { return op->FindAttr("task") != nullptr; }))
    return;
  // What only update ops read (the reduction of an accumulated gradient) is
  // update work: it runs after every task, as the step's gradient sync. A
  // result nobody reads does not count (a collective's result on a device a
  // partial partition leaves out, partition.h).
  std::vector<int> users(fn.num_values(), 0), update_users(fn.num_values(), 0);
  std::vector<const Op*> an_update_user(fn.num_values(), nullptr);
  for (auto it = fn.ops().rbegin(); it != fn.ops().rend(); ++it) {
    Op& op = **it;
    if (op.FindAttr("task") == nullptr && op.num_results() > 0) {
      bool all_update = true;
      const Op* update = nullptr;
      for (const auto& r : op.results()) {
        all_update = all_update && users[r->id()] == update_users[r->id()];
        if (update == nullptr) update = an_update_user[r->id()];
      }
      if (all_update && update != nullptr) SetTask(op, *GetTask(*update));
    }
    std::optional<TaskTag> t = GetTask(op);
    for (const Value* v : op.inputs()) {
      ++users[v->id()];
      if (t.has_value() && t->phase == TaskPhase::kUpdate) {
        ++update_users[v->id()];
        an_update_user[v->id()] = &op;
      }
    }
  }
  // Forward: from producers, in program order (a chain of collectives
  // inherits link by link).
  for (const auto& op : fn.ops()) {
    if (op->FindAttr("task") != nullptr) continue;
    for (const Value* v : op->inputs()) {
      if (v->def() == nullptr) continue;
      if (std::optional<TaskTag> t = GetTask(*v->def())) {
        SetTask(*op, *t);
        break;
      }
    }
  }
  // Backward: from the first user, in reverse program order.
  std::vector<const Op*> first_user(fn.num_values(), nullptr);
  for (auto it = fn.ops().rbegin(); it != fn.ops().rend(); ++it) {
    Op& op = **it;
    if (op.FindAttr("task") == nullptr) {
      for (const auto& r : op.results()) {
        const Op* user = first_user[r->id()];
        if (user == nullptr) continue;
        if (std::optional<TaskTag> t = GetTask(*user)) {
          SetTask(op, *t);
          break;
        }
      }
    }
    for (const Value* v : op.inputs()) first_user[v->id()] = &op;
  }
}

}  // namespace distir::sharding
