#include "backend/cpu/index_ops.h"

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace distir::backend {
namespace {

bool IsIndex(DType d) { return d == DType::kI64 || d == DType::kI32; }

// Element strides of `v` read at every index of `out_shape` (numpy
// broadcasting: 0 along a dimension it repeats, including those it lacks).
std::vector<int64_t> IndexStrides(const TensorView& v, const std::vector<int64_t>& out_shape) {
  const size_t r = out_shape.size();
  std::vector<int64_t> strides(r, 0);
  int64_t stride = 1;
  for (size_t k = 0; k < v.shape.size(); ++k) {
    const size_t src = v.shape.size() - 1 - k, dst = r - 1 - k;
    if (v.shape[src] != 1) strides[dst] = stride;
    stride *= v.shape[src];
  }
  return strides;
}

// Calls f(out_index, operand offsets...) for every element of `shape`, the
// operands' offsets advanced by their broadcast strides (an odometer over the
// output's index; ids tensors are small, so clarity beats speed here).
template <size_t N, typename F>
void ForEachBroadcast(const std::vector<int64_t>& shape,
                      const std::array<std::vector<int64_t>, N>& strides, F f) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<int64_t> idx(shape.size(), 0);
  std::array<int64_t, N> off{};
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (size_t d = shape.size(); d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (idx[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

// y[i] = f(a[.], b[.]) with broadcasting; T the operands', R the result's type.
template <typename T, typename R, typename F>
CpuKernel PlanBinaryIndex(const TensorView& a, const TensorView& b, const TensorView& y, F f) {
  const std::array<std::vector<int64_t>, 2> s = {IndexStrides(a, y.shape),
                                                 IndexStrides(b, y.shape)};
  return [=] {
    const T* pa = a.as<T>();
    const T* pb = b.as<T>();
    R* py = y.as<R>();
    ForEachBroadcast<2>(y.shape, s, [&](int64_t i, const std::array<int64_t, 2>& o) {
      py[i] = f(pa[o[0]], pb[o[1]]);
    });
    return Status::Ok();
  };
}

template <typename T>
CpuKernel PlanSelect(const TensorView& c, const TensorView& a, const TensorView& b,
                     const TensorView& y) {
  const std::array<std::vector<int64_t>, 3> s = {IndexStrides(c, y.shape), IndexStrides(a, y.shape),
                                                 IndexStrides(b, y.shape)};
  return [=] {
    const uint8_t* pc = c.as<uint8_t>();
    const T* pa = a.as<T>();
    const T* pb = b.as<T>();
    T* py = y.as<T>();
    ForEachBroadcast<3>(y.shape, s, [&](int64_t i, const std::array<int64_t, 3>& o) {
      py[i] = pc[o[0]] != 0 ? pa[o[1]] : pb[o[2]];
    });
    return Status::Ok();
  };
}

template <typename T>
std::optional<StatusOr<CpuKernel>> PlanOf(const Op& op, std::span<const TensorView> in,
                                          const TensorView& y) {
  if (op.kind() != OpKind::kWhere && in.size() != 2) return std::nullopt;
  switch (op.kind()) {
    case OpKind::kAdd:
      return StatusOr<CpuKernel>(PlanBinaryIndex<T, T>(in[0], in[1], y, std::plus<T>()));
    case OpKind::kSub:
      return StatusOr<CpuKernel>(PlanBinaryIndex<T, T>(in[0], in[1], y, std::minus<T>()));
    case OpKind::kMul:
      return StatusOr<CpuKernel>(PlanBinaryIndex<T, T>(in[0], in[1], y, std::multiplies<T>()));
    case OpKind::kLess:
      return StatusOr<CpuKernel>(PlanBinaryIndex<T, uint8_t>(in[0], in[1], y, std::less<T>()));
    case OpKind::kEqual:
      return StatusOr<CpuKernel>(
          PlanBinaryIndex<T, uint8_t>(in[0], in[1], y, std::equal_to<T>()));
    case OpKind::kWhere:
      if (in[0].dtype != DType::kBool) return std::nullopt;
      return StatusOr<CpuKernel>(PlanSelect<T>(in[0], in[1], in[2], y));
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<StatusOr<CpuKernel>> PlanIndexOp(const Op& op, std::span<const TensorView> in,
                                               std::span<const TensorView> out) {
  if (out.size() != 1 || in.empty()) return std::nullopt;
  const TensorView& y = out[0];
  if (op.kind() == OpKind::kNot && in[0].dtype == DType::kBool && y.dtype == DType::kBool) {
    const TensorView x = in[0];
    return StatusOr<CpuKernel>(CpuKernel([x, y] {
      const int64_t n = y.num_elements();
      for (int64_t i = 0; i < n; ++i) y.as<uint8_t>()[i] = x.as<uint8_t>()[i] == 0;
      return Status::Ok();
    }));
  }
  // The operands' dtype: the compared ones for Less/Equal, the result's otherwise.
  const bool compare = op.kind() == OpKind::kLess || op.kind() == OpKind::kEqual;
  const DType t = compare ? in[0].dtype : y.dtype;
  if (!IsIndex(t) || (compare && y.dtype != DType::kBool)) return std::nullopt;
  for (size_t i = op.kind() == OpKind::kWhere ? 1 : 0; i < in.size(); ++i) {
    if (in[i].dtype != t) return std::nullopt;
  }
  return t == DType::kI64 ? PlanOf<int64_t>(op, in, y) : PlanOf<int32_t>(op, in, y);
}

}  // namespace distir::backend
