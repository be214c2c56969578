#include "sharding/replicate.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>

#include "ir/op_registry.h"
#include "ir/gemm_accumulation.h"
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

bool IsTaskPhase(const std::optional<TaskTag>& t) {
  return t.has_value() && (t->phase == TaskPhase::kForward || t->phase == TaskPhase::kBackward);
}

// Which ops and values of a template are per microbatch, and which
// per-microbatch values are summed (replicate.h).
struct Classes {
  // Bytes, not vector<bool>: the expansion reads them once per op and copy.
  std::vector<char> per_op, per_value, summed;
  std::vector<std::optional<TaskTag>> task;  // per op
  size_t last_per = 0;                       // one past the last per-microbatch op
};

Status ClassifyTemplate(const Function& fn, const std::set<std::string>& batch, Classes& c) {
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
  Classes c;
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
class Expander {
 public:
  Expander(const Function& fn, int64_t k, Classes c)
      : fn_(fn),
        k_(k),
        c_(std::move(c)),
        per_(static_cast<size_t>(k), std::vector<int32_t>(fn.num_values(), -1)),
        shared_(fn.num_values(), -1) {}

  /// Keeps only the values on the devices `keep` marks (by device id) and the
  /// ops that touch one; a collective keeps its operands and results there.
  /// FailedPrecondition where another op mixes kept and other devices, or a
  /// value spans both.
  Status Restrict(const std::vector<char>& keep);
  ExpandedProgram Run();
  std::vector<std::optional<TaskTag>>& tasks() { return tasks_; }
  int64_t whole_ops() const { return whole_ops_; }

 private:
  /// The template's reads and writes as value ids (those kept, when
  /// restricted), so that the K copies walk flat arrays, not the IR.
  void Flatten();
  void Clone(size_t i, int64_t m);
  void Accumulate(const Op& op, int64_t m);

  const Function& fn_;
  int64_t k_;
  Classes c_;
  std::vector<char> has_summed_;            // per op: a result is summed
  std::vector<int32_t> tin_begin_, tin_;    // CSR per template op: value ids read
  std::vector<int32_t> tout_begin_, tout_;  // CSR per template op: value ids written
  bool restricted_ = false;
  std::vector<char> kept_value_;           // by template value id (when restricted_)
  std::vector<char> kept_op_;              // by template op id (when restricted_)
  int64_t whole_ops_ = 0;                  // ops of the unrestricted program
  std::vector<std::vector<int32_t>> per_;  // [microbatch][template value id]
  std::vector<int32_t> shared_;            // shared values; sums of per-microbatch ones
  ExpandedProgram x_;
  std::vector<std::optional<TaskTag>> tasks_;
  std::vector<int32_t> ins_, outs_;  // scratch
};

Status Expander::Restrict(const std::vector<char>& keep) {
  restricted_ = true;
  auto kept = [&](const Value& v, bool& mixed) {
    bool any = false, all = true;
    for (DeviceId d : v.type().Devices()) {
      const bool in = d.value() < static_cast<int32_t>(keep.size()) && keep[d.value()] != 0;
      any = any || in;
      all = all && in;
    }
    mixed = any && !all;
    return any;
  };
  kept_value_.assign(fn_.num_values(), 0);
  kept_op_.assign(fn_.ops().size(), 0);
  bool mixed = false;
  for (const auto& p : fn_.params()) {
    kept_value_[p->id()] = kept(*p, mixed) ? 1 : 0;
    if (mixed) return FailedPrecondition(p->loc()) << p->Ref() << " spans kept and other devices";
  }
  for (const auto& op : fn_.ops()) {
    int in = 0, out = 0;
    for (const auto& r : op->results()) {
      kept_value_[r->id()] = kept(*r, mixed) ? 1 : 0;
      if (mixed)
        return FailedPrecondition(op->loc()) << r->Ref() << " spans kept and other devices";
      ++(kept_value_[r->id()] != 0 ? in : out);
    }
    for (const Value* v : op->inputs()) ++(kept_value_[v->id()] != 0 ? in : out);
    kept_op_[static_cast<size_t>(op->id())] = in > 0 ? 1 : 0;
    const bool collective = IsCommunication(op->kind()) && op->kind() != OpKind::kSend;
    if (in > 0 && out > 0 && !collective)
      return FailedPrecondition(op->loc())
             << op->Name() << " joins kept and other devices and is not a collective";
  }
  return Status::Ok();
}

void Expander::Flatten() {
  const auto& ops = fn_.ops();
  has_summed_.assign(ops.size(), 0);
  tin_begin_.assign(1, 0);
  tout_begin_.assign(1, 0);
  auto kept = [&](const Value* v) { return !restricted_ || kept_value_[v->id()] != 0; };
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const Value* v : ops[i]->inputs()) {
      if (kept(v)) tin_.push_back(v->id());
    }
    tin_begin_.push_back(static_cast<int32_t>(tin_.size()));
    for (const auto& r : ops[i]->results()) {
      if (c_.summed[r->id()]) has_summed_[i] = 1;
      if (kept(r.get())) tout_.push_back(r->id());
    }
    tout_begin_.push_back(static_cast<int32_t>(tout_.size()));
  }
}

void Expander::Clone(size_t i, int64_t m) {
  ++whole_ops_;
  if (restricted_ && kept_op_[i] == 0) return;
  const bool per = c_.per_op[i];
  int32_t* row = per ? per_[static_cast<size_t>(m)].data() : nullptr;
  ins_.clear();
  outs_.clear();
  for (int32_t k = tin_begin_[i]; k < tin_begin_[i + 1]; ++k) {
    const int32_t v = tin_[static_cast<size_t>(k)];
    ins_.push_back(per && c_.per_value[static_cast<size_t>(v)] != 0 ? row[v] : shared_[v]);
  }
  for (int32_t k = tout_begin_[i]; k < tout_begin_[i + 1]; ++k) {
    const int32_t r = tout_[static_cast<size_t>(k)];
    const int32_t id = x_.AddValue(r);
    outs_.push_back(id);
    (per ? row[r] : shared_[r]) = id;
  }
  x_.AddOp(static_cast<int32_t>(i), static_cast<int32_t>(per ? m : 0), ins_, outs_);
  std::optional<TaskTag> t = c_.task[i];
  if (per && m > 0) t->microbatch = m;
  tasks_.push_back(t);
}

void Expander::Accumulate(const Op& op, int64_t m) {
  for (const auto& r : op.results()) {
    if (!c_.summed[r->id()]) continue;
    if (restricted_ && kept_value_[r->id()] == 0) {
      whole_ops_ += m > 0 ? 1 : 0;  // the sum the whole program has
      continue;
    }
    const int32_t v = per_[static_cast<size_t>(m)][r->id()];
    if (m == 0) {
      shared_[r->id()] = v;
      continue;
    }
    ++whole_ops_;
    const int32_t sum = x_.AddValue(r->id(), /*sum=*/true);
    const int32_t ins[] = {shared_[r->id()], v};
    const int32_t outs[] = {sum};
    x_.AddOp(ExpandedProgram::kSum, static_cast<int32_t>(m), ins, outs);
    TaskTag t = *c_.task[static_cast<size_t>(op.id())];
    t.microbatch = m;
    tasks_.push_back(t);
    shared_[r->id()] = sum;
  }
}

ExpandedProgram Expander::Run() {
  const auto& ops = fn_.ops();
  size_t per_ops = 0, per_in = 0, per_out = 0, in = 0, out = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    in += ops[i]->inputs().size();
    out += ops[i]->results().size();
    if (!c_.per_op[i]) continue;
    ++per_ops;
    per_in += ops[i]->inputs().size();
    per_out += ops[i]->results().size();
  }
  const auto more = static_cast<size_t>(k_ - 1);
  x_.op.reserve(ops.size() + more * per_ops);
  x_.copy.reserve(ops.size() + more * per_ops);
  x_.in_begin.reserve(ops.size() + more * per_ops + 1);
  x_.out_begin.reserve(ops.size() + more * per_ops + 1);
  x_.in.reserve(in + more * per_in);
  x_.out.reserve(out + more * per_out);
  x_.value_template.reserve(static_cast<size_t>(fn_.num_values()) + more * per_out);
  x_.value_is_sum.reserve(static_cast<size_t>(fn_.num_values()) + more * per_out);
  tasks_.reserve(ops.size() + more * per_ops);
  for (const auto& p : fn_.params()) {
    if (restricted_ && kept_value_[p->id()] == 0) continue;
    const int64_t copies = c_.per_value[p->id()] ? k_ : 1;
    for (int64_t m = 0; m < copies; ++m) {
      const int32_t id = x_.AddValue(p->id());
      x_.params.push_back(id);
      (c_.per_value[p->id()] ? per_[static_cast<size_t>(m)][p->id()] : shared_[p->id()]) = id;
    }
  }
  Flatten();
  for (size_t i = 0; i < c_.last_per; ++i) {
    Clone(i, 0);
    if (c_.per_op[i] && has_summed_[i]) Accumulate(*ops[i], 0);
  }
  for (int64_t m = 1; m < k_; ++m) {
    for (size_t i = 0; i < c_.last_per; ++i) {
      if (!c_.per_op[i]) continue;
      Clone(i, m);
      if (has_summed_[i]) Accumulate(*ops[i], m);
    }
  }
  for (size_t i = c_.last_per; i < ops.size(); ++i) Clone(i, 0);
  for (const Value* v : fn_.returns()) {
    if (restricted_ && kept_value_[v->id()] == 0) continue;
    if (!c_.per_value[v->id()] || c_.summed[v->id()]) {
      x_.returns.push_back(shared_[v->id()]);
      continue;
    }
    for (int64_t m = 0; m < k_; ++m) x_.returns.push_back(per_[static_cast<size_t>(m)][v->id()]);
  }
  return std::move(x_);
}

}  // namespace

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

StatusOr<ExpandedProgram> ExpandMicrobatches(const Function& fn, int64_t microbatches,
                                             const std::vector<std::string>& batch_params,
                                             std::vector<std::optional<TaskTag>>& tasks,
                                             const std::vector<char>* keep_devices) {
  if (microbatches < 1)
    return InvalidArgument() << "microbatches must be >= 1, got " << microbatches;
  std::set<std::string> batch(batch_params.begin(), batch_params.end());
  Classes c;
  DISTIR_RETURN_IF_ERROR(ClassifyTemplate(fn, batch, c));
  Expander expander(fn, microbatches, std::move(c));
  if (keep_devices != nullptr) DISTIR_RETURN_IF_ERROR(expander.Restrict(*keep_devices));
  ExpandedProgram x = expander.Run();
  if (keep_devices != nullptr) {
    x.keep_device = *keep_devices;
    x.whole_num_ops = expander.whole_ops();
  }
  tasks = std::move(expander.tasks());
  return x;
}

}  // namespace distir::sharding
