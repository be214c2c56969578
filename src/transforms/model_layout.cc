#include "transforms/model_layout.h"

#include <cctype>
#include <string>
#include <unordered_map>

#include "models/gpt.h"
#include "models/mlp.h"

namespace distir {
namespace {

// The integer a name ends with ("dw12" -> 12), or -1.
int64_t TrailingNumber(const std::string& name) {
  size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  if (i == name.size()) return -1;
  return std::stoll(name.substr(i));
}

// Index of each parameter by name.
std::unordered_map<std::string, int> ParamIndex(const Function& fn) {
  std::unordered_map<std::string, int> index;
  for (int i = 0; i < fn.num_params(); ++i) index[fn.param(i)->name()] = i;
  return index;
}

int ParamPosition(const Function& fn, const Value* v) {
  for (int i = 0; i < fn.num_params(); ++i) {
    if (fn.param(i) == v) return i;
  }
  return -1;
}

// The parameter an optimizer result updates: SGD(w, dw) -> w; Adam(w, dw, m, v) -> w', m', v'.
int UpdatedParam(const Function& fn, const Op& op, int result) {
  static constexpr int kAdamInput[] = {0, 2, 3};
  const int input = op.kind() == OpKind::kAdam ? kAdamInput[result] : 0;
  return ParamPosition(fn, op.input(input));
}

// Outputs: optimizer results are weights; other rank-0 values are sums
// (losses), the rest per-sample values concatenated along the batch.
Status AnalyzeOutputs(const Function& fn, ModelLayout& layout, TpSplit batch_split) {
  std::unordered_map<const Value*, std::pair<const Op*, int>> def;
  for (const auto& op : fn.ops()) {
    for (int r = 0; r < op->num_results(); ++r) def[op->result(r)] = {op.get(), r};
  }
  for (const Value* v : fn.returns()) {
    LayoutOutput out;
    auto it = def.find(v);
    if (it == def.end()) {
      return InvalidArgument() << "@" << fn.name() << " returns parameter %" << v->name()
                               << "; the parallel transform expects computed results";
    }
    const Op& op = *it->second.first;
    if (layout.ops[static_cast<size_t>(op.id())].phase == OpPhase::kOptimizer) {
      out.kind = OutputKind::kUpdated;
      out.param = UpdatedParam(fn, op, it->second.second);
    } else if (v->type().is_tensor() && v->type().rank() == 0) {
      out.kind = OutputKind::kSum;
    } else {
      out.kind = OutputKind::kBatchConcat;
      out.split = batch_split;
    }
    layout.outputs.push_back(out);
  }
  return Status::Ok();
}

// ---- MLP training (models/mlp.h) ----

TpSplit MlpSplit(int64_t layer, int64_t num_layers, int64_t tp) {
  if (tp == 1) return TpSplit::kReplicated;
  if (layer % 2 == 1) return TpSplit::kRows;
  // An even layer opens a Megatron pair; the unpaired last layer of an odd
  // depth stays replicated (every shard computes it in full).
  return layer + 1 < num_layers ? TpSplit::kColumns : TpSplit::kReplicated;
}

StatusOr<ModelLayout> AnalyzeMlp(const Function& fn, int64_t tp) {
  namespace names = mlp_names;
  ModelLayout layout;
  layout.training = true;
  const auto index = ParamIndex(fn);
  while (index.count(names::Weight(layout.num_layers))) ++layout.num_layers;
  if (layout.num_layers == 0 || !index.count(names::kInput) || !index.count(names::kLabels)) {
    return InvalidArgument() << "@" << fn.name()
                             << " is not an MLP built by BuildMlpTraining (needs %x, %y, %w0)";
  }
  const Type& x = fn.param(index.at(names::kInput))->type();
  layout.batch = x.shape()[0];
  layout.tp_divisor = x.shape()[1];
  layout.tp_divisor_name = "the hidden width d";
  const int64_t num_layers = layout.num_layers;

  layout.params.resize(static_cast<size_t>(fn.num_params()));
  for (int i = 0; i < fn.num_params(); ++i) {
    const std::string& name = fn.param(i)->name();
    LayoutParam& p = layout.params[static_cast<size_t>(i)];
    if (name == names::kInput || name == names::kLabels) {
      p.role = ParamRole::kData;
    } else if (name[0] == 'm' || name[0] == 'v') {
      p.role = ParamRole::kOptimizerState;
      p.weight = index.at(names::Weight(TrailingNumber(name)));
    }
  }
  for (const auto& op : fn.ops()) {
    LayoutOp lo;
    lo.input_splits.assign(static_cast<size_t>(op->num_inputs()), TpSplit::kReplicated);
    // "dw3" names the layer of a MatMulGrad; an optimizer op is named by its weight "w3".
    const bool optimizer = op->kind() == OpKind::kSGD || op->kind() == OpKind::kAdam;
    const int64_t layer = TrailingNumber(optimizer ? op->input(0)->name()
                                                   : op->result(op->num_results() - 1)->name());
    const TpSplit split = MlpSplit(layer, num_layers, tp);
    switch (op->kind()) {
      case OpKind::kMatMul:
        lo.layer = layer;
        lo.input_splits[1] = split;
        if (split == TpSplit::kRows) lo.partial_results = {0};
        break;
      case OpKind::kRelu:
        lo.layer = layer;
        break;
      case OpKind::kMSELoss:
        lo.layer = num_layers;
        break;
      case OpKind::kMSELossGrad:
        lo.layer = num_layers;
        lo.phase = OpPhase::kBackward;
        break;
      case OpKind::kReluGrad:
        lo.layer = layer;
        lo.phase = OpPhase::kBackward;
        break;
      case OpKind::kMatMulGrad:
        lo.layer = layer;
        lo.phase = OpPhase::kBackward;
        lo.input_splits[1] = split;
        if (split == TpSplit::kColumns) lo.partial_results = {0};
        break;
      case OpKind::kSGD:
      case OpKind::kAdam:
        lo.layer = layer;
        lo.phase = OpPhase::kOptimizer;
        lo.input_splits[0] = split;
        if (op->kind() == OpKind::kAdam) lo.input_splits[2] = lo.input_splits[3] = split;
        break;
      default:
        return InvalidArgument(op->loc()) << "unexpected " << op->Name() << " in MLP @"
                                          << fn.name();
    }
    if (lo.layer < 0 || lo.layer > num_layers) {
      return InvalidArgument(op->loc()) << "cannot tell the layer of " << op->Name() << " in @"
                                        << fn.name();
    }
    layout.ops.push_back(std::move(lo));
  }
  DISTIR_RETURN_IF_ERROR(AnalyzeOutputs(fn, layout, TpSplit::kReplicated));
  return layout;
}

// ---- GPT-2 inference (models/gpt.h) ----

// Layer of a GPT-2 value name: "h.3.attn.q" -> 3, others -1.
int64_t GptLayer(const std::string& name) {
  if (name.size() < 3 || name.compare(0, 2, "h.") != 0) return -1;
  const size_t dot = name.find('.', 2);
  if (dot == std::string::npos) return -1;
  for (size_t i = 2; i < dot; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  }
  return std::stoll(name.substr(2, dot - 2));
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Megatron split of a GPT-2 weight when used by `op`.
TpSplit GptSplit(const Op& op, const std::string& param) {
  if (EndsWith(param, "attn.c_attn.weight") || EndsWith(param, "attn.c_attn.bias")) {
    return TpSplit::kQkvColumns;
  }
  if (EndsWith(param, "mlp.c_fc.weight") || EndsWith(param, "mlp.c_fc.bias")) {
    return TpSplit::kColumns;
  }
  if (EndsWith(param, "attn.c_proj.weight") || EndsWith(param, "mlp.c_proj.weight")) {
    return TpSplit::kRows;
  }
  // LM head: column-parallel over the vocabulary (logits stay split, the
  // original's skip_allgathers). The tied head reads wte transposed, so its
  // vocabulary is wte's rows; the embedding Gather keeps a full copy.
  if (param == gpt_names::kLmHeadWeight) return TpSplit::kColumns;
  if (param == gpt_names::kTokenEmbedding && op.kind() == OpKind::kTranspose) return TpSplit::kRows;
  return TpSplit::kReplicated;
}

StatusOr<ModelLayout> AnalyzeGpt2(const Function& fn, int64_t tp) {
  namespace names = gpt_names;
  ModelLayout layout;
  const auto index = ParamIndex(fn);
  while (index.count(names::Block(layout.num_layers, "ln_1.weight"))) ++layout.num_layers;
  if (layout.num_layers == 0 || !index.count(names::kInputIds)) {
    return InvalidArgument() << "@" << fn.name()
                             << " is not a GPT-2 built by BuildGpt2Inference (needs %input_ids, "
                                "%h.0.ln_1.weight)";
  }
  layout.batch = fn.param(index.at(names::kInputIds))->type().shape()[0];
  const int64_t d = fn.param(index.at(names::Block(0, "attn.c_proj.weight")))->type().shape()[0];
  layout.params.resize(static_cast<size_t>(fn.num_params()));
  layout.params[static_cast<size_t>(index.at(names::kInputIds))].role = ParamRole::kData;

  bool after_blocks = false;
  for (const auto& op : fn.ops()) {
    LayoutOp lo;
    lo.input_splits.assign(static_cast<size_t>(op->num_inputs()), TpSplit::kReplicated);
    const int64_t layer = GptLayer(op->result(0)->name());
    if (layer >= 0) {
      lo.layer = layer;
    } else {
      after_blocks = after_blocks || (op->id() > 0 && layout.ops.back().layer >= 0);
      lo.layer = after_blocks ? layout.num_layers : -1;
    }
    for (int i = 0; i < op->num_inputs(); ++i) {
      const int p = ParamPosition(fn, op->input(i));
      if (p >= 0 && tp > 1) lo.input_splits[static_cast<size_t>(i)] = GptSplit(*op, op->input(i)->name());
    }
    if (op->kind() == OpKind::kMatMul && lo.input_splits[1] == TpSplit::kRows) lo.partial_results = {0};
    // The attention head count: the last extent of the split_shape constant.
    if (op->kind() == OpKind::kConstant && EndsWith(op->result(0)->name(), "attn.split_shape")) {
      const Attribute* value = op->FindAttr("value");
      if (value != nullptr && value->type() == AttrType::kTensor && !value->AsTensor().values.empty()) {
        const auto head_dim = static_cast<int64_t>(value->AsTensor().values.back());
        if (head_dim > 0) layout.tp_divisor = d / head_dim;
      }
    }
    layout.ops.push_back(std::move(lo));
  }
  layout.tp_divisor_name = "the number of attention heads";
  DISTIR_RETURN_IF_ERROR(
      AnalyzeOutputs(fn, layout, tp > 1 ? TpSplit::kColumns : TpSplit::kReplicated));
  return layout;
}

}  // namespace

StatusOr<ModelLayout> AnalyzeModel(const Function& fn, int64_t tp) {
  if (fn.LookupValue(mlp_names::Weight(0)) != nullptr) return AnalyzeMlp(fn, tp);
  if (fn.LookupValue(gpt_names::kInputIds) != nullptr) return AnalyzeGpt2(fn, tp);
  return InvalidArgument() << "@" << fn.name()
                           << " is neither an MLP (BuildMlpTraining) nor a GPT-2 "
                              "(BuildGpt2Inference); the parallel transform needs one of them";
}

}  // namespace distir
