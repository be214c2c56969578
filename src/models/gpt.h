// The GPT-2 inference workload of the paper (Table 1: GPT-2 1.6B, 13B, 175B).
//
// BuildGpt2Inference() produces the forward pass of a GPT-2 language model as
// a DistIR module, written op by op the way the HuggingFace implementation (and
// the ONNX export the original DistIR resized) computes it: token and position
// embeddings, n_layer pre-LayerNorm transformer blocks with causal multi-head
// self-attention and a GELU MLP, a final LayerNorm and an LM head tied to the
// token embedding. Weight parameters carry HuggingFace names (h.3.attn.c_attn.weight)
// and every value a name derived from the module that computes it
// (h.3.attn.probs), so that the tensor- and pipeline-parallel transforms can find
// blocks, projections and weights by name; docs/models.md lists them all.
// Named sizes live in model_zoo.h.

#pragma once

#include <cstdint>
#include <string>

#include "ir/device.h"
#include "ir/dtype.h"
#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

/// Options for BuildGpt2Inference(). The defaults are GPT-2 small (124M
/// parameters) at batch 1 and an 8-token sequence.
struct GptOptions {
  int64_t batch = 1;          ///< sequences per batch; >= 1
  int64_t seq_len = 8;        ///< tokens per sequence; in [1, n_ctx]
  int64_t vocab = 50257;      ///< vocabulary size (rows of wte); >= 1
  int64_t n_ctx = 1024;       ///< maximum positions (rows of wpe); >= 1
  int64_t d_model = 768;      ///< embedding width d; >= 1
  int64_t n_head = 12;        ///< attention heads; >= 1 and divides d_model
  int64_t n_layer = 12;       ///< transformer blocks; >= 1
  DType dtype = DType::kF32;  ///< of weights and activations; a float type (ids are i64)
  /// Tied LM head (GPT-2's choice): logits = MatMul(ln_f, Transpose(wte.weight)).
  /// Untied: an extra [d, vocab] parameter lm_head.weight and no Transpose.
  bool tied_lm_head = true;
  double layer_norm_epsilon = 1e-5;  ///< > 0
  /// Megatron's fused-QKV layout: c_attn's 3d output columns are grouped by
  /// head, [n_head, 3, head_dim] (head h's q, k, v side by side), instead of
  /// HuggingFace's [3, d] (all q, then all k, then all v). The block then
  /// reshapes qkv to [b, s, n_head, 3, head_dim] and splits the 3, so that a
  /// column-parallel c_attn keeps whole heads on each shard and the split is
  /// local (golden G34). Same shapes and FLOPs; two more ops per block
  /// (kGroupedBlockOps). The sharding path builds GPT-2 this way.
  bool grouped_qkv = false;
  /// Device of every parameter and Constant, d0 by default; DeviceId() gives a
  /// device-generic function.
  DeviceId device = DeviceId(0);
};

/// Builds the GPT-2 forward pass as a module holding one function, @gpt2.
///
/// Parameters, in order: input_ids [batch, seq_len] i64, wte.weight [vocab, d],
/// wpe.weight [n_ctx, d], for each block i the twelve weights of h.{i}. (ln_1
/// weight/bias [d]; attn.c_attn weight [d, 3d] / bias [3d]; attn.c_proj weight
/// [d, d] / bias [d]; ln_2 weight/bias [d]; mlp.c_fc weight [d, 4d] / bias [4d];
/// mlp.c_proj weight [4d, d] / bias [d]), ln_f.weight, ln_f.bias [d], and when
/// untied lm_head.weight [d, vocab]. Returns logits [batch, seq_len, vocab].
///
/// Ops: 4 for the embeddings, 34 per block (kBlockOps; the op sequence is in
/// docs/models.md), and 3 (tied) or 2 (untied) for ln_f and the LM head. Each
/// block is a contiguous op range whose only inputs are the previous block's
/// output (or `embed`) and its own weights: its Constants (reshape targets,
/// scale, causal mask) are its own. Result types are left unknown: run
/// InferTypes (interp/infer_types.h). The function verifies.
///
/// Errors: InvalidArgument naming the option when a size is < 1, seq_len >
/// n_ctx, n_head does not divide d_model, dtype is not a float type or the
/// epsilon is not > 0, or the sizes are too large (CheckGptSizes).
StatusOr<Module> BuildGpt2Inference(const GptOptions& options);

/// Every check BuildGpt2Inference() makes of `options` before it builds (the
/// errors listed there), without building. On an error, `*culprit` (when not
/// null) names the option blamed: the one out of range, "seq_len" when it
/// exceeds n_ctx, "n_head" when it does not divide d_model, "dtype",
/// "layer_norm_epsilon", or CheckGptSizes' culprit.
Status ValidateGptOptions(const GptOptions& options, std::string* culprit = nullptr);

/// Checks that the model's sizes are representable (models/model_size.h): every
/// tensor, and all of them together, at most kMaxModelBytes, and at most
/// kMaxModelOps ops. InvalidArgument naming the option to blame otherwise (also
/// stored in `*culprit` when not null: "d_model", "vocab", "n_ctx", "batch" or
/// "n_layer"). BuildGpt2Inference() checks this too. REQUIRES: every size >= 1.
Status CheckGptSizes(const GptOptions& options, std::string* culprit = nullptr);

/// Weight elements of the model (input_ids excluded; wte counted once when tied):
/// (vocab + n_ctx) d + n_layer (12 d^2 + 13 d) + 2 d [+ d vocab when untied].
int64_t GptParameterCount(const GptOptions& options);

/// Ops per transformer block.
inline constexpr int kBlockOps = 34;
/// Ops per transformer block with grouped_qkv: a target Constant and a Reshape more.
inline constexpr int kGroupedBlockOps = kBlockOps + 2;

/// Ops of the tied head: ln_f, then the tokens flattened (a target Constant and
/// a Reshape), the Gemm against the embedding table read transposed
/// (transB = 1), and the logits reshaped back (a Constant and a Reshape).
inline constexpr int kTiedHeadOps = 6;

/// Where GPT-2's data and tensor parallelism go, as parameter rules for a
/// mesh with axes dp and tp (sharding/annotate.h), for a model built with
/// grouped_qkv: input_ids split their batch over dp; in every block c_attn
/// and mlp.c_fc are column-parallel (weights and biases), attn.c_proj and
/// mlp.c_proj row-parallel (Megatron); the embedding table split by rows over
/// tp (Megatron's vocabulary-parallel embedding), so that the tied LM head's
/// GEMM, which reads the table transposed, gives logits split by vocabulary;
/// position embeddings and LayerNorms replicated.
std::vector<std::string> GptShardingRules();

/// GPT-2's layers for pipeline stages (sharding/stages.h): the weights of
/// block i, `h.{i}.*`, are layer i; embeddings, ln_f and the LM head belong to
/// no layer and run on the first and last stage.
inline constexpr const char* kGptLayerPattern = "^h\\.([0-9]+)\\.";

/// Names used by the GPT-2 builder; `layer` is 0-based.
namespace gpt_names {
inline constexpr char kInputIds[] = "input_ids";
inline constexpr char kTokenEmbedding[] = "wte.weight";
inline constexpr char kPositionEmbedding[] = "wpe.weight";
inline constexpr char kFinalNormWeight[] = "ln_f.weight";
inline constexpr char kFinalNormBias[] = "ln_f.bias";
inline constexpr char kLmHeadWeight[] = "lm_head.weight";
/// The value the blocks read first: token plus position embeddings.
inline constexpr char kEmbeddings[] = "embed";
inline constexpr char kLogits[] = "logits";
/// "h.3." : the prefix of every weight and value of block 3.
std::string BlockPrefix(int64_t layer);
/// BlockPrefix(layer) + suffix, e.g. Block(3, "attn.c_attn.weight").
std::string Block(int64_t layer, const std::string& suffix);
/// "h.3.out": the block's output, the next block's input.
std::string BlockOutput(int64_t layer);
}  // namespace gpt_names

}  // namespace distir
