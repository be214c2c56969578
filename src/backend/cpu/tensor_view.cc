// Storage conversions of the CPU executor (see tensor_view.h). Everything goes
// through double, the reference executor's element type, so that a value
// stored and loaded again is the value RoundToDType gives.

#include "backend/cpu/tensor_view.h"

#include <cstring>

#include "backend/cpu/host_kernels.h"
#include "support/check.h"
#include "support/parallel_for.h"

namespace distir::backend {
namespace {

double LoadOne(DType dtype, const void* src, int64_t i) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(src)[i];
    case DType::kF64:
      return static_cast<const double*>(src)[i];
    case DType::kI32:
      return static_cast<const int32_t*>(src)[i];
    case DType::kI64:
      return static_cast<double>(static_cast<const int64_t*>(src)[i]);
    case DType::kBool:
      return static_cast<const uint8_t*>(src)[i] != 0 ? 1.0 : 0.0;
    case DType::kF16: {
      float f;
      HalfToFloat(1, static_cast<const uint16_t*>(src) + i, &f);
      return f;
    }
    case DType::kBF16: {
      float f;
      BFloat16ToFloat(1, static_cast<const uint16_t*>(src) + i, &f);
      return f;
    }
  }
  return 0;
}

void StoreOne(DType dtype, double v, void* dst, int64_t i) {
  const double r = RoundToDType(v, dtype);
  switch (dtype) {
    case DType::kF32:
      static_cast<float*>(dst)[i] = static_cast<float>(r);
      return;
    case DType::kF64:
      static_cast<double*>(dst)[i] = r;
      return;
    case DType::kI32:
      static_cast<int32_t*>(dst)[i] = static_cast<int32_t>(r);
      return;
    case DType::kI64:
      static_cast<int64_t*>(dst)[i] = static_cast<int64_t>(r);
      return;
    case DType::kBool:
      static_cast<uint8_t*>(dst)[i] = r != 0 ? 1 : 0;
      return;
    case DType::kF16: {
      const auto f = static_cast<float>(r);
      FloatToHalf(1, &f, static_cast<uint16_t*>(dst) + i);
      return;
    }
    case DType::kBF16: {
      const auto f = static_cast<float>(r);
      FloatToBFloat16(1, &f, static_cast<uint16_t*>(dst) + i);
      return;
    }
  }
}

}  // namespace

TensorView TensorView::OfType(const Type& type, std::byte* data) {
  TensorView v;
  v.dtype = type.dtype();
  if (type.is_tensor()) v.shape.assign(type.shape().begin(), type.shape().end());
  v.data = data;
  return v;
}

int64_t TensorView::num_elements() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

void ConvertElements(DType from, const void* src, DType to, void* dst, int64_t n) {
  if (from == to) {
    std::memcpy(dst, src, static_cast<size_t>(n * ByteWidth(from)));
    return;
  }
  for (int64_t i = 0; i < n; ++i) StoreOne(to, LoadOne(from, src, i), dst, i);
}

void StoreHostValue(const HostValue& value, const TensorView& view) {
  const DenseTensor& t = value.tensor();
  DISTIR_CHECK(static_cast<int64_t>(t.values.size()) == view.num_elements())
      << "host value has " << t.values.size() << " elements, the view " << view.num_elements();
  // On threads for large values: the inputs of a billion-parameter program
  // are stored one element at a time (parallel_for.h).
  ParallelFor(view.num_elements(), int64_t{1} << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) StoreOne(view.dtype, t.values[i], view.data, i);
  });
}

void StoreValues(std::span<const double> values, const TensorView& view, int64_t first) {
  const int64_t n = static_cast<int64_t>(values.size());
  DISTIR_CHECK(first >= 0 && first + n <= view.num_elements())
      << "elements [" << first << ", " << first + n << ") of a view of " << view.num_elements();
  for (int64_t j = 0; j < n; ++j) StoreOne(view.dtype, values[j], view.data, first + j);
}

HostValue LoadHostValue(const TensorView& view, const Type& type) {
  DenseTensor t;
  t.dtype = view.dtype;
  t.shape = view.shape;
  t.values.resize(static_cast<size_t>(view.num_elements()));
  for (int64_t i = 0; i < view.num_elements(); ++i) t.values[i] = LoadOne(view.dtype, view.data, i);
  return HostValue::OfType(type, std::move(t));
}

}  // namespace distir::backend
