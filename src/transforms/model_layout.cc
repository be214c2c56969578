#include "transforms/model_layout.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <numeric>
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

// ---- T sharding and batch propagation through a GPT-2 ----
//
// The name rules (GptSplit) fix how each weight use is cut; the activations'
// cuts follow from the ops, which the builder and the ONNX exporter spell
// differently (Split with or without sizes, Reshape targets with 0/-1 or
// written out, fused or decomposed GELU). One forward pass over the ops
// finds, per value, the dim cut into T pieces and whether dim 0 is the batch,
// and from it the partial sums, the head count and the LocalShapes.

struct ValueShard {
  int tp_dim = -1;     // the dim cut into T pieces; -1: whole on every shard
  bool batch = false;  // dim 0 is the batch (cut over replicas and microbatches)
};

int SplitDim(TpSplit split, int rank) {
  switch (split) {
    case TpSplit::kReplicated:
      return -1;
    case TpSplit::kRows:
      return 0;
    case TpSplit::kColumns:
    case TpSplit::kQkvColumns:
      return rank - 1;
  }
  return -1;
}

int NormalizeAxis(int64_t axis, size_t rank) {
  return static_cast<int>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

int64_t IntAttr(const Op& op, const char* name, int64_t fallback) {
  const Attribute* a = op.FindAttr(name);
  return a != nullptr && a->type() == AttrType::kInt ? a->AsInt() : fallback;
}

int64_t Product(const std::vector<int64_t>& shape, size_t end) {
  int64_t p = 1;
  for (size_t i = 0; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

bool IsElementwise(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kDiv:
    case OpKind::kPow: case OpKind::kWhere: case OpKind::kErf: case OpKind::kTanh:
    case OpKind::kSqrt: case OpKind::kExp: case OpKind::kNeg: case OpKind::kNot:
    case OpKind::kCast: case OpKind::kRelu: case OpKind::kEqual: case OpKind::kLess:
    case OpKind::kMax: case OpKind::kMin: case OpKind::kSum: case OpKind::kGelu:
    case OpKind::kIdentity:
      return true;
    default:
      return false;
  }
}

class ShardPropagation {
 public:
  ShardPropagation(const Function& fn, ModelLayout& layout)
      : fn_(fn), layout_(layout), state_(static_cast<size_t>(fn.num_values())) {}

  Status Run(int64_t tp);

 private:
  ValueShard In(const Op& op, int i) const;
  Status Visit(const Op& op, LayoutOp& lo);
  StatusOr<int> Elementwise(const Op& op) const;
  StatusOr<int> MatMul(const Op& op, LayoutOp& lo) const;
  StatusOr<int> Reshape(const Op& op, LayoutOp& lo);
  StatusOr<int> Split(const Op& op, LayoutOp& lo) const;
  Status Unsupported(const Op& op, const std::string& why) const {
    return InvalidArgument(op.loc()) << "T sharding: " << op.Name() << " (%"
                                     << op.result(0)->name() << ") " << why;
  }

  const Function& fn_;
  ModelLayout& layout_;
  std::vector<ValueShard> state_;  // by value id
  std::vector<int> param_of_;      // value id -> parameter position, -1
  std::vector<int> def_;           // value id -> defining op id, -1
  int64_t heads_ = 0;              // gcd of the head counts found
};

ValueShard ShardPropagation::In(const Op& op, int i) const {
  const Value* v = op.input(i);
  const int p = param_of_[static_cast<size_t>(v->id())];
  if (p < 0) return state_[static_cast<size_t>(v->id())];
  const TpSplit split = layout_.ops[static_cast<size_t>(op.id())].input_splits[static_cast<size_t>(i)];
  return {SplitDim(split, static_cast<int>(v->type().rank())),
          layout_.params[static_cast<size_t>(p)].role == ParamRole::kData};
}

// Operands broadcast from the right: every sharded operand must be cut along
// the same result dim, and an unsharded operand must not span that dim.
StatusOr<int> ShardPropagation::Elementwise(const Op& op) const {
  const auto rank = static_cast<int>(op.result(0)->type().rank());
  int out = -1;
  for (int i = 0; i < op.num_inputs(); ++i) {
    const int d = In(op, i).tp_dim;
    if (d < 0) continue;
    const int aligned = d + rank - static_cast<int>(op.input(i)->type().rank());
    if (out >= 0 && out != aligned) return Unsupported(op, "mixes operands sharded along different dims");
    out = aligned;
  }
  if (out < 0) return out;
  for (int i = 0; i < op.num_inputs(); ++i) {
    if (In(op, i).tp_dim >= 0) continue;
    const std::vector<int64_t>& shape = op.input(i)->type().shape();
    const int j = out - (rank - static_cast<int>(shape.size()));
    if (j >= 0 && shape[static_cast<size_t>(j)] != 1) {
      return Unsupported(op, "combines a sharded operand with %" + op.input(i)->name() +
                                 ", which is whole along the sharded dim");
    }
  }
  return out;
}

StatusOr<int> ShardPropagation::MatMul(const Op& op, LayoutOp& lo) const {
  const int da = In(op, 0).tp_dim, db = In(op, 1).tp_dim;
  const auto ra = static_cast<int>(op.input(0)->type().rank());
  const auto rb = static_cast<int>(op.input(1)->type().rank());
  const auto r = static_cast<int>(op.result(0)->type().rank());
  if (da < 0 && db < 0) return -1;
  if (da < 0 && db == rb - 1) return r - 1;  // column-parallel
  if (da == ra - 1 && db == rb - 2) {        // row-parallel: partial sums
    lo.partial_results = {0};
    return -1;
  }
  // Batched product (attention): both cut along the same batch dim (heads).
  const int a_out = da + r - ra, b_out = db + r - rb;
  if (da >= 0 && da < ra - 2 && (db < 0 ? rb == 2 : (db < rb - 2 && a_out == b_out))) return a_out;
  return Unsupported(op, "multiplies operands sharded along dims " + std::to_string(da) + " and " +
                             std::to_string(db));
}

// A Reshape keeps a cut when the dims before it hold the same elements on
// both sides: [B, S, d] cut along d <-> [B, S, H, hd] cut along H (the head
// count is the outer factor of d). Its target gets the local extents.
StatusOr<int> ShardPropagation::Reshape(const Op& op, LayoutOp& lo) {
  const ValueShard in = In(op, 0);
  const std::vector<int64_t>& from = op.input(0)->type().shape();
  const std::vector<int64_t>& to = op.result(0)->type().shape();
  if (in.batch && (to.empty() || from.empty() || to[0] != from[0])) {
    return InvalidArgument(op.loc()) << op.Name() << " (%" << op.result(0)->name()
                                     << ") changes the batch dim 0; the batch cannot be split";
  }
  int out = -1;
  if (in.tp_dim >= 0) {
    const int64_t before = Product(from, static_cast<size_t>(in.tp_dim));
    for (size_t j = 0; j < to.size() && out < 0; ++j) {
      if (Product(to, j) == before && to[j] > 1) out = static_cast<int>(j);
    }
    if (out < 0) return Unsupported(op, "regroups the sharded dim");
    if (to.size() > from.size()) heads_ = std::gcd(heads_, to[static_cast<size_t>(out)]);
  }
  LocalShape local;
  local.full = to;
  local.batch_index = in.batch ? 0 : -1;
  local.tp_index = out;
  // Entries written as 0 (copy) or -1 (infer) adapt to the local input.
  const Value* target = op.input(1);
  const int def = def_[static_cast<size_t>(target->id())];
  local.computed = def >= 0 && fn_.ops()[static_cast<size_t>(def)]->kind() != OpKind::kConstant;
  if (def >= 0 && !local.computed) {
    const Attribute* value = fn_.ops()[static_cast<size_t>(def)]->FindAttr("value");
    if (value != nullptr && value->type() == AttrType::kTensor) {
      const std::vector<double>& v = value->AsTensor().values;
      auto adapts = [&](int k) { return k >= 0 && static_cast<size_t>(k) < v.size() && v[static_cast<size_t>(k)] <= 0; };
      if (adapts(local.batch_index)) local.batch_index = -1;
      if (adapts(local.tp_index)) local.tp_index = -1;
    }
  }
  if (local.computed || local.batch_index >= 0 || local.tp_index >= 0) lo.local_shapes.push_back(std::move(local));
  return out;
}

// The QKV Split cuts the sharded dim: every piece is cut likewise, and sizes
// written out ([d, d, d]) become the local ones.
StatusOr<int> ShardPropagation::Split(const Op& op, LayoutOp& lo) const {
  const ValueShard in = In(op, 0);
  const int axis = NormalizeAxis(IntAttr(op, "axis", 0), op.input(0)->type().rank());
  if (in.batch && axis == 0) return Unsupported(op, "splits the batch dim");
  if (in.tp_dim != axis || op.num_inputs() < 2) return in.tp_dim;
  LocalShape local;
  local.input = 1;
  for (const auto& r : op.results()) local.full.push_back(r->type().shape()[static_cast<size_t>(axis)]);
  local.tp_all = true;
  lo.local_shapes.push_back(std::move(local));
  return axis;
}

Status ShardPropagation::Visit(const Op& op, LayoutOp& lo) {
  bool batch = false;
  bool sharded = false;
  for (int i = 0; i < op.num_inputs(); ++i) {
    batch = batch || In(op, i).batch;
    sharded = sharded || In(op, i).tp_dim >= 0;
  }
  int out = -1;
  const OpKind kind = op.kind();
  if (kind == OpKind::kShape) {
    batch = false;
  } else if (kind == OpKind::kConstantOfShape) {
    // The causal mask's [seq, seq]: fold a computed shape to its extents.
    batch = false;
    const int def = def_[static_cast<size_t>(op.input(0)->id())];
    if (def >= 0 && fn_.ops()[static_cast<size_t>(def)]->kind() != OpKind::kConstant) {
      LocalShape local;
      local.input = 0;
      local.full = op.result(0)->type().shape();
      local.computed = true;
      lo.local_shapes.push_back(std::move(local));
    }
  } else if (kind == OpKind::kReshape) {
    batch = In(op, 0).batch;
    DISTIR_ASSIGN_OR_RETURN(out, Reshape(op, lo));
  } else if (kind == OpKind::kSplit) {
    DISTIR_ASSIGN_OR_RETURN(out, Split(op, lo));
  } else if (kind == OpKind::kMatMul) {
    DISTIR_ASSIGN_OR_RETURN(out, MatMul(op, lo));
  } else if (IsElementwise(kind)) {
    DISTIR_ASSIGN_OR_RETURN(out, Elementwise(op));
  } else if (kind == OpKind::kTranspose) {
    const Attribute* perm = op.FindAttr("perm");
    const int d = In(op, 0).tp_dim;
    if (perm == nullptr || perm->type() != AttrType::kInts) {
      if (sharded || batch) return Unsupported(op, "has no explicit perm");
    } else {
      const std::vector<int64_t>& p = perm->AsInts();
      if (batch && (p.empty() || p[0] != 0)) return Unsupported(op, "moves the batch dim");
      for (size_t j = 0; j < p.size(); ++j) {
        if (p[j] == d) out = static_cast<int>(j);
      }
    }
  } else if (kind == OpKind::kSoftmax || kind == OpKind::kLayerNormalization) {
    out = In(op, 0).tp_dim;
    const int axis = NormalizeAxis(IntAttr(op, "axis", -1), op.input(0)->type().rank());
    const bool reduced = kind == OpKind::kSoftmax ? out == axis : out >= axis;
    if (out >= 0 && reduced) return Unsupported(op, "normalises over the sharded dim");
  } else if (kind == OpKind::kGather) {
    if (In(op, 0).tp_dim >= 0) return Unsupported(op, "gathers from a sharded table");
    batch = op.num_inputs() > 1 && In(op, 1).batch && IntAttr(op, "axis", 0) == 0;
  } else if (sharded) {
    return Unsupported(op, "has a sharded operand; the transform shards MatMul, Split, Reshape, "
                           "Transpose, Softmax and elementwise ops only");
  }
  for (const auto& r : op.results()) state_[static_cast<size_t>(r->id())] = {out, batch};
  return Status::Ok();
}

Status ShardPropagation::Run(int64_t tp) {
  param_of_.assign(state_.size(), -1);
  def_.assign(state_.size(), -1);
  for (int i = 0; i < fn_.num_params(); ++i) param_of_[static_cast<size_t>(fn_.param(i)->id())] = i;
  for (const auto& op : fn_.ops()) {
    for (const auto& r : op->results()) def_[static_cast<size_t>(r->id())] = op->id();
    DISTIR_RETURN_IF_ERROR(Visit(*op, layout_.ops[static_cast<size_t>(op->id())]));
  }
  if (heads_ > 0) layout_.tp_divisor = heads_;
  // Logits: split along the vocabulary (the LM head is column-parallel) or whole.
  for (size_t i = 0; i < layout_.outputs.size(); ++i) {
    LayoutOutput& out = layout_.outputs[i];
    if (out.kind != OutputKind::kBatchConcat) continue;
    const Value* v = fn_.returns()[i];
    const int d = state_[static_cast<size_t>(v->id())].tp_dim;
    if (d >= 0 && d != static_cast<int>(v->type().rank()) - 1) {
      return InvalidArgument() << "T sharding: result %" << v->name() << " is cut along dim " << d
                               << "; only the last dim can stay split";
    }
    out.split = tp > 1 && d >= 0 ? TpSplit::kColumns : TpSplit::kReplicated;
  }
  return Status::Ok();
}

// Ops without a block name: before the first block op, layer -1; after it,
// num_layers (ln_f, the LM head). A Constant takes its first reader's layer,
// so that it never crosses a pipeline stage (ONNX exporters hoist constants).
void AssignGptLayers(const Function& fn, ModelLayout& layout) {
  bool after_blocks = false;
  std::vector<int> first_reader(static_cast<size_t>(fn.num_values()), -1);
  for (const auto& op : fn.ops()) {
    LayoutOp& lo = layout.ops[static_cast<size_t>(op->id())];
    const int64_t layer = GptLayer(op->result(0)->name());
    if (layer >= 0) {
      lo.layer = layer;
    } else {
      after_blocks = after_blocks || (op->id() > 0 && layout.ops[static_cast<size_t>(op->id() - 1)].layer >= 0 &&
                                      layout.ops[static_cast<size_t>(op->id() - 1)].layer < layout.num_layers);
      lo.layer = after_blocks ? layout.num_layers : -1;
    }
    for (const Value* in : op->inputs()) {
      int& reader = first_reader[static_cast<size_t>(in->id())];
      if (reader < 0) reader = op->id();
    }
  }
  for (const auto& op : fn.ops()) {
    if (op->num_inputs() != 0 || GptLayer(op->result(0)->name()) >= 0) continue;
    const int reader = first_reader[static_cast<size_t>(op->result(0)->id())];
    if (reader >= 0) layout.ops[static_cast<size_t>(op->id())].layer = layout.ops[static_cast<size_t>(reader)].layer;
  }
}

// The scope of a block's activation ("h.3.mlp.act.Mul_1_output_0" ->
// "h.3.mlp.act."), or "".
std::string ActScope(const std::string& name) {
  const size_t at = name.find(".mlp.act.");
  return GptLayer(name) >= 0 && at != std::string::npos ? name.substr(0, at + 9) : "";
}

// Marks one exported GELU for fusion when the scope's ops [begin, end) read
// one outside value, only feed each other and the last op, and hold Erf
// (exact) or Tanh (approximate) among elementwise arithmetic.
// Op index range [first, last] of the readers of each value (returned
// values count as read after the last op).
struct Readers {
  std::vector<size_t> first, last;
};

Readers FindReaders(const Function& fn) {
  const auto n = static_cast<size_t>(fn.num_values());
  Readers readers{std::vector<size_t>(n, SIZE_MAX), std::vector<size_t>(n, 0)};
  for (size_t k = 0; k < fn.ops().size(); ++k) {
    for (const Value* in : fn.ops()[k]->inputs()) {
      const auto id = static_cast<size_t>(in->id());
      readers.first[id] = std::min(readers.first[id], k);
      readers.last[id] = std::max(readers.last[id], k);
    }
  }
  for (const Value* v : fn.returns()) readers.last[static_cast<size_t>(v->id())] = SIZE_MAX;
  return readers;
}

// Marks one exported GELU for fusion when the scope's ops [begin, end) read
// one outside value, their results (but the last op's) are read only inside,
// and they hold Erf (exact) or Tanh (approximate) among elementwise arithmetic.
void FuseGelu(const Function& fn, ModelLayout& layout, size_t begin, size_t end,
              const Readers& readers) {
  const Value* x = nullptr;
  std::string form;
  std::vector<char> inside(static_cast<size_t>(fn.num_values()), 0);
  for (size_t k = begin; k < end; ++k) {
    const Op& op = *fn.ops()[k];
    switch (op.kind()) {
      case OpKind::kErf: form = "none"; break;
      case OpKind::kTanh: form = "tanh"; break;
      case OpKind::kAdd: case OpKind::kMul: case OpKind::kDiv: case OpKind::kPow:
      case OpKind::kSub: case OpKind::kConstant:
        break;
      default:
        return;
    }
    for (const Value* in : op.inputs()) {
      if (inside[static_cast<size_t>(in->id())]) continue;
      if (x != nullptr && x != in) return;
      x = in;
    }
    for (const auto& r : op.results()) {
      const auto id = static_cast<size_t>(r->id());
      inside[id] = 1;
      if (k + 1 < end && (readers.first[id] < begin || readers.last[id] >= end)) return;
    }
  }
  if (x == nullptr || form.empty() || fn.ops()[end - 1]->num_results() != 1) return;
  for (size_t k = begin; k + 1 < end; ++k) layout.ops[k].fused_away = true;
  layout.ops[end - 1].gelu = form;
  layout.ops[end - 1].gelu_input = x;
}

void FuseGelus(const Function& fn, ModelLayout& layout) {
  const auto& ops = fn.ops();
  const Readers readers = FindReaders(fn);
  for (size_t begin = 0; begin < ops.size();) {
    const std::string scope = ActScope(ops[begin]->result(0)->name());
    size_t end = begin + 1;
    while (!scope.empty() && end < ops.size() && ActScope(ops[end]->result(0)->name()) == scope) ++end;
    if (!scope.empty()) FuseGelu(fn, layout, begin, end, readers);
    begin = end;
  }
}

StatusOr<ModelLayout> AnalyzeGpt2(const Function& fn, int64_t tp) {
  namespace names = gpt_names;
  ModelLayout layout;
  const auto index = ParamIndex(fn);
  while (index.count(names::Block(layout.num_layers, "ln_1.weight"))) ++layout.num_layers;
  if (layout.num_layers == 0 || !index.count(names::kInputIds) ||
      !index.count(names::Block(0, "attn.c_proj.weight"))) {
    return InvalidArgument() << "@" << fn.name()
                             << " is not a GPT-2 built by BuildGpt2Inference or imported with "
                                "HuggingFace parameter names (needs %input_ids, %h.0.ln_1.weight, "
                                "%h.0.attn.c_proj.weight)";
  }
  layout.batch = fn.param(index.at(names::kInputIds))->type().shape()[0];
  const int64_t d = fn.param(index.at(names::Block(0, "attn.c_proj.weight")))->type().shape()[0];
  layout.params.resize(static_cast<size_t>(fn.num_params()));
  layout.params[static_cast<size_t>(index.at(names::kInputIds))].role = ParamRole::kData;
  layout.ops.resize(fn.ops().size());
  AssignGptLayers(fn, layout);

  for (const auto& op : fn.ops()) {
    LayoutOp& lo = layout.ops[static_cast<size_t>(op->id())];
    lo.input_splits.assign(static_cast<size_t>(op->num_inputs()), TpSplit::kReplicated);
    for (int i = 0; i < op->num_inputs() && tp > 1; ++i) {
      const Value* in = op->input(i);
      if (ParamPosition(fn, in) < 0) continue;
      TpSplit split = GptSplit(*op, in->name());
      // An LM head stored under another name (ONNX constant folding writes the
      // tied head pre-transposed as onnx::MatMul_NNN): column-parallel too.
      if (split == TpSplit::kReplicated && op->kind() == OpKind::kMatMul && i == 1 &&
          lo.layer == layout.num_layers && in->type().rank() == 2) {
        split = TpSplit::kColumns;
      }
      lo.input_splits[static_cast<size_t>(i)] = split;
    }
    // The builder's head count: the last extent of the split_shape constant.
    if (op->kind() == OpKind::kConstant && EndsWith(op->result(0)->name(), "attn.split_shape")) {
      const Attribute* value = op->FindAttr("value");
      if (value != nullptr && value->type() == AttrType::kTensor && !value->AsTensor().values.empty()) {
        const auto head_dim = static_cast<int64_t>(value->AsTensor().values.back());
        if (head_dim > 0) layout.tp_divisor = d / head_dim;
      }
    }
  }
  layout.tp_divisor_name = "the number of attention heads";
  FuseGelus(fn, layout);
  DISTIR_RETURN_IF_ERROR(AnalyzeOutputs(fn, layout, TpSplit::kReplicated));
  DISTIR_RETURN_IF_ERROR(ShardPropagation(fn, layout).Run(tp));
  return layout;
}

}  // namespace

std::vector<int64_t> LocalShape::Local(int64_t batch_pieces, int64_t tp) const {
  std::vector<int64_t> out = full;
  if (batch_index >= 0) out[static_cast<size_t>(batch_index)] /= batch_pieces;
  if (tp_index >= 0) out[static_cast<size_t>(tp_index)] /= tp;
  if (tp_all) {
    for (int64_t& e : out) e /= tp;
  }
  return out;
}

StatusOr<ModelLayout> AnalyzeModel(const Function& fn, int64_t tp) {
  if (fn.LookupValue(mlp_names::Weight(0)) != nullptr) return AnalyzeMlp(fn, tp);
  if (fn.LookupValue(gpt_names::kInputIds) != nullptr) return AnalyzeGpt2(fn, tp);
  return InvalidArgument() << "@" << fn.name()
                           << " is neither an MLP (BuildMlpTraining) nor a GPT-2 "
                              "(BuildGpt2Inference); the parallel transform needs one of them";
}

}  // namespace distir
