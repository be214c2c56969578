#include "search/results_table.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <utility>

#include "search/text_table.h"
#include "support/str_util.h"

namespace distir::search {
namespace {

// A configuration of the ranking and its rank within its batch.
struct Ranked {
  int64_t rank = 0;
  const io::ResultRow* row = nullptr;
};

// One batch's share of a ranking: how many configurations it has, how many fit,
// how many of those pass the filters, and the ones shown.
struct BatchSelection {
  int64_t batch = 0;
  int64_t total = 0;
  int64_t ranked = 0;
  int64_t matched = 0;
  std::vector<Ranked> shown;
};

// A YAML value on one line: a scalar as written, a list or map in flow style.
std::string FlowText(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

BatchSelection SelectBatch(const io::ResultsFile& f, int64_t batch, const RankingOptions& o) {
  BatchSelection s;
  s.batch = batch;
  s.total = std::count_if(f.rows.begin(), f.rows.end(),
                          [batch](const io::ResultRow& r) { return r.batch == batch; });
  for (int64_t index : f.ranking) {
    const io::ResultRow& r = f.rows[static_cast<size_t>(index)];
    if (r.batch != batch) continue;
    ++s.ranked;
    if (!MatchesFilters(r, o.where)) continue;
    ++s.matched;
    if (o.top == 0 || static_cast<int64_t>(s.shown.size()) < o.top)
      s.shown.push_back({s.ranked, &r});
  }
  return s;
}

// "batch 64: 24 of 28 configurations fit in memory; 6 with tp=8; the best 5 shown".
std::string Heading(const BatchSelection& s, const RankingOptions& o) {
  std::string line = "batch " + std::to_string(s.batch) + ": " + std::to_string(s.ranked) + " of " +
                     std::to_string(s.total) + " configurations fit in memory";
  if (!o.where.empty())
    line += "; " + std::to_string(s.matched) + " with " + DescribeFilters(o.where);
  if (static_cast<int64_t>(s.shown.size()) < s.matched) {
    line += "; the best " + std::to_string(s.shown.size()) + " shown";
  }
  return line;
}

// The "all rows:" line and the table of `rows`, with a column for each of
// `knobs` that differs between them, and with `step` a transformer step's
// tokens/s, TFLOP/s per GPU, MFU and exposed communication. REQUIRES: !rows.empty().
void PrintTable(const std::vector<Ranked>& rows, const std::vector<Knob>& knobs, bool step,
                std::ostream& os) {
  std::vector<const io::ResultRow*> configs;
  std::vector<int64_t> memory;
  for (const Ranked& r : rows) {
    configs.push_back(r.row);
    memory.push_back(r.row->peak_memory_bytes);
  }
  const KnobSplit split = SplitKnobs(configs, knobs);
  if (!split.constant.empty()) os << ConstantKnobsLine(*configs.front(), split.constant) << "\n";
  const ByteUnit unit = ChooseByteUnit(memory);
  using Align = TextTable::Align;
  TextTable table;
  table.AddColumn("rank", Align::kRight);
  for (Knob k : split.varying) {
    table.AddColumn(std::string(KnobLabel(k)), IsNumericKnob(k) ? Align::kRight : Align::kLeft);
  }
  table.AddColumn("time (ms)", Align::kRight);
  table.AddColumn("samples/s", Align::kRight);
  table.AddColumn(std::string("peak memory (") + unit.name + ")", Align::kRight);
  if (step) {
    table.AddColumn("tokens/s", Align::kRight);
    table.AddColumn("TFLOP/s/GPU", Align::kRight);
    table.AddColumn("MFU %", Align::kRight);
    table.AddColumn("exposed comm (ms)", Align::kRight);
  }
  for (const Ranked& r : rows) {
    std::vector<std::string> cells{std::to_string(r.rank)};
    for (Knob k : split.varying) cells.push_back(KnobValue(*r.row, k));
    cells.push_back(FormatFixed(r.row->iteration_time_s * 1e3, 3));
    cells.push_back(FormatFixed(r.row->throughput, 1));
    cells.push_back(FormatBytes(r.row->peak_memory_bytes, unit));
    if (step) {
      cells.push_back(FormatFixed(r.row->step.tokens_per_s, 0));
      cells.push_back(FormatFixed(r.row->step.tflops_per_gpu, 1));
      cells.push_back(FormatFixed(100 * r.row->step.mfu, 1));
      cells.push_back(FormatFixed(r.row->exposed_communication_s * 1e3, 3));
    }
    table.AddRow(std::move(cells));
  }
  table.Print(os);
}

}  // namespace

std::string ModelLabel(const io::ResultsFile& f) {
  try {
    const YAML::Node root = YAML::Load(f.experiment_yaml);
    if (!root.IsMap()) return f.model;
    const YAML::Node model = root["model"];
    if (!model || !model.IsMap()) return f.model;
    std::vector<std::pair<std::string, std::string>> keys;
    for (const auto& entry : model) {
      const std::string key = entry.first.as<std::string>("");
      // The model's name (or its file) is the attribute itself.
      if (key != "name" && key != "onnx" && key != "distir")
        keys.emplace_back(key, FlowText(entry.second));
    }
    if (keys.empty()) return f.model;
    std::sort(keys.begin(), keys.end());
    std::vector<std::string> parts;
    parts.reserve(keys.size());
    for (const auto& [key, value] : keys) parts.emplace_back(key).append(" ").append(value);
    std::string label = f.model;
    label.append(" (").append(Join(parts, ", ")).append(")");
    return label;
  } catch (const YAML::Exception&) {
    return f.model;
  }
}

std::vector<int64_t> BatchesOf(const io::ResultsFile& f) {
  std::vector<int64_t> batches;
  for (const io::ResultRow& r : f.rows) batches.push_back(r.batch);
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  return batches;
}

Status PrintRanking(const io::ResultsFile& f, const RankingOptions& options, std::ostream& os) {
  std::vector<int64_t> batches = BatchesOf(f);
  if (options.batch) {
    if (std::find(batches.begin(), batches.end(), *options.batch) == batches.end()) {
      return InvalidArgument() << "no configuration has batch " << *options.batch
                               << "; the batches are " << JoinInts(batches, ", ");
    }
    batches = {*options.batch};
  }
  const std::vector<Knob> knobs = TableKnobs(f);
  std::vector<Knob> knobs_but_batch = knobs;
  std::erase(knobs_but_batch, Knob::kBatch);
  std::vector<Ranked> all;
  for (int64_t batch : batches) {
    BatchSelection s = SelectBatch(f, batch, options);
    if (!options.table_per_batch) {
      all.insert(all.end(), s.shown.begin(), s.shown.end());
      continue;
    }
    // The heading names the batch: its tables leave it out.
    os << "\n" << Heading(s, options) << "\n";
    if (!s.shown.empty()) PrintTable(s.shown, knobs_but_batch, f.has_step_figures, os);
  }
  if (!all.empty()) PrintTable(all, knobs, f.has_step_figures, os);
  return Status::Ok();
}

}  // namespace distir::search
