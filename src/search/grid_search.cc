#include "search/grid_search.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iomanip>

namespace distir::search {

std::vector<std::vector<int64_t>> AssignSlices(const Experiment& e,
                                               const std::vector<Config>& configs, int ranks) {
  std::vector<int64_t> order(configs.size());
  std::vector<double> cost(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    order[i] = static_cast<int64_t>(i);
    cost[i] = EstimatedCost(e, configs[i]);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return cost[static_cast<size_t>(a)] > cost[static_cast<size_t>(b)]; });
  std::vector<std::vector<int64_t>> slices(static_cast<size_t>(ranks));
  std::vector<double> load(static_cast<size_t>(ranks), 0);
  for (int64_t i : order) {
    const auto r = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    slices[r].push_back(i);
    load[r] += cost[static_cast<size_t>(i)];
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

// Results travel as bytes: fixed fields, then the reason's length and text.
void Pack(const ConfigResult& r, std::vector<char>& out) {
  auto put = [&](const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    out.insert(out.end(), c, c + n);
  };
  const auto status = static_cast<int8_t>(r.status);
  const int8_t fits = r.fits;
  const auto len = static_cast<int64_t>(r.reason.size());
  put(&r.index, 8);
  put(&status, 1);
  put(&fits, 1);
  put(&r.iteration_time_s, 8);
  put(&r.throughput, 8);
  put(&r.peak_memory_bytes, 8);
  put(&r.num_ops, 8);
  put(&len, 8);
  put(r.reason.data(), r.reason.size());
}

size_t Unpack(const char* p, ConfigResult& r) {
  size_t at = 0;
  auto get = [&](void* dst, size_t n) {
    std::memcpy(dst, p + at, n);
    at += n;
  };
  int8_t status = 0, fits = 0;
  int64_t len = 0;
  get(&r.index, 8);
  get(&status, 1);
  get(&fits, 1);
  get(&r.iteration_time_s, 8);
  get(&r.throughput, 8);
  get(&r.peak_memory_bytes, 8);
  get(&r.num_ops, 8);
  get(&len, 8);
  r.status = static_cast<ConfigStatus>(status);
  r.fits = fits != 0;
  r.reason.assign(p + at, static_cast<size_t>(len));
  return at + static_cast<size_t>(len);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

SearchOutcome RunGridSearch(const Experiment& e, MPI_Comm comm, std::ostream* progress) {
  const auto start = std::chrono::steady_clock::now();
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  SearchOutcome out;
  out.ranks = size;
  out.configs = EnumerateConfigs(e);
  const auto slices = AssignSlices(e, out.configs, size);
  const std::vector<int64_t>& mine = slices[static_cast<size_t>(rank)];

  Evaluator evaluator(e);
  std::vector<char> packed;
  size_t done = 0;
  double last_report = -1;
  for (int64_t i : mine) {
    Pack(evaluator.Evaluate(out.configs[static_cast<size_t>(i)]), packed);
    ++done;
    const double t = Seconds(start);
    if (progress != nullptr && rank == 0 && (t - last_report >= 1.0 || done == mine.size())) {
      last_report = t;
      // Rank 0's slice stands for every rank's: the slices are balanced.
      const double rate = static_cast<double>(done) * size / std::max(t, 1e-9);
      const double total = static_cast<double>(out.configs.size());
      const double finished = std::min(total, static_cast<double>(done) * size);
      *progress << "[search] " << static_cast<int64_t>(finished) << "/" << out.configs.size()
                << " configurations, " << std::fixed << std::setprecision(1) << rate
                << " configs/s, ETA " << (total - finished) / std::max(rate, 1e-9) << " s\n"
                << std::defaultfloat << std::flush;
    }
  }
  // Gather the packed results on rank 0.
  int bytes = static_cast<int>(packed.size());
  std::vector<int> counts(static_cast<size_t>(size)), offsets(static_cast<size_t>(size));
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<char> all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[static_cast<size_t>(r)] = total;
      total += counts[static_cast<size_t>(r)];
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(packed.data(), bytes, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR, 0,
              comm);
  if (rank == 0) {
    out.results.resize(out.configs.size());
    for (size_t at = 0; at < all.size();) {
      ConfigResult r;
      at += Unpack(all.data() + at, r);
      out.results[static_cast<size_t>(r.index)] = std::move(r);
    }
    out.ranking = RankResults(out.results);
  }
  out.wall_time_s = Seconds(start);
  return out;
}

}  // namespace distir::search
