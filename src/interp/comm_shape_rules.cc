// Shape rules of the training ops (gradients, loss, optimizers) and of the
// communication ops in the paper's global form: one input per participating
// device and, for the all-to-all shaped collectives, one output per device in
// the same order. Part of RegisterShapeRules().

#include <algorithm>

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
  return Types{in[0], in[1]};
}

Result InferActivationGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"x", "dy"}));
  return One(in[0]);
}

Result InferSoftmaxGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(AllLikeFirst(op, in, {"y", "dy"}));
  DISTIR_RETURN_IF_ERROR(NormalizeAxis(op, op.GetInt("axis", -1), in[0].rank()).status());
  return One(in[0]);
}

Result InferLayerNormGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(RequireLike(op, in[2], "dy", in[0], "x"));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, op.GetInt("axis", -1), in[0].rank()));
  const Shape normalized(in[0].shape().begin() + axis, in[0].shape().end());
  if (!BroadcastsTo(in[1].shape(), normalized)) {
    return InvalidArgument(op.loc())
           << "LayerNormalizationGrad scale of shape [" << ShapeToString(in[1].shape())
           << "] does not fit the normalized shape [" << ShapeToString(normalized) << "]";
  }
  return Types{in[0], in[1], in[1]};
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

// The collective prelude: distinct devices, one shape, one result per input.
Status CheckCollective(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(DistinctDevices(op, in));
  DISTIR_RETURN_IF_ERROR(SameShapes(op, in));
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
  DISTIR_RETURN_IF_ERROR(ResultsPerInput(op, in.size()));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, RequiredInt(op, "axis"));
  DISTIR_ASSIGN_OR_RETURN(Shape s, ConcatShape(op, in, axis));
  return PerInputDevice(in, in[0], s);
}

Result InferReduceScatter(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCollective(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t attr, RequiredInt(op, "axis"));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, attr, in[0].rank()));
  Shape s = in[0].shape();
  DISTIR_ASSIGN_OR_RETURN(s[axis], DivideExtent(op, s[axis], in.size(), axis));
  return PerInputDevice(in, in[0], s);
}

Result InferAllToAll(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCollective(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t split_attr, RequiredInt(op, "split_axis"));
  DISTIR_ASSIGN_OR_RETURN(int64_t concat_attr, RequiredInt(op, "concat_axis"));
  DISTIR_ASSIGN_OR_RETURN(int64_t split, NormalizeAxis(op, split_attr, in[0].rank()));
  DISTIR_ASSIGN_OR_RETURN(int64_t concat, NormalizeAxis(op, concat_attr, in[0].rank()));
  Shape s = in[0].shape();
  const int64_t n = in.size();
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

}  // namespace

void RegisterTrainingShapeRules(ShapeDomain& domain) {
  domain.Register(OpKind::kMatMulGrad, InferMatMulGrad);
  domain.Register(OpKind::kReluGrad, InferActivationGrad);
  domain.Register(OpKind::kGeluGrad, InferActivationGrad);
  domain.Register(OpKind::kSoftmaxGrad, InferSoftmaxGrad);
  domain.Register(OpKind::kLayerNormalizationGrad, InferLayerNormGrad);
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
}

}  // namespace distir::shape
