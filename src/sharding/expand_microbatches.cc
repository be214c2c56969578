// ExpandMicrobatches and ExpandMicrobatchesInOrder (replicate.h): the
// program ReplicateMicrobatches builds, as copies of the template's ops
// (ir/expanded_program.h), without their IR.

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "ir/gemm_accumulation.h"
#include "ir/op_registry.h"
#include "sharding/expander.h"
#include "sharding/microbatch_classes.h"
#include "sharding/order_view.h"
#include "sharding/replicate.h"
#include "sharding/segment_view.h"
#include "sharding/task_order.h"
#include "support/status_or.h"

namespace distir::sharding {

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
  if (!has_summed_.empty() || fn_.ops().empty()) return;  // done
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
  if (restricted_ && kept_op_[i] == 0) return;
  const bool per = c_.per_op[i];
  int32_t* row = per ? per_[static_cast<size_t>(m)].data() : nullptr;
  ins_.clear();
  outs_.clear();
  for (int32_t k = tin_begin_[i]; k < tin_begin_[i + 1]; ++k) {
    const int32_t v = tin_[static_cast<size_t>(k)];
    ins_.push_back(per && c_.per_value[static_cast<size_t>(v)] != 0 ? row[v] : shared_[v]);
    if (ins_.back() < 0) undefined_read_ = true;
  }
  for (int32_t k = tout_begin_[i]; k < tout_begin_[i + 1]; ++k) {
    const int32_t r = tout_[static_cast<size_t>(k)];
    const int32_t id = x_.AddValue(r);
    outs_.push_back(id);
    (per ? row[r] : shared_[r]) = id;
  }
  x_.AddOp(static_cast<int32_t>(i), static_cast<int32_t>(per ? m : 0), ins_, outs_);
  if (!record_tasks_) return;
  std::optional<TaskTag> t = c_.task[i];
  if (per && m > 0) t->microbatch = m;
  tasks_.push_back(t);
}

void Expander::Accumulate(const Op& op, int64_t m) {
  for (const auto& r : op.results()) {
    if (!c_.summed[r->id()]) continue;
    if (restricted_ && kept_value_[r->id()] == 0) {
      continue;
    }
    const int32_t v = per_[static_cast<size_t>(m)][r->id()];
    if (m == 0) {
      shared_[r->id()] = v;
      continue;
    }
    const int32_t sum = x_.AddValue(r->id(), /*sum=*/true);
    const int32_t ins[] = {shared_[r->id()], v};
    const int32_t outs[] = {sum};
    x_.AddOp(ExpandedProgram::kSum, static_cast<int32_t>(m), ins, outs);
    if (record_tasks_) {
      TaskTag t = *c_.task[static_cast<size_t>(op.id())];
      t.microbatch = m;
      tasks_.push_back(t);
    }
    shared_[r->id()] = sum;
  }
}

void Expander::Reserve() {
  // The copies' value ids, K x values: allocated only to write the copies.
  per_.assign(static_cast<size_t>(k_), std::vector<int32_t>(fn_.num_values(), -1));
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
  if (record_tasks_) tasks_.reserve(ops.size() + more * per_ops);
}

void Expander::EmitParams() {
  for (const auto& p : fn_.params()) {
    if (restricted_ && kept_value_[p->id()] == 0) continue;
    const int64_t copies = c_.per_value[p->id()] ? k_ : 1;
    for (int64_t m = 0; m < copies; ++m) {
      const int32_t id = x_.AddValue(p->id());
      x_.params.push_back(id);
      (c_.per_value[p->id()] ? per_[static_cast<size_t>(m)][p->id()] : shared_[p->id()]) = id;
    }
  }
}

void Expander::EmitReturns() {
  for (const Value* v : fn_.returns()) {
    if (restricted_ && kept_value_[v->id()] == 0) continue;
    if (!c_.per_value[v->id()] || c_.summed[v->id()]) {
      x_.returns.push_back(shared_[v->id()]);
      continue;
    }
    for (int64_t m = 0; m < k_; ++m) x_.returns.push_back(per_[static_cast<size_t>(m)][v->id()]);
  }
}

void Expander::Emit(size_t i, int64_t m) {
  Clone(i, m);
  if (c_.per_op[i] && has_summed_[i]) Accumulate(*fn_.ops()[i], m);
}

bool Expander::GroupTasks() {
  const auto& ops = fn_.ops();
  class_of_.assign(ops.size(), -1);
  std::map<std::pair<int64_t, TaskPhase>, int32_t> by_task;
  for (size_t i = 0; i < ops.size(); ++i) {
    const bool send = ops[i]->kind() == OpKind::kSend;
    const bool task = !send && IsScheduledTask(c_.task[i]);
    // A sum joins the segment of its producer's task; a Send's is a segment of its own.
    if (c_.per_op[i] && has_summed_[i] && !task) return false;
    if (!task) continue;
    const TaskTag& t = *c_.task[i];
    if (!c_.per_op[i] && t.microbatch != 0) return false;  // the template is microbatch 0
    auto [it, fresh] =
        by_task.try_emplace({t.stage, t.phase}, static_cast<int32_t>(class_task_.size()));
    if (fresh) {
      class_task_.push_back(TaskTag{t.stage, 0, t.phase});
      class_ops_[0].emplace_back();
      class_ops_[1].emplace_back();
    }
    const int32_t c = it->second;
    class_of_[i] = c;
    if (restricted_ && kept_op_[i] == 0) continue;
    class_ops_[0][static_cast<size_t>(c)].push_back(static_cast<int32_t>(i));
    if (c_.per_op[i]) class_ops_[1][static_cast<size_t>(c)].push_back(static_cast<int32_t>(i));
  }
  return true;
}

void Expander::AddSegment(size_t i, std::vector<char>& opened, std::vector<Segment>& out) const {
  const int32_t c = class_of_[i];
  if (c < 0) {
    out.push_back({-1, static_cast<int32_t>(i), 0});
    return;
  }
  if (opened[static_cast<size_t>(c)] != 0) return;
  opened[static_cast<size_t>(c)] = 1;
  out.push_back({c, -1, 0});
}

// In Run()'s order: microbatch 0's ops (shared ones included), the later
// microbatches' per-microbatch ops, the ops after the last of those; a
// segment is numbered by its first op.
std::optional<SegmentOrderView::Parts> Expander::Segments() {
  Flatten();
  if (!GroupTasks()) return std::nullopt;
  const auto& ops = fn_.ops();
  auto kept = [&](size_t i) { return !restricted_ || kept_op_[i] != 0; };
  for (size_t i = 0; i < ops.size(); ++i) {
    // The orderings read a Send's result: it must be in the program.
    if (ops[i]->kind() == OpKind::kSend && kept(i) && tout_begin_[i + 1] == tout_begin_[i])
      return std::nullopt;
  }
  std::vector<char> opened(class_task_.size(), 0);  // microbatch 0's classes
  for (size_t i = 0; i < c_.last_per; ++i) {
    if (kept(i)) AddSegment(i, opened, segments_);
  }
  // Every later microbatch's segments come in one order: each class at its
  // first op, each other op alone, found once.
  std::vector<Segment> later;
  std::vector<char> seen(class_task_.size(), 0);
  for (size_t i = 0; i < c_.last_per; ++i) {
    if (c_.per_op[i] && kept(i)) AddSegment(i, seen, later);
  }
  segments_.reserve(segments_.size() + later.size() * static_cast<size_t>(k_ - 1));
  for (int64_t m = 1; m < k_; ++m) {
    for (Segment g : later) {
      g.m = static_cast<int32_t>(m);
      segments_.push_back(g);
    }
  }
  for (size_t i = c_.last_per; i < ops.size(); ++i) {
    if (kept(i)) AddSegment(i, opened, segments_);
  }
  return SegmentParts();
}

// The Sends' results are the values: Send segment s writes value s.
SegmentOrderView::Parts Expander::SegmentParts() const {
  const auto& ops = fn_.ops();
  SegmentOrderView::Parts p;
  const size_t count = segments_.size();
  p.num_values = static_cast<int>(count);
  // Sized up front: a grid point has K x tasks segments and more (K up to
  // hundreds), each list otherwise reallocated as it grows.
  p.tasks.reserve(count);
  p.send_result.reserve(count);
  p.send_target.reserve(count);
  p.in_begin.reserve(count + 1);
  p.out_begin.reserve(count + 1);
  // The segment of each Send copy, by template op and microbatch.
  std::vector<std::vector<int32_t>> send_at(ops.size());
  // The template Sends whose results each template op reads.
  std::vector<int32_t> def_send(static_cast<size_t>(fn_.num_values()), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i]->kind() != OpKind::kSend) continue;
    for (int32_t k = tout_begin_[i]; k < tout_begin_[i + 1]; ++k)
      def_send[static_cast<size_t>(tout_[static_cast<size_t>(k)])] = static_cast<int32_t>(i);
  }
  for (size_t s = 0; s < count; ++s) {
    const Segment& g = segments_[s];
    if (g.cls >= 0) {
      TaskTag t = class_task_[static_cast<size_t>(g.cls)];
      t.microbatch = g.m;
      p.tasks.emplace_back(t);
      p.send_result.push_back(-1);
      p.send_target.push_back(-1);
      continue;
    }
    const auto i = static_cast<size_t>(g.op);
    std::optional<TaskTag> t = c_.task[i];
    if (c_.per_op[i] && g.m > 0) t->microbatch = g.m;
    p.tasks.push_back(t);
    const bool send = ops[i]->kind() == OpKind::kSend;
    p.send_result.push_back(send ? static_cast<int32_t>(s) : -1);
    const DeviceId to = send ? ops[i]->result(0)->type().device() : DeviceId();
    p.send_target.push_back(to.has_value() ? to.value() : -1);
    if (!send) continue;
    std::vector<int32_t>& at = send_at[i];
    if (at.empty()) at.assign(static_cast<size_t>(c_.per_op[i] ? k_ : 1), -1);
    at[static_cast<size_t>(g.m)] = static_cast<int32_t>(s);
  }
  // Each class's Sends read, once for microbatch 0 and once for the others:
  // (template Send, whether it is the reader's own microbatch's copy).
  std::vector<std::pair<int32_t, bool>> reads;
  auto sends_read = [&](size_t j, std::vector<std::pair<int32_t, bool>>& out) {
    for (int32_t k = tin_begin_[j]; k < tin_begin_[j + 1]; ++k) {
      const int32_t ss = def_send[static_cast<size_t>(tin_[static_cast<size_t>(k)])];
      if (ss >= 0) out.emplace_back(ss, c_.per_op[j] && c_.per_op[static_cast<size_t>(ss)]);
    }
  };
  std::vector<std::vector<std::pair<int32_t, bool>>> class_reads[2];
  for (int b = 0; b < 2; ++b) {
    class_reads[b].resize(class_task_.size());
    for (size_t c = 0; c < class_task_.size(); ++c) {
      for (int32_t j : class_ops_[b][c]) sends_read(static_cast<size_t>(j), class_reads[b][c]);
    }
  }
  for (size_t s = 0; s < count; ++s) {
    const Segment& g = segments_[s];
    reads.clear();
    if (g.cls < 0) sends_read(static_cast<size_t>(g.op), reads);
    const auto& list = g.cls < 0 ? reads : class_reads[g.m > 0 ? 1 : 0][static_cast<size_t>(g.cls)];
    for (const auto& [ss, own] : list) {
      const std::vector<int32_t>& copies = send_at[static_cast<size_t>(ss)];
      const auto m = static_cast<size_t>(own ? g.m : 0);
      if (m < copies.size() && copies[m] >= 0) p.in.push_back(copies[m]);
    }
    p.in_begin.push_back(static_cast<int32_t>(p.in.size()));
    if (p.send_result[s] >= 0) p.out.push_back(static_cast<int32_t>(s));
    p.out_begin.push_back(static_cast<int32_t>(p.out.size()));
  }
  // Each class's devices (its microbatch-0 ops' results'), for all its segments.
  std::vector<int32_t> class_row(class_task_.size(), 0);
  std::vector<char> seen;
  for (size_t c = 0; c < class_task_.size(); ++c) {
    std::fill(seen.begin(), seen.end(), 0);
    for (int32_t j : class_ops_[0][c]) {
      for (const auto& r : ops[static_cast<size_t>(j)]->results()) {
        if (restricted_ && kept_value_[r->id()] == 0) continue;
        ForEachDeviceOf(r->type(), [&](int32_t d) {
          if (d < 0) return;
          if (static_cast<size_t>(d) >= seen.size()) seen.resize(static_cast<size_t>(d) + 1, 0);
          if (seen[static_cast<size_t>(d)] != 0) return;
          seen[static_cast<size_t>(d)] = 1;
          p.devices.push_back(d);
        });
      }
    }
    p.device_begin.push_back(static_cast<int32_t>(p.devices.size()));
    class_row[c] = static_cast<int32_t>(p.device_begin.size()) - 2;
  }
  p.device_row.assign(count, 0);
  for (size_t s = 0; s < count; ++s) {
    if (segments_[s].cls >= 0) p.device_row[s] = class_row[static_cast<size_t>(segments_[s].cls)];
  }
  return p;
}

// Run() counts every copy, kept or not: n ops, K - 1 more of each
// per-microbatch one, K - 1 sums of each summed result.
int64_t Expander::WholeOps() const {
  const auto& ops = fn_.ops();
  const bool images = images_ != nullptr && images_->size() == ops.size();
  double whole = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    // Microbatch 0's op, and for a per-microbatch op K - 1 more with their sums.
    int64_t copies = 1;
    if (c_.per_op[i]) {
      int64_t per_copy = 1;
      for (const auto& r : ops[i]->results()) per_copy += c_.summed[r->id()] ? 1 : 0;
      copies += per_copy * (k_ - 1);
    }
    whole += static_cast<double>(copies) * (images ? (*images_)[i] : 1.0);
  }
  return std::llround(whole);
}

std::optional<ExpandedProgram> Expander::RunInOrder(const std::vector<size_t>& order) {
  const auto& ops = fn_.ops();
  record_tasks_ = false;
  Reserve();
  EmitParams();
  // The microbatch each running sum last added, which must be the one before.
  std::vector<int32_t> summed_to(static_cast<size_t>(fn_.num_values()), -1);
  bool out_of_order = false;
  auto emit = [&](size_t i, int64_t m) {
    Clone(i, m);
    if (!c_.per_op[i] || !has_summed_[i]) return;
    for (const auto& r : ops[i]->results()) {
      if (!c_.summed[r->id()]) continue;
      int32_t& last = summed_to[static_cast<size_t>(r->id())];
      out_of_order = out_of_order || last != m - 1;
      last = static_cast<int32_t>(m);
    }
    Accumulate(*ops[i], m);
  };
  for (size_t s : order) {
    const Segment& g = segments_[s];
    if (g.cls < 0) {
      emit(static_cast<size_t>(g.op), g.m);
      continue;
    }
    for (int32_t i : class_ops_[g.m > 0 ? 1 : 0][static_cast<size_t>(g.cls)])
      emit(static_cast<size_t>(i), c_.per_op[static_cast<size_t>(i)] ? g.m : 0);
  }
  if (undefined_read_ || out_of_order) return std::nullopt;
  EmitReturns();
  return std::move(x_);
}

ExpandedProgram Expander::Run() {
  Reserve();
  EmitParams();
  Flatten();
  for (size_t i = 0; i < c_.last_per; ++i) Emit(i, 0);
  for (int64_t m = 1; m < k_; ++m) {
    for (size_t i = 0; i < c_.last_per; ++i) {
      if (c_.per_op[i]) Emit(i, m);
    }
  }
  for (size_t i = c_.last_per; i < fn_.ops().size(); ++i) Clone(i, 0);
  EmitReturns();
  return std::move(x_);
}

namespace {

// The expansion of `fn` into K copies, restricted to `keep_devices` if given.
StatusOr<std::unique_ptr<Expander>> MakeExpander(const Function& fn, int64_t microbatches,
                                                 const std::vector<std::string>& batch_params,
                                                 const std::vector<char>* keep_devices,
                                                 const std::vector<double>* op_images) {
  if (microbatches < 1)
    return InvalidArgument() << "microbatches must be >= 1, got " << microbatches;
  std::set<std::string> batch(batch_params.begin(), batch_params.end());
  MicrobatchClasses c;
  DISTIR_RETURN_IF_ERROR(ClassifyTemplate(fn, batch, c));
  auto expander = std::make_unique<Expander>(fn, microbatches, std::move(c));
  if (keep_devices != nullptr) DISTIR_RETURN_IF_ERROR(expander->Restrict(*keep_devices));
  expander->SetImages(op_images);
  return expander;
}

// A restricted program's kept devices and the whole program's op count.
void MarkPart(ExpandedProgram& x, const Expander& expander, const std::vector<char>* keep_devices) {
  if (keep_devices == nullptr) return;
  x.keep_device = *keep_devices;
  x.whole_num_ops = expander.WholeOps();
}

}  // namespace

StatusOr<ExpandedProgram> ExpandMicrobatches(const Function& fn, int64_t microbatches,
                                             const std::vector<std::string>& batch_params,
                                             std::vector<std::optional<TaskTag>>& tasks,
                                             const std::vector<char>* keep_devices,
                                             const std::vector<double>* op_images) {
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Expander> expander,
                          MakeExpander(fn, microbatches, batch_params, keep_devices, op_images));
  ExpandedProgram x = expander->Run();
  MarkPart(x, *expander, keep_devices);
  tasks = std::move(expander->tasks());
  return x;
}

namespace {

// The expander of `fn` and the exchange order of its template's task
// segments (segment_view.h); nullopt where the segments or the order do not
// apply.
struct OrderedSegments {
  std::unique_ptr<Expander> expander;
  std::vector<size_t> order;
};

StatusOr<std::optional<OrderedSegments>> OrderSegments(const Function& fn, int64_t microbatches,
                                                       const std::vector<std::string>& batch_params,
                                                       PipelineSchedule schedule,
                                                       int64_t virtual_stages,
                                                       const std::vector<char>* keep_devices,
                                                       const std::vector<double>* op_images) {
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Expander> expander,
                          MakeExpander(fn, microbatches, batch_params, keep_devices, op_images));
  std::optional<SegmentOrderView::Parts> parts = expander->Segments();
  if (!parts.has_value()) return std::optional<OrderedSegments>();
  const SegmentOrderView segments(std::move(*parts));
  std::optional<std::vector<size_t>> order =
      ExchangeSegmentOrder(segments, schedule, virtual_stages);
  if (!order.has_value()) return std::optional<OrderedSegments>();
  return std::optional<OrderedSegments>(OrderedSegments{std::move(expander), std::move(*order)});
}

}  // namespace

StatusOr<std::optional<ExpandedProgram>> ExpandMicrobatchesInOrder(
    const Function& fn, int64_t microbatches, const std::vector<std::string>& batch_params,
    PipelineSchedule schedule, int64_t virtual_stages, const std::vector<char>* keep_devices,
    const std::vector<double>* op_images) {
  DISTIR_ASSIGN_OR_RETURN(std::optional<OrderedSegments> ordered,
                          OrderSegments(fn, microbatches, batch_params, schedule, virtual_stages,
                                        keep_devices, op_images));
  if (!ordered.has_value()) return std::optional<ExpandedProgram>();
  std::optional<ExpandedProgram> x = ordered->expander->RunInOrder(ordered->order);
  if (x.has_value()) MarkPart(*x, *ordered->expander, keep_devices);
  return x;
}

StatusOr<std::optional<SegmentedProgram>> ExpandMicrobatchSegments(
    const Function& fn, int64_t microbatches, const std::vector<std::string>& batch_params,
    PipelineSchedule schedule, int64_t virtual_stages, const std::vector<char>* keep_devices,
    const std::vector<double>* op_images) {
  DISTIR_ASSIGN_OR_RETURN(std::optional<OrderedSegments> ordered,
                          OrderSegments(fn, microbatches, batch_params, schedule, virtual_stages,
                                        keep_devices, op_images));
  if (!ordered.has_value()) return std::optional<SegmentedProgram>();
  std::optional<SegmentedProgram> x = ordered->expander->Segmented(ordered->order);
  if (x.has_value() && keep_devices != nullptr) x->keep_device = *keep_devices;
  return x;
}

}  // namespace distir::sharding
