// Layout and constant ops of the GPU executor (see gpu_layout_ops.h). Sizes
// come from the static types, fixed at planning time.

#include "backend/gpu/gpu_layout_ops.h"

#include <cuda_runtime.h>

#include <numeric>
#include <vector>

#include "backend/cpu/layout_ops.h"
#include "backend/gpu/cuda_check.h"
#include "backend/gpu/gpu_kernels.h"
#include "backend/shape_math.h"

namespace distir::gpu {
namespace {

using backend::NormalizeAxis;
using backend::Prod;
using backend::TensorView;
using Views = std::span<const TensorView>;
using Unsupported = internal::UnsupportedOp;

cudaStream_t S(void* stream) { return static_cast<cudaStream_t>(stream); }

// Constant, ConstantOfShape and Shape read no tensor: the CPU planner computes
// their bytes once into host memory; they are uploaded once and copied into
// the arena each iteration (the arena slot may be reused between iterations).
StatusOr<GpuKernel> PlanHostConstant(const Op& op, Views in, const TensorView& y,
                                     const GpuOpContext& ctx) {
  std::vector<std::byte> host(static_cast<size_t>(y.bytes()));
  TensorView on_host = y;
  on_host.data = host.data();
  const std::optional<StatusOr<backend::CpuKernel>> cpu =
      backend::PlanLayoutOp(op, in, std::span<const TensorView>(&on_host, 1));
  if (!cpu.has_value()) return Unsupported(op) << "no host evaluation";
  DISTIR_RETURN_IF_ERROR(cpu->status());
  if (ctx.scratch == nullptr || host.empty()) return GpuKernel([] { return Status::Ok(); });
  DISTIR_RETURN_IF_ERROR((**cpu)());
  DISTIR_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(host.size()));
  DISTIR_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(buffer.data(), host.data(), host.size(), cudaMemcpyHostToDevice));
  const void* src = buffer.data();
  ctx.scratch->push_back(std::move(buffer));
  const size_t bytes = host.size();
  void* stream = ctx.stream;
  return GpuKernel([=]() -> Status {
    DISTIR_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(y.data, src, bytes, cudaMemcpyDeviceToDevice, S(stream)));
    return Status::Ok();
  });
}

StatusOr<GpuKernel> PlanTranspose(const Op& op, const TensorView& x, const TensorView& y,
                                  void* stream) {
  std::vector<int64_t> perm(static_cast<size_t>(x.rank()));
  std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the axes
  if (const Attribute* a = op.FindAttr("perm")) perm = a->AsInts();
  if (x.rank() > kGpuMaxRank) return Unsupported(op) << "more than " << kGpuMaxRank << " axes";
  const GpuPermute p = MakeGpuPermute(x.shape, perm);
  const auto eb = static_cast<int>(ByteWidth(x.dtype));
  return GpuKernel([=] { return LaunchPermute(eb, p, x.data, y.data, stream); });
}

// Split and Concat copy `outer` rows of one part's bytes between a wide and a
// narrow row pitch: one cudaMemcpy2DAsync per part, no kernel.
struct AxisParts {
  int64_t outer = 0, inner_bytes = 0;  // inner_bytes: one index of the axis
};

AxisParts PartsOf(const std::vector<int64_t>& shape, int64_t axis, DType dtype) {
  const auto a = static_cast<size_t>(axis);
  return {Prod(std::span(shape).first(a)), Prod(std::span(shape).subspan(a + 1)) * ByteWidth(dtype)};
}

// Copies `len` indices of the axis: from `src` (axis extent src_extent, at
// src_begin) to `dst` (extent dst_extent, at dst_begin).
Status CopyAxisRange(const AxisParts& p, const std::byte* src, int64_t src_extent, int64_t src_begin,
                     std::byte* dst, int64_t dst_extent, int64_t dst_begin, int64_t len,
                     void* stream) {
  if (p.outer == 0 || len == 0 || p.inner_bytes == 0) return Status::Ok();
  const auto width = static_cast<size_t>(len * p.inner_bytes);
  DISTIR_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(
      dst + dst_begin * p.inner_bytes, static_cast<size_t>(dst_extent * p.inner_bytes),
      src + src_begin * p.inner_bytes, static_cast<size_t>(src_extent * p.inner_bytes), width,
      static_cast<size_t>(p.outer), cudaMemcpyDeviceToDevice, S(stream)));
  return Status::Ok();
}

GpuKernel PlanSplit(const Op& op, const TensorView& x, Views out, void* stream) {
  const int64_t axis = NormalizeAxis(op.GetInt("axis", 0), x.rank());
  const AxisParts parts = PartsOf(x.shape, axis, x.dtype);
  const std::vector<TensorView> outs(out.begin(), out.end());
  return [=]() -> Status {
    int64_t begin = 0;
    for (const TensorView& y : outs) {
      const int64_t len = y.shape[axis];
      DISTIR_RETURN_IF_ERROR(
          CopyAxisRange(parts, x.data, x.shape[axis], begin, y.data, len, 0, len, stream));
      begin += len;
    }
    return Status::Ok();
  };
}

GpuKernel PlanConcat(const Op& op, Views in, const TensorView& y, void* stream) {
  const int64_t axis = NormalizeAxis(op.GetInt("axis", 0), y.rank());
  const AxisParts parts = PartsOf(y.shape, axis, y.dtype);
  const std::vector<TensorView> ins(in.begin(), in.end());
  return [=]() -> Status {
    int64_t begin = 0;
    for (const TensorView& x : ins) {
      const int64_t len = x.shape[axis];
      DISTIR_RETURN_IF_ERROR(
          CopyAxisRange(parts, x.data, len, 0, y.data, y.shape[axis], begin, len, stream));
      begin += len;
    }
    return Status::Ok();
  };
}

StatusOr<GpuKernel> PlanTrilu(const Op& op, Views in, const TensorView& y, void* stream) {
  const TensorView x = in[0];
  if (x.rank() < 2) return Unsupported(op) << "Trilu of rank < 2";
  // k would have to be read back from the device before each launch.
  if (in.size() > 1) return Unsupported(op) << "a k operand (only k = 0 runs on the GPU)";
  const bool upper = op.GetInt("upper", 1) != 0;
  const int64_t rows = x.shape[x.rank() - 2], cols = x.shape[x.rank() - 1];
  const int64_t batch = x.num_elements() / std::max<int64_t>(rows * cols, 1);
  const auto eb = static_cast<int>(ByteWidth(x.dtype));
  return GpuKernel(
      [=] { return LaunchTrilu(eb, batch, rows, cols, 0, upper, x.data, y.data, stream); });
}

}  // namespace

std::optional<StatusOr<GpuKernel>> PlanGpuLayoutOp(const Op& op, Views in, Views out,
                                                   const GpuOpContext& ctx) {
  switch (op.kind()) {
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kIdentity:
      return GpuKernel();  // the result shares the input's buffer (ir/op_alias.h)
    case OpKind::kConstant:
    case OpKind::kConstantOfShape:
    case OpKind::kShape:
      return PlanHostConstant(op, in, out[0], ctx);
    case OpKind::kTranspose:
      return PlanTranspose(op, in[0], out[0], ctx.stream);
    case OpKind::kSplit:
      return PlanSplit(op, in[0], out, ctx.stream);
    case OpKind::kConcat:
      return PlanConcat(op, in, out[0], ctx.stream);
    case OpKind::kTrilu:
      return PlanTrilu(op, in, out[0], ctx.stream);
    default:
      return std::nullopt;
  }
}

}  // namespace distir::gpu
