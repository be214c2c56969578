#include "ir/verifier.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace distir {
namespace {

// Per-function state: which values are defined so far (SSA and def-before-use).
class FunctionVerifier {
 public:
  /// `positions` (optional): each function of `module` by its index, so that a
  /// call's order check is a lookup, not a walk over the module (VerifyModule
  /// of a 100,000-function call chain spent 86 % of its time walking).
  FunctionVerifier(const Function& fn, const Module* module,
                   const std::unordered_map<const Function*, size_t>* positions = nullptr)
      : fn_(fn), module_(module), positions_(positions) {}

  Status Run();

 private:
  Status CheckUse(const Op& op, const Value* v) const;
  Status CheckAttrs(const Op& op) const;
  Status CheckArity(const Op& op) const;
  Status CheckCall(const Op& op) const;
  Status CheckDevices(const Op& op) const;
  Status CheckCommunication(const Op& op) const;
  Status CheckGeneric(const Op& op) const;
  Status CheckValueSharding(const Value& v) const;
  Status CheckShardingOf(const Sharding& sharding, const Type& type, const std::string& what) const;
  Status CheckMeshOp(const Op& op) const;
  void Define(const Value* v);

  bool CalleeComesFirst(const Function& callee) const;

  const Function& fn_;
  const Module* module_;
  const std::unordered_map<const Function*, size_t>* positions_;
  std::vector<const Value*> defined_;  // by value id; null until defined
};

std::string Plural(int n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string ArityText(int lo, int hi, const char* noun) {
  if (hi == kVariadic) return "at least " + Plural(lo, noun);
  if (lo == hi) return Plural(lo, noun);
  return std::to_string(lo) + " to " + Plural(hi, noun);
}

void FunctionVerifier::Define(const Value* v) {
  if (v->id() >= static_cast<int>(defined_.size())) defined_.resize(v->id() + 1, nullptr);
  defined_[v->id()] = v;
}

Status FunctionVerifier::CheckUse(const Op& op, const Value* v) const {
  bool ok = v->id() < static_cast<int>(defined_.size()) && defined_[v->id()] == v;
  if (ok) return Status::Ok();
  return InvalidArgument(op.loc()) << "value " << v->Ref() << " used by " << op.Name()
                                   << " is not defined before it in @" << fn_.name();
}

Status FunctionVerifier::CheckArity(const Op& op) const {
  const OpInfo& info = GetOpInfo(op.kind());
  int n_in = op.num_inputs();
  if (n_in < info.min_inputs || (info.max_inputs != kVariadic && n_in > info.max_inputs)) {
    return InvalidArgument(op.loc())
           << info.name << " takes " << ArityText(info.min_inputs, info.max_inputs, "input")
           << ", got " << n_in;
  }
  int n_out = op.num_results();
  if (n_out < info.min_outputs || (info.max_outputs != kVariadic && n_out > info.max_outputs)) {
    return InvalidArgument(op.loc())
           << info.name << " has " << ArityText(info.min_outputs, info.max_outputs, "result")
           << ", got " << n_out;
  }
  return Status::Ok();
}

Status FunctionVerifier::CheckAttrs(const Op& op) const {
  const OpInfo& info = GetOpInfo(op.kind());
  for (const auto& [name, value] : op.attrs()) {
    const AttrSpec* spec = info.FindAttr(name);
    if (spec == nullptr) {
      return InvalidArgument(op.loc()) << "unknown attribute '" << name << "' for op " << info.name;
    }
    if (spec->type != value.type()) {
      return InvalidArgument(op.loc())
             << "attribute '" << name << "' of " << info.name << " must be "
             << AttrTypeName(spec->type) << ", got " << AttrTypeName(value.type());
    }
  }
  for (const AttrSpec& spec : info.attrs) {
    if (spec.required && op.FindAttr(std::string(spec.name)) == nullptr) {
      return InvalidArgument(op.loc())
             << "missing required attribute '" << spec.name << "' of " << info.name;
    }
  }
  return Status::Ok();
}

// True when `a` comes before `b` in `module`; functions not in the module count as earlier.
bool DefinedBefore(const Module& module, const Function& a, const Function& b) {
  for (const auto& f : module.functions()) {
    if (f.get() == &a) return true;
    if (f.get() == &b) return false;
  }
  return true;
}

// The devices of the call's arguments, which a device-generic callee runs on.
Status CheckGenericCallDevices(const Op& op) {
  DeviceId first;
  bool seen = false;
  for (const Value* v : op.inputs()) {
    if (v->type().is_unknown()) continue;
    std::vector<DeviceId> devices = v->type().Devices();
    DeviceId d = devices.empty() ? DeviceId() : devices[0];
    if (devices.size() > 1 || (seen && d != first)) {
      return InvalidArgument(op.loc())
             << "arguments of device-generic " << op.Name() << " must share one device, got "
             << (devices.size() > 1 ? devices[1] : d) << " and " << (seen ? first : devices[0]);
    }
    first = d;
    seen = true;
  }
  return Status::Ok();
}

bool FunctionVerifier::CalleeComesFirst(const Function& callee) const {
  if (positions_ == nullptr) return DefinedBefore(*module_, callee, fn_);
  auto a = positions_->find(&callee), b = positions_->find(&fn_);
  if (a == positions_->end()) return true;  // not in the module: earlier
  return b == positions_->end() || a->second < b->second;
}

Status FunctionVerifier::CheckCall(const Op& op) const {
  const Function* callee = module_ == nullptr ? nullptr : module_->Lookup(op.callee());
  if (callee == nullptr) return InvalidArgument(op.loc()) << "undefined function @" << op.callee();
  // Calls may only reach functions defined earlier, which keeps the call graph acyclic.
  if (callee == &fn_ || !CalleeComesFirst(*callee)) {
    return InvalidArgument(op.loc())
           << "call of @" << callee->name() << " must follow its definition";
  }
  if (callee->num_params() != op.num_inputs()) {
    return InvalidArgument(op.loc())
           << "@" << callee->name() << " takes " << Plural(callee->num_params(), "argument")
           << ", got " << op.num_inputs();
  }
  if (!op.attrs().empty()) {
    return InvalidArgument(op.loc())
           << "call of @" << callee->name() << " takes no attributes, got '"
           << op.attrs().begin()->first << "'";
  }
  int n_ret = static_cast<int>(callee->returns().size());
  if (n_ret != op.num_results()) {
    return InvalidArgument(op.loc())
           << "@" << callee->name() << " returns " << Plural(n_ret, "value")
           << ", but the call has " << Plural(op.num_results(), "result");
  }
  if (callee->IsDeviceGeneric()) return CheckGenericCallDevices(op);
  return Status::Ok();
}

Status FunctionVerifier::CheckDevices(const Op& op) const {
  const Value* first = nullptr;
  for (const Value* v : op.inputs()) {
    if (v->type().is_unknown() || v->type().is_tuple()) continue;
    if (first == nullptr) {
      first = v;
      continue;
    }
    if (v->type().device() != first->type().device()) {
      return InvalidArgument(op.loc())
             << op.Name() << " inputs are on different devices (" << first->type().device()
             << " and " << v->type().device() << ")";
    }
  }
  return Status::Ok();
}

// Collectives in global form: one input per participating device.
Status FunctionVerifier::CheckCommunication(const Op& op) const {
  std::vector<DeviceId> seen;
  for (const Value* v : op.inputs()) {
    if (v->type().is_unknown()) continue;
    DeviceId d = v->type().device();
    for (DeviceId s : seen) {
      if (s == d) {
        return InvalidArgument(op.loc())
               << op.Name() << " inputs must be on distinct devices: " << d << " appears twice";
      }
    }
    seen.push_back(d);
  }
  switch (op.kind()) {
    case OpKind::kAllReduce:
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllToAll:
      if (op.num_results() != op.num_inputs()) {
        return InvalidArgument(op.loc())
               << op.Name() << " needs one result per input: " << op.num_inputs() << " inputs, "
               << op.num_results() << " results";
      }
      break;
    case OpKind::kBroadcast:
    case OpKind::kScatter: {
      size_t n = op.FindAttr("devices")->AsDevices().size();
      if (static_cast<size_t>(op.num_results()) != n) {
        return InvalidArgument(op.loc()) << op.Name() << " needs one result per device: " << n
                                         << " devices, " << op.num_results() << " results";
      }
      break;
    }
    case OpKind::kSend: {
      DeviceId to = op.FindAttr("device")->AsDevice();
      if (!op.input(0)->type().is_unknown() && op.input(0)->type().device() == to) {
        return InvalidArgument(op.loc()) << "Send of " << op.input(0)->Ref() << " to " << to
                                         << " moves nothing: the value is already there";
      }
      break;
    }
    default:
      break;
  }
  return Status::Ok();
}

bool AttrMentionsDevice(const Attribute& a) {
  return a.type() == AttrType::kDevice || a.type() == AttrType::kDevices;
}

// A device-generic function runs wherever it is called, so nothing inside may
// name a device. Mesh collectives name mesh axes, not devices: they belong to
// global-view programs, whose types carry no device.
Status FunctionVerifier::CheckGeneric(const Op& op) const {
  if (!op.is_call() && IsCommunication(op.kind()) && !IsMeshCollective(op.kind())) {
    return InvalidArgument(op.loc()) << "device-generic function @" << fn_.name()
                                     << " may not contain communication op " << op.Name();
  }
  for (const auto& [name, value] : op.attrs()) {
    if (AttrMentionsDevice(value)) {
      return InvalidArgument(op.loc())
             << "device-generic function @" << fn_.name() << " may not name a device (attribute '"
             << name << "' of " << op.Name() << ")";
    }
  }
  for (const auto& r : op.results()) {
    if (!r->type().Devices().empty()) {
      return InvalidArgument(op.loc()) << "device-generic function @" << fn_.name()
                                       << " may not name a device (type of " << r->Ref() << ")";
    }
  }
  return Status::Ok();
}

// A sharding must name a declared mesh and fit the value's tensor type.
Status FunctionVerifier::CheckShardingOf(const Sharding& sharding, const Type& type,
                                         const std::string& what) const {
  if (module_ == nullptr) return Status::Ok();
  const Mesh* mesh = module_->LookupMesh(sharding.mesh);
  if (mesh == nullptr)
    return InvalidArgument(sharding.loc)
           << "sharding of " << what << " names undeclared mesh @" << sharding.mesh;
  if (type.is_unknown()) return Status::Ok();
  if (!type.is_tensor())
    return InvalidArgument(sharding.loc)
           << "sharding of " << what << " must be on a tensor, not " << type;
  Status s = sharding.Validate(*mesh, type.shape());
  if (s.ok()) return s;
  return InvalidArgument(sharding.loc)
         << s.message() << " (sharding of " << what << ": " << type << ")";
}

Status FunctionVerifier::CheckValueSharding(const Value& v) const {
  if (v.sharding() == nullptr) return Status::Ok();
  return CheckShardingOf(*v.sharding(), v.type(), v.Ref());
}

// Shard's sharding fits its operand; a mesh collective names a declared mesh,
// distinct axes of it, and a dim of its operand.
Status FunctionVerifier::CheckMeshOp(const Op& op) const {
  if (op.kind() == OpKind::kShard) {
    return CheckShardingOf(op.FindAttr("sharding")->AsSharding(), op.input(0)->type(),
                           "Shard operand " + op.input(0)->Ref());
  }
  if (module_ == nullptr) return Status::Ok();
  const std::string& name = op.FindAttr("mesh")->AsString();
  const Mesh* mesh = module_->LookupMesh(name);
  if (mesh == nullptr)
    return InvalidArgument(op.loc()) << op.Name() << " names undeclared mesh @" << name;
  static const std::vector<std::string> kNoAxes;
  const Attribute* axes_attr = op.FindAttr("axes");  // MeshTransfer has none
  const std::vector<std::string>& axes = axes_attr != nullptr ? axes_attr->AsStrings() : kNoAxes;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (mesh->AxisIndex(axes[i]) < 0)
      return InvalidArgument(op.loc())
             << op.Name() << " names unknown axis '" << axes[i] << "' of mesh @" << name;
    for (size_t j = 0; j < i; ++j) {
      if (axes[j] == axes[i])
        return InvalidArgument(op.loc())
               << op.Name() << " names mesh axis '" << axes[i] << "' twice";
    }
  }
  const Type& t = op.input(0)->type();
  for (const char* attr : {"axis", "split_axis", "concat_axis"}) {
    const Attribute* a = op.FindAttr(attr);
    if (a == nullptr || !t.is_tensor()) continue;
    if (a->AsInt() < 0 || a->AsInt() >= t.rank())
      return InvalidArgument(op.loc())
             << op.Name() << " " << attr << " " << a->AsInt() << " is out of range for " << t;
  }
  return Status::Ok();
}

Status FunctionVerifier::Run() {
  bool generic = fn_.IsDeviceGeneric();
  for (const auto& p : fn_.params()) {
    Define(p.get());
    DISTIR_RETURN_IF_ERROR(CheckValueSharding(*p));
  }
  for (const auto& op : fn_.ops()) {
    for (const Value* v : op->inputs()) DISTIR_RETURN_IF_ERROR(CheckUse(*op, v));
    if (op->is_call()) {
      DISTIR_RETURN_IF_ERROR(CheckCall(*op));
    } else {
      DISTIR_RETURN_IF_ERROR(CheckArity(*op));
      DISTIR_RETURN_IF_ERROR(CheckAttrs(*op));
      if (op->kind() == OpKind::kShard || IsMeshCollective(op->kind())) {
        DISTIR_RETURN_IF_ERROR(CheckMeshOp(*op));
      } else if (IsCommunication(op->kind())) {
        DISTIR_RETURN_IF_ERROR(CheckCommunication(*op));
      } else {
        DISTIR_RETURN_IF_ERROR(CheckDevices(*op));
      }
    }
    if (generic) DISTIR_RETURN_IF_ERROR(CheckGeneric(*op));
    for (const auto& r : op->results()) {
      Define(r.get());
      DISTIR_RETURN_IF_ERROR(CheckValueSharding(*r));
    }
  }
  for (const Value* v : fn_.returns()) {
    bool ok = v->id() < static_cast<int>(defined_.size()) && defined_[v->id()] == v;
    if (!ok) {
      return InvalidArgument(fn_.return_loc())
             << "returned value " << v->Ref() << " is not defined in @" << fn_.name();
    }
  }
  return Status::Ok();
}

// Parameters of one function either all carry devices or none do.
Status CheckParamDevices(const Function& fn) {
  const Value* with = nullptr;
  const Value* without = nullptr;
  for (const auto& p : fn.params()) {
    (p->type().Devices().empty() ? without : with) = p.get();
  }
  if (with == nullptr || without == nullptr) return Status::Ok();
  return InvalidArgument(without->loc())
         << "parameter " << without->Ref() << " of @" << fn.name() << " has no device while "
         << with->Ref() << " is on " << with->type().Devices()[0]
         << "; place every parameter, or none (device-generic)";
}

Status Verify(const Function& fn, const Module* module,
              const std::unordered_map<const Function*, size_t>* positions) {
  DISTIR_RETURN_IF_ERROR(CheckParamDevices(fn));
  return FunctionVerifier(fn, module, positions).Run();
}

}  // namespace

Status VerifyFunction(const Function& fn, const Module* module) {
  return Verify(fn, module, nullptr);
}

Status VerifyModule(const Module& module) {
  std::unordered_map<const Function*, size_t> positions;
  for (const auto& fn : module.functions()) positions.emplace(fn.get(), positions.size());
  for (const auto& fn : module.functions()) {
    DISTIR_RETURN_IF_ERROR(Verify(*fn, &module, &positions));
  }
  return Status::Ok();
}

}  // namespace distir
