// The shape domain: types as abstract values.
//
// Each value is abstracted by its Type (dtype, shape with possibly dynamic
// extents, device). The rules in shape_rules.cc implement ONNX shape semantics
// for every op of op_kinds.def plus DistIR's gradient, optimizer and global
// communication ops, and check what makes an op ill-typed: inputs on different
// devices, mismatched shapes or dtypes, axes out of range. Values whose shape
// depends on tensor contents (Reshape's target, Range's length) get dynamic
// extents ("?"); the mixed domain (mixed_domain.h) resolves those when the
// contents are small concrete integers.

#pragma once

#include "interp/domain.h"
#include "ir/type.h"

namespace distir {

template <>
struct ValueTraits<Type> {
  static bool IsConcrete(const Type& /*v*/) { return false; }
  static Type FromType(const Type& type) { return type; }
  static const Type& TypeOf(const Type& v) { return v; }
  static Type WithDevice(const Type& v, DeviceId device) { return v.WithDevice(device); }
};

/// A rule table over types, named "shape". Empty when constructed; fill it with
/// RegisterShapeRules().
class ShapeDomain : public Domain<Type> {
 public:
  ShapeDomain() : Domain<Type>("shape") {}
};

/// Registers one rule for every primitive op of op_kinds.def.
void RegisterShapeRules(ShapeDomain& domain);

/// A shape domain with all rules registered, built on first use and immutable
/// afterwards (safe to share between threads). Lives until the process exits.
const ShapeDomain& DefaultShapeDomain();

}  // namespace distir
