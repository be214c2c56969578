#include "models/gpt.h"

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "models/model_size.h"
#include "support/checked_math.h"

namespace distir {

namespace gpt_names {
std::string BlockPrefix(int64_t layer) { return "h." + std::to_string(layer) + "."; }
std::string Block(int64_t layer, const std::string& suffix) { return BlockPrefix(layer) + suffix; }
std::string BlockOutput(int64_t layer) { return Block(layer, "out"); }
}  // namespace gpt_names

namespace {

// HuggingFace's GPT-2 masks future positions with -1e4 before the softmax (its
// `masked_bias`); unlike -inf it is representable in f16 and never gives NaN.
constexpr double kMaskValue = -10000.0;

Status CheckGptAtLeastOne(const char* option, int64_t value) {
  if (value >= 1) return Status::Ok();
  return InvalidArgument() << "gpt2 option " << option << " must be >= 1, got " << value;
}

// The builder's checks of `o`; `culprit` names the option blamed.
Status ValidateOptions(const GptOptions& o, std::string& culprit) {
  for (auto [option, value] :
       {std::pair{"batch", o.batch}, std::pair{"seq_len", o.seq_len}, std::pair{"vocab", o.vocab},
        std::pair{"n_ctx", o.n_ctx}, std::pair{"d_model", o.d_model}, std::pair{"n_head", o.n_head},
        std::pair{"n_layer", o.n_layer}}) {
    culprit = option;
    DISTIR_RETURN_IF_ERROR(CheckGptAtLeastOne(option, value));
  }
  culprit = "seq_len";
  if (o.seq_len > o.n_ctx) {
    return InvalidArgument() << "gpt2 option seq_len must be <= n_ctx (the rows of wpe), got "
                             << "seq_len " << o.seq_len << " and n_ctx " << o.n_ctx;
  }
  culprit = "n_head";
  if (o.d_model % o.n_head != 0) {
    return InvalidArgument() << "gpt2 option n_head must divide d_model, got d_model " << o.d_model
                             << " and n_head " << o.n_head << " (remainder " << o.d_model % o.n_head
                             << ")";
  }
  culprit = "dtype";
  if (!IsFloat(o.dtype)) {
    return InvalidArgument() << "gpt2 option dtype must be a float type, got "
                             << DTypeName(o.dtype);
  }
  culprit = "layer_norm_epsilon";
  if (!(o.layer_norm_epsilon > 0) || !std::isfinite(o.layer_norm_epsilon)) {
    return InvalidArgument() << "gpt2 option layer_norm_epsilon must be finite and > 0, got "
                             << o.layer_norm_epsilon;
  }
  return CheckGptSizes(o, &culprit);
}

// The twelve weights of one transformer block, in HuggingFace order.
struct BlockWeights {
  Value* ln_1_weight;
  Value* ln_1_bias;
  Value* c_attn_weight;
  Value* c_attn_bias;
  Value* attn_proj_weight;
  Value* attn_proj_bias;
  Value* ln_2_weight;
  Value* ln_2_bias;
  Value* c_fc_weight;
  Value* c_fc_bias;
  Value* mlp_proj_weight;
  Value* mlp_proj_bias;
};

// A block's Constants (and the causal mask computed from them).
struct AttentionConstants {
  Value* grouped_shape;  // grouped_qkv: [0, 0, -1, 3, head_dim]
  Value* split_shape;
  Value* merge_shape;
  Value* scale;
  Value* causal_mask;
  Value* mask_value;
};

struct GptParams {
  Value* input_ids = nullptr;
  Value* wte = nullptr;
  Value* wpe = nullptr;
  std::vector<BlockWeights> blocks;
  Value* ln_f_weight = nullptr;
  Value* ln_f_bias = nullptr;
  Value* lm_head = nullptr;  // untied only
};

// Builds ops and parameters of one model: the options and the builder together.
class GptBuilder {
 public:
  explicit GptBuilder(const GptOptions& o) : o_(o), b_("gpt2") {}

  StatusOr<Module> Build() &&;

 private:
  Type Weight(std::vector<int64_t> shape) const {
    return Type::Tensor(o_.dtype, std::move(shape), o_.device);
  }
  Value* Param(const std::string& name, std::vector<int64_t> shape) {
    return b_.Param(name, Weight(std::move(shape)));
  }
  BlockWeights AddBlockParams(int64_t layer);
  void AddParams();
  Value* Constant(DenseTensor value, const std::string& name);
  Value* Scalar(double value, const std::string& name) {
    return Constant(DenseTensor{o_.dtype, {}, {value}}, name);
  }
  Value* Linear(Value* x, Value* weight, Value* bias, const std::string& name);
  Value* LayerNorm(Value* x, Value* weight, Value* bias, const std::string& name);
  Value* AddEmbeddings();
  AttentionConstants AddAttentionConstants(int64_t layer);
  std::vector<Value*> SplitHeads(const std::vector<Value*>& qkv, Value* split_shape);
  Value* AddAttention(int64_t layer, Value* x, const BlockWeights& w);
  Value* AddMlp(int64_t layer, Value* x, const BlockWeights& w);
  Value* AddBlock(int64_t layer, Value* x);
  Value* AddHead(Value* x);

  const GptOptions& o_;
  FunctionBuilder b_;
  GptParams p_;
};

BlockWeights GptBuilder::AddBlockParams(int64_t layer) {
  const int64_t d = o_.d_model;
  auto name = [layer](const char* suffix) { return gpt_names::Block(layer, suffix); };
  BlockWeights w;
  w.ln_1_weight = Param(name("ln_1.weight"), {d});
  w.ln_1_bias = Param(name("ln_1.bias"), {d});
  w.c_attn_weight = Param(name("attn.c_attn.weight"), {d, 3 * d});
  w.c_attn_bias = Param(name("attn.c_attn.bias"), {3 * d});
  w.attn_proj_weight = Param(name("attn.c_proj.weight"), {d, d});
  w.attn_proj_bias = Param(name("attn.c_proj.bias"), {d});
  w.ln_2_weight = Param(name("ln_2.weight"), {d});
  w.ln_2_bias = Param(name("ln_2.bias"), {d});
  w.c_fc_weight = Param(name("mlp.c_fc.weight"), {d, 4 * d});
  w.c_fc_bias = Param(name("mlp.c_fc.bias"), {4 * d});
  w.mlp_proj_weight = Param(name("mlp.c_proj.weight"), {4 * d, d});
  w.mlp_proj_bias = Param(name("mlp.c_proj.bias"), {d});
  return w;
}

void GptBuilder::AddParams() {
  const int64_t d = o_.d_model;
  p_.input_ids =
      b_.Param(gpt_names::kInputIds, Type::Tensor(DType::kI64, {o_.batch, o_.seq_len}, o_.device));
  p_.wte = Param(gpt_names::kTokenEmbedding, {o_.vocab, d});
  p_.wpe = Param(gpt_names::kPositionEmbedding, {o_.n_ctx, d});
  for (int64_t i = 0; i < o_.n_layer; ++i) p_.blocks.push_back(AddBlockParams(i));
  p_.ln_f_weight = Param(gpt_names::kFinalNormWeight, {d});
  p_.ln_f_bias = Param(gpt_names::kFinalNormBias, {d});
  if (!o_.tied_lm_head) p_.lm_head = Param(gpt_names::kLmHeadWeight, {d, o_.vocab});
}

Value* GptBuilder::Constant(DenseTensor value, const std::string& name) {
  AttrMap attrs = {{"value", std::move(value)}};
  // A device-generic function may not mention a device anywhere (verifier.h).
  if (o_.device.has_value()) attrs["device"] = o_.device;
  return b_.Add(OpKind::kConstant, {}, std::move(attrs), name);
}

// HuggingFace's Conv1D: x [.., in] times weight [in, out] plus bias [out]. The
// product and the bias add are separate ops so that a tensor-parallel transform
// can all-reduce the product before the (replicated) bias is added.
Value* GptBuilder::Linear(Value* x, Value* weight, Value* bias, const std::string& name) {
  Value* product = b_.Add(OpKind::kMatMul, {x, weight}, {}, name + ".mm");
  return b_.Add(OpKind::kAdd, {product, bias}, {}, name);
}

Value* GptBuilder::LayerNorm(Value* x, Value* weight, Value* bias, const std::string& name) {
  return b_.Add(OpKind::kLayerNormalization, {x, weight, bias},
                {{"axis", int64_t{-1}}, {"epsilon", o_.layer_norm_epsilon}}, name);
}

Value* GptBuilder::AddEmbeddings() {
  DenseTensor positions{DType::kI64, {o_.seq_len}, {}};
  for (int64_t i = 0; i < o_.seq_len; ++i) positions.values.push_back(static_cast<double>(i));
  Value* position_ids = Constant(std::move(positions), "position_ids");
  Value* tokens =
      b_.Add(OpKind::kGather, {p_.wte, p_.input_ids}, {{"axis", int64_t{0}}}, "embed.tokens");
  Value* pos =
      b_.Add(OpKind::kGather, {p_.wpe, position_ids}, {{"axis", int64_t{0}}}, "embed.positions");
  return b_.Add(OpKind::kAdd, {tokens, pos}, {}, gpt_names::kEmbeddings);
}

AttentionConstants GptBuilder::AddAttentionConstants(int64_t layer) {
  auto name = [layer](const std::string& suffix) {
    return gpt_names::Block(layer, "attn." + suffix);
  };
  const double head_dim = static_cast<double>(o_.d_model / o_.n_head);
  const double s = static_cast<double>(o_.seq_len);
  AttentionConstants c;
  // Reshape targets copy the batch and sequence extents (0) and infer the head
  // count (-1), so splitting the batch (D) or the heads (T) needs no new constants.
  c.grouped_shape =
      o_.grouped_qkv ? Constant({DType::kI64, {5}, {0, 0, -1, 3, head_dim}}, name("grouped_shape"))
                     : nullptr;
  c.split_shape = Constant({DType::kI64, {4}, {0, 0, -1, head_dim}}, name("split_shape"));
  c.merge_shape = Constant({DType::kI64, {3}, {0, 0, -1}}, name("merge_shape"));
  c.scale = Scalar(std::sqrt(head_dim), name("scale"));
  Value* mask_shape = Constant({DType::kI64, {2}, {s, s}}, name("mask_shape"));
  Value* ones = b_.Add(OpKind::kConstantOfShape, {mask_shape},
                       {{"value", DenseTensor{DType::kBool, {1}, {1}}}}, name("ones"));
  c.causal_mask = b_.Add(OpKind::kTrilu, {ones}, {{"upper", int64_t{0}}}, name("causal_mask"));
  c.mask_value = Scalar(kMaskValue, name("mask_value"));
  return c;
}

// q, k, v [b, s, d] -> q [b, h, s, hd], k transposed [b, h, hd, s], v [b, h, s, hd].
std::vector<Value*> GptBuilder::SplitHeads(const std::vector<Value*>& qkv, Value* split_shape) {
  const std::vector<int64_t> to_heads = {0, 2, 1, 3};
  const std::vector<int64_t> to_keys = {0, 2, 3, 1};
  std::vector<Value*> heads;
  for (int i = 0; i < 3; ++i) {
    const std::string& part = qkv[i]->name();
    Value* split = b_.Add(OpKind::kReshape, {qkv[i], split_shape}, {}, part + "_heads");
    heads.push_back(
        b_.Add(OpKind::kTranspose, {split}, {{"perm", i == 1 ? to_keys : to_heads}}, part + "_t"));
  }
  return heads;
}

// Causal multi-head self-attention of block `layer` on x [b, s, d]; returns the
// output projection [b, s, d] (before the residual add).
Value* GptBuilder::AddAttention(int64_t layer, Value* x, const BlockWeights& w) {
  auto name = [layer](const std::string& suffix) {
    return gpt_names::Block(layer, "attn." + suffix);
  };
  const AttentionConstants c = AddAttentionConstants(layer);
  Value* qkv = Linear(x, w.c_attn_weight, w.c_attn_bias, name("c_attn"));
  std::vector<Value*> parts;
  if (o_.grouped_qkv) {
    // [b, s, 3d] -> [b, s, h, 3, hd] -> q, k, v [b, s, h, 1, hd]; SplitHeads
    // reshapes each to [b, s, h, hd].
    Value* grouped = b_.Add(OpKind::kReshape, {qkv, c.grouped_shape}, {}, name("qkv_grouped"));
    parts = b_.AddMulti(OpKind::kSplit, {grouped},
                        {{"axis", int64_t{3}}, {"split", std::vector<int64_t>{1, 1, 1}}},
                        {name("q"), name("k"), name("v")});
  } else {
    parts = b_.AddMulti(OpKind::kSplit, {qkv}, {{"axis", int64_t{-1}}},
                        {name("q"), name("k"), name("v")});
  }
  std::vector<Value*> heads = SplitHeads(parts, c.split_shape);
  Value* raw = b_.Add(OpKind::kMatMul, {heads[0], heads[1]}, {}, name("scores_raw"));
  Value* scores = b_.Add(OpKind::kDiv, {raw, c.scale}, {}, name("scores"));
  Value* masked = b_.Add(OpKind::kWhere, {c.causal_mask, scores, c.mask_value}, {}, name("masked"));
  Value* probs = b_.Add(OpKind::kSoftmax, {masked}, {{"axis", int64_t{-1}}}, name("probs"));
  Value* context = b_.Add(OpKind::kMatMul, {probs, heads[2]}, {}, name("context_heads"));
  context = b_.Add(OpKind::kTranspose, {context}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}},
                   name("context_t"));
  context = b_.Add(OpKind::kReshape, {context, c.merge_shape}, {}, name("context"));
  return Linear(context, w.attn_proj_weight, w.attn_proj_bias, name("c_proj"));
}

Value* GptBuilder::AddMlp(int64_t layer, Value* x, const BlockWeights& w) {
  auto name = [layer](const std::string& suffix) {
    return gpt_names::Block(layer, "mlp." + suffix);
  };
  Value* fc = Linear(x, w.c_fc_weight, w.c_fc_bias, name("c_fc"));
  // GPT-2's activation is the tanh approximation of GELU ("gelu_new").
  Value* gelu = b_.Add(OpKind::kGelu, {fc}, {{"approximate", "tanh"}}, name("gelu"));
  return Linear(gelu, w.mlp_proj_weight, w.mlp_proj_bias, name("c_proj"));
}

// One pre-LayerNorm block: x + attn(ln_1(x)), then that + mlp(ln_2(that)).
Value* GptBuilder::AddBlock(int64_t layer, Value* x) {
  const BlockWeights& w = p_.blocks[layer];
  Value* ln_1 = LayerNorm(x, w.ln_1_weight, w.ln_1_bias, gpt_names::Block(layer, "ln_1"));
  Value* attn = AddAttention(layer, ln_1, w);
  Value* resid = b_.Add(OpKind::kAdd, {x, attn}, {}, gpt_names::Block(layer, "resid_1"));
  Value* ln_2 = LayerNorm(resid, w.ln_2_weight, w.ln_2_bias, gpt_names::Block(layer, "ln_2"));
  Value* mlp = AddMlp(layer, ln_2, w);
  return b_.Add(OpKind::kAdd, {resid, mlp}, {}, gpt_names::BlockOutput(layer));
}

Value* GptBuilder::AddHead(Value* x) {
  Value* ln_f = LayerNorm(x, p_.ln_f_weight, p_.ln_f_bias, "ln_f");
  if (!o_.tied_lm_head) return b_.Add(OpKind::kMatMul, {ln_f, p_.lm_head}, {}, gpt_names::kLogits);
  // The tied head reads the embedding table [vocab, d] transposed inside its
  // GEMM (Megatron's F.linear(x, word_embeddings.weight)): no transposed copy
  // of the table, which a pipeline's last stage would hold beside its copy of
  // the table. Gemm takes matrices, so the tokens are flattened around it.
  const auto d = static_cast<double>(o_.d_model);
  const auto s = static_cast<double>(o_.seq_len);
  const auto vocab = static_cast<double>(o_.vocab);
  Value* rows =
      b_.Add(OpKind::kReshape, {ln_f, Constant({DType::kI64, {2}, {-1, d}}, "lm_head.rows_shape")},
             {}, "lm_head.rows");
  Value* logits = b_.Add(OpKind::kGemm, {rows, p_.wte}, {{"transB", int64_t{1}}}, "lm_head.logits");
  Value* shape = Constant({DType::kI64, {3}, {-1, s, vocab}}, "lm_head.logits_shape");
  return b_.Add(OpKind::kReshape, {logits, shape}, {}, gpt_names::kLogits);
}

StatusOr<Module> GptBuilder::Build() && {
  AddParams();
  Value* x = AddEmbeddings();
  for (int64_t i = 0; i < o_.n_layer; ++i) x = AddBlock(i, x);
  b_.Return({AddHead(x)});
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> fn, std::move(b_).Finish());
  Module module;
  module.AddFunction(std::move(fn));
  return module;
}

}  // namespace

StatusOr<Module> BuildGpt2Inference(const GptOptions& options) {
  DISTIR_RETURN_IF_ERROR(ValidateGptOptions(options));
  return GptBuilder(options).Build();
}

std::vector<std::string> GptShardingRules() {
  return {"input_ids=[{dp}, {}]",
          // Megatron's vocabulary-parallel embedding: each device holds
          // vocab / T rows; the token Gather looks up its own rows (a partial
          // sum, all-reduced over tp) and the tied LM head reads the same
          // piece transposed (vocab-parallel logits).
          "wte.weight=[{tp}, {}]", "h.*.attn.c_attn.weight=[{}, {tp}]",
          "h.*.attn.c_attn.bias=[{tp}]", "h.*.attn.c_proj.weight=[{tp}, {}]",
          "h.*.mlp.c_fc.weight=[{}, {tp}]", "h.*.mlp.c_fc.bias=[{tp}]",
          "h.*.mlp.c_proj.weight=[{tp}, {}]"};
}

Status ValidateGptOptions(const GptOptions& options, std::string* culprit) {
  std::string blamed;
  Status valid = ValidateOptions(options, blamed);
  if (!valid.ok() && culprit != nullptr) *culprit = blamed;
  return valid;
}

Status CheckGptSizes(const GptOptions& o, std::string* culprit) {
  const std::string dtype(DTypeName(o.dtype));
  const int64_t width = ByteWidth(o.dtype);
  const int64_t d = o.d_model;
  const int64_t b = o.batch;
  const int64_t s = o.seq_len;
  auto per_layer = [&o](int64_t n) { return CheckedMul(n, o.n_layer); };
  ModelSizeCheck check("gpt2");
  // A block's weights are 12 d^2 + 13 d: at most three d x 4d matrices.
  check.AddTensors(per_layer(3), {d, 4, d}, width, "a d_model x 4 d_model weight of " + dtype,
                   "d_model", d);
  check.AddTensors(per_layer(13), {d}, width, "a bias of " + dtype, "d_model", d);
  // wte and its transpose (or the untied LM head), wpe.
  check.AddTensors(2, {o.vocab, d}, width, "the vocab x d_model token embedding of " + dtype,
                   "vocab", o.vocab);
  check.AddTensors(1, {o.n_ctx, d}, width, "the n_ctx x d_model position embedding of " + dtype,
                   "n_ctx", o.n_ctx);
  // Activations: the 34 values of a block are at most batch x seq_len x 4 d_model
  // each, but for the attention scores (batch x n_head x seq_len x seq_len).
  check.AddTensors(1, {b, s}, ByteWidth(DType::kI64), "the batch x seq_len input ids", "batch", b);
  check.AddTensors(8, {b, s, d}, width, "a batch x seq_len x d_model activation of " + dtype,
                   "batch", b);
  check.AddTensors(per_layer(kBlockOps), {b, s, 4, d}, width,
                   "a batch x seq_len x 4 d_model activation of " + dtype, "batch", b);
  check.AddTensors(per_layer(4), {b, o.n_head, s, s}, width,
                   "a batch x n_head x seq_len x seq_len attention score of " + dtype, "batch", b);
  check.AddTensors(1, {b, s, o.vocab}, width, "the batch x seq_len x vocab logits of " + dtype,
                   "batch", b);
  const std::optional<int64_t> block_ops = per_layer(kBlockOps);  // + 7 outside the blocks
  return check.Finish(block_ops ? CheckedAdd(*block_ops, 7) : std::nullopt, "n_layer", o.n_layer,
                      culprit);
}

int64_t GptParameterCount(const GptOptions& o) {
  const int64_t d = o.d_model;
  const int64_t per_block = 12 * d * d + 13 * d;
  const int64_t lm_head = o.tied_lm_head ? 0 : d * o.vocab;
  return (o.vocab + o.n_ctx) * d + o.n_layer * per_block + 2 * d + lm_head;
}

}  // namespace distir
