// Helpers of the reference-executor tests: host values from literals, and
// running the entry function of an IR text on the executor.

#pragma once

#include <string_view>
#include <vector>

#include "interp/reference_executor.h"
#include "testing/test_util.h"

namespace distir::testing {

/// A tensor of `shape` holding `values` (row-major), dtype `dtype`, on `device`.
inline HostValue T(std::vector<int64_t> shape, std::vector<double> values,
                   DType dtype = DType::kF32, DeviceId device = DeviceId(0)) {
  return HostValue::Tensor(DenseTensor{dtype, std::move(shape), std::move(values)}, device);
}

/// The same on device d0 in f64.
inline HostValue F64(std::vector<int64_t> shape, std::vector<double> values) {
  return T(std::move(shape), std::move(values), DType::kF64);
}

/// An i64 tensor on d0.
inline HostValue I64(std::vector<int64_t> shape, std::vector<double> values) {
  return T(std::move(shape), std::move(values), DType::kI64);
}

/// The elements of a tensor value.
inline std::vector<double> Elems(const HostValue& v) { return v.tensor().values; }

/// Parses, verifies and infers `text` (dies on error), then runs its entry
/// function on `args`. Inferred types make Execute check every kernel's
/// result against the shape rules.
inline StatusOr<std::vector<HostValue>> RunText(std::string_view text,
                                                std::vector<HostValue> args) {
  Module m = ParseAndInferOrDie(text);
  return Execute(m, *m.entry(), std::move(args));
}

}  // namespace distir::testing
