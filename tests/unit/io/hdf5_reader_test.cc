// Issue 20: the HDF5 readers check every dataset and attribute against the
// documented layout (docs/results_format.md) before reading it. Each defect of
// testing/broken_results_file.h crashed or misread before: a 2-D column or
// /ranking, or an array where a scalar belongs, overran the read buffer (heap
// or stack corruption), 2^40 declared rows aborted on bad_alloc, and an int
// column where floats belong was silently converted.

#include "io/hdf5_reader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "io/measurements.h"
#include "io/results_file.h"
#include "io/validation_file.h"
#include "testing/broken_results_file.h"
#include "testing/test_util.h"

namespace distir::io {
namespace {

namespace fs = std::filesystem;
using ::distir::testing::ResultsDefect;
using ::distir::testing::StatusIs;
using ::distir::testing::WriteBrokenResultsFile;

class Hdf5ReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // mkdtemp: CTest runs the tests as parallel processes.
    std::string tmpl = (fs::temp_directory_path() / "distir-h5reader-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << "mkdtemp failed";
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A file with `defect`, named after it.
  std::string Broken(ResultsDefect defect) {
    const std::string path =
        dir_ + "/" + std::string(::distir::testing::ResultsDefectName(defect)) + ".h5";
    EXPECT_OK(WriteBrokenResultsFile(path, defect));
    return path;
  }

  std::string dir_;
};

TEST_F(Hdf5ReaderTest, TheValidFileReadsBackWhole) {
  const std::string path = Broken(ResultsDefect::kNone);
  ASSERT_OK_AND_ASSIGN(ResultsFile f, ReadResultsFile(path));
  EXPECT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(f.ranking, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(f.experiment_yaml, "name: broken\nmodel: mlp-tiny\n");
  EXPECT_EQ(f.tool_version, "");  // written empty, read back empty
  ASSERT_OK_AND_ASSIGN(Measurements m, ReadMeasurements(path));
  EXPECT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.backend, "cpu");
  ASSERT_OK_AND_ASSIGN(ValidationRecord v, ReadValidation(path));
  EXPECT_EQ(v.n, 3);
}

TEST_F(Hdf5ReaderTest, RefusesA2dColumn) {
  const std::string path = Broken(ResultsDefect::kColumn2d);
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': dataset /configs/dp has extent 3 x 2; the layout has a "
                           "1-D column"));
}

TEST_F(Hdf5ReaderTest, RefusesA2dRanking) {
  const std::string path = Broken(ResultsDefect::kRanking2d);
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': dataset /ranking has extent 2 x 2; the layout has a "
                           "1-D column"));
}

TEST_F(Hdf5ReaderTest, BoundsADeclaredExtentByTheFilesSize) {
  const std::string path = Broken(ResultsDefect::kHugeColumn);
  const std::string size = std::to_string(fs::file_size(path));
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': dataset /configs/dp declares 1099511627776 elements of 8 "
                           "bytes, more than the file (" +
                           size + " bytes) can hold"));
}

TEST_F(Hdf5ReaderTest, RefusesStringsWhereIntegersBelong) {
  const std::string path = Broken(ResultsDefect::kStringColumn);
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': dataset /configs/dp holds variable-length strings; the "
                           "layout has integers"));
}

TEST_F(Hdf5ReaderTest, RefusesIntegersWhereFloatsBelong) {
  const std::string path = Broken(ResultsDefect::kIntForFloat);
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': dataset /configs/throughput holds integers; the layout "
                           "has floats"));
}

TEST_F(Hdf5ReaderTest, RefusesAnArrayWhereAScalarAttributeBelongs) {
  const std::string path = Broken(ResultsDefect::kVersionArray);
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': attribute format_version of / has extent 2; the layout "
                           "has a scalar"));
}

TEST_F(Hdf5ReaderTest, RefusesAnArrayWhereAScalarTextBelongs) {
  const std::string path = Broken(ResultsDefect::kTextArray);
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': dataset /experiment/yaml has extent 3; the layout has a "
                           "scalar"));
}

TEST_F(Hdf5ReaderTest, MeasurementsRefuseA2dColumn) {
  const std::string path = Broken(ResultsDefect::kMeasured2d);
  EXPECT_OK(ReadResultsFile(path));
  EXPECT_THAT(ReadMeasurements(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path + "': dataset /measured/config has extent 3 x 2"));
}

TEST_F(Hdf5ReaderTest, ValidationRefusesAnArrayAttribute) {
  const std::string path = Broken(ResultsDefect::kValidationArray);
  EXPECT_THAT(ReadValidation(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': attribute spearman_rho of /validation has extent 4; the "
                           "layout has a scalar"));
}

// Found by the fuzz campaign (tests/fuzz): `report` ranked a row whose
// throughput an edit had made NaN, and printed "nan" as its result.
TEST_F(Hdf5ReaderTest, RefusesARankedRowWithANonFiniteResult) {
  const std::string path = Broken(ResultsDefect::kRankedNan);
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': /ranking names row 1 (status 'ok', iteration time 0.02 s, "
                           "throughput nan, peak memory 0 B); a ranked configuration is ok, "
                           "with a finite time and throughput and a peak memory, none "
                           "negative"));
}

TEST_F(Hdf5ReaderTest, RefusesARankColumnThatDisagreesWithTheRanking) {
  const std::string path = Broken(ResultsDefect::kRankMismatch);
  EXPECT_THAT(ReadResultsFile(path),
              StatusIs(StatusCode::kInvalidArgument,
                       "'" + path +
                           "': /configs/rank of row 2 is 3 but /ranking puts it at 0 (0: not "
                           "ranked)"));
}

TEST_F(Hdf5ReaderTest, MissingDatasetIsNamed) {
  const std::string path = Broken(ResultsDefect::kNone);
  ASSERT_OK_AND_ASSIGN(Hdf5Reader r, Hdf5Reader::Open(path));
  EXPECT_THAT(r.ReadInts("/configs/nope"),
              StatusIs(StatusCode::kInvalidArgument, "'" + path + "' lacks dataset /configs/nope"));
  EXPECT_THAT(r.ReadIntAttr("/", "nope"),
              StatusIs(StatusCode::kInvalidArgument, "'" + path + "' lacks attribute nope of /"));
  EXPECT_FALSE(r.Has("/nope/deeper"));
}

TEST_F(Hdf5ReaderTest, RefusesAPathThatIsNotARegularFile) {
  EXPECT_THAT(Hdf5Reader::Open(dir_),
              StatusIs(StatusCode::kInvalidArgument, "'" + dir_ + "' is not a regular file"));
}

}  // namespace
}  // namespace distir::io
