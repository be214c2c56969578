// BuildTransformerTraining(): the forward pass, the backward pass and the
// optimizer of one transformer training step, op by op (docs/models.md
// "Transformer training" lists every op and name).

#include <cmath>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/gemm_accumulation.h"
#include "models/transformer.h"

namespace distir {
namespace {

using Shape = std::vector<int64_t>;

// One trained tensor: its parameter, its gradient (set by the backward pass)
// and whether weight decay applies (matrices, not biases or norm scales).
struct Weight {
  Value* value = nullptr;
  Value* grad = nullptr;
  bool decay = false;
  /// The tied embedding: its gradient's two addends (the lookup's and the LM
  /// head's), which the mixed-precision step casts to f32 one by one.
  Value* lookup_grad = nullptr;
  Value* head_grad = nullptr;
};

// What a block's backward pass reads of its forward pass.
struct BlockActs {
  Value *x, *norm1, *q, *k, *v, *o, *lse, *context, *residual, *norm2;
  Value *q_scaled = nullptr, *k_t = nullptr, *probs = nullptr;            // unfused attention
  Value *fc1 = nullptr, *act = nullptr;                                   // GPT
  Value *gate = nullptr, *up = nullptr, *sig = nullptr, *silu = nullptr;  // LLaMA
};

class TransformerBuilder {
 public:
  explicit TransformerBuilder(const TransformerOptions& o)
      : o_(ResolveTransformerOptions(o)), b_("transformer") {}

  StatusOr<Module> Build() &&;

 private:
  bool gpt() const { return o_.variant == TransformerVariant::kGpt; }
  int64_t head_width() const { return o_.hidden_size / o_.num_attention_heads; }
  int64_t heads_per_group() const { return o_.num_attention_heads / o_.num_query_groups; }
  // f32 for the mixed-precision dtypes, else the params dtype.
  DType main_dtype() const { return IsHalf() ? DType::kF32 : o_.params_dtype; }
  bool IsHalf() const { return o_.params_dtype == DType::kBF16 || o_.params_dtype == DType::kF16; }
  /// Megatron's gradient accumulation fusion (ir/gemm_accumulation.h): the
  /// linear layers' weight gradients are written in f32 by their GEMMs.
  bool FusesWeightGrads() const { return IsHalf() && o_.gradient_accumulation_fusion; }
  AttrMap WeightGradAttrs() const {
    return FusesWeightGrads() ? AttrMap{{"dw_dtype", DType::kF32}} : AttrMap{};
  }

  void AddWeight(const std::string& name, Shape shape, bool decay);
  Value* W(const std::string& name) { return weights_.at(name).value; }
  Value* WL(int64_t layer, const std::string& suffix) {
    return W(transformer_names::Layer(layer, suffix));
  }
  void AddParams();
  Value* Constant(DenseTensor value, const std::string& name);
  Value* Ints(const Shape& values, const std::string& name);
  Value* Op(OpKind kind, std::vector<Value*> in, const std::string& name, AttrMap attrs = {}) {
    return b_.Add(kind, std::move(in), std::move(attrs), name);
  }
  std::vector<Value*> Ops(OpKind kind, std::vector<Value*> in, const std::vector<std::string>& out,
                          AttrMap attrs = {}) {
    return b_.AddMulti(kind, std::move(in), std::move(attrs), out);
  }
  void AddConstants();
  // The unfused attention's causal mask (future_: key position > query
  // position, computed once from two position vectors), 1/sqrt(d) and -1e4,
  // the masked scores' value (Megatron's fused softmax fills with -10000).
  void AddCoreAttentionConstants();
  Value* Norm(Value* x, const std::string& weight, const std::string& name);
  Value* Linear(Value* x, const std::string& weight, const std::string& name);
  Value* Embed();
  Value* Attention(int64_t layer, Value* x, BlockActs& a);
  // Megatron's unfused core attention of heads q [b, h, s, d], k, v: the
  // output [b, h, s, d]; its backward gives (dq, dk, dv).
  Value* CoreAttention(int64_t layer, BlockActs& a);
  std::vector<Value*> CoreAttentionGrad(int64_t layer, const BlockActs& a, Value* dout);
  Value* Mlp(int64_t layer, Value* x, BlockActs& a);
  Value* Block(int64_t layer, Value* x, BlockActs& a);
  // Backward: each returns the gradient of its input and records weight grads.
  void SetGrad(const std::string& weight, Value* grad);
  Value* NormGrad(Value* x, const std::string& weight, Value* dy, const std::string& name);
  Value* LinearGrad(Value* x, const std::string& weight, Value* dy, const std::string& name);
  Value* MlpGrad(int64_t layer, const BlockActs& a, Value* dy);
  Value* AttentionGrad(int64_t layer, const BlockActs& a, Value* dy);
  Value* BlockGrad(int64_t layer, const BlockActs& a, Value* dy);
  void EmbedGrad(Value* dx);
  void AddOptimizerParams();
  Value* Head(Value* x);
  Value* HeadGrad(Value* x);
  void Optimize(const std::string& name, std::vector<Value*>& results);

  const TransformerOptions o_;
  FunctionBuilder b_;
  std::vector<std::string> order_;  // weights in parameter order
  std::map<std::string, Weight> weights_;
  Value* tokens_ = nullptr;
  Value* labels_ = nullptr;
  Value* positions_ = nullptr;  // GPT
  Value* future_ = nullptr;     // unfused attention: [s, s], key after query
  Value* scale_ = nullptr;      // unfused attention: 1 / sqrt(d)
  Value* masked_ = nullptr;     // unfused attention: the masked scores' value
  Value* cos_ = nullptr;        // LLaMA: [s, d/2]
  Value* sin_ = nullptr;
  Value* neg_sin_ = nullptr;
  Value* output_weight_ = nullptr;  // [H, V]: output_layer.weight or the transposed embedding
  Value* final_norm_ = nullptr;
  Value* logits_ = nullptr;
  Value* lse_ = nullptr;                  // each token's log-sum-exp over the vocabulary
  std::map<std::string, Value*> consts_;  // Reshape targets and optimizer scalars by name
};

void TransformerBuilder::AddWeight(const std::string& name, Shape shape, bool decay) {
  Value* v = b_.Param(name, Type::Tensor(o_.params_dtype, std::move(shape), o_.device));
  order_.push_back(name);
  weights_[name] = Weight{v, nullptr, decay};
}

void TransformerBuilder::AddParams() {
  const int64_t h = o_.hidden_size, f = o_.ffn_hidden_size, d = head_width();
  const int64_t qkv = (o_.num_attention_heads + 2 * o_.num_query_groups) * d;
  const Type ids = Type::Tensor(DType::kI64, {o_.batch, o_.seq_length}, o_.device);
  tokens_ = b_.Param(transformer_names::kTokens, ids);
  labels_ = b_.Param(transformer_names::kLabels, ids);
  AddWeight(transformer_names::kEmbedding, {o_.vocab_size, h}, true);
  if (gpt())
    AddWeight(transformer_names::kPositionEmbedding, {o_.max_position_embeddings, h}, true);
  for (int64_t i = 0; i < o_.num_layers; ++i) {
    auto add = [&](const std::string& suffix, Shape shape, bool decay) {
      AddWeight(transformer_names::Layer(i, suffix), std::move(shape), decay);
    };
    add("input_norm.weight", {h}, false);
    if (gpt()) add("input_norm.bias", {h}, false);
    add("attention.qkv.weight", {h, qkv}, true);
    if (gpt()) add("attention.qkv.bias", {qkv}, false);
    add("attention.proj.weight", {o_.num_attention_heads * d, h}, true);
    if (gpt()) add("attention.proj.bias", {h}, false);
    add("post_attention_norm.weight", {h}, false);
    if (gpt()) add("post_attention_norm.bias", {h}, false);
    if (gpt()) {
      add("mlp.fc1.weight", {h, f}, true);
      add("mlp.fc1.bias", {f}, false);
    } else {
      add("mlp.fc1_gate.weight", {h, f}, true);
      add("mlp.fc1_up.weight", {h, f}, true);
    }
    add("mlp.fc2.weight", {f, h}, true);
    if (gpt()) add("mlp.fc2.bias", {h}, false);
  }
  AddWeight(transformer_names::kFinalNormWeight, {h}, false);
  if (gpt()) AddWeight(transformer_names::kFinalNormBias, {h}, false);
  if (*o_.untie_embeddings_and_output_weights)
    AddWeight(transformer_names::kOutputLayer, {h, o_.vocab_size}, true);
}

Value* TransformerBuilder::Constant(DenseTensor value, const std::string& name) {
  AttrMap attrs = {{"value", std::move(value)}};
  if (o_.device.has_value()) attrs["device"] = o_.device;
  return b_.Add(OpKind::kConstant, {}, std::move(attrs), name);
}

Value* TransformerBuilder::Ints(const Shape& values, const std::string& name) {
  DenseTensor t{DType::kI64, {static_cast<int64_t>(values.size())}, {}};
  for (int64_t v : values) t.values.push_back(static_cast<double>(v));
  return Constant(std::move(t), name);
}

// Reshape targets (batch- and head-count-free: 0 copies an extent, -1 infers
// the head or group count, so a split of the batch or the heads needs no new
// constants), GPT's position ids and LLaMA's rotary tables, computed in the
// main dtype from positions and inverse frequencies as Megatron does:
// angle[p, i] = p * base^(-2i/d), cos and sin [s, d/2].
void TransformerBuilder::AddConstants() {
  const int64_t d = head_width(), r = heads_per_group();
  consts_["qkv_grouped"] = Ints({0, 0, -1, r + 2, d}, "shape.qkv_grouped");
  consts_["heads"] = Ints({0, 0, -1, d}, "shape.heads");
  consts_["merge"] = Ints({0, 0, -1}, "shape.merge");
  consts_["q_grouped"] = Ints({0, 0, -1, r, d}, "shape.q_grouped");
  consts_["kv_grouped"] = Ints({0, 0, -1, 1, d}, "shape.kv_grouped");
  if (!o_.flash_attention) AddCoreAttentionConstants();
  if (gpt()) {
    Shape ids(static_cast<size_t>(o_.seq_length));
    for (int64_t i = 0; i < o_.seq_length; ++i) ids[static_cast<size_t>(i)] = i;
    positions_ = Ints(ids, "position_ids");
    return;
  }
  DenseTensor positions{main_dtype(), {o_.seq_length, 1}, {}};
  for (int64_t p = 0; p < o_.seq_length; ++p) positions.values.push_back(static_cast<double>(p));
  DenseTensor inv_freq{main_dtype(), {d / 2}, {}};
  for (int64_t i = 0; i < d / 2; ++i) {
    const double exponent = static_cast<double>(2 * i) / static_cast<double>(d);
    inv_freq.values.push_back(1 / std::pow(o_.rotary_base, exponent));
  }
  Value* angles = Op(OpKind::kMul,
                     {Constant(std::move(positions), "rope.positions"),
                      Constant(std::move(inv_freq), "rope.inv_freq")},
                     "rope.angles");
  cos_ = Op(OpKind::kCos, {angles}, "rope.cos");
  sin_ = Op(OpKind::kSin, {angles}, "rope.sin");
  neg_sin_ = Op(OpKind::kNeg, {sin_}, "rope.neg_sin");
}

void TransformerBuilder::AddCoreAttentionConstants() {
  const int64_t s = o_.seq_length;
  DenseTensor rows{DType::kI64, {s, 1}, {}}, cols{DType::kI64, {s}, {}};
  for (int64_t p = 0; p < s; ++p) {
    rows.values.push_back(static_cast<double>(p));
    cols.values.push_back(static_cast<double>(p));
  }
  future_ = Op(OpKind::kLess,
               {Constant(std::move(rows), "attention.query_positions"),
                Constant(std::move(cols), "attention.key_positions")},
               "attention.future");
  scale_ =
      Constant(DenseTensor{o_.params_dtype, {}, {1 / std::sqrt(static_cast<double>(head_width()))}},
               "attention.scale");
  masked_ = Constant(DenseTensor{o_.params_dtype, {}, {-10000.0}}, "attention.masked");
}

Value* TransformerBuilder::Norm(Value* x, const std::string& weight, const std::string& name) {
  const AttrMap attrs = {{"axis", int64_t{-1}}, {"epsilon", o_.norm_epsilon}};
  if (!gpt()) return Op(OpKind::kRMSNormalization, {x, W(weight + ".weight")}, name, attrs);
  return Op(OpKind::kLayerNormalization, {x, W(weight + ".weight"), W(weight + ".bias")}, name,
            attrs);
}

// x [.., in] times weight [in, out] (+ bias [out] for GPT). Product and bias
// add are separate ops, so that a row-parallel product can be all-reduced
// before the replicated bias is added.
Value* TransformerBuilder::Linear(Value* x, const std::string& weight, const std::string& name) {
  if (!gpt()) return Op(OpKind::kMatMul, {x, W(weight + ".weight")}, name);
  Value* product = Op(OpKind::kMatMul, {x, W(weight + ".weight")}, name + ".mm");
  return Op(OpKind::kAdd, {product, W(weight + ".bias")}, name);
}

Value* TransformerBuilder::Embed() {
  const AttrMap axis0 = {{"axis", int64_t{0}}};
  Value* tokens =
      Op(OpKind::kGather, {W(transformer_names::kEmbedding), tokens_}, "embedding.tokens", axis0);
  if (!gpt()) return tokens;
  Value* positions = Op(OpKind::kGather, {W(transformer_names::kPositionEmbedding), positions_},
                        "embedding.positions", axis0);
  return Op(OpKind::kAdd, {tokens, positions}, "embedding");
}

// x [b, s, H] -> the attention output projection [b, s, H]. QKV columns are
// grouped as Megatron lays them out, [g, r + 2, d]: per key/value group its r
// query heads, then its key and its value head; so a column split by groups
// keeps whole groups on a shard.
Value* TransformerBuilder::Attention(int64_t layer, Value* x, BlockActs& a) {
  auto name = [layer](const std::string& s) {
    return transformer_names::Layer(layer, "attention." + s);
  };
  const int64_t r = heads_per_group();
  const AttrMap to_heads = {{"perm", Shape{0, 2, 1, 3}}};
  Value* qkv = Linear(x, transformer_names::Layer(layer, "attention.qkv"), name("qkv"));
  Value* grouped = Op(OpKind::kReshape, {qkv, consts_["qkv_grouped"]}, name("qkv_grouped"));
  std::vector<Value*> parts =
      Ops(OpKind::kSplit, {grouped}, {name("q_grouped"), name("k_grouped"), name("v_grouped")},
          {{"axis", int64_t{3}}, {"split", Shape{r, 1, 1}}});
  std::vector<Value*> heads;
  for (int i = 0; i < 3; ++i) {
    const std::string part = std::string(1, "qkv"[i]);
    Value* bshd = Op(OpKind::kReshape, {parts[i], consts_["heads"]}, name(part + "_bshd"));
    heads.push_back(Op(OpKind::kTranspose, {bshd}, name(part), to_heads));
  }
  if (!gpt()) {
    heads[0] = Op(OpKind::kRope, {heads[0], cos_, sin_}, name("q_rope"));
    heads[1] = Op(OpKind::kRope, {heads[1], cos_, sin_}, name("k_rope"));
  }
  a.q = heads[0], a.k = heads[1], a.v = heads[2];
  if (o_.flash_attention) {
    std::vector<Value*> out = Ops(OpKind::kFlashAttention, {heads[0], heads[1], heads[2]},
                                  {name("o"), name("lse")}, {{"causal", int64_t{1}}});
    a.o = out[0], a.lse = out[1];
  } else {
    a.o = CoreAttention(layer, a);
  }
  Value* o_t = Op(OpKind::kTranspose, {a.o}, name("o_bshd"), to_heads);
  a.context = Op(OpKind::kReshape, {o_t, consts_["merge"]}, name("context"));
  return Linear(a.context, transformer_names::Layer(layer, "attention.proj"), name("proj"));
}

// GPT: fc2(gelu(fc1(x))); LLaMA: fc2(silu(gate(x)) * up(x)), silu(z) = z sigmoid(z).
Value* TransformerBuilder::Mlp(int64_t layer, Value* x, BlockActs& a) {
  auto name = [layer](const std::string& s) { return transformer_names::Layer(layer, "mlp." + s); };
  if (gpt()) {
    a.fc1 = Linear(x, transformer_names::Layer(layer, "mlp.fc1"), name("fc1"));
    a.act = Op(OpKind::kGelu, {a.fc1}, name("act"), {{"approximate", std::string("tanh")}});
  } else {
    a.gate = Op(OpKind::kMatMul, {x, WL(layer, "mlp.fc1_gate.weight")}, name("fc1_gate"));
    a.up = Op(OpKind::kMatMul, {x, WL(layer, "mlp.fc1_up.weight")}, name("fc1_up"));
    a.sig = Op(OpKind::kSigmoid, {a.gate}, name("gate_sigmoid"));
    a.silu = Op(OpKind::kMul, {a.gate, a.sig}, name("gate_silu"));
    a.act = Op(OpKind::kMul, {a.silu, a.up}, name("act"));
  }
  return Linear(a.act, transformer_names::Layer(layer, "mlp.fc2"), name("fc2"));
}

Value* TransformerBuilder::Block(int64_t layer, Value* x, BlockActs& a) {
  auto name = [layer](const std::string& s) { return transformer_names::Layer(layer, s); };
  a.x = x;
  a.norm1 = Norm(x, name("input_norm"), name("input_norm"));
  Value* attention = Attention(layer, a.norm1, a);
  a.residual = Op(OpKind::kAdd, {x, attention}, name("residual"));
  a.norm2 = Norm(a.residual, name("post_attention_norm"), name("post_attention_norm"));
  return Op(OpKind::kAdd, {a.residual, Mlp(layer, a.norm2, a)}, name("out"));
}

void TransformerBuilder::SetGrad(const std::string& weight, Value* grad) {
  weights_.at(weight).grad = grad;
}

// The gradient name of a value or weight: "<name>.grad".
std::string Grad(const std::string& name) { return name + transformer_names::kGradSuffix; }

// Megatron's CoreAttention (megatron/model/transformer.py, without
// --use-flash-attn): scores = (q / sqrt(d)) kᵀ as a batched GEMM, the causal
// mask and softmax (one fused kernel in Megatron, two ops here), probs · v.
// Dropout is not modelled.
Value* TransformerBuilder::CoreAttention(int64_t layer, BlockActs& a) {
  auto name = [layer](const std::string& s) {
    return transformer_names::Layer(layer, "attention." + s);
  };
  // `recompute = 1`: what Megatron's selective recomputation recomputes.
  const Attribute again(int64_t{1});
  a.q_scaled = Op(OpKind::kMul, {a.q, scale_}, name("q_scaled"), {{"recompute", again}});
  a.k_t = Op(OpKind::kTranspose, {a.k}, name("k_t"),
             {{"perm", Shape{0, 1, 3, 2}}, {"recompute", again}});
  Value* scores = Op(OpKind::kMatMul, {a.q_scaled, a.k_t}, name("scores"), {{"recompute", again}});
  Value* masked =
      Op(OpKind::kWhere, {future_, masked_, scores}, name("scores_masked"), {{"recompute", again}});
  a.probs =
      Op(OpKind::kSoftmax, {masked}, name("probs"), {{"axis", int64_t{-1}}, {"recompute", again}});
  return Op(OpKind::kMatMul, {a.probs, a.v}, name("o"), {{"recompute", again}});
}

// The adjoint of CoreAttention. The mask's gradient is not applied: softmax
// gives the masked scores a probability of exactly 0 (exp(-1e4) underflows),
// so SoftmaxGrad's y (dy - Σ y dy) is already 0 there.
std::vector<Value*> TransformerBuilder::CoreAttentionGrad(int64_t layer, const BlockActs& a,
                                                          Value* dout) {
  auto name = [layer](const std::string& s) {
    return transformer_names::Layer(layer, "attention." + s);
  };
  std::vector<Value*> pv =
      Ops(OpKind::kMatMulGrad, {a.probs, a.v, dout}, {Grad(name("probs")), Grad(name("v"))});
  Value* dscores =
      Op(OpKind::kSoftmaxGrad, {a.probs, pv[0]}, Grad(name("scores")), {{"axis", int64_t{-1}}});
  std::vector<Value*> qk = Ops(OpKind::kMatMulGrad, {a.q_scaled, a.k_t, dscores},
                               {Grad(name("q_scaled")), Grad(name("k_t"))});
  Value* dq = Op(OpKind::kMul, {qk[0], scale_}, Grad(name(gpt() ? "q" : "q_rope")));
  Value* dk = Op(OpKind::kTranspose, {qk[1]}, Grad(name(gpt() ? "k" : "k_rope")),
                 {{"perm", Shape{0, 1, 3, 2}}});
  return {dq, dk, pv[1]};
}

Value* TransformerBuilder::NormGrad(Value* x, const std::string& weight, Value* dy,
                                    const std::string& name) {
  const AttrMap attrs = {{"axis", int64_t{-1}}, {"epsilon", o_.norm_epsilon}};
  if (!gpt()) {
    std::vector<Value*> g = Ops(OpKind::kRMSNormalizationGrad, {x, W(weight + ".weight"), dy},
                                {Grad(name + ".input"), Grad(weight + ".weight")}, attrs);
    SetGrad(weight + ".weight", g[1]);
    return g[0];
  }
  std::vector<Value*> g =
      Ops(OpKind::kLayerNormalizationGrad, {x, W(weight + ".weight"), dy},
          {Grad(name + ".input"), Grad(weight + ".weight"), Grad(weight + ".bias")}, attrs);
  SetGrad(weight + ".weight", g[1]);
  SetGrad(weight + ".bias", g[2]);
  return g[0];
}

// dy [b, s, out]: the bias gradient sums over batch and sequence.
Value* TransformerBuilder::LinearGrad(Value* x, const std::string& weight, Value* dy,
                                      const std::string& name) {
  if (gpt()) {
    SetGrad(weight + ".bias", Op(OpKind::kReduceSum, {dy}, Grad(weight + ".bias"),
                                 {{"axes", Shape{0, 1}}, {"keepdims", int64_t{0}}}));
  }
  std::vector<Value*> g = Ops(OpKind::kMatMulGrad, {x, W(weight + ".weight"), dy},
                              {Grad(name + ".input"), Grad(weight + ".weight")}, WeightGradAttrs());
  SetGrad(weight + ".weight", g[1]);
  return g[0];
}

Value* TransformerBuilder::MlpGrad(int64_t layer, const BlockActs& a, Value* dy) {
  auto name = [layer](const std::string& s) { return transformer_names::Layer(layer, "mlp." + s); };
  Value* dact = LinearGrad(a.act, transformer_names::Layer(layer, "mlp.fc2"), dy, name("fc2"));
  if (gpt()) {
    Value* dfc1 = Op(OpKind::kGeluGrad, {a.fc1, dact}, Grad(name("fc1")),
                     {{"approximate", std::string("tanh")}});
    return LinearGrad(a.norm2, transformer_names::Layer(layer, "mlp.fc1"), dfc1, name("fc1"));
  }
  // act = silu * up; silu = gate * sig: dgate = dsilu sig + SigmoidGrad(sig, dsilu gate).
  Value* dsilu = Op(OpKind::kMul, {dact, a.up}, Grad(name("gate_silu")));
  Value* dup = Op(OpKind::kMul, {dact, a.silu}, Grad(name("fc1_up")));
  Value* direct = Op(OpKind::kMul, {dsilu, a.sig}, Grad(name("fc1_gate.direct")));
  Value* dsig = Op(OpKind::kMul, {dsilu, a.gate}, Grad(name("gate_sigmoid")));
  Value* through = Op(OpKind::kSigmoidGrad, {a.sig, dsig}, Grad(name("fc1_gate.sigmoid")));
  Value* dgate = Op(OpKind::kAdd, {direct, through}, Grad(name("fc1_gate")));
  Value* dx_up =
      LinearGrad(a.norm2, transformer_names::Layer(layer, "mlp.fc1_up"), dup, name("fc1_up"));
  Value* dx_gate =
      LinearGrad(a.norm2, transformer_names::Layer(layer, "mlp.fc1_gate"), dgate, name("fc1_gate"));
  return Op(OpKind::kAdd, {dx_gate, dx_up},
            Grad(transformer_names::Layer(layer, "post_attention_norm")));
}

Value* TransformerBuilder::AttentionGrad(int64_t layer, const BlockActs& a, Value* dy) {
  auto name = [layer](const std::string& s) {
    return transformer_names::Layer(layer, "attention." + s);
  };
  const AttrMap to_heads = {{"perm", Shape{0, 2, 1, 3}}};
  Value* dcontext =
      LinearGrad(a.context, transformer_names::Layer(layer, "attention.proj"), dy, name("proj"));
  Value* do_bshd = Op(OpKind::kReshape, {dcontext, consts_["heads"]}, Grad(name("o_bshd")));
  Value* dout = Op(OpKind::kTranspose, {do_bshd}, Grad(name("o")), to_heads);
  std::vector<Value*> g = o_.flash_attention
                              ? Ops(OpKind::kFlashAttentionGrad, {a.q, a.k, a.v, a.o, a.lse, dout},
                                    {Grad(name(gpt() ? "q" : "q_rope")),
                                     Grad(name(gpt() ? "k" : "k_rope")), Grad(name("v"))},
                                    {{"causal", int64_t{1}}})
                              : CoreAttentionGrad(layer, a, dout);
  if (!gpt()) {
    // The rotation's adjoint is the inverse rotation: Rope with -sin.
    g[0] = Op(OpKind::kRope, {g[0], cos_, neg_sin_}, Grad(name("q")));
    g[1] = Op(OpKind::kRope, {g[1], cos_, neg_sin_}, Grad(name("k")));
  }
  const char* targets[] = {"q_grouped", "kv_grouped", "kv_grouped"};
  std::vector<Value*> grouped;
  for (int i = 0; i < 3; ++i) {
    const std::string part = std::string(1, "qkv"[i]);
    Value* bshd = Op(OpKind::kTranspose, {g[i]}, Grad(name(part + "_bshd")), to_heads);
    grouped.push_back(
        Op(OpKind::kReshape, {bshd, consts_[targets[i]]}, Grad(name(part + "_grouped"))));
  }
  Value* dgrouped = Op(OpKind::kConcat, grouped, Grad(name("qkv_grouped")), {{"axis", int64_t{3}}});
  Value* dqkv = Op(OpKind::kReshape, {dgrouped, consts_["merge"]}, Grad(name("qkv")));
  return LinearGrad(a.norm1, transformer_names::Layer(layer, "attention.qkv"), dqkv, name("qkv"));
}

// dy: the gradient of the block's output. out = residual + mlp(norm2(residual)),
// residual = x + attention(norm1(x)).
Value* TransformerBuilder::BlockGrad(int64_t layer, const BlockActs& a, Value* dy) {
  auto name = [layer](const std::string& s) { return transformer_names::Layer(layer, s); };
  Value* dnorm2 = MlpGrad(layer, a, dy);
  Value* dres_norm =
      NormGrad(a.residual, name("post_attention_norm"), dnorm2, name("post_attention_norm"));
  Value* dresidual = Op(OpKind::kAdd, {dy, dres_norm}, Grad(name("residual")));
  Value* dnorm1 = AttentionGrad(layer, a, dresidual);
  Value* dx_norm = NormGrad(a.x, name("input_norm"), dnorm1, name("input_norm"));
  return Op(OpKind::kAdd, {dresidual, dx_norm}, Grad(name("input")));
}

// dx: the gradient of the embedding output. The tied embedding's gradient is
// the sum of the lookup's (EmbeddingGrad) and the LM head's.
void TransformerBuilder::EmbedGrad(Value* dx) {
  if (gpt()) {
    // The position rows [s, H] were broadcast over the batch: sum it first.
    Value* dpos = Op(OpKind::kReduceSum, {dx}, Grad("embedding.positions"),
                     {{"axes", Shape{0}}, {"keepdims", int64_t{0}}});
    SetGrad(transformer_names::kPositionEmbedding, Op(OpKind::kEmbeddingGrad, {positions_, dpos},
                                                      Grad(transformer_names::kPositionEmbedding),
                                                      {{"num_rows", o_.max_position_embeddings}}));
  }
  const bool tied = !*o_.untie_embeddings_and_output_weights;
  const std::string lookup = Grad(transformer_names::kEmbedding) + (tied ? ".lookup" : "");
  Value* g = Op(OpKind::kEmbeddingGrad, {tokens_, dx}, lookup, {{"num_rows", o_.vocab_size}});
  if (tied) {
    Weight& w = weights_.at(transformer_names::kEmbedding);
    Value* head = w.grad;  // the LM head's, set by Build
    w.lookup_grad = g;
    w.head_grad = head;
    // Mixed precision: Optimize adds the two f32 main grads instead.
    if (!IsHalf()) g = Op(OpKind::kAdd, {g, head}, Grad(transformer_names::kEmbedding));
  }
  SetGrad(transformer_names::kEmbedding, g);
}

// Megatron's mixed-precision step for weight `name`: the gradient cast to f32
// (the main grad), unscaled under fp16, decayed (AdamW: the master weight;
// Adam: L2 on the gradient), Adam on the f32 master and moments, and the new
// master cast back to the compute dtype. With f32/f64 params the weight is
// its own master.
void TransformerBuilder::Optimize(const std::string& name, std::vector<Value*>& results) {
  const Weight& w = weights_.at(name);
  Value* master =
      IsHalf() ? b_.function().LookupValue(name + transformer_names::kMasterSuffix) : w.value;
  Value* grad = w.grad;
  if (IsHalf() && w.head_grad != nullptr) {
    // The tied embedding, as Megatron keeps it: each stage that holds a copy
    // accumulates its own addend in its f32 main grad (the lookup's on the
    // first, the LM head's on the last), and the two are summed once per step
    // (its embedding all-reduce); a pipeline then moves one sum per step, not
    // the head's gradient per microbatch (microbatch.h, sum_addends).
    Value* a = Op(OpKind::kCast, {w.lookup_grad}, name + ".main_grad.lookup", {{"to", DType::kF32}});
    Value* b = FusesWeightGrads() ? w.head_grad
                                  : Op(OpKind::kCast, {w.head_grad}, name + ".main_grad.output",
                                       {{"to", DType::kF32}});
    grad = Op(OpKind::kAdd, {a, b}, name + ".main_grad");
    if (o_.params_dtype == DType::kF16) {
      grad = Op(OpKind::kMul, {grad, consts_["inv_loss_scale"]}, name + ".main_grad.unscaled");
    }
  } else if (IsHalf()) {
    // A linear weight's fused gradient is f32 already (ir/gemm_accumulation.h).
    if (!IsFusedWeightGradient(*grad))
      grad = Op(OpKind::kCast, {grad}, name + ".main_grad", {{"to", DType::kF32}});
    if (o_.params_dtype == DType::kF16) {
      grad = Op(OpKind::kMul, {grad, consts_["inv_loss_scale"]}, name + ".main_grad.unscaled");
    }
  }
  if (w.decay && o_.weight_decay > 0) {
    if (o_.optimizer == TransformerOptimizer::kAdamW) {
      master = Op(OpKind::kMul, {master, consts_["decay_factor"]}, name + ".decayed");
    } else {
      Value* l2 = Op(OpKind::kMul, {master, consts_["weight_decay"]}, name + ".l2");
      grad = Op(OpKind::kAdd, {grad, l2}, name + ".main_grad.l2");
    }
  }
  Value* m = b_.function().LookupValue(name + transformer_names::kExpAvgSuffix);
  Value* v = b_.function().LookupValue(name + transformer_names::kExpAvgSqSuffix);
  const std::string updated =
      IsHalf() ? name + transformer_names::kMasterSuffix + transformer_names::kNewSuffix
               : name + transformer_names::kNewSuffix;
  std::vector<Value*> out =
      Ops(OpKind::kAdam, {master, grad, m, v},
          {updated, name + transformer_names::kExpAvgSuffix + transformer_names::kNewSuffix,
           name + transformer_names::kExpAvgSqSuffix + transformer_names::kNewSuffix},
          {{"lr", o_.lr},
           {"beta1", o_.adam_beta1},
           {"beta2", o_.adam_beta2},
           {"epsilon", o_.adam_eps},
           {"step", o_.step}});
  results.insert(results.end(), out.begin(), out.end());
  if (IsHalf()) {
    results.push_back(Op(OpKind::kCast, {out[0]}, name + transformer_names::kNewSuffix,
                         {{"to", o_.params_dtype}}));
  }
}

// The f32 (f64) optimizer state after the weights: masters (mixed precision
// only), then the first moments, then the second.
void TransformerBuilder::AddOptimizerParams() {
  const Type main_type = Type::Tensor(main_dtype(), {}, o_.device);
  for (const char* suffix : {transformer_names::kMasterSuffix, transformer_names::kExpAvgSuffix,
                             transformer_names::kExpAvgSqSuffix}) {
    if (suffix == transformer_names::kMasterSuffix && !IsHalf()) continue;
    for (const std::string& n : order_) {
      b_.Param(n + suffix, main_type.WithShape(weights_.at(n).value->type().shape()));
    }
  }
  auto scalar = [&](double value, const char* name) {
    consts_[name] =
        Constant(DenseTensor{main_dtype(), {}, {value}}, std::string("optimizer.") + name);
  };
  scalar(1 - o_.lr * o_.weight_decay, "decay_factor");
  scalar(o_.weight_decay, "weight_decay");
  if (o_.params_dtype == DType::kF16) scalar(1 / o_.loss_scale, "inv_loss_scale");
}

// final_norm, the LM head (tied: the transposed embedding) and the loss of
// the last block's output x; sets final_norm_ and logits_.
Value* TransformerBuilder::Head(Value* x) {
  final_norm_ = Norm(x, "final_norm", "final_norm");
  const bool tied = !*o_.untie_embeddings_and_output_weights;
  output_weight_ = tied ? Op(OpKind::kTranspose, {W(transformer_names::kEmbedding)},
                             "output_layer.weight_t", {{"perm", Shape{1, 0}}})
                        : W(transformer_names::kOutputLayer);
  logits_ = Op(OpKind::kMatMul, {final_norm_, output_weight_}, "logits");
  // The log-sum-exp apart, so that a vocabulary split over tp (Megatron's
  // vocab-parallel cross-entropy) reduces it across the pieces and the loss
  // and its gradient then run on each piece (sharding_rules.cc).
  lse_ = Op(OpKind::kLogSumExp, {logits_}, "logits.lse");
  return Op(OpKind::kCrossEntropy, {logits_, labels_, lse_}, transformer_names::kLoss);
}

// The loss gradient (scaled under fp16) back through the head; returns the
// gradient of the last block's output x.
Value* TransformerBuilder::HeadGrad(Value* x) {
  AttrMap ce;
  if (o_.params_dtype == DType::kF16) ce["scale"] = o_.loss_scale;
  Value* dlogits = Op(OpKind::kCrossEntropyGrad, {logits_, labels_, lse_}, Grad("logits"), ce);
  std::vector<Value*> head = Ops(OpKind::kMatMulGrad, {final_norm_, output_weight_, dlogits},
                                 {Grad("final_norm"), Grad(output_weight_->name())},
                                 WeightGradAttrs());
  if (*o_.untie_embeddings_and_output_weights) {
    SetGrad(transformer_names::kOutputLayer, head[1]);
  } else {
    SetGrad(transformer_names::kEmbedding,
            Op(OpKind::kTranspose, {head[1]}, Grad(transformer_names::kEmbedding) + ".output",
               {{"perm", Shape{1, 0}}}));
  }
  return NormGrad(x, "final_norm", head[0], "final_norm");
}

StatusOr<Module> TransformerBuilder::Build() && {
  AddParams();
  AddOptimizerParams();
  AddConstants();
  Value* x = Embed();
  std::vector<BlockActs> acts(static_cast<size_t>(o_.num_layers));
  for (int64_t i = 0; i < o_.num_layers; ++i) x = Block(i, x, acts[static_cast<size_t>(i)]);
  Value* loss = Head(x);
  Value* dx = HeadGrad(x);
  for (int64_t i = o_.num_layers - 1; i >= 0; --i) {
    dx = BlockGrad(i, acts[static_cast<size_t>(i)], dx);
  }
  EmbedGrad(dx);
  std::vector<Value*> updates;
  for (const std::string& n : order_) Optimize(n, updates);
  // Returns grouped by kind: loss, new weights, new masters, new moments.
  std::vector<Value*> returns = {loss};
  const size_t per = IsHalf() ? 4 : 3;
  const std::vector<size_t> kinds =
      IsHalf() ? std::vector<size_t>{3, 0, 1, 2} : std::vector<size_t>{0, 1, 2};
  for (size_t kind : kinds) {
    for (size_t w = 0; w < order_.size(); ++w) returns.push_back(updates[w * per + kind]);
  }
  b_.Return(std::move(returns));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> fn, std::move(b_).Finish());
  Module module;
  module.AddFunction(std::move(fn));
  return module;
}

}  // namespace

StatusOr<Module> BuildTransformerTraining(const TransformerOptions& options) {
  DISTIR_RETURN_IF_ERROR(ValidateTransformerOptions(options));
  return TransformerBuilder(options).Build();
}

}  // namespace distir
