// The CPU domain: concrete host tensors as values, for the reference executor.
//
// A HostValue is what a DistIR value holds when the program really runs: a
// dense tensor (ir/dense_tensor.h, doubles in row-major order) with its dtype
// and device, a scalar, or a tuple of such values. The kernels (cpu_kernels.cc,
// cpu_shape_kernels.cc, cpu_training_kernels.cc, cpu_comm_kernels.cc) give
// every op of op_kinds.def its ONNX (or DistIR) semantics. Each kernel first
// applies the op's shape rule (shape_domain.h) to the arguments' types, so
// ill-typed ops fail here exactly as they do in type inference, and results
// carry the devices and dtypes the shape rules give. Arithmetic is done in
// double; every result is then rounded to its dtype (RoundToDType), so an f32
// program gives f32 results. reference_executor.h is the public entry point.

#pragma once

#include <memory>
#include <string>
#include <vector>

#include "interp/domain.h"
#include "ir/dense_tensor.h"
#include "ir/type.h"

namespace distir {

/// A concrete value: a tensor or scalar with its contents, or a tuple.
/// Cheap to copy: tensor contents are shared and immutable.
class HostValue {
 public:
  /// The empty value (unknown type, no contents): a slot not yet computed.
  HostValue() = default;

  /// A tensor holding `tensor` on `device` (none for a device-generic value).
  /// REQUIRES: tensor.IsWellFormed().
  static HostValue Tensor(DenseTensor tensor, DeviceId device = {});
  /// A scalar (type `scalar<dtype, device>`) holding `value`.
  static HostValue Scalar(DType dtype, double value, DeviceId device = {});
  /// A tuple of `elements` (its device is theirs when they share one).
  static HostValue Tuple(std::vector<HostValue> elements);
  /// A value of `type` (a tensor or scalar type) with contents `tensor`; the
  /// type's dynamic extents take the tensor's extents.
  /// REQUIRES: type is a tensor or scalar of tensor.dtype whose extents fit
  /// tensor.shape (a scalar: rank 0); tensor.IsWellFormed().
  static HostValue OfType(const Type& type, DenseTensor tensor);

  /// Tensor type with static shape, scalar, tuple, or unknown for the empty value.
  const Type& type() const { return type_; }
  bool is_tuple() const { return type_.is_tuple(); }
  /// True for tensors and scalars (values with contents).
  bool has_tensor() const { return tensor_ != nullptr; }
  /// The contents of a tensor or scalar (a scalar is a rank-0 tensor).
  /// REQUIRES: has_tensor().
  const DenseTensor& tensor() const;
  /// REQUIRES: is_tuple().
  const std::vector<HostValue>& elements() const;
  DeviceId device() const { return type_.device(); }

  /// The same value on `device` (every element of a tuple), or without a device.
  HostValue WithDevice(DeviceId device) const;

  /// "dense<2x2xf32>[1, 2, 3, 4] on d0", "(v0, v1)" for a tuple, "empty".
  std::string ToString() const;

  /// Same type and the same elements exactly.
  bool operator==(const HostValue& other) const;

 private:
  Type type_;
  std::shared_ptr<const DenseTensor> tensor_;
  std::vector<HostValue> elements_;
};

template <>
struct ValueTraits<HostValue> {
  static bool IsConcrete(const HostValue& /*v*/) { return true; }
  /// A value of `type` filled with zeros (dynamic extents become 0).
  static HostValue FromType(const Type& type);
  static const Type& TypeOf(const HostValue& v) { return v.type(); }
  static HostValue WithDevice(const HostValue& v, DeviceId device) { return v.WithDevice(device); }
};

/// A kernel table over host values, named "cpu". Empty when constructed; fill
/// it with RegisterCpuKernels().
class CpuDomain : public Domain<HostValue> {
 public:
  CpuDomain() : Domain<HostValue>("cpu") {}
};

/// Registers one kernel for every primitive op of op_kinds.def.
void RegisterCpuKernels(CpuDomain& domain);

/// A CPU domain with all kernels registered, built on first use and immutable
/// afterwards (safe to share between threads). Lives until the process exits.
const CpuDomain& DefaultCpuDomain();

/// `value` rounded to what `dtype` holds: f64 unchanged; f32 by a float cast;
/// f16 and bf16 to nearest, ties to even, with subnormals, overflowing to
/// +-inf (f16 above 65504, bf16 above about 3.39e38), NaN kept; i32 and i64
/// truncated toward zero; bool to 0 or 1 (any nonzero, NaN included, is 1).
double RoundToDType(double value, DType dtype);

/// Rounds every element of `tensor` to tensor.dtype.
void RoundTensorToDType(DenseTensor& tensor);

}  // namespace distir
