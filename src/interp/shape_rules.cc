// Shape rules: one transfer function per op kind, mapping input types to result
// types or explaining why the op is ill-typed. Registered into a ShapeDomain by
// RegisterShapeRules(); the mixed domain reuses them for abstract arguments.
//
// Ops never move data implicitly: the simulator charges transfers only for
// explicit communication ops, so every compute op checks that its inputs share
// one device, and every collective that its inputs sit on distinct devices.

#include <algorithm>
#include <numeric>

#include "interp/shape_domain.h"
#include "interp/shape_util.h"
#include "support/str_util.h"

namespace distir {
namespace {

using namespace shape;  // NOLINT(google-build-using-namespace): the rule helpers

// ---- elementwise

Result Elementwise(const Op& op, Args in, bool same_dtype, std::optional<DType> result_dtype) {
  DISTIR_ASSIGN_OR_RETURN(DeviceId device, CheckCompute(op, in, /*allow_scalar=*/true));
  if (same_dtype) DISTIR_RETURN_IF_ERROR(SameDTypes(op, in, 0, in.size()));
  const DType dtype = result_dtype.value_or(in[0].dtype());
  bool all_scalar = true;
  bool same_shape = true;
  for (int i = 0; i < in.size(); ++i) {
    all_scalar = all_scalar && in[i].is_scalar();
    same_shape = same_shape && in[i].is_tensor() && in[i].shape() == in[0].shape();
  }
  if (all_scalar) return One(Type::Scalar(dtype, device));
  if (same_shape) return One(dtype == in[0].dtype() ? in[0] : in[0].WithDType(dtype));
  Shape out = ShapeOf(in[0]);
  for (int i = 1; i < in.size(); ++i) {
    DISTIR_ASSIGN_OR_RETURN(out, shape::Broadcast(op, out, ShapeOf(in[i])));
  }
  return One(Type::Tensor(dtype, std::move(out), device));
}

Result InferArith(const Op& op, Args in) { return Elementwise(op, in, true, std::nullopt); }
Result InferPow(const Op& op, Args in) { return Elementwise(op, in, false, std::nullopt); }
Result InferCompare(const Op& op, Args in) { return Elementwise(op, in, true, DType::kBool); }

Result InferWhere(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(DeviceId device, CheckCompute(op, in, true));
  if (in[0].dtype() != DType::kBool) {
    return InvalidArgument(op.loc())
           << "Where condition must be bool, got " << DTypeName(in[0].dtype());
  }
  DISTIR_RETURN_IF_ERROR(SameDTypes(op, in, 1, 3));
  DISTIR_ASSIGN_OR_RETURN(Shape s, shape::Broadcast(op, ShapeOf(in[0]), ShapeOf(in[1])));
  DISTIR_ASSIGN_OR_RETURN(s, shape::Broadcast(op, s, ShapeOf(in[2])));
  return One(Type::Tensor(in[1].dtype(), std::move(s), device));
}

Result InferUnary(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in, true));
  return One(in[0]);
}

Result InferNot(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in, true));
  if (in[0].dtype() != DType::kBool) {
    return InvalidArgument(op.loc()) << "Not input must be bool, got " << DTypeName(in[0].dtype());
  }
  return One(in[0]);
}

Result InferIdentity(const Op& /*op*/, Args in) { return One(in[0]); }

Result InferCast(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in, true));
  const Attribute* to = op.FindAttr("to");
  if (to == nullptr) return MissingAttr(op, "to");
  return One(in[0].WithDType(to->AsDType()));
}

Result InferSoftmax(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in));
  DISTIR_RETURN_IF_ERROR(shape::NormalizeAxis(op, op.GetInt("axis", -1), in[0].rank()).status());
  return One(in[0]);
}

Result InferTrilu(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  if (in[0].rank() < 2) {
    return InvalidArgument(op.loc()) << "Trilu input must have rank >= 2, got " << in[0].ToString();
  }
  return One(in[0]);
}

// ---- linear algebra

Result InferMatMul(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_ASSIGN_OR_RETURN(Type out, MatMulType(op, in[0], in[1]));
  return One(std::move(out));
}

Result InferGemm(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(DeviceId device, CheckCompute(op, in));
  if (in[0].rank() != 2 || in[1].rank() != 2) {
    return InvalidArgument(op.loc()) << "Gemm operands must have rank 2, got " << in[0].ToString()
                                     << " and " << in[1].ToString();
  }
  DISTIR_RETURN_IF_ERROR(SameDTypes(op, in, 0, in.size()));
  const bool ta = op.GetInt("transA", 0) != 0;
  const bool tb = op.GetInt("transB", 0) != 0;
  const Shape& a = in[0].shape();
  const Shape& b = in[1].shape();
  const int64_t m = ta ? a[1] : a[0];
  const int64_t k = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0];
  const int64_t n = tb ? b[0] : b[1];
  if (!shape::DimsFit(k, kb)) {
    return InvalidArgument(op.loc()) << "Gemm contraction sizes differ: lhs has " << k
                                     << " columns, rhs has " << kb << " rows";
  }
  Shape out = {m, n};
  if (in.size() == 3 && !shape::BroadcastsTo(in[2].shape(), out)) {
    return InvalidArgument(op.loc()) << "Gemm bias of shape [" << ShapeToString(in[2].shape())
                                     << "] cannot be broadcast to [" << ShapeToString(out) << "]";
  }
  return One(Type::Tensor(in[0].dtype(), std::move(out), device));
}

// LayerNormalization(x, scale[, bias]) and RMSNormalization(x, scale): scale
// and bias broadcast to the normalized dims [axis, rank); RMSNormalization has
// only the first result, of the scale's dtype (ONNX: Y is of type V, scale's).
Result InferLayerNorm(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  const Type& x = in[0];
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, shape::NormalizeAxis(op, op.GetInt("axis", -1), x.rank()));
  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  for (int i = 1; i < in.size(); ++i) {
    if (!shape::BroadcastsTo(in[i].shape(), normalized)) {
      return InvalidArgument(op.loc())
             << OpName(op) << " " << (i == 1 ? "scale" : "bias") << " of shape ["
             << ShapeToString(in[i].shape()) << "] does not fit the normalized shape ["
             << ShapeToString(normalized) << "]";
    }
  }
  // Mean and inverse standard deviation keep the leading dims and 1s after.
  Shape stats(x.shape().begin(), x.shape().begin() + axis);
  stats.resize(x.shape().size(), 1);
  Types out = {x, x.WithShape(stats), x.WithShape(stats)};
  out.resize(op.num_results());
  if (op.kind() == OpKind::kRMSNormalization) out[0] = x.WithDType(in[1].dtype());
  return out;
}

// ---- reductions and indexing

Result InferReduce(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  const Type& x = in[0];
  const bool keep = op.GetInt("keepdims", 1) != 0;
  if (in.size() == 2) {
    // Axes known only by count: the reduced dims are unknown, so is every extent.
    if (keep) return One(x.WithShape(Shape(x.shape().size(), kDynamicDim)));
    DISTIR_ASSIGN_OR_RETURN(int64_t n, StaticLength(op, in[1], 1));
    if (n > x.rank())
      return InvalidArgument(op.loc()) << OpName(op) << " reduces more axes than its input has";
    return One(x.WithShape(Shape(x.shape().size() - n, kDynamicDim)));
  }
  const Attribute* axes = op.FindAttr("axes");
  const bool all = axes == nullptr || axes->AsInts().empty();
  DISTIR_ASSIGN_OR_RETURN(
      Shape out,
      shape::ReduceShape(op, x.shape(), all ? Shape() : Shape(axes->AsInts()), all, keep));
  return One(x.WithShape(std::move(out)));
}

Result InferGather(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(DeviceId device, CheckCompute(op, in));
  const Type& data = in[0];
  const Type& indices = in[1];
  if (indices.dtype() != DType::kI64 && indices.dtype() != DType::kI32) {
    return InvalidArgument(op.loc())
           << "Gather indices must be i32 or i64, got " << DTypeName(indices.dtype());
  }
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", 0), data.rank()));
  Shape out(data.shape().begin(), data.shape().begin() + axis);
  out.insert(out.end(), indices.shape().begin(), indices.shape().end());
  out.insert(out.end(), data.shape().begin() + axis + 1, data.shape().end());
  return One(Type::Tensor(data.dtype(), std::move(out), device));
}

Result InferTranspose(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in));
  const Shape& s = in[0].shape();
  Shape perm(s.size());
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (const Attribute* a = op.FindAttr("perm")) perm = a->AsInts();
  Shape sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = sorted.size() == s.size();
  for (size_t i = 0; valid && i < sorted.size(); ++i) valid = sorted[i] == static_cast<int64_t>(i);
  if (!valid) {
    return InvalidArgument(op.loc())
           << "Transpose perm [" << JoinInts(perm, ", ") << "] is not a permutation of the "
           << s.size() << " axes of " << in[0].ToString();
  }
  Shape out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = s[perm[i]];
  return One(in[0].WithShape(std::move(out)));
}

// ---- shape manipulation

Result InferSplit(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  const Type& x = in[0];
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, shape::NormalizeAxis(op, op.GetInt("axis", 0), x.rank()));
  const int n = op.num_results();
  Shape sizes;
  if (in.size() == 2) {
    DISTIR_ASSIGN_OR_RETURN(int64_t len, StaticLength(op, in[1], 1));
    if (len != n) {
      return InvalidArgument(op.loc()) << "Split has " << n << " results, but its split input "
                                       << "lists " << len << " sizes";
    }
    sizes.assign(n, kDynamicDim);
  } else {
    const Attribute* split = op.FindAttr("split");
    const Shape given = split ? Shape(split->AsInts()) : Shape();
    DISTIR_ASSIGN_OR_RETURN(sizes,
                            shape::SplitSizes(op, x.shape()[axis], n, split ? &given : nullptr));
  }
  Types out;
  out.reserve(n);
  for (int64_t size : sizes) {
    Shape s = x.shape();
    s[axis] = size;
    out.push_back(x.WithShape(std::move(s)));
  }
  return out;
}

Result InferConcat(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(DeviceId device, CheckCompute(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, RequiredInt(op, "axis"));
  DISTIR_ASSIGN_OR_RETURN(Shape out, ConcatShape(op, in, axis));
  return One(Type::Tensor(in[0].dtype(), std::move(out), device));
}

Result InferSlice(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  const Type& x = in[0];
  // Bounds known only by count: the sliced axes (0..n-1 without an axes input,
  // any axis with one) get dynamic extents.
  Shape out = x.shape();
  if (in.size() >= 4) return One(x.WithShape(Shape(out.size(), kDynamicDim)));
  DISTIR_ASSIGN_OR_RETURN(int64_t n, StaticLength(op, in[1], 1));
  if (n > x.rank()) {
    return InvalidArgument(op.loc())
           << "Slice has " << n << " starts for rank-" << x.rank() << " input";
  }
  for (int64_t i = 0; i < n; ++i) out[i] = kDynamicDim;
  return One(x.WithShape(std::move(out)));
}

Result InferExpand(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  const Shape& s = in[0].shape();
  DISTIR_ASSIGN_OR_RETURN(int64_t len, StaticLength(op, in[1], 1));
  const size_t rank = std::max<size_t>(s.size(), len);
  Shape out(rank, kDynamicDim);
  // An input extent other than 1 survives any valid target (which is 1 or equal there).
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != 1) out[rank - s.size() + i] = s[i];
  }
  return One(in[0].WithShape(std::move(out)));
}

Result InferShape(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in));
  const int64_t rank = in[0].rank();
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(op.GetInt("start", 0));
  const int64_t end = clamp(op.GetInt("end", rank));
  return One(Type::Tensor(DType::kI64, {std::max<int64_t>(end - start, 0)}, in[0].device()));
}

Result InferReshape(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_ASSIGN_OR_RETURN(int64_t len, StaticLength(op, in[1], 1));
  return One(in[0].WithShape(Shape(len, kDynamicDim)));
}

Result InferUnsqueeze(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  if (in.size() == 2) {
    DISTIR_ASSIGN_OR_RETURN(int64_t len, StaticLength(op, in[1], 1));
    return One(in[0].WithShape(Shape(in[0].rank() + len, kDynamicDim)));
  }
  const Attribute* axes = op.FindAttr("axes");
  if (axes == nullptr) return MissingAttr(op, "axes");
  DISTIR_ASSIGN_OR_RETURN(Shape out, shape::UnsqueezeShape(op, in[0].shape(), axes->AsInts()));
  return One(in[0].WithShape(std::move(out)));
}

Result InferSqueeze(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  if (in.size() == 2) {
    DISTIR_ASSIGN_OR_RETURN(int64_t len, StaticLength(op, in[1], 1));
    if (len > in[0].rank()) {
      return InvalidArgument(op.loc())
             << "Squeeze removes " << len << " axes of a rank-" << in[0].rank() << " input";
    }
    return One(in[0].WithShape(Shape(in[0].rank() - len, kDynamicDim)));
  }
  const Attribute* axes = op.FindAttr("axes");
  const bool all = axes == nullptr;
  DISTIR_ASSIGN_OR_RETURN(
      Shape out,
      shape::SqueezeShape(op, in[0].shape(), all ? Shape() : Shape(axes->AsInts()), all));
  return One(in[0].WithShape(std::move(out)));
}

Result InferConstant(const Op& op, Args /*in*/) {
  const Attribute* value = op.FindAttr("value");
  if (value == nullptr) return MissingAttr(op, "value");
  const Attribute* device = op.FindAttr("device");
  const DenseTensor& t = value->AsTensor();
  if (!t.IsWellFormed()) {
    return InvalidArgument(op.loc()) << "Constant value " << t.ToString()
                                     << " does not have one element per position of its shape";
  }
  return One(Type::Tensor(t.dtype, t.shape, device ? device->AsDevice() : DeviceId()));
}

Result InferConstantOfShape(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t len, StaticLength(op, in[0], 0));
  const Attribute* value = op.FindAttr("value");
  const DType dtype = value ? value->AsTensor().dtype : DType::kF32;
  return One(Type::Tensor(dtype, Shape(len, kDynamicDim), in[0].device()));
}

Result InferRange(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(DeviceId device, CheckCompute(op, in, true));
  for (int i = 0; i < 3; ++i) {
    if (in[i].is_tensor() && in[i].rank() != 0) {
      return InvalidArgument(op.loc())
             << "Range input " << i << " must be rank 0, got " << in[i].ToString();
    }
  }
  DISTIR_RETURN_IF_ERROR(SameDTypes(op, in, 0, 3));
  return One(Type::Tensor(in[0].dtype(), {kDynamicDim}, device));
}

Result InferTuple(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(SharedDevice(op, in).status());
  Types elements;
  elements.reserve(in.size());
  for (int i = 0; i < in.size(); ++i) elements.push_back(in[i]);
  return One(Type::Tuple(std::move(elements)));
}

Result InferUnpackTuple(const Op& op, Args in) {
  if (!in[0].is_tuple()) {
    return InvalidArgument(op.loc())
           << "UnpackTuple input must be a tuple, got " << in[0].ToString();
  }
  const Types& elements = in[0].elements();
  if (static_cast<int>(elements.size()) != op.num_results()) {
    return InvalidArgument(op.loc()) << "UnpackTuple of a " << elements.size()
                                     << "-element tuple has " << op.num_results() << " results";
  }
  return elements;
}

}  // namespace

void RegisterShapeRules(ShapeDomain& domain) {
  for (OpKind k : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kSum,
                   OpKind::kMax, OpKind::kMin}) {
    domain.Register(k, InferArith);
  }
  domain.Register(OpKind::kPow, InferPow);
  domain.Register(OpKind::kEqual, InferCompare);
  domain.Register(OpKind::kLess, InferCompare);
  domain.Register(OpKind::kWhere, InferWhere);
  domain.Register(OpKind::kNot, InferNot);
  for (OpKind k : {OpKind::kNeg, OpKind::kSqrt, OpKind::kExp, OpKind::kRelu, OpKind::kGelu,
                   OpKind::kErf, OpKind::kTanh, OpKind::kSigmoid, OpKind::kSin, OpKind::kCos}) {
    domain.Register(k, InferUnary);
  }
  domain.Register(OpKind::kIdentity, InferIdentity);
  // Global-view sharding ops keep the global type: they change only the layout.
  for (OpKind k : {OpKind::kShard, OpKind::kMeshAllReduce, OpKind::kMeshReduceScatter,
                   OpKind::kMeshAllGather, OpKind::kMeshAllToAll, OpKind::kMeshSlice,
                   OpKind::kMeshTransfer}) {
    domain.Register(k, InferIdentity);
  }
  domain.Register(OpKind::kSoftmax, InferSoftmax);
  domain.Register(OpKind::kLayerNormalization, InferLayerNorm);
  domain.Register(OpKind::kRMSNormalization, InferLayerNorm);
  domain.Register(OpKind::kReduceMean, InferReduce);
  domain.Register(OpKind::kReduceSum, InferReduce);
  domain.Register(OpKind::kCast, InferCast);
  domain.Register(OpKind::kTrilu, InferTrilu);
  domain.Register(OpKind::kMatMul, InferMatMul);
  domain.Register(OpKind::kGemm, InferGemm);
  domain.Register(OpKind::kGather, InferGather);
  domain.Register(OpKind::kTranspose, InferTranspose);
  domain.Register(OpKind::kSplit, InferSplit);
  domain.Register(OpKind::kConcat, InferConcat);
  domain.Register(OpKind::kSlice, InferSlice);
  domain.Register(OpKind::kExpand, InferExpand);
  domain.Register(OpKind::kShape, InferShape);
  domain.Register(OpKind::kReshape, InferReshape);
  domain.Register(OpKind::kUnsqueeze, InferUnsqueeze);
  domain.Register(OpKind::kSqueeze, InferSqueeze);
  domain.Register(OpKind::kConstant, InferConstant);
  domain.Register(OpKind::kConstantOfShape, InferConstantOfShape);
  domain.Register(OpKind::kRange, InferRange);
  domain.Register(OpKind::kTuple, InferTuple);
  domain.Register(OpKind::kUnpackTuple, InferUnpackTuple);
  shape::RegisterTrainingShapeRules(domain);
  shape::RegisterCommunicationShapeRules(domain);
  shape::RegisterTransformerShapeRules(domain);
}

}  // namespace distir
