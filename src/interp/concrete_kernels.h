// Host kernels on small DenseTensors for the concrete half of the mixed domain.
//
// These compute shape arithmetic exactly (Figure 4's Shape -> Gather -> Concat
// chain): they run on tensors of at most a few thousand elements, so they are
// written for clarity, not speed. Shapes and arguments are validated by the
// shape rules before a kernel runs; kernels only check what depends on values
// (an index out of range, a division by zero). Internal to src/interp.

#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "interp/shape_util.h"
#include "ir/dense_tensor.h"

namespace distir::concrete {

using shape::Shape;

/// The elements of an integral tensor as int64 (values are exact integers).
Shape ToInts(const DenseTensor& t);

/// Elementwise `fn` over the numpy broadcast of `inputs` into `out_shape`.
/// REQUIRES: every input broadcasts to `out_shape` (static).
DenseTensor BroadcastMap(const std::vector<const DenseTensor*>& inputs, const Shape& out_shape,
                         DType out_dtype, const std::function<double(const double* args)>& fn);

/// Rounds values to what `dtype` can hold: truncation for integers, 0/1 for bool.
void RoundToDType(DenseTensor& t);

/// ONNX Gather along `axis` (already normalized); error for an index out of range.
StatusOr<DenseTensor> Gather(const Op& op, const DenseTensor& data, const DenseTensor& indices,
                             int64_t axis);

/// Concatenation along `axis` (already normalized). REQUIRES: shapes fit.
DenseTensor Concat(const std::vector<const DenseTensor*>& inputs, int64_t axis);

/// The elements selected by a resolved Slice (one SliceDim per dimension).
DenseTensor Slice(const DenseTensor& data, const std::vector<shape::SliceDim>& dims);

/// Sum (or mean) over the dims marked in `reduced`; `out_shape` has them as 1
/// or removed. Integer means truncate.
DenseTensor Reduce(const DenseTensor& data, const std::vector<bool>& reduced,
                   const Shape& out_shape, bool mean);

}  // namespace distir::concrete
