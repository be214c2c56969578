// Rules of the mixed domain: concrete rules for shape arithmetic on small
// integer tensors, and mixed rules in which a concrete shape-like argument
// (Reshape's target, Slice's bounds, Unsqueeze's axes, ...) gives an abstract
// tensor a static shape. Every rule first runs the shape rule on the
// arguments' types, so the two domains check and report ill-typed ops alike;
// then it computes what the concrete arguments make exact. Ops and argument
// patterns without a rule here fall back to the shape rules.

#include <cmath>

#include "interp/concrete_kernels.h"
#include "interp/mixed_domain.h"
#include "interp/shape_domain.h"
#include "interp/shape_util.h"

namespace distir {
namespace {

using concrete::ToInts;
using shape::Shape;
using Args = ArgList<MixedValue>;
using Values = std::vector<MixedValue>;
using Result = StatusOr<Values>;

// The shape rule of `op` applied to the types of `in`.
StatusOr<std::vector<Type>> ShapeRule(const Op& op, Args in) {
  constexpr int kInline = 8;
  const Type* inline_ptrs[kInline];
  std::vector<const Type*> heap;
  const Type** ptrs = inline_ptrs;
  if (in.size() > kInline) {
    heap.resize(in.size());
    ptrs = heap.data();
  }
  for (int i = 0; i < in.size(); ++i) ptrs[i] = &in[i].type();
  return DefaultShapeDomain().Apply(op, ArgList<Type>(ptrs, in.size()));
}

Result One(MixedValue v) {
  Values out;
  out.push_back(std::move(v));
  return out;
}

// The fallback: abstract interpretation by the shape rules.
Result AbstractRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  Values out;
  out.reserve(types.size());
  for (Type& t : types) out.emplace_back(std::move(t));
  return out;
}

// `x` given the (static) shape of `type`: concrete when x is, abstract otherwise.
MixedValue Reshaped(const MixedValue& x, const Type& type) {
  if (!x.is_concrete() || !type.HasStaticShape()) return MixedValue(type);
  DenseTensor t = x.tensor();
  t.shape = type.shape();
  return MixedValue::Make(std::move(t), type.device());
}

// A concrete shape argument (ConstantOfShape, Expand): extents >= 0 and an
// element count that fits in int64.
Status CheckConcreteShape(const Op& op, const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) {
      return InvalidArgument(op.loc())
             << shape::OpName(op) << " shape must have extents >= 0 and fit in int64, got ["
             << ShapeToString(shape) << "]";
    }
  }
  return Status::Ok();
}

// ---- sources of concrete values

Result ConstantRule(const Op& op, Args in) {
  // The shape rule checked that the value is present and well formed.
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  return One(MixedValue::Make(op.FindAttr("value")->AsTensor(), types[0].device()));
}

Result ShapeOpRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  const Type& x = in[0].type();
  if (!x.HasStaticShape()) return One(MixedValue(types[0]));
  const int64_t rank = x.rank();
  int64_t start = op.GetInt("start", 0);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  const int64_t count = types[0].shape()[0];
  DenseTensor t{DType::kI64, {count}, {}};
  for (int64_t i = 0; i < count; ++i) t.values.push_back(static_cast<double>(x.shape()[start + i]));
  return One(MixedValue::Make(std::move(t), types[0].device()));
}

Result ConstantOfShapeRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  const Shape shape = ToInts(in[0].tensor());
  DISTIR_RETURN_IF_ERROR(CheckConcreteShape(op, shape));
  const Type type = types[0].WithShape(shape);
  const Attribute* value = op.FindAttr("value");
  if (!IsIntegral(type.dtype()) || ShapeNumElements(shape) > kMaxConcreteElements) {
    return One(MixedValue(type));
  }
  const double fill = value && !value->AsTensor().values.empty() ? value->AsTensor().values[0] : 0;
  DenseTensor t{type.dtype(), shape, std::vector<double>(ShapeNumElements(shape), fill)};
  return One(MixedValue::Make(std::move(t), type.device()));
}

Result RangeRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  // The shape rule checked that the three inputs have rank 0: one element each.
  const double start = in[0].tensor().values[0];
  const double delta = in[2].tensor().values[0];
  DISTIR_ASSIGN_OR_RETURN(int64_t n,
                          shape::RangeLength(op, start, in[1].tensor().values[0], delta));
  const Type type = types[0].WithShape({n});
  if (!IsIntegral(type.dtype()) || n > kMaxConcreteElements) return One(MixedValue(type));
  DenseTensor t{type.dtype(), {n}, std::vector<double>(n)};
  for (int64_t i = 0; i < n; ++i) t.values[i] = start + static_cast<double>(i) * delta;
  return One(MixedValue::Make(std::move(t), type.device()));
}

// ---- elementwise arithmetic on concrete tensors

double Apply(OpKind kind, const double* a, int n) {
  switch (kind) {
    case OpKind::kAdd:
      return a[0] + a[1];
    case OpKind::kSub:
      return a[0] - a[1];
    case OpKind::kMul:
      return a[0] * a[1];
    case OpKind::kDiv:
      return a[0] / a[1];
    case OpKind::kEqual:
      return a[0] == a[1] ? 1 : 0;
    case OpKind::kLess:
      return a[0] < a[1] ? 1 : 0;
    case OpKind::kWhere:
      return a[0] != 0 ? a[1] : a[2];
    case OpKind::kNot:
      return a[0] == 0 ? 1 : 0;
    case OpKind::kNeg:
      return -a[0];
    default:
      break;
  }
  double r = a[0];
  for (int i = 1; i < n; ++i) {
    if (kind == OpKind::kSum) r += a[i];
    if (kind == OpKind::kMax) r = std::max(r, a[i]);
    if (kind == OpKind::kMin) r = std::min(r, a[i]);
  }
  return r;
}

Result ElementwiseRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  std::vector<const DenseTensor*> tensors(in.size());
  for (int i = 0; i < in.size(); ++i) tensors[i] = &in[i].tensor();
  const bool integral = IsIntegral(types[0].dtype());
  if (op.kind() == OpKind::kDiv && integral) {
    for (double v : in[1].tensor().values) {
      if (v == 0) return InvalidArgument(op.loc()) << "Div divides an integer by zero";
    }
  }
  const OpKind kind = op.kind();
  const int n = in.size();
  // A rank-0 scalar result keeps the tensor form of its operands.
  const Type& type = types[0];
  const Shape out_shape = type.is_tensor() ? Shape(type.shape()) : Shape();
  DenseTensor t = concrete::BroadcastMap(tensors, out_shape, type.dtype(),
                                         [kind, n](const double* a) { return Apply(kind, a, n); });
  return One(MixedValue::Make(std::move(t), type.device()));
}

Result CastRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  DenseTensor t = in[0].tensor();
  t.dtype = types[0].dtype();
  concrete::RoundToDType(t);
  return One(MixedValue::Make(std::move(t), types[0].device()));
}

// ---- indexing and shape manipulation

Result GatherRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", 0), in[0].type().rank()));
  DISTIR_ASSIGN_OR_RETURN(DenseTensor t,
                          concrete::Gather(op, in[0].tensor(), in[1].tensor(), axis));
  return One(MixedValue::Make(std::move(t), types[0].device()));
}

Result ConcatRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", 0), in[0].type().rank()));
  std::vector<const DenseTensor*> tensors(in.size());
  for (int i = 0; i < in.size(); ++i) tensors[i] = &in[i].tensor();
  return One(MixedValue::Make(concrete::Concat(tensors, axis), types[0].device()));
}

// Unsqueeze, Squeeze, Identity, Send of a concrete input with attribute axes:
// the shape rule's type is exact, the elements are unchanged.
Result SameElementsRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  return One(Reshaped(in[0], types[0]));
}

Result ReshapeRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  DISTIR_ASSIGN_OR_RETURN(Shape out,
                          shape::ReshapeShape(op, in[0].type().shape(), ToInts(in[1].tensor()),
                                              op.GetInt("allowzero", 0) != 0));
  return One(Reshaped(in[0], types[0].WithShape(std::move(out))));
}

Result UnsqueezeAxesRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  DISTIR_ASSIGN_OR_RETURN(Shape out,
                          shape::UnsqueezeShape(op, in[0].type().shape(), ToInts(in[1].tensor())));
  return One(Reshaped(in[0], types[0].WithShape(std::move(out))));
}

Result SqueezeAxesRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  DISTIR_ASSIGN_OR_RETURN(
      Shape out, shape::SqueezeShape(op, in[0].type().shape(), ToInts(in[1].tensor()), false));
  return One(Reshaped(in[0], types[0].WithShape(std::move(out))));
}

Result ExpandRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  const Shape target = ToInts(in[1].tensor());
  DISTIR_RETURN_IF_ERROR(CheckConcreteShape(op, target));
  DISTIR_ASSIGN_OR_RETURN(Shape out, shape::Broadcast(op, in[0].type().shape(), target));
  const Type type = types[0].WithShape(out);
  if (!in[0].is_concrete() || ShapeNumElements(out) > kMaxConcreteElements) {
    return One(MixedValue(type));
  }
  DenseTensor t = concrete::BroadcastMap({&in[0].tensor()}, out, type.dtype(),
                                         [](const double* a) { return a[0]; });
  return One(MixedValue::Make(std::move(t), type.device()));
}

Result SliceRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  const Shape axes = in.size() > 3 ? ToInts(in[3].tensor()) : Shape();
  const Shape steps = in.size() > 4 ? ToInts(in[4].tensor()) : Shape();
  DISTIR_ASSIGN_OR_RETURN(std::vector<shape::SliceDim> dims,
                          shape::ResolveSlice(op, in[0].type().shape(), ToInts(in[1].tensor()),
                                              ToInts(in[2].tensor()), axes, steps));
  Shape out(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) out[d] = dims[d].count;
  const Type type = types[0].WithShape(out);
  if (!in[0].is_concrete()) return One(MixedValue(type));
  return One(MixedValue::Make(concrete::Slice(in[0].tensor(), dims), type.device()));
}

Result ReduceRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  const Type& x = in[0].type();
  const Attribute* attr = op.FindAttr("axes");
  Shape axes = in.size() == 2 ? ToInts(in[1].tensor()) : attr ? Shape(attr->AsInts()) : Shape();
  DISTIR_ASSIGN_OR_RETURN(Shape norm, shape::NormalizeAxes(op, axes, x.rank()));
  const bool keep = op.GetInt("keepdims", 1) != 0;
  DISTIR_ASSIGN_OR_RETURN(Shape out, shape::ReduceShape(op, x.shape(), norm, norm.empty(), keep));
  const Type type = types[0].WithShape(out);
  if (!in[0].is_concrete()) return One(MixedValue(type));
  std::vector<bool> reduced(x.rank(), norm.empty());
  for (int64_t a : norm) reduced[a] = true;
  DenseTensor t = concrete::Reduce(in[0].tensor(), reduced, out, op.kind() == OpKind::kReduceMean);
  return One(MixedValue::Make(std::move(t), type.device()));
}

Result SplitRule(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ShapeRule(op, in));
  const Type& x = in[0].type();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, shape::NormalizeAxis(op, op.GetInt("axis", 0), x.rank()));
  Shape sizes;
  for (const Type& t : types) sizes.push_back(t.shape()[axis]);
  if (in.size() == 2) {
    const Shape given = ToInts(in[1].tensor());
    DISTIR_ASSIGN_OR_RETURN(sizes,
                            shape::SplitSizes(op, x.shape()[axis], op.num_results(), &given));
  }
  Values out;
  int64_t start = 0;
  for (int r = 0; r < op.num_results(); ++r) {
    Shape s = x.shape();
    s[axis] = sizes[r];
    const Type type = types[r].WithShape(std::move(s));
    if (!in[0].is_concrete()) {
      out.emplace_back(type);
    } else {
      std::vector<shape::SliceDim> dims;
      for (int64_t d = 0; d < x.rank(); ++d) dims.push_back({0, 1, x.shape()[d]});
      dims[axis] = {start, 1, sizes[r]};
      out.push_back(MixedValue::Make(concrete::Slice(in[0].tensor(), dims), type.device()));
    }
    start += sizes[r];
  }
  return out;
}

}  // namespace

void RegisterMixedRules(MixedDomain& domain) {
  using P = ArgPattern;
  domain.SetFallback(AbstractRule);
  domain.Register(OpKind::kConstant, ConstantRule);
  domain.Register(OpKind::kShape, ShapeOpRule);
  domain.Register(OpKind::kConstantOfShape, ConstantOfShapeRule, P::ConcreteAt({0}));
  domain.Register(OpKind::kRange, RangeRule, P::AllConcrete());
  for (OpKind k :
       {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kEqual, OpKind::kLess,
        OpKind::kWhere, OpKind::kNot, OpKind::kNeg, OpKind::kSum, OpKind::kMax, OpKind::kMin}) {
    domain.Register(k, ElementwiseRule, P::AllConcrete());
  }
  domain.Register(OpKind::kCast, CastRule, P::ConcreteAt({0}));
  domain.Register(OpKind::kGather, GatherRule, P::ConcreteAt({0, 1}));
  domain.Register(OpKind::kConcat, ConcatRule, P::AllConcrete());
  for (OpKind k : {OpKind::kIdentity, OpKind::kSend, OpKind::kShard}) {
    domain.Register(k, SameElementsRule, P::ConcreteAt({0}));
  }
  domain.Register(OpKind::kUnsqueeze, SameElementsRule, P::ConcreteAt({0}, 1));
  domain.Register(OpKind::kUnsqueeze, UnsqueezeAxesRule, P::ConcreteAt({1}, 2));
  domain.Register(OpKind::kSqueeze, SameElementsRule, P::ConcreteAt({0}, 1));
  domain.Register(OpKind::kSqueeze, SqueezeAxesRule, P::ConcreteAt({1}, 2));
  domain.Register(OpKind::kReshape, ReshapeRule, P::ConcreteAt({1}));
  domain.Register(OpKind::kExpand, ExpandRule, P::ConcreteAt({1}));
  domain.Register(OpKind::kSlice, SliceRule, P::ConcreteAt({1, 2}, 3));
  domain.Register(OpKind::kSlice, SliceRule, P::ConcreteAt({1, 2, 3}, 4));
  domain.Register(OpKind::kSlice, SliceRule, P::ConcreteAt({1, 2, 3, 4}, 5));
  for (OpKind k : {OpKind::kReduceSum, OpKind::kReduceMean}) {
    domain.Register(k, ReduceRule, P::ConcreteAt({0}, 1));
    domain.Register(k, ReduceRule, P::ConcreteAt({1}, 2));
  }
  domain.Register(OpKind::kSplit, SplitRule, P::ConcreteAt({0}, 1));
  domain.Register(OpKind::kSplit, SplitRule, P::ConcreteAt({1}, 2));
}

}  // namespace distir
