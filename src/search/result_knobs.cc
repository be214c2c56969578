#include "search/result_knobs.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>

#include "support/str_util.h"

namespace distir::search {
namespace {

struct KnobNames {
  Knob knob;
  std::string_view column;
  std::string_view label;
};

constexpr KnobNames kNames[] = {{Knob::kBatch, "batch", "batch"},
                                {Knob::kDp, "dp", "D"},
                                {Knob::kTp, "tp", "T"},
                                {Knob::kPp, "pp", "P"},
                                {Knob::kVirtualStages, "virtual_stages", "v"},
                                {Knob::kMicrobatches, "microbatches", "K"},
                                {Knob::kMicroBatch, "micro_batch", "micro batch"},
                                {Knob::kSchedule, "schedule", "schedule"},
                                {Knob::kRecompute, "recompute", "recompute"},
                                {Knob::kZeroStage, "zero_stage", "zero"},
                                {Knob::kSequenceParallel, "sequence_parallel", "sp"}};

const KnobNames& NamesOf(Knob knob) {
  return *std::find_if(std::begin(kNames), std::end(kNames),
                       [knob](const KnobNames& n) { return n.knob == knob; });
}

std::string KnownColumns() {
  std::vector<std::string> names;
  for (const KnobNames& n : kNames) names.emplace_back(n.column);
  return Join(names, ", ");
}

// The value of a filter in KnobValue's spelling, or "" when it does not suit
// the knob.
// A truth value's spellings: "yes" or "no", "" for anything else.
std::string TruthValue(std::string_view text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return "yes";
  if (text == "0" || text == "false" || text == "no" || text == "off") return "no";
  return "";
}

std::string CanonicalValue(Knob knob, std::string_view text) {
  if (knob == Knob::kSchedule) return text == "gpipe" || text == "1f1b" ? std::string(text) : "";
  if (knob == Knob::kSequenceParallel) return TruthValue(text);
  if (knob == Knob::kRecompute) {
    // The truth values, and the recomputation kinds by name (full is yes).
    if (text == "full") return "yes";
    if (text == "none") return "no";
    if (text == "selective") return "selective";
    return TruthValue(text);
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return "";
  return std::to_string(value);
}

std::string_view ExpectedValues(Knob knob) {
  if (knob == Knob::kSchedule) return "gpipe or 1f1b";
  if (knob == Knob::kRecompute)
    return "yes or no (1/0, true/false, on/off), none, full or selective";
  if (knob == Knob::kSequenceParallel) return "yes or no (1/0, true/false, on/off)";
  return "an integer";
}

// Whether the experiment's space lists micro_batch. A stored experiment
// that does not parse (a file written by hand) searched no micro batch.
bool SearchedMicroBatch(const std::string& experiment_yaml) {
  try {
    const YAML::Node root = YAML::Load(experiment_yaml);
    return root.IsMap() && root["space"].IsMap() && root["space"]["micro_batch"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

}  // namespace

std::string_view KnobColumn(Knob knob) { return NamesOf(knob).column; }

std::string_view KnobLabel(Knob knob) { return NamesOf(knob).label; }

StatusOr<Knob> KnobNamed(std::string_view name) {
  for (const KnobNames& n : kNames) {
    if (name == n.column || name == n.label) return n.knob;
  }
  return InvalidArgument() << "unknown knob '" << name << "'; the knobs are the /configs columns "
                           << KnownColumns();
}

bool IsNumericKnob(Knob knob) { return knob != Knob::kSchedule && knob != Knob::kRecompute; }

std::string KnobValue(const io::ResultRow& row, Knob knob) {
  switch (knob) {
    case Knob::kBatch:
      return std::to_string(row.batch);
    case Knob::kDp:
      return std::to_string(row.dp);
    case Knob::kTp:
      return std::to_string(row.tp);
    case Knob::kPp:
      return std::to_string(row.pp);
    case Knob::kVirtualStages:
      return std::to_string(row.virtual_stages);
    case Knob::kMicrobatches:
      return std::to_string(row.microbatches);
    case Knob::kMicroBatch:
      return std::to_string(row.micro_batch);
    case Knob::kSchedule:
      return row.schedule;
    case Knob::kRecompute:
      if (!row.recompute) return "no";
      return row.recompute_selective ? "selective" : "yes";
    case Knob::kZeroStage:
      return std::to_string(row.zero_stage);
    case Knob::kSequenceParallel:
      return row.sequence_parallel ? "yes" : "no";
  }
  return "";
}

StatusOr<KnobFilter> ParseKnobFilter(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return InvalidArgument() << "--where '" << text << "': expected KNOB=VALUE, e.g. tp=8";
  }
  StatusOr<Knob> knob = KnobNamed(text.substr(0, eq));
  if (!knob.ok())
    return InvalidArgument() << "--where '" << text << "': " << knob.status().message();
  KnobFilter filter{*knob, CanonicalValue(*knob, text.substr(eq + 1))};
  if (filter.value.empty()) {
    return InvalidArgument() << "--where '" << text << "': " << KnobColumn(*knob) << " takes "
                             << ExpectedValues(*knob);
  }
  return filter;
}

bool MatchesFilters(const io::ResultRow& row, const std::vector<KnobFilter>& filters) {
  for (Knob knob : kAllKnobs) {
    bool named = false, matched = false;
    for (const KnobFilter& f : filters) {
      if (f.knob != knob) continue;
      named = true;
      matched = matched || KnobValue(row, knob) == f.value;
    }
    if (named && !matched) return false;
  }
  return true;
}

std::string DescribeFilters(const std::vector<KnobFilter>& filters) {
  std::vector<std::string> parts;
  for (Knob knob : kAllKnobs) {
    std::vector<std::string> terms;
    for (const KnobFilter& f : filters) {
      if (f.knob == knob) terms.push_back(std::string(KnobColumn(knob)) + "=" + f.value);
    }
    if (terms.size() == 1) parts.push_back(terms.front());
    if (terms.size() > 1) parts.push_back("(" + Join(terms, " or ") + ")");
  }
  return Join(parts, " and ");
}

std::vector<Knob> TableKnobs(const io::ResultsFile& f) {
  std::vector<Knob> knobs(kAllKnobs.begin(), kAllKnobs.end());
  if (!SearchedMicroBatch(f.experiment_yaml)) std::erase(knobs, Knob::kMicroBatch);
  const bool interleaved = std::any_of(
      f.rows.begin(), f.rows.end(), [](const io::ResultRow& r) { return r.virtual_stages != 1; });
  if (!interleaved) std::erase(knobs, Knob::kVirtualStages);
  const bool sequence_parallel = std::any_of(
      f.rows.begin(), f.rows.end(), [](const io::ResultRow& r) { return r.sequence_parallel; });
  if (!sequence_parallel) std::erase(knobs, Knob::kSequenceParallel);
  return knobs;
}

KnobSplit SplitKnobs(const std::vector<const io::ResultRow*>& rows,
                     const std::vector<Knob>& knobs) {
  KnobSplit split;
  for (Knob knob : knobs) {
    const bool differs = std::any_of(rows.begin(), rows.end(), [&](const io::ResultRow* r) {
      return KnobValue(*r, knob) != KnobValue(*rows.front(), knob);
    });
    (differs ? split.varying : split.constant).push_back(knob);
  }
  return split;
}

std::string ConstantKnobsLine(const io::ResultRow& row, const std::vector<Knob>& constant) {
  if (constant.empty()) return "";
  std::vector<std::string> parts;
  parts.reserve(constant.size());
  for (Knob knob : constant) {
    parts.push_back(std::string(KnobLabel(knob)) + " " + KnobValue(row, knob));
  }
  return "all rows: " + Join(parts, ", ");
}

}  // namespace distir::search
