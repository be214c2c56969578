#include "importers/onnx/onnx_importer.h"

#include <charconv>
#include <climits>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "importers/onnx/onnx_op_map.h"
#include "importers/onnx/onnx_tensor.h"
#include "interp/infer_types.h"
#include "interp/mixed_domain.h"
#include "ir/verifier.h"
#include "support/read_file.h"

namespace distir::onnx_import {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += "x";
    out += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return out + "]";
}

// "Unsqueeze_61" for "onnx..Unsqueeze_61": the name without its scope.
std::string LastComponent(const std::string& name) {
  const size_t dot = name.find_last_of('.');
  return dot == std::string::npos || dot + 1 == name.size() ? name : name.substr(dot + 1);
}

// The scope of a node: its first output's sanitised name up to the last '.'
// ("h.0.attn" for "/h.0/attn/Unsqueeze_output_0"); "" at the top level.
// Constants emitted for the node are named in it, so that they belong to the
// reader's transformer block as far as name-based rules go (an experiment's
// `layers:` pattern names GPT-2 blocks by the "h.N." prefix).
std::string ScopeOf(const onnx::NodeProto& node) {
  const std::string name = SanitizeName(node.output(0));
  const size_t dot = name.find_last_of('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

// "2x16": extents as --input writes them.
std::string BindingText(const std::vector<int64_t>& dims) {
  const std::string text = DimsText(dims);
  return text.substr(1, text.size() - 2);
}

// The declared extents of a graph input or output; kDynamicDim for a symbolic
// or missing extent. nullopt when the shape is not declared at all.
std::optional<std::vector<int64_t>> DeclaredDims(const onnx::ValueInfoProto& info) {
  const onnx::TypeProto_Tensor& t = info.type().tensor_type();
  if (!t.has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const onnx::TensorShapeProto_Dimension& d : t.shape().dim()) {
    dims.push_back(d.has_dim_value() ? d.dim_value() : kDynamicDim);
  }
  return dims;
}

std::string SymbolicDimName(const onnx::ValueInfoProto& info, size_t i) {
  const onnx::TensorShapeProto_Dimension& d = info.type().tensor_type().shape().dim(static_cast<int>(i));
  return d.has_dim_param() && !d.dim_param().empty() ? "'" + d.dim_param() + "'" : "(unnamed)";
}

// What an ONNX value name stands for: a value of the function, or a constant
// not yet emitted (an index into GraphImporter::constants_).
struct Binding {
  Value* value = nullptr;
  int constant = -1;
};

// A Constant node or small integer initializer. It is emitted as a Constant op
// right before each node that reads it, not where the graph defines it: every
// use then has its constant next to it, in the same layer, so the parallel
// transforms never see a constant cross a layer or pipeline stage boundary
// (a GPT-2 export shares one scalar between all blocks). Constants cost no time.
struct PendingConstant {
  std::string name;  // sanitised; copies get ".1", ".2", ...
  AttrMap attrs;
  SourceLoc loc;
};

// Builds the function of one ONNX graph; see the header for the rules.
class GraphImporter {
 public:
  GraphImporter(const onnx::ModelProto& model, std::string path, const ImportOptions& options)
      : model_(model), graph_(model.graph()), path_(std::move(path)), o_(options) {}

  StatusOr<ImportedModel> Run() &&;

 private:
  SourceLoc Loc(const std::string& symbolic) const { return SourceLoc{path_, 0, 0, symbolic}; }
  std::string FunctionName() const;
  Status ReadOpset();
  Status CheckBindings() const;
  Status AddInputs();
  StatusOr<std::vector<int64_t>> InputShape(const onnx::ValueInfoProto& info, const SourceLoc& loc);
  Status AddInitializers();
  Status AddInitializer(const onnx::TensorProto& init);
  Status AddNodes();
  Status AddNode(const onnx::NodeProto& node, int index);
  StatusOr<std::vector<Value*>> NodeInputs(const onnx::NodeProto& node, const SourceLoc& loc);
  Status Define(const std::string& onnx_name, Binding binding, const SourceLoc& loc);
  Status DefineConstant(const std::string& onnx_name, AttrMap attrs, const SourceLoc& loc);
  /// The value `name` stands for, emitting a pending constant (once per `node_copies`).
  /// A copy is named in `scope` (the reader's scope, see ScopeOf).
  StatusOr<Value*> Resolve(const std::string& name, const SourceLoc& loc, const std::string& scope,
                           std::unordered_map<int, Value*>& node_copies);
  Status SetReturns();
  Status CheckTypes(const Function& fn) const;
  Status CheckOutput(const onnx::ValueInfoProto& info, const Value& value) const;

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  std::string path_;
  const ImportOptions& o_;
  NodeContext ctx_;
  std::unique_ptr<Function> fn_;
  std::unordered_map<std::string, Binding> values_;  // by ONNX name
  std::vector<PendingConstant> constants_;
  std::unordered_set<std::string> initializers_;
  ImportedModel out_;
};

std::string GraphImporter::FunctionName() const {
  if (!o_.function_name.empty()) return SanitizeName(o_.function_name);
  const std::string stem = std::filesystem::path(path_).stem().string();
  std::string name = SanitizeName(stem);
  for (char& c : name) {
    if (c == '.') c = '_';
  }
  return stem.empty() ? "main" : name;
}

Status GraphImporter::ReadOpset() {
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto& id : model_.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") opset = id.version();
  }
  if (opset < 0) {
    return InvalidArgument(Loc("opset_import"))
           << "the model imports no opset of the default ONNX domain (the importer reads opsets "
           << kMinOpset << " to " << kMaxOpset << ")";
  }
  if (opset < kMinOpset || opset > kMaxOpset) {
    return InvalidArgument(Loc("opset_import"))
           << "opset " << opset << " of the default ONNX domain is not supported: the importer "
           << "reads opsets " << kMinOpset << " to " << kMaxOpset
           << " (re-export with opset_version in that range)";
  }
  ctx_.opset = opset;
  ctx_.float_dtype = o_.float_dtype;
  ctx_.device = o_.device;
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> GraphImporter::InputShape(const onnx::ValueInfoProto& info,
                                                         const SourceLoc& loc) {
  std::optional<std::vector<int64_t>> declared = DeclaredDims(info);
  auto bound = o_.input_shapes.find(info.name());
  if (bound == o_.input_shapes.end()) {
    if (!declared) {
      return InvalidArgument(loc) << "input '" << info.name() << "' declares no shape; bind it with "
                                  << "--input " << info.name() << "=DIMxDIM...";
    }
    for (size_t i = 0; i < declared->size(); ++i) {
      if ((*declared)[i] == kDynamicDim) {
        return InvalidArgument(loc) << "input '" << info.name() << "' has dynamic dimension "
                                    << SymbolicDimName(info, i) << " at axis " << i << " of "
                                    << DimsText(*declared) << "; bind it with --input "
                                    << info.name() << "=DIMxDIM...";
      }
      if ((*declared)[i] < 0) return InvalidArgument(loc) << "negative extent in input " << info.name();
    }
    return *declared;
  }
  const std::vector<int64_t>& dims = bound->second;
  if (declared && declared->size() != dims.size()) {
    return InvalidArgument(loc) << "--input " << info.name() << "=" << BindingText(dims)
                                << " has rank " << dims.size() << ", but the input is declared "
                                << DimsText(*declared) << " (rank " << declared->size() << ")";
  }
  for (size_t i = 0; declared && i < dims.size(); ++i) {
    if ((*declared)[i] != kDynamicDim && (*declared)[i] != dims[i]) {
      return InvalidArgument(loc) << "--input " << info.name() << "=" << BindingText(dims)
                                  << " disagrees with the declared static extent "
                                  << (*declared)[i] << " at axis " << i << " of "
                                  << DimsText(*declared);
    }
  }
  return dims;
}

// Every --input binding must name a data input.
Status GraphImporter::CheckBindings() const {
  std::string known;
  std::unordered_set<std::string> inputs;
  for (const onnx::ValueInfoProto& info : graph_.input()) {
    if (initializers_.count(info.name()) || !inputs.insert(info.name()).second) continue;
    known += (known.empty() ? "" : ", ") + info.name();
  }
  for (const auto& [name, dims] : o_.input_shapes) {
    if (inputs.count(name) == 0) {
      return InvalidArgument(Loc("--input " + name))
             << "the model has no data input named '" << name << "' (inputs: " << known << ")";
    }
  }
  return Status::Ok();
}

Status GraphImporter::AddInputs() {
  for (const onnx::TensorProto& init : graph_.initializer()) initializers_.insert(init.name());
  DISTIR_RETURN_IF_ERROR(CheckBindings());
  for (const onnx::ValueInfoProto& info : graph_.input()) {
    if (initializers_.count(info.name())) continue;  // IR < 4 lists initializers as inputs
    const SourceLoc loc = Loc("input '" + info.name() + "'");
    if (!info.type().has_tensor_type()) {
      return InvalidArgument(loc) << "input '" << info.name() << "' is not a tensor";
    }
    StatusOr<DType> dtype = ImportDType(info.type().tensor_type().elem_type(), o_.float_dtype,
                                        "input '" + info.name() + "'");
    if (!dtype.ok()) return Status(dtype.status()).WithLocIfMissing(loc);
    DISTIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, InputShape(info, loc));
    Value* v = fn_->AddParam(fn_->UniqueName(SanitizeName(info.name())),
                             Type::Tensor(*dtype, dims, o_.device), loc);
    DISTIR_RETURN_IF_ERROR(Define(info.name(), Binding{v, -1}, loc));
    out_.inputs.push_back(info.name());
  }
  return Status::Ok();
}

// Integer initializers small enough to stay concrete in the mixed domain are
// shape and index constants (Reshape targets, Gather indices, ...): they become
// Constant ops so that type inference sees their values. Float initializers
// are the weights: parameters.
Status GraphImporter::AddInitializer(const onnx::TensorProto& init) {
  const std::string what = "initializer '" + init.name() + "'";
  const SourceLoc loc = Loc(what);
  DISTIR_ASSIGN_OR_RETURN(DType dtype, ImportDType(init.data_type(), o_.float_dtype, what));
  DISTIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, TensorDims(init, what));
  if (IsIntegral(dtype) && ShapeNumElements(dims) <= kMaxConcreteElements) {
    DISTIR_ASSIGN_OR_RETURN(DenseTensor value, ReadTensor(init, o_.float_dtype, what));
    AttrMap attrs = {{"value", std::move(value)}};
    if (o_.device.has_value()) attrs["device"] = o_.device;
    return DefineConstant(init.name(), std::move(attrs), loc);
  }
  const std::string name = fn_->UniqueName(SanitizeName(init.name()));
  if (o_.load_weights) {
    DISTIR_ASSIGN_OR_RETURN(DenseTensor value, ReadTensor(init, o_.float_dtype, what));
    out_.weights.push_back(std::move(value));
  }
  out_.weight_names.push_back(init.name());
  Value* v = fn_->AddParam(name, Type::Tensor(dtype, dims, o_.device), loc);
  return Define(init.name(), Binding{v, -1}, loc);
}

Status GraphImporter::AddInitializers() {
  for (const onnx::TensorProto& init : graph_.initializer()) {
    Status added = AddInitializer(init);
    if (!added.ok()) return added.WithLocIfMissing(Loc("initializer '" + init.name() + "'"));
  }
  return Status::Ok();
}

Status GraphImporter::DefineConstant(const std::string& onnx_name, AttrMap attrs,
                                     const SourceLoc& loc) {
  constants_.push_back(PendingConstant{SanitizeName(onnx_name), std::move(attrs), loc});
  return Define(onnx_name, Binding{nullptr, static_cast<int>(constants_.size()) - 1}, loc);
}

StatusOr<Value*> GraphImporter::Resolve(const std::string& name, const SourceLoc& loc,
                                        const std::string& scope,
                                        std::unordered_map<int, Value*>& node_copies) {
  auto it = values_.find(name);
  if (it == values_.end()) {
    return InvalidArgument(loc) << "input '" << name << "' is not defined before the node "
                                << "(undefined, or the graph is not topologically sorted)";
  }
  const Binding& b = it->second;
  if (b.value != nullptr) return b.value;
  Value*& copy = node_copies[b.constant];
  if (copy == nullptr) {
    const PendingConstant& c = constants_[static_cast<size_t>(b.constant)];
    const std::string base = scope.empty() ? c.name : scope + "." + LastComponent(c.name);
    copy = fn_->AddOp(OpKind::kConstant, {}, c.attrs, {fn_->UniqueName(base)}, c.loc)->result(0);
  }
  return copy;
}

Status GraphImporter::Define(const std::string& onnx_name, Binding binding, const SourceLoc& loc) {
  if (onnx_name.empty()) return Status::Ok();
  if (!values_.emplace(onnx_name, binding).second) {
    return InvalidArgument(loc) << "value '" << onnx_name << "' is defined twice (ONNX graphs are "
                                << "in SSA form)";
  }
  return Status::Ok();
}

// The node's inputs. An empty name is an omitted optional input: trailing ones
// are dropped, one before a given input is not supported.
StatusOr<std::vector<Value*>> GraphImporter::NodeInputs(const onnx::NodeProto& node,
                                                        const SourceLoc& loc) {
  int n = node.input_size();
  while (n > 0 && node.input(n - 1).empty()) --n;
  std::vector<Value*> inputs;
  std::unordered_map<int, Value*> copies;
  for (int i = 0; i < n; ++i) {
    const std::string& name = node.input(i);
    if (name.empty()) {
      return InvalidArgument(loc) << "input " << i << " is omitted but a later one is given; the "
                                  << "importer supports omitting trailing optional inputs only";
    }
    DISTIR_ASSIGN_OR_RETURN(Value * v, Resolve(name, loc, ScopeOf(node), copies));
    inputs.push_back(v);
  }
  return inputs;
}

Status GraphImporter::AddNode(const onnx::NodeProto& node, int index) {
  const SourceLoc loc = Loc(NodeLabel(node, index));
  if (node.output_size() == 0) return InvalidArgument(loc) << "node has no outputs";
  const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
  // Identity is a rename: exporters write one per deduplicated weight
  // (ln_f.weight = Identity(h.0.ln_1.weight)). Its output names the input's value.
  if (node.op_type() == "Identity" && default_domain && node.input_size() == 1 &&
      node.output_size() == 1) {
    auto it = values_.find(node.input(0));
    if (it == values_.end()) {
      return InvalidArgument(loc) << "input '" << node.input(0) << "' is not defined before the "
                                  << "node (undefined, or the graph is not topologically sorted)";
    }
    return Define(node.output(0), it->second, loc);
  }
  StatusOr<ConvertedOp> converted = ConvertNode(node, ctx_);
  if (!converted.ok()) return Status(converted.status()).WithLocIfMissing(loc);
  if (converted->kind == OpKind::kConstant && node.output_size() == 1) {
    return DefineConstant(node.output(0), std::move(converted->attrs), loc);
  }
  DISTIR_ASSIGN_OR_RETURN(std::vector<Value*> inputs, NodeInputs(node, loc));
  std::vector<std::string> names;
  std::unordered_set<std::string> taken;  // "a/b" and "a:b" sanitise alike
  for (const std::string& out : node.output()) {
    std::string name = out.empty() ? std::string() : fn_->UniqueName(SanitizeName(out));
    while (!name.empty() && !taken.insert(name).second) name = fn_->UniqueName(name + "_");
    names.push_back(std::move(name));
  }
  Op* op = fn_->AddOp(converted->kind, std::move(inputs), std::move(converted->attrs), names, loc);
  for (int i = 0; i < node.output_size(); ++i) {
    DISTIR_RETURN_IF_ERROR(Define(node.output(i), Binding{op->result(i), -1}, loc));
  }
  return Status::Ok();
}

Status GraphImporter::AddNodes() {
  for (int i = 0; i < graph_.node_size(); ++i) DISTIR_RETURN_IF_ERROR(AddNode(graph_.node(i), i));
  return Status::Ok();
}

Status GraphImporter::SetReturns() {
  std::vector<Value*> returns;
  std::unordered_map<int, Value*> copies;
  for (const onnx::ValueInfoProto& info : graph_.output()) {
    const SourceLoc loc = Loc("output '" + info.name() + "'");
    if (values_.count(info.name()) == 0) {
      return InvalidArgument(loc) << "graph output '" << info.name()
                                  << "' is not computed by any node";
    }
    DISTIR_ASSIGN_OR_RETURN(Value * v, Resolve(info.name(), loc, "", copies));
    returns.push_back(v);
  }
  if (returns.empty()) return InvalidArgument(Loc("graph")) << "the graph has no outputs";
  fn_->SetReturns(std::move(returns));
  return Status::Ok();
}

// A declared static output extent that type inference contradicts means the
// importer (or the file) is wrong: say so rather than hand on a wrong program.
Status GraphImporter::CheckOutput(const onnx::ValueInfoProto& info, const Value& value) const {
  std::optional<std::vector<int64_t>> declared = DeclaredDims(info);
  if (!declared || !value.type().is_tensor()) return Status::Ok();
  const Dims& got = value.type().shape();
  bool same = declared->size() == got.size();
  for (size_t i = 0; same && i < got.size(); ++i) {
    same = (*declared)[i] == kDynamicDim || (*declared)[i] == got[i];
  }
  if (same) return Status::Ok();
  return InvalidArgument(Loc("output '" + info.name() + "'"))
         << "graph output '" << info.name() << "' is declared " << DimsText(*declared)
         << " but the imported function computes " << value.type().ToString();
}

Status GraphImporter::CheckTypes(const Function& fn) const {
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) {
      if (!r->type().HasStaticShape()) {
        return InvalidArgument(op->loc())
               << "value " << r->Ref() << " has no static shape after type inference ("
               << r->type().ToString() << "); bind the model's dynamic inputs with --input";
      }
    }
  }
  for (int i = 0; i < graph_.output_size(); ++i) {
    DISTIR_RETURN_IF_ERROR(CheckOutput(graph_.output(i), *fn.returns()[static_cast<size_t>(i)]));
  }
  return Status::Ok();
}

StatusOr<ImportedModel> GraphImporter::Run() && {
  DISTIR_RETURN_IF_ERROR(ReadOpset());
  fn_ = std::make_unique<Function>(FunctionName());
  DISTIR_RETURN_IF_ERROR(AddInputs());
  DISTIR_RETURN_IF_ERROR(AddInitializers());
  DISTIR_RETURN_IF_ERROR(AddNodes());
  DISTIR_RETURN_IF_ERROR(SetReturns());
  DISTIR_RETURN_IF_ERROR(VerifyFunction(*fn_, nullptr));
  Function* fn = out_.module.AddFunction(std::move(fn_));
  DISTIR_RETURN_IF_ERROR(InferTypes(out_.module));
  DISTIR_RETURN_IF_ERROR(CheckTypes(*fn));
  return std::move(out_);
}

}  // namespace

StatusOr<ImportedModel> ImportOnnx(std::string_view bytes, const std::string& path,
                                   const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgument(SourceLoc{path, 0, 0, {}})
           << "not a valid ONNX model: the protobuf does not parse (truncated or corrupt file, or "
              "not ONNX; files over 2 GiB are not supported)";
  }
  if (!model.has_graph()) {
    return InvalidArgument(SourceLoc{path, 0, 0, {}}) << "not a valid ONNX model: it has no graph";
  }
  StatusOr<ImportedModel> imported = GraphImporter(model, path, options).Run();
  if (!imported.ok()) return Status(imported.status()).WithLocIfMissing(SourceLoc{path, 0, 0, {}});
  return imported;
}

namespace {
// Protobuf refuses messages over 2 GiB, so no ONNX model is larger.
constexpr int64_t kMaxOnnxFileBytes = int64_t{2} << 30;
}  // namespace

StatusOr<ImportedModel> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  // A regular file only, and at most protobuf's 2 GiB: `model: {onnx: /dev/zero}`
  // read until memory ran out (found by the fuzz campaign, tests/fuzz).
  StatusOr<std::string> bytes = ReadRegularFile(path, kMaxOnnxFileBytes);
  if (!bytes.ok()) {
    return Status(bytes.status().code(), "cannot read ONNX file: " + bytes.status().message(),
                  SourceLoc{path, 0, 0, {}});
  }
  return ImportOnnx(*bytes, path, options);
}

StatusOr<std::pair<std::string, std::vector<int64_t>>> ParseInputBinding(std::string_view text) {
  const size_t eq = text.rfind('=');
  auto bad = [&]() {
    return InvalidArgument() << "bad --input '" << text
                             << "': expected NAME=DIMxDIM... with non-negative integer extents, "
                                "e.g. input_ids=2x16";
  };
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) return bad();
  std::vector<int64_t> dims;
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    const size_t x = rest.find('x');
    std::string_view part = rest.substr(0, x);
    int64_t d = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || d < 0) return bad();
    dims.push_back(d);
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
  }
  return std::make_pair(std::string(text.substr(0, eq)), std::move(dims));
}

std::string SanitizeName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '/' || c == ':') {
      out += '.';
    } else {
      out += IsNameChar(c) ? c : '_';
    }
  }
  const size_t first = out.find_first_not_of('.');
  if (first == std::string::npos) return "v";
  const size_t last = out.find_last_not_of('.');
  return out.substr(first, last - first + 1);
}

}  // namespace distir::onnx_import
