// Rebuilder: copy a function op by op into a new one, with substitutions.
//
// The sharding passes rewrite a global-view function by walking its ops in
// program order and, per op, either cloning it, binding its results to
// values already in the new function, or emitting other ops in its place.
// Values of the old function map to values of the new one; names, types,
// shardings and locations are kept. Finish() sets the mapped returns.

#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/function.h"

namespace distir::sharding {

class Rebuilder {
 public:
  /// Starts the copy of `fn`: its parameters are copied at once.
  explicit Rebuilder(const Function& fn);

  /// A probe: every value of `fn` maps to itself and what is emitted goes to
  /// a scratch function that is thrown away. RewriteOps asks a rewrite with
  /// a probe whether it applies anywhere before it copies the function.
  static Rebuilder Probe(const Function& fn);

  /// The new value standing for `old`. REQUIRES: `old` was bound.
  Value* Map(const Value* old) const { return map_[old->id()]; }
  /// Makes `now` stand for `old`.
  void Bind(const Value* old, Value* now) { map_[old->id()] = now; }
  /// Copies `op` with mapped inputs and binds its results.
  Op* Clone(const Op& op);
  /// Appends an op of one result with `type` and `sharding` (may be null).
  Value* Emit(OpKind kind, std::vector<Value*> inputs, AttrMap attrs, const std::string& name,
              const SourceLoc& loc, const Type& type, const Sharding* sharding);
  /// The function being built, for emitters that add several ops.
  Function& out() { return *out_; }
  /// A fresh name in the new function starting with `base`.
  std::string Fresh(const std::string& base) { return out_->UniqueName(base); }
  /// The new function, with the mapped returns.
  std::unique_ptr<Function> Finish();

 private:
  struct ProbeTag {};
  Rebuilder(const Function& fn, ProbeTag);

  const Function& fn_;
  std::unique_ptr<Function> out_;
  std::vector<Value*> map_;
};

/// Rewrites `function` of `module` op by op: `rewrite(op, uses, b)` either
/// emits the op's replacement into `b` (binding the op's results) and returns
/// true, or returns false and the op is cloned. `uses` counts the uses of the
/// old function's values. When anything was rewritten the function is
/// replaced and mesh collectives left unused are removed; returns whether.
/// A rewrite must emit nothing when it returns false: the function is first
/// probed (Rebuilder::Probe) and copied only when some op is rewritten.
/// The skeleton of every clean-up pass (cleanup.h).
bool RewriteOps(Module& module, std::string function,
                const std::function<bool(const Op&, const std::vector<int>&, Rebuilder&)>& rewrite);

/// Uses of each value of `fn` (by value id), returns included.
std::vector<int> CountUses(const Function& fn);

/// Removes mesh collectives and MeshSlice ops whose results are unused (the
/// rewrites leave them behind). Returns true when one was removed.
bool RemoveDeadMeshOps(Module& module, std::string function);

}  // namespace distir::sharding
