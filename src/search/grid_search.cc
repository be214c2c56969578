#include "search/grid_search.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <unordered_map>

#include "search/journal.h"
#include "search/progress_estimator.h"
#include "search/ranks.h"
#include "search/result_codec.h"
#include "search/strategy.h"
#include "search/unit_queue.h"

namespace distir::search {

double SharedTemplateCost(const std::vector<double>& costs) {
  double sum = 0, top = 0;
  for (double c : costs) {
    sum += c;
    top = std::max(top, c);
  }
  return top + kTemplateReuseShare * (sum - top);
}

namespace {

// A family's configurations with its smallest and largest micro-batch first,
// then the others by micro-batch (ties by index), those without one last:
// the evaluator writes the templates of the micro-batches between the first
// two from theirs. `m[i]` is the micro-batch of unit[i] (<= 0: none).
void ExtremesFirst(std::vector<int64_t>& unit, const std::vector<int64_t>& m) {
  if (unit.size() < 3) return;
  int64_t lo = 0, hi = 0;
  for (int64_t x : m) {
    if (x <= 0) continue;
    lo = lo == 0 ? x : std::min(lo, x);
    hi = std::max(hi, x);
  }
  auto group = [&](int64_t x) { return x <= 0 ? 3 : x == lo ? 0 : x == hi ? 1 : 2; };
  std::vector<size_t> order(unit.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (group(m[a]) != group(m[b])) return group(m[a]) < group(m[b]);
    return m[a] < m[b];
  });
  std::vector<int64_t> ordered;
  ordered.reserve(unit.size());
  for (size_t i : order) ordered.push_back(unit[i]);
  unit = std::move(ordered);
}

}  // namespace

std::vector<Slice> AssignUnits(const Experiment& e, const std::vector<Config>& configs, int ranks,
                               const std::vector<char>& todo,
                               const std::function<std::string(const Config&)>& key,
                               const std::function<int64_t(const Config&)>& micro) {
  // Units of work: one configuration, or every configuration of one key.
  // Per unit, per configuration: its index, estimated cost and micro-batch.
  std::vector<std::vector<int64_t>> units, micros;
  std::vector<std::vector<double>> costs;
  std::unordered_map<std::string, size_t> unit_of_key;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (!todo.empty() && !todo[i]) continue;
    const std::string k = key ? key(configs[i]) : std::string();
    size_t u = units.size();
    if (!k.empty()) u = unit_of_key.emplace(k, units.size()).first->second;
    if (u == units.size()) {
      units.emplace_back();
      micros.emplace_back();
      costs.emplace_back();
    }
    units[u].push_back(static_cast<int64_t>(i));
    micros[u].push_back(micro ? micro(configs[i]) : 0);
    costs[u].push_back(EstimatedCost(e, configs[i]));
  }
  // A unit's cost: each micro-batch's configurations share a template
  // (built, or written from two built ones).
  std::vector<double> cost;
  cost.reserve(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    std::map<int64_t, std::vector<double>> by_micro;
    for (size_t i = 0; i < units[u].size(); ++i) by_micro[micros[u][i]].push_back(costs[u][i]);
    double sum = 0;
    for (const auto& [m, c] : by_micro) sum += SharedTemplateCost(c);
    cost.push_back(sum);
  }
  for (size_t u = 0; u < units.size(); ++u) ExtremesFirst(units[u], micros[u]);
  std::vector<size_t> order(units.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::vector<Slice> slices(static_cast<size_t>(ranks));
  std::vector<double> load(static_cast<size_t>(ranks), 0);
  for (size_t u : order) {
    const auto r = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    slices[r].units.push_back(std::move(units[u]));
    slices[r].costs.push_back(cost[u]);
    load[r] += cost[u];
  }
  return slices;
}

std::vector<int64_t> RankResults(const std::vector<ConfigResult>& results) {
  std::vector<int64_t> ranked;
  for (const ConfigResult& r : results) {
    if (r.status == ConfigStatus::kOk && r.fits) ranked.push_back(r.index);
  }
  std::sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) {
    const ConfigResult& x = results[static_cast<size_t>(a)];
    const ConfigResult& y = results[static_cast<size_t>(b)];
    if (x.throughput != y.throughput) return x.throughput > y.throughput;
    if (x.iteration_time_s != y.iteration_time_s) return x.iteration_time_s < y.iteration_time_s;
    return a < b;
  });
  return ranked;
}

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Rank 0 reads the journal (when resuming) and resets it to what it holds; every
// rank learns which configurations are left. Collective.
Status PrepareJournal(const SearchOptions& o, uint64_t fingerprint, MPI_Comm comm, int rank,
                      std::vector<ConfigResult>& prior, std::vector<char>& todo) {
  int ok = 1;
  Status status;
  if (rank == 0 && !o.journal_dir.empty()) {
    if (o.resume) {
      StatusOr<std::vector<ConfigResult>> read =
          ReadJournal(o.journal_dir, fingerprint, static_cast<int64_t>(todo.size()));
      if (read.ok()) prior = std::move(*read);
      status = read.status();
      std::erase_if(prior,
                    [](const ConfigResult& r) { return r.status == ConfigStatus::kTooLarge; });
    }
    if (status.ok()) status = ResetJournal(o.journal_dir, fingerprint, prior);
    for (const ConfigResult& r : prior) todo[static_cast<size_t>(r.index)] = 0;
    ok = status.ok() ? 1 : 0;
  }
  BroadcastFromFirst(&ok, 1, MPI_INT, comm);
  if (!ok) return rank == 0 ? status : Internal() << "rank 0 could not prepare the journal";
  BroadcastFromFirst(todo.data(), static_cast<int>(todo.size()), MPI_CHAR, comm);
  return Status::Ok();
}

// Appends each result to this rank's journal file; on an I/O error warns once
// and goes on without it (the search itself is not at risk).
class RankJournal {
 public:
  RankJournal(const SearchOptions& o, uint64_t fingerprint, int rank) : warnings_(o.warnings) {
    if (o.journal_dir.empty()) return;
    const std::string path = o.journal_dir + "/rank" + std::to_string(rank) + ".bin";
    Check(writer_.Open(path, fingerprint));
  }
  void Append(const ConfigResult& r) {
    if (active_) Check(writer_.Append(r));
  }

 private:
  void Check(const Status& s) {
    active_ = s.ok();
    if (!s.ok() && warnings_ != nullptr) {
      *warnings_ << "distir search: warning: " << s.message() << "; not journaling\n";
    }
  }
  JournalWriter writer_;
  std::ostream* warnings_ = nullptr;
  bool active_ = false;
};

void ReportProgress(std::ostream& os, const ProgressEstimator& estimate, size_t total, double t) {
  const auto finished = std::min(static_cast<int64_t>(total), estimate.ConfigurationsDone());
  os << "[search] " << finished << "/" << total << " configurations, " << std::fixed
     << std::setprecision(1) << static_cast<double>(finished) / std::max(t, 1e-9)
     << " configs/s, ETA ";
  // Only rejected configurations timed so far: the rate of the rest is unknown.
  if (estimate.RateKnown()) {
    os << estimate.SecondsLeft() << " s\n";
  } else {
    os << "unknown (no simulated configuration timed yet)\n";
  }
  os << std::defaultfloat << std::flush;
}

// Rank 0's line once its own slice is done and it takes the other ranks'
// units: the estimator takes the others to be as far along as rank 0, so it
// would read "all done, ETA 0" while they still work. Instead: how many
// configurations are taken, and the predicted seconds of those no rank has
// taken yet (`left`), shared by the ranks; the units the others are
// evaluating now are not counted. `cost_of`: PredictedCost by index.
void ReportTail(std::ostream& os, const ProgressEstimator& estimate,
                const std::vector<double>& cost_of,
                const std::vector<const std::vector<int64_t>*>& left, size_t total, int ranks) {
  size_t waiting = 0;
  double seconds = 0;
  for (const std::vector<int64_t>* unit : left) {
    waiting += unit->size();
    for (int64_t i : *unit) seconds += estimate.PredictedSeconds(cost_of[static_cast<size_t>(i)]);
  }
  os << "[search] " << total - std::min(total, waiting) << "/" << total
     << " configurations taken, rank 0 helping the others, ETA ";
  if (estimate.RateKnown()) {
    os << std::fixed << std::setprecision(1) << seconds / std::max(ranks, 1) << " s for the "
       << waiting << " not yet taken\n";
  } else {
    os << "unknown\n";
  }
  os << std::defaultfloat << std::flush;
}

// The estimator of rank 0's progress lines, from the predicted cost of every
// rank's slice: rank 0 knows them all, as every rank computes the same slices.
// `cost_of` gets each configuration's predicted cost by index.
ProgressEstimator MakeEstimator(Evaluator& evaluator, const std::vector<Config>& configs,
                                const std::vector<Slice>& slices, std::vector<double>& cost_of) {
  cost_of.assign(configs.size(), 0);
  std::vector<std::vector<double>> costs(slices.size());
  for (size_t r = 0; r < slices.size(); ++r) {
    for (const std::vector<int64_t>& unit : slices[r].units) {
      for (int64_t i : unit) {
        cost_of[static_cast<size_t>(i)] = evaluator.PredictedCost(configs[static_cast<size_t>(i)]);
        costs[r].push_back(cost_of[static_cast<size_t>(i)]);
      }
    }
  }
  return ProgressEstimator(std::move(costs), 0);
}

// Where each rank's bytes start in a gathered buffer of `counts` bytes per
// rank; returns the total.
int Displacements(const std::vector<int>& counts, std::vector<int>& offsets) {
  int total = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  return total;
}

// Gathers the packed results of every rank on rank 0.
std::vector<char> GatherPacked(const std::vector<char>& packed, MPI_Comm comm, int rank, int size) {
  if (comm == MPI_COMM_NULL) return packed;
  int bytes = static_cast<int>(packed.size());
  std::vector<int> counts(static_cast<size_t>(size)), offsets(static_cast<size_t>(size));
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<char> all;
  if (rank == 0) all.resize(static_cast<size_t>(Displacements(counts, offsets)));
  MPI_Gatherv(packed.data(), bytes, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR, 0,
              comm);
  return all;
}

// Gathers the packed results of every rank on every rank.
std::vector<char> AllGatherPacked(const std::vector<char>& packed, MPI_Comm comm, int size) {
  if (comm == MPI_COMM_NULL) return packed;
  int bytes = static_cast<int>(packed.size());
  std::vector<int> counts(static_cast<size_t>(size)), offsets(static_cast<size_t>(size));
  MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::vector<char> all(static_cast<size_t>(Displacements(counts, offsets)));
  MPI_Allgatherv(packed.data(), bytes, MPI_CHAR, all.data(), counts.data(), offsets.data(),
                 MPI_CHAR, comm);
  return all;
}

// Unpacks `bytes` into `results` (by index).
Status UnpackInto(const std::vector<char>& bytes, std::vector<ConfigResult>& results) {
  for (size_t at = 0; at < bytes.size();) {
    ConfigResult r;
    const std::optional<size_t> used = UnpackResult(bytes.data() + at, bytes.size() - at, r);
    if (!used) return Internal() << "corrupt result message from a rank";
    at += *used;
    results[static_cast<size_t>(r.index)] = std::move(r);
  }
  return Status::Ok();
}

// The row of a configuration the strategy did not evaluate.
ConfigResult Skipped(int64_t index, const Strategy& s) {
  ConfigResult r;
  r.index = index;
  r.status = ConfigStatus::kSkipped;
  r.reason = std::string("not evaluated: strategy ") + StrategyName(s.kind) + " (budget " +
             std::to_string(s.budget) + ", seed " + std::to_string(s.seed) + ") did not pick it";
  return r;
}

// The annealing walk (strategy.h): each round's configurations are evaluated
// round-robin over the ranks (those the journal holds are taken from it),
// every rank gets every result and takes the same step. `prior` (every
// rank's copy) holds the journal's results by index, status kSkipped where
// it has none.
Status Anneal(const Experiment& e, Evaluator& evaluator, MPI_Comm comm, int rank, int size,
              const std::vector<ConfigResult>& prior, RankJournal& journal, std::ostream* progress,
              SearchOutcome& out) {
  // Every rank computes the same bounds (throughput_bound.h), so the walks agree.
  std::vector<double> bounds;
  bounds.reserve(out.configs.size());
  for (const Config& c : out.configs) bounds.push_back(evaluator.ThroughputBound(c));
  out.bounds = bounds;
  Annealer walk(out.configs, e.strategy, std::move(bounds));
  out.results.assign(out.configs.size(), ConfigResult{});
  for (size_t i = 0; i < out.configs.size(); ++i)
    out.results[i] = Skipped(static_cast<int64_t>(i), e.strategy);
  for (std::vector<int64_t> round = walk.Propose(); !round.empty(); round = walk.Propose()) {
    std::vector<char> packed;
    for (size_t j = 0; j < round.size(); ++j) {
      const auto i = static_cast<size_t>(round[j]);
      if (static_cast<int>(j % static_cast<size_t>(size)) != rank) continue;
      if (prior[i].status != ConfigStatus::kSkipped) {
        PackResult(prior[i], packed);
        continue;
      }
      const ConfigResult r = evaluator.Evaluate(out.configs[i]);
      journal.Append(r);
      PackResult(r, packed);
    }
    DISTIR_RETURN_IF_ERROR(UnpackInto(AllGatherPacked(packed, comm, size), out.results));
    std::vector<ConfigResult> taken;
    for (int64_t i : round) taken.push_back(out.results[static_cast<size_t>(i)]);
    walk.Take(taken);
    if (progress != nullptr && rank == 0) {
      *progress << "[search] anneal: " << walk.evaluated() << "/" << e.strategy.budget
                << " evaluated, best " << std::fixed << std::setprecision(1)
                << walk.best_throughput() << " samples/s\n"
                << std::defaultfloat << std::flush;
    }
  }
  return Status::Ok();
}

EvaluatorOptions EvaluatorOptionsOf(const SearchOptions& options) {
  EvaluatorOptions o;
  o.max_memory_bytes = options.max_memory_bytes;
  o.expanded_microbatches = !options.exact_full;
  o.composed_segments = !options.op_by_op;
  o.retyped_templates = !options.build_all_templates;
  if (options.build_all_templates) o.folded_layers = o.folded_stages = 0;
  return o;
}

// The search of an anneal strategy: the journal's results (rank 0's) are
// broadcast, so that every rank's walk takes them as evaluated.
StatusOr<SearchOutcome> AnnealSearch(const Experiment& e, MPI_Comm comm,
                                     const SearchOptions& options, uint64_t fingerprint, int rank,
                                     int size, const std::vector<ConfigResult>& journaled,
                                     std::chrono::steady_clock::time_point start,
                                     SearchOutcome out) {
  std::vector<char> packed;
  if (rank == 0) {
    for (const ConfigResult& r : journaled) PackResult(r, packed);
  }
  int bytes = static_cast<int>(packed.size());
  BroadcastFromFirst(&bytes, 1, MPI_INT, comm);
  packed.resize(static_cast<size_t>(bytes));
  BroadcastFromFirst(packed.data(), bytes, MPI_CHAR, comm);
  std::vector<ConfigResult> prior(out.configs.size());
  for (size_t i = 0; i < prior.size(); ++i) prior[i] = Skipped(static_cast<int64_t>(i), e.strategy);
  DISTIR_RETURN_IF_ERROR(UnpackInto(packed, prior));
  Evaluator evaluator(e, EvaluatorOptionsOf(options));
  RankJournal journal(options, fingerprint, rank);
  DISTIR_RETURN_IF_ERROR(
      Anneal(e, evaluator, comm, rank, size, prior, journal, options.progress, out));
  // Configurations invalid at enumeration are rows like any search's.
  for (const Config& c : out.configs) {
    if (!c.invalid.empty()) out.results[static_cast<size_t>(c.index)] = evaluator.Evaluate(c);
  }
  if (rank == 0) {
    out.ranking = RankResults(out.results);
  } else {
    out.results.clear();
    out.bounds.clear();
  }
  out.wall_time_s = Seconds(start);
  return out;
}

}  // namespace

StatusOr<SearchOutcome> RunGridSearch(const Experiment& e, MPI_Comm comm,
                                      const SearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const int rank = RankIn(comm), size = SizeOf(comm);
  SearchOutcome out;
  out.ranks = size;
  out.configs = EnumerateConfigs(e);
  const auto n = static_cast<int64_t>(out.configs.size());
  const uint64_t fingerprint = JournalFingerprint(e, options.tool_revision, n);
  std::vector<ConfigResult> prior;
  std::vector<char> todo(out.configs.size(), 1);
  DISTIR_RETURN_IF_ERROR(PrepareJournal(options, fingerprint, comm, rank, prior, todo));
  out.resumed = n - std::count(todo.begin(), todo.end(), 1);
  if (e.strategy.kind == StrategyKind::kAnneal) {
    return AnnealSearch(e, comm, options, fingerprint, rank, size, prior, start, std::move(out));
  }
  // A random strategy evaluates only what it picks (all: the grid).
  const std::vector<char> picked = e.strategy.kind == StrategyKind::kRandom
                                       ? RandomPick(out.configs, e.strategy.budget, e.strategy.seed)
                                       : std::vector<char>(out.configs.size(), 1);
  for (size_t i = 0; i < todo.size(); ++i) todo[i] = todo[i] && picked[i];
  if (rank == 0 && options.progress != nullptr && options.resume) {
    *options.progress << "[search] resuming: " << out.resumed << " of " << n
                      << " configurations already done, " << n - out.resumed << " to go\n";
  }
  Evaluator evaluator(e, EvaluatorOptionsOf(options));
  // A template's configurations on one rank, one after the other: the
  // evaluator keeps its last template, so each is built once.
  std::vector<Slice> units = AssignUnits(
      e, out.configs, size, todo, [&](const Config& c) { return evaluator.TemplateKey(c); },
      [&](const Config& c) { return evaluator.MicroBatchOf(c); });
  const auto left = static_cast<size_t>(std::count(todo.begin(), todo.end(), 1));
  RankJournal journal(options, fingerprint, rank);
  const bool report = options.progress != nullptr && rank == 0;
  std::optional<ProgressEstimator> estimate;
  std::vector<double> cost_of;
  std::vector<double> own_seconds;  // rank 0's own evaluations before the estimator
  std::vector<char> packed;
  double last_report = 0;  // the first line a second in: a shorter search prints none
  bool evaluated = false;
  {
    // A rank done with its slice takes the next unit of the slice with the
    // most estimated cost left (unit_queue.h).
    UnitQueue queue(std::move(units), comm);
    // Made at the first progress line: predicting every configuration's cost
    // takes rank 0 ~45 ms on the GPT-2 1.6B grid (5 % of its 0.9 s two-rank
    // search), which a search shorter than a second does not spend. Before
    // the queue it was serial: making the queue is collective.
    auto estimator = [&]() -> ProgressEstimator& {
      if (!estimate) {
        estimate.emplace(MakeEstimator(evaluator, out.configs, queue.slices(), cost_of));
        for (double seconds : own_seconds) estimate->Record(seconds);
      }
      return *estimate;
    };
    while (std::optional<UnitQueue::Taken> taken = queue.Next()) {
      for (int64_t i : *taken->unit) {
        const auto evaluation = std::chrono::steady_clock::now();
        const ConfigResult r = evaluator.Evaluate(out.configs[static_cast<size_t>(i)]);
        // The estimate follows rank 0's own slice (what others take of it
        // shows as done sooner).
        if (report && taken->own) {
          if (estimate) {
            estimate->Record(Seconds(evaluation));
          } else {
            own_seconds.push_back(Seconds(evaluation));
          }
        }
        journal.Append(r);
        PackResult(r, packed);
        evaluated = true;
        const double t = Seconds(start);
        if (report && t - last_report >= 1.0) {
          last_report = t;
          if (taken->own) {
            ReportProgress(*options.progress, estimator(), left, t);
          } else {
            ReportTail(*options.progress, estimator(), cost_of, queue.NotTaken(), left, size);
          }
        }
      }
    }
  }
  if (report && evaluated && estimate)
    ReportProgress(*options.progress, *estimate, left, Seconds(start));
  const std::vector<char> all = GatherPacked(packed, comm, rank, size);
  if (rank == 0) {
    out.results.resize(out.configs.size());
    for (size_t i = 0; i < out.configs.size(); ++i) {
      if (!picked[i]) out.results[i] = Skipped(static_cast<int64_t>(i), e.strategy);
    }
    for (ConfigResult& r : prior) out.results[static_cast<size_t>(r.index)] = std::move(r);
    DISTIR_RETURN_IF_ERROR(UnpackInto(all, out.results));
    out.ranking = RankResults(out.results);
  }
  out.wall_time_s = Seconds(start);
  return out;
}

}  // namespace distir::search
