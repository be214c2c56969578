#include "support/read_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "testing/test_util.h"

namespace distir {
namespace {

using ::distir::testing::StatusIs;

// A fresh directory per test: parallel CTest processes must not share names.
class ReadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/distir_read_file_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(ReadFileTest, ReadsARegularFileWhole) {
  const std::string path = Write("a.yaml", std::string("name: x\n\0tail", 13));
  ASSERT_OK_AND_ASSIGN(std::string text, ReadRegularFile(path));
  EXPECT_EQ(text, std::string("name: x\n\0tail", 13));
}

TEST_F(ReadFileTest, ReadsAnEmptyFileAsEmpty) {
  ASSERT_OK_AND_ASSIGN(std::string text, ReadRegularFile(Write("empty.yaml", "")));
  EXPECT_EQ(text, "");
}

TEST_F(ReadFileTest, MissingFileIsNotFoundNamingIt) {
  EXPECT_THAT(
      ReadRegularFile(dir_ + "/none.yaml"),
      StatusIs(StatusCode::kNotFound, "cannot open '" + dir_ + "/none.yaml': No such file"));
}

TEST_F(ReadFileTest, RefusesACharacterDeviceBeforeReading) {
  // /dev/zero never ends: reading it would exhaust memory.
  EXPECT_THAT(ReadRegularFile("/dev/zero"),
              StatusIs(StatusCode::kInvalidArgument,
                       "'/dev/zero' is a character device, not a regular file"));
}

TEST_F(ReadFileTest, RefusesADirectory) {
  EXPECT_THAT(ReadRegularFile(dir_),
              StatusIs(StatusCode::kInvalidArgument, "'" + dir_ + "' is a directory"));
}

TEST_F(ReadFileTest, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ReadRegularFile(fifo),
              StatusIs(StatusCode::kInvalidArgument, "is a FIFO, not a regular file"));
}

TEST_F(ReadFileTest, RefusesAFileLargerThanTheCap) {
  const std::string path = Write("big.yaml", std::string(101, 'x'));
  EXPECT_THAT(ReadRegularFile(path, 100),
              StatusIs(StatusCode::kInvalidArgument, "is larger than 100 bytes"));
  EXPECT_OK(ReadRegularFile(path, 101));
}

}  // namespace
}  // namespace distir
