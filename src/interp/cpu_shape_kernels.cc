// CPU kernels of the indexing, shape and constant ops (Gather, Transpose,
// Split, Concat, Slice, Expand, Shape, Reshape, (Un)Squeeze, Constant,
// ConstantOfShape, Range, Identity, Tuple, UnpackTuple). Where the shape rule
// leaves extents dynamic because they depend on tensor contents (Reshape's
// target, Slice's bounds, ...), the kernel resolves them with the same
// shape_util functions the mixed domain uses, so both report bad contents alike.

#include <numeric>

#include "interp/concrete_kernels.h"
#include "interp/cpu_kernels.h"

namespace distir::cpu {
namespace {

// A shape given as tensor contents: extents >= 0.
Status CheckShapeContents(const Op& op, const Shape& shape) {
  for (int64_t d : shape) {
    if (d < 0) {
      return InvalidArgument(op.loc())
             << shape::OpName(op) << " shape must have extents >= 0, got [" << ShapeToString(shape)
             << "]";
    }
  }
  return Status::Ok();
}

// The same elements under another shape.
HostValue Reshaped(const Type& rule_type, const HostValue& x, const Shape& shape) {
  DenseTensor t = x.tensor();
  t.shape = shape;
  return MakeResult(rule_type, std::move(t));
}

Result IdentityKernel(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(ResultTypes(op, in).status());
  return One(in[0]);
}

Result GatherKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& data = in[0].tensor();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", 0), data.shape.size()));
  DISTIR_ASSIGN_OR_RETURN(DenseTensor t, concrete::Gather(op, data, in[1].tensor(), axis));
  return One(MakeResult(types[0], std::move(t)));
}

Result TransposeKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  const size_t rank = x.shape.size();
  Shape perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (const Attribute* a = op.FindAttr("perm")) perm = a->AsInts();
  const Shape in_strides = Strides(x.shape);
  Shape out_shape(rank), strides(rank);  // strides: input stride of each output dim
  for (size_t d = 0; d < rank; ++d) {
    out_shape[d] = x.shape[perm[d]];
    strides[d] = in_strides[perm[d]];
  }
  DenseTensor y{x.dtype, out_shape, std::vector<double>(x.values.size())};
  Shape pos(rank, 0);
  int64_t src = 0;
  for (double& v : y.values) {
    v = x.values[src];
    for (size_t d = rank; d-- > 0;) {
      src += strides[d];
      if (++pos[d] < out_shape[d]) break;
      src -= strides[d] * out_shape[d];
      pos[d] = 0;
    }
  }
  return One(MakeResult(types[0], std::move(y)));
}

// Part `r` of Split: extents `sizes[r]` along `axis`, starting after the earlier parts.
Result SplitKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", 0), x.shape.size()));
  Shape sizes;
  for (const Type& t : types) sizes.push_back(t.shape()[axis]);
  if (in.size() == 2) {
    const Shape given = Ints(in[1]);
    DISTIR_ASSIGN_OR_RETURN(sizes, shape::SplitSizes(op, x.shape[axis], op.num_results(), &given));
  }
  Values out;
  int64_t start = 0;
  for (int r = 0; r < op.num_results(); ++r) {
    std::vector<shape::SliceDim> dims;
    for (int64_t extent : x.shape) dims.push_back({0, 1, extent});
    dims[axis] = {start, 1, sizes[r]};
    DenseTensor part = concrete::Slice(x, dims);
    out.push_back(MakeResult(types[r], std::move(part)));
    start += sizes[r];
  }
  return out;
}

Result ConcatKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", 0), in[0].type().rank()));
  std::vector<const DenseTensor*> tensors;
  for (int i = 0; i < in.size(); ++i) tensors.push_back(&in[i].tensor());
  return One(MakeResult(types[0], concrete::Concat(tensors, axis)));
}

Result SliceKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const Shape axes = in.size() > 3 ? Ints(in[3]) : Shape();
  const Shape steps = in.size() > 4 ? Ints(in[4]) : Shape();
  DISTIR_ASSIGN_OR_RETURN(
      std::vector<shape::SliceDim> dims,
      shape::ResolveSlice(op, in[0].tensor().shape, Ints(in[1]), Ints(in[2]), axes, steps));
  DenseTensor t = concrete::Slice(in[0].tensor(), dims);
  return One(MakeResult(types[0], std::move(t)));
}

// Bidirectional (numpy) broadcast of the input with the target shape.
Result ExpandKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const Shape target = Ints(in[1]);
  DISTIR_RETURN_IF_ERROR(CheckShapeContents(op, target));
  const DenseTensor& x = in[0].tensor();
  DISTIR_ASSIGN_OR_RETURN(Shape out, shape::Broadcast(op, x.shape, target));
  const std::vector<int64_t> index = BroadcastIndex(x.shape, out);
  DenseTensor y{x.dtype, out, std::vector<double>(index.size())};
  for (size_t i = 0; i < index.size(); ++i) y.values[i] = x.values[index[i]];
  return One(MakeResult(types[0], std::move(y)));
}

Result ShapeKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const Shape& s = in[0].tensor().shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t start = op.GetInt("start", 0);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  DenseTensor t{DType::kI64, ShapeOfType(types[0]), {}};
  for (int64_t i = 0; i < t.shape[0]; ++i) t.values.push_back(static_cast<double>(s[start + i]));
  return One(MakeResult(types[0], std::move(t)));
}

Result ReshapeKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(Shape out, shape::ReshapeShape(op, in[0].tensor().shape, Ints(in[1]),
                                                         op.GetInt("allowzero", 0) != 0));
  return One(Reshaped(types[0], in[0], out));
}

Result UnsqueezeKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  if (in.size() == 1) return One(Reshaped(types[0], in[0], types[0].shape()));
  DISTIR_ASSIGN_OR_RETURN(Shape out, shape::UnsqueezeShape(op, in[0].tensor().shape, Ints(in[1])));
  return One(Reshaped(types[0], in[0], out));
}

Result SqueezeKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  if (in.size() == 1) return One(Reshaped(types[0], in[0], types[0].shape()));
  DISTIR_ASSIGN_OR_RETURN(Shape out,
                          shape::SqueezeShape(op, in[0].tensor().shape, Ints(in[1]), false));
  return One(Reshaped(types[0], in[0], out));
}

Result ConstantKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  return One(MakeResult(types[0], op.FindAttr("value")->AsTensor()));
}

Result ConstantOfShapeKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const Shape shape = Ints(in[0]);
  DISTIR_RETURN_IF_ERROR(CheckShapeContents(op, shape));
  const Attribute* value = op.FindAttr("value");
  if (value != nullptr && value->AsTensor().values.size() != 1) {
    return InvalidArgument(op.loc())
           << "ConstantOfShape value must have one element, got " << value->AsTensor().ToString();
  }
  const double fill = value != nullptr ? value->AsTensor().values[0] : 0.0;
  DenseTensor t{types[0].dtype(), shape, std::vector<double>(ShapeNumElements(shape), fill)};
  return One(MakeResult(types[0], std::move(t)));
}

// start, start + delta, ... while below limit (above it for a negative delta).
Result RangeKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const double start = in[0].tensor().values[0];
  const double delta = in[2].tensor().values[0];
  DISTIR_ASSIGN_OR_RETURN(int64_t n,
                          shape::RangeLength(op, start, in[1].tensor().values[0], delta));
  DenseTensor t{types[0].dtype(), {n}, std::vector<double>(n)};
  for (int64_t i = 0; i < n; ++i) t.values[i] = start + static_cast<double>(i) * delta;
  return One(MakeResult(types[0], std::move(t)));
}

Result TupleKernel(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(ResultTypes(op, in).status());
  Values elements;
  for (int i = 0; i < in.size(); ++i) elements.push_back(in[i]);
  return One(HostValue::Tuple(std::move(elements)));
}

Result UnpackTupleKernel(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(ResultTypes(op, in).status());
  return in[0].elements();
}

}  // namespace

void RegisterShapeKernels(CpuDomain& domain) {
  domain.Register(OpKind::kIdentity, IdentityKernel);
  // On the global view a layout change is the identity (a partial value's
  // global value is already its reduction).
  for (OpKind k : {OpKind::kShard, OpKind::kMeshAllReduce, OpKind::kMeshReduceScatter,
                   OpKind::kMeshAllGather, OpKind::kMeshAllToAll, OpKind::kMeshSlice,
                   OpKind::kMeshTransfer}) {
    domain.Register(k, IdentityKernel);
  }
  domain.Register(OpKind::kGather, GatherKernel);
  domain.Register(OpKind::kTranspose, TransposeKernel);
  domain.Register(OpKind::kSplit, SplitKernel);
  domain.Register(OpKind::kConcat, ConcatKernel);
  domain.Register(OpKind::kSlice, SliceKernel);
  domain.Register(OpKind::kExpand, ExpandKernel);
  domain.Register(OpKind::kShape, ShapeKernel);
  domain.Register(OpKind::kReshape, ReshapeKernel);
  domain.Register(OpKind::kUnsqueeze, UnsqueezeKernel);
  domain.Register(OpKind::kSqueeze, SqueezeKernel);
  domain.Register(OpKind::kConstant, ConstantKernel);
  domain.Register(OpKind::kConstantOfShape, ConstantOfShapeKernel);
  domain.Register(OpKind::kRange, RangeKernel);
  domain.Register(OpKind::kTuple, TupleKernel);
  domain.Register(OpKind::kUnpackTuple, UnpackTupleKernel);
}

}  // namespace distir::cpu
