#include "ir/dense_tensor.h"

#include <cmath>

#include "ir/type.h"
#include "support/str_util.h"

namespace distir {

int64_t ShapeNumElements(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t DenseTensor::NumElements() const { return ShapeNumElements(shape); }

bool DenseTensor::IsWellFormed() const {
  for (int64_t d : shape) {
    if (d < 0) return false;
  }
  return static_cast<int64_t>(values.size()) == NumElements();
}

std::string DenseTensor::ToString() const {
  std::string out = "dense<" + ShapeToString(shape);
  if (!shape.empty()) out += "x";
  out += std::string(DTypeName(dtype)) + ">[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    // Integral dtypes print as integers so that shapes read naturally.
    if (IsIntegral(dtype)) {
      out += std::to_string(static_cast<int64_t>(std::llround(values[i])));
    } else {
      out += FormatDouble(values[i]);
    }
  }
  return out + "]";
}

}  // namespace distir
