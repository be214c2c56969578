#include "sim/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ir/call_graph.h"
#include "ir/gemm_accumulation.h"
#include "sim/collective_cost_rules.h"
#include "support/checked_math.h"

namespace distir::sim {
namespace {

// Key tags, kept apart from dtypes and extents so that two different type
// sequences never encode alike.
constexpr int64_t kTagTensor = -101;
constexpr int64_t kTagScalar = -102;
constexpr int64_t kTagTuple = -103;
constexpr int64_t kTagResults = -104;
constexpr int64_t kTagGemmAccumulation = -105;
constexpr int64_t kTagCausal = -106;

// A causal attention kernel does half the work of an unmasked one of the same
// types, so the mask is part of the key.
bool IsCausalAttention(const Op& op) {
  return (op.kind() == OpKind::kFlashAttention || op.kind() == OpKind::kFlashAttentionGrad) &&
         op.GetInt("causal", 0) != 0;
}

// Appends `type` to `key`; false when it is unknown or has a dynamic extent.
// Devices enter the key only when they matter (collectives: the topology).
bool AppendType(const Type& type, bool with_device, std::vector<int64_t>& key) {
  switch (type.kind()) {
    case TypeKind::kUnknown:
      return false;
    case TypeKind::kScalar:
      key.push_back(kTagScalar);
      key.push_back(static_cast<int64_t>(type.dtype()));
      if (with_device) key.push_back(type.device().has_value() ? type.device().value() : -1);
      return true;
    case TypeKind::kTensor: {
      const Dims& shape = type.shape();
      key.push_back(kTagTensor);
      key.push_back(static_cast<int64_t>(type.dtype()));
      if (with_device) key.push_back(type.device().has_value() ? type.device().value() : -1);
      key.push_back(static_cast<int64_t>(shape.size()));
      for (int64_t d : shape) {
        if (d == kDynamicDim) return false;
        key.push_back(d);
      }
      return true;
    }
    case TypeKind::kTuple:
      key.push_back(kTagTuple);
      key.push_back(static_cast<int64_t>(type.elements().size()));
      for (const Type& e : type.elements()) {
        if (!AppendType(e, with_device, key)) return false;
      }
      return true;
  }
  return false;
}

// Every device the types of `op` mention, inputs first, in op order, distinct:
// the participants of a collective (Send: {src, dst}; rooted ops include the
// root); those of attribute `participants` where the op has it.
std::vector<DeviceId> Participants(const Op& op) {
  // A collective of a part of a program names every participant (docs/ir.md).
  if (const Attribute* all = op.FindAttr("participants")) return all->AsDevices();
  std::vector<DeviceId> out;
  auto add = [&out](const Type& t) {
    for (DeviceId d : t.Devices()) {
      if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    }
  };
  for (const Value* v : op.inputs()) add(v->type());
  for (const auto& r : op.results()) add(r->type());
  return out;
}

// The rules add up an op's input and result bytes, and count some twice, in
// int64: together they must stay below 2^62.
constexpr int64_t kMaxOpBytes = int64_t{1} << 62;

Status CheckOpBytes(const Op& op) {
  std::optional<int64_t> total = 0;
  auto add = [&total](const Type& t) {
    const std::optional<int64_t> bytes = CheckedSizeInBytes(t);
    total = total && bytes ? CheckedAdd(*total, *bytes) : std::nullopt;
  };
  for (const Value* v : op.inputs()) add(v->type());
  for (const auto& r : op.results()) add(r->type());
  if (total && *total <= kMaxOpBytes) return Status::Ok();
  return ResourceExhausted(op.loc())
         << "cannot cost " << op.Name() << ": its inputs and results take more than 2^62 bytes";
}

Status CheckParticipants(const Op& op, const HardwareProfile& hw,
                         const std::vector<DeviceId>& participants) {
  std::optional<int64_t> n = hw.NumDevices();
  for (DeviceId d : participants) {
    if (!n.has_value() || d.value() < *n) continue;
    return InvalidArgument(op.loc()) << op.Name() << " uses device " << d
                                     << ", but hardware profile '" << hw.name << "' has "
                                     << *n << " devices (d0 to d" << (*n - 1) << ")";
  }
  return Status::Ok();
}

// The nccl-tests byte convention of each collective (collective_cost_rules.h):
// which buffer's size is "S".
enum class SizeOf { kInput, kResult };

template <CollectiveKind kKind, SizeOf kSize>
StatusOr<double> CollectiveRule(const Op& op, const HardwareProfile& hw) {
  std::vector<DeviceId> participants = Participants(op);
  if (participants.empty() ||
      participants.size() < static_cast<size_t>(std::max(op.num_inputs(), op.num_results()))) {
    return InvalidArgument(op.loc()) << op.Name()
                                     << " needs its inputs and results placed on distinct devices";
  }
  DISTIR_RETURN_IF_ERROR(CheckParticipants(op, hw, participants));
  // CostModel checked that every input and result size fits (CheckOpBytes).
  int64_t bytes = kSize == SizeOf::kInput ? op.input(0)->type().SizeInBytes()
                                          : op.result(0)->type().SizeInBytes();
  return CollectiveTime(hw, kKind, participants, bytes);
}

}  // namespace

std::optional<int64_t> CheckedSizeInBytes(const Type& type) {
  if (type.is_unknown()) return 0;
  std::optional<int64_t> bytes = 0;
  if (type.is_tuple()) {
    for (const Type& e : type.elements()) {
      const std::optional<int64_t> one = CheckedSizeInBytes(e);
      bytes = bytes && one ? CheckedAdd(*bytes, *one) : std::nullopt;
    }
    return bytes;
  }
  bytes = ByteWidth(type.dtype());
  if (type.is_tensor()) {
    for (int64_t d : type.shape()) bytes = bytes ? CheckedMul(*bytes, d) : std::nullopt;
  }
  return bytes;
}

void CostRuleTable::Register(OpKind kind, CostRule rule) {
  DISTIR_CHECK(kind != OpKind::kCall && rules_[static_cast<int>(kind)] == nullptr)
      << "cost rule registered twice for " << OpKindName(kind);
  rules_[static_cast<int>(kind)] = rule;
}

void RegisterCommunicationCostRules(CostRuleTable& table) {
  using K = CollectiveKind;
  table.Register(OpKind::kSend, CollectiveRule<K::kSend, SizeOf::kInput>);
  table.Register(OpKind::kAllReduce, CollectiveRule<K::kAllReduce, SizeOf::kInput>);
  table.Register(OpKind::kAllGather, CollectiveRule<K::kAllGather, SizeOf::kResult>);
  table.Register(OpKind::kReduceScatter, CollectiveRule<K::kReduceScatter, SizeOf::kInput>);
  table.Register(OpKind::kAllToAll, CollectiveRule<K::kAllToAll, SizeOf::kInput>);
  table.Register(OpKind::kBroadcast, CollectiveRule<K::kBroadcast, SizeOf::kInput>);
  table.Register(OpKind::kScatter, CollectiveRule<K::kScatter, SizeOf::kInput>);
  table.Register(OpKind::kMPIGather, CollectiveRule<K::kGather, SizeOf::kResult>);
  table.Register(OpKind::kReduce, CollectiveRule<K::kReduce, SizeOf::kInput>);
  table.Register(OpKind::kSendTo, PerRankCommunicationTime);
  table.Register(OpKind::kRecvFrom, PerRankCommunicationTime);
  table.Register(OpKind::kCollective, PerRankCommunicationTime);
}

double RooflineTime(const DeviceSpec& device, double bytes, double flops) {
  double memory = device.dram_bandwidth > 0 ? bytes / device.dram_bandwidth : 0;
  double compute = device.vector_flops > 0 ? flops / device.vector_flops : 0;
  return std::max(memory, compute) + device.kernel_launch_overhead;
}

double MatMulKernelTime(const DeviceSpec& device, DType dtype, double flops, double bytes) {
  if (const MatMulRegression* r = device.RegressionFor(dtype)) {
    return r->intercept_s + r->per_flop_s * flops + r->per_byte_s * bytes;
  }
  double peak = device.MatrixFlops(dtype);
  double compute = peak > 0 ? flops / peak : 0;
  double memory = device.dram_bandwidth > 0 ? bytes / device.dram_bandwidth : 0;
  return std::max(compute, memory) + device.kernel_launch_overhead;
}

size_t CostModel::KeyHash::operator()(const std::vector<int64_t>& key) const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int64_t v : key) {
    h ^= static_cast<uint64_t>(v);
    h *= 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  return static_cast<size_t>(h);
}

CostModel::CostModel(const HardwareProfile& hw, const Module* module) : hw_(hw), module_(module) {
  RegisterComputeCostRules(rules_);
  RegisterCommunicationCostRules(rules_);
  key_.reserve(64);
}

bool CostModel::BuildKey(const Op& op) {
  key_.clear();
  key_.push_back(static_cast<int64_t>(op.kind()));
  if (op.is_call()) {
    const Function* callee = module_ != nullptr ? module_->Lookup(op.callee()) : nullptr;
    key_.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(callee)));
  }
  AppendPerRankCostKey(op, key_);
  if (IsGemmAccumulation(op)) key_.push_back(kTagGemmAccumulation);
  if (IsCausalAttention(op)) key_.push_back(kTagCausal);
  bool with_device = IsCommunication(op.kind());
  for (const Value* v : op.inputs()) {
    if (!AppendType(v->type(), with_device, key_)) return false;
  }
  key_.push_back(kTagResults);
  for (const auto& r : op.results()) {
    if (!AppendType(r->type(), with_device, key_)) return false;
  }
  return true;
}

Status CostModel::TypeError(const Op& op) const {
  auto describe = [&op](const Value& v, const char* role) -> Status {
    if (v.type().is_unknown()) {
      return InvalidArgument(op.loc()) << "cannot cost " << op.Name() << ": the type of " << role
                                       << " " << v.Ref() << " is not inferred";
    }
    return InvalidArgument(op.loc()) << "cannot cost " << op.Name() << ": the cost model needs "
                                     << "static shapes, but " << role << " " << v.Ref()
                                     << " has type " << v.type().ToString();
  };
  for (const Value* v : op.inputs()) {
    if (!v->type().HasStaticShape()) return describe(*v, "input");
  }
  for (const auto& r : op.results()) {
    if (!r->type().HasStaticShape()) return describe(*r, "result");
  }
  return Internal(op.loc()) << "cannot cost " << op.Name() << ": malformed types";
}

bool CostModel::LookUpCost(const Op& op, double* cost) {
  if (!BuildKey(op)) return false;
  LastLookup& last = last_[static_cast<int>(op.kind())];
  if (last.key != key_) {
    auto it = memo_.find(key_);
    if (it == memo_.end()) return false;
    last.key.assign(key_.begin(), key_.end());
    last.cost = it->second;
  }
  ++hits_;
  *cost = last.cost;
  return true;
}

StatusOr<double> CostModel::OpCost(const Op& op) {
  if (!BuildKey(op)) return TypeError(op);
  LastLookup& last = last_[static_cast<int>(op.kind())];
  if (last.key == key_) {
    ++hits_;
    return last.cost;
  }
  auto it = memo_.find(key_);
  if (it != memo_.end()) {
    ++hits_;
    last.key.assign(key_.begin(), key_.end());
    last.cost = it->second;
    return it->second;
  }
  // Evaluating a call costs the callee's ops, which reuses key_ and last_: keep ours.
  std::vector<int64_t> key = key_;
  DISTIR_ASSIGN_OR_RETURN(double cost, EvaluateFinite(op));
  LastLookup& last_now = last_[static_cast<int>(op.kind())];
  last_now.key = key;
  last_now.cost = cost;
  memo_.emplace(std::move(key), cost);
  return cost;
}

StatusOr<double> CostModel::EvaluateFinite(const Op& op) {
  DISTIR_ASSIGN_OR_RETURN(double cost, Evaluate(op));
  if (std::isfinite(cost)) return cost;
  return ResourceExhausted(op.loc())
         << "cannot cost " << op.Name() << ": its time is not finite (" << cost
         << " s); the hardware profile's rates are too low or its overheads too high for it";
}

StatusOr<double> CostModel::Evaluate(const Op& op) {
  if (op.is_call()) return CallCost(op);
  // Its addition runs in the epilogue of the GEMM that computes its addend.
  if (IsGemmAccumulation(op)) return 0.0;
  DISTIR_RETURN_IF_ERROR(CheckOpBytes(op));
  CostRule rule = rules_.Find(op.kind());
  if (rule == nullptr) {
    return Unimplemented(op.loc()) << "no rule for op " << op.Name() << " in domain 'cost'";
  }
  return rule(op, hw_);
}

StatusOr<double> CostModel::CallCost(const Op& op) {
  const Function* callee = module_ != nullptr ? module_->Lookup(op.callee()) : nullptr;
  if (callee == nullptr) {
    return NotFound(op.loc()) << "cannot cost call of undefined function @" << op.callee();
  }
  if (!callee->IsDeviceGeneric()) {
    return Unimplemented(op.loc())
           << "cannot cost call of @" << op.callee()
           << ": the simulator supports calls of device-generic functions only, and its "
              "parameters carry devices";
  }
  auto it = callee_cost_.find(callee);
  if (it != callee_cost_.end()) return it->second;
  Status s = CostCallees(*callee);
  if (!s.ok()) {
    s.AddNote("in the call of @" + op.callee() + " at " + op.loc().ToString());
    return s;
  }
  return callee_cost_.at(callee);
}

// Costs `callee` and the callees below it bottom-up, so that each call met on
// the way finds its callee costed: native stack depth stays constant however
// deep the calls nest.
Status CostModel::CostCallees(const Function& callee) {
  auto known = [this](const Function& f) { return callee_cost_.count(&f) != 0; };
  for (const Function* f : CalleesBottomUp(*module_, callee, known)) {
    // A call of a function with devices is reported by its caller's CallCost.
    if (!f->IsDeviceGeneric()) continue;
    StatusOr<double> cost = FunctionCost(*f);
    if (!cost.ok()) {
      Status s = std::move(cost).status();
      if (f != &callee) s.AddNote("in @" + f->name() + ", which @" + callee.name() + " calls");
      return s;
    }
    callee_cost_.emplace(f, *cost);
  }
  return Status::Ok();
}

StatusOr<double> CostModel::FunctionCost(const Function& fn) {
  double total = 0;
  for (const auto& op : fn.ops()) {
    DISTIR_ASSIGN_OR_RETURN(double cost, OpCost(*op));
    total += cost;
  }
  return total;
}

}  // namespace distir::sim
