#include "lowering/placement.h"

#include <algorithm>
#include <unordered_map>

namespace distir {
namespace {

// What a call of a function needs to know about it: every device it touches
// and its first communication op, through nested calls.
struct FunctionSummary {
  std::vector<DeviceId> devices;
  const Op* communication = nullptr;
};

using Summaries = std::unordered_map<const Function*, FunctionSummary>;

void SortUnique(std::vector<DeviceId>& devices) {
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
}

void AddTypeDevices(const Type& type, std::vector<DeviceId>& out) {
  for (DeviceId d : type.Devices()) out.push_back(d);
}

Status UnknownType(const Op& op, const Value& v) {
  return FailedPrecondition(op.loc()) << "type of " << v.Ref() << " (of " << op.Name()
                                      << ") is unknown; lowering needs inferred types";
}

// Destinations named by attributes: Send's target, a rooted collective's root,
// Broadcast's and Scatter's receivers, a Constant's device. Per-rank ops are
// left out: their attributes name peers, which run their own halves.
void AddAttrDevices(const Op& op, std::vector<DeviceId>& out) {
  if (op.is_call() || IsPerRankCommunication(op.kind())) return;
  if (const Attribute* d = op.FindAttr("device"); d != nullptr && d->type() == AttrType::kDevice) {
    out.push_back(d->AsDevice());
  }
  if (const Attribute* d = op.FindAttr("devices");
      d != nullptr && d->type() == AttrType::kDevices) {
    for (DeviceId x : d->AsDevices()) out.push_back(x);
  }
}

// The devices `op` runs on, appended to `out` (unsorted), and the communication
// it reaches.
Status PlaceOp(const Module& module, const Summaries& summaries, const Op& op,
               std::vector<DeviceId>& out, const Op*& communication) {
  for (const Value* v : op.inputs()) {
    if (v->type().is_unknown()) return UnknownType(op, *v);
    AddTypeDevices(v->type(), out);
  }
  for (const auto& r : op.results()) {
    if (r->type().is_unknown()) return UnknownType(op, *r);
    AddTypeDevices(r->type(), out);
  }
  AddAttrDevices(op, out);
  communication = nullptr;
  if (!op.is_call()) {
    if (IsCommunication(op.kind())) communication = &op;
    return Status::Ok();
  }
  const Function* callee = module.Lookup(op.callee());
  auto it = callee == nullptr ? summaries.end() : summaries.find(callee);
  if (it == summaries.end()) return Status::Ok();
  communication = it->second.communication;
  // A device-generic callee runs on its arguments' device, already added.
  if (!callee->IsDeviceGeneric()) out.insert(out.end(), it->second.devices.begin(),
                                             it->second.devices.end());
  return Status::Ok();
}

// Summaries of the functions defined before `fn` (the only ones it may call),
// in module order so that every callee is summarized before its callers.
StatusOr<Summaries> SummarizeCallees(const Module& module, const Function& fn) {
  Summaries summaries;
  for (const auto& f : module.functions()) {
    if (f.get() == &fn) break;
    FunctionSummary s;
    for (const auto& p : f->params()) AddTypeDevices(p->type(), s.devices);
    for (const auto& op : f->ops()) {
      const Op* comm = nullptr;
      DISTIR_RETURN_IF_ERROR(PlaceOp(module, summaries, *op, s.devices, comm));
      if (s.communication == nullptr) s.communication = comm;
    }
    SortUnique(s.devices);
    summaries.emplace(f.get(), std::move(s));
  }
  return summaries;
}

}  // namespace

bool IsPerRankCommunication(OpKind kind) {
  return kind == OpKind::kSendTo || kind == OpKind::kRecvFrom || kind == OpKind::kCollective;
}

std::span<const DeviceId> Placement::devices(const Op& op) const {
  const auto b = static_cast<size_t>(begin_[op.id()]);
  const auto e = static_cast<size_t>(begin_[op.id() + 1]);
  return std::span<const DeviceId>(devices_.data() + b, e - b);
}

StatusOr<Placement> ComputePlacement(const Module& module, const Function& fn) {
  DISTIR_ASSIGN_OR_RETURN(Summaries summaries, SummarizeCallees(module, fn));
  Placement p;
  p.fn_ = &fn;
  p.begin_.reserve(fn.ops().size() + 1);
  p.callee_comm_.reserve(fn.ops().size());
  p.devices_.reserve(fn.ops().size());
  std::vector<DeviceId> scratch;
  for (const auto& op : fn.ops()) {
    scratch.clear();
    const Op* comm = nullptr;
    DISTIR_RETURN_IF_ERROR(PlaceOp(module, summaries, *op, scratch, comm));
    SortUnique(scratch);
    p.begin_.push_back(static_cast<int>(p.devices_.size()));
    p.devices_.insert(p.devices_.end(), scratch.begin(), scratch.end());
    p.callee_comm_.push_back(op->is_call() ? comm : nullptr);
  }
  p.begin_.push_back(static_cast<int>(p.devices_.size()));
  p.all_devices_ = p.devices_;
  for (const auto& param : fn.params()) AddTypeDevices(param->type(), p.all_devices_);
  SortUnique(p.all_devices_);
  return p;
}

}  // namespace distir
