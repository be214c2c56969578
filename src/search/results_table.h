// The ranking tables of a results file (docs/results_format.md): what
// `distir search` prints when it ends and what `distir report` prints.
//
// Throughput is only comparable at one global batch, so configurations are
// ranked within their batch. A table shows the rank, the knobs that differ
// between its rows (result_knobs.h; the constant ones are named once above it),
// the iteration time, the throughput and the peak memory per device in the
// binary unit that suits the column (text_table.h). `distir run` builds its
// table of measurements from the same parts.

#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "io/results_file.h"
#include "search/result_knobs.h"
#include "support/status.h"

namespace distir::search {

/// The model as the experiment defines it: the file's `model` attribute,
/// followed by the keys that /experiment/yaml sets on top of it, sorted, e.g.
/// "mlp-tiny (d_model 64, n_layer 4)". Only the attribute when the experiment
/// names the model alone, or when /experiment/yaml cannot be read.
std::string ModelLabel(const io::ResultsFile& f);

/// The distinct global batches of `f.rows`, ascending.
std::vector<int64_t> BatchesOf(const io::ResultsFile& f);

/// Which ranked configurations a ranking shows, and how.
struct RankingOptions {
  int64_t top = 0;                ///< at most this many of each batch; 0: all of them
  std::optional<int64_t> batch;   ///< only this global batch
  std::vector<KnobFilter> where;  ///< only the rows that pass MatchesFilters
  /// true (report): one table per batch, each after a heading line such as
  /// "batch 64: 24 of 28 configurations fit in memory". false (search): one
  /// table of every batch, with batch a column where it varies.
  bool table_per_batch = true;
};

/// Prints the configurations of `f.ranking` that `options` select, each batch's
/// best first, with its rank within its batch. A table with no rows is left
/// out (a batch's heading says how many there were). InvalidArgument, and
/// nothing printed, when `options.batch` is not a batch of `f`.
Status PrintRanking(const io::ResultsFile& f, const RankingOptions& options, std::ostream& os);

}  // namespace distir::search
