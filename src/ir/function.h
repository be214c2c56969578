// Functions and modules.
//
// A Function has typed parameters, a straight-line list of ops in program order
// and a return. It owns its parameters and ops (and through them every value);
// Value* and Op* handles stay valid for the Function's lifetime. A Module owns
// functions; a call may only name a function defined earlier in the module, so
// the call graph is acyclic by construction and the entry function is the last.
// Functions are built by the parser, by FunctionBuilder (builder.h) or by
// transforms; verifier.h checks the invariants they must keep.

#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/mesh.h"
#include "ir/op.h"

namespace distir {

class Function {
 public:
  explicit Function(std::string name) : name_(std::move(name)) {}
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  /// Name without the '@' sigil.
  const std::string& name() const { return name_; }
  const SourceLoc& loc() const { return loc_; }
  void set_loc(SourceLoc loc) { loc_ = std::move(loc); }

  /// Appends a parameter. REQUIRES: `name` is not empty and not used in this function.
  Value* AddParam(const std::string& name, Type type, SourceLoc loc = {});
  /// Appends an op with `result_names.size()` results (an empty name is an
  /// anonymous result) of unknown type. REQUIRES: every non-empty name is unused,
  /// every input belongs to this function and is defined earlier.
  Op* AddOp(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
            const std::vector<std::string>& result_names, SourceLoc loc = {},
            std::string callee = {});
  /// The same, moving the names into the results (no copy of a long name:
  /// replication clones millions of ops).
  Op* AddOp(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
            std::vector<std::string>&& result_names, SourceLoc loc = {},
            std::string callee = {});
  /// Capacity hint for builders that know roughly how big the function gets.
  void Reserve(size_t ops, size_t values);
  /// Sets the returned values. REQUIRES: they belong to this function.
  void SetReturns(std::vector<Value*> values, SourceLoc loc = {});

  const std::vector<std::unique_ptr<Value>>& params() const { return params_; }
  int num_params() const { return static_cast<int>(params_.size()); }
  Value* param(int i) const { return params_[i].get(); }
  const std::vector<std::unique_ptr<Op>>& ops() const { return ops_; }
  const std::vector<Value*>& returns() const { return returns_; }
  const SourceLoc& return_loc() const { return return_loc_; }

  /// One past the largest value id.
  int num_values() const { return next_value_id_; }
  /// The value named `name` (without '%'), or nullptr.
  Value* LookupValue(const std::string& name) const;
  /// `base` if unused, else `base.1`, `base.2`, ...: a fresh name for builders.
  std::string UniqueName(const std::string& base) const;

  /// True when no parameter type carries a device: such a function runs on the
  /// device of the call that invokes it.
  bool IsDeviceGeneric() const;

  /// Reorders the ops in place: the op at position order[i] moves to position
  /// i, and ids follow positions again. Values, names and uses are untouched.
  /// REQUIRES: `order` is a permutation of 0 .. ops().size() - 1 in which every
  /// op comes after the ops defining its inputs (not checked here).
  void PermuteOps(const std::vector<size_t>& order);

  /// Removes in place the ops at the positions `dead` marks, with their
  /// results; the others keep their order, and op ids follow positions
  /// again. Value ids are not reused (num_values() stays). Cheaper than
  /// rebuilding a large function to drop a few ops.
  /// REQUIRES: dead.size() == ops().size(); no op left, and no return, reads
  /// a result of a removed op (not checked here).
  void EraseOps(const std::vector<bool>& dead);

 private:
  // Appends an op without results (AddOp adds them).
  Op* AppendOp(OpKind kind, std::vector<Value*>&& inputs, AttrMap&& attrs, size_t num_results,
               SourceLoc&& loc, std::string&& callee);
  std::string name_;
  SourceLoc loc_;
  std::vector<std::unique_ptr<Value>> params_;
  std::vector<std::unique_ptr<Op>> ops_;
  std::vector<Value*> returns_;
  SourceLoc return_loc_;
  /// Builds by_name_ from the parameters and results when it is not kept yet.
  void EnsureNameIndex() const;
  /// Adds `v` to by_name_ when the index is kept. REQUIRES: its name is unused.
  void IndexName(Value* v);

  /// Name -> value. Kept only once somebody asks (LookupValue, UniqueName): the
  /// transforms emit millions of ops with names unique by construction and never
  /// look one up, and the index was a tenth of their time. Debug builds keep it
  /// from the start, so that a builder's duplicate name fails where it is made.
  /// Keys are views of the values' own names: a value's name never changes
  /// and its Value lives as long as the function (no string copied per value:
  /// a tenth of building a large template, docs/cost_model.md §3.3).
  /// An open-addressing table (Abseil's SwissTable): a lookup touches one
  /// slot array rather than chasing a node per bucket entry, and the index is
  /// the partitioner's hottest structure (docs/cost_model.md §6).
  mutable absl::flat_hash_map<std::string_view, Value*> by_name_;
  mutable bool names_indexed_ = kIndexNamesEagerly;
#ifdef NDEBUG
  static constexpr bool kIndexNamesEagerly = false;
#else
  static constexpr bool kIndexNamesEagerly = true;
#endif
  /// Next suffix to try per base name, so that UniqueName stays O(1) amortized
  /// when a builder asks for the same base a million times.
  mutable absl::flat_hash_map<std::string, int> next_suffix_;
  int next_value_id_ = 0;
};

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  /// Appends a mesh declaration. REQUIRES: no mesh of the same name exists.
  const Mesh* AddMesh(Mesh mesh);
  /// The mesh named `name` (without '@'), or nullptr.
  const Mesh* LookupMesh(const std::string& name) const;
  /// Meshes in declaration order (printed before the functions).
  const std::vector<std::unique_ptr<Mesh>>& meshes() const { return meshes_; }

  /// Appends `fn`. REQUIRES: no function of the same name exists.
  Function* AddFunction(std::unique_ptr<Function> fn);
  /// Replaces the function of the same name as `fn` (keeping its position)
  /// and returns the old one. REQUIRES: such a function exists and no other
  /// function calls it (calls hold no pointer to it, only its name).
  std::unique_ptr<Function> ReplaceFunction(std::unique_ptr<Function> fn);
  /// The function named `name` (without '@'), or nullptr.
  Function* Lookup(const std::string& name) const;
  const std::vector<std::unique_ptr<Function>>& functions() const { return functions_; }
  /// The last function: the program's entry point. nullptr for an empty module.
  Function* entry() const { return functions_.empty() ? nullptr : functions_.back().get(); }

 private:
  std::vector<std::unique_ptr<Function>> functions_;
  std::unordered_map<std::string, Function*> by_name_;
  std::vector<std::unique_ptr<Mesh>> meshes_;
};

}  // namespace distir
