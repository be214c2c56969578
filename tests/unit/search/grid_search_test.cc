#include "search/grid_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/results_file.h"
#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::SourcePath;

// A fresh, empty directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              (name + "-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
               "-" + std::to_string(reinterpret_cast<uintptr_t>(this)))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      out.push_back(entry.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::filesystem::path path_;
};

// AssignUnits' slices as each rank's configuration indices, unit after unit.
std::vector<std::vector<int64_t>> AssignSlices(
    const Experiment& e, const std::vector<Config>& configs, int ranks,
    const std::vector<char>& todo = {},
    const std::function<std::string(const Config&)>& key = nullptr) {
  std::vector<std::vector<int64_t>> flat(static_cast<size_t>(ranks));
  const std::vector<Slice> slices = AssignUnits(e, configs, ranks, todo, key);
  for (size_t r = 0; r < slices.size(); ++r) {
    for (const std::vector<int64_t>& unit : slices[r].units)
      flat[r].insert(flat[r].end(), unit.begin(), unit.end());
  }
  return flat;
}

void ExpectSlicesPartitionAndBalance(const Experiment& e, double max_ratio) {
  const std::vector<Config> configs = EnumerateConfigs(e);
  ASSERT_FALSE(configs.empty());
  for (int ranks = 1; ranks <= 5; ++ranks) {
    const std::vector<std::vector<int64_t>> slices = AssignSlices(e, configs, ranks);
    ASSERT_EQ(slices.size(), static_cast<size_t>(ranks));
    std::vector<int> seen(configs.size(), 0);
    std::vector<double> load;
    for (const std::vector<int64_t>& slice : slices) {
      double sum = 0;
      for (int64_t i : slice) {
        ASSERT_GE(i, 0);
        ASSERT_LT(i, static_cast<int64_t>(configs.size()));
        ++seen[static_cast<size_t>(i)];
        sum += EstimatedCost(e, configs[static_cast<size_t>(i)]);
      }
      load.push_back(sum);
    }
    for (size_t i = 0; i < seen.size(); ++i)
      EXPECT_EQ(seen[i], 1) << "config " << i << ", " << ranks << " ranks";
    const double lo = *std::min_element(load.begin(), load.end());
    const double hi = *std::max_element(load.begin(), load.end());
    ASSERT_GT(lo, 0) << ranks << " ranks";
    EXPECT_LE(hi / lo, max_ratio) << ranks << " ranks";
    // Deterministic: the same call gives the same slices.
    EXPECT_EQ(AssignSlices(e, configs, ranks), slices);
  }
}

TEST(GridSearchTest, SlicesCoverEveryConfigurationOnceAndBalanceThePaperGrid) {
  ASSERT_OK_AND_ASSIGN(Experiment e,
                       LoadExperiment(SourcePath("configs/experiments/gpt2-1.6b.yaml")));
  ExpectSlicesPartitionAndBalance(e, 1.02);
}

TEST(GridSearchTest, SlicesCoverEveryConfigurationOnceAndBalanceTheExample) {
  ASSERT_OK_AND_ASSIGN(Experiment e,
                       LoadExperiment(SourcePath("configs/experiments/example.yaml")));
  ExpectSlicesPartitionAndBalance(e, 1.25);
}

// With the evaluator's template keys: a key's configurations on one rank (the
// template is built once), every configuration once, the load still balanced.
TEST(GridSearchTest, SlicesKeepATemplatesConfigurationsOnOneRank) {
  ASSERT_OK_AND_ASSIGN(Experiment e,
                       LoadExperiment(SourcePath("configs/experiments/gpt2-1.6b.yaml")));
  const std::vector<Config> configs = EnumerateConfigs(e);
  const Evaluator evaluator(e);
  auto key = [&](const Config& c) { return evaluator.TemplateKey(c); };
  size_t shared = 0;  // configurations whose key another one has
  std::map<std::string, int> count;
  for (const Config& c : configs) ++count[key(c)];
  for (const auto& [k, n] : count) shared += k.empty() || n < 2 ? 0 : static_cast<size_t>(n);
  EXPECT_GT(shared, configs.size() / 2);
  for (int ranks = 2; ranks <= 5; ++ranks) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const std::vector<std::vector<int64_t>> slices = AssignSlices(e, configs, ranks, {}, key);
    std::map<std::string, int> rank_of;
    std::vector<int> seen(configs.size(), 0);
    std::vector<double> load;
    for (int r = 0; r < ranks; ++r) {
      std::map<std::string, std::vector<double>> by_key;
      for (int64_t i : slices[static_cast<size_t>(r)]) {
        ++seen[static_cast<size_t>(i)];
        const Config& c = configs[static_cast<size_t>(i)];
        by_key[key(c).empty() ? "#" + std::to_string(i) : key(c)].push_back(EstimatedCost(e, c));
        const std::string k = key(c);
        if (k.empty()) continue;
        EXPECT_EQ(rank_of.emplace(k, r).first->second, r) << k << " is on two ranks";
      }
      // A key's configurations one after the other in the slice.
      std::set<std::string> closed;
      std::string last;
      for (int64_t i : slices[static_cast<size_t>(r)]) {
        const std::string k = key(configs[static_cast<size_t>(i)]);
        if (k != last && !last.empty()) closed.insert(last);
        EXPECT_EQ(closed.count(k), 0u) << k << " is split within the slice of rank " << r;
        last = k;
      }
      double sum = 0;  // as AssignSlices costs it
      for (const auto& [k, costs] : by_key) sum += SharedTemplateCost(costs);
      load.push_back(sum);
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(configs.size()));
    EXPECT_LE(
        *std::max_element(load.begin(), load.end()) / *std::min_element(load.begin(), load.end()),
        1.05);
    EXPECT_EQ(AssignSlices(e, configs, ranks, {}, key), slices);
  }
}

ConfigResult Result(int64_t index, double throughput, double time,
                    ConfigStatus status = ConfigStatus::kOk, bool fits = true) {
  ConfigResult r;
  r.index = index;
  r.status = status;
  r.throughput = throughput;
  r.iteration_time_s = time;
  r.fits = fits;
  return r;
}

TEST(GridSearchTest, RankResultsOrdersByThroughputThenTimeThenIndex) {
  const std::vector<ConfigResult> results = {
      Result(0, 100, 1.0),
      Result(1, 300, 1.0),
      Result(2, 900, 0.1, ConfigStatus::kOk, /*fits=*/false),  // does not fit
      Result(3, 900, 0.1, ConfigStatus::kInvalid),             // invalid
      Result(4, 300, 0.5),                                     // same throughput, faster
      Result(5, 100, 1.0),                                     // full tie with 0
      Result(6, 0, 0, ConfigStatus::kError),
      Result(7, 200, 2.0),
  };
  EXPECT_EQ(RankResults(results), (std::vector<int64_t>{4, 1, 7, 0, 5}));
  EXPECT_TRUE(RankResults({}).empty());
}

io::ResultsFile SampleFile() {
  io::ResultsFile f;
  f.experiment_name = "round-trip";
  f.model = "mlp-tiny";
  f.hardware = "dgx2-v100";
  f.experiment_yaml = "name: round-trip\nmodel: mlp-tiny\n";
  f.hardware_yaml = "name: dgx2-v100\n";
  f.tool_version = "distir 0.0.0-test";
  f.git_revision = "abc123";
  f.memory_limit_bytes = int64_t{32} << 30;
  for (int64_t i = 0; i < 3; ++i) {
    io::ResultRow r;
    r.index = i;
    r.batch = 64 << i;
    r.dp = 2;
    r.tp = 1 + i;
    r.pp = 4;
    r.microbatches = 8;
    r.schedule = i == 1 ? "gpipe" : "1f1b";
    r.recompute = i == 2;
    r.zero_stage = i;
    r.status = i == 1 ? "invalid" : "ok";
    r.reason = i == 1 ? "T = 3 does not divide the hidden width d (16), \"quoted\"" : "";
    r.iteration_time_s = 0.125 * static_cast<double>(i + 1);
    r.throughput = 1000.0 / static_cast<double>(i + 1);
    r.peak_memory_bytes = (int64_t{1} << 33) + i;
    r.fits = i != 1;
    r.num_ops = 100 + i;
    r.rank = i == 0 ? 1 : i == 2 ? 2 : 0;
    f.rows.push_back(r);
  }
  f.ranking = {0, 2};
  io::TraceRecord t;
  t.config = 0;
  t.rank = 1;
  t.device = {0, 1};
  t.start_s = {0, 0.5};
  t.end_s = {0.5, 1.0};
  t.category = {0, 1};
  t.label = {"MatMul h0", "AllReduce dw0"};
  t.memory_device = {0, 1};
  t.memory_time_s = {0, 0};
  t.memory_bytes = {1024, 2048};
  f.traces.push_back(t);
  f.ranks = 4;
  f.wall_time_s = 1.5;
  f.started_at = "2024-01-01T00:00:00Z";
  return f;
}

TEST(ResultsFileTest, RoundTripLeavesNoTemporaryFile) {
  TempDir dir("distir-results-test");
  const std::string path = (dir.path() / "out.h5").string();
  const io::ResultsFile f = SampleFile();
  ASSERT_OK(io::WriteResultsFile(path, f));
  EXPECT_EQ(dir.Names(), (std::vector<std::string>{"out.h5"}));
  ASSERT_OK_AND_ASSIGN(io::ResultsFile g, io::ReadResultsFile(path));
  EXPECT_EQ(g.experiment_name, f.experiment_name);
  EXPECT_EQ(g.model, f.model);
  EXPECT_EQ(g.hardware, f.hardware);
  EXPECT_EQ(g.experiment_yaml, f.experiment_yaml);
  EXPECT_EQ(g.hardware_yaml, f.hardware_yaml);
  EXPECT_EQ(g.tool_version, f.tool_version);
  EXPECT_EQ(g.git_revision, f.git_revision);
  EXPECT_EQ(g.ranking, f.ranking);
  ASSERT_EQ(g.rows.size(), f.rows.size());
  for (size_t i = 0; i < f.rows.size(); ++i) {
    const io::ResultRow& a = f.rows[i];
    const io::ResultRow& b = g.rows[i];
    EXPECT_EQ(b.index, a.index);
    EXPECT_EQ(b.batch, a.batch);
    EXPECT_EQ(b.dp, a.dp);
    EXPECT_EQ(b.tp, a.tp);
    EXPECT_EQ(b.pp, a.pp);
    EXPECT_EQ(b.microbatches, a.microbatches);
    EXPECT_EQ(b.schedule, a.schedule);
    EXPECT_EQ(b.recompute, a.recompute);
    EXPECT_EQ(b.zero_stage, a.zero_stage);
    EXPECT_EQ(b.status, a.status);
    EXPECT_EQ(b.reason, a.reason);
    EXPECT_EQ(b.iteration_time_s, a.iteration_time_s);
    EXPECT_EQ(b.throughput, a.throughput);
    EXPECT_EQ(b.peak_memory_bytes, a.peak_memory_bytes);
    EXPECT_EQ(b.fits, a.fits);
    EXPECT_EQ(b.num_ops, a.num_ops);
    EXPECT_EQ(b.rank, a.rank);
  }
  // Writing again replaces the file atomically.
  ASSERT_OK(io::WriteResultsFile(path, f));
  EXPECT_EQ(dir.Names(), (std::vector<std::string>{"out.h5"}));
}

TEST(ResultsFileTest, EmptyFileRoundTrips) {
  TempDir dir("distir-results-empty");
  const std::string path = (dir.path() / "empty.h5").string();
  ASSERT_OK(io::WriteResultsFile(path, io::ResultsFile{}));
  ASSERT_OK_AND_ASSIGN(io::ResultsFile g, io::ReadResultsFile(path));
  EXPECT_TRUE(g.rows.empty());
  EXPECT_TRUE(g.ranking.empty());
}

TEST(ResultsFileTest, UnwritableDirectoryLeavesNothing) {
  TempDir dir("distir-results-missing");
  const std::string path = (dir.path() / "no-such-dir" / "out.h5").string();
  EXPECT_FALSE(io::WriteResultsFile(path, SampleFile()).ok());
  EXPECT_TRUE(dir.Names().empty());
}

TEST(ResultsFileTest, ReadingANonHdf5FileFails) {
  TempDir dir("distir-results-text");
  const std::string path = (dir.path() / "not.h5").string();
  std::ofstream(path) << "not an HDF5 file\n";
  EXPECT_THAT(io::ReadResultsFile(path),
              ::distir::testing::StatusIs(StatusCode::kNotFound, "as an HDF5 file"));
  EXPECT_THAT(io::ReadResultsFile((dir.path() / "absent.h5").string()),
              ::distir::testing::StatusIs(StatusCode::kNotFound, "cannot open"));
}

}  // namespace
}  // namespace distir::search
