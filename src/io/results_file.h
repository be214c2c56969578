// results.h5: the search's result file (layout: docs/results_format.md).
//
// Written by rank 0 only, with the serial HDF5 C API, to `<path>.tmp` and
// renamed over `path` once complete and closed: a killed run leaves either the
// previous file or none, never a truncated one. Read back with h5py alone.

#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/status_or.h"

namespace distir::io {

inline constexpr int kResultsFormatVersion = 1;

/// One row of /configs.
/// The memory breakdown's kinds, in the order of sim::MemoryKind (the search
/// checks the two agree): column /configs/memory_<name>_bytes.
inline constexpr const char* kMemoryKindColumns[] = {"weights",     "gradients", "optimizer_state",
                                                     "activations", "inputs",    "other"};
inline constexpr int kNumMemoryKindColumns = 6;

/// What a transformer training step's row adds (docs/results_format.md).
struct StepFigures {
  double tokens_per_s = 0;    ///< global batch x seq_length / iteration time
  double tflops_per_gpu = 0;  ///< model FLOPs (no recomputation) / time / devices, in TFLOP/s
  double mfu = 0;             ///< tflops_per_gpu / the profile's matrix peak for the dtype
  /// Live bytes per kind on the device with the largest peak, at its peak.
  std::array<int64_t, kNumMemoryKindColumns> memory_at_peak{};

  bool operator==(const StepFigures&) const = default;
};

struct ResultRow {
  int64_t index = 0, batch = 0, dp = 1, tp = 1, pp = 1, microbatches = 1;
  std::string schedule;
  bool recompute = false;  ///< any recomputation (full or selective)
  /// With recompute: Megatron's selective kind (the marked ops only), not
  /// full; column recompute_kind says none, full or selective.
  bool recompute_selective = false;
  int64_t zero_stage = 0;
  /// v, interleaved 1F1B model chunks per stage; 1 in files without the column.
  int64_t virtual_stages = 1;
  /// Megatron's micro batch, batch / (D K); 0 where that does not divide. In
  /// files without the column: derived from batch, dp and microbatches.
  int64_t micro_batch = 0;
  /// Megatron's sequence parallelism; false in files without the column.
  bool sequence_parallel = false;
  std::string status;  ///< ok, invalid, error
  std::string reason;
  double iteration_time_s = 0, throughput = 0;
  int64_t peak_memory_bytes = 0;
  bool fits = false;
  int64_t num_ops = 0;
  int64_t rank = 0;  ///< 1-based position in the ranking; 0 when not ranked
  /// Communication time not hidden behind compute, on the device where it is
  /// largest (all of it with one stream per device).
  double exposed_communication_s = 0;
  /// Transformer training models only (ResultsFile::has_step_figures).
  StepFigures step;
  /// How it was simulated: "full", "one-replica", "expanded", "one-replica
  /// expanded", "" when it was not (search/evaluator.h Evaluation); "" in
  /// files without the column.
  std::string evaluation;
  /// Samples/s that no simulation of this configuration can exceed
  /// (search/throughput_bound.h); 0 where none is known, and in files without
  /// the column.
  double throughput_bound = 0;

  bool operator==(const ResultRow&) const = default;
};

/// The trace of one top configuration.
struct TraceRecord {
  int64_t config = 0;  ///< row index in /configs
  int64_t rank = 0;
  std::vector<int32_t> device;
  std::vector<double> start_s, end_s;
  std::vector<int8_t> category;  ///< 0 compute, 1 communication
  std::vector<std::string> label;
  std::vector<int32_t> memory_device;  ///< memory timelines, concatenated
  std::vector<double> memory_time_s;
  std::vector<int64_t> memory_bytes;

  bool operator==(const TraceRecord&) const = default;
};

/// Everything a results file holds but /measured and /validation
/// (measurements.h, validation_file.h), field for field.
struct ResultsFile {
  std::string experiment_name;
  std::string model;
  std::string hardware;
  std::string experiment_yaml;
  std::string hardware_yaml;
  std::string tool_version;
  std::string git_revision;
  int64_t memory_limit_bytes = 0;
  std::vector<ResultRow> rows;
  /// The rows' `step` figures are written (the model is a transformer
  /// training step); older files and other models have none.
  bool has_step_figures = false;
  std::vector<int64_t> ranking;  ///< row indices, best first
  /// Attribute optimum_gap: the best configuration of the whole space is at
  /// most this fraction above the throughput of ranking[0], by the bounds of
  /// the configurations not simulated (search/throughput_bound.h OptimumGap);
  /// 0 when every configuration that could be better was simulated. Absent
  /// (nullopt) when not known.
  std::optional<double> optimum_gap;
  std::vector<TraceRecord> traces;
  // Run facts (group /run; they differ from run to run).
  int64_t ranks = 1;
  double wall_time_s = 0;
  std::string started_at;

  /// Field-wise: what a write followed by a read must preserve.
  bool operator==(const ResultsFile&) const = default;
};

/// The file WriteResultsFile(path) writes before renaming it to `path`:
/// `<path>.tmp`. One that exists while no writer holds the output was left by
/// an interrupted run (output_claim.h removes it).
inline std::string ResultsTempPath(const std::string& path) { return path + ".tmp"; }

/// Writes `file` to `path` atomically, through ResultsTempPath(path), which
/// is removed when writing fails.
Status WriteResultsFile(const std::string& path, const ResultsFile& file);

/// Reads back every field WriteResultsFile writes: the metadata attributes
/// (memory_limit_bytes included), /experiment, /configs, /ranking, /traces (in
/// increasing rank) and /run, so that ReadResultsFile(p) == f after
/// WriteResultsFile(p, f). Attributes, /experiment and /run that a file written
/// by hand leaves out read as the defaults above; any that is present must have
/// its documented layout, and a failed read is an error naming the file and the
/// object (InvalidArgument), as is a trace group whose name is not its rank.
StatusOr<ResultsFile> ReadResultsFile(const std::string& path);

}  // namespace distir::io
