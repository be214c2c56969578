// Op planners of the GPU executor (see gpu_ops.h). Each checks what the
// kernel assumes, precomputes sizes and returns a closure that enqueues work
// on the executor's stream. Compiled by the host compiler against cudart.

#include "backend/gpu/gpu_ops.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <optional>

#include "backend/cpu/host_kernels.h"
#include "backend/gpu/cuda_check.h"
#include "backend/gpu/gpu_convert.h"
#include "backend/gpu/gpu_index_ops.h"
#include "backend/gpu/gpu_kernels.h"
#include "backend/gpu/gpu_layout_ops.h"
#include "backend/memory_plan.h"
#include "backend/shape_math.h"

namespace distir::gpu {
namespace {

using backend::NormalizeAxis;
using backend::Prod;
using backend::TensorView;
using Views = std::span<const TensorView>;

using Unsupported = internal::UnsupportedOp;

std::optional<GpuDType> GpuTypeOf(DType d) {
  switch (d) {
    case DType::kF32:
      return GpuDType::kF32;
    case DType::kF16:
      return GpuDType::kF16;
    case DType::kBF16:
      return GpuDType::kBF16;
    default:
      return std::nullopt;
  }
}

// The one float dtype of the op's operands; Gather's indices and Where's
// condition are exempt.
StatusOr<GpuDType> OpDType(const Op& op, Views in, Views out) {
  const DType d = out.empty() ? in[0].dtype : out[0].dtype;
  const std::optional<GpuDType> t = GpuTypeOf(d);
  if (!t) return Unsupported(op) << "no GPU kernel for dtype " << DTypeName(d);
  for (size_t i = 0; i < in.size(); ++i) {
    if (op.kind() == OpKind::kGather && i == 1) continue;
    if (op.kind() == OpKind::kWhere && i == 0) continue;
    if (in[i].dtype != d) {
      return Unsupported(op) << "mixed dtypes " << DTypeName(in[i].dtype) << " and " << DTypeName(d);
    }
  }
  return *t;
}

Status CopyAsync(void* dst, const void* src, int64_t bytes, void* stream) {
  DISTIR_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                                              cudaMemcpyDeviceToDevice,
                                              static_cast<cudaStream_t>(stream)));
  return Status::Ok();
}

// ---- products (cuBLAS, f32 accumulation)

StatusOr<GpuKernel> PlanMatMul(const Op& op, GpuDType t, Views in, Views out, const GpuOpContext& ctx) {
  const TensorView a = in[0], b = in[1], c = out[0];
  if (a.rank() < 2 || b.rank() < 2) return Unsupported(op) << "rank-1 operands";
  const int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1], n = b.shape[b.rank() - 1];
  const int64_t a_batch = a.num_elements() / (m * k > 0 ? m * k : 1);
  const int64_t b_batch = b.num_elements() / (k * n > 0 ? k * n : 1);
  CublasGemm* gemm = ctx.gemm;
  if (b.rank() == 2) {  // x W: one GEMM over all rows
    return GpuKernel([=] {
      return gemm->Gemm(t, false, false, a_batch * m, n, k, 1, a.data, b.data, 0, c.data);
    });
  }
  if (a_batch != b_batch && a.rank() != 2) {
    return Unsupported(op) << "batch dims broadcast other than against a matrix";
  }
  // Attention's [b, h, s, d] x [b, h, d, s]: one strided-batched GEMM; a
  // matrix `a` is reused by every product (stride 0).
  const int64_t batch = std::max(a_batch, b_batch);
  const int64_t as = a.rank() == 2 ? 0 : m * k;
  return GpuKernel([=] {
    return gemm->GemmStridedBatched(t, false, false, m, n, k, 1, a.data, as, b.data, k * n, 0,
                                    c.data, m * n, batch);
  });
}

// MatMulGrad(x, w, dy) = (dy wT, xT dy); flattening x's rows sums dw over the batch.
StatusOr<GpuKernel> PlanMatMulGrad(const Op& op, GpuDType t, Views in, Views out,
                                   const GpuOpContext& ctx) {
  const TensorView x = in[0], w = in[1], dy = in[2], dx = out[0], dw = out[1];
  if (x.rank() < 2 || w.rank() != 2) return Unsupported(op) << "w must be a matrix";
  // dw may be f32 from half operands (dw_dtype: Megatron's gradient
  // accumulation fusion); cuBLAS writes it from its f32 accumulators.
  const std::optional<GpuDType> dw_type = GpuTypeOf(dw.dtype);
  if (!dw_type || (*dw_type != t && *dw_type != GpuDType::kF32))
    return Unsupported(op) << "a weight gradient of dtype " << DTypeName(dw.dtype) << " from "
                           << GpuDTypeName(t) << " operands";
  const GpuDType dw_t = *dw_type;
  const int64_t k = w.shape[0], n = w.shape[1];
  const int64_t rows = x.num_elements() / (k > 0 ? k : 1);
  CublasGemm* gemm = ctx.gemm;
  return GpuKernel([=]() -> Status {
    DISTIR_RETURN_IF_ERROR(gemm->Gemm(t, false, true, rows, k, n, 1, dy.data, w.data, 0, dx.data));
    return gemm->Gemm(t, dw_t, true, false, k, n, rows, 1, x.data, dy.data, 0, dw.data);
  });
}

StatusOr<GpuKernel> PlanGemm(const Op& op, GpuDType t, Views in, Views out, const GpuOpContext& ctx) {
  const TensorView a = in[0], b = in[1], y = out[0];
  if (a.rank() != 2 || b.rank() != 2) return Unsupported(op) << "Gemm needs matrices";
  const bool ta = op.GetInt("transA", 0) != 0, tb = op.GetInt("transB", 0) != 0;
  const auto alpha = static_cast<float>(op.GetFloat("alpha", 1.0));
  const bool has_c = in.size() > 2;
  const auto beta = has_c ? static_cast<float>(op.GetFloat("beta", 1.0)) : 0.0f;
  const int64_t m = y.shape[0], n = y.shape[1], k = ta ? a.shape[0] : a.shape[1];
  if (has_c && in[2].num_elements() != m * n) return Unsupported(op) << "a broadcast C operand";
  const TensorView c = has_c ? in[2] : TensorView{};
  CublasGemm* gemm = ctx.gemm;
  void* stream = ctx.stream;
  return GpuKernel([=]() -> Status {
    if (has_c) DISTIR_RETURN_IF_ERROR(CopyAsync(y.data, c.data, y.bytes(), stream));
    return gemm->Gemm(t, ta, tb, m, n, k, alpha, a.data, b.data, beta, y.data);
  });
}

// ---- elementwise, with NumPy broadcasting

std::optional<GpuBinary> BinaryOf(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kSum:
      return GpuBinary::kAdd;
    case OpKind::kSub:
      return GpuBinary::kSub;
    case OpKind::kMul:
      return GpuBinary::kMul;
    case OpKind::kDiv:
      return GpuBinary::kDiv;
    default:
      return std::nullopt;
  }
}

// a (op) b where an operand is smaller than the result (a bias, a scalar).
StatusOr<GpuKernel> PlanBroadcastBinary(const Op& op, GpuDType t, Views in, const TensorView& y,
                                        void* stream) {
  if (in.size() != 2) return Unsupported(op) << "broadcasting " << in.size() << " operands";
  if (y.rank() > kGpuMaxRank) return Unsupported(op) << "more than " << kGpuMaxRank << " axes";
  const GpuBinary kind = *BinaryOf(op.kind());
  const GpuBroadcast shape = MakeGpuBroadcast(y.shape, {in[0].shape, in[1].shape});
  const TensorView a = in[0], b = in[1];
  return GpuKernel([=] { return LaunchBroadcastBinary(kind, t, shape, a.data, b.data, y.data, stream); });
}

StatusOr<GpuKernel> PlanNary(const Op& op, GpuDType t, Views in, Views out, void* stream) {
  const GpuBinary kind = *BinaryOf(op.kind());
  const TensorView y = out[0];
  const int64_t n = y.num_elements();
  for (const TensorView& v : in) {
    if (v.shape != y.shape) return PlanBroadcastBinary(op, t, in, y, stream);
  }
  if (in.size() == 1) {
    const TensorView x = in[0];
    return GpuKernel([=] { return CopyAsync(y.data, x.data, y.bytes(), stream); });
  }
  // Sum of n operands: fold left into the result (LaunchBinary allows aliasing).
  const std::vector<TensorView> ops(in.begin(), in.end());
  return GpuKernel([=]() -> Status {
    DISTIR_RETURN_IF_ERROR(LaunchBinary(kind, t, n, ops[0].data, ops[1].data, y.data, stream));
    for (size_t i = 2; i < ops.size(); ++i) {
      DISTIR_RETURN_IF_ERROR(LaunchBinary(kind, t, n, y.data, ops[i].data, y.data, stream));
    }
    return Status::Ok();
  });
}

bool GeluIsTanh(const Op& op) {
  const Attribute* a = op.FindAttr("approximate");
  return a != nullptr && a->AsString() == "tanh";
}

std::optional<GpuUnary> UnaryOf(const Op& op) {
  switch (op.kind()) {
    case OpKind::kRelu:
      return GpuUnary::kRelu;
    case OpKind::kGelu:
      return GeluIsTanh(op) ? GpuUnary::kGeluTanh : GpuUnary::kGelu;
    case OpKind::kSigmoid:
      return GpuUnary::kSigmoid;
    case OpKind::kSin:
      return GpuUnary::kSin;
    case OpKind::kCos:
      return GpuUnary::kCos;
    default:
      return std::nullopt;
  }
}

// ReluGrad(x, dy), GeluGrad(x, dy) and SigmoidGrad(y, dy).
GpuUnaryGrad UnaryGradOf(const Op& op) {
  switch (op.kind()) {
    case OpKind::kReluGrad:
      return GpuUnaryGrad::kReluGrad;
    case OpKind::kSigmoidGrad:
      return GpuUnaryGrad::kSigmoidGrad;
    default:
      return GeluIsTanh(op) ? GpuUnaryGrad::kGeluTanhGrad : GpuUnaryGrad::kGeluGrad;
  }
}

StatusOr<GpuKernel> PlanActivation(const Op& op, GpuDType t, Views in, Views out, void* stream) {
  const TensorView x = in[0], y = out[0];
  const int64_t n = y.num_elements();
  if (const std::optional<GpuUnary> u = UnaryOf(op)) {
    const GpuUnary f = *u;
    return GpuKernel([=] { return LaunchUnary(f, t, n, x.data, y.data, stream); });
  }
  const GpuUnaryGrad g = UnaryGradOf(op);
  const TensorView dy = in[1];
  return GpuKernel([=] { return LaunchUnaryGrad(g, t, n, x.data, dy.data, y.data, stream); });
}

// ---- rows: softmax, layer norm, RMS norm (last axis only, as on the CPU)

StatusOr<int64_t> LastAxisCols(const Op& op, const TensorView& x) {
  const int64_t axis = NormalizeAxis(op.GetInt("axis", -1), x.rank());
  if (x.rank() == 0 || axis != x.rank() - 1) {
    return Unsupported(op) << "only the last axis is supported, got axis " << axis;
  }
  return x.shape.back();
}

StatusOr<GpuKernel> PlanRows(const Op& op, GpuDType t, Views in, Views out, void* stream) {
  DISTIR_ASSIGN_OR_RETURN(const int64_t cols, LastAxisCols(op, in[0]));
  const TensorView x = in[0], y = out[0];
  const int64_t rows = cols > 0 ? x.num_elements() / cols : 0;
  if (op.kind() == OpKind::kSoftmax) {
    return GpuKernel([=] { return LaunchSoftmax(t, rows, cols, x.data, y.data, stream); });
  }
  if (out.size() != 1) return Unsupported(op) << "the mean and inverse std results";
  const TensorView scale = in[1];
  const std::byte* bias = in.size() > 2 ? in[2].data : nullptr;
  const auto eps = static_cast<float>(op.GetFloat("epsilon", 1e-5));
  return GpuKernel([=] {
    return LaunchLayerNorm(t, rows, cols, x.data, scale.data, bias, eps, y.data, stream);
  });
}

// RMSNormalization(x, scale) and RMSNormalizationGrad(x, scale, dy) -> (dx,
// dscale) over the last axis, scale one value per column. The gradient keeps
// each row's 1/rms in f32 scratch between its two kernels.
StatusOr<GpuKernel> PlanRmsNorm(const Op& op, GpuDType t, Views in, Views out,
                                const GpuOpContext& ctx) {
  DISTIR_ASSIGN_OR_RETURN(const int64_t cols, LastAxisCols(op, in[0]));
  const TensorView x = in[0], scale = in[1];
  if (scale.num_elements() != cols) return Unsupported(op) << "a scale broadcast along the row";
  const auto eps = static_cast<float>(op.GetFloat("epsilon", 1e-5));
  const int64_t rows = cols > 0 ? x.num_elements() / cols : 0;
  void* stream = ctx.stream;
  if (op.kind() == OpKind::kRMSNormalization) {
    const TensorView y = out[0];
    return GpuKernel(
        [=] { return LaunchRmsNorm(t, rows, cols, x.data, scale.data, eps, y.data, stream); });
  }
  if (ctx.scratch == nullptr) return GpuKernel([] { return Status::Ok(); });  // planning only
  const auto bytes = static_cast<size_t>(std::max<int64_t>(rows, 1)) * sizeof(float);
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(bytes));
  auto* inv_rms = static_cast<float*>(buffer.data());
  ctx.scratch->push_back(std::move(buffer));
  const TensorView dy = in[2], dx = out[0], ds = out[1];
  return GpuKernel([=] {
    return LaunchRmsNormGrad(t, rows, cols, x.data, scale.data, dy.data, eps, dx.data, ds.data,
                             inv_rms, stream);
  });
}

// ---- losses and optimizers

StatusOr<GpuKernel> PlanLoss(const Op& op, GpuDType t, Views in, Views out, const GpuOpContext& ctx) {
  const TensorView p = in[0], label = in[1], y = out[0];
  const int64_t n = p.num_elements();
  const auto denom = static_cast<double>(op.GetInt("denominator", n));
  void* stream = ctx.stream;
  if (op.kind() == OpKind::kMSELossGrad) {
    return GpuKernel(
        [=] { return LaunchMseLossGrad(t, n, p.data, label.data, denom, y.data, stream); });
  }
  if (t == GpuDType::kF32) {
    auto* loss = reinterpret_cast<float*>(y.data);
    return GpuKernel([=] { return LaunchMseLoss(t, n, p.data, label.data, denom, loss, stream); });
  }
  // A half-precision loss: accumulate into an f32 scratch word, then round.
  if (ctx.scratch == nullptr) return GpuKernel([] { return Status::Ok(); });  // planning only
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer word, DeviceBuffer::Allocate(sizeof(float)));
  auto* acc = static_cast<float*>(word.data());
  ctx.scratch->push_back(std::move(word));
  return GpuKernel([=]() -> Status {
    DISTIR_RETURN_IF_ERROR(LaunchMseLoss(t, n, p.data, label.data, denom, acc, stream));
    return LaunchStoreF32(t, 1, acc, y.data, stream);
  });
}

GpuKernel PlanOptimizer(const Op& op, GpuDType t, Views in, Views out, void* stream) {
  const TensorView w = in[0], dw = in[1], w2 = out[0];
  const int64_t n = w.num_elements();
  if (op.kind() == OpKind::kSGD) {
    const auto lr = static_cast<float>(op.GetFloat("lr", 0.01));
    return [=] { return LaunchSgd(t, n, w.data, dw.data, lr, w2.data, stream); };
  }
  const backend::AdamParams defaults;  // the CPU's defaults, so both backends agree
  GpuAdamParams p;
  p.lr = static_cast<float>(op.GetFloat("lr", defaults.lr));
  p.beta1 = static_cast<float>(op.GetFloat("beta1", defaults.beta1));
  p.beta2 = static_cast<float>(op.GetFloat("beta2", defaults.beta2));
  p.epsilon = static_cast<float>(op.GetFloat("epsilon", defaults.epsilon));
  p.step = op.GetInt("step", defaults.step);
  const TensorView m = in[2], v = in[3], m2 = out[1], v2 = out[2];
  return [=] {
    return LaunchAdam(t, n, w.data, dw.data, m.data, v.data, p, w2.data, m2.data, v2.data, stream);
  };
}

// Where(cond, x, y): cond is bool (one byte per element), all three broadcast.
StatusOr<GpuKernel> PlanWhere(const Op& op, GpuDType t, Views in, Views out, void* stream) {
  if (in[0].dtype != DType::kBool) return Unsupported(op) << "a condition that is not bool";
  const TensorView c = in[0], x = in[1], y = in[2], r = out[0];
  if (r.rank() > kGpuMaxRank) return Unsupported(op) << "more than " << kGpuMaxRank << " axes";
  const GpuBroadcast shape = MakeGpuBroadcast(r.shape, {c.shape, x.shape, y.shape});
  return GpuKernel([=] {
    return LaunchWhere(static_cast<int>(ByteWidth(t)), shape, c.data, x.data, y.data, r.data,
                       stream);
  });
}

// Embedding gather along axis 0. The indices are checked on the host first
// (gpu_kernels.h requires them in range): a copy and a stream synchronisation
// per Gather, the price of never faulting on a bad index.
StatusOr<GpuKernel> PlanGather(const Op& op, GpuDType t, Views in, Views out, void* stream) {
  const TensorView table = in[0], idx = in[1], y = out[0];
  if (idx.dtype != DType::kI64) return Unsupported(op) << "indices that are not i64";
  if (table.rank() < 1 || NormalizeAxis(op.GetInt("axis", 0), table.rank()) != 0) {
    return Unsupported(op) << "a gather along an axis other than 0";
  }
  const int64_t rows = table.shape[0];
  const int64_t width = Prod(std::span(table.shape).subspan(1));
  const int64_t n = idx.num_elements();
  const SourceLoc loc = op.loc();
  const std::string name = op.Name();
  auto host = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(n));
  return GpuKernel([=]() -> Status {
    auto s = static_cast<cudaStream_t>(stream);
    DISTIR_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host->data(), idx.data, static_cast<size_t>(idx.bytes()),
                                                cudaMemcpyDeviceToHost, s));
    DISTIR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
    for (int64_t i : *host) {
      if (i < 0 || i >= rows) return InvalidArgument(loc) << name << " index " << i << " out of range [0, " << rows << ")";
    }
    return LaunchGather(t, rows, width, table.data, n, idx.as<int64_t>(), y.data, stream);
  });
}

}  // namespace

StatusOr<GpuKernel> PlanGpuComputeOp(const Op& op, Views in, Views out, const GpuOpContext& ctx) {
  if (std::optional<StatusOr<GpuKernel>> layout = PlanGpuLayoutOp(op, in, out, ctx)) {
    return std::move(*layout);
  }
  if (in.empty()) return Unsupported(op) << "no GPU kernel for this op";
  if (std::optional<StatusOr<GpuKernel>> ids = PlanGpuIndexOp(op, in, out, ctx.stream)) {
    return std::move(*ids);
  }
  DISTIR_ASSIGN_OR_RETURN(const GpuDType t, OpDType(op, in, out));
  if (BinaryOf(op.kind())) return PlanNary(op, t, in, out, ctx.stream);
  switch (op.kind()) {
    case OpKind::kMatMul:
      return PlanMatMul(op, t, in, out, ctx);
    case OpKind::kMatMulGrad:
      return PlanMatMulGrad(op, t, in, out, ctx);
    case OpKind::kGemm:
      return PlanGemm(op, t, in, out, ctx);
    case OpKind::kRelu:
    case OpKind::kGelu:
    case OpKind::kSigmoid:
    case OpKind::kSin:
    case OpKind::kCos:
    case OpKind::kReluGrad:
    case OpKind::kGeluGrad:
    case OpKind::kSigmoidGrad:
      return PlanActivation(op, t, in, out, ctx.stream);
    case OpKind::kSoftmax:
    case OpKind::kLayerNormalization:
      return PlanRows(op, t, in, out, ctx.stream);
    case OpKind::kRMSNormalization:
    case OpKind::kRMSNormalizationGrad:
      return PlanRmsNorm(op, t, in, out, ctx);
    case OpKind::kMSELoss:
    case OpKind::kMSELossGrad:
      return PlanLoss(op, t, in, out, ctx);
    case OpKind::kSGD:
    case OpKind::kAdam:
      return PlanOptimizer(op, t, in, out, ctx.stream);
    case OpKind::kGather:
      return PlanGather(op, t, in, out, ctx.stream);
    case OpKind::kWhere:
      return PlanWhere(op, t, in, out, ctx.stream);
    default:
      return Unsupported(op) << "no GPU kernel for this op";
  }
}

}  // namespace distir::gpu
