// Named model sizes: the paper's Table 1 workloads plus tiny sizes for tests.
//
// A ModelSpec is a name, a family and the builder options of that family
// (mlp.h, gpt.h). The paper's sizes are fp16; the tiny ones are f32, small
// enough for the reference executor, and divisible enough that every D, T, P
// with D*T*P <= 8 is a valid request. The CLI (`distir simulate --model NAME
// --batch N`) and the grid search start here: look a spec up, set the batch,
// build. Parameter counts, and how they compare with the paper's Table 1, are
// in docs/models.md.

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/function.h"
#include "models/gpt.h"
#include "models/mlp.h"
#include "models/transformer.h"
#include "support/status_or.h"

namespace distir {

enum class ModelFamily {
  kMlpTraining,    ///< built by BuildMlpTraining(mlp)
  kGpt2Inference,  ///< built by BuildGpt2Inference(gpt)
  /// Built by BuildTransformerTraining(transformer): GPT-3 and LLaMA training
  /// steps.
  kTransformerTraining,
};

/// A named model. Only the options of `family` are meaningful.
struct ModelSpec {
  std::string name;  ///< e.g. "mlp-1b"
  ModelFamily family = ModelFamily::kMlpTraining;
  MlpOptions mlp;
  GptOptions gpt;
  TransformerOptions transformer;
  /// Model size in GB (1e9 bytes) at fp16 from the paper's Table 1; 0 when the
  /// paper has no such model (the tiny sizes).
  double paper_size_gb = 0;
};

/// Every known model: the tiny sizes, the paper's Table 1, then the
/// transformer-training sizes (tiny, GPT-3 as in Megatron-LM's papers, LLaMA).
const std::vector<ModelSpec>& ModelZoo();

/// Comma-separated names of ModelZoo(), in order.
std::string KnownModelNames();

/// The spec named `name`. NotFound listing the known names otherwise.
StatusOr<ModelSpec> LookupModel(std::string_view name);

/// `spec` with its global batch set (MLP: rows of x; GPT-2 and transformers: sequences).
/// The builder rejects a batch < 1.
ModelSpec WithBatch(ModelSpec spec, int64_t batch);

/// The spec's global batch.
int64_t BatchOf(const ModelSpec& spec);

/// L, the spec's layers: n_layer (MLP, GPT-2) or num_layers (transformer
/// training), read from the family's options as they are; the spec the search
/// makes for an imported model only names it (search/experiment.h), so its L
/// is GptOptions' default, not the file's.
int64_t ModelLayers(const ModelSpec& spec);

/// CheckMlpSizes or CheckGptSizes of the spec's family: its sizes, at its
/// batch, are representable. `*culprit` (when not null) names the option blamed.
Status CheckModelSize(const ModelSpec& spec, std::string* culprit = nullptr);

/// ValidateMlpOptions or ValidateGptOptions of the spec's family: every check
/// BuildModel makes before it builds, at the spec's batch. `*culprit` (when not
/// null) names the option blamed.
Status ValidateModel(const ModelSpec& spec, std::string* culprit = nullptr);

/// Builds the spec's module (BuildMlpTraining or BuildGpt2Inference).
StatusOr<Module> BuildModel(const ModelSpec& spec);

/// Weight elements of the spec, from the closed forms MlpParameterCount and
/// GptParameterCount.
int64_t ParameterCount(const ModelSpec& spec);

/// Weight elements of a built model function: the elements of every tensor
/// parameter except the data inputs (x, y, input_ids, tokens, labels), the
/// Adam state (m<i>, v<i>, <weight>.exp_avg, <weight>.exp_avg_sq) and the f32
/// master copies (<weight>.master). REQUIRES: `fn` was built by this library
/// (the rule is by name).
int64_t CountWeightElements(const Function& fn);

}  // namespace distir
