#include "importers/onnx/onnx_op_map.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <string_view>
#include <vector>

#include "importers/onnx/onnx_tensor.h"
#include "interp/cpu_domain.h"

namespace distir::onnx_import {
namespace {

using onnx::AttributeProto;

// The ONNX op types the importer maps, each to the DistIR op of the same name.
// Training, tuple and communication ops have no ONNX counterpart in opsets
// 13..17 (Gelu only arrives in opset 20, RMSNormalization in opset 23), so they
// are not listed: opset-17 LLaMA exports write RMSNorm as Pow ReduceMean Add
// Sqrt Div Mul and SiLU as Sigmoid Mul.
constexpr std::string_view kSupported[] = {
    "Add",       "Cast",      "Concat",  "Constant", "ConstantOfShape",
    "Cos",       "Div",       "Equal",   "Erf",      "Exp",
    "Expand",    "Gather",    "Gemm",    "Identity", "LayerNormalization",
    "Less",      "MatMul",    "Max",     "Min",      "Mul",
    "Neg",       "Not",       "Pow",     "Range",    "ReduceMean",
    "ReduceSum", "Relu",      "Reshape", "Shape",    "Sigmoid",
    "Sin",       "Slice",     "Softmax", "Split",    "Sqrt",
    "Squeeze",   "Sub",       "Sum",     "Tanh",     "Transpose",
    "Trilu",     "Unsqueeze", "Where",
};

// Attributes DistIR does not model, accepted when they hold ONNX's default.
struct IgnoredDefault {
  std::string_view op;
  std::string_view attr;
  int64_t value;
};
constexpr std::array<IgnoredDefault, 2> kIgnoredDefaults = {{
    {"ReduceSum", "noop_with_empty_axes", 0},
    {"ReduceMean", "noop_with_empty_axes", 0},
}};

bool IsSupported(std::string_view op_type) {
  return std::find(std::begin(kSupported), std::end(kSupported), op_type) != std::end(kSupported);
}

std::string AttrTypeOf(const AttributeProto& a) {
  return AttributeProto::AttributeType_Name(a.type());
}

StatusBuilder BadAttr(const AttributeProto& a, std::string_view op, std::string_view expected) {
  return InvalidArgument() << "attribute '" << a.name() << "' of " << op << " must be "
                           << expected << ", got " << AttrTypeOf(a);
}

StatusOr<Attribute> ConvertDTypeAttr(const AttributeProto& a, std::string_view op,
                                     const NodeContext& ctx) {
  if (a.type() != AttributeProto::INT) return BadAttr(a, op, "INT (an ONNX element type)");
  const std::string what = "attribute '" + a.name() + "' of " + std::string(op);
  DISTIR_ASSIGN_OR_RETURN(DType dtype,
                          ImportDType(static_cast<int32_t>(a.i()), ctx.float_dtype, what));
  return Attribute(dtype);
}

// Converts `a` to the kind `spec` declares.
StatusOr<Attribute> ConvertAttr(const AttributeProto& a, const AttrSpec& spec,
                                std::string_view op, const NodeContext& ctx) {
  switch (spec.type) {
    case AttrType::kInt:
      if (a.type() != AttributeProto::INT) return BadAttr(a, op, "INT");
      return Attribute(static_cast<int64_t>(a.i()));
    case AttrType::kFloat:
      if (a.type() == AttributeProto::INT) return Attribute(static_cast<double>(a.i()));
      if (a.type() != AttributeProto::FLOAT) return BadAttr(a, op, "FLOAT");
      return Attribute(static_cast<double>(a.f()));
    case AttrType::kString:
      if (a.type() != AttributeProto::STRING) return BadAttr(a, op, "STRING");
      return Attribute(a.s());
    case AttrType::kInts:
      if (a.type() != AttributeProto::INTS) return BadAttr(a, op, "INTS");
      return Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AttrType::kFloats:
      if (a.type() != AttributeProto::FLOATS) return BadAttr(a, op, "FLOATS");
      return Attribute(std::vector<double>(a.floats().begin(), a.floats().end()));
    case AttrType::kDType:
      return ConvertDTypeAttr(a, op, ctx);
    case AttrType::kTensor: {
      if (a.type() != AttributeProto::TENSOR) return BadAttr(a, op, "TENSOR");
      const std::string what = "attribute '" + a.name() + "' of " + std::string(op);
      DISTIR_ASSIGN_OR_RETURN(DenseTensor t, ReadTensor(a.t(), ctx.float_dtype, what));
      return Attribute(std::move(t));
    }
    default:
      return InvalidArgument() << "attribute '" << a.name() << "' of " << op
                               << " has a kind the importer does not convert";
  }
}

bool IsIgnoredDefault(std::string_view op, const AttributeProto& a) {
  for (const IgnoredDefault& d : kIgnoredDefaults) {
    if (d.op == op && d.attr == a.name() && a.type() == AttributeProto::INT && a.i() == d.value) {
      return true;
    }
  }
  return false;
}

// Constant's one value attribute, whichever form (opset 13 has six).
StatusOr<DenseTensor> ConstantValue(const AttributeProto& a, const NodeContext& ctx) {
  const DType f = ctx.float_dtype.value_or(DType::kF32);
  if (a.name() == "value" && a.type() == AttributeProto::TENSOR) {
    return ReadTensor(a.t(), ctx.float_dtype, "the value of Constant");
  }
  if (a.name() == "value_float" && a.type() == AttributeProto::FLOAT) {
    return DenseTensor{f, {}, {static_cast<double>(a.f())}};
  }
  if (a.name() == "value_int" && a.type() == AttributeProto::INT) {
    return DenseTensor{DType::kI64, {}, {static_cast<double>(a.i())}};
  }
  if (a.name() == "value_floats" && a.type() == AttributeProto::FLOATS) {
    DenseTensor t{f, {a.floats_size()}, {a.floats().begin(), a.floats().end()}};
    return t;
  }
  if (a.name() == "value_ints" && a.type() == AttributeProto::INTS) {
    DenseTensor t{DType::kI64, {a.ints_size()}, {}};
    for (int64_t v : a.ints()) t.values.push_back(static_cast<double>(v));
    return t;
  }
  return InvalidArgument() << "Constant attribute '" << a.name() << "' (" << AttrTypeOf(a)
                           << ") is not supported (value, value_float, value_floats, value_int, "
                              "value_ints are)";
}

StatusOr<ConvertedOp> ConvertConstant(const onnx::NodeProto& node, const NodeContext& ctx) {
  if (node.attribute_size() != 1) {
    return InvalidArgument() << "Constant must have exactly one value attribute, got "
                             << node.attribute_size();
  }
  ConvertedOp out{OpKind::kConstant, {}};
  DISTIR_ASSIGN_OR_RETURN(DenseTensor value, ConstantValue(node.attribute(0), ctx));
  RoundTensorToDType(value);
  out.attrs["value"] = std::move(value);
  if (ctx.device.has_value()) out.attrs["device"] = ctx.device;
  return out;
}

}  // namespace

StatusOr<ConvertedOp> ConvertNode(const onnx::NodeProto& node, const NodeContext& ctx) {
  const std::string& op = node.op_type();
  const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
  if (!default_domain || !IsSupported(op)) {
    std::string domain = default_domain ? "" : " of domain '" + node.domain() + "'";
    return Unimplemented() << "ONNX op " << op << domain << " (opset " << ctx.opset
                           << ") is not supported; supported ops: " << SupportedOps();
  }
  if (op == "Constant") return ConvertConstant(node, ctx);
  ConvertedOp out{*LookupOpKind(op), {}};
  const OpInfo& info = GetOpInfo(out.kind);
  for (const AttributeProto& a : node.attribute()) {
    const AttrSpec* spec = info.FindAttr(a.name());
    if (spec == nullptr) {
      if (IsIgnoredDefault(op, a)) continue;
      return InvalidArgument() << "attribute '" << a.name() << "' of " << op
                               << " is not supported by the importer";
    }
    DISTIR_ASSIGN_OR_RETURN(out.attrs[a.name()], ConvertAttr(a, *spec, op, ctx));
  }
  return out;
}

std::string SupportedOps() {
  std::vector<std::string_view> ops(std::begin(kSupported), std::end(kSupported));
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  std::string out;
  for (std::string_view op : ops) {
    if (!out.empty()) out += ", ";
    out += op;
  }
  return out;
}

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  const std::string who = node.name().empty() ? "#" + std::to_string(index) : "'" + node.name() + "'";
  return "node " + who + " (" + node.op_type() + ")";
}

}  // namespace distir::onnx_import
