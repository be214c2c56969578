#include "interp/concrete_kernels.h"

#include <cmath>

namespace distir::concrete {
namespace {

Shape RowMajorStrides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// Strides of `in` seen through broadcasting to a rank-`rank` result: 0 where
// the input is missing the dimension or has extent 1.
Shape BroadcastStrides(const Shape& in, size_t rank) {
  Shape own = RowMajorStrides(in);
  Shape out(rank, 0);
  const size_t offset = rank - in.size();
  for (size_t i = 0; i < in.size(); ++i) out[offset + i] = in[i] == 1 ? 0 : own[i];
  return out;
}

// Advances a row-major multi-index; the caller counts the elements.
void Increment(Shape& index, const Shape& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++index[d] < shape[d]) return;
    index[d] = 0;
  }
}

int64_t Product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

}  // namespace

Shape ToInts(const DenseTensor& t) {
  Shape out(t.values.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(std::llround(t.values[i]));
  return out;
}

void RoundToDType(DenseTensor& t) {
  if (t.dtype == DType::kBool) {
    for (double& v : t.values) v = v != 0 ? 1 : 0;
  } else if (IsIntegral(t.dtype)) {
    for (double& v : t.values) v = std::trunc(v);
  }
}

DenseTensor BroadcastMap(const std::vector<const DenseTensor*>& inputs, const Shape& out_shape,
                         DType out_dtype, const std::function<double(const double* args)>& fn) {
  DenseTensor out{out_dtype, out_shape, {}};
  const int64_t n = ShapeNumElements(out_shape);
  out.values.resize(n);
  std::vector<Shape> strides;
  strides.reserve(inputs.size());
  for (const DenseTensor* in : inputs)
    strides.push_back(BroadcastStrides(in->shape, out_shape.size()));
  Shape index(out_shape.size(), 0);
  std::vector<double> args(inputs.size());
  for (int64_t flat = 0; flat < n; ++flat) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      int64_t offset = 0;
      for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[k][d];
      args[k] = inputs[k]->values[offset];
    }
    out.values[flat] = fn(args.data());
    Increment(index, out_shape);
  }
  RoundToDType(out);
  return out;
}

StatusOr<DenseTensor> Gather(const Op& op, const DenseTensor& data, const DenseTensor& indices,
                             int64_t axis) {
  const int64_t extent = data.shape[axis];
  const int64_t outer = Product(data.shape, 0, axis);
  const int64_t inner = Product(data.shape, axis + 1, data.shape.size());
  DenseTensor out{data.dtype, Shape(data.shape.begin(), data.shape.begin() + axis), {}};
  out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
  out.shape.insert(out.shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  out.values.reserve(ShapeNumElements(out.shape));
  const Shape idx = ToInts(indices);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : idx) {
      const int64_t j = i < 0 ? i + extent : i;
      if (j < 0 || j >= extent) {
        return InvalidArgument(op.loc()) << "Gather index " << i << " is out of range for axis "
                                         << axis << " of extent " << extent;
      }
      const auto begin = data.values.begin() + (o * extent + j) * inner;
      out.values.insert(out.values.end(), begin, begin + inner);
    }
  }
  return out;
}

DenseTensor Concat(const std::vector<const DenseTensor*>& inputs, int64_t axis) {
  DenseTensor out{inputs[0]->dtype, inputs[0]->shape, {}};
  out.shape[axis] = 0;
  for (const DenseTensor* in : inputs) out.shape[axis] += in->shape[axis];
  const int64_t outer = Product(out.shape, 0, axis);
  out.values.reserve(ShapeNumElements(out.shape));
  for (int64_t o = 0; o < outer; ++o) {
    for (const DenseTensor* in : inputs) {
      const int64_t block = Product(in->shape, axis, in->shape.size());
      const auto begin = in->values.begin() + o * block;
      out.values.insert(out.values.end(), begin, begin + block);
    }
  }
  return out;
}

DenseTensor Slice(const DenseTensor& data, const std::vector<shape::SliceDim>& dims) {
  DenseTensor out{data.dtype, Shape(dims.size()), {}};
  for (size_t d = 0; d < dims.size(); ++d) out.shape[d] = dims[d].count;
  const int64_t n = ShapeNumElements(out.shape);
  out.values.resize(n);
  const Shape strides = RowMajorStrides(data.shape);
  Shape index(dims.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      offset += (dims[d].start + index[d] * dims[d].step) * strides[d];
    }
    out.values[flat] = data.values[offset];
    Increment(index, out.shape);
  }
  return out;
}

DenseTensor Reduce(const DenseTensor& data, const std::vector<bool>& reduced,
                   const Shape& out_shape, bool mean) {
  // Reduced dims map to index 0 of a keepdims-shaped accumulator, whose flat
  // layout is the same as that of `out_shape`.
  Shape kept(data.shape.size());
  for (size_t d = 0; d < kept.size(); ++d) kept[d] = reduced[d] ? 1 : data.shape[d];
  const Shape strides = RowMajorStrides(kept);
  DenseTensor out{data.dtype, out_shape, std::vector<double>(ShapeNumElements(kept), 0.0)};
  Shape index(data.shape.size(), 0);
  for (double v : data.values) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += (reduced[d] ? 0 : index[d]) * strides[d];
    out.values[offset] += v;
    Increment(index, data.shape);
  }
  if (mean && !out.values.empty()) {
    // Every output element sums the same number of inputs.
    const double count =
        static_cast<double>(data.values.size()) / static_cast<double>(out.values.size());
    for (double& v : out.values) v /= count;
  }
  RoundToDType(out);
  return out;
}

}  // namespace distir::concrete
