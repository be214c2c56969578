// The mixed abstract/concrete domain (paper §3.3, Figure 4).
//
// A MixedValue is either abstract (a Type, as in the shape domain) or concrete:
// a small integer tensor with its device, such as the result of Shape on a
// tensor of static shape. Concrete rules (mixed_rules.cc) compute such values
// exactly (Shape, Gather, Unsqueeze, Concat, arithmetic, ...), and mixed rules
// use concrete shape arguments to give abstract tensors static shapes (Reshape,
// Expand, Slice, ...). Every other case falls back to the shape rules
// (shape_domain.h). Only integer and bool tensors of at most
// kMaxConcreteElements elements stay concrete; anything else is abstracted to
// its type, so the cost of the domain stays that of the shape domain.

#pragma once

#include <memory>
#include <string>

#include "interp/domain.h"
#include "ir/dense_tensor.h"
#include "ir/type.h"

namespace distir {

/// Largest concrete tensor the mixed domain keeps (shapes and indices are tiny).
inline constexpr int64_t kMaxConcreteElements = 1024;

/// A value of the mixed domain. Cheap to copy: the concrete contents are shared
/// and immutable.
class MixedValue {
 public:
  /// The unknown abstract value.
  MixedValue() = default;
  /// An abstract value.
  explicit MixedValue(Type type) : type_(std::move(type)) {}

  /// A concrete value, kept concrete whatever its dtype and size.
  /// REQUIRES: tensor.IsWellFormed().
  static MixedValue Concrete(DenseTensor tensor, DeviceId device);

  /// The domain's policy: concrete when `tensor` is integral (i32, i64, bool)
  /// with at most kMaxConcreteElements elements, else abstracted to its type.
  static MixedValue Make(DenseTensor tensor, DeviceId device);

  bool is_concrete() const { return concrete_ != nullptr; }
  /// The abstract type; for a concrete value, tensor<shape x dtype, device>.
  const Type& type() const& { return type_; }
  /// Moves the type out of a value that is going away.
  Type type() && { return std::move(type_); }
  /// REQUIRES: is_concrete().
  const DenseTensor& tensor() const;
  DeviceId device() const { return type_.device(); }

  /// The same value on `device` (or without a device).
  MixedValue WithDevice(DeviceId device) const;

  /// The type's text, or for a concrete value "dense<...>[...] on d0".
  std::string ToString() const;

  bool operator==(const MixedValue& other) const;

 private:
  Type type_;
  std::shared_ptr<const DenseTensor> concrete_;
};

template <>
struct ValueTraits<MixedValue> {
  static bool IsConcrete(const MixedValue& v) { return v.is_concrete(); }
  static MixedValue FromType(const Type& type) { return MixedValue(type); }
  static const Type& TypeOf(const MixedValue& v) { return v.type(); }
  static MixedValue WithDevice(const MixedValue& v, DeviceId device) {
    return v.WithDevice(device);
  }
};

/// A rule table over mixed values, named "mixed". Empty when constructed;
/// RegisterMixedRules() fills it and installs the fallback to the shape rules.
class MixedDomain : public Domain<MixedValue> {
 public:
  MixedDomain() : Domain<MixedValue>("mixed") {}
};

/// Registers the concrete and mixed rules, and as fallback the rules of
/// DefaultShapeDomain() applied to the arguments' types.
void RegisterMixedRules(MixedDomain& domain);

/// A mixed domain with all rules registered, built on first use and immutable
/// afterwards (safe to share between threads). Lives until the process exits.
const MixedDomain& DefaultMixedDomain();

}  // namespace distir
