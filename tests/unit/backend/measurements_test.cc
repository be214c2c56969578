// /measured in a results file (src/io/measurements.h): a round trip on a file
// written by WriteResultsFile, the atomic replacement (no <path>.tmp left, a
// second write replaces the group, the search's groups untouched), and the
// errors for a missing file, a file without the group and a non-HDF5 file.

#include "io/measurements.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

#include "io/results_file.h"
#include "testing/test_util.h"

namespace distir::io {
namespace {

using ::distir::testing::StatusIs;

class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              (name + "-" + std::to_string(::getpid()) + "-" +
               std::to_string(reinterpret_cast<uintptr_t>(this)))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

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

// A small search result: three configurations, two ranked.
ResultsFile SearchResults() {
  ResultsFile f;
  f.experiment_name = "tiny";
  f.model = "mlp-tiny";
  f.hardware = "dgx2-v100";
  f.experiment_yaml = "name: tiny\n";
  f.hardware_yaml = "name: dgx2-v100\n";
  for (int64_t i = 0; i < 3; ++i) {
    ResultRow r;
    r.index = i;
    r.batch = 16;
    r.dp = i + 1;
    r.schedule = "1f1b";
    r.status = "ok";
    r.iteration_time_s = 0.01 * static_cast<double>(i + 1);
    r.fits = i < 2;
    r.rank = i < 2 ? i + 1 : 0;
    f.rows.push_back(r);
  }
  f.ranking = {0, 1};
  return f;
}

Measurements Sample() {
  Measurements m;
  m.backend = "cpu";
  m.ranks = 2;
  m.started_at = "2025-01-31T12:00:00Z";
  m.host = {"node-7", "AMD EPYC 7B13 64-Core Processor", 2};
  m.has_spread = true;
  MeasuredRow ok{0, 0.0125, 1280.5, 3, 4096, "ok", ""};
  ok.time_min_s = 0.0120;
  ok.time_q1_s = 0.01225;
  ok.time_q3_s = 0.0130;
  ok.time_max_s = 0.0135;
  ok.iteration_times_s = {0.0135, 0.0120, 0.0125};
  m.rows.push_back(ok);
  m.rows.push_back({2, 0, 0, 0, 0, "skipped", "needs 8 devices, the job has 2 ranks"});
  m.rows.push_back({1, 0, 0, 0, 0, "error", "AllToAll is not run by the cpu backend (\xc3\xa9)"});
  return m;
}

// Whole-struct equality (io/measurements.h defines ==): a field the reader
// forgets fails here.
void ExpectEqual(const Measurements& a, const Measurements& b) { EXPECT_TRUE(a == b); }

TEST(MeasurementsTest, RoundTripsAndLeavesTheSearchGroupsAndNoTemporaryFile) {
  TempDir dir("distir-measured");
  const std::string path = dir.File("results.h5");
  ASSERT_OK(WriteResultsFile(path, SearchResults()));
  ASSERT_OK(WriteMeasurements(path, Sample()));
  EXPECT_EQ(dir.Names(), (std::vector<std::string>{"results.h5"}));
  ASSERT_OK_AND_ASSIGN(Measurements m, ReadMeasurements(path));
  ExpectEqual(m, Sample());
  ASSERT_OK_AND_ASSIGN(ResultsFile f, ReadResultsFile(path));
  EXPECT_EQ(f.experiment_name, "tiny");
  EXPECT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(f.ranking, (std::vector<int64_t>{0, 1}));
}

// An "ok" row whose time cannot be divided by (a file edited by hand) is
// refused when read: validate printed a MAPE of -nan % (fuzz_results case 853).
TEST(MeasurementsTest, OkRowsNeedAFinitePositiveTime) {
  TempDir dir("distir-measured");
  const std::string path = dir.File("results.h5");
  ASSERT_OK(WriteResultsFile(path, SearchResults()));
  for (double bad : {-std::numeric_limits<double>::infinity(), 0.0,
                     std::numeric_limits<double>::quiet_NaN()}) {
    Measurements m = Sample();
    m.rows[0].iteration_time_s = bad;
    ASSERT_OK(WriteMeasurements(path, m));
    EXPECT_THAT(ReadMeasurements(path),
                StatusIs(StatusCode::kInvalidArgument,
                         "/measured row of configuration 0 is ok but its iteration time"))
        << bad;
  }
}

TEST(MeasurementsTest, SecondWriteReplacesTheGroup) {
  TempDir dir("distir-measured-twice");
  const std::string path = dir.File("results.h5");
  ASSERT_OK(WriteResultsFile(path, SearchResults()));
  ASSERT_OK(WriteMeasurements(path, Sample()));
  Measurements second;
  second.backend = "cpu";
  second.ranks = 4;
  second.started_at = "2025-02-01T00:00:00Z";
  second.rows.push_back({1, 0.5, 32, 10, 123, "ok", ""});  // no spread recorded
  ASSERT_OK(WriteMeasurements(path, second));
  EXPECT_EQ(dir.Names(), (std::vector<std::string>{"results.h5"}));
  ASSERT_OK_AND_ASSIGN(Measurements m, ReadMeasurements(path));
  ExpectEqual(m, second);
  // An empty measurement replaces it too.
  Measurements empty;
  empty.backend = "cpu";
  ASSERT_OK(WriteMeasurements(path, empty));
  ASSERT_OK_AND_ASSIGN(Measurements e, ReadMeasurements(path));
  EXPECT_TRUE(e.rows.empty());
  EXPECT_EQ(e.ranks, 0);
}

TEST(MeasurementsTest, IterationTimesMustMatchTheIterations) {
  TempDir dir("distir-measured-times");
  const std::string path = dir.File("results.h5");
  ASSERT_OK(WriteResultsFile(path, SearchResults()));
  Measurements m = Sample();
  m.rows[0].iteration_times_s.pop_back();
  EXPECT_THAT(WriteMeasurements(path, m),
              StatusIs(StatusCode::kInvalidArgument,
                       "/measured row of configuration 0 has 2 iteration times for 3 iterations"));
  m = Sample();
  m.has_spread = false;  // then no row may carry times
  EXPECT_THAT(WriteMeasurements(path, m),
              StatusIs(StatusCode::kInvalidArgument, "but has_spread is false"));
  EXPECT_THAT(ReadMeasurements(path), StatusIs(StatusCode::kNotFound, "no /measured group"));
}

TEST(MeasurementsTest, MissingFileIsNotFoundAndCreatesNothing) {
  TempDir dir("distir-measured-missing");
  const std::string path = dir.File("nope.h5");
  EXPECT_THAT(WriteMeasurements(path, Sample()),
              StatusIs(StatusCode::kNotFound, path + ": no such results file"));
  EXPECT_THAT(ReadMeasurements(path), StatusIs(StatusCode::kNotFound, "no such results file"));
  EXPECT_TRUE(dir.Names().empty());
}

TEST(MeasurementsTest, FileWithoutTheGroupSaysToRunFirst) {
  TempDir dir("distir-measured-none");
  const std::string path = dir.File("results.h5");
  ASSERT_OK(WriteResultsFile(path, SearchResults()));
  EXPECT_THAT(ReadMeasurements(path),
              StatusIs(StatusCode::kNotFound, "has no /measured group: run `distir run` first"));
}

TEST(MeasurementsTest, NonHdf5FileIsAnErrorAndIsLeftUnchanged) {
  TempDir dir("distir-measured-text");
  const std::string path = dir.File("results.h5");
  std::ofstream(path) << "not hdf5\n";
  EXPECT_THAT(WriteMeasurements(path, Sample()), StatusIs(StatusCode::kInternal, path));
  EXPECT_EQ(dir.Names(), (std::vector<std::string>{"results.h5"}));
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "not hdf5");
  EXPECT_THAT(ReadMeasurements(path), StatusIs(StatusCode::kInvalidArgument, "not an HDF5 file"));
}

}  // namespace
}  // namespace distir::io
