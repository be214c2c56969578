// Types of DistIR values.
//
// A tensor type records what every abstract domain needs to know about a tensor
// without its contents: element type, shape and the device holding it. A scalar
// is a single element on a device; a tuple groups other types (the paper packs a
// layer's weights into one). Placing a value on a device is part of its type, so
// moving data between devices always shows up as an explicit op (Send, ...).
// A value whose type is not yet inferred has the unknown type.
//
// Types are small immutable values: copy them freely and compare them with ==.
// Text forms (parsed back exactly by parser.h):
//   tensor<8x512xf32, d0>   tensor<f32, d1> (rank 0)   tensor<?x768xf16> (no device)
//   scalar<i64, d0>         tuple<tensor<4x4xf32, d0>, tensor<4xf32, d0>>

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/device.h"
#include "ir/dtype.h"

namespace distir {

/// An extent not known statically, printed "?".
inline constexpr int64_t kDynamicDim = -1;

enum class TypeKind { kUnknown, kTensor, kScalar, kTuple };

class Type {
 public:
  /// The unknown type (not yet inferred).
  Type() = default;

  /// REQUIRES: every extent is >= 0 or kDynamicDim.
  static Type Tensor(DType dtype, std::vector<int64_t> shape, DeviceId device = {});
  static Type Scalar(DType dtype, DeviceId device = {});
  static Type Tuple(std::vector<Type> elements);

  TypeKind kind() const { return kind_; }
  bool is_unknown() const { return kind_ == TypeKind::kUnknown; }
  bool is_tensor() const { return kind_ == TypeKind::kTensor; }
  bool is_scalar() const { return kind_ == TypeKind::kScalar; }
  bool is_tuple() const { return kind_ == TypeKind::kTuple; }

  /// REQUIRES: is_tensor() or is_scalar().
  DType dtype() const;
  /// REQUIRES: is_tensor().
  const std::vector<int64_t>& shape() const;
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }
  /// Device of a tensor or scalar; for a tuple, the device shared by all its
  /// elements, or none when they differ or there is none. Unknown: none.
  DeviceId device() const;
  /// REQUIRES: is_tuple().
  const std::vector<Type>& elements() const;

  /// True when the shape of every tensor in the type is fully known.
  bool HasStaticShape() const;
  /// Elements of a tensor (1 for rank 0 and scalars). REQUIRES: HasStaticShape().
  int64_t NumElements() const;
  /// Bytes the value occupies: elements times ByteWidth, summed over tuples.
  /// REQUIRES: HasStaticShape(); 0 for the unknown type.
  int64_t SizeInBytes() const;

  /// This type placed on `device` (for a tuple, every element).
  Type WithDevice(DeviceId device) const;
  /// A tensor of the same device and dtype with another shape. REQUIRES: is_tensor().
  Type WithShape(std::vector<int64_t> shape) const;
  /// A tensor or scalar of the same shape and device with another dtype.
  Type WithDType(DType dtype) const;

  /// Every distinct device the type mentions, in first-seen order.
  std::vector<DeviceId> Devices() const;

  /// Canonical text (see the file comment); "?" for the unknown type.
  std::string ToString() const;

  bool operator==(const Type& other) const;
  bool operator!=(const Type& other) const { return !(*this == other); }

 private:
  TypeKind kind_ = TypeKind::kUnknown;
  DType dtype_ = DType::kF32;
  std::vector<int64_t> shape_;
  DeviceId device_;
  std::vector<Type> elements_;
};

std::ostream& operator<<(std::ostream& os, const Type& type);

/// "8x512", "?x768", "" (rank 0): the shape part of a tensor type's text.
std::string ShapeToString(const std::vector<int64_t>& shape);

}  // namespace distir
