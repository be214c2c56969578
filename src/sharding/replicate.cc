#include "sharding/replicate.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>

#include "ir/gemm_accumulation.h"
#include "ir/op_registry.h"
#include "sharding/microbatch_classes.h"
#include "sharding/pipeline_task.h"
#include "support/status_or.h"

namespace distir::sharding {
namespace {

// Where the `.mb0` component of `name` starts, or npos.
size_t MbAt(const std::string& name) {
  const std::string tag = ".mb0";
  for (size_t at = name.find(tag); at != std::string::npos; at = name.find(tag, at + 1)) {
    size_t end = at + tag.size();
    if (end == name.size() || name[end] == '.') return at;
  }
  return std::string::npos;
}

// `name` with its `.mb0` component replaced by `repl`; `name + repl` when
// it has none.
std::string ReplaceMb0(const std::string& name, const std::string& repl) {
  size_t at = MbAt(name);
  if (at == std::string::npos) return name + repl;
  return name.substr(0, at) + repl + name.substr(at + 4);
}


// The `.mb<digits>` components of `name`: how many, and whether one is not `.mb0`.
struct MbComponents {
  int count = 0;
  bool other = false;
};

MbComponents CountMb(std::string_view name) {
  MbComponents c;
  for (size_t at = name.find(".mb"); at != std::string_view::npos; at = name.find(".mb", at + 1)) {
    size_t end = at + 3;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end == at + 3 || (end < name.size() && name[end] != '.')) continue;
    ++c.count;
    c.other = c.other || name.substr(at, end - at) != ".mb0";
  }
  return c;
}

class Replicator {
 public:
  Replicator(const Function& fn, int64_t k, const std::set<std::string>& batch)
      : fn_(fn), k_(k), batch_(batch), out_(std::make_unique<Function>(fn.name())),
        per_(static_cast<size_t>(k), std::vector<Value*>(fn.num_values(), nullptr)),
        shared_(fn.num_values(), nullptr) {}

  StatusOr<std::unique_ptr<Function>> Run();
  /// The task of each op of Run()'s function, by position.
  std::vector<std::optional<TaskTag>>& tasks() { return out_tasks_; }

 private:
  Status Classify();
  void CheckNames();
  std::string FreshName(std::string name);
  std::string CloneName(const Value& v, int64_t m);
  Value* Get(const Value* v, int64_t m) const {
    return per_value_[v->id()] ? per_[static_cast<size_t>(m)][v->id()] : shared_[v->id()];
  }
  void EmitParams();
  void Clone(const Op& op, int64_t m);
  void Accumulate(const Op& op, int64_t m);
  void EmitReturns();

  const Function& fn_;
  int64_t k_;
  const std::set<std::string>& batch_;
  std::unique_ptr<Function> out_;
  std::vector<std::vector<Value*>> per_;  // [microbatch][template value id]
  std::vector<Value*> shared_;            // shared values; sums of per-microbatch ones
  std::vector<char> per_op_, per_value_, summed_;
  std::vector<std::optional<TaskTag>> task_;
  std::vector<std::optional<TaskTag>> out_tasks_;
  size_t last_per_ = 0;  // one past the last per-microbatch op
  // Names: a clone's is its template's with `.mb0` made `.mb<m>`, a sum's its
  // value's with `.mb0` made `.sum<m>` or dropped. When every per-microbatch
  // name has one such component, `.mb0`, and no template name has another,
  // those are distinct from each other by construction; a name the template
  // holds itself goes through UniqueName. So the function's name index, a
  // tenth of the time here, is only built when some name needs it.
  bool names_by_construction_ = true;
  std::unordered_set<std::string_view> template_names_;
  std::vector<size_t> mb_at_;  // by template value id: MbAt of its name
};

void Replicator::CheckNames() {
  mb_at_.assign(fn_.num_values(), std::string::npos);
  auto check = [&](const Value& v) {
    if (v.name().empty()) return;
    template_names_.insert(v.name());
    MbComponents c = CountMb(v.name());
    if (c.other || (per_value_[v.id()] && c.count != 1)) names_by_construction_ = false;
    if (per_value_[v.id()]) mb_at_[v.id()] = MbAt(v.name());
  };
  for (const auto& p : fn_.params()) check(*p);
  for (const auto& op : fn_.ops()) {
    for (const auto& r : op->results()) check(*r);
  }
}

std::string Replicator::FreshName(std::string name) {
  if (name.empty()) return name;
  if (names_by_construction_ && template_names_.count(name) == 0) return name;
  return out_->UniqueName(name);
}

// Microbatch m's name for per-microbatch value `v` of the template: a `.mb<m>`
// component no template name has, so it needs no check when names go by
// construction.
std::string Replicator::CloneName(const Value& v, int64_t m) {
  if (v.name().empty()) return {};
  const size_t at = mb_at_[v.id()];
  std::string mb = ".mb" + std::to_string(m);
  if (!names_by_construction_ || at == std::string::npos)
    return out_->UniqueName(ReplaceMb0(v.name(), mb));
  std::string name;
  name.reserve(v.name().size() + mb.size());
  name.append(v.name(), 0, at).append(mb).append(v.name(), at + 4, std::string::npos);
  return name;
}

Status Replicator::Classify() {
  MicrobatchClasses c;
  DISTIR_RETURN_IF_ERROR(ClassifyTemplate(fn_, batch_, c));
  per_op_ = std::move(c.per_op);
  per_value_ = std::move(c.per_value);
  summed_ = std::move(c.summed);
  task_ = std::move(c.task);
  last_per_ = c.last_per;
  return Status::Ok();
}

void Replicator::EmitParams() {
  for (const auto& p : fn_.params()) {
    if (!per_value_[p->id()]) {
      shared_[p->id()] = out_->AddParam(p->name(), p->type(), p->loc());
      continue;
    }
    for (int64_t m = 0; m < k_; ++m) {
      per_[static_cast<size_t>(m)][p->id()] =
          out_->AddParam(m == 0 ? p->name() : CloneName(*p, m), p->type(), p->loc());
    }
  }
}

void Replicator::Clone(const Op& op, int64_t m) {
  const bool per = per_op_[static_cast<size_t>(op.id())];
  std::vector<Value*> inputs;
  for (const Value* v : op.inputs()) inputs.push_back(per ? Get(v, m) : shared_[v->id()]);
  std::vector<std::string> names;
  names.reserve(op.results().size());
  for (const auto& r : op.results()) {
    names.push_back(!per || m == 0 ? r->name() : CloneName(*r, m));
  }
  std::optional<TaskTag> t = task_[static_cast<size_t>(op.id())];
  Op* n = nullptr;
  if (per && m > 0) {
    // The template's attributes with microbatch m's task, written once.
    t->microbatch = m;
    AttrMap attrs;
    for (const auto& [key, value] : op.attrs()) {
      if (key != "task") attrs.emplace_hint(attrs.end(), key, value);
    }
    attrs.emplace("task", TaskAttribute(*t));
    n = out_->AddOp(op.kind(), std::move(inputs), std::move(attrs), std::move(names), op.loc());
  } else {
    n = out_->AddOp(op.kind(), std::move(inputs), op.attrs(), std::move(names), op.loc());
  }
  out_tasks_.push_back(t);
  for (int i = 0; i < op.num_results(); ++i) {
    const Value& r = *op.result(i);
    n->result(i)->set_type(r.type());
    n->result(i)->set_loc(r.loc());
    if (per) {
      per_[static_cast<size_t>(m)][r.id()] = n->result(i);
    } else {
      shared_[r.id()] = n->result(i);
    }
  }
}

// After microbatch m of `op` (per microbatch): adds its summed results to
// their running sums, in op's task.
void Replicator::Accumulate(const Op& op, int64_t m) {
  for (const auto& r : op.results()) {
    if (!summed_[r->id()]) continue;
    Value* v = per_[static_cast<size_t>(m)][r->id()];
    if (m == 0) {
      shared_[r->id()] = v;
      continue;
    }
    // As splitting first names them: the last sum is the value, the others
    // its partial sums.
    std::string base = ReplaceMb0(r->name().empty() ? "sum" : r->name(),
                                  m + 1 < k_ ? ".sum" + std::to_string(m) : "");
    TaskTag t = *task_[static_cast<size_t>(op.id())];
    t.microbatch = m;
    AttrMap attrs = {{"task", TaskAttribute(t)}};
    if (IsFusedWeightGradient(*r)) attrs[kGemmAccumulateAttr] = int64_t{1};
    Op* add = out_->AddOp(OpKind::kAdd, {shared_[r->id()], v}, std::move(attrs),
                          std::vector<std::string>{FreshName(base)}, op.loc());
    out_tasks_.push_back(t);
    add->result(0)->set_type(r->type());
    shared_[r->id()] = add->result(0);
  }
}

void Replicator::EmitReturns() {
  std::vector<Value*> returns;
  for (const Value* v : fn_.returns()) {
    if (!per_value_[v->id()] || summed_[v->id()]) {
      returns.push_back(shared_[v->id()]);
      continue;
    }
    for (int64_t m = 0; m < k_; ++m) returns.push_back(per_[static_cast<size_t>(m)][v->id()]);
  }
  out_->SetReturns(std::move(returns), fn_.return_loc());
}

StatusOr<std::unique_ptr<Function>> Replicator::Run() {
  DISTIR_RETURN_IF_ERROR(Classify());
  CheckNames();
  out_->set_loc(fn_.loc());
  EmitParams();
  const auto& ops = fn_.ops();
  out_->Reserve(ops.size() * static_cast<size_t>(k_), 0);
  out_tasks_.reserve(ops.size() * static_cast<size_t>(k_));
  // The template up to its last per-microbatch op is microbatch 0 with the
  // shared ops its passes put there (a weight's reshard before its first
  // reader); microbatches 1.. follow; then the update.
  for (size_t i = 0; i < last_per_; ++i) {
    Clone(*ops[i], 0);
    if (per_op_[i]) Accumulate(*ops[i], 0);
  }
  for (int64_t m = 1; m < k_; ++m) {
    for (size_t i = 0; i < last_per_; ++i) {
      if (!per_op_[i]) continue;
      Clone(*ops[i], m);
      Accumulate(*ops[i], m);
    }
  }
  for (size_t i = last_per_; i < ops.size(); ++i) Clone(*ops[i], 0);
  EmitReturns();
  return std::move(out_);
}

// The program Replicator builds, as copies of the template's ops
// (ir/expanded_program.h): the same ops in the same order, reading and
// writing the same copies, without their IR.
}  // namespace

std::optional<std::vector<std::string>> CopyNames(const Function& fn, int64_t microbatches,
                                                  const std::vector<std::string>& batch_params,
                                                  const ExpandedProgram& program) {
  std::set<std::string> batch(batch_params.begin(), batch_params.end());
  MicrobatchClasses c;
  if (!ClassifyTemplate(fn, batch, c).ok()) return std::nullopt;
  // Replicator::CheckNames: names go by construction, or the built program
  // made them unique.
  std::vector<const Value*> values(static_cast<size_t>(fn.num_values()), nullptr);
  std::set<std::string> names;
  for (const auto& p : fn.params()) values[p->id()] = p.get();
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) values[r->id()] = r.get();
  }
  for (const Value* v : values) {
    if (v == nullptr || v->name().empty()) continue;
    names.insert(v->name());
    const MbComponents mb = CountMb(v->name());
    if (mb.other ||
        (c.per_value[v->id()] && (mb.count != 1 || MbAt(v->name()) == std::string::npos)))
      return std::nullopt;
  }
  auto sum_name = [&](const Value& v, int64_t m) {
    return ReplaceMb0(v.name().empty() ? "sum" : v.name(),
                      m + 1 < microbatches ? ".sum" + std::to_string(m) : "");
  };
  std::vector<std::string> out(static_cast<size_t>(program.num_values()));
  for (int32_t k = 0; k < program.num_ops(); ++k) {
    const int64_t m = program.copy[static_cast<size_t>(k)];
    for (int32_t v : program.Results(k)) {
      const Value& t = *values[static_cast<size_t>(program.value_template[static_cast<size_t>(v)])];
      std::string& name = out[static_cast<size_t>(v)];
      if (program.value_is_sum[static_cast<size_t>(v)] != 0) {
        name = sum_name(t, m);
        if (names.count(name) != 0) return std::nullopt;  // FreshName made it unique
      } else if (c.per_value[t.id()] && m > 0 && !t.name().empty()) {
        name = ReplaceMb0(t.name(), ".mb" + std::to_string(m));
      } else {
        name = t.name();
      }
    }
  }
  return out;
}

Status ReplicateMicrobatches(Module& module, std::string function, int64_t microbatches,
                             const std::vector<std::string>& batch_params,
                             std::vector<std::optional<TaskTag>>* tasks) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to replicate";
  if (microbatches < 1)
    return InvalidArgument() << "microbatches must be >= 1, got " << microbatches;
  if (microbatches == 1) {
    if (tasks != nullptr) {
      tasks->clear();
      for (const auto& op : fn->ops()) tasks->push_back(GetTask(*op));
    }
    return Status::Ok();
  }
  std::set<std::string> batch(batch_params.begin(), batch_params.end());
  Replicator replicator(*fn, microbatches, batch);
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> out, replicator.Run());
  module.ReplaceFunction(std::move(out));
  if (tasks != nullptr) *tasks = std::move(replicator.tasks());
  return Status::Ok();
}

}  // namespace distir::sharding
