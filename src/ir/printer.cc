#include "ir/printer.h"

namespace distir {
namespace {

// Types are printed only when every result has one: a partially typed result
// list has no text form, and inference fills all results of an op at once.
bool AllResultsTyped(const Op& op) {
  for (const auto& r : op.results()) {
    if (r->type().is_unknown()) return false;
  }
  return true;
}

std::string PrintAttrs(const AttrMap& attrs) {
  if (attrs.empty()) return "";
  std::string out = " {";
  bool first = true;
  for (const auto& [name, value] : attrs) {
    if (!first) out += ", ";
    first = false;
    out += name + " = " + value.ToString();
  }
  return out + "}";
}

// A value's type, then its sharding when it has one: `tensor<8xf32> <@m, [[a]]>`.
std::string TypeAndSharding(const Value& v) {
  std::string out = v.type().ToString();
  if (v.sharding() != nullptr) out += " " + v.sharding()->ToString();
  return out;
}

}  // namespace

std::string PrintOp(const Op& op) {
  std::string out;
  for (int i = 0; i < op.num_results(); ++i) {
    if (i > 0) out += ", ";
    out += op.result(i)->Ref();
  }
  out += " = " + op.Name() + "(";
  for (int i = 0; i < op.num_inputs(); ++i) {
    if (i > 0) out += ", ";
    out += op.input(i)->Ref();
  }
  out += ")" + PrintAttrs(op.attrs());
  if (op.num_results() > 0 && AllResultsTyped(op)) {
    out += " : ";
    for (int i = 0; i < op.num_results(); ++i) {
      if (i > 0) out += ", ";
      out += TypeAndSharding(*op.result(i));
    }
  }
  return out;
}

std::string PrintFunction(const Function& fn) {
  std::string out = "func @" + fn.name() + "(";
  for (int i = 0; i < fn.num_params(); ++i) {
    if (i > 0) out += ", ";
    out += fn.param(i)->Ref() + ": " + TypeAndSharding(*fn.param(i));
  }
  out += ") {\n";
  for (const auto& op : fn.ops()) out += "  " + PrintOp(*op) + "\n";
  out += "  return";
  for (size_t i = 0; i < fn.returns().size(); ++i) {
    out += i == 0 ? " " : ", ";
    out += fn.returns()[i]->Ref();
  }
  return out + "\n}\n";
}

std::string PrintModule(const Module& module) {
  std::string out;
  for (const auto& mesh : module.meshes()) out += mesh->ToString() + "\n";
  for (size_t i = 0; i < module.functions().size(); ++i) {
    if (i > 0 || !module.meshes().empty()) out += "\n";
    out += PrintFunction(*module.functions()[i]);
  }
  return out;
}

}  // namespace distir
