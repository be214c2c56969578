// Shape rules of the training ops (gradients, loss, optimizers) and of the
// communication ops in the paper's global form: one input per participating
// device and, for the all-to-all shaped collectives, one output per device in
// the same order; and of the per-rank communication ops of lowered programs
// (SendTo, RecvFrom, Collective), whose received types are written in the text.
// Part of RegisterShapeRules().

#include <algorithm>
#include <optional>
#include <string>

#include "interp/shape_util.h"

namespace distir::shape {
namespace {

// ---- gradients, losses, optimizers

// Every input has the dtype and shape of input 0 (ReluGrad(x, dy), SGD(w, dw), ...).
Status AllLikeFirst(const Op& op, Args in, const std::vector<std::string_view>& names) {
  for (int i = 1; i < in.size(); ++i) {
    DISTIR_RETURN_IF_ERROR(RequireLike(op, in[i], names[i], in[0], names[0]));
  }
  return Status::Ok();
}

Result InferMatMulGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_ASSIGN_OR_RETURN(Type y, MatMulType(op, in[0], in[1]));
  DISTIR_RETURN_IF_ERROR(RequireLike(op, in[2], "dy", y, "the product of x and w"));
  // `dw_dtype`: the weight gradient in another float dtype (Megatron's
  // gradient accumulation fusion writes it in f32 from half operands).
  const Attribute* dw = op.FindAttr("dw_dtype");
  if (dw == nullptr) return Types{in[0], in[1]};
  if (dw->type() != AttrType::kDType || !IsFloat(dw->AsDType()))
    return InvalidArgument(op.loc()) << op.Name() << ": dw_dtype must be a float dtype";
  return Types{in[0], in[1].WithDType(dw->AsDType())};
}

Result InferActivationGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"x", "dy"}));
  return One(in[0]);
}

// SigmoidGrad(y, dy): y is the Sigmoid output, not its input.
Result InferSigmoidGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"y", "dy"}));
  return One(in[0]);
}

Result InferSoftmaxGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"y", "dy"}));
  DISTIR_RETURN_IF_ERROR(NormalizeAxis(op, op.GetInt("axis", -1), in[0].rank()).status());
  return One(in[0]);
}

// LayerNormalizationGrad(x, scale, dy) -> (dx, dscale, dbias) and
// RMSNormalizationGrad(x, scale, dy) -> (dx, dscale): dx is like x, the
// parameter gradients like scale.
Result InferNormGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(RequireLike(op, in[2], "dy", in[0], "x"));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, op.GetInt("axis", -1), in[0].rank()));
  const Shape normalized(in[0].shape().begin() + axis, in[0].shape().end());
  if (!BroadcastsTo(in[1].shape(), normalized)) {
    return InvalidArgument(op.loc())
           << OpName(op) << " scale of shape [" << ShapeToString(in[1].shape())
           << "] does not fit the normalized shape [" << ShapeToString(normalized) << "]";
  }
  Types out = {in[0], in[1], in[1]};
  out.resize(op.num_results());
  return out;
}

Result InferMSELoss(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"prediction", "target"}));
  return One(in[0].WithShape({}));
}

Result InferMSELossGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"prediction", "target"}));
  return One(in[0]);
}

Result InferSGD(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"w", "dw"}));
  return One(in[0]);
}

Result InferAdam(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"w", "dw", "m", "v"}));
  return Types{in[0], in[2], in[3]};
}

// ---- communication

// Every input is a tensor on its own device, all distinct.
Status DistinctDevices(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in));
  for (int i = 0; i < in.size(); ++i) {
    if (!in[i].device().has_value()) {
      return InvalidArgument(op.loc())
             << OpName(op) << " input " << i << " must be on a device, got " << in[i].ToString();
    }
    for (int j = 0; j < i; ++j) {
      if (in[j].device() == in[i].device()) {
        return InvalidArgument(op.loc())
               << OpName(op) << " inputs must be on distinct devices: inputs " << j << " and " << i
               << " are both on " << in[i].device();
      }
    }
  }
  return Status::Ok();
}

// Every input has the dtype and shape of input 0 (devices differ by design).
Status SameShapes(const Op& op, Args in) {
  for (int i = 1; i < in.size(); ++i) {
    if (in[i].dtype() != in[0].dtype() || !ShapesFit(in[i].shape(), in[0].shape())) {
      return InvalidArgument(op.loc())
             << OpName(op) << " inputs must have one shape and dtype: input 0 is "
             << in[0].ToString() << ", input " << i << " is " << in[i].ToString();
    }
  }
  return Status::Ok();
}

Status ResultsPerInput(const Op& op, int n) {
  if (op.num_results() == n) return Status::Ok();
  return InvalidArgument(op.loc()) << OpName(op) << " has " << n << " inputs but "
                                   << op.num_results() << " results; it needs one per device";
}

// The devices of a collective of a part of a program that holds some of its
// participants (attribute `participants`, docs/ir.md): distinct, the inputs'
// devices among them. (The others' pieces are like the inputs': the callers
// check that the inputs have one shape.)
Status CheckParticipants(const Op& op, Args in) {
  const Attribute* attr = op.FindAttr("participants");
  if (attr == nullptr) return Status::Ok();
  const std::vector<DeviceId>& all = attr->AsDevices();
  for (auto it = all.begin(); it != all.end(); ++it) {
    if (std::find(all.begin(), it, *it) != it)
      return InvalidArgument(op.loc())
             << OpName(op) << " participants must be distinct, " << *it << " appears twice";
  }
  for (int i = 0; i < in.size(); ++i) {
    if (std::find(all.begin(), all.end(), in[i].device()) == all.end())
      return InvalidArgument(op.loc()) << OpName(op) << " input " << i << " is on "
                                       << in[i].device() << ", not one of its participants";
  }
  return Status::Ok();
}

// How many devices take part: the participants where the op names them, else
// one per input.
int64_t Members(const Op& op, Args in) {
  const Attribute* attr = op.FindAttr("participants");
  return attr != nullptr ? static_cast<int64_t>(attr->AsDevices().size()) : in.size();
}

// The collective prelude: distinct devices, one shape, one result per input.
Status CheckCollective(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(DistinctDevices(op, in));
  DISTIR_RETURN_IF_ERROR(SameShapes(op, in));
  DISTIR_RETURN_IF_ERROR(CheckParticipants(op, in));
  return ResultsPerInput(op, in.size());
}

// `t` with `shape`, one copy per input device.
Types PerInputDevice(Args in, const Type& t, const Shape& shape) {
  Types out;
  out.reserve(in.size());
  for (int i = 0; i < in.size(); ++i) out.push_back(t.WithShape(shape).WithDevice(in[i].device()));
  return out;
}

Result InferSend(const Op& op, Args in) {
  const Attribute* target = op.FindAttr("device");
  if (target == nullptr) return MissingAttr(op, "device");
  const DeviceId from = in[0].device();
  if (!from.has_value()) {
    return InvalidArgument(op.loc())
           << "Send input must be on one device, got " << in[0].ToString();
  }
  if (from == target->AsDevice()) {
    return InvalidArgument(op.loc()) << "Send must move data to another device: input is "
                                        "already on "
                                     << from;
  }
  return One(in[0].WithDevice(target->AsDevice()));
}

Result InferAllReduce(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCollective(op, in));
  Types out;
  out.reserve(in.size());
  for (int i = 0; i < in.size(); ++i) out.push_back(in[i]);
  return out;
}

Result InferAllGather(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(DistinctDevices(op, in));
  DISTIR_RETURN_IF_ERROR(CheckParticipants(op, in));
  DISTIR_RETURN_IF_ERROR(ResultsPerInput(op, in.size()));
  DISTIR_ASSIGN_OR_RETURN(int64_t attr, RequiredInt(op, "axis"));
  if (op.FindAttr("participants") == nullptr) {
    DISTIR_ASSIGN_OR_RETURN(Shape s, ConcatShape(op, in, attr));
    return PerInputDevice(in, in[0], s);
  }
  // Every participant's piece has the inputs' shape.
  DISTIR_RETURN_IF_ERROR(SameShapes(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, attr, in[0].rank()));
  Shape s = in[0].shape();
  if (s[axis] != kDynamicDim) s[axis] *= Members(op, in);
  return PerInputDevice(in, in[0], s);
}

Result InferReduceScatter(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCollective(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t attr, RequiredInt(op, "axis"));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, attr, in[0].rank()));
  Shape s = in[0].shape();
  DISTIR_ASSIGN_OR_RETURN(s[axis], DivideExtent(op, s[axis], Members(op, in), axis));
  return PerInputDevice(in, in[0], s);
}

Result InferAllToAll(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCollective(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t split_attr, RequiredInt(op, "split_axis"));
  DISTIR_ASSIGN_OR_RETURN(int64_t concat_attr, RequiredInt(op, "concat_axis"));
  DISTIR_ASSIGN_OR_RETURN(int64_t split, NormalizeAxis(op, split_attr, in[0].rank()));
  DISTIR_ASSIGN_OR_RETURN(int64_t concat, NormalizeAxis(op, concat_attr, in[0].rank()));
  Shape s = in[0].shape();
  const int64_t n = Members(op, in);
  DISTIR_ASSIGN_OR_RETURN(s[split], DivideExtent(op, s[split], n, split));
  if (s[concat] != kDynamicDim) s[concat] *= n;
  return PerInputDevice(in, in[0], s);
}

// Checks the `devices` attribute of Broadcast and Scatter: distinct, one per result.
StatusOr<std::vector<DeviceId>> TargetDevices(const Op& op) {
  const Attribute* attr = op.FindAttr("devices");
  if (attr == nullptr) return MissingAttr(op, "devices");
  const std::vector<DeviceId>& devices = attr->AsDevices();
  if (static_cast<int>(devices.size()) != op.num_results()) {
    return InvalidArgument(op.loc()) << OpName(op) << " has " << op.num_results()
                                     << " results but lists " << devices.size() << " devices";
  }
  for (auto it = devices.begin(); it != devices.end(); ++it) {
    if (std::find(devices.begin(), it, *it) != it) {
      return InvalidArgument(op.loc())
             << OpName(op) << " devices must be distinct, " << *it << " appears twice";
    }
  }
  return devices;
}

Result InferBroadcast(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<DeviceId> devices, TargetDevices(op));
  if (!in[0].device().has_value()) {
    return InvalidArgument(op.loc())
           << "Broadcast input must be on one device, got " << in[0].ToString();
  }
  Types out;
  out.reserve(devices.size());
  for (DeviceId d : devices) out.push_back(in[0].WithDevice(d));
  return out;
}

Result InferScatter(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(DistinctDevices(op, in));
  DISTIR_ASSIGN_OR_RETURN(std::vector<DeviceId> devices, TargetDevices(op));
  DISTIR_ASSIGN_OR_RETURN(int64_t attr, RequiredInt(op, "axis"));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, attr, in[0].rank()));
  Shape s = in[0].shape();
  DISTIR_ASSIGN_OR_RETURN(s[axis], DivideExtent(op, s[axis], devices.size(), axis));
  Types out;
  out.reserve(devices.size());
  for (DeviceId d : devices) out.push_back(in[0].WithShape(s).WithDevice(d));
  return out;
}

Result InferMPIGather(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(DistinctDevices(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, RequiredInt(op, "axis"));
  const Attribute* device = op.FindAttr("device");
  if (device == nullptr) return MissingAttr(op, "device");
  DISTIR_ASSIGN_OR_RETURN(Shape s, ConcatShape(op, in, axis));
  return One(in[0].WithShape(std::move(s)).WithDevice(device->AsDevice()));
}

Result InferReduce(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(DistinctDevices(op, in));
  DISTIR_RETURN_IF_ERROR(SameShapes(op, in));
  const Attribute* device = op.FindAttr("device");
  if (device == nullptr) return MissingAttr(op, "device");
  return One(in[0].WithDevice(device->AsDevice()));
}


// ---- per-rank communication (lowered programs; docs/ir.md, "Lowering to per-rank programs")

// The device a per-rank op names in attribute `name`.
StatusOr<DeviceId> DeviceAttr(const Op& op, const std::string& name) {
  const Attribute* a = op.FindAttr(name);
  if (a == nullptr || a->type() != AttrType::kDevice) return MissingAttr(op, name);
  return a->AsDevice();
}

// The result type written in the text. A rank cannot infer what a peer sends it,
// so the lowering always writes the type of a received value.
StatusOr<Type> WrittenType(const Op& op, std::string_view what) {
  const Type t = op.num_results() == 1 ? op.result(0)->type() : Type();
  if (t.is_unknown()) {
    return InvalidArgument(op.loc()) << OpName(op) << " needs the type of " << what
                                     << " written after ':', since a rank cannot infer it";
  }
  if (t.Devices().size() != 1) {
    return InvalidArgument(op.loc()) << OpName(op) << " result must be on one device, got "
                                     << t.ToString();
  }
  return t;
}

Result InferSendTo(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(DeviceId peer, DeviceAttr(op, "device"));
  if (in[0].Devices().size() != 1) {
    return InvalidArgument(op.loc()) << "SendTo input must be on one device, got "
                                     << in[0].ToString();
  }
  if (in[0].Devices()[0] == peer) {
    return InvalidArgument(op.loc()) << "SendTo must send to another device: input is already on "
                                     << peer;
  }
  return One(in[0]);  // a token: the sender keeps its value
}

Result InferRecvFrom(const Op& op, Args) {
  DISTIR_ASSIGN_OR_RETURN(DeviceId peer, DeviceAttr(op, "device"));
  DISTIR_ASSIGN_OR_RETURN(Type t, WrittenType(op, "the received value"));
  if (t.Devices()[0] == peer) {
    return InvalidArgument(op.loc()) << "RecvFrom must receive from another device: result is on "
                                     << peer;
  }
  return One(std::move(t));
}

// The participants of a per-rank Collective: distinct, with this rank at `rank`.
StatusOr<std::vector<DeviceId>> Group(const Op& op) {
  const Attribute* group = op.FindAttr("group");
  const Attribute* rank = op.FindAttr("rank");
  if (group == nullptr || group->type() != AttrType::kDevices) return MissingAttr(op, "group");
  if (rank == nullptr || rank->type() != AttrType::kInt) return MissingAttr(op, "rank");
  const std::vector<DeviceId>& devices = group->AsDevices();
  for (auto it = devices.begin(); it != devices.end(); ++it) {
    if (!it->has_value() || std::find(devices.begin(), it, *it) != it) {
      return InvalidArgument(op.loc()) << "Collective group must list distinct devices, got "
                                       << group->ToString();
    }
  }
  if (rank->AsInt() < 0 || rank->AsInt() >= static_cast<int64_t>(devices.size())) {
    return InvalidArgument(op.loc()) << "Collective rank " << rank->AsInt()
                                     << " is not a position in group " << group->ToString();
  }
  return devices;
}

// The global collective a per-rank Collective takes part in.
StatusOr<OpKind> CollectiveKind(const Op& op) {
  const Attribute* kind = op.FindAttr("kind");
  if (kind == nullptr || kind->type() != AttrType::kString) return MissingAttr(op, "kind");
  std::optional<OpKind> k = LookupOpKind(kind->AsString());
  if (!k || *k == OpKind::kSend || !IsCommunication(*k) || *k >= OpKind::kSendTo) {
    return InvalidArgument(op.loc()) << "Collective kind must name a collective (AllReduce, "
                                        "AllGather, ...), got \""
                                     << kind->AsString() << "\"";
  }
  return *k;
}

// Whether the rank on `self` receives data from collective `kind`.
StatusOr<bool> IsDestination(const Op& op, OpKind kind, DeviceId self) {
  if (kind == OpKind::kReduce || kind == OpKind::kMPIGather) {
    DISTIR_ASSIGN_OR_RETURN(DeviceId root, DeviceAttr(op, "device"));
    return root == self;
  }
  if (kind == OpKind::kBroadcast || kind == OpKind::kScatter) {
    const Attribute* devices = op.FindAttr("devices");
    if (devices == nullptr || devices->type() != AttrType::kDevices) {
      return MissingAttr(op, "devices");
    }
    const std::vector<DeviceId>& d = devices->AsDevices();
    return std::find(d.begin(), d.end(), self) != d.end();
  }
  return true;
}

Result InferCollectiveRank(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(OpKind kind, CollectiveKind(op));
  DISTIR_ASSIGN_OR_RETURN(std::vector<DeviceId> group, Group(op));
  const DeviceId self = group[op.GetInt("rank", 0)];
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in));
  if (in.size() == 1 && in[0].device() != self) {
    return InvalidArgument(op.loc()) << "Collective input must be on " << self
                                     << ", this rank's device in the group, got "
                                     << in[0].ToString();
  }
  DISTIR_ASSIGN_OR_RETURN(bool destination, IsDestination(op, kind, self));
  if (!destination) {
    if (in.size() == 0) {
      return InvalidArgument(op.loc()) << "Collective " << OpKindName(kind) << " on " << self
                                       << " neither sends nor receives data";
    }
    return One(in[0]);  // a token: nothing arrives here
  }
  const bool same_as_input =
      kind == OpKind::kAllReduce || kind == OpKind::kReduce || kind == OpKind::kBroadcast;
  if (in.size() == 1 && same_as_input) return One(in[0]);
  DISTIR_ASSIGN_OR_RETURN(Type t, WrittenType(op, "its result"));
  if (t.device() != self) {
    return InvalidArgument(op.loc()) << "Collective result must be on " << self
                                     << ", this rank's device in the group, got " << t.ToString();
  }
  return One(std::move(t));
}

}  // namespace

void RegisterTrainingShapeRules(ShapeDomain& domain) {
  domain.Register(OpKind::kMatMulGrad, InferMatMulGrad);
  domain.Register(OpKind::kReluGrad, InferActivationGrad);
  domain.Register(OpKind::kGeluGrad, InferActivationGrad);
  domain.Register(OpKind::kSigmoidGrad, InferSigmoidGrad);
  domain.Register(OpKind::kSoftmaxGrad, InferSoftmaxGrad);
  domain.Register(OpKind::kLayerNormalizationGrad, InferNormGrad);
  domain.Register(OpKind::kRMSNormalizationGrad, InferNormGrad);
  domain.Register(OpKind::kMSELoss, InferMSELoss);
  domain.Register(OpKind::kMSELossGrad, InferMSELossGrad);
  domain.Register(OpKind::kSGD, InferSGD);
  domain.Register(OpKind::kAdam, InferAdam);
}

void RegisterCommunicationShapeRules(ShapeDomain& domain) {
  domain.Register(OpKind::kSend, InferSend);
  domain.Register(OpKind::kAllReduce, InferAllReduce);
  domain.Register(OpKind::kAllGather, InferAllGather);
  domain.Register(OpKind::kReduceScatter, InferReduceScatter);
  domain.Register(OpKind::kAllToAll, InferAllToAll);
  domain.Register(OpKind::kBroadcast, InferBroadcast);
  domain.Register(OpKind::kScatter, InferScatter);
  domain.Register(OpKind::kMPIGather, InferMPIGather);
  domain.Register(OpKind::kReduce, InferReduce);
  domain.Register(OpKind::kSendTo, InferSendTo);
  domain.Register(OpKind::kRecvFrom, InferRecvFrom);
  domain.Register(OpKind::kCollective, InferCollectiveRank);
}

}  // namespace distir::shape
