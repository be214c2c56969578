// Index arithmetic on static shapes, shared by the backend's op planners (the
// CPU's compute, layout and communication ops, and the GPU's). The shapes are
// those of a rank program's static types, whose element counts the memory plan
// has already checked, so none of these can overflow and none checks ranges:
// the planners check an op's attributes before they ask.

#pragma once

#include <cstdint>
#include <span>
#include <utility>

namespace distir::backend {

/// The product of `dims`; 1 when `dims` is empty.
inline int64_t Prod(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

/// `axis` of a rank-`rank` shape counted from the front: axis + rank when
/// negative (ONNX's convention), else `axis` unchanged.
inline int64_t NormalizeAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// The element counts before and after `axis` of `shape`:
/// {Prod(shape[0, axis)), Prod(shape(axis, rank))}. A tensor is then an
/// [outer, shape[axis], inner] block, the view split, concat, gather and the
/// collectives along an axis work on. REQUIRES: 0 <= axis < shape.size().
inline std::pair<int64_t, int64_t> OuterInner(std::span<const int64_t> shape, int64_t axis) {
  const auto a = static_cast<size_t>(axis);
  return {Prod(shape.first(a)), Prod(shape.subspan(a + 1))};
}

}  // namespace distir::backend
