#include "sim/memory_tracker.h"

#include <algorithm>

#include "ir/call_graph.h"
#include "ir/op_alias.h"
#include "support/check.h"

namespace distir::sim {

namespace {

template <typename T>
int32_t Size(const std::vector<T>& v) {
  return static_cast<int32_t>(v.size());
}

void FlattenLeaves(const Type& type, std::vector<const Type*>& out) {
  if (!type.is_tuple()) {
    out.push_back(&type);
    return;
  }
  for (const Type& e : type.elements()) FlattenLeaves(e, out);
}

int32_t LeafCount(const Type& type) {
  if (!type.is_tuple()) return 1;
  int32_t n = 0;
  for (const Type& e : type.elements()) n += LeafCount(e);
  return n;
}

}  // namespace

BufferPlanBuilder::BufferPlanBuilder(const Function& fn, const Module* module,
                                     bool device_generic, bool params_resident,
                                     CallMemoryCache* calls)
    : fn_(fn), module_(module), device_generic_(device_generic), calls_(calls) {
  size_t n = fn_.ops().size();
  plan_.span_begin_.assign(fn_.num_values(), 0);
  plan_.span_end_.assign(fn_.num_values(), 0);
  plan_.fresh_begin_.assign(n + 1, 0);
  plan_.buffers_.reserve(fn_.num_values());
  plan_.leaves_.reserve(fn_.num_values() + n);
  def_op_.reserve(fn_.num_values());
  for (const auto& p : fn_.params()) {
    plan_.span_begin_[p->id()] = Size(plan_.leaves_);
    AddFreshLeaves(p->type(), /*counted=*/params_resident);
    plan_.span_end_[p->id()] = Size(plan_.leaves_);
  }
  def_op_.assign(plan_.buffers_.size(), kParamDef);
}

Status BufferPlanBuilder::AddOp(int index) {
  const Op& op = *fn_.ops()[index];
  if (!op.is_call()) {
    AddNonCallOp(index);
    return Status::Ok();
  }
  plan_.fresh_begin_[index] = Size(plan_.buffers_);
  DISTIR_RETURN_IF_ERROR(AddResults(op, index));
  def_op_.resize(plan_.buffers_.size(), index);
  for (const Value* v : op.inputs()) MarkUse(v->id(), index);
  return Status::Ok();
}

void BufferPlanBuilder::AddNonCallOp(int index) {
  const Op& op = *fn_.ops()[index];
  DISTIR_DCHECK(!op.is_call()) << "AddNonCallOp of a call";
  plan_.fresh_begin_[index] = Size(plan_.buffers_);
  AddNonCallResults(
      op, [&](int i) { return op.input(i)->id(); }, [&](int i) { return op.result(i)->id(); });
  def_op_.resize(plan_.buffers_.size(), index);
  for (const Value* v : op.inputs()) MarkUse(v->id(), index);
}

BufferPlanBuilder::BufferPlanBuilder(const Function& tmpl, const ExpandedProgram& x,
                                     std::span<const Value* const> values)
    : fn_(tmpl),
      module_(nullptr),
      device_generic_(false),
      calls_(nullptr),
      expanded_(&x),
      values_(values) {
  const size_t n = static_cast<size_t>(x.num_ops());
  plan_.span_begin_.assign(static_cast<size_t>(x.num_values()), 0);
  plan_.span_end_.assign(static_cast<size_t>(x.num_values()), 0);
  plan_.fresh_begin_.assign(n + 1, 0);
  plan_.buffers_.reserve(static_cast<size_t>(x.num_values()));
  plan_.leaves_.reserve(static_cast<size_t>(x.num_values()) + n);
  for (int32_t p : x.params) {
    plan_.span_begin_[p] = Size(plan_.leaves_);
    AddFreshLeaves(values_[x.value_template[p]]->type(), /*counted=*/true);
    plan_.span_end_[p] = Size(plan_.leaves_);
  }
  def_op_.assign(plan_.buffers_.size(), kParamDef);
}

void BufferPlanBuilder::AddExpandedOp(int index) {
  const ExpandedProgram& x = *expanded_;
  plan_.fresh_begin_[index] = Size(plan_.buffers_);
  std::span<const int32_t> in = x.Inputs(index), out = x.Results(index);
  const Op* op = x.op[index] == ExpandedProgram::kSum ? nullptr : fn_.ops()[x.op[index]].get();
  if (op != nullptr && static_cast<int>(in.size()) == op->num_inputs() &&
      static_cast<int>(out.size()) == op->num_results()) {
    AddNonCallResults(
        *op, [&](int i) { return in[i]; }, [&](int i) { return out[i]; });
  } else {
    // A sum, or a collective cut down to the kept devices: fresh results
    // (collectives alias nothing).
    for (int32_t r : out) FreshCopy(r, *values_[x.value_template[r]]);
  }
  def_op_.resize(plan_.buffers_.size(), index);
  for (int32_t v : in) MarkUse(v, index);
}

BufferPlan BufferPlanBuilder::Finish() && {
  int num_ops = expanded_ != nullptr ? expanded_->num_ops() : static_cast<int>(fn_.ops().size());
  plan_.fresh_begin_[num_ops] = Size(plan_.buffers_);
  for (int32_t b = 0; b < Size(plan_.buffers_); ++b) {
    if (def_op_[b] == kParamDef) plan_.buffers_[b].last_use = BufferPlan::kResident;
  }
  auto resident = [&](int32_t value) {
    for (int32_t b : plan_.buffers_of(value)) plan_.buffers_[b].last_use = BufferPlan::kResident;
  };
  if (expanded_ != nullptr) {
    for (int32_t v : expanded_->returns) resident(v);
  } else {
    for (const Value* v : fn_.returns()) resident(v->id());
  }
  BucketDeaths(num_ops);
  return std::move(plan_);
}

int32_t BufferPlanBuilder::DeviceOf(DeviceId d) const {
  if (device_generic_) return 0;
  DISTIR_CHECK(d.has_value()) << "buffer plan of a value without device";
  return d.value();
}

// One fresh buffer per tensor or scalar leaf of `type` (recursion over tuple
// nesting only), appended to the current value's buffer list.
void BufferPlanBuilder::AddFreshLeaves(const Type& type, bool counted) {
  if (type.is_tuple()) {
    for (const Type& e : type.elements()) AddFreshLeaves(e, counted);
    return;
  }
  int64_t bytes = counted ? type.SizeInBytes() : 0;
  plan_.leaves_.push_back(Size(plan_.buffers_));
  plan_.buffers_.push_back({DeviceOf(type.device()), bytes, kUnused});
}

// Appends the buffer ids [begin, end) of leaves_ again: an alias.
void BufferPlanBuilder::AppendLeaves(int32_t begin, int32_t end) {
  for (int32_t i = begin; i < end; ++i) {
    int32_t b = plan_.leaves_[i];
    plan_.leaves_.push_back(b);
  }
}

void BufferPlanBuilder::Alias(int32_t result, int32_t source) {
  plan_.span_begin_[result] = Size(plan_.leaves_);
  AppendLeaves(plan_.span_begin_[source], plan_.span_end_[source]);
  plan_.span_end_[result] = Size(plan_.leaves_);
}

void BufferPlanBuilder::Fresh(int32_t result, const Type& type) {
  plan_.span_begin_[result] = Size(plan_.leaves_);
  AddFreshLeaves(type, /*counted=*/true);
  plan_.span_end_[result] = Size(plan_.leaves_);
}

void BufferPlanBuilder::FreshCopy(int32_t result, const Value& tv) {
  if (leaf_of_template_.empty()) leaf_of_template_.assign(values_.size(), {0, -1});
  std::pair<int32_t, int64_t>& leaf = leaf_of_template_[static_cast<size_t>(tv.id())];
  if (leaf.second == -1) {
    const Type& t = tv.type();
    leaf = t.is_tuple() ? std::pair<int32_t, int64_t>{0, -2}
                        : std::pair<int32_t, int64_t>{DeviceOf(t.device()), t.SizeInBytes()};
  }
  if (leaf.second == -2) {
    Fresh(result, tv.type());
    return;
  }
  plan_.span_begin_[result] = Size(plan_.leaves_);
  plan_.leaves_.push_back(Size(plan_.buffers_));
  plan_.buffers_.push_back({leaf.first, leaf.second, kUnused});
  plan_.span_end_[result] = Size(plan_.leaves_);
}

void BufferPlanBuilder::MarkUse(int32_t value, int index) {
  for (int32_t i = plan_.span_begin_[value]; i < plan_.span_end_[value]; ++i) {
    plan_.buffers_[plan_.leaves_[i]].last_use = index;
  }
}

// Buckets buffers by the op that ends their life (a counting sort): O(ops + buffers).
void BufferPlanBuilder::BucketDeaths(int num_ops) {
  std::vector<int32_t>& begin = plan_.dies_begin_;
  begin.assign(num_ops + 2, 0);
  auto death = [this](int32_t b) {
    int32_t last = plan_.buffers_[b].last_use;
    return last == kUnused ? def_op_[b] : last;
  };
  for (int32_t b = 0; b < Size(plan_.buffers_); ++b) {
    if (plan_.buffers_[b].last_use != BufferPlan::kResident) ++begin[death(b) + 2];
  }
  for (int i = 2; i < num_ops + 2; ++i) begin[i] += begin[i - 1];
  plan_.dies_.resize(begin[num_ops + 1]);
  for (int32_t b = 0; b < Size(plan_.buffers_); ++b) {
    if (plan_.buffers_[b].last_use != BufferPlan::kResident) {
      plan_.dies_[begin[death(b) + 1]++] = b;
    }
  }
  begin.pop_back();
}

Status BufferPlanBuilder::CallResults(const Op& op, int index) {
  const Function* callee = module_ != nullptr ? module_->Lookup(op.callee()) : nullptr;
  if (callee == nullptr || calls_ == nullptr) {
    return NotFound(op.loc()) << "cannot plan memory of call of undefined function @"
                              << op.callee();
  }
  DISTIR_ASSIGN_OR_RETURN(const CallMemory* summary, calls_->Get(*callee));
  if (plan_.transient_.empty()) {
    plan_.transient_.assign(fn_.ops().size(), 0);
    plan_.op_device_.assign(fn_.ops().size(), 0);
  }
  plan_.transient_[index] = summary->peak_bytes;
  // Flattened argument leaves, which aliased result leaves point into.
  std::vector<int32_t> arg_leaves;
  for (const Value* v : op.inputs()) {
    for (int32_t b : plan_.buffers_of(v->id())) arg_leaves.push_back(b);
  }
  size_t leaf = 0;
  std::vector<const Type*> leaf_types;
  for (const auto& r : op.results()) {
    plan_.span_begin_[r->id()] = Size(plan_.leaves_);
    leaf_types.clear();
    FlattenLeaves(r->type(), leaf_types);
    for (const Type* t : leaf_types) {
      int32_t alias = leaf < summary->result_leaf_alias.size() ? summary->result_leaf_alias[leaf]
                                                                : -1;
      ++leaf;
      if (alias >= 0 && alias < Size(arg_leaves)) {
        plan_.leaves_.push_back(arg_leaves[alias]);
      } else {
        AddFreshLeaves(*t, /*counted=*/true);
      }
    }
    plan_.span_end_[r->id()] = Size(plan_.leaves_);
  }
  const Value* anchor = op.num_results() > 0 ? op.result(0) : op.input(0);
  auto buffers = plan_.buffers_of(anchor->id());
  plan_.op_device_[index] = buffers.empty() ? 0 : plan_.buffers_[buffers[0]].device;
  return Status::Ok();
}

Status BufferPlanBuilder::AddResults(const Op& op, int index) {
  if (op.kind() == OpKind::kCall) return CallResults(op, index);
  AddNonCallResults(
      op, [&](int i) { return op.input(i)->id(); }, [&](int i) { return op.result(i)->id(); });
  return Status::Ok();
}

// Tuple regroups its operands' buffers, UnpackTuple splits its operand's;
// views and in-place updates reuse an operand's (the executor's arena plan
// asks the same table, ir/op_alias.h); every other result is fresh.
template <typename InId, typename OutId>
void BufferPlanBuilder::AddNonCallResults(const Op& op, InId in_id, OutId out_id) {
  if (op.kind() == OpKind::kTuple) {
    const int32_t r = out_id(0);
    plan_.span_begin_[r] = Size(plan_.leaves_);
    for (int i = 0; i < op.num_inputs(); ++i) {
      AppendLeaves(plan_.span_begin_[in_id(i)], plan_.span_end_[in_id(i)]);
    }
    plan_.span_end_[r] = Size(plan_.leaves_);
    return;
  }
  if (op.kind() == OpKind::kUnpackTuple) {
    const Type& t = op.input(0)->type();
    const int32_t source = in_id(0);
    int32_t at = plan_.span_begin_[source];
    for (int i = 0; i < op.num_results(); ++i) {
      int32_t n = t.is_tuple() && i < static_cast<int>(t.elements().size())
                      ? LeafCount(t.elements()[i])
                      : 1;
      const int32_t r = out_id(i);
      plan_.span_begin_[r] = Size(plan_.leaves_);
      AppendLeaves(at, std::min(at + n, plan_.span_end_[source]));
      plan_.span_end_[r] = Size(plan_.leaves_);
      at += n;
    }
    return;
  }
  for (int r = 0; r < op.num_results(); ++r) {
    const int alias = AliasedInput(op, r);
    if (alias >= 0 && alias < op.num_inputs()) {
      Alias(out_id(r), in_id(alias));
    } else if (expanded_ != nullptr) {
      FreshCopy(out_id(r), *op.result(r));
    } else {
      Fresh(out_id(r), op.result(r)->type());
    }
  }
}

StatusOr<BufferPlan> BufferPlan::Build(const Function& fn, const Module* module,
                                       bool device_generic, bool params_resident,
                                       CallMemoryCache* calls) {
  BufferPlanBuilder builder(fn, module, device_generic, params_resident, calls);
  for (int i = 0; i < static_cast<int>(fn.ops().size()); ++i) {
    DISTIR_RETURN_IF_ERROR(builder.AddOp(i));
  }
  return std::move(builder).Finish();
}

StatusOr<const CallMemory*> CallMemoryCache::Get(const Function& callee) {
  auto it = cache_.find(&callee);
  if (it != cache_.end()) return it->second.get();
  // Summarise the callees below first, so that building each plan finds its
  // callees' summaries here instead of recursing once per call level.
  auto known = [this](const Function& f) { return cache_.count(&f) != 0; };
  for (const Function* f : CalleesBottomUp(*module_, callee, known)) {
    StatusOr<std::unique_ptr<CallMemory>> summary = Summarize(*f);
    if (!summary.ok()) {
      Status s = std::move(summary).status();
      if (f != &callee) s.AddNote("in @" + f->name() + ", which @" + callee.name() + " calls");
      return s;
    }
    cache_.emplace(f, std::move(summary).value());
  }
  return cache_.at(&callee).get();
}

StatusOr<std::unique_ptr<CallMemory>> CallMemoryCache::Summarize(const Function& callee) {
  // A callee borrows its arguments: its parameters count 0 bytes here.
  DISTIR_ASSIGN_OR_RETURN(BufferPlan plan,
                          BufferPlan::Build(callee, module_, /*device_generic=*/true,
                                                    /*params_resident=*/false, this));
  MemoryTracker tracker(plan, 1, /*record_timeline=*/false);
  for (int i = 0; i < plan.num_ops(); ++i) {
    bool is_call = callee.ops()[i]->is_call();
    tracker.OpStarts(i, is_call, 0);
    tracker.OpEnds(i, is_call, 0);
  }
  auto summary = std::make_unique<CallMemory>();
  summary->peak_bytes = tracker.peak(0);
  int32_t num_param_buffers = plan.fresh_begin(0);
  for (const Value* v : callee.returns()) {
    for (int32_t b : plan.buffers_of(v->id())) {
      summary->result_leaf_alias.push_back(b < num_param_buffers ? b : -1);
    }
  }
  return summary;
}

MemoryTracker::MemoryTracker(const BufferPlan& plan, int num_devices, bool record_timeline)
    : MemoryTracker(plan, num_devices, record_timeline, {}) {}

MemoryTracker::MemoryTracker(const BufferPlan& plan, int num_devices, bool record_timeline,
                             std::vector<MemoryKind> buffer_kinds)
    : plan_(plan), record_timeline_(record_timeline), live_(num_devices, 0),
      peak_(num_devices, 0), timeline_(num_devices), kinds_(std::move(buffer_kinds)) {
  DISTIR_CHECK(kinds_.empty() || kinds_.size() == plan.buffers().size())
      << "one memory kind per buffer expected";
  if (!kinds_.empty()) {
    live_kind_.assign(num_devices, MemoryByKind{});
    peak_kind_.assign(num_devices, MemoryByKind{});
    at_peak_.assign(num_devices, MemoryByKind{});
  }
  for (int32_t b = 0; b < plan.fresh_begin(0); ++b) {
    const BufferPlan::Buffer& buf = plan.buffers()[b];
    Change(buf.device, buf.bytes, 0, KindOf(b));
  }
}

void MemoryTracker::Change(int device, int64_t delta, double time_s, MemoryKind kind) {
  int64_t now = live_[device] += delta;
  const bool new_peak = now > peak_[device];
  peak_[device] = std::max(peak_[device], now);
  if (!kinds_.empty()) ChangeKind(device, delta, kind, new_peak);
  if (!record_timeline_) return;
  std::vector<MemoryPoint>& points = timeline_[device];
  if (!points.empty() && points.back().time_s == time_s) {
    points.back().bytes = now;
    return;
  }
  points.push_back({time_s, now});
}

void MemoryTracker::ChangeKind(int device, int64_t delta, MemoryKind kind, bool new_peak) {
  const int k = static_cast<int>(kind);
  int64_t now = live_kind_[device][k] += delta;
  peak_kind_[device][k] = std::max(peak_kind_[device][k], now);
  if (new_peak) at_peak_[device] = live_kind_[device];
}

void MemoryTracker::AllocateFresh(int op, double time_s) {
  for (int32_t b = plan_.fresh_begin(op); b < plan_.fresh_end(op); ++b) {
    const BufferPlan::Buffer& buf = plan_.buffers()[b];
    Change(buf.device, buf.bytes, time_s, KindOf(b));
  }
}

void MemoryTracker::OpStarts(int op, bool is_call, double time_s) {
  if (is_call) {
    Change(plan_.op_device(op), plan_.transient_bytes(op), time_s, MemoryKind::kOther);
    return;
  }
  AllocateFresh(op, time_s);
}

void MemoryTracker::OpEnds(int op, bool is_call, double time_s) {
  if (is_call) CallEnds(op, time_s);
  for (int32_t b : plan_.dying(op)) Free(b, time_s);
}

void MemoryTracker::CallEnds(int op, double time_s) {
  Change(plan_.op_device(op), -plan_.transient_bytes(op), time_s, MemoryKind::kOther);
  AllocateFresh(op, time_s);
}

void MemoryTracker::Free(int32_t buffer, double time_s) {
  const BufferPlan::Buffer& buf = plan_.buffers()[buffer];
  Change(buf.device, -buf.bytes, time_s, KindOf(buffer));
}

}  // namespace distir::sim
