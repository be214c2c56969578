// Experiment files: the YAML a user keeps and submits (docs/configs.md).
//
//   name: gpt2-1.6b-dgx2
//   model: gpt2-1.6b                  # or {name: mlp-tiny, n_layer: 4, d_model: 64, ...}
//                                     # or {onnx: data/onnx/gpt2-small.onnx, inputs: {input_ids:
//                                     [B, 128]}}, or {distir: mlp.distir, inputs: {x: [B, 16]}}
//   hardware: ../hardware/dgx2-v100.yaml   # relative to this file, or an inline map
//   world_size: 16
//   space:
//     batch: {pow2: [7, 20]}          # 2^7 .. 2^20; or a list, or one number
//     dp: all                         # every power of two up to world_size
//     tp: all
//     pp: all
//     microbatches: {pow2: [1, 7]}    # used when P > 1; P = 1 runs K = 1
//     virtual_stages: [1, 2]          # or num_layers_per_virtual_pipeline_stage (Megatron's N)
//     micro_batch: [1, 2]             # instead of microbatches: K = batch / (D micro_batch)
//     schedule: [1f1b]
//     recompute: [none, full, selective]   # or true / false
//     zero: [0]
//   constraints: {world: equal}       # D*T*P == world_size (or at_most)
//   memory_limit: 32 GiB              # default: the profile's device capacity
//   traces: 3                         # traces kept for the best configurations
//   output: results.h5
//
// Every error names the file, line and column.

#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/model_sharding.h"
#include "models/model_zoo.h"
#include "search/megatron_knobs.h"
#include "sim/hardware_profile.h"
#include "support/status_or.h"
#include "transforms/parallel_options.h"

namespace distir::search {

/// One mesh shape of the experiment's `mesh:` key: the degrees it gives.
struct MeshShape {
  int64_t dp = 1, tp = 1, pp = 1;
  bool operator==(const MeshShape&) const = default;
};

struct SearchSpace {
  std::vector<int64_t> batch;
  std::vector<int64_t> dp, tp, pp;  ///< empty when `meshes` gives the shapes
  /// From `mesh:` (one shape or a list): the (D, T, P) to search instead of
  /// the product of dp, tp and pp.
  std::vector<MeshShape> meshes;
  std::vector<int64_t> microbatches = {1};
  /// space.micro_batch (Megatron's --micro-batch-size): when not empty, K is
  /// batch / (D micro_batch) for each value instead of `microbatches`.
  std::vector<int64_t> micro_batch;
  /// v, interleaved 1F1B model chunks per stage (P > 1 only).
  std::vector<int64_t> virtual_stages = {1};
  /// space.num_layers_per_virtual_pipeline_stage (Megatron's N): when not
  /// empty, v is L / (P N) for each value instead of `virtual_stages`.
  std::vector<int64_t> chunk_layers;
  std::vector<PipelineSchedule> schedule = {PipelineSchedule::k1F1B};
  std::vector<RecomputeKind> recompute = {RecomputeKind::kNone};
  std::vector<int> zero = {0};
  /// space.sequence_parallel: Megatron's sequence parallelism off and/or on
  /// (searched where T > 1; transformer-training models only).
  std::vector<bool> sequence_parallel = {false};
};

enum class WorldRule { kEqual, kAtMost };

/// `strategy:`: how much of the space is evaluated (search/strategy.h).
enum class StrategyKind {
  kGrid,    ///< every configuration (the default)
  kRandom,  ///< `budget` configurations drawn without replacement
  kAnneal,  ///< simulated annealing over neighbouring configurations, `budget` evaluations
};

struct Strategy {
  StrategyKind kind = StrategyKind::kGrid;
  int64_t budget = 0;  ///< evaluations (random, anneal); >= 1
  uint64_t seed = 0;
};

const char* StrategyName(StrategyKind kind);

/// In ModelFile::inputs, the extent that takes each configuration's batch (`B`).
inline constexpr int64_t kBatchExtent = -1;

enum class ModelFileFormat {
  kOnnx,    ///< `model: {onnx: PATH, ...}`: imported (importers/onnx)
  kDistir,  ///< `model: {distir: PATH, ...}`: a sequential DistIR program (docs/ir.md)
};

/// A model from a file: `model: {onnx: PATH, inputs: {NAME: [B, 128]}, dtype:
/// f16}` or `model: {distir: PATH, inputs: {NAME: [B, 16]}}`.
struct ModelFile {
  ModelFileFormat format = ModelFileFormat::kOnnx;
  /// The file: beside the experiment file when it exists there, else as written
  /// (relative to the current directory).
  std::string path;
  /// Shapes of the data inputs (importers/onnx --input; for a DistIR
  /// program, parameters whose declared shape the batch replaces);
  /// kBatchExtent for `B`.
  std::map<std::string, std::vector<int64_t>> inputs;
  std::optional<DType> dtype;  ///< ONNX: every float tensor in this dtype (default: the file's)
};

struct Experiment {
  std::string name;
  std::string path;       ///< the YAML file as given
  std::string yaml_text;  ///< verbatim
  ModelSpec model;        ///< overrides applied; the batch comes from the space
  /// Set for a model from a file (ONNX or DistIR); `model` then only names it
  /// (name = the path as written) and says it is an inference model.
  std::optional<ModelFile> model_file;
  std::string hardware_path;  ///< "" when inline
  std::string hardware_text;  ///< the profile's YAML (verbatim file, or the inline map re-emitted)
  sim::HardwareProfile hardware;
  int64_t world_size = 0;
  SearchSpace space;
  WorldRule world_rule = WorldRule::kEqual;
  int64_t memory_limit_bytes = 0;  ///< 0: no limit
  int64_t traces = 3;
  std::string output = "results.h5";  ///< relative to the current directory
  Strategy strategy;
  /// How each configuration is distributed through meshes and shardings over
  /// a mesh {dp: D, tp: T} (docs/transforms.md §12): the rules of `sharding:`
  /// as listed, or the built-in model's own (`sharding: model`, and the
  /// default; models/model_sharding.h), or for an imported model without
  /// `sharding:` its batch inputs split over dp (data parallelism only). The
  /// experiment's `layers:` key replaces `sharding.layer_pattern`.
  ModelSharding sharding;
};

/// Parses an experiment; `path` names it in errors and anchors a relative
/// hardware path. `error_source` (when not null) receives the text an error's
/// location points into: `text`, or the referenced hardware profile's text for
/// an error in the profile, so that a tool can print the line under the
/// message (support/diagnostic.h); on success it holds `text`.
/// Errors reject, at their file:line:col, besides malformed keys and values:
/// a hardware profile in neither place it may be (naming the paths tried),
/// model options the model's builder refuses at the space's smallest batch
/// (every configuration would be invalid), and a space whose D*T*P products
/// never meet the world rule (the search would have no configuration).
StatusOr<Experiment> ParseExperiment(const std::string& text, const std::string& path,
                                     std::string* error_source = nullptr);

/// `model` with every kBatchExtent bound to `batch`: imported (docs/onnx.md),
/// or parsed (a DistIR program: its entry function, the listed parameters'
/// shapes rebound, then verified and typed): a module whose entry is one fully
/// typed function. Errors name the file (and line:col in a DistIR program).
StatusOr<Module> LoadModelFile(const ModelFile& model, int64_t batch);

/// Reads and parses the file at `path`.
StatusOr<Experiment> LoadExperiment(const std::string& path);

}  // namespace distir::search
