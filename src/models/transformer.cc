// Options of the transformer training step: resolution of the derived
// options, validation, size checks and the parameter count. The builder
// itself is transformer_builder.cc.

#include "models/transformer.h"

#include <cmath>
#include <utility>

#include "models/model_size.h"
#include "support/checked_math.h"

namespace distir {

namespace transformer_names {
std::string LayerPrefix(int64_t layer) { return "layers." + std::to_string(layer) + "."; }
std::string Layer(int64_t layer, const std::string& suffix) { return LayerPrefix(layer) + suffix; }
}  // namespace transformer_names

const char* TransformerVariantName(TransformerVariant variant) {
  return variant == TransformerVariant::kGpt ? "gpt" : "llama";
}

TransformerOptions ResolveTransformerOptions(const TransformerOptions& options) {
  TransformerOptions o = options;
  if (o.ffn_hidden_size == 0) o.ffn_hidden_size = CheckedMul(4, o.hidden_size).value_or(0);
  if (o.num_query_groups == 0) o.num_query_groups = o.num_attention_heads;
  if (o.max_position_embeddings == 0) o.max_position_embeddings = o.seq_length;
  if (!o.untie_embeddings_and_output_weights.has_value()) {
    o.untie_embeddings_and_output_weights = o.variant == TransformerVariant::kLlama;
  }
  if (o.loss_scale == 0) o.loss_scale = o.params_dtype == DType::kF16 ? 65536.0 : 1.0;
  return o;
}

namespace {

StatusBuilder OptionError(const char* option) {
  StatusBuilder error = InvalidArgument();
  error << "transformer option " << option << " ";
  return error;
}

Status CheckSizes(const TransformerOptions& o, std::string& culprit) {
  for (auto [option, value] :
       {std::pair{"num_layers", o.num_layers}, std::pair{"hidden_size", o.hidden_size},
        std::pair{"ffn_hidden_size", o.ffn_hidden_size},
        std::pair{"num_attention_heads", o.num_attention_heads},
        std::pair{"num_query_groups", o.num_query_groups}, std::pair{"seq_length", o.seq_length},
        std::pair{"max_position_embeddings", o.max_position_embeddings},
        std::pair{"vocab_size", o.vocab_size}, std::pair{"batch", o.batch},
        std::pair{"step", o.step}}) {
    culprit = option;
    if (value < 1) return OptionError(option) << "must be >= 1, got " << value;
  }
  return Status::Ok();
}

Status CheckHeads(const TransformerOptions& o, std::string& culprit) {
  culprit = "num_attention_heads";
  if (o.hidden_size % o.num_attention_heads != 0) {
    return OptionError("num_attention_heads")
           << "must divide hidden_size, got hidden_size " << o.hidden_size
           << " and num_attention_heads " << o.num_attention_heads << " (remainder "
           << o.hidden_size % o.num_attention_heads << ")";
  }
  culprit = "num_query_groups";
  if (o.num_attention_heads % o.num_query_groups != 0) {
    return OptionError("num_query_groups")
           << "must divide num_attention_heads, got num_attention_heads " << o.num_attention_heads
           << " and num_query_groups " << o.num_query_groups;
  }
  culprit = "flash_attention";
  if (!o.flash_attention && o.num_query_groups != o.num_attention_heads) {
    return OptionError("flash_attention")
           << "false (unfused attention) needs num_query_groups = num_attention_heads, got "
           << o.num_query_groups << " groups for " << o.num_attention_heads << " heads";
  }
  culprit = "hidden_size";
  const int64_t head_width = o.hidden_size / o.num_attention_heads;
  if (o.variant == TransformerVariant::kLlama && head_width % 2 != 0) {
    return OptionError("hidden_size") << "/ num_attention_heads (the head width) must be even "
                                      << "for RoPE, got " << head_width;
  }
  culprit = "seq_length";
  if (o.variant == TransformerVariant::kGpt && o.seq_length > o.max_position_embeddings) {
    return OptionError("seq_length")
           << "must be <= max_position_embeddings, got seq_length " << o.seq_length
           << " and max_position_embeddings " << o.max_position_embeddings;
  }
  return Status::Ok();
}

// A finite value > 0 (positive) or >= 0, and with `below_one` < 1.
Status CheckRange(const char* option, double value, bool positive, bool below_one,
                  std::string& culprit) {
  culprit = option;
  const bool above = positive ? value > 0 : value >= 0;
  if (std::isfinite(value) && above && (!below_one || value < 1)) return Status::Ok();
  return OptionError(option) << "must be finite and " << (positive ? "> 0" : ">= 0")
                             << (below_one ? " and < 1" : "") << ", got " << value;
}

Status CheckRates(const TransformerOptions& o, std::string& culprit) {
  DISTIR_RETURN_IF_ERROR(CheckRange("norm_epsilon", o.norm_epsilon, true, false, culprit));
  DISTIR_RETURN_IF_ERROR(CheckRange("rotary_base", o.rotary_base, true, false, culprit));
  DISTIR_RETURN_IF_ERROR(CheckRange("lr", o.lr, false, false, culprit));
  DISTIR_RETURN_IF_ERROR(CheckRange("adam_beta1", o.adam_beta1, false, true, culprit));
  DISTIR_RETURN_IF_ERROR(CheckRange("adam_beta2", o.adam_beta2, false, true, culprit));
  DISTIR_RETURN_IF_ERROR(CheckRange("adam_eps", o.adam_eps, true, false, culprit));
  DISTIR_RETURN_IF_ERROR(CheckRange("weight_decay", o.weight_decay, false, false, culprit));
  return CheckRange("loss_scale", o.loss_scale, true, false, culprit);
}

}  // namespace

Status ValidateTransformerOptions(const TransformerOptions& options, std::string* culprit) {
  std::string blamed;
  const TransformerOptions o = ResolveTransformerOptions(options);
  Status status = CheckSizes(o, blamed);
  if (status.ok()) status = CheckHeads(o, blamed);
  if (status.ok() && !IsFloat(o.params_dtype)) {
    blamed = "params_dtype";
    status = OptionError("params_dtype")
             << "must be bf16, f16, f32 or f64, got " << DTypeName(o.params_dtype);
  }
  if (status.ok()) status = CheckRates(o, blamed);
  if (status.ok()) status = CheckTransformerSizes(o, &blamed);
  if (!status.ok() && culprit != nullptr) *culprit = blamed;
  return status;
}

Status CheckTransformerSizes(const TransformerOptions& options, std::string* culprit) {
  const TransformerOptions o = ResolveTransformerOptions(options);
  const std::string dtype(DTypeName(o.params_dtype));
  const int64_t width = ByteWidth(o.params_dtype);
  const int64_t h = o.hidden_size, f = o.ffn_hidden_size, b = o.batch, s = o.seq_length;
  auto per_layer = [&o](int64_t n) { return CheckedMul(n, o.num_layers); };
  ModelSizeCheck check("transformer");
  // Per weight: the compute copy, its gradient, and up to four f32 copies
  // (master, its gradient, two moments), plus the updated values: 16 f32-wide
  // copies bound all of them.
  check.AddTensors(per_layer(64), {h, h}, 4,
                   "a hidden_size x hidden_size weight (with its "
                   "gradient, master copy and Adam moments)",
                   "hidden_size", h);
  check.AddTensors(per_layer(48), {h, f}, 4,
                   "a hidden_size x ffn_hidden_size weight (with its "
                   "gradient, master copy and Adam moments)",
                   "ffn_hidden_size", f);
  check.AddTensors(32, {o.vocab_size, h}, 4,
                   "the vocab_size x hidden_size embedding (with its "
                   "gradient, master copy and Adam moments)",
                   "vocab_size", o.vocab_size);
  check.AddTensors(16, {o.max_position_embeddings, h}, 4, "the position embedding",
                   "max_position_embeddings", o.max_position_embeddings);
  check.AddTensors(per_layer(80), {b, s, h}, width,
                   "a batch x seq_length x hidden_size activation "
                   "of " +
                       dtype,
                   "batch", b);
  check.AddTensors(per_layer(16), {b, s, f}, width,
                   "a batch x seq_length x ffn_hidden_size "
                   "activation of " +
                       dtype,
                   "batch", b);
  check.AddTensors(4, {b, s, o.vocab_size}, width,
                   "the batch x seq_length x vocab_size logits "
                   "of " +
                       dtype,
                   "batch", b);
  // Forward, backward and optimizer: at most 200 ops per layer (docs/models.md).
  const std::optional<int64_t> ops = per_layer(200);
  return check.Finish(ops ? CheckedAdd(*ops, 200) : std::nullopt, "num_layers", o.num_layers,
                      culprit);
}

int64_t TransformerParameterCount(const TransformerOptions& options) {
  const TransformerOptions o = ResolveTransformerOptions(options);
  const bool gpt = o.variant == TransformerVariant::kGpt;
  const int64_t h = o.hidden_size, f = o.ffn_hidden_size;
  const int64_t d = h / o.num_attention_heads;
  const int64_t qkv = (o.num_attention_heads + 2 * o.num_query_groups) * d;
  const int64_t attention = h * qkv + o.num_attention_heads * d * h + (gpt ? qkv + h : 0);
  const int64_t mlp = gpt ? 2 * h * f + f + h : 3 * h * f;
  const int64_t norms = gpt ? 4 * h : 2 * h;
  const int64_t embeddings = o.vocab_size * h + (gpt ? o.max_position_embeddings * h : 0);
  const int64_t head =
      (gpt ? 2 * h : h) + (*o.untie_embeddings_and_output_weights ? h * o.vocab_size : 0);
  return embeddings + o.num_layers * (attention + mlp + norms) + head;
}

}  // namespace distir
