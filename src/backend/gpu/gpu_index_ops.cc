// Planners of the integer-id ops on the GPU (see gpu_index_ops.h).

#include "backend/gpu/gpu_index_ops.h"

#include "backend/gpu/gpu_kernels.h"

namespace distir::gpu {
namespace {

using backend::TensorView;
using Views = std::span<const TensorView>;
using Unsupported = internal::UnsupportedOp;

bool IsIndex(DType d) { return d == DType::kI64 || d == DType::kI32; }

std::optional<GpuIndexBinary> IndexBinaryOf(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd:
      return GpuIndexBinary::kAdd;
    case OpKind::kSub:
      return GpuIndexBinary::kSub;
    case OpKind::kMul:
      return GpuIndexBinary::kMul;
    case OpKind::kEqual:
      return GpuIndexBinary::kEqual;
    case OpKind::kLess:
      return GpuIndexBinary::kLess;
    default:
      return std::nullopt;
  }
}

StatusOr<GpuKernel> PlanIndexBinary(const Op& op, GpuIndexBinary kind, Views in,
                                    const TensorView& y, void* stream) {
  if (y.rank() > kGpuMaxRank) return Unsupported(op) << "more than " << kGpuMaxRank << " axes";
  const bool wide = in[0].dtype == DType::kI64;
  const GpuBroadcast shape = MakeGpuBroadcast(y.shape, {in[0].shape, in[1].shape});
  const TensorView a = in[0], b = in[1];
  return GpuKernel(
      [=] { return LaunchIndexBinary(kind, wide, shape, a.data, b.data, y.data, stream); });
}

// Where(cond, x, y) with integer or bool x, y: a selection of 8-, 4- or 1-byte
// elements (floats go to gpu_ops.cc's planner).
StatusOr<GpuKernel> PlanSelect(const Op& op, Views in, const TensorView& r, void* stream) {
  if (r.rank() > kGpuMaxRank) return Unsupported(op) << "more than " << kGpuMaxRank << " axes";
  const int bytes = static_cast<int>(distir::ByteWidth(r.dtype));
  const GpuBroadcast shape = MakeGpuBroadcast(r.shape, {in[0].shape, in[1].shape, in[2].shape});
  const TensorView c = in[0], x = in[1], y = in[2];
  return GpuKernel(
      [=] { return LaunchWhere(bytes, shape, c.data, x.data, y.data, r.data, stream); });
}

}  // namespace

std::optional<StatusOr<GpuKernel>> PlanGpuIndexOp(const Op& op, Views in, Views out, void* stream) {
  if (out.size() != 1 || in.empty()) return std::nullopt;
  const TensorView& y = out[0];
  if (op.kind() == OpKind::kNot) {
    if (in[0].dtype != DType::kBool || y.dtype != DType::kBool) return std::nullopt;
    const TensorView x = in[0];
    const int64_t n = y.num_elements();
    return StatusOr<GpuKernel>(GpuKernel([=] { return LaunchNot(n, x.data, y.data, stream); }));
  }
  if (op.kind() == OpKind::kWhere) {
    if (in.size() != 3 || in[0].dtype != DType::kBool) return std::nullopt;
    if (!IsIndex(y.dtype) && y.dtype != DType::kBool) return std::nullopt;
    if (in[1].dtype != y.dtype || in[2].dtype != y.dtype) return std::nullopt;
    return PlanSelect(op, in, y, stream);
  }
  const std::optional<GpuIndexBinary> kind = IndexBinaryOf(op.kind());
  if (!kind || in.size() != 2) return std::nullopt;
  // The operands' dtype: the compared ones for Less/Equal, the result's otherwise.
  const bool compare = *kind == GpuIndexBinary::kEqual || *kind == GpuIndexBinary::kLess;
  const DType t = compare ? in[0].dtype : y.dtype;
  if (!IsIndex(t) || (compare && y.dtype != DType::kBool)) return std::nullopt;
  if (in[0].dtype != t || in[1].dtype != t) return std::nullopt;
  return PlanIndexBinary(op, *kind, in, y, stream);
}

}  // namespace distir::gpu
