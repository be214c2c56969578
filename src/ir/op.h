// Operations.
//
// An Op is an invocation of a registered primitive (op_registry.h) or a call of
// another function of the module (kind kCall, `@f(...)` in the text). It refers
// to its inputs by non-owning Value* and owns its results. Ops are created by
// Function::AddOp, which keeps them in program order; program order is the
// schedule (docs/ir.md).

#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/op_registry.h"
#include "ir/value.h"

namespace distir {

class Function;

class Op {
 public:
  // Taken by rvalue reference: each is moved once, into its member (the
  // builders make millions of ops, and a by-value parameter moved again cost
  // a string move per string, 1-2 % of building a template).
  Op(int id, OpKind kind, std::string&& callee, std::vector<Value*>&& inputs, AttrMap&& attrs,
     SourceLoc&& loc)
      : id_(id),
        kind_(kind),
        callee_(std::move(callee)),
        inputs_(std::move(inputs)),
        attrs_(std::move(attrs)),
        loc_(std::move(loc)) {}
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  /// Dense id in [0, Function::ops().size()), equal to the position in program order.
  int id() const { return id_; }
  OpKind kind() const { return kind_; }
  bool is_call() const { return kind_ == OpKind::kCall; }
  /// Name of the called function without '@'. REQUIRES: is_call().
  const std::string& callee() const { return callee_; }
  /// The registered op name ("MatMul") or "@callee" for a call.
  std::string Name() const;

  const std::vector<Value*>& inputs() const { return inputs_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  Value* input(int i) const;
  void set_input(int i, Value* value);

  int num_results() const { return static_cast<int>(results_.size()); }
  Value* result(int i) const;
  const std::vector<std::unique_ptr<Value>>& results() const { return results_; }

  const AttrMap& attrs() const { return attrs_; }
  /// The attribute `name`, or nullptr; valid until the op's attributes change
  /// (SetAttr, EraseAttr: the map is flat).
  const Attribute* FindAttr(std::string_view name) const;
  /// Convenience getters with a default for optional attributes.
  /// REQUIRES: when present, the attribute has the requested kind (the verifier ensures it).
  int64_t GetInt(std::string_view name, int64_t default_value) const;
  double GetFloat(std::string_view name, double default_value) const;
  void SetAttr(const std::string& name, Attribute value) { attrs_[name] = std::move(value); }
  /// Removes attribute `name` (nothing when absent).
  void EraseAttr(const std::string& name) { attrs_.erase(name); }

  const SourceLoc& loc() const { return loc_; }

 private:
  friend class Function;

  int id_;
  OpKind kind_;
  std::string callee_;
  std::vector<Value*> inputs_;
  std::vector<std::unique_ptr<Value>> results_;
  AttrMap attrs_;
  SourceLoc loc_;
};

}  // namespace distir
