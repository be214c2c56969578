// `distir validate` end to end: a results file with /configs and /measured is
// built here with the io writers, the binary is run on it, and its printout, exit
// code and the stored /validation group are checked against hand-computed values.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <sys/wait.h>

#include "io/measurements.h"
#include "io/results_file.h"
#include "io/validation_file.h"
#include "testing/test_util.h"

namespace distir {
namespace {

struct CommandRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandRun Validate(const std::string& path) {
  const std::string cmd = std::string(DISTIR_BINARY) + " validate '" + path + "' 2>&1";
  CommandRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), pipe) != nullptr) r.output += buf.data();
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("distir_validate_" + name + ".h5")).string();
}

// Six configurations: 0 invalid, 1..5 simulated. Configs 2, 3, 4, 5 simulate at
// 1.25, 2.5, 5, 10 s (throughput 40, 30, 20, 10 for batch 50, 75, 100, 100).
io::ResultsFile Simulated() {
  io::ResultsFile f;
  f.experiment_name = "validate-test";
  for (int64_t i = 0; i < 6; ++i) {
    io::ResultRow r;
    r.index = i;
    r.status = i == 0 ? "invalid" : "ok";
    f.rows.push_back(r);
  }
  const double times[] = {1.25, 2.5, 5.0, 10.0}, tps[] = {40, 30, 20, 10};
  for (int64_t i = 0; i < 4; ++i) {
    f.rows[static_cast<size_t>(i + 2)].iteration_time_s = times[i];
    f.rows[static_cast<size_t>(i + 2)].throughput = tps[i];
  }
  f.rows[1].iteration_time_s = 1;
  f.rows[1].throughput = 1;
  return f;
}

// Measured 25 % faster than simulated everywhere, with configs 4 and 5 swapped in
// throughput (8 and 16), and config 1 skipped.
io::Measurements Measured() {
  io::Measurements m;
  m.backend = "cpu";
  m.ranks = 2;
  m.started_at = "2025-01-01T00:00:00Z";
  m.rows.push_back({1, 0, 0, 0, 0, "skipped", "needs 4 devices, the job has 2"});
  const double times[] = {1.0, 2.0, 4.0, 8.0}, tps[] = {32, 24, 8, 16};
  for (int64_t i = 0; i < 4; ++i) m.rows.push_back({i + 2, times[i], tps[i], 5, 1024, "ok", ""});
  return m;
}

// Simulated ranks of configs 2..5 by throughput: 4 3 2 1; measured: 4 3 1 2.
// d^2 = 2, rho = 1 - 6*2/(4*15) = 0.8, t = 0.8*sqrt(2/0.36) = 1.8856 on 2 dof,
// p = 0.2; tau = (5 - 1)/6 = 2/3; MAPE = 25 %; both rank config 2 first.
TEST(ValidateCommandTest, PrintsAndStoresTheStatistics) {
  const std::string path = TempPath("ok");
  ASSERT_OK(io::WriteResultsFile(path, Simulated()));
  ASSERT_OK(io::WriteMeasurements(path, Measured()));
  CommandRun r = Validate(path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("validation of 4 configurations"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Spearman rho        0.8000"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MAPE iteration time 25.00 %"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("top-1               match"), std::string::npos) << r.output;
  ASSERT_OK_AND_ASSIGN(io::ValidationRecord v, io::ReadValidation(path));
  EXPECT_EQ(v.n, 4);
  EXPECT_NEAR(v.spearman_rho, 0.8, 1e-12);
  EXPECT_NEAR(v.spearman_p, 0.2, 1e-9);
  EXPECT_NEAR(v.kendall_tau, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(v.mape_iteration_time, 25.0, 1e-12);
  EXPECT_TRUE(v.top1_match);
  EXPECT_EQ(v.simulated_top1_config, 2);
  EXPECT_EQ(v.measured_top1_config, 2);
  // The rest of the file is intact, and validating again replaces /validation.
  ASSERT_OK_AND_ASSIGN(io::ResultsFile back, io::ReadResultsFile(path));
  EXPECT_EQ(back.rows.size(), 6u);
  EXPECT_EQ(Validate(path).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove(path);
}

TEST(ValidateCommandTest, FileWithoutMeasurementsIsAnInputError) {
  const std::string path = TempPath("unmeasured");
  ASSERT_OK(io::WriteResultsFile(path, Simulated()));
  CommandRun r = Validate(path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no /measured group"), std::string::npos) << r.output;
  EXPECT_THAT(io::ReadValidation(path), testing::StatusIs(StatusCode::kNotFound, "no /validation"));
  std::filesystem::remove(path);
}

TEST(ValidateCommandTest, FewerThanThreePairsIsAnInputError) {
  const std::string path = TempPath("two");
  ASSERT_OK(io::WriteResultsFile(path, Simulated()));
  io::Measurements m = Measured();
  m.rows[3].status = m.rows[4].status = "error";  // leaves configs 2 and 3
  ASSERT_OK(io::WriteMeasurements(path, m));
  CommandRun r = Validate(path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("has 2 configurations both simulated and measured ok"), std::string::npos)
      << r.output;
  std::filesystem::remove(path);
}

TEST(ValidateCommandTest, MissingFileIsAnInputError) {
  CommandRun r = Validate(TempPath("does_not_exist"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("distir_validate_does_not_exist.h5"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace distir
