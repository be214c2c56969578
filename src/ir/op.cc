#include "ir/op.h"

#include "support/check.h"

namespace distir {

std::string Op::Name() const {
  return is_call() ? "@" + callee_ : std::string(OpKindName(kind_));
}

Value* Op::input(int i) const {
  DISTIR_CHECK(i >= 0 && i < num_inputs()) << "input index out of range";
  return inputs_[i];
}

void Op::set_input(int i, Value* value) {
  DISTIR_CHECK(i >= 0 && i < num_inputs()) << "input index out of range";
  inputs_[i] = value;
}

Value* Op::result(int i) const {
  DISTIR_CHECK(i >= 0 && i < num_results()) << "result index out of range";
  return results_[i].get();
}

const Attribute* Op::FindAttr(std::string_view name) const {
  // An op has a few attributes, side by side in the flat map: comparing
  // lengths first finds one with fewer byte comparisons than a binary search's
  // ordered ones (lookups are ~3 % of a search, most of them for "task").
  if (attrs_.size() <= 8) {
    for (const auto& [key, attr] : attrs_) {
      if (key.size() == name.size() && key == name) return &attr;
    }
    return nullptr;
  }
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

int64_t Op::GetInt(std::string_view name, int64_t default_value) const {
  const Attribute* a = FindAttr(name);
  return a == nullptr ? default_value : a->AsInt();
}

double Op::GetFloat(std::string_view name, double default_value) const {
  const Attribute* a = FindAttr(name);
  return a == nullptr ? default_value : a->AsFloat();
}

}  // namespace distir
