// Helpers shared by the CPU kernel files, and their registration functions.
//
// A kernel has the Domain<HostValue>::Rule signature. It starts with
// ResultTypes() (the op's shape rule on the argument types: validation, result
// dtypes and devices), computes its results as DenseTensors in double, and
// wraps each with MakeResult(), which rounds to the result dtype and checks the
// computed shape against the rule's. Internal to src/interp.

#pragma once

#include <cstdint>
#include <vector>

#include "interp/cpu_domain.h"
#include "interp/shape_util.h"

namespace distir::cpu {

using shape::Shape;
using Args = ArgList<HostValue>;
using Values = std::vector<HostValue>;
using Result = StatusOr<Values>;

/// The shape rule of `op` (DefaultShapeDomain) applied to the types of `in`.
StatusOr<std::vector<Type>> ResultTypes(const Op& op, Args in);

/// `tensor` as a value of `rule_type`: dtype set to the type's, elements
/// rounded to it, dynamic extents of the type resolved by the tensor's shape.
/// REQUIRES: rule_type is a tensor or scalar whose extents fit tensor.shape
/// (a mismatch is a kernel bug and aborts).
HostValue MakeResult(const Type& rule_type, DenseTensor tensor);

/// A one-element result list.
Result One(HostValue v);

/// Row-major strides of `shape` (in elements).
Shape Strides(const Shape& shape);

/// For every element of a tensor of shape `out` (row-major order), the flat
/// index of the element of a tensor of shape `in` that numpy broadcasting
/// maps to it. REQUIRES: `in` broadcasts to `out`.
std::vector<int64_t> BroadcastIndex(const Shape& in, const Shape& out);

/// `t` summed over the dims along which `shape` was broadcast to t.shape: the
/// adjoint of broadcasting, used by gradients. REQUIRES: shape broadcasts to t.shape.
DenseTensor SumToShape(const DenseTensor& t, const Shape& shape);

/// The elements of an integral tensor as int64.
Shape Ints(const HostValue& v);

/// A tensor seen as [outer, extent, stride] around one axis: outer is the
/// product of the extents before the axis, stride the product of those after.
/// Element (o, i, s) is at flat index (o * extent + i) * stride + s.
struct AxisSplit {
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t stride = 1;
};
/// REQUIRES: 0 <= axis < shape.size().
AxisSplit SplitAround(const Shape& shape, int64_t axis);

/// Product of shape[begin, end).
int64_t Product(const Shape& shape, size_t begin, size_t end);

/// The shape of a tensor or scalar type (empty for a scalar).
const Shape& ShapeOfType(const Type& type);

/// Numpy broadcast of two shapes. REQUIRES: they broadcast (checked).
Shape BroadcastShapes(const Shape& a, const Shape& b);

/// A 1-D MatMul operand promoted to a matrix as numpy does: [k] -> [1, k] as
/// the left operand (`lhs`), [k] -> [k, 1] as the right; others unchanged.
DenseTensor PromoteForMatMul(const DenseTensor& t, bool lhs);

/// Numpy matmul over the last two dims of `a` and `b` (each transposed first
/// when its flag is set), batched and broadcast over the leading dims; the
/// product of [.., m, k] and [.., k, n] is [batch.., m, n]. Computed with Eigen.
/// REQUIRES: both have rank >= 2, contraction sizes equal, batch dims broadcast.
DenseTensor BatchedMatMul(const DenseTensor& a, bool trans_a, const DenseTensor& b, bool trans_b);

/// Kernel groups registered by RegisterCpuKernels().
void RegisterComputeKernels(CpuDomain& domain);   // cpu_kernels.cc
void RegisterShapeKernels(CpuDomain& domain);     // cpu_shape_kernels.cc
void RegisterTrainingKernels(CpuDomain& domain);  // cpu_training_kernels.cc
void RegisterCommKernels(CpuDomain& domain);      // cpu_comm_kernels.cc
void RegisterTransformerKernels(CpuDomain& domain);  // cpu_transformer_kernels.cc

}  // namespace distir::cpu
