// CPU kernels of the ONNX compute ops: elementwise arithmetic with numpy
// broadcasting, activations, Softmax, LayerNormalization, RMSNormalization,
// reductions, Cast, Trilu, MatMul and Gemm (Eigen over the double buffers).
// Part of RegisterCpuKernels(); see cpu_kernels.h for the kernel pattern.

#include "interp/cpu_kernels.h"

#include <Eigen/Core>
#include <cmath>
#include <numbers>

#include "interp/concrete_kernels.h"

namespace distir::cpu {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;

// ---- elementwise

// fn(a, b) over the numpy broadcast of a and b into `out`.
template <typename Fn>
DenseTensor Map2(const DenseTensor& a, const DenseTensor& b, const Shape& out, Fn fn) {
  DenseTensor r{a.dtype, out, std::vector<double>(ShapeNumElements(out))};
  if (a.shape == out && b.shape == out) {
    for (size_t i = 0; i < r.values.size(); ++i) r.values[i] = fn(a.values[i], b.values[i]);
    return r;
  }
  const std::vector<int64_t> ia = BroadcastIndex(a.shape, out);
  const std::vector<int64_t> ib = BroadcastIndex(b.shape, out);
  for (size_t i = 0; i < r.values.size(); ++i) r.values[i] = fn(a.values[ia[i]], b.values[ib[i]]);
  return r;
}

double Binary(OpKind kind, double a, double b) {
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kSum:
      return a + b;
    case OpKind::kSub:
      return a - b;
    case OpKind::kMul:
      return a * b;
    case OpKind::kDiv:
      return a / b;
    case OpKind::kPow:
      return std::pow(a, b);
    // NaN propagates through Max and Min, as in ONNX Runtime.
    case OpKind::kMax:
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case OpKind::kMin:
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    case OpKind::kEqual:
      return a == b ? 1 : 0;
    case OpKind::kLess:
      return a < b ? 1 : 0;
    default:
      break;
  }
  DISTIR_CHECK(false) << "not a binary op: " << OpKindName(kind);
  return 0;
}

Status CheckIntegerDivisor(const Op& op, const Type& type, const DenseTensor& divisor) {
  if (op.kind() != OpKind::kDiv || !IsIntegral(type.dtype())) return Status::Ok();
  for (double v : divisor.values) {
    if (v == 0) return InvalidArgument(op.loc()) << "Div divides an integer by zero";
  }
  return Status::Ok();
}

// Add, Sub, Mul, Div, Pow, Equal, Less, and the variadic Sum, Max, Min, which
// fold their inputs left to right (each step broadcasting to the result shape).
Result ElementwiseKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const Shape& out = ShapeOfType(types[0]);
  const OpKind kind = op.kind();
  if (in.size() == 1) return One(MakeResult(types[0], in[0].tensor()));
  DISTIR_RETURN_IF_ERROR(CheckIntegerDivisor(op, in[0].type(), in[1].tensor()));
  auto fn = [kind](double a, double b) { return Binary(kind, a, b); };
  DenseTensor acc = Map2(in[0].tensor(), in[1].tensor(), out, fn);
  for (int i = 2; i < in.size(); ++i) acc = Map2(acc, in[i].tensor(), out, fn);
  return One(MakeResult(types[0], std::move(acc)));
}

Result WhereKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const Shape& out = ShapeOfType(types[0]);
  const std::vector<int64_t> ic = BroadcastIndex(in[0].tensor().shape, out);
  const std::vector<int64_t> ia = BroadcastIndex(in[1].tensor().shape, out);
  const std::vector<int64_t> ib = BroadcastIndex(in[2].tensor().shape, out);
  DenseTensor r{types[0].dtype(), out, std::vector<double>(ic.size())};
  for (size_t i = 0; i < ic.size(); ++i) {
    r.values[i] = in[0].tensor().values[ic[i]] != 0 ? in[1].tensor().values[ia[i]]
                                                    : in[2].tensor().values[ib[i]];
  }
  return One(MakeResult(types[0], std::move(r)));
}

// Gelu: exact x * Phi(x), or the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
double Gelu(double x, bool tanh_approx) {
  if (!tanh_approx) return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2));
  const double c = std::sqrt(2 / std::numbers::pi);
  return 0.5 * x * (1 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

double Unary(OpKind kind, double x, bool tanh_approx) {
  switch (kind) {
    case OpKind::kNeg:
      return -x;
    case OpKind::kSqrt:
      return std::sqrt(x);
    case OpKind::kExp:
      return std::exp(x);
    case OpKind::kRelu:
      return x > 0 ? x : 0;
    case OpKind::kGelu:
      return Gelu(x, tanh_approx);
    case OpKind::kErf:
      return std::erf(x);
    case OpKind::kTanh:
      return std::tanh(x);
    case OpKind::kSigmoid:
      return 1 / (1 + std::exp(-x));  // exp overflows to inf for x < -709: 0, as it should be
    case OpKind::kSin:
      return std::sin(x);
    case OpKind::kCos:
      return std::cos(x);
    case OpKind::kNot:
      return x == 0 ? 1 : 0;
    default:
      break;
  }
  DISTIR_CHECK(false) << "not a unary op: " << OpKindName(kind);
  return 0;
}

StatusOr<bool> TanhApproximation(const Op& op) {
  const Attribute* a = op.FindAttr("approximate");
  if (a == nullptr || a->AsString() == "none") return false;
  if (a->AsString() == "tanh") return true;
  return InvalidArgument(op.loc())
         << shape::OpName(op) << " approximate must be \"none\" or \"tanh\", got \""
         << a->AsString() << "\"";
}

Result UnaryKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(bool tanh_approx, TanhApproximation(op));
  DenseTensor r = in[0].tensor();
  for (double& v : r.values) v = Unary(op.kind(), v, tanh_approx);
  return One(MakeResult(types[0], std::move(r)));
}

Result CastKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  return One(MakeResult(types[0], in[0].tensor()));
}

// ---- normalizations

Result SoftmaxKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", -1), x.shape.size()));
  const AxisSplit s = SplitAround(x.shape, axis);
  DenseTensor y = x;
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t k = 0; k < s.stride; ++k) {
      double* base = y.values.data() + o * s.extent * s.stride + k;
      double max = -INFINITY;  // subtracting the max keeps exp() finite
      for (int64_t i = 0; i < s.extent; ++i) max = std::max(max, base[i * s.stride]);
      double sum = 0;
      for (int64_t i = 0; i < s.extent; ++i) {
        double& v = base[i * s.stride];
        v = std::exp(v - max);
        sum += v;
      }
      for (int64_t i = 0; i < s.extent; ++i) base[i * s.stride] /= sum;
    }
  }
  return One(MakeResult(types[0], std::move(y)));
}

// Y = (x - mean) * inv_std * scale + bias over the dims >= axis, with
// inv_std = 1 / sqrt(var + epsilon) (population variance); optional outputs
// Mean and InvStdDev keep the leading dims and have 1s after.
Result LayerNormKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", -1), x.shape.size()));
  const double epsilon = op.GetFloat("epsilon", 1e-5);
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  const int64_t inner = ShapeNumElements(normalized);
  const int64_t outer = Product(x.shape, 0, axis);
  const std::vector<int64_t> is = BroadcastIndex(in[1].tensor().shape, normalized);
  std::vector<int64_t> ib;
  if (in.size() == 3) ib = BroadcastIndex(in[2].tensor().shape, normalized);
  DenseTensor y{x.dtype, x.shape, std::vector<double>(x.values.size())};
  DenseTensor mean{x.dtype, {}, std::vector<double>(outer)};
  DenseTensor inv_std = mean;
  for (int64_t o = 0; o < outer; ++o) {
    const double* row = x.values.data() + o * inner;
    double mu = 0;
    for (int64_t i = 0; i < inner; ++i) mu += row[i];
    mu /= static_cast<double>(inner);
    double var = 0;
    for (int64_t i = 0; i < inner; ++i) var += (row[i] - mu) * (row[i] - mu);
    const double r = 1 / std::sqrt(var / static_cast<double>(inner) + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      const double bias = ib.empty() ? 0 : in[2].tensor().values[ib[i]];
      y.values[o * inner + i] = (row[i] - mu) * r * in[1].tensor().values[is[i]] + bias;
    }
    mean.values[o] = mu;
    inv_std.values[o] = r;
  }
  Values out;
  out.reserve(3);
  out.push_back(MakeResult(types[0], std::move(y)));
  // Mean and InvStdDev keep the leading dims, with 1s for the normalized ones.
  Shape stats(x.shape.begin(), x.shape.begin() + axis);
  stats.resize(x.shape.size(), 1);
  mean.shape = stats;
  inv_std.shape = stats;
  if (op.num_results() > 1) out.push_back(MakeResult(types[1], std::move(mean)));
  if (op.num_results() > 2) out.push_back(MakeResult(types[2], std::move(inv_std)));
  return out;
}

// Y = x / sqrt(mean(x^2) + epsilon) * scale over the dims >= axis (ONNX
// RMSNormalization, opset 23): no centring and no bias.
Result RMSNormKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", -1), x.shape.size()));
  const double epsilon = op.GetFloat("epsilon", 1e-5);
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  const int64_t inner = ShapeNumElements(normalized);
  const std::vector<int64_t> is = BroadcastIndex(in[1].tensor().shape, normalized);
  DenseTensor y{x.dtype, x.shape, std::vector<double>(x.values.size())};
  for (int64_t o = 0; o < Product(x.shape, 0, axis); ++o) {
    const double* row = x.values.data() + o * inner;
    double mean_square = 0;
    for (int64_t i = 0; i < inner; ++i) mean_square += row[i] * row[i];
    const double r = 1 / std::sqrt(mean_square / static_cast<double>(inner) + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      y.values[o * inner + i] = row[i] * r * in[1].tensor().values[is[i]];
    }
  }
  return One(MakeResult(types[0], std::move(y)));
}

// ---- reductions

Result ReduceKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  const Attribute* attr = op.FindAttr("axes");
  const Shape axes = in.size() == 2 ? Ints(in[1]) : attr ? Shape(attr->AsInts()) : Shape();
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  DISTIR_ASSIGN_OR_RETURN(Shape norm, shape::NormalizeAxes(op, axes, rank));
  const bool keep = op.GetInt("keepdims", 1) != 0;
  DISTIR_ASSIGN_OR_RETURN(Shape out, shape::ReduceShape(op, x.shape, norm, norm.empty(), keep));
  std::vector<bool> reduced(rank, norm.empty());  // no axes: reduce everything
  for (int64_t a : norm) reduced[a] = true;
  DenseTensor r = concrete::Reduce(DenseTensor{DType::kF64, x.shape, x.values}, reduced, out,
                                   op.kind() == OpKind::kReduceMean);
  return One(MakeResult(types[0], std::move(r)));
}

// ---- masks

// Keeps element (i, j) of each matrix in the last two dims when j - i >= k
// (upper, the default) or j - i <= k (lower); k is the optional input 1.
Result TriluKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  int64_t k = 0;
  if (in.size() == 2) {
    if (in[1].tensor().values.size() != 1 || !IsIntegral(in[1].type().dtype())) {
      return InvalidArgument(op.loc())
             << "Trilu k must be a single integer, got " << in[1].type().ToString();
    }
    k = Ints(in[1])[0];
  }
  const bool upper = op.GetInt("upper", 1) != 0;
  DenseTensor y = in[0].tensor();
  const int64_t rows = y.shape[y.shape.size() - 2];
  const int64_t cols = y.shape.back();
  for (size_t flat = 0; flat < y.values.size(); ++flat) {
    const int64_t j = static_cast<int64_t>(flat) % cols;
    const int64_t i = static_cast<int64_t>(flat) / cols % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep) y.values[flat] = 0;
  }
  return One(MakeResult(types[0], std::move(y)));
}

// ---- linear algebra

Result MatMulKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DenseTensor y = BatchedMatMul(PromoteForMatMul(in[0].tensor(), true), false,
                                PromoteForMatMul(in[1].tensor(), false), false);
  y.shape = ShapeOfType(types[0]);
  return One(MakeResult(types[0], std::move(y)));
}

// Y = alpha * A' B' + beta * C, A' = transA ? A^T : A, C broadcast to [m, n].
Result GemmKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const double alpha = op.GetFloat("alpha", 1.0);
  const double beta = op.GetFloat("beta", 1.0);
  DenseTensor y = BatchedMatMul(in[0].tensor(), op.GetInt("transA", 0) != 0, in[1].tensor(),
                                op.GetInt("transB", 0) != 0);
  for (double& v : y.values) v *= alpha;
  if (in.size() == 3) {
    const std::vector<int64_t> ic = BroadcastIndex(in[2].tensor().shape, y.shape);
    for (size_t i = 0; i < ic.size(); ++i) y.values[i] += beta * in[2].tensor().values[ic[i]];
  }
  return One(MakeResult(types[0], std::move(y)));
}

// One product C = op(A) op(B) of row-major matrices.
void MultiplyInto(const double* a, int64_t ra, int64_t ca, bool ta, const double* b, int64_t rb,
                  int64_t cb, bool tb, MatrixMap c) {
  ConstMatrixMap ma(a, ra, ca);
  ConstMatrixMap mb(b, rb, cb);
  if (!ta && !tb) c.noalias() = ma * mb;
  if (!ta && tb) c.noalias() = ma * mb.transpose();
  if (ta && !tb) c.noalias() = ma.transpose() * mb;
  if (ta && tb) c.noalias() = ma.transpose() * mb.transpose();
}

}  // namespace

const Shape& ShapeOfType(const Type& type) { return shape::ShapeOf(type); }

// A 1-D MatMul operand promoted to a matrix: [k] -> [1, k] on the left,
// [k] -> [k, 1] on the right (numpy); the rule's result shape drops the 1s.
DenseTensor PromoteForMatMul(const DenseTensor& t, bool lhs) {
  if (t.shape.size() != 1) return t;
  DenseTensor p = t;
  p.shape = lhs ? Shape{1, t.shape[0]} : Shape{t.shape[0], 1};
  return p;
}

Shape BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    DISTIR_CHECK(da == db || da == 1 || db == 1) << "batch dims do not broadcast";
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DenseTensor BatchedMatMul(const DenseTensor& a, bool trans_a, const DenseTensor& b, bool trans_b) {
  DISTIR_CHECK(a.shape.size() >= 2 && b.shape.size() >= 2) << "BatchedMatMul needs matrices";
  const size_t na = a.shape.size();
  const size_t nb = b.shape.size();
  const int64_t ra = a.shape[na - 2], ca = a.shape[na - 1];
  const int64_t rb = b.shape[nb - 2], cb = b.shape[nb - 1];
  const int64_t m = trans_a ? ca : ra;
  const int64_t k = trans_a ? ra : ca;
  const int64_t n = trans_b ? rb : cb;
  DISTIR_CHECK(k == (trans_b ? cb : rb)) << "BatchedMatMul contraction sizes differ";
  const Shape batch_a(a.shape.begin(), a.shape.end() - 2);
  const Shape batch_b(b.shape.begin(), b.shape.end() - 2);
  Shape out_shape = BroadcastShapes(batch_a, batch_b);
  const std::vector<int64_t> ia = BroadcastIndex(batch_a, out_shape);
  const std::vector<int64_t> ib = BroadcastIndex(batch_b, out_shape);
  out_shape.push_back(m);
  out_shape.push_back(n);
  DenseTensor c{a.dtype, out_shape, std::vector<double>(ShapeNumElements(out_shape), 0.0)};
  if (k == 0 || m == 0 || n == 0) return c;  // an empty contraction sums nothing
  for (size_t i = 0; i < ia.size(); ++i) {
    MultiplyInto(a.values.data() + ia[i] * ra * ca, ra, ca, trans_a,
                 b.values.data() + ib[i] * rb * cb, rb, cb, trans_b,
                 MatrixMap(c.values.data() + i * m * n, m, n));
  }
  return c;
}

void RegisterComputeKernels(CpuDomain& domain) {
  for (OpKind k : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow,
                   OpKind::kSum, OpKind::kMax, OpKind::kMin, OpKind::kEqual, OpKind::kLess}) {
    domain.Register(k, ElementwiseKernel);
  }
  domain.Register(OpKind::kWhere, WhereKernel);
  for (OpKind k :
       {OpKind::kNot, OpKind::kNeg, OpKind::kSqrt, OpKind::kExp, OpKind::kRelu, OpKind::kGelu,
        OpKind::kErf, OpKind::kTanh, OpKind::kSigmoid, OpKind::kSin, OpKind::kCos}) {
    domain.Register(k, UnaryKernel);
  }
  domain.Register(OpKind::kCast, CastKernel);
  domain.Register(OpKind::kSoftmax, SoftmaxKernel);
  domain.Register(OpKind::kLayerNormalization, LayerNormKernel);
  domain.Register(OpKind::kRMSNormalization, RMSNormKernel);
  domain.Register(OpKind::kReduceMean, ReduceKernel);
  domain.Register(OpKind::kReduceSum, ReduceKernel);
  domain.Register(OpKind::kTrilu, TriluKernel);
  domain.Register(OpKind::kMatMul, MatMulKernel);
  domain.Register(OpKind::kGemm, GemmKernel);
}

}  // namespace distir::cpu
