// The knobs of a searched configuration, as the results file stores them.
//
// A knob is one of the /configs columns that describe a configuration (batch,
// dp, tp, pp, microbatches, schedule, recompute, zero_stage; see
// docs/results_format.md), as opposed to the columns that describe its
// outcome. The tables of `distir search`, `report` and `run`
// (results_table.h) show the knobs that differ between their rows and name the
// constant ones once; `distir report --where tp=8` filters rows by knob.

#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "io/results_file.h"
#include "support/status_or.h"

namespace distir::search {

enum class Knob {
  kBatch,
  kDp,
  kTp,
  kPp,
  kVirtualStages,
  kMicrobatches,
  kMicroBatch,
  kSchedule,
  kRecompute,
  kZeroStage,
  kSequenceParallel
};

/// Every knob, in the order tables show them.
inline constexpr std::array<Knob, 11> kAllKnobs = {Knob::kBatch,
                                                   Knob::kDp,
                                                   Knob::kTp,
                                                   Knob::kPp,
                                                   Knob::kVirtualStages,
                                                   Knob::kMicrobatches,
                                                   Knob::kMicroBatch,
                                                   Knob::kSchedule,
                                                   Knob::kRecompute,
                                                   Knob::kZeroStage,
                                                   Knob::kSequenceParallel};

/// The knob's /configs column: "batch", "dp", "tp", "pp", "virtual_stages",
/// "microbatches", "micro_batch", "schedule", "recompute", "zero_stage",
/// "sequence_parallel".
std::string_view KnobColumn(Knob knob);

/// The knob's name in tables: "batch", "D", "T", "P", "v", "K", "micro batch",
/// "schedule", "recompute", "zero".
std::string_view KnobLabel(Knob knob);

/// The knob named `name`: its /configs column or its table label (so "tp" and
/// "T", "zero_stage" and "zero" name the same knob). InvalidArgument listing
/// the columns otherwise.
StatusOr<Knob> KnobNamed(std::string_view name);

/// Whether the knob's values are numbers (right-aligned in tables).
bool IsNumericKnob(Knob knob);

/// The knob's value in `row` as tables print it: "8", "1f1b"; recompute
/// "no", "yes" (full: what `true` always meant) or "selective".
std::string KnobValue(const io::ResultRow& row, Knob knob);

/// `--where KNOB=VALUE`: keep the rows whose knob has this value.
struct KnobFilter {
  Knob knob = Knob::kBatch;
  std::string value;  ///< as KnobValue prints it, e.g. "yes" for `recompute=1`
};

/// Parses "tp=8", "schedule=gpipe", "recompute=true". The value must suit the
/// knob: an integer, gpipe or 1f1b, or a recomputation (a truth value 1/0,
/// true/false, yes/no, on/off, or none, full, selective). InvalidArgument
/// naming the text otherwise.
StatusOr<KnobFilter> ParseKnobFilter(std::string_view text);

/// Whether `row` passes `filters`: for every knob they name, the row has one of
/// the values given for it (filters on one knob are alternatives, filters on
/// different knobs must all hold). No filters: true.
bool MatchesFilters(const io::ResultRow& row, const std::vector<KnobFilter>& filters);

/// "tp=8 and (schedule=gpipe or schedule=1f1b)": the filters in words.
std::string DescribeFilters(const std::vector<KnobFilter>& filters);

/// The knobs the tables of `f` consider: every knob, but the micro batch only
/// when the stored experiment searched it (space.micro_batch; otherwise it
/// follows from batch, D and K and would only repeat them), and v only when
/// some row interleaves (v != 1), so that tables of searches without these
/// knobs read as before.
std::vector<Knob> TableKnobs(const io::ResultsFile& f);

/// `knobs` split by whether `rows` differ in them, each part in the order of
/// `knobs`. REQUIRES: every pointer is valid. No rows: every knob constant.
struct KnobSplit {
  std::vector<Knob> varying;
  std::vector<Knob> constant;
};
KnobSplit SplitKnobs(const std::vector<const io::ResultRow*>& rows, const std::vector<Knob>& knobs);

/// "all rows: schedule 1f1b, zero 0": the constant knobs with their value in
/// `row` (any of the rows); "" when `constant` is empty.
std::string ConstantKnobsLine(const io::ResultRow& row, const std::vector<Knob>& constant);

}  // namespace distir::search
