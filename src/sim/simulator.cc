#include "sim/simulator.h"

#include <algorithm>
#include <unordered_map>

#include "interp/prefetch.h"
#include "ir/gemm_accumulation.h"
#include "sim/segment_composition.h"
#include "sim/stream_memory.h"
#include "sim/stream_scheduler.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace distir::sim {
namespace {

// Device of a value's type in the first scan: an id, or one of these.
constexpr int32_t kNoDevice = -1;     // some leaf is not placed
constexpr int32_t kManyDevices = -2;  // a tuple spanning devices
constexpr int32_t kNoLeaves = -3;     // an empty tuple: no bytes, no device

// Larger ids are rejected rather than indexed (a dense table per device id).
constexpr int32_t kMaxDeviceId = 1 << 20;

int32_t RawDeviceOf(const Type& type) {
  if (!type.is_tuple()) return type.device().has_value() ? type.device().value() : kNoDevice;
  int32_t found = kNoLeaves;
  for (const Type& e : type.elements()) {
    int32_t d = RawDeviceOf(e);
    if (d == kNoDevice) return kNoDevice;
    if (d == kNoLeaves) continue;
    if (found == kNoLeaves) found = d;
    if (d != found) found = kManyDevices;
  }
  return found;
}

int64_t DefaultBatch(const Function& fn) {
  if (fn.num_params() == 0) return 1;
  const Type* t = &fn.param(0)->type();
  while (t->is_tuple() && !t->elements().empty()) t = &t->elements()[0];
  if (!t->is_tensor() || t->rank() == 0) return 1;
  return std::max<int64_t>(t->shape()[0], 1);
}

Status NoDevice(const Op& op) {
  return InvalidArgument(op.loc()) << "op " << op.Name()
                                   << " has no device; the simulator needs every value placed";
}

// "op MatMul" or "parameter %x": who is blamed for a bad value.
// (Built with append: GCC 12's -Wrestrict misfires on `"literal" + string` at -O2.)
std::string Culprit(const Value& v, const Op* def) {
  std::string out = def != nullptr ? "op " : "parameter ";
  out.append(def != nullptr ? def->Name() : v.Ref());
  return out;
}

// One simulation of one function, in two passes. The first walks the IR once
// and leaves compact per-op tables (cost, devices, category) and the buffer
// plan; the second advances the clocks and the memory from those tables alone.
// Devices are indexed by id: programs use small dense ids.
class Simulation {
 public:
  Simulation(const Module& module, const Function& fn, CostModel& costs,
             const SimulateOptions& options, const ExpandedProgram* expanded = nullptr,
             const SegmentedProgram* segmented = nullptr)
      : module_(module),
        fn_(fn),
        costs_(costs),
        options_(options),
        calls_(&module),
        expanded_(expanded),
        segmented_(segmented) {}

  StatusOr<SimulationResult> Run() && {
    int num_ops = static_cast<int>(fn_.ops().size());
    value_device_.assign(fn_.num_values(), kNoLeaves);
    for (const auto& p : fn_.params()) DISTIR_RETURN_IF_ERROR(CheckValue(*p, nullptr));
    DISTIR_RETURN_IF_ERROR(CheckParamsPlaced());
    BufferPlanBuilder plan(fn_, &module_, /*device_generic=*/false, /*params_resident=*/true,
                           &calls_);
    cost_.resize(num_ops);
    flags_.resize(num_ops);
    devices_begin_.resize(num_ops + 1);
    devices_.reserve(num_ops + num_ops / 4);
    const bool copies = expanded_ != nullptr || segmented_ != nullptr;
    for (int i = 0; i < num_ops; ++i) {
      PrefetchOps(fn_.ops(), i);
      if (!Prepare(i, copies ? nullptr : &plan)) return std::move(error_);
    }
    devices_begin_[num_ops] = static_cast<int32_t>(devices_.size());
    if (expanded_ != nullptr) return std::move(*this).RunExpanded();
    if (segmented_ != nullptr) return std::move(*this).RunSegmented();
    BufferPlan buffers = std::move(plan).Finish();
    MemoryTracker memory(buffers, NumSlots(), options_.record_memory_timeline,
                         BufferKinds(buffers));
    if (costs_.hardware().overlap.comm_stream) {
      ReplayOnStreams(buffers, memory);
    } else {
      Replay(memory);
    }
    Finish(memory);
    return std::move(result_);
  }

 private:
  static constexpr uint8_t kCommFlag = 1;
  static constexpr uint8_t kCallFlag = 2;

  int NumSlots() const { return static_cast<int>(present_.size()); }
  Status CheckValue(const Value& v, const Op* def);
  Status UseDevice(int32_t id, const SourceLoc& loc);
  bool QuickCheckValue(const Value& v);
  Status CheckParamsPlaced() const;
  void AddDevices(const Value& v, int op);
  bool Fails(Status status);
  bool Prepare(int i, BufferPlanBuilder* plan);
  StatusOr<SimulationResult> RunExpanded() &&;
  StatusOr<SimulationResult> RunSegmented() &&;
  std::vector<const Value*> ValuesById() const;
  bool Keeps(const std::vector<char>& keep, int32_t d) const {
    return keep.empty() || (d < static_cast<int32_t>(keep.size()) && keep[d] != 0);
  }
  void DropDevicesLeftOut(const std::vector<char>& keep);
  void FinishTotals();
  StatusOr<double> SumCost(const Value& summed);
  /// SumCost of template value `summed` (of `values`), once per value.
  StatusOr<double> CachedSumCost(int32_t summed, const std::vector<const Value*>& values);
  std::vector<MemoryKind> ExpandedBufferKinds(const BufferPlan& plan,
                                              std::span<const Value* const> values) const;
  void Replay(MemoryTracker& memory);
  void BuildDeps(const BufferPlan& plan, std::vector<int32_t>& begin,
                 std::vector<int32_t>& deps) const;
  void ReplayOnStreams(const BufferPlan& plan, MemoryTracker& memory);
  void RecordStreams(const StreamSchedule& schedule);
  void RecordDevices(double time, const std::vector<double>& compute,
                     const std::vector<double>& communication,
                     const std::vector<double>& overlapped);
  double SingleStreamTime() const;
  void Finish(MemoryTracker& memory);
  std::vector<MemoryKind> BufferKinds(const BufferPlan& plan) const;

  const Module& module_;
  const Function& fn_;
  CostModel& costs_;
  const SimulateOptions& options_;
  CallMemoryCache calls_;
  SimulationResult result_;
  Status error_;                        // why Prepare() failed
  std::vector<int32_t> value_device_;   // per value id: device id, kManyDevices, kNoLeaves, kNoDevice
  std::vector<char> present_;           // per device id: mentioned by the program
  std::vector<int32_t> stamp_;          // per device id: last op that listed it
  std::unordered_map<int32_t, double> sum_cost_;  // CachedSumCost, by template value
  std::vector<double> cost_;            // per op
  std::vector<uint8_t> flags_;          // per op: kCommFlag, kCallFlag
  std::vector<int32_t> devices_begin_;  // per op, plus one: into devices_
  std::vector<int32_t> devices_;        // device ids of each op, distinct
  const ExpandedProgram* expanded_;     // simulate these copies of fn_'s ops (or null)
  const SegmentedProgram* segmented_;   // or these segments of copies (or null)
};

// Registers device `id` as used, within the profile and the table limits.
Status Simulation::UseDevice(int32_t id, const SourceLoc& loc) {
  if (id < static_cast<int32_t>(present_.size()) && present_[id]) return Status::Ok();
  const HardwareProfile& hw = costs_.hardware();
  std::optional<int64_t> capacity = hw.NumDevices();
  if (capacity.has_value() && id >= *capacity) {
    return InvalidArgument(loc) << "the program uses device d" << id << ", but hardware profile '"
                                << hw.name << "' has " << *capacity << " devices (d0 to d"
                                << (*capacity - 1) << ")";
  }
  if (id >= kMaxDeviceId) return InvalidArgument(loc) << "device d" << id << " is too large";
  if (id >= static_cast<int32_t>(present_.size())) {
    present_.resize(id + 1, 0);
    stamp_.resize(id + 1, -1);
  }
  present_[id] = 1;
  return Status::Ok();
}

Status Simulation::CheckValue(const Value& v, const Op* def) {
  const Type& t = v.type();
  const SourceLoc& loc = def != nullptr ? def->loc() : v.loc();
  if (t.is_unknown()) {
    return InvalidArgument(loc) << "the type of " << v.Ref() << " (" << Culprit(v, def)
                                << ") is not inferred; the simulator needs a typed program";
  }
  if (!t.HasStaticShape()) {
    return InvalidArgument(loc) << Culprit(v, def) << " has a dynamic shape in " << v.Ref()
                                << " (" << t.ToString() << "); the simulator needs static shapes";
  }
  int32_t d = RawDeviceOf(t);
  value_device_[v.id()] = d;
  if (d == kNoDevice && def != nullptr) return NoDevice(*def);
  if (d >= 0) {
    if (d < NumSlots() && present_[d]) return Status::Ok();  // the common case, inline
    return UseDevice(d, loc);
  }
  if (d == kManyDevices) {
    for (DeviceId id : t.Devices()) DISTIR_RETURN_IF_ERROR(UseDevice(id.value(), loc));
  }
  return Status::Ok();
}

// A parameter without a device is blamed on its first user, the op that would
// have to run somewhere; one nobody uses is blamed itself.
Status Simulation::CheckParamsPlaced() const {
  for (const auto& p : fn_.params()) {
    if (value_device_[p->id()] != kNoDevice) continue;
    for (const auto& op : fn_.ops()) {
      const std::vector<Value*>& in = op->inputs();
      if (std::find(in.begin(), in.end(), p.get()) != in.end()) return NoDevice(*op);
    }
    return InvalidArgument(p->loc()) << "parameter " << p->Ref()
                                     << " has no device; the simulator needs every value placed";
  }
  return Status::Ok();
}

void Simulation::AddDevices(const Value& v, int op) {
  int32_t d = value_device_[v.id()];
  if (d == kNoLeaves) return;
  if (d != kManyDevices) {
    if (stamp_[d] != op) stamp_[d] = op, devices_.push_back(d);
    return;
  }
  for (DeviceId id : v.type().Devices()) {
    if (stamp_[id.value()] != op) stamp_[id.value()] = op, devices_.push_back(id.value());
  }
}

// The common case of CheckValue, decided without building a Status (Prepare
// runs once per op of programs of millions): a tensor or scalar of static shape
// on a device already registered. False: let CheckValue decide and explain.
bool Simulation::QuickCheckValue(const Value& v) {
  const Type& t = v.type();
  if (!(t.is_tensor() || t.is_scalar()) || !t.HasStaticShape()) return false;
  DeviceId d = t.device();
  if (!d.has_value() || d.value() >= NumSlots() || !present_[d.value()]) return false;
  value_device_[v.id()] = d.value();
  return true;
}

// Records `status` when it is an error; true when it is one.
bool Simulation::Fails(Status status) {
  if (status.ok()) return false;
  error_ = std::move(status);
  return true;
}

// Prepares op `i`; false (the error in error_) when the op cannot be simulated.
// Statuses are built only on the slow paths: this runs once per op.
bool Simulation::Prepare(int i, BufferPlanBuilder* plan) {
  const Op& op = *fn_.ops()[i];
  for (const auto& r : op.results()) {
    if (!QuickCheckValue(*r) && Fails(CheckValue(*r, &op))) return false;
  }
  if (!costs_.LookUpCost(op, &cost_[i])) {
    StatusOr<double> cost = costs_.OpCost(op);
    if (Fails(cost.status())) return false;
    cost_[i] = *cost;
  }
  flags_[i] = (IsCommunication(op.kind()) ? kCommFlag : 0) | (op.is_call() ? kCallFlag : 0);
  devices_begin_[i] = static_cast<int32_t>(devices_.size());
  for (const Value* v : op.inputs()) AddDevices(*v, i);
  for (const auto& r : op.results()) AddDevices(*r, i);
  if (static_cast<int32_t>(devices_.size()) == devices_begin_[i]) return !Fails(NoDevice(op));
  if (plan == nullptr) {
    // An expanded program's ops are copies of non-call ops (RunExpanded).
    if (op.is_call())
      return !Fails(InvalidArgument(op.loc()) << "an expanded program cannot copy a call");
    return true;
  }
  if (op.is_call()) return !Fails(plan->AddOp(i));
  plan->AddNonCallOp(i);
  return true;
}

// The cost of an Add of two tensors of `summed`'s type on its device: a
// running sum's op (ir/expanded_program.h), costed on a scratch op.
StatusOr<double> Simulation::SumCost(const Value& summed) {
  // The Add that ReplicateMicrobatches marks gemm_accumulate (ir/gemm_accumulation.h).
  if (IsFusedWeightGradient(summed)) return 0.0;
  Function scratch("sum");
  Value* a = scratch.AddParam("a", summed.type());
  Value* b = scratch.AddParam("b", summed.type());
  Op* add = scratch.AddOp(OpKind::kAdd, {a, b}, {}, std::vector<std::string>{"s"}, summed.loc());
  add->result(0)->set_type(summed.type());
  return costs_.OpCost(*add);
}

StatusOr<double> Simulation::CachedSumCost(int32_t summed,
                                           const std::vector<const Value*>& values) {
  auto it = sum_cost_.find(summed);
  if (it == sum_cost_.end()) {
    DISTIR_ASSIGN_OR_RETURN(double c, SumCost(*values[summed]));
    it = sum_cost_.emplace(summed, c).first;
  }
  return it->second;
}

// The expanded program's tables from the template's (Prepare filled them for
// fn_'s ops), its buffer plan, then the replay of Run.
StatusOr<SimulationResult> Simulation::RunExpanded() && {
  const ExpandedProgram& x = *expanded_;
  if (costs_.hardware().overlap.comm_stream)
    return Unimplemented() << "expanded programs are simulated with one stream per device";
  const std::vector<const Value*> values = ValuesById();
  std::vector<double> cost = std::move(cost_);
  std::vector<uint8_t> flags = std::move(flags_);
  std::vector<int32_t> begin = std::move(devices_begin_), devices = std::move(devices_);
  const int n = x.num_ops();
  cost_.assign(n, 0);
  flags_.assign(n, 0);
  devices_begin_.assign(n + 1, 0);
  devices_.clear();
  devices_.reserve(static_cast<size_t>(n) + static_cast<size_t>(n) / 4);
  const std::vector<char>& keep = x.keep_device;
  BufferPlanBuilder plan(fn_, x, values);
  for (int k = 0; k < n; ++k) {
    devices_begin_[k] = static_cast<int32_t>(devices_.size());
    const int32_t t = x.op[k];
    if (t == ExpandedProgram::kSum) {
      const int32_t summed = x.value_template[x.Results(k)[0]];
      DISTIR_ASSIGN_OR_RETURN(cost_[k], CachedSumCost(summed, values));
      AddDevices(*values[summed], -1 - k);
    } else {
      cost_[k] = cost[t];
      flags_[k] = flags[t];
      for (int32_t at = begin[t]; at < begin[t + 1]; ++at) {
        if (Keeps(keep, devices[at])) devices_.push_back(devices[at]);
      }
    }
    plan.AddExpandedOp(k);
  }
  DropDevicesLeftOut(keep);
  devices_begin_[n] = static_cast<int32_t>(devices_.size());
  BufferPlan buffers = std::move(plan).Finish();
  MemoryTracker memory(buffers, NumSlots(), options_.record_memory_timeline,
                       ExpandedBufferKinds(buffers, values));
  Replay(memory);
  Finish(memory);
  result_.num_ops = x.whole_num_ops >= 0 ? x.whole_num_ops : n;
  return std::move(result_);
}

std::vector<const Value*> Simulation::ValuesById() const {
  std::vector<const Value*> values(fn_.num_values(), nullptr);
  for (const auto& p : fn_.params()) values[p->id()] = p.get();
  for (const auto& op : fn_.ops()) {
    for (const auto& r : op->results()) values[r->id()] = r.get();
  }
  return values;
}

// The devices a program of copies leaves out are not simulated, nor reported.
void Simulation::DropDevicesLeftOut(const std::vector<char>& keep) {
  for (int32_t d = 0; d < NumSlots(); ++d) {
    if (!Keeps(keep, d)) present_[d] = 0;
  }
}

// The segments' kinds costed from the template's tables (Prepare filled them
// for fn_'s ops), composed per kind (segment_composition.h).
StatusOr<SimulationResult> Simulation::RunSegmented() && {
  const SegmentedProgram& x = *segmented_;
  if (costs_.hardware().overlap.comm_stream)
    return Unimplemented() << "segmented programs are simulated with one stream per device";
  if (options_.record_trace || options_.record_memory_timeline)
    return Unimplemented() << "segmented programs report no trace or memory timeline";
  const std::vector<const Value*> values = ValuesById();
  const std::vector<char>& keep = x.keep_device;
  KindOps ops;
  for (size_t o = 0; o < x.op.size(); ++o) {
    const int32_t t = x.op[o];
    if (t == SegmentedProgram::kSum) {
      const int32_t summed = x.summed[o];
      DISTIR_ASSIGN_OR_RETURN(const double c, CachedSumCost(summed, values));
      ops.cost.push_back(c);
      ops.communication.push_back(0);
      const int32_t d = value_device_[summed];
      if (d < 0) return Unimplemented() << "a running sum of a value on several devices";
      ops.devices.push_back(d);
    } else {
      ops.cost.push_back(cost_[t]);
      ops.communication.push_back((flags_[t] & kCommFlag) != 0 ? 1 : 0);
      for (int32_t at = devices_begin_[t]; at < devices_begin_[t + 1]; ++at) {
        if (Keeps(keep, devices_[at])) ops.devices.push_back(devices_[at]);
      }
    }
    ops.devices_begin.push_back(static_cast<int32_t>(ops.devices.size()));
  }
  DropDevicesLeftOut(keep);
  // Each buffer is one tensor leaf of its template value (the builder leaves
  // tuples to SimulateExpanded), of the kind of that value.
  MemoryTables tables;
  tables.device.assign(values.size(), 0);
  tables.bytes.assign(values.size(), -1);
  if (options_.memory_kind) tables.kind.assign(values.size(), 0);
  auto leaf = [&](int32_t v) -> Status {
    if (tables.bytes[v] >= 0) return Status::Ok();
    const Type& t = values[v]->type();
    if (value_device_[v] < 0 || t.is_tuple())
      return Unimplemented() << "a segmented program's buffer " << values[v]->Ref()
                             << " is not one tensor on one device";
    tables.device[v] = value_device_[v];
    tables.bytes[v] = t.SizeInBytes();
    if (options_.memory_kind)
      tables.kind[v] = static_cast<int8_t>(options_.memory_kind(*values[v]));
    return Status::Ok();
  };
  for (const auto& b : x.buffers) DISTIR_RETURN_IF_ERROR(leaf(b.value));
  for (const auto& b : x.local) DISTIR_RETURN_IF_ERROR(leaf(b.value));
  for (const auto& c : x.changes) DISTIR_RETURN_IF_ERROR(leaf(c.value));
  const ComposedTimes times = ReplayTimes(x, ops, NumSlots());
  RecordDevices(times.iteration_time_s, times.compute, times.communication, {});
  const ComposedMemory memory = ComposePeaks(x, tables, NumSlots());
  FinishTotals();
  for (DeviceResult& r : result_.devices) {
    const auto d = static_cast<size_t>(r.device.value());
    r.peak_memory_bytes = memory.peak[d];
    if (!memory.at_peak.empty()) {
      r.memory_at_peak = memory.at_peak[d];
      r.peak_memory_by_kind = memory.peak_by_kind[d];
    }
    if (result_.memory_capacity_bytes > 0 && r.peak_memory_bytes > result_.memory_capacity_bytes)
      result_.fits_in_memory = false;
  }
  result_.num_ops = x.whole_num_ops >= 0 ? x.whole_num_ops : x.num_ops();
  return std::move(result_);
}

// BufferKinds for an expanded program: a buffer is of the kind of the
// template value whose copy (or sum) allocates it.
std::vector<MemoryKind> Simulation::ExpandedBufferKinds(
    const BufferPlan& plan, std::span<const Value* const> values) const {
  if (!options_.memory_kind) return {};
  const ExpandedProgram& x = *expanded_;
  std::vector<MemoryKind> kinds(plan.buffers().size(), MemoryKind::kOther);
  // The kind of each template value, asked once: its K copies share it (the
  // classifier reads names, which costs more than the rest of this loop).
  std::vector<int8_t> of_template(values.size(), -1);
  auto kind_of = [&](int32_t t) {
    if (of_template[t] < 0) of_template[t] = static_cast<int8_t>(options_.memory_kind(*values[t]));
    return static_cast<MemoryKind>(of_template[t]);
  };
  auto classify = [&](int32_t v, int32_t lo, int32_t hi) {
    const MemoryKind kind = kind_of(x.value_template[v]);
    for (int32_t b : plan.buffers_of(v)) {
      if (b >= lo && b < hi) kinds[b] = kind;
    }
  };
  for (int32_t p : x.params) classify(p, 0, plan.fresh_begin(0));
  for (int k = 0; k < x.num_ops(); ++k) {
    if (plan.fresh_begin(k) == plan.fresh_end(k)) continue;
    for (int32_t r : x.Results(k)) classify(r, plan.fresh_begin(k), plan.fresh_end(k));
  }
  return kinds;
}

// The paper's semantics: an op starts when the latest of its devices is free
// and ends `cost` later on all of them.
void Simulation::Replay(MemoryTracker& memory) {
  int n = NumSlots();
  std::vector<double> clock(n, 0), compute(n, 0), communication(n, 0);
  if (options_.record_trace) result_.trace.reserve(devices_.size());
  if (options_.record_memory_timeline) {
    // At most two points per op and device (allocation at its start, frees at its end).
    std::vector<size_t> ops_on(n, 0);
    for (int32_t d : devices_) ++ops_on[d];
    for (int d = 0; d < n; ++d) memory.ReserveTimeline(d, 2 * ops_on[d] + 1);
  }
  int num_ops = static_cast<int>(cost_.size());
  for (int i = 0; i < num_ops; ++i) {
    const int32_t* first = devices_.data() + devices_begin_[i];
    const int32_t* last = devices_.data() + devices_begin_[i + 1];
    double start = 0;
    for (const int32_t* d = first; d != last; ++d) start = std::max(start, clock[*d]);
    double end = start + cost_[i];
    bool comm = (flags_[i] & kCommFlag) != 0;
    std::vector<double>& busy = comm ? communication : compute;
    TraceCategory category = comm ? TraceCategory::kCommunication : TraceCategory::kCompute;
    for (const int32_t* d = first; d != last; ++d) {
      clock[*d] = end;
      busy[*d] += cost_[i];
      if (options_.record_trace) result_.trace.push_back({DeviceId(*d), i, category, start, end});
    }
    bool call = (flags_[i] & kCallFlag) != 0;
    memory.OpStarts(i, call, start);
    memory.OpEnds(i, call, end);
  }
  double time = 0;
  for (double c : clock) time = std::max(time, c);
  RecordDevices(time, compute, communication, {});
}

// The iteration time and each present device's busy times; idle is what the
// busy time leaves of the iteration, counting overlapped time once.
void Simulation::RecordDevices(double time, const std::vector<double>& compute,
                               const std::vector<double>& communication,
                               const std::vector<double>& overlapped) {
  result_.iteration_time_s = time;
  for (int d = 0; d < NumSlots(); ++d) {
    if (!present_[d]) continue;
    DeviceResult r;
    r.device = DeviceId(d);
    r.compute_s = compute[d];
    r.communication_s = communication[d];
    if (!overlapped.empty()) r.overlapped_s = overlapped[d];
    r.idle_s = std::max(0.0, time - compute[d] - communication[d] + r.overlapped_s);
    result_.devices.push_back(std::move(r));
  }
}

// Dependences of each op for the two-stream schedule: the ops defining its
// inputs, and for an in-place optimizer (SGD, Adam: they overwrite a weight's
// buffer) the last communication op that read a buffer it overwrites, which
// must end first (write after read). Compute readers need no edge: they are
// earlier on the same device's compute stream.
void Simulation::BuildDeps(const BufferPlan& plan, std::vector<int32_t>& begin,
                           std::vector<int32_t>& deps) const {
  const int num_ops = static_cast<int>(cost_.size());
  std::vector<int32_t> def(fn_.num_values(), -1);
  std::vector<int32_t> comm_reader(plan.buffers().size(), -1);
  begin.assign(num_ops + 1, 0);
  for (int i = 0; i < num_ops; ++i) {
    const Op& op = *fn_.ops()[i];
    begin[i] = static_cast<int32_t>(deps.size());
    for (const Value* v : op.inputs()) {
      if (def[v->id()] >= 0) deps.push_back(def[v->id()]);
    }
    if (op.kind() == OpKind::kSGD || op.kind() == OpKind::kAdam) {
      for (const auto& r : op.results()) {
        for (int32_t b : plan.buffers_of(r->id())) {
          if (comm_reader[b] >= 0) deps.push_back(comm_reader[b]);
        }
      }
    }
    if ((flags_[i] & kCommFlag) != 0) {
      for (const Value* v : op.inputs()) {
        for (int32_t b : plan.buffers_of(v->id())) comm_reader[b] = i;
      }
    }
    for (const auto& r : op.results()) def[r->id()] = i;
  }
  begin[num_ops] = static_cast<int32_t>(deps.size());
}

// Two streams per device (stream_scheduler.h); memory follows the schedule,
// each buffer freed when its last reader ends (stream_memory.h).
void Simulation::ReplayOnStreams(const BufferPlan& plan, MemoryTracker& memory) {
  const int num_ops = static_cast<int>(cost_.size());
  std::vector<int32_t> deps_begin, deps;
  BuildDeps(plan, deps_begin, deps);
  std::vector<uint8_t> comm(num_ops);
  for (int i = 0; i < num_ops; ++i) comm[i] = (flags_[i] & kCommFlag) != 0;
  StreamOps ops{cost_, comm, devices_begin_, devices_, deps_begin, deps, NumSlots()};
  StreamSchedule schedule = ScheduleTwoStreams(ops, costs_.hardware().overlap);
  RecordStreams(schedule);
  ReplayMemoryOnStreams(fn_, plan, schedule.start, schedule.end, memory);
  result_.comm_stream = true;
  result_.single_stream_time_s = SingleStreamTime();
}

// Trace, busy times and overlap per device from the two-stream schedule.
void Simulation::RecordStreams(const StreamSchedule& schedule) {
  const int n = NumSlots();
  std::vector<double> compute(n, 0), communication(n, 0);
  if (options_.record_trace) result_.trace.reserve(devices_.size());
  double time = 0;
  for (int i = 0; i < static_cast<int>(cost_.size()); ++i) {
    const double start = schedule.start[i], end = schedule.end[i];
    const bool comm = (flags_[i] & kCommFlag) != 0;
    const TraceCategory category = comm ? TraceCategory::kCommunication : TraceCategory::kCompute;
    time = std::max(time, end);
    for (int32_t k = devices_begin_[i]; k < devices_begin_[i + 1]; ++k) {
      const int32_t d = devices_[k];
      (comm ? communication : compute)[d] += end - start;
      if (options_.record_trace) result_.trace.push_back({DeviceId(d), i, category, start, end});
    }
  }
  RecordDevices(time, compute, communication, schedule.overlapped_s);
}

// The clock rule of Replay() alone: the iteration time with one stream per device.
double Simulation::SingleStreamTime() const {
  std::vector<double> clock(NumSlots(), 0);
  double time = 0;
  for (int i = 0; i < static_cast<int>(cost_.size()); ++i) {
    double start = 0;
    for (int32_t k = devices_begin_[i]; k < devices_begin_[i + 1]; ++k) {
      start = std::max(start, clock[devices_[k]]);
    }
    const double end = start + cost_[i];
    for (int32_t k = devices_begin_[i]; k < devices_begin_[i + 1]; ++k) clock[devices_[k]] = end;
    time = std::max(time, end);
  }
  return time;
}

// A buffer's kind is that of the value that allocates it: a parameter, or
// the op result for which the buffer is fresh (views and in-place updates
// alias a buffer already classified).
std::vector<MemoryKind> Simulation::BufferKinds(const BufferPlan& plan) const {
  if (!options_.memory_kind) return {};
  std::vector<MemoryKind> kinds(plan.buffers().size(), MemoryKind::kOther);
  for (const auto& p : fn_.params()) {
    const MemoryKind kind = options_.memory_kind(*p);
    for (int32_t b : plan.buffers_of(p->id())) kinds[b] = kind;
  }
  for (int i = 0; i < plan.num_ops(); ++i) {
    if (plan.fresh_begin(i) == plan.fresh_end(i)) continue;
    for (const auto& r : fn_.ops()[i]->results()) {
      const MemoryKind kind = options_.memory_kind(*r);
      for (int32_t b : plan.buffers_of(r->id())) {
        if (b >= plan.fresh_begin(i) && b < plan.fresh_end(i)) kinds[b] = kind;
      }
    }
  }
  return kinds;
}

// What follows from the iteration time: the batch, throughput, op count and capacity.
void Simulation::FinishTotals() {
  double time = result_.iteration_time_s;
  if (!result_.comm_stream) result_.single_stream_time_s = time;
  result_.batch_size = options_.batch_size.value_or(DefaultBatch(fn_));
  result_.throughput = time > 0 ? static_cast<double>(result_.batch_size) / time : 0;
  result_.num_ops = static_cast<int64_t>(fn_.ops().size());
  result_.memory_capacity_bytes = costs_.hardware().device.memory_capacity;
}

void Simulation::Finish(MemoryTracker& memory) {
  FinishTotals();
  for (DeviceResult& r : result_.devices) {
    int d = r.device.value();
    r.peak_memory_bytes = memory.peak(d);
    if (memory.has_kinds()) {
      r.memory_at_peak = memory.at_peak_by_kind(d);
      r.peak_memory_by_kind = memory.peak_by_kind(d);
    }
    r.memory_timeline = memory.TakeTimeline(d);
    if (result_.memory_capacity_bytes > 0 && r.peak_memory_bytes > result_.memory_capacity_bytes) {
      result_.fits_in_memory = false;
    }
  }
}

}  // namespace

std::string_view TraceCategoryName(TraceCategory category) {
  return category == TraceCategory::kCommunication ? "communication" : "compute";
}

int64_t SimulationResult::PeakMemoryBytes() const {
  int64_t peak = 0;
  for (const DeviceResult& d : devices) peak = std::max(peak, d.peak_memory_bytes);
  return peak;
}

StatusOr<SimulationResult> Simulate(const Module& module, const Function& fn,
                                    const HardwareProfile& hw, const SimulateOptions& options) {
  CostModel costs(hw, &module);
  return Simulate(module, fn, costs, options);
}

StatusOr<SimulationResult> Simulate(const Module& module, const Function& fn, CostModel& costs,
                                    const SimulateOptions& options) {
  return Simulation(module, fn, costs, options).Run();
}

StatusOr<SimulationResult> SimulateExpanded(const Module& module, const Function& fn,
                                            const ExpandedProgram& program, CostModel& costs,
                                            const SimulateOptions& options) {
  return Simulation(module, fn, costs, options, &program).Run();
}

StatusOr<SimulationResult> SimulateSegmented(const Module& module, const Function& fn,
                                             const SegmentedProgram& program, CostModel& costs,
                                             const SimulateOptions& options) {
  return Simulation(module, fn, costs, options, nullptr, &program).Run();
}

void RetainFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);              // big blocks come from the heap ...
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // ... which keeps up to 1 GiB free at its top
  mallopt(M_TOP_PAD, 64 << 20);        // and grows 64 MiB at a time
#endif
}

std::string TraceLabel(const Function& fn, const TraceEvent& event) {
  const Op& op = *fn.ops()[event.op];
  std::string label = op.Name();
  if (op.num_results() == 0) return label;
  label += ' ';
  label += op.result(0)->Ref();
  return label;
}

}  // namespace distir::sim
