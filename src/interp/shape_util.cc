#include "interp/shape_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/str_util.h"

namespace distir::shape {
namespace {

// Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "[" + s + "]".
std::string List(const Shape& values) {
  std::string out = "[";
  out += JoinInts(values, ", ");
  out += ']';
  return out;
}

// Product of the known extents; sets *dynamic when one is not known and
// *overflow when the product does not fit in int64.
int64_t KnownProduct(const Shape& s, bool* dynamic, bool* overflow) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d == kDynamicDim) {
      *dynamic = true;
      continue;
    }
    if (__builtin_mul_overflow(n, d, &n)) *overflow = true;
  }
  return n;
}

int64_t BroadcastDim(int64_t a, int64_t b) {
  if (a == 1) return b;
  if (b == 1) return a;
  if (a == kDynamicDim) return b;
  return a;
}

// Clamps one Slice bound as ONNX does, given a known extent.
int64_t ClampBound(int64_t v, int64_t extent, bool positive_step, bool is_end) {
  if (v < 0) v = v + extent;  // may stay negative; clamped below
  if (positive_step) return std::clamp<int64_t>(v, 0, extent);
  return std::clamp<int64_t>(v, is_end ? -1 : 0, extent - 1);
}

}  // namespace

bool ShapesFit(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!DimsFit(a[i], b[i])) return false;
  }
  return true;
}

StatusOr<int64_t> NormalizeAxis(const Op& op, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument(op.loc())
           << "axis " << axis << " is out of range for rank-" << rank << " input of " << OpName(op);
  }
  return axis < 0 ? axis + rank : axis;
}

StatusOr<Shape> NormalizeAxes(const Op& op, const Shape& axes, int64_t rank) {
  Shape out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    DISTIR_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(op, a, rank));
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return InvalidArgument(op.loc())
             << OpName(op) << " axes must be distinct, got " << List(axes);
    }
    out.push_back(n);
  }
  return out;
}

StatusOr<Shape> Broadcast(const Op& op, const Shape& a, const Shape& b) {
  if (a == b) return a;
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1 && da != kDynamicDim && db != kDynamicDim) {
      return InvalidArgument(op.loc())
             << OpName(op) << " operands cannot be broadcast together: shapes [" << ShapeToString(a)
             << "] and [" << ShapeToString(b) << "] differ at dimension " << i << " of the result ("
             << da << " vs " << db << ")";
    }
    out[i] = BroadcastDim(da, db);
  }
  return out;
}

bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != 1 && !DimsFit(from[i], to[offset + i])) return false;
  }
  return true;
}

StatusOr<Shape> ReshapeShape(const Op& op, const Shape& in, const Shape& target, bool allow_zero) {
  Shape out = target;
  int infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allow_zero) {
      if (i >= in.size()) {
        return InvalidArgument(op.loc())
               << "Reshape target " << List(target) << " copies dimension " << i
               << " (0) of a rank-" << in.size() << " input";
      }
      out[i] = in[i];
    } else if (out[i] == -1) {
      if (infer_at >= 0) {
        return InvalidArgument(op.loc())
               << "Reshape target may contain at most one -1, got " << List(target);
      }
      infer_at = static_cast<int>(i);
    } else if (out[i] < 0) {
      return InvalidArgument(op.loc())
             << "Reshape target has a negative extent " << out[i] << " in " << List(target);
    }
  }
  bool in_dynamic = false;
  bool out_dynamic = false;
  bool overflow = false;
  const int64_t in_count = KnownProduct(in, &in_dynamic, &overflow);
  if (infer_at >= 0) out[infer_at] = 1;
  const int64_t out_count = KnownProduct(out, &out_dynamic, &overflow);
  if (overflow) {
    return InvalidArgument(op.loc()) << "Reshape element count overflows: input ["
                                     << ShapeToString(in) << "], target " << List(target);
  }
  if (infer_at >= 0) {
    if (in_dynamic || out_dynamic) {
      out[infer_at] = kDynamicDim;
      return out;
    }
    if (out_count == 0 || in_count % out_count != 0) {
      return InvalidArgument(op.loc()) << "Reshape cannot infer the -1 in " << List(target)
                                       << " from an input of " << in_count << " elements";
    }
    out[infer_at] = in_count / out_count;
    return out;
  }
  if (!in_dynamic && !out_dynamic && in_count != out_count) {
    return InvalidArgument(op.loc())
           << "Reshape must keep the element count: input [" << ShapeToString(in) << "] has "
           << in_count << " elements, target " << List(target) << " has " << out_count;
  }
  return out;
}

StatusOr<Shape> UnsqueezeShape(const Op& op, const Shape& in, const Shape& axes) {
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  DISTIR_ASSIGN_OR_RETURN(Shape norm, NormalizeAxes(op, axes, out_rank));
  Shape out;
  out.reserve(out_rank);
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (std::find(norm.begin(), norm.end(), i) != norm.end()) {
      out.push_back(1);
    } else {
      out.push_back(in[next++]);
    }
  }
  return out;
}

StatusOr<Shape> SqueezeShape(const Op& op, const Shape& in, const Shape& axes, bool all_ones) {
  if (all_ones) {
    Shape out;
    for (int64_t d : in) {
      if (d != 1) out.push_back(d);
    }
    return out;
  }
  DISTIR_ASSIGN_OR_RETURN(Shape norm, NormalizeAxes(op, axes, static_cast<int64_t>(in.size())));
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    bool squeezed = std::find(norm.begin(), norm.end(), static_cast<int64_t>(i)) != norm.end();
    if (!squeezed) {
      out.push_back(in[i]);
      continue;
    }
    if (in[i] != 1 && in[i] != kDynamicDim) {
      return InvalidArgument(op.loc()) << "Squeeze axis " << i << " must have extent 1, got "
                                       << in[i] << " in [" << ShapeToString(in) << "]";
    }
  }
  return out;
}

StatusOr<Shape> ReduceShape(const Op& op, const Shape& in, const Shape& axes, bool reduce_all,
                            bool keep_dims) {
  Shape norm;
  if (!reduce_all) {
    DISTIR_ASSIGN_OR_RETURN(norm, NormalizeAxes(op, axes, static_cast<int64_t>(in.size())));
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    bool reduced =
        reduce_all || std::find(norm.begin(), norm.end(), static_cast<int64_t>(i)) != norm.end();
    if (!reduced) {
      out.push_back(in[i]);
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  return out;
}

StatusOr<std::vector<SliceDim>> ResolveSlice(const Op& op, const Shape& in, const Shape& starts,
                                             const Shape& ends, const Shape& axes,
                                             const Shape& steps) {
  const int64_t rank = static_cast<int64_t>(in.size());
  const size_t n = starts.size();
  if (ends.size() != n || (!axes.empty() && axes.size() != n) ||
      (!steps.empty() && steps.size() != n)) {
    return InvalidArgument(op.loc()) << "Slice starts, ends, axes and steps must have one "
                                        "length, got starts "
                                     << List(starts) << " and ends " << List(ends);
  }
  Shape all_axes(n);
  for (size_t i = 0; i < n; ++i) all_axes[i] = axes.empty() ? static_cast<int64_t>(i) : axes[i];
  DISTIR_ASSIGN_OR_RETURN(Shape norm, NormalizeAxes(op, all_axes, rank));
  std::vector<SliceDim> dims(in.size());
  for (size_t d = 0; d < in.size(); ++d) dims[d] = {0, 1, in[d]};
  for (size_t i = 0; i < n; ++i) {
    const int64_t step = steps.empty() ? 1 : steps[i];
    if (step == 0) return InvalidArgument(op.loc()) << "Slice steps must not be 0";
    SliceDim& dim = dims[norm[i]];
    const int64_t extent = in[norm[i]];
    dim.step = step;
    if (extent == kDynamicDim) {
      dim.count = kDynamicDim;
      continue;
    }
    const int64_t start = ClampBound(starts[i], extent, step > 0, false);
    const int64_t end = ClampBound(ends[i], extent, step > 0, true);
    dim.start = start;
    const int64_t span = step > 0 ? end - start : start - end;
    // -(INT64_MIN) overflows; any step that large takes one element anyway.
    const int64_t abs_step = step > 0 ? step
                                      : (step == std::numeric_limits<int64_t>::min()
                                             ? std::numeric_limits<int64_t>::max()
                                             : -step);
    dim.count = span <= 0 ? 0 : 1 + (span - 1) / abs_step;
  }
  return dims;
}

StatusOr<Shape> SplitSizes(const Op& op, int64_t extent, int num_parts, const Shape* sizes) {
  if (sizes == nullptr) {
    if (extent == kDynamicDim) return Shape(num_parts, kDynamicDim);
    if (num_parts <= 0 || extent % num_parts != 0) {
      return InvalidArgument(op.loc())
             << "Split cannot divide extent " << extent << " into " << num_parts << " equal parts";
    }
    return Shape(num_parts, extent / num_parts);
  }
  if (static_cast<int>(sizes->size()) != num_parts) {
    return InvalidArgument(op.loc()) << "Split has " << num_parts << " results, but split "
                                     << List(*sizes) << " lists " << sizes->size() << " sizes";
  }
  int64_t total = 0;
  for (int64_t s : *sizes) {
    if (s < 0) return InvalidArgument(op.loc()) << "Split sizes must be >= 0, got " << List(*sizes);
    total += s;
  }
  if (extent != kDynamicDim && total != extent) {
    return InvalidArgument(op.loc()) << "Split sizes " << List(*sizes) << " sum to " << total
                                     << ", but the split axis has extent " << extent;
  }
  return *sizes;
}

StatusOr<int64_t> DivideExtent(const Op& op, int64_t extent, int64_t parts, int64_t axis) {
  if (extent == kDynamicDim) return kDynamicDim;
  if (parts <= 0 || extent % parts != 0) {
    return InvalidArgument(op.loc()) << OpName(op) << " cannot divide extent " << extent
                                     << " of axis " << axis << " into " << parts << " equal parts";
  }
  return extent / parts;
}

StatusOr<int64_t> RangeLength(const Op& op, double start, double limit, double delta) {
  if (delta == 0) return InvalidArgument(op.loc()) << "Range delta must not be 0";
  const double n = std::ceil((limit - start) / delta);
  if (!(n < static_cast<double>(std::numeric_limits<int64_t>::max()))) {
    return InvalidArgument(op.loc()) << "Range length is not finite";
  }
  return n <= 0 ? 0 : static_cast<int64_t>(n);
}

const Shape& ShapeOf(const Type& t) {
  static const Shape* const kEmpty = new Shape();
  return t.is_tensor() ? t.shape() : *kEmpty;
}

Result One(Type t) {
  Types out;
  out.push_back(std::move(t));
  return out;
}

Status NotATensor(const Op& op, int index, const Type& t) {
  return InvalidArgument(op.loc())
         << OpName(op) << " input " << index << " must be a tensor, got " << t.ToString();
}

// Every input is a tensor (or, with `allow_scalar`, a scalar).
Status RequireTensors(const Op& op, Args in, bool allow_scalar) {
  for (int i = 0; i < in.size(); ++i) {
    if (in[i].is_tensor() || (allow_scalar && in[i].is_scalar())) continue;
    return NotATensor(op, i, in[i]);
  }
  return Status::Ok();
}

// The one device all inputs share (possibly none, in device-generic functions).
StatusOr<DeviceId> SharedDevice(const Op& op, Args in) {
  if (in.size() == 0) return DeviceId();
  const DeviceId first = in[0].device();
  for (int i = 1; i < in.size(); ++i) {
    if (in[i].device() != first) {
      return InvalidArgument(op.loc()) << OpName(op) << " inputs are on different devices ("
                                       << first << " and " << in[i].device() << ")";
    }
  }
  return first;
}

// Tensor inputs on one device: the prelude of every compute rule.
StatusOr<DeviceId> CheckCompute(const Op& op, Args in, bool allow_scalar) {
  DISTIR_RETURN_IF_ERROR(RequireTensors(op, in, allow_scalar));
  return SharedDevice(op, in);
}

Status SameDTypes(const Op& op, Args in, int begin, int end) {
  for (int i = begin + 1; i < end; ++i) {
    if (in[i].dtype() != in[begin].dtype()) {
      return InvalidArgument(op.loc())
             << OpName(op) << " inputs have different dtypes (" << DTypeName(in[begin].dtype())
             << " and " << DTypeName(in[i].dtype()) << ")";
    }
  }
  return Status::Ok();
}

// `got` must have the dtype and (fitting) shape of `expected`.
Status RequireLike(const Op& op, const Type& got, std::string_view got_name, const Type& expected,
                   std::string_view expected_name) {
  if (got.dtype() == expected.dtype() && ShapesFit(got.shape(), expected.shape())) {
    return Status::Ok();
  }
  return InvalidArgument(op.loc())
         << OpName(op) << " " << got_name << " must match " << expected_name << ": expected "
         << expected.ToString() << ", got " << got.ToString();
}

Status MissingAttr(const Op& op, std::string_view name) {
  return InvalidArgument(op.loc()) << OpName(op) << " requires attribute '" << name << "'";
}

StatusOr<int64_t> RequiredInt(const Op& op, const std::string& name) {
  const Attribute* a = op.FindAttr(name);
  if (a == nullptr) return MissingAttr(op, name);
  return a->AsInt();
}

// Static length of a 1-D shape-like input (Reshape's target, Expand's shape).
StatusOr<int64_t> StaticLength(const Op& op, const Type& t, int index) {
  if (!t.is_tensor()) return NotATensor(op, index, t);
  if (t.rank() != 1 || t.shape()[0] == kDynamicDim) {
    return InvalidArgument(op.loc())
           << OpName(op) << " input " << index << " must be a 1-D tensor of static length, got "
           << t.ToString();
  }
  return t.shape()[0];
}

// ONNX MatMul: numpy matmul semantics, batched and broadcast over leading dims.
StatusOr<Type> MatMulType(const Op& op, const Type& a, const Type& b) {
  if (a.rank() == 0 || b.rank() == 0) {
    return InvalidArgument(op.loc()) << OpName(op) << " operands must have rank >= 1, got "
                                     << a.ToString() << " and " << b.ToString();
  }
  // Rank-1 operands are promoted to matrices ([1, K] and [K, 1]) and the
  // promoted dims dropped from the result, as numpy does.
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  const int64_t cols = sa.back();
  const int64_t rows = b.rank() == 1 ? sb[0] : sb[sb.size() - 2];
  if (!DimsFit(cols, rows)) {
    return InvalidArgument(op.loc()) << OpName(op) << " contraction sizes differ: lhs has " << cols
                                     << " columns, rhs has " << rows << " rows";
  }
  if (a.dtype() != b.dtype()) {
    return InvalidArgument(op.loc())
           << OpName(op) << " inputs have different dtypes (" << DTypeName(a.dtype()) << " and "
           << DTypeName(b.dtype()) << ")";
  }
  if (a.rank() == 2 && b.rank() == 2) {
    return Type::Tensor(a.dtype(), {sa[0], sb[1]}, a.device());  // the common case
  }
  const Shape batch_a(sa.begin(), sa.end() - std::min<int64_t>(a.rank(), 2));
  const Shape batch_b(sb.begin(), sb.end() - std::min<int64_t>(b.rank(), 2));
  DISTIR_ASSIGN_OR_RETURN(Shape out, Broadcast(op, batch_a, batch_b));
  if (a.rank() >= 2) out.push_back(sa[sa.size() - 2]);
  if (b.rank() >= 2) out.push_back(sb.back());
  return Type::Tensor(a.dtype(), std::move(out), a.device());
}

// Concatenation of `in` along `axis`, devices ignored (Concat, AllGather, MPIGather).
StatusOr<Shape> ConcatShape(const Op& op, Args in, int64_t axis_attr) {
  DISTIR_RETURN_IF_ERROR(SameDTypes(op, in, 0, in.size()));
  const Shape& first = in[0].shape();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, axis_attr, in[0].rank()));
  Shape out = first;
  for (int i = 1; i < in.size(); ++i) {
    const Shape& s = in[i].shape();
    bool fits = s.size() == first.size();
    for (size_t d = 0; fits && d < s.size(); ++d) {
      fits = static_cast<int64_t>(d) == axis || DimsFit(s[d], first[d]);
    }
    if (!fits) {
      return InvalidArgument(op.loc())
             << OpName(op) << " inputs must agree except on axis " << axis << ": got ["
             << ShapeToString(first) << "] and [" << ShapeToString(s) << "]";
    }
    out[axis] =
        out[axis] == kDynamicDim || s[axis] == kDynamicDim ? kDynamicDim : out[axis] + s[axis];
  }
  return out;
}

}  // namespace distir::shape
