#include "ir/builder.h"

#include "ir/verifier.h"

namespace distir {

FunctionBuilder::FunctionBuilder(std::string name)
    : fn_(std::make_unique<Function>(std::move(name))) {}

Value* FunctionBuilder::Param(const std::string& name, Type type) {
  return fn_->AddParam(fn_->UniqueName(name), std::move(type));
}

std::vector<std::string> FunctionBuilder::UniqueNames(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const std::string& n : names) {
    std::string unique = fn_->UniqueName(n);
    // Two equal requested names in one op must still differ from each other.
    for (const std::string& taken : out) {
      if (taken == unique) unique = fn_->UniqueName(unique + ".r");
    }
    out.push_back(unique);
  }
  return out;
}

Value* FunctionBuilder::Add(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                            const std::string& name) {
  return AddMulti(kind, std::move(inputs), std::move(attrs), {name})[0];
}

std::vector<Value*> FunctionBuilder::AddMulti(OpKind kind, std::vector<Value*> inputs,
                                              AttrMap attrs,
                                              const std::vector<std::string>& names) {
  Op* op = fn_->AddOp(kind, std::move(inputs), std::move(attrs), UniqueNames(names));
  std::vector<Value*> out;
  for (const auto& r : op->results()) out.push_back(r.get());
  return out;
}

std::vector<Value*> FunctionBuilder::Call(const Function& callee, std::vector<Value*> args,
                                          const std::vector<std::string>& names) {
  Op* op = fn_->AddOp(OpKind::kCall, std::move(args), {}, UniqueNames(names), {},
                      callee.name());
  std::vector<Value*> out;
  for (const auto& r : op->results()) out.push_back(r.get());
  return out;
}

void FunctionBuilder::Return(std::vector<Value*> values) { fn_->SetReturns(std::move(values)); }

StatusOr<std::unique_ptr<Function>> FunctionBuilder::Finish(const Module* module) && {
  DISTIR_RETURN_IF_ERROR(VerifyFunction(*fn_, module));
  return std::move(fn_);
}

}  // namespace distir
