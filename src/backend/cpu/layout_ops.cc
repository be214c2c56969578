// Layout and constant ops of the CPU executor (see layout_ops.h). Sizes come
// from the static types; only Slice's starts and Trilu's k are read at run
// time, from the tensors the program computed.

#include "backend/cpu/layout_ops.h"

#include <cstring>
#include <numeric>

#include "backend/cpu/host_kernels.h"
#include "backend/shape_math.h"

namespace distir::backend {
namespace {

using Views = std::span<const TensorView>;

// The value of element 0 of an integer view (i64 or i32) at run time.
int64_t ReadInt(const TensorView& v, int64_t i = 0) {
  return v.dtype == DType::kI32 ? v.as<int32_t>()[i] : v.as<int64_t>()[i];
}

// Bytes of `t` converted to `dtype` storage.
std::vector<std::byte> Encode(const DenseTensor& t, DType dtype) {
  std::vector<std::byte> bytes(t.values.size() * static_cast<size_t>(ByteWidth(dtype)));
  ConvertElements(DType::kF64, t.values.data(), dtype, bytes.data(),
                  static_cast<int64_t>(t.values.size()));
  return bytes;
}

CpuKernel CopyBytes(std::vector<std::byte> bytes, const TensorView& y) {
  return [bytes = std::move(bytes), y] {
    std::memcpy(y.data, bytes.data(), bytes.size());
    return Status::Ok();
  };
}

CpuKernel PlanConstantOfShape(const Op& op, const TensorView& y) {
  DenseTensor one;
  one.values = {0.0};
  if (const Attribute* a = op.FindAttr("value")) one = a->AsTensor();
  const std::vector<std::byte> pattern = Encode(one, y.dtype);
  std::vector<std::byte> bytes(static_cast<size_t>(y.bytes()));
  for (size_t i = 0; i < bytes.size(); i += pattern.size()) {
    std::memcpy(bytes.data() + i, pattern.data(), pattern.size());
  }
  return CopyBytes(std::move(bytes), y);
}

CpuKernel PlanShape(const Op& op, const TensorView& x, const TensorView& y) {
  const auto rank = x.rank();
  int64_t start = NormalizeAxis(op.GetInt("start", 0), rank);
  int64_t end = op.FindAttr("end") ? NormalizeAxis(op.GetInt("end", rank), rank) : rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  DenseTensor t;
  t.values.assign(x.shape.begin() + start, x.shape.begin() + end);
  return CopyBytes(Encode(t, y.dtype), y);
}

CpuKernel PlanTranspose(const Op& op, const TensorView& x, const TensorView& y) {
  std::vector<int64_t> perm(static_cast<size_t>(x.rank()));
  std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the axes
  if (const Attribute* a = op.FindAttr("perm")) perm = a->AsInts();
  const int64_t eb = ByteWidth(x.dtype);
  return [=] { return Transpose(x.shape, perm, eb, x.data, y.data), Status::Ok(); };
}

CpuKernel PlanSplit(const Op& op, const TensorView& x, Views out) {
  const int64_t axis = NormalizeAxis(op.GetInt("axis", 0), x.rank());
  const auto [outer, inner] = OuterInner(x.shape, axis);
  const int64_t eb = ByteWidth(x.dtype);
  std::vector<TensorView> outs(out.begin(), out.end());
  return [=] {
    int64_t begin = 0;
    for (const TensorView& y : outs) {
      const int64_t len = y.shape[axis];
      CopyAxisRange(outer, inner, eb, x.data, x.shape[axis], begin, len, y.data, len, 0);
      begin += len;
    }
    return Status::Ok();
  };
}

CpuKernel PlanConcat(const Op& op, Views in, const TensorView& y) {
  const int64_t axis = NormalizeAxis(op.GetInt("axis", 0), y.rank());
  const auto [outer, inner] = OuterInner(y.shape, axis);
  const int64_t eb = ByteWidth(y.dtype);
  std::vector<TensorView> ins(in.begin(), in.end());
  return [=] {
    int64_t begin = 0;
    for (const TensorView& x : ins) {
      const int64_t len = x.shape[axis];
      CopyAxisRange(outer, inner, eb, x.data, len, 0, len, y.data, y.shape[axis], begin);
      begin += len;
    }
    return Status::Ok();
  };
}

// Slice(data, starts, ends, axes?, steps?) along one axis; the output extent
// is known from the type, the start is read (and clamped as ONNX) at run time.
StatusOr<CpuKernel> PlanSlice(const Op& op, Views in, const TensorView& y) {
  const TensorView x = in[0], starts = in[1];
  if (starts.num_elements() != 1) {
    return Unimplemented(op.loc()) << "the CPU backend slices along one axis only, got "
                                   << starts.num_elements();
  }
  const TensorView axes = in.size() > 3 ? in[3] : TensorView{};
  const TensorView steps = in.size() > 4 ? in[4] : TensorView{};
  const bool has_axes = in.size() > 3, has_steps = in.size() > 4;
  const int64_t eb = ByteWidth(x.dtype);
  return CpuKernel([=] {
    const int64_t axis = has_axes ? NormalizeAxis(ReadInt(axes), x.rank()) : 0;
    const int64_t step = has_steps ? ReadInt(steps) : 1;
    const int64_t extent = x.shape[axis];
    int64_t start = ReadInt(starts);
    if (start < 0) start += extent;
    start = step > 0 ? std::clamp<int64_t>(start, 0, extent) : std::clamp<int64_t>(start, 0, extent - 1);
    const auto [outer, inner] = OuterInner(x.shape, axis);
    SliceAxis(outer, inner, eb, x.data, extent, start, step, y.shape[axis], y.data);
    return Status::Ok();
  });
}

CpuKernel PlanTrilu(const Op& op, Views in, const TensorView& y) {
  const TensorView x = in[0];
  const TensorView kv = in.size() > 1 ? in[1] : TensorView{};
  const bool has_k = in.size() > 1, upper = op.GetInt("upper", 1) != 0;
  const int64_t rows = x.shape[x.rank() - 2], cols = x.shape[x.rank() - 1];
  const int64_t batch = x.num_elements() / std::max<int64_t>(rows * cols, 1);
  const int64_t eb = ByteWidth(x.dtype);
  return [=] {
    Trilu(batch, rows, cols, has_k ? ReadInt(kv) : 0, upper, eb, x.data, y.data);
    return Status::Ok();
  };
}

}  // namespace

std::optional<StatusOr<CpuKernel>> PlanLayoutOp(const Op& op, std::span<const TensorView> in,
                                                std::span<const TensorView> out) {
  switch (op.kind()) {
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kIdentity:
      return CpuKernel();  // the result shares the input's buffer (ir/op_alias.h)
    case OpKind::kConstant:
      return CopyBytes(Encode(op.FindAttr("value")->AsTensor(), out[0].dtype), out[0]);
    case OpKind::kConstantOfShape:
      return PlanConstantOfShape(op, out[0]);
    case OpKind::kShape:
      return PlanShape(op, in[0], out[0]);
    case OpKind::kCast: {
      const TensorView x = in[0], y = out[0];
      return CpuKernel([=] {
        return ConvertElements(x.dtype, x.data, y.dtype, y.data, x.num_elements()), Status::Ok();
      });
    }
    case OpKind::kTranspose:
      return PlanTranspose(op, in[0], out[0]);
    case OpKind::kSplit:
      return PlanSplit(op, in[0], out);
    case OpKind::kConcat:
      return PlanConcat(op, in, out[0]);
    case OpKind::kSlice:
      return PlanSlice(op, in, out[0]);
    case OpKind::kTrilu:
      if (in[0].rank() < 2) return StatusOr<CpuKernel>(Unimplemented(op.loc()) << "Trilu of rank < 2");
      return PlanTrilu(op, in, out[0]);
    default:
      return std::nullopt;
  }
}

}  // namespace distir::backend
