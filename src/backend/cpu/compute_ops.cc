// Compute-op planners of the CPU executor (see compute_ops.h). One planner per
// op family; each checks what the kernel assumes, precomputes sizes and
// returns a closure. Float planners are templates over the compute type T.

#include "backend/cpu/compute_ops.h"

#include <algorithm>
#include <cstring>

#include "backend/cpu/host_kernels.h"
#include "backend/cpu/index_ops.h"
#include "backend/cpu/layout_ops.h"
#include "backend/cpu/transformer_ops.h"
#include "backend/shape_math.h"

namespace distir::backend {
namespace {

using Views = std::span<const TensorView>;

StatusBuilder Unsupported(const Op& op) {
  return Unimplemented(op.loc()) << "the CPU backend cannot run " << op.Name() << ": ";
}

// ---- products

template <typename T>
StatusOr<CpuKernel> PlanMatMul(const Op& op, Views in, Views out) {
  const TensorView a = in[0], b = in[1], c = out[0];
  if (a.rank() < 2 || b.rank() < 2) return Unsupported(op) << "rank-1 operands";
  const int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1], n = b.shape[b.rank() - 1];
  const int64_t a_batch = a.num_elements() / (m * k > 0 ? m * k : 1);
  const int64_t b_batch = b.num_elements() / (k * n > 0 ? k * n : 1);
  if (b.rank() == 2) {  // x W: one Gemm over all rows
    return CpuKernel([=] {
      Gemm<T>(false, false, a_batch * m, n, k, 1, a.as<T>(), b.as<T>(), 0, c.as<T>());
      return Status::Ok();
    });
  }
  if (a_batch != b_batch && a.rank() != 2) {
    return Unsupported(op) << "batch dims broadcast other than against a matrix";
  }
  const int64_t batch = std::max(a_batch, b_batch);
  const int64_t as = a.rank() == 2 ? 0 : m * k;
  return CpuKernel([=] {
    BatchedMatMul<T>(batch, m, n, k, a.as<T>(), as, b.as<T>(), k * n, c.as<T>(), m * n);
    return Status::Ok();
  });
}

// MatMulGrad(x, w, dy) = (dy wT, xT dy), summed over the batch dims an operand
// was broadcast along: flattening x's rows against a matrix w does that sum.
template <typename T>
StatusOr<CpuKernel> PlanMatMulGrad(const Op& op, Views in, Views out) {
  const TensorView x = in[0], w = in[1], dy = in[2], dx = out[0], dw = out[1];
  if (x.rank() < 2 || w.rank() != 2) return Unsupported(op) << "w must be a matrix";
  const int64_t k = w.shape[0], n = w.shape[1];
  const int64_t rows = x.num_elements() / (k > 0 ? k : 1);
  return CpuKernel([=] {
    Gemm<T>(false, true, rows, k, n, 1, dy.as<T>(), w.as<T>(), 0, dx.as<T>());
    Gemm<T>(true, false, k, n, rows, 1, x.as<T>(), dy.as<T>(), 0, dw.as<T>());
    return Status::Ok();
  });
}

template <typename T>
StatusOr<CpuKernel> PlanGemm(const Op& op, Views in, Views out) {
  const TensorView a = in[0], b = in[1], y = out[0];
  if (a.rank() != 2 || b.rank() != 2) return Unsupported(op) << "Gemm needs matrices";
  const bool ta = op.GetInt("transA", 0) != 0, tb = op.GetInt("transB", 0) != 0;
  const auto alpha = static_cast<T>(op.GetFloat("alpha", 1.0));
  const auto beta = static_cast<T>(op.GetFloat("beta", 1.0));
  const int64_t m = y.shape[0], n = y.shape[1], k = ta ? a.shape[0] : a.shape[1];
  const bool has_c = in.size() > 2;
  const TensorView c = has_c ? in[2] : TensorView{};
  const int64_t c_n = has_c ? c.num_elements() : 0;
  if (has_c && c_n != 1 && c_n != n && c_n != m * n) return Unsupported(op) << "C broadcast";
  return CpuKernel([=] {
    T* yp = y.as<T>();
    for (int64_t i = 0; has_c && i < m * n; ++i) {
      yp[i] = c_n == 1 ? c.as<T>()[0] : c_n == n ? c.as<T>()[i % n] : c.as<T>()[i];
    }
    Gemm<T>(ta, tb, m, n, k, alpha, a.as<T>(), b.as<T>(), has_c ? beta : T(0), yp);
    return Status::Ok();
  });
}

// ---- elementwise

std::optional<BinaryKind> BinaryKindOf(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kSum:
      return BinaryKind::kAdd;
    case OpKind::kSub:
      return BinaryKind::kSub;
    case OpKind::kMul:
      return BinaryKind::kMul;
    case OpKind::kDiv:
      return BinaryKind::kDiv;
    case OpKind::kPow:
      return BinaryKind::kPow;
    case OpKind::kMax:
      return BinaryKind::kMax;
    case OpKind::kMin:
      return BinaryKind::kMin;
    default:
      return std::nullopt;
  }
}

// `small` padded with leading 1s to `rank` extents.
std::vector<int64_t> Padded(const std::vector<int64_t>& small, size_t rank) {
  std::vector<int64_t> p(rank - small.size(), 1);
  p.insert(p.end(), small.begin(), small.end());
  return p;
}

// True when `b`, padded to `out`'s rank, is 1s followed by out's trailing
// extents: b repeats along the leading dims (a bias).
bool IsTrailingRepeat(const std::vector<int64_t>& b, const std::vector<int64_t>& out) {
  const std::vector<int64_t> p = Padded(b, out.size());
  size_t i = 0;
  while (i < p.size() && p[i] == 1 && out[i] != 1) ++i;
  for (; i < p.size(); ++i) {
    if (p[i] != out[i]) return false;
  }
  return true;
}

template <typename T>
CpuKernel PlanBinary(BinaryKind kind, const TensorView& a, const TensorView& b,
                     const TensorView& c) {
  const int64_t n = c.num_elements();
  if (a.num_elements() == n && b.num_elements() == n) {
    return [=] { return Binary<T>(kind, n, a.as<T>(), b.as<T>(), c.as<T>()), Status::Ok(); };
  }
  if (a.num_elements() == n && b.num_elements() == 1) {
    return [=] { return BinaryScalar<T>(kind, n, a.as<T>(), b.as<T>()[0], c.as<T>()), Status::Ok(); };
  }
  if (b.num_elements() == n && a.num_elements() == 1) {
    return [=] {
      return BinaryScalar<T>(kind, n, b.as<T>(), a.as<T>()[0], c.as<T>(), true), Status::Ok();
    };
  }
  if (a.num_elements() == n && IsTrailingRepeat(b.shape, c.shape)) {
    const int64_t inner = b.num_elements();
    return [=] {
      return BinaryRepeat<T>(kind, n / inner, inner, a.as<T>(), b.as<T>(), c.as<T>()), Status::Ok();
    };
  }
  if (b.num_elements() == n && IsTrailingRepeat(a.shape, c.shape)) {
    const int64_t inner = a.num_elements();
    return [=] {
      return BinaryRepeat<T>(kind, n / inner, inner, b.as<T>(), a.as<T>(), c.as<T>(), true),
             Status::Ok();
    };
  }
  const std::vector<int64_t> as = Padded(a.shape, c.shape.size());
  const std::vector<int64_t> bs = Padded(b.shape, c.shape.size());
  return [=] {
    BinaryBroadcast<T>(kind, c.shape, as, a.as<T>(), bs, b.as<T>(), c.as<T>());
    return Status::Ok();
  };
}

template <typename T>
StatusOr<CpuKernel> PlanNary(const Op& op, Views in, Views out) {
  const BinaryKind kind = *BinaryKindOf(op.kind());
  if (in.size() == 1) {
    const TensorView a = in[0], c = out[0];
    return CpuKernel([=] { return std::memcpy(c.data, a.data, c.bytes()), Status::Ok(); });
  }
  if (in.size() == 2) return PlanBinary<T>(kind, in[0], in[1], out[0]);
  // Sum/Max/Min of n operands: fold left into the result (operands of the result's shape).
  std::vector<CpuKernel> steps{PlanBinary<T>(kind, in[0], in[1], out[0])};
  for (size_t i = 2; i < in.size(); ++i) steps.push_back(PlanBinary<T>(kind, out[0], in[i], out[0]));
  return CpuKernel([steps] {
    for (const CpuKernel& s : steps) DISTIR_RETURN_IF_ERROR(s());
    return Status::Ok();
  });
}

std::optional<UnaryKind> UnaryKindOf(const Op& op) {
  switch (op.kind()) {
    case OpKind::kRelu:
      return UnaryKind::kRelu;
    case OpKind::kNeg:
      return UnaryKind::kNeg;
    case OpKind::kSqrt:
      return UnaryKind::kSqrt;
    case OpKind::kExp:
      return UnaryKind::kExp;
    case OpKind::kTanh:
      return UnaryKind::kTanh;
    case OpKind::kErf:
      return UnaryKind::kErf;
    case OpKind::kSigmoid:
      return UnaryKind::kSigmoid;
    case OpKind::kSin:
      return UnaryKind::kSin;
    case OpKind::kCos:
      return UnaryKind::kCos;
    case OpKind::kGelu: {
      const Attribute* a = op.FindAttr("approximate");
      return a != nullptr && a->AsString() == "tanh" ? UnaryKind::kGeluTanh : UnaryKind::kGeluErf;
    }
    default:
      return std::nullopt;
  }
}

bool GeluIsTanh(const Op& op) {
  const Attribute* a = op.FindAttr("approximate");
  return a != nullptr && a->AsString() == "tanh";
}

template <typename T>
StatusOr<CpuKernel> PlanUnary(const Op& op, Views in, Views out) {
  const UnaryKind kind = *UnaryKindOf(op);
  const TensorView x = in[0], y = out[0];
  return CpuKernel([=] { return Unary<T>(kind, y.num_elements(), x.as<T>(), y.as<T>()), Status::Ok(); });
}

// ---- rows: softmax, layer norm, RMS norm

StatusOr<int64_t> LastAxisCols(const Op& op, const TensorView& x, int64_t default_axis) {
  const int64_t axis = NormalizeAxis(op.GetInt("axis", default_axis), x.rank());
  if (x.rank() == 0 || axis != x.rank() - 1) {
    return Unsupported(op) << "only the last axis is supported, got axis " << axis;
  }
  return x.shape.back();
}

template <typename T>
StatusOr<CpuKernel> PlanSoftmax(const Op& op, Views in, Views out) {
  DISTIR_ASSIGN_OR_RETURN(const int64_t cols, LastAxisCols(op, in[0], -1));
  const TensorView x = in[0], y = out[0];
  const int64_t rows = cols > 0 ? x.num_elements() / cols : 0;
  if (op.kind() == OpKind::kSoftmax) {
    return CpuKernel([=] { return Softmax<T>(rows, cols, x.as<T>(), y.as<T>()), Status::Ok(); });
  }
  const TensorView dy = in[1];
  return CpuKernel(
      [=] { return SoftmaxGrad<T>(rows, cols, x.as<T>(), dy.as<T>(), y.as<T>()), Status::Ok(); });
}

template <typename T>
StatusOr<CpuKernel> PlanLayerNorm(const Op& op, Views in, Views out) {
  DISTIR_ASSIGN_OR_RETURN(const int64_t cols, LastAxisCols(op, in[0], -1));
  if (out.size() != 1) return Unsupported(op) << "the mean and inverse std results";
  const TensorView x = in[0], scale = in[1], y = out[0];
  const TensorView bias = in.size() > 2 ? in[2] : TensorView{};
  const auto eps = static_cast<T>(op.GetFloat("epsilon", 1e-5));
  const int64_t rows = cols > 0 ? x.num_elements() / cols : 0;
  return CpuKernel([=] {
    LayerNorm<T>(rows, cols, x.as<T>(), scale.as<T>(), bias.as<T>(), eps, y.as<T>());
    return Status::Ok();
  });
}

template <typename T>
StatusOr<CpuKernel> PlanLayerNormGrad(const Op& op, Views in, Views out) {
  DISTIR_ASSIGN_OR_RETURN(const int64_t cols, LastAxisCols(op, in[0], -1));
  const TensorView x = in[0], scale = in[1], dy = in[2];
  const TensorView dx = out[0], ds = out[1], db = out[2];
  const auto eps = static_cast<T>(op.GetFloat("epsilon", 1e-5));
  const int64_t rows = cols > 0 ? x.num_elements() / cols : 0;
  return CpuKernel([=] {
    LayerNormGrad<T>(rows, cols, x.as<T>(), scale.as<T>(), dy.as<T>(), eps, dx.as<T>(), ds.as<T>(),
                     db.as<T>());
    return Status::Ok();
  });
}

// RMSNormalization(x, scale) and RMSNormalizationGrad(x, scale, dy) -> (dx,
// dscale) over the last axis, scale one value per column.
template <typename T>
StatusOr<CpuKernel> PlanRmsNorm(const Op& op, Views in, Views out) {
  DISTIR_ASSIGN_OR_RETURN(const int64_t cols, LastAxisCols(op, in[0], -1));
  const TensorView x = in[0], scale = in[1];
  if (scale.num_elements() != cols) return Unsupported(op) << "a scale broadcast along the row";
  const auto eps = static_cast<T>(op.GetFloat("epsilon", 1e-5));
  const int64_t rows = cols > 0 ? x.num_elements() / cols : 0;
  if (op.kind() == OpKind::kRMSNormalization) {
    const TensorView y = out[0];
    return CpuKernel([=] {
      return RmsNorm<T>(rows, cols, x.as<T>(), scale.as<T>(), eps, y.as<T>()), Status::Ok();
    });
  }
  const TensorView dy = in[2], dx = out[0], ds = out[1];
  return CpuKernel([=] {
    RmsNormGrad<T>(rows, cols, x.as<T>(), scale.as<T>(), dy.as<T>(), eps, dx.as<T>(), ds.as<T>());
    return Status::Ok();
  });
}

// ---- training

template <typename T>
StatusOr<CpuKernel> PlanTraining(const Op& op, Views in, Views out) {
  const int64_t n = in[0].num_elements();
  const TensorView a = in[0], b = in[1], y = out[0];
  switch (op.kind()) {
    case OpKind::kReluGrad:
      return CpuKernel([=] { return ReluGrad<T>(n, a.as<T>(), b.as<T>(), y.as<T>()), Status::Ok(); });
    case OpKind::kGeluGrad: {
      const bool tanh = GeluIsTanh(op);
      return CpuKernel(
          [=] { return GeluGrad<T>(n, a.as<T>(), b.as<T>(), y.as<T>(), tanh), Status::Ok(); });
    }
    case OpKind::kSigmoidGrad:
      return CpuKernel(
          [=] { return SigmoidGrad<T>(n, a.as<T>(), b.as<T>(), y.as<T>()), Status::Ok(); });
    case OpKind::kMSELoss:
    case OpKind::kMSELossGrad: {
      const auto denom = static_cast<double>(op.GetInt("denominator", n));
      if (op.kind() == OpKind::kMSELoss) {
        return CpuKernel([=] { return y.as<T>()[0] = MseLoss<T>(n, a.as<T>(), b.as<T>(), denom), Status::Ok(); });
      }
      return CpuKernel(
          [=] { return MseLossGrad<T>(n, a.as<T>(), b.as<T>(), denom, y.as<T>()), Status::Ok(); });
    }
    case OpKind::kSGD: {
      const auto lr = static_cast<T>(op.GetFloat("lr", 0.01));
      return CpuKernel([=] { return Sgd<T>(n, a.as<T>(), b.as<T>(), lr, y.as<T>()), Status::Ok(); });
    }
    default:
      break;
  }
  AdamParams p;
  p.lr = op.GetFloat("lr", p.lr);
  p.beta1 = op.GetFloat("beta1", p.beta1);
  p.beta2 = op.GetFloat("beta2", p.beta2);
  p.epsilon = op.GetFloat("epsilon", p.epsilon);
  p.step = op.GetInt("step", p.step);
  const TensorView m = in[2], v = in[3], m2 = out[1], v2 = out[2];
  return CpuKernel([=] {
    Adam<T>(n, a.as<T>(), b.as<T>(), m.as<T>(), v.as<T>(), p, y.as<T>(), m2.as<T>(), v2.as<T>());
    return Status::Ok();
  });
}

template <typename T>
StatusOr<CpuKernel> PlanWhere(const Op& op, Views in, Views out) {
  if (in[0].dtype != DType::kBool) return Unsupported(op) << "a condition that is not bool";
  const TensorView c = in[0], a = in[1], b = in[2], y = out[0];
  const size_t r = y.shape.size();
  const auto cs = Padded(c.shape, r), as = Padded(a.shape, r), bs = Padded(b.shape, r);
  return CpuKernel([=] {
    Where<T>(y.shape, cs, c.as<uint8_t>(), as, a.as<T>(), bs, b.as<T>(), y.as<T>());
    return Status::Ok();
  });
}

template <typename T>
StatusOr<CpuKernel> PlanGather(const Op& op, Views in, Views out) {
  const TensorView table = in[0], idx = in[1], y = out[0];
  if (idx.dtype != DType::kI64) return Unsupported(op) << "indices that are not i64";
  const int64_t axis = NormalizeAxis(op.GetInt("axis", 0), table.rank());
  const int64_t outer = Prod(std::span(table.shape).first(static_cast<size_t>(axis)));
  const int64_t extent = table.shape[axis];
  const int64_t inner = Prod(std::span(table.shape).subspan(static_cast<size_t>(axis) + 1));
  const SourceLoc loc = op.loc();
  const std::string name = op.Name();
  return CpuKernel([=]() -> Status {
    if (Gather<T>(outer, extent, inner, table.as<T>(), idx.num_elements(), idx.as<int64_t>(),
                  y.as<T>())) {
      return Status::Ok();
    }
    return InvalidArgument(loc) << name << " index out of range [0, " << extent << ")";
  });
}

// ReduceSum over leading axes [0, k) (a bias gradient: the sum over batch and
// sequence), as a sum of rows; other axes are not planned.
template <typename T>
StatusOr<CpuKernel> PlanReduceSum(const Op& op, Views in, Views out) {
  const TensorView x = in[0], y = out[0];
  const Attribute* axes_attr = op.FindAttr("axes");
  if (in.size() > 1 || axes_attr == nullptr || axes_attr->AsInts().empty()) {
    return Unsupported(op) << "axes given as an input, empty or absent";
  }
  std::vector<int64_t> axes = axes_attr->AsInts();
  for (int64_t& a : axes) a = NormalizeAxis(a, x.rank());
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != static_cast<int64_t>(i)) return Unsupported(op) << "axes other than leading ones";
  }
  const int64_t outer = Prod(std::span(x.shape).first(axes.size()));
  const int64_t inner = Prod(std::span(x.shape).subspan(axes.size()));
  return CpuKernel([=] { return SumRows<T>(outer, inner, x.as<T>(), y.as<T>()), Status::Ok(); });
}

// Float ops, planned in compute type T.
template <typename T>
StatusOr<CpuKernel> PlanFloatOp(const Op& op, Views in, Views out) {
  if (BinaryKindOf(op.kind())) return PlanNary<T>(op, in, out);
  if (UnaryKindOf(op)) return PlanUnary<T>(op, in, out);
  if (IsTransformerOp(op.kind())) return PlanTransformerOp<T>(op, in, out);
  switch (op.kind()) {
    case OpKind::kMatMul:
      return PlanMatMul<T>(op, in, out);
    case OpKind::kMatMulGrad:
      return PlanMatMulGrad<T>(op, in, out);
    case OpKind::kGemm:
      return PlanGemm<T>(op, in, out);
    case OpKind::kSoftmax:
    case OpKind::kSoftmaxGrad:
      return PlanSoftmax<T>(op, in, out);
    case OpKind::kLayerNormalization:
      return PlanLayerNorm<T>(op, in, out);
    case OpKind::kLayerNormalizationGrad:
      return PlanLayerNormGrad<T>(op, in, out);
    case OpKind::kRMSNormalization:
    case OpKind::kRMSNormalizationGrad:
      return PlanRmsNorm<T>(op, in, out);
    case OpKind::kReluGrad:
    case OpKind::kGeluGrad:
    case OpKind::kSigmoidGrad:
    case OpKind::kMSELoss:
    case OpKind::kMSELossGrad:
    case OpKind::kSGD:
    case OpKind::kAdam:
      return PlanTraining<T>(op, in, out);
    case OpKind::kWhere:
      return PlanWhere<T>(op, in, out);
    case OpKind::kGather:
      return PlanGather<T>(op, in, out);
    case OpKind::kReduceSum:
      return PlanReduceSum<T>(op, in, out);
    default:
      return Unsupported(op) << "no CPU kernel for this op";
  }
}

}  // namespace

std::byte* ScratchPool::Allocate(int64_t bytes) {
  buffers.push_back(std::make_unique<std::byte[]>(static_cast<size_t>(bytes)));
  return buffers.back().get();
}

namespace {

bool IsHalf(DType d) { return d == DType::kF16 || d == DType::kBF16; }

// f16/bf16 operands: an f32 scratch copy for each, converted in before the
// op and (results) out after it.
StatusOr<CpuKernel> PlanHalfOp(const Op& op, Views in, Views out, ScratchPool& scratch) {
  std::vector<TensorView> in32(in.begin(), in.end()), out32(out.begin(), out.end());
  std::vector<std::pair<TensorView, TensorView>> load, store;
  for (TensorView& v : in32) {
    if (!IsHalf(v.dtype)) continue;
    TensorView f = v;
    f.dtype = DType::kF32;
    f.data = scratch.Allocate(f.bytes());
    load.emplace_back(v, f);
    v = f;
  }
  for (TensorView& v : out32) {
    if (!IsHalf(v.dtype)) continue;
    TensorView f = v;
    f.dtype = DType::kF32;
    f.data = scratch.Allocate(f.bytes());
    store.emplace_back(f, v);
    v = f;
  }
  DISTIR_ASSIGN_OR_RETURN(CpuKernel k, PlanFloatOp<float>(op, in32, out32));
  return CpuKernel([load, store, k]() -> Status {
    for (const auto& [src, dst] : load) ConvertElements(src.dtype, src.data, dst.dtype, dst.data, src.num_elements());
    DISTIR_RETURN_IF_ERROR(k());
    for (const auto& [src, dst] : store) ConvertElements(src.dtype, src.data, dst.dtype, dst.data, src.num_elements());
    return Status::Ok();
  });
}

}  // namespace

StatusOr<CpuKernel> PlanComputeOp(const Op& op, std::span<const TensorView> in,
                                  std::span<const TensorView> out, ScratchPool& scratch) {
  if (auto layout = PlanLayoutOp(op, in, out)) return std::move(*layout);
  if (auto index = PlanIndexOp(op, in, out)) return std::move(*index);
  const DType dtype = out.empty() ? DType::kF32 : out[0].dtype;
  bool half = false;
  for (const TensorView& v : in) half = half || IsHalf(v.dtype);
  for (const TensorView& v : out) half = half || IsHalf(v.dtype);
  if (half) return PlanHalfOp(op, in, out, scratch);
  if (dtype == DType::kF64 || (!in.empty() && in[0].dtype == DType::kF64)) {
    return PlanFloatOp<double>(op, in, out);
  }
  if (dtype != DType::kF32 && !(in.size() > 1 && in[1].dtype == DType::kF32)) {
    return Unsupported(op) << "results of dtype " << DTypeName(dtype);
  }
  return PlanFloatOp<float>(op, in, out);
}

}  // namespace distir::backend
