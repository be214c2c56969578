// The text tables of search results: knobs and their filters, the table layout,
// memory units, the model label and the ranking within each batch.

#include "search/results_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "search/result_knobs.h"
#include "search/text_table.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::StatusIs;

io::ResultRow Row(int64_t index, int64_t batch, int64_t dp, std::string schedule, double time_s,
                  int64_t memory) {
  io::ResultRow r;
  r.index = index;
  r.batch = batch;
  r.dp = dp;
  r.tp = 8 / dp;
  r.schedule = std::move(schedule);
  r.status = "ok";
  r.iteration_time_s = time_s;
  r.throughput = static_cast<double>(batch) / time_s;
  r.peak_memory_bytes = memory;
  r.fits = true;
  return r;
}

// Two batches; row 4 does not fit. The ranking is by throughput across batches,
// as the search writes it.
io::ResultsFile TwoBatches() {
  io::ResultsFile f;
  f.model = "mlp-tiny";
  f.rows = {Row(0, 32, 2, "gpipe", 0.002, 3 << 20), Row(1, 32, 4, "1f1b", 0.001, 1 << 20),
            Row(2, 64, 2, "gpipe", 0.002, 5 << 20), Row(3, 64, 4, "gpipe", 0.004, 512 << 10),
            Row(4, 64, 8, "gpipe", 0.001, 9 << 20)};
  f.rows[4].fits = false;
  f.ranking = {1, 2, 0, 3};
  return f;
}

std::string Ranking(const io::ResultsFile& f, const RankingOptions& o) {
  std::ostringstream os;
  EXPECT_OK(PrintRanking(f, o, os));
  return os.str();
}

TEST(TextTableTest, AlignsColumnsAndTrimsTrailingSpaces) {
  TextTable t;
  t.AddColumn("rank", TextTable::Align::kRight);
  t.AddColumn("schedule", TextTable::Align::kLeft);
  t.AddRow({"1", "gpipe"});
  t.AddRow({"10", "1f1b"});
  std::ostringstream os;
  t.Print(os);
  EXPECT_EQ(os.str(),
            "rank  schedule\n"
            "   1  gpipe\n"
            "  10  1f1b\n");
}

TEST(ByteUnitTest, PicksTheUnitOfTheLargestValue) {
  EXPECT_STREQ(ChooseByteUnit({}).name, "B");
  EXPECT_STREQ(ChooseByteUnit({0, 1023}).name, "B");
  EXPECT_STREQ(ChooseByteUnit({10, 1024}).name, "KiB");
  EXPECT_STREQ(ChooseByteUnit({5 << 20, 10}).name, "MiB");
  EXPECT_STREQ(ChooseByteUnit({int64_t{3} << 30}).name, "GiB");
  EXPECT_STREQ(ChooseByteUnit({int64_t{2} << 40}).name, "TiB");
}

TEST(ByteUnitTest, FormatsBytesWholeAndOthersWithTwoDecimals) {
  EXPECT_EQ(FormatBytes(512, ChooseByteUnit({512})), "512");
  EXPECT_EQ(FormatBytes(1536 << 10, ChooseByteUnit({1 << 20})), "1.50");
  EXPECT_EQ(FormatBytes(512 << 10, ChooseByteUnit({1 << 20})), "0.50");
}

TEST(KnobTest, NamedByColumnOrLabel) {
  ASSERT_OK_AND_ASSIGN(Knob tp, KnobNamed("tp"));
  EXPECT_EQ(tp, Knob::kTp);
  ASSERT_OK_AND_ASSIGN(Knob t, KnobNamed("T"));
  EXPECT_EQ(t, Knob::kTp);
  ASSERT_OK_AND_ASSIGN(Knob zero, KnobNamed("zero"));
  EXPECT_EQ(zero, Knob::kZeroStage);
  EXPECT_THAT(KnobNamed("status").status(),
              StatusIs(StatusCode::kInvalidArgument, "unknown knob 'status'"));
}

TEST(KnobFilterTest, ParsesAndCanonicalisesValues) {
  ASSERT_OK_AND_ASSIGN(KnobFilter tp, ParseKnobFilter("tp=8"));
  EXPECT_EQ(tp.knob, Knob::kTp);
  EXPECT_EQ(tp.value, "8");
  ASSERT_OK_AND_ASSIGN(KnobFilter recompute, ParseKnobFilter("recompute=1"));
  EXPECT_EQ(recompute.value, "yes");
  ASSERT_OK_AND_ASSIGN(KnobFilter zero, ParseKnobFilter("zero_stage=02"));
  EXPECT_EQ(zero.value, "2");
}

TEST(KnobFilterTest, RejectsBadFilters) {
  EXPECT_THAT(ParseKnobFilter("tp").status(),
              StatusIs(StatusCode::kInvalidArgument, "expected KNOB=VALUE"));
  EXPECT_THAT(ParseKnobFilter("fits=1").status(),
              StatusIs(StatusCode::kInvalidArgument, "unknown knob 'fits'"));
  EXPECT_THAT(ParseKnobFilter("tp=x").status(),
              StatusIs(StatusCode::kInvalidArgument, "tp takes an integer"));
  EXPECT_THAT(ParseKnobFilter("schedule=zb").status(),
              StatusIs(StatusCode::kInvalidArgument, "schedule takes gpipe or 1f1b"));
}

TEST(KnobFilterTest, DifferentKnobsAllMatchValuesOfOneKnobAreAlternatives) {
  const io::ResultRow row = Row(0, 32, 2, "gpipe", 0.001, 0);  // dp 2, tp 4
  auto filters = [](const std::vector<std::string>& texts) {
    std::vector<KnobFilter> out;
    out.reserve(texts.size());
    for (const std::string& t : texts) out.push_back(*ParseKnobFilter(t));
    return out;
  };

  EXPECT_TRUE(MatchesFilters(row, {}));
  EXPECT_TRUE(MatchesFilters(row, filters({"dp=2", "tp=4"})));
  EXPECT_FALSE(MatchesFilters(row, filters({"dp=2", "tp=8"})));
  EXPECT_TRUE(MatchesFilters(row, filters({"dp=1", "dp=2", "schedule=gpipe"})));
  EXPECT_EQ(DescribeFilters(filters({"schedule=gpipe", "dp=1", "dp=2"})),
            "(dp=1 or dp=2) and schedule=gpipe");
}

TEST(KnobSplitTest, SeparatesVaryingFromConstantKnobs) {
  const io::ResultsFile f = TwoBatches();
  // TableKnobs: v and the micro batch, which these rows do not search, are left out.
  const KnobSplit split = SplitKnobs({&f.rows[0], &f.rows[2]}, TableKnobs(f));
  EXPECT_EQ(split.varying, std::vector<Knob>{Knob::kBatch});
  EXPECT_EQ(ConstantKnobsLine(f.rows[0], split.constant),
            "all rows: D 2, T 4, P 1, K 1, schedule gpipe, recompute no, zero 0");
  EXPECT_EQ(ConstantKnobsLine(f.rows[0], {}), "");
}

TEST(ModelLabelTest, NamesTheKeysTheExperimentSetsSorted) {
  io::ResultsFile f;
  f.model = "mlp-tiny";
  f.experiment_yaml = "model: mlp-tiny\n";
  EXPECT_EQ(ModelLabel(f), "mlp-tiny");
  f.experiment_yaml = "model: {name: mlp-tiny, n_layer: 4, d_model: 64}\n";
  EXPECT_EQ(ModelLabel(f), "mlp-tiny (d_model 64, n_layer 4)");
  f.model = "m.onnx";
  f.experiment_yaml = "model: {onnx: m.onnx, inputs: {ids: [B, 8]}}\n";
  EXPECT_EQ(ModelLabel(f), "m.onnx (inputs {ids: [B, 8]})");
  f.experiment_yaml = "model: [unclosed\n";
  EXPECT_EQ(ModelLabel(f), "m.onnx");
}

TEST(RankingTest, OneTablePerBatchRankedWithinIt) {
  RankingOptions o;
  EXPECT_EQ(Ranking(TwoBatches(), o),
            "\n"
            "batch 32: 2 of 2 configurations fit in memory\n"
            "all rows: P 1, K 1, recompute no, zero 0\n"
            "rank  D  T  schedule  time (ms)  samples/s  peak memory (MiB)\n"
            "   1  4  2  1f1b          1.000    32000.0               1.00\n"
            "   2  2  4  gpipe         2.000    16000.0               3.00\n"
            "\n"
            "batch 64: 2 of 3 configurations fit in memory\n"
            "all rows: P 1, K 1, schedule gpipe, recompute no, zero 0\n"
            "rank  D  T  time (ms)  samples/s  peak memory (MiB)\n"
            "   1  2  4      2.000    32000.0               5.00\n"
            "   2  4  2      4.000    16000.0               0.50\n");
}

TEST(RankingTest, TopBatchAndWhereSelectRows) {
  RankingOptions o;
  o.top = 1;
  o.batch = 64;
  EXPECT_EQ(Ranking(TwoBatches(), o),
            "\n"
            "batch 64: 2 of 3 configurations fit in memory; the best 1 shown\n"
            "all rows: D 2, T 4, P 1, K 1, schedule gpipe, recompute no, zero 0\n"
            "rank  time (ms)  samples/s  peak memory (MiB)\n"
            "   1      2.000    32000.0               5.00\n");
  o = RankingOptions{};
  o.where = {*ParseKnobFilter("dp=4")};
  const std::string text = Ranking(TwoBatches(), o);
  EXPECT_THAT(text,
              ::testing::HasSubstr("batch 64: 2 of 3 configurations fit in memory; 1 with dp=4\n"
                                   "all rows: D 4, T 2, P 1, K 1, schedule gpipe, recompute "
                                   "no, zero 0\n"
                                   "rank  time (ms)  samples/s  peak memory (KiB)\n"
                                   "   2      4.000    16000.0             512.00\n"));
}

TEST(RankingTest, OneTableOfEveryBatchWithTheBatchAsAColumn) {
  RankingOptions o;
  o.top = 1;
  o.table_per_batch = false;
  EXPECT_EQ(Ranking(TwoBatches(), o),
            "all rows: P 1, K 1, recompute no, zero 0\n"
            "rank  batch  D  T  schedule  time (ms)  samples/s  peak memory (MiB)\n"
            "   1     32  4  2  1f1b          1.000    32000.0               1.00\n"
            "   1     64  2  4  gpipe         2.000    32000.0               5.00\n");
}

TEST(RankingTest, RejectsABatchTheFileDoesNotHave) {
  RankingOptions o;
  o.batch = 48;
  std::ostringstream os;
  EXPECT_THAT(PrintRanking(TwoBatches(), o, os),
              StatusIs(StatusCode::kInvalidArgument,
                       "no configuration has batch 48; the batches are 32, 64"));
  EXPECT_EQ(os.str(), "");
}

}  // namespace
}  // namespace distir::search
