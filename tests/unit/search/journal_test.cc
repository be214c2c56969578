#include "search/journal.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "search/result_codec.h"

namespace distir::search {
namespace {

namespace fs = std::filesystem;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // mkdtemp: CTest runs tests as parallel processes, where a seed-and-address
    // name can collide.
    std::string tmpl = (fs::temp_directory_path() / "distir-journal-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << "mkdtemp failed";
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string File(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

ConfigResult Result(int64_t index) {
  ConfigResult r;
  r.index = index;
  r.status = index % 3 == 0 ? ConfigStatus::kInvalid : ConfigStatus::kOk;
  r.reason = index % 3 == 0 ? "batch / (D * K) < 1" : "";
  r.iteration_time_s = 0.1 + static_cast<double>(index) / 7.0;  // not exact in binary
  r.throughput = 1e6 / r.iteration_time_s;
  r.peak_memory_bytes = 1000 * index;
  r.fits = index % 2 == 0;
  r.num_ops = 17 * index;
  r.exposed_communication_s = 0.01 + static_cast<double>(index) / 11.0;
  r.step.tokens_per_s = 1e5 / 3.0 + static_cast<double>(index);
  r.step.tflops_per_gpu = 150.0 / 7.0;
  r.step.mfu = 0.1 * static_cast<double>(index) / 3.0;
  for (size_t k = 0; k < r.step.memory_at_peak.size(); ++k)
    r.step.memory_at_peak[k] = (int64_t{1} << 33) * static_cast<int64_t>(k) + index;
  r.evaluation = static_cast<Evaluation>(index % 5);
  return r;
}

void ExpectSame(const ConfigResult& a, const ConfigResult& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);  // bit for bit
  EXPECT_EQ(a.throughput, b.throughput);
  EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes);
  EXPECT_EQ(a.fits, b.fits);
  EXPECT_EQ(a.num_ops, b.num_ops);
  EXPECT_EQ(a.exposed_communication_s, b.exposed_communication_s);  // bit for bit
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.evaluation, b.evaluation);
}

TEST(ResultCodecTest, RoundTripsEveryFieldAndRejectsShortInput) {
  std::vector<char> bytes;
  PackResult(Result(3), bytes);
  PackResult(Result(4), bytes);
  ConfigResult r;
  const std::optional<size_t> first = UnpackResult(bytes.data(), bytes.size(), r);
  ASSERT_TRUE(first.has_value());
  ExpectSame(r, Result(3));
  ASSERT_TRUE(UnpackResult(bytes.data() + *first, bytes.size() - *first, r).has_value());
  ExpectSame(r, Result(4));
  for (size_t cut = 0; cut < *first; ++cut) {
    EXPECT_FALSE(UnpackResult(bytes.data(), cut, r).has_value()) << cut << " bytes";
  }
}

TEST_F(JournalTest, MissingDirectoryIsAnEmptyJournal) {
  StatusOr<std::vector<ConfigResult>> read = ReadJournal(File("none"), 1, 10);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->empty());
}

TEST_F(JournalTest, ReadsBackWhatRanksAppendedMergedByIndex) {
  {
    JournalWriter a, b;
    ASSERT_TRUE(a.Open(File("rank0.bin"), 42).ok());
    ASSERT_TRUE(b.Open(File("rank1.bin"), 42).ok());
    for (int64_t i : {5, 1, 7}) ASSERT_TRUE(a.Append(Result(i)).ok());
    for (int64_t i : {0, 6}) ASSERT_TRUE(b.Append(Result(i)).ok());
  }
  StatusOr<std::vector<ConfigResult>> read = ReadJournal(dir_, 42, 8);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 5u);
  const std::vector<int64_t> want = {0, 1, 5, 6, 7};
  for (size_t i = 0; i < want.size(); ++i) ExpectSame((*read)[i], Result(want[i]));
}

// A writer killed mid-record leaves a torn tail: every cut of the file reads
// back exactly the records that were complete before the cut.
TEST_F(JournalTest, TornTailKeepsEveryCompleteRecord) {
  {
    JournalWriter w;
    ASSERT_TRUE(w.Open(File("rank0.bin"), 9).ok());
    for (int64_t i = 0; i < 4; ++i) ASSERT_TRUE(w.Append(Result(i)).ok());
  }
  const auto full = static_cast<size_t>(fs::file_size(File("rank0.bin")));
  std::ifstream in(File("rank0.bin"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<size_t> counts;
  for (size_t cut = 0; cut <= full; ++cut) {
    std::ofstream(File("rank0.bin"), std::ios::binary | std::ios::trunc) << bytes.substr(0, cut);
    StatusOr<std::vector<ConfigResult>> read = ReadJournal(dir_, 9, 4);
    ASSERT_TRUE(read.ok()) << "cut " << cut << ": " << read.status().ToString();
    for (size_t i = 0; i < read->size(); ++i) ExpectSame((*read)[i], Result(static_cast<int64_t>(i)));
    ASSERT_TRUE(counts.empty() || read->size() >= counts.back()) << "cut " << cut;
    counts.push_back(read->size());
  }
  EXPECT_EQ(counts.front(), 0u);
  EXPECT_EQ(counts.back(), 4u);
}

TEST_F(JournalTest, CorruptRecordEndsTheFile) {
  {
    JournalWriter w;
    ASSERT_TRUE(w.Open(File("rank0.bin"), 9).ok());
    for (int64_t i = 0; i < 3; ++i) ASSERT_TRUE(w.Append(Result(i)).ok());
  }
  // Flip a byte inside the second record's payload: its checksum fails.
  std::vector<char> one;
  PackResult(Result(0), one);
  const size_t second = 16 + (4 + one.size() + 8) + 4 + 20;
  std::fstream f(File("rank0.bin"), std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(second));
  f.put('\x7f');
  f.close();
  StatusOr<std::vector<ConfigResult>> read = ReadJournal(dir_, 9, 3);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 1u);
  ExpectSame((*read)[0], Result(0));
}

TEST_F(JournalTest, AnotherFingerprintIsAnErrorNamingTheFile) {
  {
    JournalWriter w;
    ASSERT_TRUE(w.Open(File("rank0.bin"), 1).ok());
    ASSERT_TRUE(w.Append(Result(0)).ok());
  }
  StatusOr<std::vector<ConfigResult>> read = ReadJournal(dir_, 2, 3);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("rank0.bin belongs to another experiment"),
            std::string::npos)
      << read.status().message();
}

TEST_F(JournalTest, ForeignFileAndOutOfRangeIndexAreErrors) {
  std::ofstream(File("x.bin")) << "this is not a journal at all";
  EXPECT_FALSE(ReadJournal(dir_, 1, 3).ok());
  fs::remove(File("x.bin"));
  {
    JournalWriter w;
    ASSERT_TRUE(w.Open(File("rank0.bin"), 1).ok());
    ASSERT_TRUE(w.Append(Result(5)).ok());
  }
  StatusOr<std::vector<ConfigResult>> read = ReadJournal(dir_, 1, 3);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("configuration 5 of an experiment with 3"),
            std::string::npos)
      << read.status().message();
}

TEST_F(JournalTest, ResetConsolidatesIntoOneBaseFile) {
  {
    JournalWriter w;
    ASSERT_TRUE(w.Open(File("rank3.bin"), 4).ok());
    ASSERT_TRUE(w.Append(Result(2)).ok());
  }
  ASSERT_TRUE(ResetJournal(dir_, 4, {Result(1), Result(2)}).ok());
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"base.bin"});
  StatusOr<std::vector<ConfigResult>> read = ReadJournal(dir_, 4, 3);
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), 2u);
  ExpectSame((*read)[1], Result(2));
  ASSERT_TRUE(RemoveJournal(dir_).ok());
  EXPECT_FALSE(fs::exists(dir_));
}

TEST(JournalFingerprintTest, ChangesWithTheExperimentTheBinaryAndTheGrid) {
  Experiment e;
  e.yaml_text = "name: a\n";
  e.hardware_text = "name: h\n";
  const uint64_t base = JournalFingerprint(e, "abc", 10);
  EXPECT_EQ(JournalFingerprint(e, "abc", 10), base);
  EXPECT_NE(JournalFingerprint(e, "abd", 10), base);
  EXPECT_NE(JournalFingerprint(e, "abc", 11), base);
  Experiment f = e;
  f.hardware_text = "name: i\n";
  EXPECT_NE(JournalFingerprint(f, "abc", 10), base);
  EXPECT_EQ(JournalDir("out/x.h5"), "out/x.h5.journal");
}

// Issue 20: a search that fails removes the journal it made, on every failure
// path; one it resumed from holds an earlier run's work and stays.
TEST_F(JournalTest, CleanupRemovesTheJournalARunMadeUnlessDismissed) {
  const std::string journal = File("r.h5.journal");
  {
    JournalCleanup cleanup(journal, /*resume=*/false);
    EXPECT_TRUE(cleanup.owned());
    ASSERT_TRUE(ResetJournal(journal, 7, {Result(1)}).ok());
  }  // the run failed
  EXPECT_FALSE(fs::exists(journal));
  {
    JournalCleanup cleanup(journal, /*resume=*/true);  // nothing to resume: the run's own
    ASSERT_TRUE(ResetJournal(journal, 7, {Result(1)}).ok());
    cleanup.Dismiss();  // the run succeeded (and removes the journal itself)
  }
  EXPECT_TRUE(fs::exists(journal));
}

TEST_F(JournalTest, CleanupKeepsAJournalResumedFromAndWhatIsNotAJournal) {
  const std::string journal = File("r.h5.journal");
  ASSERT_TRUE(ResetJournal(journal, 7, {Result(1)}).ok());
  {
    JournalCleanup cleanup(journal, /*resume=*/true);
    EXPECT_FALSE(cleanup.owned());
  }
  EXPECT_TRUE(fs::exists(journal + "/base.bin"));
  {
    JournalCleanup cleanup(journal, /*resume=*/false);  // discarded by the run: its own
    EXPECT_TRUE(cleanup.owned());
  }
  EXPECT_FALSE(fs::exists(journal));
  std::ofstream(journal) << "a file the user put there";
  {
    JournalCleanup cleanup(journal, /*resume=*/false);
    EXPECT_FALSE(cleanup.owned());
  }
  EXPECT_TRUE(fs::is_regular_file(journal));
}

}  // namespace
}  // namespace distir::search
