// A small dense tensor held in host memory.
//
// Used for constant attributes in the IR (Constant's `value`), for the concrete
// half of the mixed abstract/concrete domain (shapes and indices that must stay
// concrete, paper Figure 4) and as the value type of the reference executor.
// Elements are stored as double whatever the dtype: integers up to 2^53 are
// exact, which covers shapes and indices, and f16/bf16/f32 values are rounded to
// their dtype by the kernels that produce them.
//
// Text form (inside attributes): dense<2x3xi64>[1, 2, 3, 4, 5, 6]; rank 0:
// dense<f32>[0.5]. Elements are listed flat in row-major order.

#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace distir {

struct DenseTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<double> values;  ///< row-major; size() == product of shape

  /// Product of the extents (1 for rank 0).
  int64_t NumElements() const;
  /// True when values.size() matches the shape and every extent is >= 0.
  bool IsWellFormed() const;
  /// Canonical text, see the file comment.
  std::string ToString() const;

  bool operator==(const DenseTensor& other) const = default;
};

/// Element count of `shape`; 1 for rank 0. REQUIRES: no dynamic extents.
int64_t ShapeNumElements(std::span<const int64_t> shape);

}  // namespace distir
