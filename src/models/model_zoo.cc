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

std::vector<ModelSpec> MakeZoo() {
  // Paper Table 1 (sizes at fp16) and, for the MLP batch, Figure 5's fixed
  // batch sizes. n_head divides d_model: 2048 = 16 x 128 and 12288 = 96 x 128 as
  // in GPT-3; 5140 = 2^2 x 5 x 257 has no 128-wide split, so 20 heads of 257.
  return {
      Mlp("mlp-tiny", 8, 16, 32, DType::kF32, 0),
      TinyGpt(),
      Mlp("mlp-1b", 16, 8192, 65536, DType::kF16, 2.2),
      Mlp("mlp-17b", 64, 16384, 65536, DType::kF16, 34.4),
      Mlp("mlp-103b", 96, 32768, 256, DType::kF16, 206.2),
      Gpt("gpt2-1.6b", 24, 2048, 16, 3.2),
      Gpt("gpt2-13b", 40, 5140, 20, 25.8),
      Gpt("gpt2-175b", 96, 12288, 96, 394.4),
  };
}

// Adam's moments m<i> and v<i> (mlp.h).
bool IsOptimizerStateName(const std::string& name) {
  if (name.size() < 2 || (name[0] != 'm' && name[0] != 'v')) return false;
  return std::all_of(name.begin() + 1, name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

bool IsDataName(const std::string& name) {
  return name == mlp_names::kInput || name == mlp_names::kLabels || name == gpt_names::kInputIds;
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
  return spec;
}

int64_t BatchOf(const ModelSpec& spec) {
  return spec.family == ModelFamily::kMlpTraining ? spec.mlp.batch : spec.gpt.batch;
}

Status CheckModelSize(const ModelSpec& spec, std::string* culprit) {
  if (spec.family == ModelFamily::kMlpTraining) return CheckMlpSizes(spec.mlp, culprit);
  return CheckGptSizes(spec.gpt, culprit);
}

Status ValidateModel(const ModelSpec& spec, std::string* culprit) {
  if (spec.family == ModelFamily::kMlpTraining) return ValidateMlpOptions(spec.mlp, culprit);
  return ValidateGptOptions(spec.gpt, culprit);
}

StatusOr<Module> BuildModel(const ModelSpec& spec) {
  if (spec.family == ModelFamily::kMlpTraining) return BuildMlpTraining(spec.mlp);
  return BuildGpt2Inference(spec.gpt);
}

int64_t ParameterCount(const ModelSpec& spec) {
  if (spec.family == ModelFamily::kMlpTraining) return MlpParameterCount(spec.mlp);
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
