// Experiment files: the YAML a user keeps and submits (docs/configs.md).
//
//   name: gpt2-1.6b-dgx2
//   model: gpt2-1.6b                  # or {name: mlp-tiny, n_layer: 4, d_model: 64, ...}
//   hardware: ../hardware/dgx2-v100.yaml   # relative to this file, or an inline map
//   world_size: 16
//   space:
//     batch: {pow2: [7, 20]}          # 2^7 .. 2^20; or a list, or one number
//     dp: all                         # every power of two up to world_size
//     tp: all
//     pp: all
//     microbatches: {pow2: [1, 7]}    # used when P > 1; P = 1 runs K = 1
//     schedule: [1f1b]
//     recompute: [false]
//     zero: [0]
//   constraints: {world: equal}       # D*T*P == world_size (or at_most)
//   memory_limit: 32 GiB              # default: the profile's device capacity
//   traces: 3                         # traces kept for the best configurations
//   output: results.h5
//
// Every error names the file, line and column.

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/model_zoo.h"
#include "sim/hardware_profile.h"
#include "support/status_or.h"
#include "transforms/parallel_options.h"

namespace distir::search {

struct SearchSpace {
  std::vector<int64_t> batch;
  std::vector<int64_t> dp, tp, pp;
  std::vector<int64_t> microbatches = {1};
  std::vector<PipelineSchedule> schedule = {PipelineSchedule::k1F1B};
  std::vector<bool> recompute = {false};
  std::vector<int> zero = {0};
};

enum class WorldRule { kEqual, kAtMost };

struct Experiment {
  std::string name;
  std::string path;       ///< the YAML file as given
  std::string yaml_text;  ///< verbatim
  ModelSpec model;        ///< overrides applied; the batch comes from the space
  std::string hardware_path;  ///< "" when inline
  std::string hardware_text;  ///< the profile's YAML (verbatim file, or the inline map re-emitted)
  sim::HardwareProfile hardware;
  int64_t world_size = 0;
  SearchSpace space;
  WorldRule world_rule = WorldRule::kEqual;
  int64_t memory_limit_bytes = 0;  ///< 0: no limit
  int64_t traces = 3;
  std::string output = "results.h5";  ///< relative to the current directory
};

/// Parses an experiment; `path` names it in errors and anchors a relative
/// hardware path.
StatusOr<Experiment> ParseExperiment(const std::string& text, const std::string& path);

/// Reads and parses the file at `path`.
StatusOr<Experiment> LoadExperiment(const std::string& path);

}  // namespace distir::search
