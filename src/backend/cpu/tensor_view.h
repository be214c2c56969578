// A tensor as the CPU executor sees it: a dtype, a static shape and a pointer
// into the rank's arena (memory_plan.h), plus the conversions between that
// storage and HostValue (the reference executor's values, doubles).
//
// Storage is native: f32 as float, f64 as double, f16/bf16 as their 16-bit
// patterns, i32/i64 as integers, bool as one byte (0 or 1). A view does not
// own its data; the executor's arena does, for the executor's lifetime.

#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "interp/cpu_domain.h"
#include "ir/dtype.h"
#include "ir/type.h"

namespace distir::backend {

struct TensorView {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::byte* data = nullptr;

  /// A view of `type` (a tensor or scalar with static shape) at `data`.
  static TensorView OfType(const Type& type, std::byte* data);

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t num_elements() const;
  int64_t bytes() const { return num_elements() * ByteWidth(dtype); }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
};

/// Converts `n` elements from `from` storage at `src` to `to` storage at
/// `dst` through double, rounding as RoundToDType (f16/bf16 to nearest even,
/// integers toward zero, bool to 0/1). `src` and `dst` must not overlap.
void ConvertElements(DType from, const void* src, DType to, void* dst, int64_t n);

/// Writes `value`'s contents (a tensor or scalar of the view's dtype and
/// element count) into the view. REQUIRES: the counts match.
void StoreHostValue(const HostValue& value, const TensorView& view);

/// Writes `values` into the view's elements [first, first + values.size()),
/// converted to the view's dtype as StoreHostValue converts. REQUIRES: the
/// range lies within the view.
void StoreValues(std::span<const double> values, const TensorView& view, int64_t first);

/// The view's contents as a HostValue of `type` (its dtype and shape).
HostValue LoadHostValue(const TensorView& view, const Type& type);

}  // namespace distir::backend
