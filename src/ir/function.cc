#include "ir/function.h"

#include <algorithm>

#include "support/check.h"

namespace distir {

Value* Function::AddParam(const std::string& name, Type type, SourceLoc loc) {
  DISTIR_CHECK(!name.empty()) << "empty parameter name";
  int index = num_params();
  params_.push_back(std::make_unique<Value>(next_value_id_++, std::string(name), std::move(type),
                                            nullptr, index, std::move(loc)));
  Value* v = params_.back().get();
  IndexName(v);
  return v;
}

void Function::IndexName(Value* v) {
  if (!names_indexed_ || v->name().empty()) return;
  const bool fresh = by_name_.try_emplace(v->name(), v).second;
  DISTIR_CHECK(fresh) << "redefinition of %" << v->name();
}

void Function::EnsureNameIndex() const {
  if (names_indexed_) return;
  names_indexed_ = true;
  by_name_.reserve(static_cast<size_t>(next_value_id_));
  auto* self = const_cast<Function*>(this);  // the index is a cache of the values
  for (const auto& p : self->params_) self->IndexName(p.get());
  for (const auto& op : self->ops_) {
    for (const auto& r : op->results()) self->IndexName(r.get());
  }
}

void Function::PermuteOps(const std::vector<size_t>& order) {
  DISTIR_CHECK(order.size() == ops_.size()) << "PermuteOps: " << order.size() << " positions for "
                                            << ops_.size() << " ops";
  std::vector<std::unique_ptr<Op>> moved;
  moved.reserve(ops_.size());
  for (size_t i : order) moved.push_back(std::move(ops_[i]));
  ops_ = std::move(moved);
  for (size_t i = 0; i < ops_.size(); ++i) ops_[i]->id_ = static_cast<int>(i);
}

void Function::EraseOps(const std::vector<bool>& dead) {
  DISTIR_CHECK(dead.size() == ops_.size())
      << "EraseOps: " << dead.size() << " marks for " << ops_.size() << " ops";
  size_t kept = 0;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (dead[i]) {
      if (names_indexed_) {
        for (const auto& r : ops_[i]->results()) by_name_.erase(r->name());
      }
      ops_[i].reset();
      continue;
    }
    ops_[i]->id_ = static_cast<int>(kept);
    ops_[kept++] = std::move(ops_[i]);
  }
  ops_.resize(kept);
}

Op* Function::AppendOp(OpKind kind, std::vector<Value*>&& inputs, AttrMap&& attrs,
                       size_t num_results, SourceLoc&& loc, std::string&& callee) {
  for (Value* in : inputs) DISTIR_CHECK(in != nullptr) << "null input";
  int id = static_cast<int>(ops_.size());
  ops_.push_back(std::make_unique<Op>(id, kind, std::move(callee), std::move(inputs),
                                      std::move(attrs), std::move(loc)));
  Op* op = ops_.back().get();
  op->results_.reserve(num_results);
  return op;
}

// The builders' hot path (millions of ops per search): written out rather
// than through AppendOp, which GCC does not inline (+1 % of the emitter's
// instructions on the MLP-1B grid under callgrind).
Op* Function::AddOp(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                    const std::vector<std::string>& result_names, SourceLoc loc,
                    std::string callee) {
  for (Value* in : inputs) DISTIR_CHECK(in != nullptr) << "null input";
  int id = static_cast<int>(ops_.size());
  ops_.push_back(std::make_unique<Op>(id, kind, std::move(callee), std::move(inputs),
                                      std::move(attrs), SourceLoc(loc)));
  Op* op = ops_.back().get();
  op->results_.reserve(result_names.size());
  for (size_t i = 0; i < result_names.size(); ++i) {
    op->results_.push_back(std::make_unique<Value>(next_value_id_++, std::string(result_names[i]),
                                                   Type(), op, static_cast<int>(i),
                                                   SourceLoc(loc)));
    IndexName(op->results_.back().get());
  }
  return op;
}

Op* Function::AddOp(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                    std::vector<std::string>&& result_names, SourceLoc loc, std::string callee) {
  Op* op = AppendOp(kind, std::move(inputs), std::move(attrs), result_names.size(),
                    std::move(loc), std::move(callee));
  for (size_t i = 0; i < result_names.size(); ++i) {
    op->results_.push_back(std::make_unique<Value>(next_value_id_++, std::move(result_names[i]),
                                                   Type(), op, static_cast<int>(i),
                                                   SourceLoc(op->loc())));
    IndexName(op->results_.back().get());
  }
  return op;
}

void Function::SetReturns(std::vector<Value*> values, SourceLoc loc) {
  returns_ = std::move(values);
  return_loc_ = std::move(loc);
}

void Function::Reserve(size_t ops, size_t values) {
  ops_.reserve(ops);
  if (names_indexed_) by_name_.reserve(values);
}

Value* Function::LookupValue(const std::string& name) const {
  EnsureNameIndex();
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::string Function::UniqueName(const std::string& base) const {
  EnsureNameIndex();
  if (!base.empty() && by_name_.count(base) == 0) return base;
  std::string stem = base.empty() ? std::string("v") : base;
  int& next = next_suffix_[stem];
  for (int i = std::max(next, 1);; ++i) {
    std::string candidate = stem;
    candidate += '.';
    candidate += std::to_string(i);
    if (by_name_.count(candidate) == 0) {
      next = i;  // the caller may not take it, so the same name may be offered again
      return candidate;
    }
  }
}

bool Function::IsDeviceGeneric() const {
  for (const auto& p : params_) {
    if (!p->type().Devices().empty()) return false;
  }
  return true;
}

Function* Module::AddFunction(std::unique_ptr<Function> fn) {
  DISTIR_CHECK(fn != nullptr && by_name_.count(fn->name()) == 0)
      << "duplicate function @" << (fn ? fn->name() : "");
  Function* raw = fn.get();
  by_name_[raw->name()] = raw;
  functions_.push_back(std::move(fn));
  return raw;
}

const Mesh* Module::AddMesh(Mesh mesh) {
  DISTIR_CHECK(LookupMesh(mesh.name()) == nullptr) << "duplicate mesh @" << mesh.name();
  meshes_.push_back(std::make_unique<Mesh>(std::move(mesh)));
  return meshes_.back().get();
}

// A module declares a handful of meshes: a linear scan beats a map.
const Mesh* Module::LookupMesh(const std::string& name) const {
  for (const auto& m : meshes_) {
    if (m->name() == name) return m.get();
  }
  return nullptr;
}

std::unique_ptr<Function> Module::ReplaceFunction(std::unique_ptr<Function> fn) {
  Function* old = Lookup(fn->name());
  DISTIR_CHECK(old != nullptr) << "no function @" << fn->name() << " to replace";
  by_name_[fn->name()] = fn.get();
  std::unique_ptr<Function> previous;
  for (auto& slot : functions_) {
    if (slot.get() == old) std::swap(previous, slot);
  }
  for (auto& slot : functions_) {
    if (slot == nullptr) slot = std::move(fn);
  }
  return previous;
}

Function* Module::Lookup(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace distir
