#include "models/model_zoo.h"

#include <algorithm>
#include <cctype>

#include "support/str_util.h"

namespace distir {
namespace {

ModelSpec Mlp(std::string name, int64_t n_layer, int64_t d_model, int64_t batch, DType dtype,
              double paper_size_gb) {
  ModelSpec spec;
  spec.name = std::move(name);
  spec.family = ModelFamily::kMlpTraining;
  spec.mlp.n_layer = n_layer;
  spec.mlp.d_model = d_model;
  spec.mlp.batch = batch;
  spec.mlp.dtype = dtype;
  spec.paper_size_gb = paper_size_gb;
  return spec;
}

ModelSpec Gpt(std::string name, int64_t n_layer, int64_t d_model, int64_t n_head,
              double paper_size_gb) {
  ModelSpec spec;
  spec.name = std::move(name);
  spec.family = ModelFamily::kGpt2Inference;
  spec.gpt.n_layer = n_layer;
  spec.gpt.d_model = d_model;
  spec.gpt.n_head = n_head;
  // The original's GPT-2 grid fed input ids of shape (batch, 1, 8): 8 tokens.
  spec.gpt.seq_len = 8;
  spec.gpt.batch = 1024;
  spec.gpt.dtype = DType::kF16;
  spec.paper_size_gb = paper_size_gb;
  return spec;
}

// Small enough for the reference executor; every D, T, P with D*T*P <= 8
// divides the layers, the width and the heads, and the batch takes D*K <= 16.
ModelSpec TinyGpt() {
  ModelSpec spec = Gpt("gpt2-tiny", 8, 32, 8, 0);
  spec.gpt.vocab = 64;
  spec.gpt.n_ctx = 16;
  spec.gpt.batch = 16;
  spec.gpt.dtype = DType::kF32;
  return spec;
}

// A transformer-training size at batch 1 in bf16 (Megatron's mixed precision).
ModelSpec Transformer(std::string name, TransformerVariant variant, int64_t layers, int64_t hidden,
                      int64_t heads, int64_t seq, int64_t vocab) {
  ModelSpec spec;
  spec.name = std::move(name);
  spec.family = ModelFamily::kTransformerTraining;
  TransformerOptions& t = spec.transformer;
  t.variant = variant;
  t.num_layers = layers;
  t.hidden_size = hidden;
  t.num_attention_heads = heads;
  t.seq_length = seq;
  t.max_position_embeddings = seq;
  t.vocab_size = vocab;
  t.batch = 1;
  t.params_dtype = DType::kBF16;
  return spec;
}

// GPT-3 sizes as Megatron-LM trains them (Narayanan et al. 2021, Table 1;
// Korthikanti et al. 2022, Table 3): sequence 2048, vocabulary 51200 (GPT-2's
// 50257 padded), ffn 4 H.
ModelSpec Gpt3(std::string name, int64_t layers, int64_t hidden, int64_t heads) {
  return Transformer(std::move(name), TransformerVariant::kGpt, layers, hidden, heads, 2048, 51200);
}

// LLaMA (Touvron et al. 2023, Table 2; LLaMA 2 for 70B: 8 key/value groups,
// sequence 4096): SwiGLU width as in the released configs, vocabulary 32000.
ModelSpec Llama(std::string name, int64_t layers, int64_t hidden, int64_t heads, int64_t groups,
                int64_t ffn, int64_t seq) {
  ModelSpec spec =
      Transformer(std::move(name), TransformerVariant::kLlama, layers, hidden, heads, seq, 32000);
  spec.transformer.num_query_groups = groups;
  spec.transformer.ffn_hidden_size = ffn;
  return spec;
}

// Tiny training steps for the reference executor, f32: layers 8, hidden 32
// or 64, heads 8 or 16 and 8 query groups, ffn 128, batch 16, so that every
// D, T, P with D*T*P <= 8 divides them, as for the other tiny models.
ModelSpec TinyTransformer(std::string name, TransformerVariant variant, int64_t hidden,
                          int64_t heads, int64_t groups) {
  ModelSpec spec = Transformer(std::move(name), variant, 8, hidden, heads, 16, 64);
  spec.transformer.num_query_groups = groups;
  spec.transformer.ffn_hidden_size = 128;
  spec.transformer.batch = 16;
  spec.transformer.params_dtype = DType::kF32;
  return spec;
}

std::vector<ModelSpec> TransformerSizes() {
  ModelSpec llama_7b_2l = Llama("llama-7b-2l", 2, 4096, 32, 32, 11008, 2048);
  return {
      TinyTransformer("gpt-tiny", TransformerVariant::kGpt, 32, 8, 8),
      TinyTransformer("llama-tiny", TransformerVariant::kLlama, 64, 16, 8),
      Gpt3("gpt3-1.3b", 24, 2048, 16),
      Gpt3("gpt3-22b", 48, 6144, 64),
      Gpt3("gpt3-175b", 96, 12288, 96),
      Gpt3("gpt3-530b", 105, 20480, 128),
      Gpt3("gpt3-1t", 128, 25600, 160),
      // The paper's GPT-2 sizes (Gpt() below: inference only) as training steps: GPT
      // blocks (learned positions, LayerNorm, GELU, biases, tied embedding) at GPT-2's
      // sequence 1024 and 50257-token vocabulary, bf16 with f32 masters and AdamW.
      Transformer("gpt2-1.6b-train", TransformerVariant::kGpt, 24, 2048, 16, 1024, 50257),
      Transformer("gpt2-13b-train", TransformerVariant::kGpt, 40, 5140, 20, 1024, 50257),
      Transformer("gpt2-175b-train", TransformerVariant::kGpt, 96, 12288, 96, 1024, 50257),
      Llama("llama-7b", 32, 4096, 32, 32, 11008, 2048),
      // LLaMA-7B's shapes with 2 of its 32 layers (single-GPU studies).
      llama_7b_2l,
      Llama("llama-13b", 40, 5120, 40, 40, 13824, 2048),
      Llama("llama-70b", 80, 8192, 64, 8, 28672, 4096),
  };
}

std::vector<ModelSpec> MakeZoo() {
  // Paper Table 1 (sizes at fp16) and, for the MLP batch, Figure 5's fixed
  // batch sizes. n_head divides d_model: 2048 = 16 x 128 and 12288 = 96 x 128 as
  // in GPT-3; 5140 = 2^2 x 5 x 257 has no 128-wide split, so 20 heads of 257.
  std::vector<ModelSpec> zoo = {
      Mlp("mlp-tiny", 8, 16, 32, DType::kF32, 0),
      TinyGpt(),
      Mlp("mlp-1b", 16, 8192, 65536, DType::kF16, 2.2),
      Mlp("mlp-17b", 64, 16384, 65536, DType::kF16, 34.4),
      Mlp("mlp-103b", 96, 32768, 256, DType::kF16, 206.2),
      Gpt("gpt2-1.6b", 24, 2048, 16, 3.2),
      Gpt("gpt2-13b", 40, 5140, 20, 25.8),
      Gpt("gpt2-175b", 96, 12288, 96, 394.4),
  };
  for (ModelSpec& spec : TransformerSizes()) zoo.push_back(std::move(spec));
  return zoo;
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Adam's moments m<i> and v<i> (mlp.h); a transformer's moments and f32
// master weights (transformer.h).
bool IsOptimizerStateName(const std::string& name) {
  namespace tn = transformer_names;
  if (EndsWith(name, tn::kExpAvgSuffix) || EndsWith(name, tn::kExpAvgSqSuffix) ||
      EndsWith(name, tn::kMasterSuffix)) {
    return true;
  }
  if (name.size() < 2 || (name[0] != 'm' && name[0] != 'v')) return false;
  return std::all_of(name.begin() + 1, name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

bool IsDataName(const std::string& name) {
  return name == mlp_names::kInput || name == mlp_names::kLabels ||
         name == gpt_names::kInputIds || name == transformer_names::kTokens ||
         name == transformer_names::kLabels;
}

}  // namespace

const std::vector<ModelSpec>& ModelZoo() {
  static const std::vector<ModelSpec> zoo = MakeZoo();
  return zoo;
}

std::string KnownModelNames() {
  std::vector<std::string> names;
  for (const ModelSpec& spec : ModelZoo()) names.push_back(spec.name);
  return Join(names, ", ");
}

StatusOr<ModelSpec> LookupModel(std::string_view name) {
  for (const ModelSpec& spec : ModelZoo()) {
    if (spec.name == name) return spec;
  }
  return NotFound() << "unknown model '" << name << "': known models are " << KnownModelNames();
}

ModelSpec WithBatch(ModelSpec spec, int64_t batch) {
  spec.mlp.batch = batch;
  spec.gpt.batch = batch;
  spec.transformer.batch = batch;
  return spec;
}

int64_t BatchOf(const ModelSpec& spec) {
  switch (spec.family) {
    case ModelFamily::kMlpTraining:
      return spec.mlp.batch;
    case ModelFamily::kGpt2Inference:
      return spec.gpt.batch;
    case ModelFamily::kTransformerTraining:
      return spec.transformer.batch;
  }
  return spec.gpt.batch;
}

int64_t ModelLayers(const ModelSpec& spec) {
  switch (spec.family) {
    case ModelFamily::kMlpTraining:
      return spec.mlp.n_layer;
    case ModelFamily::kGpt2Inference:
      return spec.gpt.n_layer;
    case ModelFamily::kTransformerTraining:
      return spec.transformer.num_layers;
  }
  return 0;
}

Status CheckModelSize(const ModelSpec& spec, std::string* culprit) {
  if (spec.family == ModelFamily::kMlpTraining) return CheckMlpSizes(spec.mlp, culprit);
  if (spec.family == ModelFamily::kTransformerTraining) {
    return CheckTransformerSizes(spec.transformer, culprit);
  }
  return CheckGptSizes(spec.gpt, culprit);
}

Status ValidateModel(const ModelSpec& spec, std::string* culprit) {
  if (spec.family == ModelFamily::kMlpTraining) return ValidateMlpOptions(spec.mlp, culprit);
  if (spec.family == ModelFamily::kTransformerTraining) {
    return ValidateTransformerOptions(spec.transformer, culprit);
  }
  return ValidateGptOptions(spec.gpt, culprit);
}

StatusOr<Module> BuildModel(const ModelSpec& spec) {
  if (spec.family == ModelFamily::kMlpTraining) return BuildMlpTraining(spec.mlp);
  if (spec.family == ModelFamily::kTransformerTraining) {
    return BuildTransformerTraining(spec.transformer);
  }
  return BuildGpt2Inference(spec.gpt);
}

int64_t ParameterCount(const ModelSpec& spec) {
  if (spec.family == ModelFamily::kMlpTraining) return MlpParameterCount(spec.mlp);
  if (spec.family == ModelFamily::kTransformerTraining) {
    return TransformerParameterCount(spec.transformer);
  }
  return GptParameterCount(spec.gpt);
}

int64_t CountWeightElements(const Function& fn) {
  int64_t total = 0;
  for (const auto& param : fn.params()) {
    if (IsDataName(param->name()) || IsOptimizerStateName(param->name())) continue;
    if (!param->type().is_tensor()) continue;
    total += param->type().NumElements();
  }
  return total;
}

}  // namespace distir
