// Helpers shared by the clean-up passes (cleanup.h): reading a mesh
// collective's attributes and matching its single-use producer.

#pragma once

#include <string>
#include <vector>

#include "ir/op.h"

namespace distir::sharding {

inline const std::vector<std::string>& AxesOf(const Op& op) {
  return op.FindAttr("axes")->AsStrings();
}
inline const std::string& MeshNameOf(const Op& op) { return op.FindAttr("mesh")->AsString(); }
inline std::string ReductionOf(const Op& op) {
  const Attribute* r = op.FindAttr("reduction");
  return r == nullptr ? "sum" : r->AsString();
}

/// The op defining `v` when it is of `kind` and `v` has exactly one use.
inline const Op* SingleUseProducer(const Value* v, OpKind kind, const std::vector<int>& uses) {
  const Op* def = v->def();
  if (def == nullptr || def->kind() != kind || uses[v->id()] != 1) return nullptr;
  return def;
}

/// A collective over the same mesh, axes (same order) and dim as `b`.
inline bool Mirrors(const Op& a, const Op& b) {
  return MeshNameOf(a) == MeshNameOf(b) && AxesOf(a) == AxesOf(b) &&
         a.GetInt("axis", -1) == b.GetInt("axis", -1);
}

/// The attributes of an all-reduce over `axes` of `mesh` (sum is the default).
inline AttrMap AllReduceAttrs(const std::string& mesh, const std::vector<std::string>& axes,
                              const std::string& reduction) {
  AttrMap attrs = {{"mesh", Attribute(mesh)}, {"axes", Attribute(axes)}};
  if (reduction != "sum") attrs["reduction"] = Attribute(reduction);
  return attrs;
}

/// Same axes, in any order.
bool SameAxisSet(const std::vector<std::string>& a, const std::vector<std::string>& b);

/// True when both shardings are present and equal.
bool SameSharding(const Value* a, const Value* b);

}  // namespace distir::sharding
