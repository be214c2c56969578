// FunctionBuilder: building functions from C++ (model builders, transforms, tests).
//
// A thin layer over Function::AddOp that picks fresh value names, attaches
// attributes and, in Finish(), runs the verifier. Result types are left unknown;
// interp/infer_types.h fills them.

#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

class FunctionBuilder {
 public:
  explicit FunctionBuilder(std::string name);

  /// Adds a parameter named `name` (made unique if taken).
  Value* Param(const std::string& name, Type type);
  /// Adds an op with one result named `name` (made unique; "" gives "v", "v.1", ...).
  Value* Add(OpKind kind, std::vector<Value*> inputs, AttrMap attrs = {},
             const std::string& name = "");
  /// Adds an op with `names.size()` results.
  std::vector<Value*> AddMulti(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                               const std::vector<std::string>& names);
  /// Adds a call of `callee` with `names.size()` results.
  std::vector<Value*> Call(const Function& callee, std::vector<Value*> args,
                           const std::vector<std::string>& names);
  void Return(std::vector<Value*> values);

  Function& function() { return *fn_; }

  /// Verifies and hands over the function. `module` resolves calls (may be null).
  StatusOr<std::unique_ptr<Function>> Finish(const Module* module = nullptr) &&;

 private:
  std::vector<std::string> UniqueNames(const std::vector<std::string>& names);

  std::unique_ptr<Function> fn_;
};

}  // namespace distir
