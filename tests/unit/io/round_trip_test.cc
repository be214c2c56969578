// Issue 19 item 8: every reader of a results file reads back every field its
// writer writes. Each test writes a struct with every field away from its
// default (so a field the reader skips keeps its default and differs), reads
// it back and compares the whole struct with == (leveldb's TestEncodeDecode).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>

#include "io/hdf5_handle.h"
#include "io/measurements.h"
#include "io/results_file.h"
#include "io/validation_file.h"
#include "testing/test_util.h"

namespace distir::io {
namespace {

namespace fs = std::filesystem;
using ::distir::testing::StatusIs;

class RoundTripTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "distir-roundtrip-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << "mkdtemp failed";
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path() const { return dir_ + "/results.h5"; }

  std::string dir_;
};

TraceRecord Trace(int64_t rank, int64_t config) {
  TraceRecord t;
  t.config = config;
  t.rank = rank;
  t.device = {0, 1, 1};
  t.start_s = {0, 0.5, 1.5};
  t.end_s = {0.5, 1.5, 2.25};
  t.category = {0, 1, 0};
  t.label = {"MatMul", "AllReduce (d0, d1)", "Relu"};
  t.memory_device = {0, 1};
  t.memory_time_s = {0.25, 1.0};
  t.memory_bytes = {4096, int64_t{1} << 40};
  return t;
}

// Two rows, both ranked; every field differs from ResultRow's defaults.
ResultsFile EveryField() {
  ResultsFile f;
  f.experiment_name = "round-trip";
  f.model = "mlp-tiny";
  f.hardware = "cpu-local";
  f.experiment_yaml = "name: round-trip\n";
  f.hardware_yaml = "name: cpu-local\n";
  f.tool_version = "0.1.0";
  f.git_revision = "abcdef123456";
  f.memory_limit_bytes = int64_t{64} << 30;
  f.optimum_gap = 0.125;
  for (int64_t i = 0; i < 2; ++i) {
    ResultRow r;
    r.index = i;
    r.batch = 64 * (i + 1);
    r.dp = 2;
    r.tp = 3;
    r.pp = 4;
    r.microbatches = 8;
    r.schedule = "1f1b";
    r.recompute = true;
    r.zero_stage = 2;
    r.status = "ok";
    r.reason =
        "r\xc3\xa9"
        "ason " +
        std::to_string(i);
    r.iteration_time_s = 0.125 * static_cast<double>(i + 1);
    r.throughput = 512.0 / static_cast<double>(i + 1);
    r.peak_memory_bytes = 123456789 + i;
    r.fits = true;
    r.num_ops = 42 + i;
    r.rank = i + 1;
    r.exposed_communication_s = 0.0625 * static_cast<double>(i + 1);
    r.evaluation = i % 2 == 0 ? "one-replica expanded" : "full";
    r.throughput_bound = 1000.5 * static_cast<double>(i + 1);
    r.step.tokens_per_s = 65536.5 + static_cast<double>(i);
    r.step.tflops_per_gpu = 180.25;
    r.step.mfu = 0.578125;
    for (size_t k = 0; k < r.step.memory_at_peak.size(); ++k)
      r.step.memory_at_peak[k] = (int64_t{1} << (30 + k)) + i;
    f.rows.push_back(r);
  }
  f.has_step_figures = true;
  f.ranking = {0, 1};
  // Ranks 2 and 10: HDF5 lists the groups "10" before "2"; the reader sorts by rank.
  f.traces = {Trace(2, 1), Trace(10, 0)};
  f.ranks = 7;
  f.wall_time_s = 12.5;
  f.started_at = "2025-01-31T12:00:00Z";
  return f;
}

TEST_F(RoundTripTest, ResultsFileReadsBackEveryField) {
  const ResultsFile f = EveryField();
  ASSERT_OK(WriteResultsFile(Path(), f));
  ASSERT_OK_AND_ASSIGN(ResultsFile back, ReadResultsFile(Path()));
  EXPECT_EQ(back.memory_limit_bytes, f.memory_limit_bytes);
  EXPECT_EQ(back.ranks, f.ranks);
  EXPECT_EQ(back.traces.size(), f.traces.size());
  EXPECT_TRUE(back == f);
}

// A file of a model other than a transformer has no step columns; one written
// before exposed_communication_s existed reads it as 0.
TEST_F(RoundTripTest, StepColumnsOnlyForTransformerModels) {
  ResultsFile f = EveryField();
  f.has_step_figures = false;
  for (ResultRow& r : f.rows) r.step = StepFigures{};
  ASSERT_OK(WriteResultsFile(Path(), f));
  ASSERT_OK_AND_ASSIGN(ResultsFile back, ReadResultsFile(Path()));
  EXPECT_FALSE(back.has_step_figures);
  EXPECT_TRUE(back == f);
}

TEST_F(RoundTripTest, EmptyResultsFileReadsBackEqual) {
  ResultsFile f;  // defaults: no rows, no traces, /run with its defaults
  ASSERT_OK(WriteResultsFile(Path(), f));
  ASSERT_OK_AND_ASSIGN(ResultsFile back, ReadResultsFile(Path()));
  EXPECT_TRUE(back == f);
}

TEST_F(RoundTripTest, MeasurementsReadBackEveryField) {
  ASSERT_OK(WriteResultsFile(Path(), EveryField()));
  Measurements m;
  m.backend = "cuda";
  m.ranks = 3;
  m.started_at = "2025-02-01T00:00:00Z";
  m.host = {"gpu-node-1", "Intel(R) Xeon(R) Platinum 8480+", 224};
  m.has_spread = true;
  MeasuredRow a{1, 0.25, 256, 4, 1 << 20, "ok", ""};
  a.time_min_s = 0.2;
  a.time_q1_s = 0.225;
  a.time_q3_s = 0.3;
  a.time_max_s = 0.5;
  a.iteration_times_s = {0.5, 0.2, 0.25, 0.25};
  MeasuredRow b{0, 0, 0, 0, 0, "skipped", "needs 24 devices, the job has 3 ranks"};
  m.rows = {a, b};
  ASSERT_OK(WriteMeasurements(Path(), m));
  ASSERT_OK_AND_ASSIGN(Measurements back, ReadMeasurements(Path()));
  EXPECT_TRUE(back == m);
  // The search's part of the file is untouched.
  ASSERT_OK_AND_ASSIGN(ResultsFile f, ReadResultsFile(Path()));
  EXPECT_TRUE(f == EveryField());
}

// The spread columns come all together or not at all, and the iteration
// times must be exactly the rows' iterations.
TEST_F(RoundTripTest, PartialOrShortSpreadIsRefused) {
  ASSERT_OK(WriteResultsFile(Path(), EveryField()));
  Measurements m;
  m.backend = "cpu";
  m.has_spread = true;
  MeasuredRow a{1, 0.25, 256, 2, 1 << 20, "ok", ""};
  a.iteration_times_s = {0.25, 0.25};
  m.rows = {a};
  ASSERT_OK(WriteMeasurements(Path(), m));
  {
    Hdf5Handle file(H5Fopen(Path().c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    ASSERT_TRUE(file.ok());
    ASSERT_GE(H5Ldelete(file.get(), "/measured/time_q3_s", H5P_DEFAULT), 0);
  }
  EXPECT_THAT(ReadMeasurements(Path()),
              StatusIs(StatusCode::kInvalidArgument, "lacks dataset /measured/time_q3_s"));
  m.rows[0].iterations = 1;  // the writer refuses two times for one iteration...
  EXPECT_THAT(WriteMeasurements(Path(), m),
              StatusIs(StatusCode::kInvalidArgument, "has 2 iteration times for 1 iterations"));
  m.rows[0].iterations = 2;
  ASSERT_OK(WriteMeasurements(Path(), m));
  {  // ...and the reader a file edited to claim three
    Hdf5Handle file(H5Fopen(Path().c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    Hdf5Handle set(H5Dopen2(file.get(), "/measured/iterations", H5P_DEFAULT), H5Dclose);
    const int64_t three = 3;
    ASSERT_GE(H5Dwrite(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &three), 0);
  }
  EXPECT_THAT(ReadMeasurements(Path()),
              StatusIs(StatusCode::kInvalidArgument,
                       "iteration_times_s holds fewer values than the rows' iterations"));
}

ValidationRecord EveryValidationField() {
  ValidationRecord v;
  v.n = 25;
  v.rank_undefined_reason = "";
  v.spearman_rho = 0.9367;
  v.spearman_p = 5.7e-12;
  v.kendall_tau = 0.8047;
  v.rho_ci_low = 0.81;
  v.rho_ci_high = 0.98;
  v.rho_ci_confidence = 0.9;
  v.bootstrap_resamples = 500;
  v.bootstrap_seed = 7;
  v.bootstrap_undefined = 3;
  v.pairs = 300;
  v.near_tie_pairs = 12;
  v.simulated_tie_pairs = 5;
  v.measured_tie_pairs = 4;
  v.discordant_pairs = 29;
  v.discordant_beyond_noise = 17;
  v.mape_iteration_time = 8.48;
  v.top1_match = true;
  v.simulated_top1_config = 38;
  v.measured_top1_config = 38;
  v.calibration_warning = "profile 'cpu-local' was calibrated on host 'a'";
  return v;
}

TEST_F(RoundTripTest, ValidationReadsBackEveryField) {
  ASSERT_OK(WriteResultsFile(Path(), EveryField()));
  const ValidationRecord v = EveryValidationField();
  ASSERT_OK(WriteValidation(Path(), v));
  ASSERT_OK_AND_ASSIGN(ValidationRecord back, ReadValidation(Path()));
  EXPECT_TRUE(back == v);
}

// An undefined rho is stored as NaN with its reason, never as a number.
TEST_F(RoundTripTest, UndefinedRankStatisticsReadBackAsNanWithTheReason) {
  ASSERT_OK(WriteResultsFile(Path(), EveryField()));
  ValidationRecord v = EveryValidationField();
  v.rank_undefined_reason = "all 25 simulated throughputs are equal";
  v.spearman_rho = v.spearman_p = v.kendall_tau = std::numeric_limits<double>::quiet_NaN();
  v.rho_ci_low = v.rho_ci_high = std::numeric_limits<double>::quiet_NaN();
  ASSERT_OK(WriteValidation(Path(), v));
  ASSERT_OK_AND_ASSIGN(ValidationRecord back, ReadValidation(Path()));
  EXPECT_EQ(back.rank_undefined_reason, v.rank_undefined_reason);
  EXPECT_TRUE(std::isnan(back.spearman_rho));
  EXPECT_TRUE(std::isnan(back.rho_ci_high));
  back.spearman_rho = v.spearman_rho = 0;  // NaN != NaN: compare the rest
  back.spearman_p = v.spearman_p = back.kendall_tau = v.kendall_tau = 0;
  back.rho_ci_low = v.rho_ci_low = back.rho_ci_high = v.rho_ci_high = 0;
  EXPECT_TRUE(back == v);
}

TEST_F(RoundTripTest, AFailedAttributeReadIsAnError) {
  ASSERT_OK(WriteResultsFile(Path(), EveryField()));
  ASSERT_OK(WriteValidation(Path(), EveryValidationField()));
  // A /run group written by hand without its attributes: refused, not defaulted.
  {
    Hdf5Handle file(H5Fopen(Path().c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    ASSERT_TRUE(file.ok());
    ASSERT_GE(H5Adelete_by_name(file.get(), "/run", "wall_time_s", H5P_DEFAULT), 0);
    ASSERT_GE(H5Adelete_by_name(file.get(), "/validation", "bootstrap_seed", H5P_DEFAULT), 0);
  }
  EXPECT_THAT(ReadResultsFile(Path()),
              StatusIs(StatusCode::kInvalidArgument, "lacks attribute wall_time_s of /run"));
  EXPECT_THAT(ReadValidation(Path()), StatusIs(StatusCode::kInvalidArgument,
                                               "lacks attribute bootstrap_seed of /validation"));
}

}  // namespace
}  // namespace distir::io
