#include "io/output_claim.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/results_file.h"
#include "testing/test_util.h"

namespace distir::io {
namespace {

namespace fs = std::filesystem;
using ::distir::testing::StatusIs;

// Issue 20: the output of a search is checked, resolved and locked before any
// work (output_claim.h).
class OutputClaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // mkdtemp: CTest runs these tests as parallel processes, and a name made of
    // the gtest seed and an address collided under ASan (two tests removed
    // each other's directory).
    std::string tmpl = (fs::temp_directory_path() / "distir-claim-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << "mkdtemp failed";
    dir_ = tmpl;
    fs::create_directories(dir_ + "/sub");
    std::ofstream(Path("exp.yaml")) << "name: x\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::vector<RunInput> Inputs() const { return {{"the experiment file", Path("exp.yaml")}}; }

  std::string dir_;
};

TEST_F(OutputClaimTest, ResolvesChainsOfRelativeAndDanglingLinks) {
  fs::create_symlink("sub/b.h5", Path("a.h5"));
  fs::create_symlink("c.h5", Path("sub/b.h5"));  // relative to sub/, and dangling
  ASSERT_OK_AND_ASSIGN(std::string target, ResolveOutputPath(Path("a.h5")));
  EXPECT_EQ(target, Path("sub/c.h5"));
  ASSERT_OK_AND_ASSIGN(target, ResolveOutputPath(Path("plain.h5")));
  EXPECT_EQ(target, Path("plain.h5"));
  fs::create_symlink("loop2", Path("loop1"));
  fs::create_symlink("loop1", Path("loop2"));
  EXPECT_THAT(ResolveOutputPath(Path("loop1")),
              StatusIs(StatusCode::kInvalidArgument, "a chain of more than 40 symbolic links"));
}

TEST_F(OutputClaimTest, RefusesDirectoriesDevicesAndMissingDirectories) {
  EXPECT_THAT(CheckOutputPath(Path("sub"), "sub", {}),
              StatusIs(StatusCode::kInvalidArgument, "the output is a directory"));
  EXPECT_THAT(CheckOutputPath(Path("sub/"), "sub/", {}),
              StatusIs(StatusCode::kInvalidArgument, "the output names a directory"));
  EXPECT_THAT(CheckOutputPath("/dev/null", "/dev/null", {}),
              StatusIs(StatusCode::kInvalidArgument, "is not a regular file"));
  EXPECT_THAT(CheckOutputPath(Path("none/r.h5"), "none/r.h5", {}),
              StatusIs(StatusCode::kInvalidArgument,
                       "the output directory '" + Path("none") + "' does not exist"));
  const Status long_name = CheckOutputPath(Path(std::string(250, 'r')), "long", {});
  EXPECT_THAT(long_name, StatusIs(StatusCode::kInvalidArgument, "file name is too long"));
  EXPECT_EQ(long_name.loc().file, "long");
  EXPECT_OK(CheckOutputPath(Path("new.h5"), "new.h5", Inputs()));
}

TEST_F(OutputClaimTest, RefusesTheRunsInputsUnderAnyName) {
  const Status same = CheckOutputPath(Path("sub/../exp.yaml"), "sub/../exp.yaml", Inputs());
  EXPECT_THAT(same, StatusIs(StatusCode::kInvalidArgument,
                             "the output is the experiment file ('" + Path("exp.yaml") +
                                 "'), an input of this run; choose another output with -o"));
  EXPECT_EQ(same.loc().file, "sub/../exp.yaml");
  fs::create_symlink("exp.yaml", Path("link.h5"));
  EXPECT_THAT(ClaimOutput(Path("link.h5"), Inputs()),
              StatusIs(StatusCode::kInvalidArgument, "the output is the experiment file"));
  EXPECT_FALSE(fs::exists(Path("exp.yaml.lock")));
  EXPECT_OK(CheckOutputPath(Path("exp.yaml"), "exp.yaml", {{"stdin", "-"}, {"inline", ""}}));
}

TEST_F(OutputClaimTest, ASecondClaimFailsAtOnceNamingTheOutput) {
  fs::create_symlink("sub/r.h5", Path("link.h5"));
  {
    ASSERT_OK_AND_ASSIGN(OutputClaim first, ClaimOutput(Path("link.h5"), Inputs()));
    EXPECT_EQ(first.target(), Path("sub/r.h5"));
    EXPECT_EQ(first.lock_path(), Path("sub/r.h5.lock"));
    EXPECT_TRUE(fs::exists(first.lock_path()));
    // The same file by its own name: the same lock.
    StatusOr<OutputClaim> second = ClaimOutput(Path("sub/r.h5"), Inputs());
    EXPECT_THAT(second, StatusIs(StatusCode::kFailedPrecondition,
                                 "another distir search is writing this output (it holds '" +
                                     Path("sub/r.h5.lock") + "')"));
    EXPECT_EQ(second.status().loc().file, Path("sub/r.h5"));
    OutputClaim moved = std::move(first);  // still held
    EXPECT_FALSE(ClaimOutput(Path("link.h5"), Inputs()).ok());
  }
  EXPECT_FALSE(fs::exists(Path("sub/r.h5.lock")));
  ASSERT_OK_AND_ASSIGN(OutputClaim again, ClaimOutput(Path("link.h5"), Inputs()));
  EXPECT_TRUE(fs::is_symlink(Path("link.h5")));
}

TEST_F(OutputClaimTest, ALockFileLeftByAKilledRunLocksNothing) {
  std::ofstream(Path("r.h5.lock")) << "";
  ASSERT_OK_AND_ASSIGN(OutputClaim claim, ClaimOutput(Path("r.h5"), Inputs()));
  EXPECT_EQ(claim.removed_stale_tmp(), "");
}

TEST_F(OutputClaimTest, RemovesAStaleTmpAndSaysSo) {
  std::ofstream(Path("r.h5.tmp")) << "half an HDF5 file";
  ASSERT_OK_AND_ASSIGN(OutputClaim claim, ClaimOutput(Path("r.h5"), Inputs()));
  EXPECT_EQ(claim.removed_stale_tmp(), Path("r.h5.tmp"));
  EXPECT_FALSE(fs::exists(Path("r.h5.tmp")));
}

TEST_F(OutputClaimTest, ALockPathThatIsALinkIsNotFollowed) {
  fs::create_symlink("exp.yaml", Path("r.h5.lock"));
  EXPECT_THAT(ClaimOutput(Path("r.h5"), Inputs()),
              StatusIs(StatusCode::kInternal, "cannot create the lock file"));
  EXPECT_TRUE(fs::is_symlink(Path("r.h5.lock")));
}

// WriteResultsFile removes its .tmp when the last step, the rename, fails.
TEST_F(OutputClaimTest, AFailedRenameLeavesNoTmp) {
  fs::create_directories(Path("r.h5/in_the_way"));
  const Status written = WriteResultsFile(Path("r.h5"), ResultsFile{});
  EXPECT_THAT(written, StatusIs(StatusCode::kInternal, "cannot rename"));
  EXPECT_FALSE(fs::exists(ResultsTempPath(Path("r.h5"))));
}

}  // namespace
}  // namespace distir::io
