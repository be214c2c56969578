#include "lowering/rank_program.h"

#include <sstream>
#include <string>

#include "support/check.h"

namespace distir {
namespace {

std::string ListDevices(std::span<const DeviceId> devices) {
  std::ostringstream os;
  for (size_t i = 0; i < devices.size(); ++i) os << (i > 0 ? ", " : "") << devices[i];
  return os.str();
}

// Builds every rank's function in one pass over the global function. Each
// global value lives on exactly one device, so one side table maps it to its
// local value (and its rank) for all ranks at once.
class Projector {
 public:
  Projector(const Placement& placement, const std::string& prefix)
      : placement_(placement), fn_(placement.function()), prefix_(prefix) {}

  StatusOr<std::vector<RankProgram>> Run();

 private:
  int RankOf(DeviceId d) const { return rank_of_device_[d.value()]; }
  Status CheckParams() const;
  void AddParams();
  Status ProjectOp(const Op& op);
  void CopyOp(const Op& op, int rank);
  void ProjectSend(const Op& op);
  void ProjectCollective(const Op& op);
  void AddLocalOp(int rank, OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                  const Value* result, const Type& token_type, const Op& from);
  void Bind(const Value& global, Value* local, int rank);
  void SetReturns();

  const Placement& placement_;
  const Function& fn_;
  const std::string& prefix_;
  std::vector<RankProgram> ranks_;
  std::vector<int> rank_of_device_;  // device id -> index in ranks_, -1 for none
  std::vector<Value*> local_;        // global value id -> its local value
  std::vector<int> owner_;           // global value id -> index in ranks_
  std::vector<int> input_on_;        // scratch per rank: input index of a collective
  std::vector<int> result_on_;       // scratch per rank: result index of a collective
};

void Projector::Bind(const Value& global, Value* local, int rank) {
  local_[global.id()] = local;
  owner_[global.id()] = rank;
  RankProgram& r = ranks_[rank];
  if (static_cast<int>(r.origin.size()) <= local->id()) r.origin.resize(local->id() + 1, nullptr);
  r.origin[local->id()] = &global;
}

Status Projector::CheckParams() const {
  for (const auto& p : fn_.params()) {
    std::vector<DeviceId> devices = p->type().Devices();
    if (devices.size() == 1) continue;
    return InvalidArgument(p->loc())
           << "parameter " << p->Ref() << " of @" << fn_.name()
           << (devices.empty() ? " has no device" : " spans devices " + ListDevices(devices))
           << "; lowering needs every parameter on exactly one device";
  }
  return Status::Ok();
}

// REQUIRES: CheckParams() passed.
void Projector::AddParams() {
  for (const auto& p : fn_.params()) {
    const int rank = RankOf(p->type().Devices()[0]);
    Value* local = ranks_[rank].function->AddParam(p->name(), p->type(), p->loc());
    Bind(*p, local, rank);
  }
}

void Projector::CopyOp(const Op& op, int rank) {
  std::vector<Value*> inputs;
  inputs.reserve(op.inputs().size());
  for (const Value* v : op.inputs()) {
    DISTIR_CHECK(owner_[v->id()] == rank) << "input " << v->Ref() << " of " << op.Name()
                                          << " lives on another rank";
    inputs.push_back(local_[v->id()]);
  }
  std::vector<std::string> names;
  names.reserve(op.results().size());
  for (const auto& r : op.results()) names.push_back(r->name());
  Op* copy =
      ranks_[rank].function->AddOp(op.kind(), std::move(inputs), op.attrs(), std::move(names),
                                   op.loc(), op.is_call() ? op.callee() : std::string());
  for (int i = 0; i < op.num_results(); ++i) {
    copy->result(i)->set_type(op.result(i)->type());
    copy->result(i)->set_loc(op.result(i)->loc());
    Bind(*op.result(i), copy->result(i), rank);
  }
}

// One per-rank op with one result: `result`'s name, type and location, or an
// anonymous token of `token_type` when `result` is null.
void Projector::AddLocalOp(int rank, OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                           const Value* result, const Type& token_type, const Op& from) {
  Function& fn = *ranks_[rank].function;
  Op* op = fn.AddOp(kind, std::move(inputs), std::move(attrs),
                    {result != nullptr ? result->name() : std::string()}, from.loc());
  Value* r = op->result(0);
  if (result == nullptr) {
    r->set_type(token_type);
    r->set_loc(from.loc());
    return;
  }
  r->set_type(result->type());
  r->set_loc(result->loc());
  Bind(*result, r, rank);
}

void Projector::ProjectSend(const Op& op) {
  const Value& x = *op.input(0);
  const Value& y = *op.result(0);
  const DeviceId from = x.type().Devices()[0];
  const DeviceId to = op.FindAttr("device")->AsDevice();
  AddLocalOp(owner_[x.id()], OpKind::kSendTo, {local_[x.id()]}, {{"device", to}}, nullptr,
             x.type(), op);
  AddLocalOp(RankOf(to), OpKind::kRecvFrom, {}, {{"device", from}}, &y, Type(), op);
}

// Every participant gets one Collective naming the group and its position.
void Projector::ProjectCollective(const Op& op) {
  std::vector<DeviceId> group;
  for (int i = 0; i < op.num_inputs(); ++i) {
    const DeviceId d = op.input(i)->type().device();
    input_on_[RankOf(d)] = i;
    group.push_back(d);
  }
  for (int i = 0; i < op.num_results(); ++i) {
    const DeviceId d = op.result(i)->type().device();
    if (input_on_[RankOf(d)] < 0 && result_on_[RankOf(d)] < 0) group.push_back(d);
    result_on_[RankOf(d)] = i;
  }
  AttrMap attrs = op.attrs();
  attrs["kind"] = std::string(OpKindName(op.kind()));
  attrs["group"] = group;
  for (size_t pos = 0; pos < group.size(); ++pos) {
    const int rank = RankOf(group[pos]);
    const int in = input_on_[rank];
    const int out = result_on_[rank];
    attrs["rank"] = static_cast<int64_t>(pos);
    std::vector<Value*> inputs;
    if (in >= 0) inputs.push_back(local_[op.input(in)->id()]);
    const Value* result = out >= 0 ? op.result(out) : nullptr;
    const Type token = in >= 0 ? op.input(in)->type() : Type();
    AddLocalOp(rank, OpKind::kCollective, std::move(inputs), attrs, result, token, op);
    input_on_[rank] = -1;
    result_on_[rank] = -1;
  }
}

Status Projector::ProjectOp(const Op& op) {
  std::span<const DeviceId> devices = placement_.devices(op);
  if (devices.empty()) {
    return InvalidArgument(op.loc())
           << op.Name() << " has no device: none of its inputs, results or attributes is "
           << "placed, so no rank would run it";
  }
  if (const Op* comm = placement_.CalleeCommunication(op); comm != nullptr) {
    return Unimplemented(op.loc())
           << "call of @" << op.callee() << " communicates (" << comm->Name() << " at "
           << comm->loc().ToString() << "); lowering splits only the lowered function's "
           << "communication, so inline @" << op.callee() << " first";
  }
  const bool global_comm =
      !op.is_call() && IsCommunication(op.kind()) && !IsPerRankCommunication(op.kind());
  if (global_comm && op.kind() == OpKind::kSend) {
    ProjectSend(op);
    return Status::Ok();
  }
  if (global_comm && op.FindAttr("participants") != nullptr) {
    return Unimplemented(op.loc()) << op.Name()
                                   << " names participants it does not hold (a part of a "
                                      "program, for the simulator): it cannot be lowered";
  }
  if (global_comm) {
    ProjectCollective(op);
    return Status::Ok();
  }
  if (devices.size() > 1) {
    return InvalidArgument(op.loc())
           << op.Name() << " runs on devices " << ListDevices(devices)
           << "; lowering needs every op other than communication on one device";
  }
  CopyOp(op, RankOf(devices[0]));
  return Status::Ok();
}

void Projector::SetReturns() {
  std::vector<std::vector<Value*>> returns(ranks_.size());
  for (const Value* v : fn_.returns()) returns[owner_[v->id()]].push_back(local_[v->id()]);
  for (size_t i = 0; i < ranks_.size(); ++i) {
    ranks_[i].function->SetReturns(std::move(returns[i]), fn_.return_loc());
    ranks_[i].origin.resize(ranks_[i].function->num_values(), nullptr);
  }
}

StatusOr<std::vector<RankProgram>> Projector::Run() {
  DISTIR_RETURN_IF_ERROR(CheckParams());
  const std::vector<DeviceId>& devices = placement_.all_devices();
  if (devices.empty()) {
    return InvalidArgument(fn_.loc()) << "@" << fn_.name() << " places nothing on a device, "
                                      << "so it has no ranks to lower to";
  }
  rank_of_device_.assign(devices.back().value() + 1, -1);
  for (DeviceId d : devices) {
    rank_of_device_[d.value()] = static_cast<int>(ranks_.size());
    RankProgram r;
    r.device = d;
    r.function = std::make_unique<Function>(prefix_ + d.ToString());
    r.function->set_loc(fn_.loc());
    ranks_.push_back(std::move(r));
  }
  local_.assign(fn_.num_values(), nullptr);
  owner_.assign(fn_.num_values(), -1);
  input_on_.assign(ranks_.size(), -1);
  result_on_.assign(ranks_.size(), -1);
  AddParams();
  for (const auto& op : fn_.ops()) DISTIR_RETURN_IF_ERROR(ProjectOp(*op));
  SetReturns();
  return std::move(ranks_);
}

}  // namespace

StatusOr<std::vector<RankProgram>> ProjectToRanks(const Placement& placement,
                                                  const std::string& prefix) {
  return Projector(placement, prefix).Run();
}

}  // namespace distir
