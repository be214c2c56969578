// The MPI grid search: every rank evaluates a slice of the configurations,
// rank 0 gathers the results and ranks them.
//
// Resume: with a journal directory (journal.h) every rank records each result
// as soon as it has it; with `resume`, the results a journal already holds are
// taken as they are and only the others are sliced and evaluated. A resumed
// search ends with the same results as an uninterrupted one.
//
// Slicing: configurations are sorted by estimated cost (largest first, ties
// by index) and each goes to the rank with the least estimated work so far
// (ties: lowest rank), so that ranks finish together although
// configurations differ in cost by 100x and more; a rank done with its
// slice takes the next unit of the slice with the most estimated cost left
// (unit_queue.h), where the estimate erred or ranks run at different speeds.
// Results do not depend on the slicing: each configuration is evaluated on
// its own, deterministically, so the datasets are identical whatever the
// number of ranks.

#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "search/unit_queue.h"
#include "support/status_or.h"

namespace distir::search {

/// The share of its EstimatedCost that a configuration costs when it reuses
/// the template another one built: on the paper's GPT-2 175B grid (one rank,
/// 2026-11-29) a configuration that builds its template took 59-67 ms, one
/// that reuses it 10-12 ms.
inline constexpr double kTemplateReuseShare = 1.0 / 6;

/// The estimated cost of configurations that share a template, given their
/// EstimatedCosts: the largest whole, kTemplateReuseShare of the others.
double SharedTemplateCost(const std::vector<double>& costs);

/// The slice of each rank: its units of work (a configuration, or with `key`
/// every configuration of one non-empty key: Evaluator::TemplateKey, they
/// share a template, built once per rank that has one of them, so they go
/// to one rank together, one after the other, at SharedTemplateCost), each
/// with its estimated cost; only the configurations with `todo[i]` (every
/// one when `todo` is empty). Balanced by EstimatedCost, largest first onto
/// the least loaded rank, so each slice runs largest first. Deterministic.
/// With `micro` (Evaluator::MicroBatchOf), each unit's configurations of the
/// smallest and the largest micro-batch come first, then the others by
/// micro-batch: the evaluator writes their templates from the first two; a
/// unit costs SharedTemplateCost per micro-batch.
std::vector<Slice> AssignUnits(const Experiment& e, const std::vector<Config>& configs, int ranks,
                               const std::vector<char>& todo = {},
                               const std::function<std::string(const Config&)>& key = nullptr,
                               const std::function<int64_t(const Config&)>& micro = nullptr);

/// Row indices of the configurations that simulated and fit in memory, by
/// throughput (highest first), ties by iteration time then by index.
std::vector<int64_t> RankResults(const std::vector<ConfigResult>& results);

struct SearchOutcome {
  std::vector<Config> configs;
  std::vector<ConfigResult> results;  ///< by index; complete on rank 0 only
  std::vector<int64_t> ranking;       ///< rank 0 only
  int ranks = 1;
  double wall_time_s = 0;
  int64_t resumed = 0;  ///< results taken from the journal
  /// Each configuration's throughput bound (Evaluator::ThroughputBound) by
  /// index, where the search computed them (annealing, on rank 0); else
  /// empty, for the caller to compute.
  std::vector<double> bounds;
};

struct SearchOptions {
  /// Progress lines (done/total, configurations per second, ETA) on rank 0, at
  /// most one a second, the first a second in (a shorter search prints none);
  /// the ETA comes from progress_estimator.h.
  std::ostream* progress = nullptr;
  /// Warnings that do not stop the search (a journal file that cannot be
  /// written: the search goes on without it), one line each, on rank 0 and the
  /// others alike; nullptr drops them. Not owned; must outlive the call.
  std::ostream* warnings = nullptr;
  /// The journal directory (journal.h); "" for none.
  std::string journal_dir;
  /// Take the results the journal holds; otherwise an old journal is discarded.
  bool resume = false;
  /// Part of the journal's fingerprint: results of another binary are not reused.
  std::string tool_revision;
  /// EvaluatorOptions::max_memory_bytes of every rank's evaluator (0: no limit).
  /// A resumed search evaluates the journal's too-large configurations again,
  /// since the limit may have changed.
  int64_t max_memory_bytes = 0;
  /// EvaluatorOptions::expanded_microbatches off: every program built whole
  /// (`distir search --exact-full`).
  bool exact_full = false;
  /// EvaluatorOptions::composed_segments off: the copies simulated op by op
  /// (`distir search --op-by-op`).
  bool op_by_op = false;
  /// EvaluatorOptions::retyped_templates and folded_layers off: every
  /// template built (`distir search --build-all-templates`).
  bool build_all_templates = false;
};

/// Runs the search over `comm` (collective: every rank calls it), or as one
/// process without MPI for MPI_COMM_NULL (ranks.h).
/// Errors (the same on every rank; the message on rank 0): those of
/// ReadJournal/ResetJournal, and a journal file that cannot be written.
StatusOr<SearchOutcome> RunGridSearch(const Experiment& e, MPI_Comm comm,
                                      const SearchOptions& options);

}  // namespace distir::search
