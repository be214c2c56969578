// The raw timings' CSV (calibrate/measurement_csv.h): what `--measurements`
// writes, `--refit` reads back to the same fit.

#include "calibrate/measurement_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "calibrate/profile_fit.h"
#include "testing/test_util.h"

namespace distir::calibrate {
namespace {

std::vector<Measurement> Sample() {
  return {{"MatMul", "bf16", "4096x4096x4096NN", 137438953472.0, 100663296.0, 1, 1.88703999e-4},
          {"Add", "f32", "16777216", 16777216.0, 201326592.0, 1, 7.58719966e-05},
          {"AllReduce", "f32", "1048576 B", 0, 1048576.0, 4, 3.25e-05}};
}

TEST(MeasurementCsvTest, RoundTripsEveryField) {
  const std::vector<Measurement> sample = Sample();
  const std::string csv = MeasurementsCsv(sample);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "op,dtype,shape,ranks,flops,bytes,time_s");
  ASSERT_OK_AND_ASSIGN(std::vector<Measurement> back, ParseMeasurementsCsv(csv, "m.csv"));
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < back.size(); ++i) {
    const Measurement& a = sample[i];
    EXPECT_EQ(back[i].op, a.op);
    EXPECT_EQ(back[i].dtype, a.dtype);
    EXPECT_EQ(back[i].shape, a.shape);
    EXPECT_EQ(back[i].ranks, a.ranks);
    EXPECT_NEAR(back[i].flops, a.flops, 1e-8 * a.flops);
    EXPECT_NEAR(back[i].bytes, a.bytes, 1e-8 * a.bytes);
    EXPECT_NEAR(back[i].time_s, a.time_s, 1e-8 * a.time_s);
  }
}

TEST(MeasurementCsvTest, AcceptsWindowsLineEndsAndATrailingBlankLine) {
  ASSERT_OK_AND_ASSIGN(std::vector<Measurement> back,
                       ParseMeasurementsCsv("op,dtype,shape,ranks,flops,bytes,time_s\r\n"
                                            "Add,f32,1,1,1,12,5e-06\r\n\n",
                                            "m.csv"));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].time_s, 5e-06);
}

// The error of parsing `text`, location included.
std::string ErrorOf(const std::string& text) {
  StatusOr<std::vector<Measurement>> r = ParseMeasurementsCsv(text, "m.csv");
  if (r.ok()) return "ok";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().ToString();
}

TEST(MeasurementCsvTest, LocatesBadLines) {
  using ::testing::HasSubstr;
  const std::string header = "op,dtype,shape,ranks,flops,bytes,time_s\n";
  EXPECT_THAT(ErrorOf(""), HasSubstr("m.csv:1:1: error: empty file"));
  EXPECT_THAT(ErrorOf(header + "Add,f32,1,1,1,12\n"),
              HasSubstr("m.csv:2:1: error: expected 7 fields"));
  EXPECT_THAT(ErrorOf(header + "Add,f32,1,0,1,12,1e-6\n"),
              HasSubstr("m.csv:2:11: error: ranks must be a whole number >= 1, got '0'"));
  EXPECT_THAT(ErrorOf(header + "Add,f32,1,1,x,12,1e-6\n"),
              HasSubstr("m.csv:2:13: error: flops must be a finite number >= 0, got 'x'"));
  EXPECT_THAT(ErrorOf(header + "Add,f32,1,1,1,12,0\n"),
              HasSubstr("m.csv:2:18: error: time_s must be > 0, got '0'"));
  EXPECT_THAT(ErrorOf(header + "Add,f32,1,1,1,12,inf\n"),
              HasSubstr("m.csv:2:18: error: time_s must be a finite number"));
  EXPECT_THAT(ErrorOf(header + ",f32,1,1,1,12,1e-6\n"), HasSubstr("m.csv:2:1: error: empty op"));
}

}  // namespace
}  // namespace distir::calibrate
