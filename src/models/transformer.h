// Transformer training steps: GPT (learned positions, LayerNorm, GELU) and
// LLaMA (RoPE, RMSNorm, SwiGLU, grouped-query attention, untied output layer).
//
// BuildTransformerTraining() writes one training step as a DistIR function,
// @transformer, op by op: the forward pass (embedding, pre-norm blocks with
// fused QKV projection and FlashAttention, final norm, LM head, CrossEntropy),
// the backward pass (MatMulGrad, the norm gradients, GeluGrad/SigmoidGrad,
// FlashAttentionGrad, EmbeddingGrad; the tied embedding's two gradients
// summed) and the optimizer (Adam or AdamW), with parameters kept as
// Megatron-LM keeps them in mixed precision: bf16 or fp16 weights for compute,
// fp32 master weights and fp32 Adam moments, fp16 with loss scaling. Options
// use Megatron's argument names. Weight and value names are regular (a
// contract with the sharding rules and the memory breakdown); docs/models.md
// lists them. Named sizes live in model_zoo.h. This is the sequential
// program: it is distributed by the sharding path (sharding/grid.h).

#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/device.h"
#include "ir/dtype.h"
#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

enum class TransformerVariant {
  kGpt,    ///< learned positions, LayerNorm with bias, biased linears, GELU (tanh) MLP, tied head
  kLlama,  ///< RoPE, RMSNorm, no biases, SwiGLU MLP, grouped-query attention, untied head
};

enum class TransformerOptimizer {
  kAdam,   ///< weight decay as L2: grad + weight_decay * w (torch.optim.Adam)
  kAdamW,  ///< decoupled: w * (1 - lr * weight_decay) before the Adam step (torch.optim.AdamW)
};

/// Options of BuildTransformerTraining(), named as Megatron-LM's arguments.
/// The defaults are a small GPT; 0 in an option marked "0: ..." means the
/// derived value given there.
struct TransformerOptions {
  TransformerVariant variant = TransformerVariant::kGpt;
  int64_t num_layers = 2;               ///< transformer blocks; >= 1
  int64_t hidden_size = 64;             ///< H; >= 1
  int64_t ffn_hidden_size = 0;          ///< F, the MLP width; 0: 4 H
  int64_t num_attention_heads = 4;      ///< h; >= 1, divides H (head width d = H / h)
  int64_t num_query_groups = 0;         ///< g key/value heads; 0: h; divides h
  int64_t seq_length = 16;              ///< s tokens per sequence; >= 1
  int64_t max_position_embeddings = 0;  ///< rows of the GPT position table; 0: seq_length
  int64_t vocab_size = 128;             ///< V; >= 1
  int64_t batch = 1;                    ///< sequences per step (the global batch); >= 1
  /// Compute dtype of weights and activations: bf16 or f16 (mixed precision:
  /// f32 master weights), or f32/f64 (the weights are the master weights).
  DType params_dtype = DType::kBF16;
  /// Untied output layer: a separate output_layer.weight [H, V]. Unset: true
  /// for LLaMA, false for GPT (the LM head reuses embedding.weight).
  std::optional<bool> untie_embeddings_and_output_weights;
  /// Attention as one fused FlashAttention op (Megatron's --use-flash-attn),
  /// or as Megatron's unfused core attention: Q Kᵀ, the causal mask, softmax
  /// and · V as separate kernels, the b·h·s·s scores in memory (Megatron's
  /// default, and what its 2021-2022 runs used). Unfused needs
  /// num_query_groups = num_attention_heads.
  bool flash_attention = true;
  /// Megatron's gradient accumulation fusion (on by default there;
  /// --no-gradient-accumulation-fusion): with bf16/f16 the linear layers'
  /// weight-gradient GEMMs write f32 gradients and accumulate them over the
  /// microbatches themselves (ir/gemm_accumulation.h). Off: each gradient is
  /// written in the compute dtype, cast to f32 and added. No effect in f32/f64.
  bool gradient_accumulation_fusion = true;
  double norm_epsilon = 1e-5;  ///< of every LayerNorm/RMSNorm; finite and > 0
  double rotary_base = 10000;  ///< RoPE's theta (LLaMA); > 0
  TransformerOptimizer optimizer = TransformerOptimizer::kAdamW;
  double lr = 1e-4;           ///< finite and >= 0
  double adam_beta1 = 0.9;    ///< in [0, 1)
  double adam_beta2 = 0.999;  ///< in [0, 1)
  double adam_eps = 1e-8;     ///< finite and > 0
  /// Applied to matrices (embeddings, linear weights), not to biases or norm
  /// scales, as Megatron does. Finite and >= 0.
  double weight_decay = 0.01;
  int64_t step = 1;  ///< Adam's step t (bias correction); >= 1
  /// fp16 only: the loss gradient is multiplied by it and the f32 gradients
  /// divided by it (a static loss scale). 0: 65536. Finite and > 0 otherwise.
  double loss_scale = 0;
  /// Device of every parameter and Constant.
  DeviceId device = DeviceId(0);
};

/// Builds one training step as a module holding @transformer.
///
/// Parameters, in order: tokens [batch, s] i64, labels [batch, s] i64, then
/// every weight in the compute dtype (docs/models.md lists the names and
/// shapes), then, with bf16/f16, each weight's f32 master copy
/// (`<weight>.master`), then the f32 Adam moments of each (`<weight>.exp_avg`,
/// then all `<weight>.exp_avg_sq`). Returns the loss (rank 0, f32; f64 when
/// params_dtype is f64), then `<weight>.new` for every weight, `<weight>.master.new`
/// (mixed precision), `<weight>.exp_avg.new` and `<weight>.exp_avg_sq.new`.
/// Weight gradients are `<weight>.grad` in the compute dtype (f32 for the
/// linear weights under gradient_accumulation_fusion). Result types are
/// left unknown: run InferTypes. The function verifies.
///
/// Errors: InvalidArgument naming the option, as ValidateTransformerOptions.
StatusOr<Module> BuildTransformerTraining(const TransformerOptions& options);

/// Every check BuildTransformerTraining() makes before it builds: sizes >= 1,
/// num_attention_heads divides hidden_size, num_query_groups divides
/// num_attention_heads, the head width even for RoPE, seq_length <=
/// max_position_embeddings for GPT, params_dtype a float type, epsilon, rates
/// and betas in range, and CheckTransformerSizes. On an error `*culprit`
/// (when not null) names the option blamed.
Status ValidateTransformerOptions(const TransformerOptions& options,
                                  std::string* culprit = nullptr);

/// Checks that the model's tensors fit (models/model_size.h). REQUIRES: every
/// size >= 1. InvalidArgument naming the option otherwise.
Status CheckTransformerSizes(const TransformerOptions& options, std::string* culprit = nullptr);

/// Weight elements of the model (tied embeddings counted once): embeddings
/// V H (+ P H for GPT), per layer the QKV (H (h + 2g) d), output (h d H) and
/// MLP (2 H F GPT, 3 H F LLaMA) matrices, norms and (GPT) biases, the final
/// norm and, untied, H V. REQUIRES: the options validate.
int64_t TransformerParameterCount(const TransformerOptions& options);

/// The options with every "0: derived" option resolved (ffn_hidden_size,
/// num_query_groups, max_position_embeddings, untie, loss_scale).
TransformerOptions ResolveTransformerOptions(const TransformerOptions& options);

/// The variant's name, "gpt" or "llama".
const char* TransformerVariantName(TransformerVariant variant);

/// Names used by the transformer builder; `layer` is 0-based.
namespace transformer_names {
inline constexpr char kTokens[] = "tokens";
inline constexpr char kLabels[] = "labels";
inline constexpr char kLoss[] = "loss";
inline constexpr char kEmbedding[] = "embedding.weight";
inline constexpr char kPositionEmbedding[] = "position_embedding.weight";
inline constexpr char kFinalNormWeight[] = "final_norm.weight";
inline constexpr char kFinalNormBias[] = "final_norm.bias";
inline constexpr char kOutputLayer[] = "output_layer.weight";
/// Suffixes: a weight's gradient, master copy, Adam moments and updated value.
inline constexpr char kGradSuffix[] = ".grad";
inline constexpr char kMasterSuffix[] = ".master";
inline constexpr char kExpAvgSuffix[] = ".exp_avg";
inline constexpr char kExpAvgSqSuffix[] = ".exp_avg_sq";
inline constexpr char kNewSuffix[] = ".new";
/// "layers.3.": the prefix of every weight and value of block 3.
std::string LayerPrefix(int64_t layer);
/// LayerPrefix(layer) + suffix, e.g. Layer(3, "attention.qkv.weight").
std::string Layer(int64_t layer, const std::string& suffix);
}  // namespace transformer_names

/// The pipeline layers of a transformer (sharding/stages.h): `layers.{i}.*`.
inline constexpr const char* kTransformerLayerPattern = "^layers\\.([0-9]+)\\.";

}  // namespace distir
